"""Read named weight arrays from the usual files: ``.npy``, ``.npz``, ``.safetensors``, ``.onnx``, PyTorch.

Every loader returns an ordered ``{name: numpy.ndarray}``. bfloat16 tensors come back as
``ml_dtypes.bfloat16`` arrays (bit patterns kept exactly); nothing is converted or rounded here.
"""
from __future__ import annotations

import json
import os
import struct
import zipfile
import zlib

import numpy as np

from lutzip.errors import FormatError, UnsupportedError

#: file suffix -> loader name
SUFFIXES = {".npy": "npy", ".npz": "npz", ".safetensors": "safetensors", ".onnx": "onnx",
            ".pt": "torch", ".pth": "torch", ".bin": "torch", ".ckpt": "torch"}


def load(path, kind: str | None = None) -> dict:
    """Load the named arrays of ``path``; ``kind`` overrides the guess from the suffix."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if kind is None:
        ext = os.path.splitext(path)[1].lower()
        kind = SUFFIXES.get(ext)
        if kind is None:
            raise UnsupportedError(f"{path}: unknown weight file type {ext!r} "
                                   f"(lutzip reads {', '.join(sorted(SUFFIXES))})")
    fn = {"npy": load_npy, "npz": load_npz, "safetensors": load_safetensors, "onnx": load_onnx,
          "torch": load_torch}.get(kind)
    if fn is None:
        raise UnsupportedError(f"unknown loader {kind!r}")
    return fn(path)


def _npy_header(fp, path, what):
    """``(shape, fortran_order, dtype, header_end)`` of the .npy stream ``fp``, or :class:`FormatError`."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fp, max_header_size=1 << 16)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fp, max_header_size=1 << 16)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except Exception as e:  # noqa: BLE001 - numpy's header parser raises ValueError, SyntaxError, TokenError, ...
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise FormatError(f"{path}: {what} is not a readable .npy array ({msg})") from None
    if dtype.hasobject:
        raise FormatError(f"{path}: {what} holds Python objects (it would need pickle, which lutzip never loads)")
    return shape, fortran, dtype


def npy_layout(open_member, size: int, path, what):
    """``(shape, dtype, header_end)`` of a .npy stream of ``size`` bytes, every header field checked first.

    A :class:`FormatError` names the problem when the header is not readable, the array holds Python objects,
    a dimension is negative (numpy would infer it), or the shape does not account for exactly the bytes after
    the header: fewer would be a read beyond the data, more would be dropped by numpy without a word (and with
    them any array appended to the file). ``open_member()`` opens the stream afresh (a file, or a zip member).
    """
    try:
        with open_member() as fp:
            shape, _, dtype = _npy_header(fp, path, what)
            head = fp.tell()
    except (ValueError, OSError, EOFError, NotImplementedError, zipfile.BadZipFile, zlib.error) as e:
        raise FormatError(f"{path}: {what} is damaged ({e})") from None
    if any(int(d) < 0 for d in shape):
        raise FormatError(f"{path}: {what} claims shape {shape}: a negative dimension")
    n = dtype.itemsize
    for d in shape:
        n *= int(d)
    if n > size - head:
        raise FormatError(f"{path}: {what} claims shape {shape} of {dtype} ({n} bytes), the data has "
                          f"{max(size - head, 0)} bytes")
    if n < size - head:
        raise FormatError(f"{path}: {what} claims shape {shape} of {dtype} ({n} bytes), the data has "
                          f"{size - head} bytes (a damaged header, or more arrays appended: lutzip reads one "
                          f"array per .npy)")
    return shape, dtype, head


def _read_npy(open_member, size: int, path, what):
    """The array of a .npy stream of ``size`` bytes, its header checked (:func:`npy_layout`) before allocating.

    ``open_member()`` opens the stream afresh (a file, or a member of a zip).
    """
    npy_layout(open_member, size, path, what)
    try:
        with open_member() as fp:
            return np.lib.format.read_array(fp, allow_pickle=False)
    except (ValueError, OSError, EOFError, NotImplementedError, zipfile.BadZipFile, zlib.error) as e:
        raise FormatError(f"{path}: {what} is damaged ({e})") from None


def load_npy(path) -> dict:
    """A ``.npy`` file: one array, named after the file."""
    name = os.path.splitext(os.path.basename(path))[0] or "weights"
    return {name: _read_npy(lambda: open(path, "rb"), os.path.getsize(path), path, "the file")}


#: most a deflated zip member can expand (deflate's limit is 1032:1); a larger declared size is a lie
MAX_DEFLATE_RATIO = 1032


def load_npz(path) -> dict:
    """A ``.npz`` file: every ``.npy`` member, by name (``numpy.load``'s names; duplicates are an error)."""
    try:
        zf = zipfile.ZipFile(path)
    except (ValueError, OSError, EOFError, NotImplementedError, zipfile.BadZipFile, zlib.error) as e:
        raise FormatError(f"{path}: not a readable .npz file ({e})") from None
    out = {}
    with zf:
        for info in zf.infolist():
            member = info.filename
            if not member:
                raise FormatError(f"{path}: a member with an empty name")
            if info.is_dir():
                continue
            if not member.endswith(".npy"):
                raise FormatError(f"{path}: member {member!r} is not an .npy array")
            name = member[:-4]
            if name in out:
                raise FormatError(f"{path}: tensor {name!r} appears twice in the .npz")
            what = f"member {member!r}"
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) or info.flag_bits & 0x61:
                raise FormatError(f"{path}: {what} is encrypted, patched or uses compression method "
                                  f"{info.compress_type} (an .npz member is stored or deflated)")
            if info.compress_type == zipfile.ZIP_STORED and info.file_size != info.compress_size or \
                    info.file_size > MAX_DEFLATE_RATIO * max(info.compress_size, 1):
                raise FormatError(f"{path}: {what} claims {info.file_size} bytes from {info.compress_size} "
                                  f"compressed bytes")
            out[name] = _read_npy(lambda: zf.open(info), info.file_size, path, what)
    return out


# ------------------------------------------------------------------------------------------ safetensors
_ST_DTYPES = {"BF16": "bfloat16", "F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8,
              "U8": np.uint8, "I16": np.int16, "U16": np.uint16, "I32": np.int32, "U32": np.uint32,
              "I64": np.int64, "U64": np.uint64, "BOOL": np.bool_}


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise FormatError(f"key {k!r} appears twice")
        d[k] = v
    return d


def _safetensors_header(path):
    """``(header, data_start)`` of a safetensors file, every entry checked against the file size.

    ``header`` maps each tensor name to ``(dtype, shape, start, end)``; the JSON must not repeat a name.
    """
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise FormatError(f"{path}: truncated safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            raise FormatError(f"{path}: safetensors header of {n} bytes in a {size}-byte file")
        raw = f.read(n)
    try:
        header = json.loads(raw, object_pairs_hook=_no_duplicates)
    except FormatError as e:
        raise FormatError(f"{path}: safetensors header: {e}") from None
    except (ValueError, RecursionError):
        raise FormatError(f"{path}: safetensors header is not JSON") from None
    if not isinstance(header, dict):
        raise FormatError(f"{path}: safetensors header is not a JSON object")
    data_len = size - 8 - n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (a, b) = info["dtype"], info["shape"], info["data_offsets"]
            ok = isinstance(dtype, str) and isinstance(shape, list) and all(
                type(v) is int and v >= 0 for v in [*shape, a, b])
        except (TypeError, KeyError, ValueError):
            ok = False
        if not ok:
            raise FormatError(f"{path}: tensor {name!r}: header entry is not {{dtype, shape, data_offsets}}")
        if len(shape) > 64:
            raise FormatError(f"{path}: tensor {name!r} has {len(shape)} dimensions")
        out[name] = (dtype, tuple(shape), a, b)
        if not a <= b <= data_len:
            raise FormatError(f"{path}: tensor {name!r} has inconsistent offsets")
    return out, 8 + n


def _safetensors_raw(path) -> dict:
    """Fallback reader of the safetensors layout (8-byte header length, JSON header, data)."""
    import ml_dtypes
    header, start = _safetensors_header(path)
    data = np.memmap(path, np.uint8, "r", offset=start) if os.path.getsize(path) > start else np.zeros(0, np.uint8)
    out = {}
    for name, (dtype, shape, a, b) in header.items():
        dt = _ST_DTYPES.get(dtype)
        if dt is None:
            raise UnsupportedError(f"{path}: tensor {name!r} has dtype {dtype}")
        dt = np.dtype(ml_dtypes.bfloat16) if dt == "bfloat16" else np.dtype(dt).newbyteorder("<")
        n = dt.itemsize
        for d in shape:
            n *= d
        if b - a != n:
            raise FormatError(f"{path}: tensor {name!r} has inconsistent offsets")
        out[name] = np.frombuffer(bytes(data[a:b]), dt).reshape(shape)
    return out


def load_safetensors(path) -> dict:
    """``.safetensors`` via the safetensors numpy API (bf16 as ml_dtypes.bfloat16).

    The header is checked first (:func:`_safetensors_header`: JSON object, no repeated name, offsets in the
    file); every tensor the header lists comes back.
    """
    header, _ = _safetensors_header(path)
    try:
        from safetensors import safe_open
    except ImportError:
        return _safetensors_raw(path)
    try:
        out = {}
        with safe_open(path, framework="np") as f:
            for k in f.keys():
                out[k] = f.get_tensor(k)
    except (TypeError, ValueError):
        return _safetensors_raw(path)
    except Exception as e:  # safetensors raises its own SafetensorError for malformed files
        if type(e).__name__ == "SafetensorError":
            raise FormatError(f"{path}: not a readable safetensors file ({e})") from None
        raise
    if set(out) != set(header):
        raise FormatError(f"{path}: the safetensors header lists {len(header)} tensors, {len(out)} were read")
    return out


# ------------------------------------------------------------------------------------------------- onnx
#: ``Constant`` attributes other than ``value`` and the dtype of the array they hold
_ONNX_CONSTANT_LISTS = {"value_float": np.float32, "value_floats": np.float32, "value_int": np.int64,
                        "value_ints": np.int64, "value_string": np.bytes_, "value_strings": np.bytes_}


def load_onnx(path) -> dict:
    """Initializers and ``Constant`` node values of an ONNX model (``onnx.numpy_helper``).

    Every ``Constant`` comes back, whichever attribute holds its value (``value``, ``value_float(s)``,
    ``value_int(s)``, ``value_string(s)``; int64 and string arrays are then left to ``--skip-unsupported``);
    a sparse one is an :class:`UnsupportedError`, one with no value a :class:`FormatError` naming it.
    """
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        raise UnsupportedError("reading .onnx needs the onnx package (pip install onnx)") from None
    try:
        model = onnx.load(path)
    except Exception as e:  # protobuf DecodeError and friends
        raise FormatError(f"{path}: not a readable ONNX model ({e})") from None
    out = {}

    def put(name, tensor):
        if name in out:
            raise FormatError(f"{path}: tensor {name!r} appears twice in the ONNX model")
        dims = list(tensor.dims)
        if any(d < 0 for d in dims) or len(dims) > 64:
            raise FormatError(f"{path}: tensor {name!r} has dims {dims}")
        try:
            a = numpy_helper.to_array(tensor, base_dir=os.path.dirname(os.path.abspath(path)))
        except Exception as e:  # onnx raises ValueError, TypeError, its own errors for data that does not fit
            raise FormatError(f"{path}: tensor {name!r}: its data does not match dims {dims} "
                              f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
        if tuple(a.shape) != tuple(dims):
            raise FormatError(f"{path}: tensor {name!r}: data of shape {a.shape}, dims {dims}")
        out[name] = a

    def constant(name, node):
        # a Constant holds its value in exactly one attribute (ONNX operators, Constant): every one is read, or
        # the node is an error -- never silently left out
        attrs = {text(a.name): a for a in node.attribute}
        if "value" in attrs and attrs["value"].type == onnx.AttributeProto.TENSOR:
            return put(name, attrs["value"].t)
        for key, dtype in _ONNX_CONSTANT_LISTS.items():
            if key in attrs:
                if name in out:
                    raise FormatError(f"{path}: tensor {name!r} appears twice in the ONNX model")
                out[name] = np.asarray(onnx.helper.get_attribute_value(attrs[key]), dtype)
                return None
        if "sparse_value" in attrs:
            raise UnsupportedError(f"{path}: Constant {name!r} holds a sparse tensor, which lutzip does not read")
        raise FormatError(f"{path}: Constant {name!r} holds no value (attributes: "
                          f"{', '.join(map(repr, attrs)) or 'none'})")

    def text(v):
        # protobuf hands a string field that is not UTF-8 over as bytes
        if isinstance(v, bytes):
            raise FormatError(f"{path}: a name in the ONNX model is not UTF-8 ({v[:40]!r})")
        return v

    def walk(graph, prefix=""):
        for init in graph.initializer:
            put(prefix + text(init.name), init)
        for node in graph.node:
            if node.op_type == "Constant":
                constant(prefix + text(node.output[0] if node.output else node.name), node)
            for attr in node.attribute:
                if attr.g is not None and len(attr.g.node) + len(attr.g.initializer):
                    walk(attr.g, f"{prefix}{text(node.name)}.{text(attr.name)}.")
    walk(model.graph)
    return out


# ------------------------------------------------------------------------------------------------ torch
def load_torch(path) -> dict:
    """A PyTorch state dict (``torch.load(weights_only=True)``; nested dicts flattened with dots)."""
    try:
        import torch
    except ImportError:
        raise UnsupportedError("reading PyTorch files needs torch (pip install torch)") from None
    import ml_dtypes
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise FormatError(f"{path}: not a loadable PyTorch state dict ({e})") from None
    out = {}

    def walk(o, prefix):
        if isinstance(o, torch.Tensor):
            t = o.detach().cpu().contiguous()
            if t.dtype == torch.bfloat16:
                out[prefix] = t.view(torch.int16).numpy().view(np.uint16).view(ml_dtypes.bfloat16)
            else:
                out[prefix] = t.numpy()
        elif isinstance(o, dict):
            for k, v in o.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(o, (list, tuple)):
            for i, v in enumerate(o):
                walk(v, f"{prefix}.{i}" if prefix else str(i))
    walk(obj, "")
    if not out:
        raise FormatError(f"{path}: no tensors found in the PyTorch file")
    return out
