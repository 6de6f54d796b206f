"""Decoding stripes back to words (docs/FORMAT.md, section 3) without importing numba.

:func:`decode_stripes` runs the C kernel of :mod:`lutzip.codec.fastdec` when it is available and the numba
kernel of :mod:`lutzip.codec.bitstream` (the reference; numba is imported then) otherwise or with
``kernel="numba"``. The decoder's error codes are defined here; :mod:`lutzip.codec.bitstream` re-exports them.
Reading a container needs only this module, so a process that decodes starts without numba.
"""
from __future__ import annotations

import numpy as np

from lutzip.errors import DecodeError
from lutzip.codec.tables import TableSet

STRIPE_MARKER = 0x4C5A0000
MAX_STRIPE_WORDS = 65536

#: Decoder error codes. The hardware core reports the same numbers for the errors it detects.
ERR_OK = 0
ERR_BAD_HEADER = 1
ERR_COUNT = 2
ERR_INVALID_PREFIX = 3
ERR_OVERRUN = 4
ERR_LUT3_RANGE = 5
ERR_ZRUN_OVERFLOW = 6
ERR_LEFTOVER = 7
ERR_PADDING = 8
ERR_UNREPRESENTABLE = 9
ERR_ROW = 10            # version 6: a row stripe's descriptor or modes (docs/FORMAT.md, section 3.1)
ERROR_TEXT = {
    ERR_BAD_HEADER: "stripe header marker is not 0x4C5A",
    ERR_COUNT: "stripe header word count disagrees with the tensor index",
    ERR_INVALID_PREFIX: "bit pattern is not a valid class code",
    ERR_OVERRUN: "symbols run past the end of the stripe",
    ERR_LUT3_RANGE: "LUT3 address beyond the table",
    ERR_ZRUN_OVERFLOW: "zero run longer than the words left in the stripe",
    ERR_LEFTOVER: "words left over after the last symbol",
    ERR_PADDING: "non-zero padding bits after the last symbol",
    ERR_UNREPRESENTABLE: "value not covered by any class of the table set",
    ERR_ROW: "bad row stripe descriptor",
}


def decode_stripes(payload_words: np.ndarray, stripe_words: np.ndarray, numel: int, stripe_len: int,
                   tables: TableSet, name=None, out=None, crcs=None, threads: int = 1,
                   kernel: str = "auto", first_stripe: int = 0, crc_where=None, rows=None) -> np.ndarray:
    """Decode a tensor's stripes back to its flat ``uint16`` words.

    Parameters
    ----------
    payload_words : numpy.ndarray of uint32
        The tensor's stripes back to back.
    stripe_words : numpy.ndarray
        32-bit words per stripe (header included); must add up to ``len(payload_words)``.
    numel, stripe_len : int
        Number of words of the tensor and words per stripe.
    tables : TableSet
        The table set named by the tensor.
    name : str, optional
        Tensor name for error messages.
    out : numpy.ndarray, optional
        ``numel`` ``uint16`` (or, for an 8-bit table set, ``uint8``) elements to decode into; returned.
    crcs : numpy.ndarray of uint32, optional
        The stripes' CRC32s, checked as the stripes are decoded; a mismatch raises :class:`CorruptError` for the
        first stripe that does not match, before any decode error (as checking every CRC first would).
    threads : int
        Threads for the C kernel (stripes split into contiguous ranges, the GIL released); 1 by default.
    kernel : {"auto", "c", "numba"}
        ``"auto"``: the C kernel of :mod:`lutzip.codec.fastdec` when it is available, else numba; ``"c"``
        requires the C kernel; ``"numba"`` is the reference kernel of this module.
    first_stripe : int
        Number of the first stripe in error messages (when these stripes are a part of a longer run).
    crc_where : str, optional
        How a CRC mismatch names the stripes' owner (default ``tensor 'name'``).
    rows : (int, str), optional
        ``(N, dtype)`` of a row stream (version 6, docs/FORMAT.md section 3.1): its row stripes are checked,
        their symbols decoded by the same kernels and the rows expanded (:func:`lutzip.codec.rows.decode`).

    Raises
    ------
    DecodeError
        Naming the stripe, the word within it and what is wrong.
    CorruptError
        A stripe's CRC does not match (only with ``crcs``).
    """
    if rows is not None:
        from lutzip.codec import rows as rw
        return rw.decode(payload_words, stripe_words, numel, stripe_len, tables, rows, name, out, crcs, threads,
                         kernel, first_stripe, crc_where)
    n_stripes = -(-numel // stripe_len) if numel else 0
    if len(stripe_words) != n_stripes:
        raise DecodeError(f"{len(stripe_words)} stripes recorded, {n_stripes} expected", name)
    if crcs is not None and len(crcs) != n_stripes:
        raise DecodeError(f"{len(crcs)} stripe CRCs recorded, {n_stripes} expected", name)
    if out is None:
        out = np.empty(numel, np.uint16)
    elif out.shape != (numel,) or out.dtype not in (np.uint16, np.uint8 if tables.word_bits == 8 else np.uint16):
        raise ValueError(f"out must be {numel} words of uint16 (or uint8 for 8-bit tables)")
    if kernel not in ("auto", "c", "numba"):
        raise ValueError(f"kernel must be 'auto', 'c' or 'numba', not {kernel!r}")
    if tables.lens_b is not None and (kernel == "numba" or not out.flags.c_contiguous):
        # two code tables (version 5) by the numba kernel of lutzip.codec.states (else the C kernel, as one table)
        return _decode_two_states(payload_words, stripe_words, numel, stripe_len, tables, name, out, crcs, kernel,
                                  first_stripe, crc_where)
    if kernel != "numba" and out.flags.c_contiguous:
        from lutzip.codec import fastdec
        if fastdec.available():
            sw = stripe_words
            if not isinstance(sw, np.ndarray) or sw.dtype != np.uint32 or not sw.flags.c_contiguous:
                sw = np.asarray(sw)
                if sw.size and (sw.min() < 0 or sw.max() > 0xFFFFFFFF):
                    raise DecodeError("stripe word counts do not add up to the payload", name)
                sw = np.ascontiguousarray(sw, np.uint32)
            pw = payload_words
            if not isinstance(pw, np.ndarray) or pw.dtype != np.uint32 or not pw.flags.c_contiguous:
                pw = np.ascontiguousarray(pw, np.uint32)
            rc, stripe, word = fastdec.decode(pw, sw, int(numel), int(stripe_len), tables, out, crcs, max(1, int(threads)))
            if rc == 0:
                return out
            if rc == fastdec.ERR_CRC:
                raise _crc_error(name, first_stripe + stripe, crc_where)
            if rc == fastdec.ERR_INDEX:
                raise DecodeError("stripe word counts do not add up to the payload", name)
            if rc == fastdec.ERR_NOMEM:
                raise MemoryError("no memory for the stripe index")
            raise DecodeError(f"{ERROR_TEXT[rc]} (at decoded word {word} of the stripe)", name,
                              first_stripe + stripe)
        if kernel == "c":
            from lutzip.errors import UnsupportedError
            raise UnsupportedError(f"the C decoder is not available: {fastdec.why_not()}")
        if tables.lens_b is not None:
            return _decode_two_states(payload_words, stripe_words, numel, stripe_len, tables, name, out, crcs,
                                      kernel, first_stripe, crc_where)
    tables.validate()
    stripe_words = np.asarray(stripe_words, np.int64)
    if np.any(stripe_words < 2) or int(stripe_words.sum()) != len(payload_words):
        raise DecodeError("stripe word counts do not add up to the payload", name)
    starts = np.zeros(n_stripes, np.int64)
    if n_stripes:
        starts[1:] = np.cumsum(stripe_words)[:-1]
    payload_words = np.asarray(payload_words, np.uint32)
    if crcs is not None:
        from lutzip.codec import fastdec
        bad = fastdec.first_bad_crc(payload_words, stripe_words, crcs)
        if bad >= 0:
            raise _crc_error(name, first_stripe + bad, crc_where)
    L = tables.max_code_len
    lut1 = tables.lut1(L).astype(np.int64)
    kinds = np.array([cl.kind for cl in tables.classes], np.int64)
    ks = np.array([cl.k for cl in tables.classes], np.int64)
    params = np.array([cl.param for cl in tables.classes], np.int64)
    err = np.zeros(3, np.int64)
    from lutzip.codec.bitstream import _decode_kernel      # the numba reference (imports numba)
    rc = _decode_kernel(payload_words, starts, stripe_words, stripe_len, numel, lut1, L,
                        kinds, ks, params, tables.lut3, out, err)
    if rc:
        raise DecodeError(f"{ERROR_TEXT[rc]} (at decoded word {int(err[2])} of the stripe)", name,
                          first_stripe + int(err[1]))
    return out


def _decode_two_states(payload_words, stripe_words, numel, stripe_len, tables, name, out, crcs, kernel,
                       first_stripe, crc_where):
    """:func:`decode_stripes` of a table set with two code tables by the numba kernel of :mod:`lutzip.codec.states`
    (``kernel="numba"``, no C decoder, or an ``out`` that is not C-contiguous)."""
    tables.validate()
    stripe_words = np.asarray(stripe_words, np.int64)
    if np.any(stripe_words < 2) or int(stripe_words.sum()) != len(payload_words):
        raise DecodeError("stripe word counts do not add up to the payload", name)
    starts = np.zeros(len(stripe_words), np.int64)
    if len(stripe_words):
        starts[1:] = np.cumsum(stripe_words)[:-1]
    payload_words = np.asarray(payload_words, np.uint32)
    if crcs is not None:
        from lutzip.codec import fastdec
        bad = fastdec.first_bad_crc(payload_words, stripe_words, crcs)
        if bad >= 0:
            raise _crc_error(name, first_stripe + bad, crc_where)
    from lutzip.codec.states import decode_stripes2
    rc, stripe, word = decode_stripes2(payload_words, starts, stripe_words, stripe_len, numel, tables, out)
    if rc:
        raise DecodeError(f"{ERROR_TEXT[rc]} (at decoded word {word} of the stripe)", name, first_stripe + stripe)
    return out


def _crc_error(name, stripe, where=None):
    from lutzip.errors import CorruptError
    if where is None:
        where = f"tensor {name!r}" if name is not None else ""
    return CorruptError(f"{where}{', ' if where else ''}stripe {stripe}: CRC mismatch, the payload is corrupt")
