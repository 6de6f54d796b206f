"""The explicit lossy steps that turn float32 weights into something lutzip codes losslessly.

lutzip itself is lossless: integer and 16-bit float arrays are coded bit for bit. float32 (and float64) arrays
must first go through one of these documented steps, chosen by the user:

* :func:`quantize_int` (``--quantize int16|int8``): per-tensor symmetric quantisation,
  ``q = clip(round(w / scale), -qmax, qmax)`` with ``scale = max|w| / qmax`` (``qmax = 2^(b-1) - 1``);
  the scale is stored in the tensor's attributes so ``w ~ q * scale``.
* :func:`to_bfloat16` (``--bf16``): round to the nearest bfloat16, ties to even (``ml_dtypes``); NaN stays NaN.
* :func:`prune` (``--prune F``): magnitude pruning, the fraction ``F`` of each weight tensor's elements with
  the smallest magnitude become 0 (before quantisation). As usual, only tensors of 2 or more dimensions are
  pruned; biases and norm parameters (1-D) are left alone.

Attributes stored with a quantised tensor: ``{"scale": s}`` (``s`` the Python float of a float32's shortest
decimal form, which the container stores in 4 bytes and reads back exactly, docs/FORMAT.md section 4; the
tensor's dtype, int16 or int8, says which quantisation). Every byte of metadata counts on small models.
"""
from __future__ import annotations

import numpy as np

from lutzip.errors import UnsupportedError

QUANT_BITS = {"int8": 8, "int16": 16}


def is_float(arr) -> bool:
    """True for float arrays that need a lossy step (float32/float64); float16/bfloat16 are coded as they are."""
    return arr.dtype.kind == "f" and arr.dtype.itemsize >= 4


def prune(arr: np.ndarray, fraction: float) -> np.ndarray:
    """Zero the ``fraction`` of ``arr``'s elements with the smallest magnitude (ties: all equal ones go)."""
    if not 0.0 <= fraction < 1.0:
        raise UnsupportedError(f"prune fraction {fraction} outside [0, 1)")
    if fraction == 0 or arr.size == 0:
        return arr
    if arr.dtype.name == "bfloat16":
        mag = np.abs(arr.astype(np.float32))
    else:
        mag = np.abs(arr.astype(np.float64) if arr.dtype.kind in "iu" else arr)
    k = int(fraction * arr.size)
    if k == 0:
        return arr
    thresh = np.partition(mag.reshape(-1), k - 1)[k - 1]
    out = arr.copy()
    out[mag <= thresh] = 0
    return out


#: elements converted per step by :func:`quantize_int` and :func:`to_bfloat16` (their temporaries stay this small)
CHUNK = 1 << 20
F32_TINY = float(np.finfo(np.float32).tiny)     # smallest normal float32
F32_MAX = float(np.finfo(np.float32).max)


def _what(name) -> str:
    return f"tensor {name!r}" if name is not None else "the tensor"


def quantize_int(arr: np.ndarray, dtype: str = "int16", name=None):
    """Per-tensor symmetric quantisation. Returns ``(q, {"scale": scale})``; dequantise with ``q * scale``.

    Parameters
    ----------
    arr : numpy.ndarray
        float32 or float64 weights.
    dtype : str
        ``"int16"`` or ``"int8"``.
    name : str, optional
        The tensor's name, for error messages.

    Raises
    ------
    UnsupportedError
        The tensor holds NaN or infinite values, or its scale ``max|w| / qmax`` is not a normal float32
        (the scale is stored as one; a float64 tensor beyond float32's range, or all but zero, would
        otherwise come back as garbage).
    """
    if dtype not in QUANT_BITS:
        raise UnsupportedError(f"quantisation to {dtype!r} (choose int16 or int8)")
    a = np.asarray(arr)
    flat = a.reshape(-1)                       # element-wise in parts of CHUNK (a view of a contiguous array)
    n_bad, first_bad, amax = 0, None, 0.0
    for i in range(0, flat.size, CHUNK):
        part = np.asarray(flat[i:i + CHUNK], np.float64)
        finite = np.isfinite(part)
        if not finite.all():
            bad = part[~finite]
            n_bad += bad.size
            first_bad = bad[0] if first_bad is None else first_bad
        elif not n_bad and part.size:
            amax = max(amax, float(np.abs(part).max()))
    if n_bad:
        raise UnsupportedError(f"{_what(name)} holds {n_bad} NaN or infinite value{'s' * (n_bad > 1)} "
                               f"(first {first_bad}): it cannot be quantised")
    qmax = (1 << (QUANT_BITS[dtype] - 1)) - 1
    if amax > 0 and not F32_TINY <= amax / qmax <= F32_MAX:
        raise UnsupportedError(f"{_what(name)}: max |w| = {amax:.6g} needs the scale {amax / qmax:.6g}, outside "
                               f"the normal float32 range {F32_TINY:.6g}..{F32_MAX:.6g} (the scale is stored as "
                               f"a float32): it cannot be quantised")
    # the scale is a float32 (stored as 4 bytes; its shortest repr as a Python float round-trips exactly)
    scale = float(str(np.float32(amax / qmax))) if amax > 0 else 1.0
    q = np.empty(a.shape, np.int8 if dtype == "int8" else np.int16)
    qf = q.reshape(-1)
    for i in range(0, flat.size, CHUNK):
        qf[i:i + CHUNK] = np.clip(np.rint(np.asarray(flat[i:i + CHUNK], np.float64) / scale), -qmax, qmax)
    return q, {"scale": scale}


def dequantize(q: np.ndarray, attrs: dict) -> np.ndarray:
    """``q * scale`` as float32."""
    return q.astype(np.float32) * np.float32(attrs["scale"])


def to_bfloat16(arr: np.ndarray, name=None):
    """Round float32/float64 to bfloat16 (nearest, ties to even). Returns ``(bf16 array, attrs)``; the attrs
    are empty (the bfloat16 dtype says it all).

    NaN and infinities stay what they are; a finite value beyond bfloat16's range (it would become an
    infinity) raises :class:`UnsupportedError` naming the tensor (``name``).
    """
    import ml_dtypes
    a = np.asarray(arr)
    flat = a.reshape(-1)
    b = np.empty(a.shape, ml_dtypes.bfloat16)
    bf = b.reshape(-1)
    n_grown, first = 0, None
    for i in range(0, flat.size, CHUNK):         # element-wise in parts of CHUNK
        part = flat[i:i + CHUNK]
        with np.errstate(over="ignore", invalid="ignore"):
            bf[i:i + CHUNK] = np.asarray(part, np.float32).astype(ml_dtypes.bfloat16)
        grown = np.isfinite(part) & ~np.isfinite(bf[i:i + CHUNK].astype(np.float32))
        if grown.any():
            n_grown += int(grown.sum())
            first = part[grown][0] if first is None else first
    if n_grown:
        raise UnsupportedError(f"{_what(name)}: {n_grown} finite value(s) beyond the bfloat16 range "
                               f"(first {first:.6g}) would become infinite")
    return b, {}


def prepare(arrays: dict, quantize: str | None = None, bf16: bool = False, prune_fraction: float = 0.0,
            skip_unsupported: bool = False, warn=None):
    """Apply the user's lossy choices to a dict of arrays: ``(arrays, attrs)`` ready for :func:`codec.compress`.

    float32/float64 tensors need ``quantize`` or ``bf16``; without one they raise :class:`UnsupportedError`.
    Integer tensors of 8/16 bits and float16/bfloat16 tensors pass unchanged (pruned if asked). Tensors of
    other dtypes (int32, int64, bool, ...), and float tensors the lossy step cannot take (NaN or infinite
    values for ``quantize``, a scale outside float32, values beyond bfloat16), raise naming the tensor, or
    are skipped (reported via ``warn``) with ``skip_unsupported``.
    """
    from lutzip.codec.arrays import dtype_name
    if quantize and bf16:
        raise UnsupportedError("--quantize and --bf16 exclude each other")
    if quantize is not None and quantize not in QUANT_BITS:
        raise UnsupportedError(f"quantisation to {quantize!r} (choose int16 or int8)")
    out, attrs = {}, {}
    for name, arr in arrays.items():
        arr = np.asarray(arr) if not hasattr(arr, "dtype") else arr
        a = {}
        pf = prune_fraction if arr.ndim >= 2 else 0.0
        if is_float(arr):
            if not (quantize or bf16):
                raise UnsupportedError(
                    f"tensor {name!r} is {arr.dtype}: lutzip codes it only after an explicit lossy step, "
                    f"--quantize int16|int8 or --bf16")
            if pf:
                arr = prune(arr, pf)
            try:
                arr, a = quantize_int(arr, quantize, name) if quantize else to_bfloat16(arr, name)
            except UnsupportedError as e:
                if skip_unsupported:
                    if warn:
                        warn(f"skipping: {e}")
                    continue
                raise UnsupportedError(f"{e}; --skip-unsupported leaves such tensors out") from None
        else:
            try:
                dtype_name(arr)
            except UnsupportedError:
                msg = (f"tensor {name!r} has dtype {arr.dtype}, which lutzip does not code "
                       f"(it codes int8, uint8, int16, uint16, float16, bfloat16; float32 after --quantize/--bf16)")
                if skip_unsupported:
                    if warn:
                        warn(f"skipping: {msg}")
                    continue
                raise UnsupportedError(msg + "; --skip-unsupported leaves such tensors out") from None
            if pf:
                arr = prune(arr, pf)
        out[name] = arr
        if a:
            attrs[name] = a
    return out, attrs
