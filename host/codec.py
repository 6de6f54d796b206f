"""High-level compress / decompress of named arrays to and from a :class:`~lutzip.container.Container`."""
from __future__ import annotations

import zlib

import numpy as np

from . import container as ct
from .bitstream import decode_stripes, encode_stripes
from .errors import UnsupportedError

DEFAULT_STRIPE = 4096

_NUMPY_TO_DTYPE = {np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
                   np.dtype(np.uint16): "uint16", np.dtype(np.float16): "float16"}


def dtype_name(arr: np.ndarray) -> str:
    """The lutzip dtype of a numpy array (bfloat16 is recognised by name, e.g. ml_dtypes.bfloat16)."""
    if arr.dtype.name == "bfloat16":
        return "bfloat16"
    try:
        return _NUMPY_TO_DTYPE[arr.dtype]
    except KeyError:
        raise UnsupportedError(
            f"dtype {arr.dtype} is not coded losslessly; use --quantize int16|int8 or --bf16 for floats") from None


def to_words(arr: np.ndarray):
    """``(words, dtype)``: the array's bit patterns as unsigned words, flattened in C order."""
    name = dtype_name(arr)
    bits = ct.dtype_bits(name)
    words = np.ascontiguousarray(arr).reshape(-1).view(np.uint8 if bits == 8 else np.uint16)
    return words, name


def from_words(words: np.ndarray, dtype: str, shape) -> np.ndarray:
    """Inverse of :func:`to_words`; bfloat16 comes back as uint16 bit patterns."""
    bits = ct.dtype_bits(dtype)
    np_dtype = ct.DTYPES[ct.DTYPE_CODES[dtype]][2]
    raw = np.asarray(words, np.uint16).astype(np.uint8 if bits == 8 else np.uint16)
    return raw.view(np_dtype).reshape(shape)


def compress(arrays: dict, tableset_fn=None, stripe_len: int = DEFAULT_STRIPE, attrs: dict | None = None,
             progress=None) -> ct.Container:
    """Code named arrays into a container, one table set per tensor.

    Parameters
    ----------
    arrays : dict of str -> numpy.ndarray
        Integer or 16-bit float arrays (bfloat16 as ``ml_dtypes.bfloat16``), coded losslessly.
    tableset_fn : callable(words, word_bits) -> TableSet, optional
        How to choose the classes; the default is :func:`lutzip.encoder.best_tableset`.
    stripe_len : int
        Words per stripe.
    attrs : dict of str -> dict, optional
        Per-tensor attributes stored with the tensor (e.g. quantisation scale).
    progress : callable(name), optional
        Called once per tensor as it is coded.
    """
    if tableset_fn is None:
        from .encoder import best_tableset as tableset_fn
    tables, tensors, chunks = [], [], []
    offset = 0
    for name, arr in arrays.items():
        arr = np.asarray(arr) if not hasattr(arr, "dtype") else arr
        words, dtype = to_words(arr)
        bits = ct.dtype_bits(dtype)
        ts = tableset_fn(words, bits)
        payload, sw = encode_stripes(words, ts, stripe_len)
        starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
        crcs = np.array([zlib.crc32(payload[starts[i]:starts[i + 1]].astype("<u4").tobytes())
                         for i in range(len(sw))], np.uint32)
        tables.append(ts)
        tensors.append(ct.TensorEntry(name, dtype, tuple(arr.shape), len(tables) - 1, stripe_len, offset,
                                      sw, crcs, dict((attrs or {}).get(name, {}))))
        chunks.append(payload)
        offset += 4 * len(payload)
        if progress:
            progress(name)
    payload = np.concatenate(chunks) if chunks else np.zeros(0, np.uint32)
    return ct.Container(tables, tensors, payload)


def decompress_tensor(c: ct.Container, t: ct.TensorEntry, check_crc: bool = True) -> np.ndarray:
    """Decode one tensor of a container back to its array (bit-identical to what was coded)."""
    if check_crc:
        ct.check_stripe_crcs(c, t)
    words = decode_stripes(c.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, c.tables[t.table], t.name)
    return from_words(words, t.dtype, t.shape)


def decompress(c: ct.Container, check_crc: bool = True) -> dict:
    """Decode every tensor of a container: ``{name: array}``."""
    return {t.name: decompress_tensor(c, t, check_crc) for t in c.tensors}
