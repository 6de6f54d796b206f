"""Stripe bit streams: pack symbols into stripes and decode them back (docs/FORMAT.md, section 3).

The stripe coder (:class:`StripeEncoder`) runs the C kernel of :mod:`lutzip.codec.fastenc` (numba's kernel of
:mod:`lutzip.codec._encnumba` when there is no C compiler); it reads only the table set, and the decoders read
only the stripe words and the table set, so decoding is an independent check of the encoder.
:func:`decode_stripes` runs the C kernel of :mod:`lutzip.codec.fastdec` when it is available (same words, same
errors) and the numba reference kernel ``_decode_kernel`` (now in :mod:`lutzip.codec._encnumba`, still
importable from here) otherwise or with ``kernel="numba"``. Importing this module does not import numba.
"""
from __future__ import annotations

import numpy as np

from lutzip.errors import DecodeError, TableError
from lutzip.codec.tables import LUT, RANGE, ZRUN, TableSet

from lutzip.codec.decode import (ERR_BAD_HEADER, ERR_COUNT, ERR_INVALID_PREFIX, ERR_LEFTOVER,  # noqa: F401
                                 ERR_LUT3_RANGE, ERR_OK, ERR_OVERRUN, ERR_PADDING, ERR_UNREPRESENTABLE,
                                 ERR_ZRUN_OVERFLOW, ERROR_TEXT, MAX_STRIPE_WORDS, STRIPE_MARKER, decode_stripes)
from lutzip.codec.fastenc import kernels


def __getattr__(name):
    """The numba kernels that lived here (``_decode_kernel``, ``_encode_kernel``): imported on first use."""
    if name in ("_decode_kernel", "_encode_kernel"):
        from lutzip.codec import _encnumba
        return getattr(_encnumba, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------------------------- encoder
def symbol_table(tables: TableSet):
    """Cheapest single-word symbol for every ``W``-bit value.

    Returns ``(bits, length)``: arrays of ``2^W`` entries; ``bits`` is ``code << k | index`` and ``length``
    is ``c + k`` (0 where no class covers the value).
    """
    tables.validate()
    size = 1 << tables.word_bits
    k = kernels()
    if hasattr(k, "symbols"):                     # the C kernel: the same symbols
        cl = tables.classes
        sym = k.symbols(size, [c.kind for c in cl], [c.k for c in cl], [c.param for c in cl], [c.total for c in cl],
                        tables.codes(), tables.lut3.astype(np.int64))
        return sym >> np.uint64(8), (sym & np.uint64(0xFF)).astype(np.uint8)
    best_len = np.full(size, 255, np.int64)
    best_bits = np.zeros(size, np.uint64)
    for cl, code in zip(tables.classes, tables.codes()):
        if cl.kind == ZRUN:
            continue
        idx = np.arange(1 << cl.k, dtype=np.int64)
        vals = tables.lut3[cl.param + idx].astype(np.int64) if cl.kind == LUT else cl.param + idx
        bits = (np.uint64(code) << np.uint64(cl.k)) | idx.astype(np.uint64)
        # first occurrence wins among equal lengths, so a LUT3 value listed twice keeps its first index
        order = np.argsort(vals, kind="stable")
        vals, bits = vals[order], bits[order]
        first = np.ones(len(vals), bool)
        first[1:] = vals[1:] != vals[:-1]
        vals, bits = vals[first], bits[first]
        better = cl.total < best_len[vals]
        best_len[vals[better]] = cl.total
        best_bits[vals[better]] = bits[better]
    best_len[best_len == 255] = 0
    return best_bits, best_len.astype(np.uint8)


def zero_run_plan(tables: TableSet, max_run: int, single: int | None = None):
    """Optimal coding of zero runs of every length up to ``max_run``.

    Returns ``(choice, cost)``: ``choice[r]`` is -1 for "one single-word zero symbol, then r-1 more", or the
    class number of the zero-run symbol that starts an optimal coding of ``r`` zeros (largest chunk first);
    -2 where ``r`` zeros cannot be coded. ``single``: the length of the single-word symbol of 0 (0: none), when
    the caller has :func:`symbol_table` already.
    """
    if single is None:
        single = int(symbol_table(tables)[1][0])
    zr = [(j, cl) for j, cl in enumerate(tables.classes) if cl.kind == ZRUN]
    return kernels()._zero_run_dp(int(max_run), int(single), np.array([j for j, _ in zr], np.int64),
                        np.array([cl.k for _, cl in zr], np.int64), np.array([cl.total for _, cl in zr], np.int64))






class StripeEncoder:
    """The encoder of one table set and stripe length, set up once, coding any number of runs of whole stripes.

    Stripes are coded independently, so coding a tensor's words a part at a time (each part a whole number
    of stripes, the last part possibly ending in a short stripe) gives exactly the stripes of coding it at
    once (:func:`encode_stripes`), in memory of the part's size.

    Parameters
    ----------
    tables : TableSet
        Table set to code with; every value must be covered by a class.
    stripe_len : int
        Words per stripe, 1..65536.
    """

    def __init__(self, tables: TableSet, stripe_len: int):
        if not 1 <= stripe_len <= MAX_STRIPE_WORDS:
            raise TableError(f"stripe length {stripe_len} outside 1..{MAX_STRIPE_WORDS}")
        if tables.lens_b is not None:
            raise TableError("the stripe coder codes one code table; two (lutzip.codec.states.apply) are made from "
                             "its stripes")
        self.tables = tables
        self.stripe_len = int(stripe_len)
        self.sym_bits, sym_len = symbol_table(tables)
        self.sym_len = sym_len.astype(np.int64)
        #: the C coder's table: ``bits << 8 | length`` per value
        self.sym = (self.sym_bits << np.uint64(8)) | sym_len.astype(np.uint64)
        codes = tables.codes()
        self.has_zrun = any(cl.kind == ZRUN for cl in tables.classes)
        # the plan of runs up to r does not depend on the longest run planned: one plan for every part
        self.zr_choice = (zero_run_plan(tables, self.stripe_len, int(sym_len[0]))[0] if self.has_zrun
                          else np.zeros(1, np.int64))
        self.zr_bits = np.array([np.uint64(code) << np.uint64(cl.k) for cl, code in zip(tables.classes, codes)],
                                np.uint64)
        self.zr_len = np.array([cl.total for cl in tables.classes], np.int64)
        self.zr_k = np.array([cl.k for cl in tables.classes], np.int64)

    def encode(self, words: np.ndarray, first_word: int = 0, threads: int = 1):
        """Code ``words`` (a whole number of stripes, or the last words of a tensor) into stripes.

        Parameters
        ----------
        words : numpy.ndarray
            Unsigned ``W``-bit words (``uint8`` or ``uint16``), any shape (flattened in C order).
        first_word : int
            Index of ``words[0]`` in the tensor (for the error message of a word no class covers).
        threads : int
            Code parts of whole stripes on this many threads (C kernels only; the GIL is released while a
            part is coded); the stripes are the same as on one thread.

        Returns
        -------
        payload : numpy.ndarray of uint32
            The stripes, back to back (write them little-endian).
        stripe_words : numpy.ndarray of uint32
            Number of 32-bit words of each stripe, header included.
        """
        flat = np.ascontiguousarray(words).reshape(-1)
        k = kernels()
        c = hasattr(k, "encode")
        if not c or flat.dtype not in (np.uint8, np.uint16):
            flat = flat.astype(np.uint16, copy=False)
        if flat.dtype.itemsize * 8 > self.tables.word_bits or not c:
            if flat.size and int(flat.max()) >> self.tables.word_bits:
                raise TableError(f"value {int(flat.max())} does not fit {self.tables.word_bits}-bit words")
        S = self.stripe_len
        n_stripes = -(-flat.size // S)
        threads = max(1, min(int(threads), n_stripes)) if c else 1
        if threads > 1:
            per = -(-n_stripes // threads) * S
            parts = list(_pool(threads).map(lambda lo: self._encode_part(k, flat[lo:lo + per], first_word + lo),
                                            range(0, flat.size, per)))
            return (np.concatenate([p for p, _ in parts]), np.concatenate([sw for _, sw in parts]))
        return self._encode_part(k, flat, first_word)

    def _encode_part(self, k, flat, first_word):
        S = self.stripe_len
        n_stripes = -(-flat.size // S)
        out = np.empty(flat.size + 2 * n_stripes + 1, np.uint32)
        stripe_words = np.zeros(n_stripes, np.uint32)
        if hasattr(k, "encode"):
            p = k.encode(flat, S, self.sym, self.has_zrun, self.zr_choice, self.zr_bits, self.zr_len, self.zr_k, out,
                         stripe_words)
        else:
            p = k._encode_kernel(flat, S, self.sym_bits, self.sym_len, self.has_zrun, self.zr_choice, self.zr_bits,
                                 self.zr_len, self.zr_k, out, stripe_words)
        if p < 0:
            i = -1 - p
            raise TableError(f"word {first_word + i} (value {int(flat[i]):#x}) is not covered by any class of "
                             f"the table set")
        return out[:p], stripe_words


_pools: dict = {}


def _pool(threads: int):
    """A shared thread pool of ``threads`` workers (created on first use)."""
    pool = _pools.get(threads)
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor
        pool = _pools.setdefault(threads, ThreadPoolExecutor(threads, thread_name_prefix="lutzip-enc"))
    return pool


def encode_stripes(words: np.ndarray, tables: TableSet, stripe_len: int, threads: int = 1):
    """Code a tensor's words into stripes.

    Parameters
    ----------
    words : numpy.ndarray
        Unsigned ``W``-bit words (``uint8`` or ``uint16``), any shape (flattened in C order).
    tables : TableSet
        Table set to code with; every value must be covered by a class.
    stripe_len : int
        Words per stripe, 1..65536.
    threads : int
        Threads to code parts of whole stripes on (the same stripes as on one thread).

    Returns
    -------
    payload : numpy.ndarray of uint32
        All stripes, back to back (write them little-endian).
    stripe_words : numpy.ndarray of uint32
        Number of 32-bit words of each stripe, header included.

    See Also
    --------
    StripeEncoder : the same stripes, a part of the tensor at a time.
    """
    return StripeEncoder(tables, stripe_len).encode(words, threads=threads)


# ----------------------------------------------------------------------------------------------- decoder


