"""Stripe bit streams: pack symbols into stripes and decode them back (docs/FORMAT.md, section 3).

The kernels here are compiled with numba; they read only the stripe words and the table set, never the
encoder's internal state, so the decoder is an independent check of the encoder. :func:`decode_stripes` runs
the C kernel of :mod:`lutzip.codec.fastdec` when it is available (same words, same errors) and this module's
numba kernel, the reference, otherwise or with ``kernel="numba"``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from lutzip.errors import DecodeError, TableError
from lutzip.codec.tables import LUT, RANGE, ZRUN, TableSet

from lutzip.codec.decode import (ERR_BAD_HEADER, ERR_COUNT, ERR_INVALID_PREFIX, ERR_LEFTOVER,  # noqa: F401
                                 ERR_LUT3_RANGE, ERR_OK, ERR_OVERRUN, ERR_PADDING, ERR_UNREPRESENTABLE,
                                 ERR_ZRUN_OVERFLOW, ERROR_TEXT, MAX_STRIPE_WORDS, STRIPE_MARKER, decode_stripes)


# ----------------------------------------------------------------------------------------------- encoder
def symbol_table(tables: TableSet):
    """Cheapest single-word symbol for every ``W``-bit value.

    Returns ``(bits, length)``: arrays of ``2^W`` entries; ``bits`` is ``code << k | index`` and ``length``
    is ``c + k`` (0 where no class covers the value).
    """
    tables.validate()
    size = 1 << tables.word_bits
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


def zero_run_plan(tables: TableSet, max_run: int):
    """Optimal coding of zero runs of every length up to ``max_run``.

    Returns ``(choice, cost)``: ``choice[r]`` is -1 for "one single-word zero symbol, then r-1 more", or the
    class number of the zero-run symbol that starts an optimal coding of ``r`` zeros (largest chunk first);
    -2 where ``r`` zeros cannot be coded.
    """
    bits, length = symbol_table(tables)
    zr = [(j, cl) for j, cl in enumerate(tables.classes) if cl.kind == ZRUN]
    return _zero_run_dp(int(max_run), int(length[0]), np.array([j for j, _ in zr], np.int64),
                        np.array([cl.k for _, cl in zr], np.int64), np.array([cl.total for _, cl in zr], np.int64))


@njit(cache=True)
def _zero_run_dp(max_run, single, zj, zk, ztot):
    inf = 1 << 60
    cost = np.full(max_run + 1, inf, np.int64)
    choice = np.full(max_run + 1, -2, np.int64)
    cost[0] = 0
    for r in range(1, max_run + 1):
        if single > 0 and cost[r - 1] + single < cost[r]:
            cost[r] = cost[r - 1] + single
            choice[r] = -1
        for i in range(zj.shape[0]):
            m = min(r, 1 << zk[i])
            if cost[r - m] + ztot[i] < cost[r]:
                cost[r] = cost[r - m] + ztot[i]
                choice[r] = zj[i]
    return choice, cost


@njit(cache=True)
def _encode_kernel(words, S, sym_bits, sym_len, has_zrun, zr_choice, zr_bits, zr_len, zr_k, out, stripe_words):
    n = words.shape[0]
    n_stripes = stripe_words.shape[0]
    p = 0
    for s in range(n_stripes):
        lo = s * S
        hi = min(n, lo + S)
        start = p
        out[p] = np.uint32(0x4C5A0000 | (hi - lo - 1))
        p += 1
        acc = np.uint64(0)
        nacc = 0
        i = lo
        while i < hi:
            v = words[i]
            if has_zrun and v == 0:
                r = 1
                while i + r < hi and words[i + r] == 0:
                    r += 1
                i += r
                while r > 0:
                    ch = zr_choice[r]
                    if ch == -2:
                        return -1 - (i - r)
                    if ch == -1:
                        b = sym_bits[0]
                        ln = sym_len[0]
                        r -= 1
                    else:
                        m = min(r, 1 << zr_k[ch])
                        b = zr_bits[ch] | np.uint64(m - 1)
                        ln = zr_len[ch]
                        r -= m
                    acc = (acc << np.uint64(ln)) | b
                    nacc += ln
                    if nacc >= 32:
                        nacc -= 32
                        out[p] = np.uint32((acc >> np.uint64(nacc)) & np.uint64(0xFFFFFFFF))
                        p += 1
                        acc &= (np.uint64(1) << np.uint64(nacc)) - np.uint64(1)
                continue
            ln = sym_len[v]
            if ln == 0:
                return -1 - i
            acc = (acc << np.uint64(ln)) | sym_bits[v]
            nacc += ln
            if nacc >= 32:
                nacc -= 32
                out[p] = np.uint32((acc >> np.uint64(nacc)) & np.uint64(0xFFFFFFFF))
                p += 1
                acc &= (np.uint64(1) << np.uint64(nacc)) - np.uint64(1)
            i += 1
        if nacc > 0:
            out[p] = np.uint32((acc << np.uint64(32 - nacc)) & np.uint64(0xFFFFFFFF))
            p += 1
        stripe_words[s] = p - start
    return p


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
        self.tables = tables
        self.stripe_len = int(stripe_len)
        self.sym_bits, sym_len = symbol_table(tables)
        self.sym_len = sym_len.astype(np.int64)
        codes = tables.codes()
        self.has_zrun = any(cl.kind == ZRUN for cl in tables.classes)
        # the plan of runs up to r does not depend on the longest run planned: one plan for every part
        self.zr_choice = zero_run_plan(tables, self.stripe_len)[0] if self.has_zrun else np.zeros(1, np.int64)
        self.zr_bits = np.array([np.uint64(code) << np.uint64(cl.k) for cl, code in zip(tables.classes, codes)],
                                np.uint64)
        self.zr_len = np.array([cl.total for cl in tables.classes], np.int64)
        self.zr_k = np.array([cl.k for cl in tables.classes], np.int64)

    def encode(self, words: np.ndarray, first_word: int = 0):
        """Code ``words`` (a whole number of stripes, or the last words of a tensor) into stripes.

        Parameters
        ----------
        words : numpy.ndarray
            Unsigned ``W``-bit words (``uint8`` or ``uint16``), any shape (flattened in C order).
        first_word : int
            Index of ``words[0]`` in the tensor (for the error message of a word no class covers).

        Returns
        -------
        payload : numpy.ndarray of uint32
            The stripes, back to back (write them little-endian).
        stripe_words : numpy.ndarray of uint32
            Number of 32-bit words of each stripe, header included.
        """
        flat = np.ascontiguousarray(words).reshape(-1).astype(np.uint16, copy=False)
        if flat.size and int(flat.max()) >> self.tables.word_bits:
            raise TableError(f"value {int(flat.max())} does not fit {self.tables.word_bits}-bit words")
        S = self.stripe_len
        n_stripes = -(-flat.size // S)
        out = np.zeros(flat.size + 2 * n_stripes + 1, np.uint32)
        stripe_words = np.zeros(n_stripes, np.uint32)
        p = _encode_kernel(flat, S, self.sym_bits, self.sym_len, self.has_zrun, self.zr_choice, self.zr_bits,
                           self.zr_len, self.zr_k, out, stripe_words)
        if p < 0:
            i = -1 - p
            raise TableError(f"word {first_word + i} (value {int(flat[i]):#x}) is not covered by any class of "
                             f"the table set")
        return out[:p], stripe_words


def encode_stripes(words: np.ndarray, tables: TableSet, stripe_len: int):
    """Code a tensor's words into stripes.

    Parameters
    ----------
    words : numpy.ndarray
        Unsigned ``W``-bit words (``uint8`` or ``uint16``), any shape (flattened in C order).
    tables : TableSet
        Table set to code with; every value must be covered by a class.
    stripe_len : int
        Words per stripe, 1..65536.

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
    return StripeEncoder(tables, stripe_len).encode(words)


# ----------------------------------------------------------------------------------------------- decoder
@njit(cache=True)
def _decode_kernel(words, starts, nwords, S, n_total, lut1, L, kinds, ks, params, lut3, out, err):
    n_stripes = starts.shape[0]
    mask64 = np.uint64(0xFFFFFFFFFFFFFFFF)
    for s in range(n_stripes):
        base = starts[s]
        end = base + nwords[s]
        lo = s * S
        n_exp = min(S, n_total - lo)
        hdr = words[base]
        err[1] = s
        if (hdr >> 16) != 0x4C5A:
            err[2] = 0
            return 1
        if (hdr & 0xFFFF) + 1 != n_exp:
            err[2] = 0
            return 2
        pos = base + 1
        acc = np.uint64(0)
        have = 0
        o = lo
        hi = lo + n_exp
        while o < hi:
            while have <= 32 and pos < end:
                acc |= np.uint64(words[pos]) << np.uint64(32 - have)
                have += 32
                pos += 1
            err[2] = o - lo
            prefix = acc >> np.uint64(64 - L)
            e = lut1[prefix]
            if (e >> 14) & 1 == 0:
                return 3
            tot = e & 63
            if tot > have:
                return 4
            cls = (e >> 10) & 15
            c = (e >> 6) & 15
            k = ks[cls]
            if k > 0:
                idx = ((acc << np.uint64(c)) & mask64) >> np.uint64(64 - k)
            else:
                idx = np.uint64(0)
            acc = (acc << np.uint64(tot)) & mask64
            have -= tot
            kind = kinds[cls]
            if kind == 0:
                a = params[cls] + np.int64(idx)
                if a >= lut3.shape[0]:
                    return 5
                out[o] = lut3[a]
                o += 1
            elif kind == 1:
                out[o] = np.uint16(params[cls] + np.int64(idx))
                o += 1
            else:
                m = np.int64(idx) + 1
                if o + m > hi:
                    return 6
                for t in range(m):
                    out[o + t] = 0
                o += m
        err[2] = n_exp
        if pos < end or have >= 32:
            return 7
        if have > 0 and acc != 0:
            return 8
    return 0


