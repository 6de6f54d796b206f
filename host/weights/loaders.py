"""Read named weight arrays from the usual files: ``.npy``, ``.npz``, ``.safetensors``, ``.onnx``, PyTorch.

Every loader returns an ordered ``{name: numpy.ndarray}``. bfloat16 tensors come back as
``ml_dtypes.bfloat16`` arrays (bit patterns kept exactly); nothing is converted or rounded here.
"""
from __future__ import annotations

import json
import os
import struct
import zipfile

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


def load_npy(path) -> dict:
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise FormatError(f"{path}: not a readable .npy file ({e})") from None
    name = os.path.splitext(os.path.basename(path))[0] or "weights"
    return {name: arr}


def load_npz(path) -> dict:
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise FormatError(f"{path}: not a readable .npz file ({e})") from None


# ------------------------------------------------------------------------------------------ safetensors
_ST_DTYPES = {"BF16": "bfloat16", "F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8,
              "U8": np.uint8, "I16": np.int16, "U16": np.uint16, "I32": np.int32, "U32": np.uint32,
              "I64": np.int64, "U64": np.uint64, "BOOL": np.bool_}


def _safetensors_raw(path) -> dict:
    """Fallback reader of the safetensors layout (8-byte header length, JSON header, data)."""
    import ml_dtypes
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise FormatError(f"{path}: truncated safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            raise FormatError(f"{path}: safetensors header of {n} bytes in a {size}-byte file")
        try:
            header = json.loads(f.read(n))
        except ValueError:
            raise FormatError(f"{path}: safetensors header is not JSON") from None
        data = np.memmap(path, np.uint8, "r", offset=8 + n)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dt = _ST_DTYPES.get(info.get("dtype"))
        if dt is None:
            raise UnsupportedError(f"{path}: tensor {name!r} has dtype {info.get('dtype')}")
        dt = np.dtype(ml_dtypes.bfloat16) if dt == "bfloat16" else np.dtype(dt).newbyteorder("<")
        a, b = info["data_offsets"]
        shape = tuple(info["shape"])
        if not 0 <= a <= b <= len(data) or (b - a) != dt.itemsize * int(np.prod(shape, dtype=np.int64)):
            raise FormatError(f"{path}: tensor {name!r} has inconsistent offsets")
        out[name] = np.frombuffer(bytes(data[a:b]), dt).reshape(shape)
    return out


def load_safetensors(path) -> dict:
    """``.safetensors`` via the safetensors numpy API (bf16 as ml_dtypes.bfloat16)."""
    try:
        from safetensors import safe_open
    except ImportError:
        return _safetensors_raw(path)
    try:
        out = {}
        with safe_open(path, framework="np") as f:
            for k in f.keys():
                out[k] = f.get_tensor(k)
        return out
    except (TypeError, ValueError):
        return _safetensors_raw(path)
    except Exception as e:  # safetensors raises its own SafetensorError for malformed files
        if type(e).__name__ == "SafetensorError":
            raise FormatError(f"{path}: not a readable safetensors file ({e})") from None
        raise


# ------------------------------------------------------------------------------------------------- onnx
def load_onnx(path) -> dict:
    """Initializers and ``Constant`` node values of an ONNX model (``onnx.numpy_helper``)."""
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

    def walk(graph, prefix=""):
        for init in graph.initializer:
            out[prefix + init.name] = numpy_helper.to_array(init)
        for node in graph.node:
            if node.op_type == "Constant":
                for attr in node.attribute:
                    if attr.name == "value" and attr.t is not None:
                        name = node.output[0] if node.output else node.name
                        out[prefix + name] = numpy_helper.to_array(attr.t)
            for attr in node.attribute:
                if attr.g is not None and len(attr.g.node) + len(attr.g.initializer):
                    walk(attr.g, f"{prefix}{node.name}.{attr.name}.")
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
