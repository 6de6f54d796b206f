"""The numba kernels of :mod:`lutzip.codec.states` (two code tables, format version 5): imported on first use.

``_decode2_kernel`` is ``_encnumba._decode_kernel`` with a state: LUT1 has ``2 << L`` entries, addressed by
``state << L | prefix``; the state is 0 (A) at a stripe start and ``nxt[class]`` after each symbol. The error
codes and the word / stripe reported in ``err`` are the same as the one-table kernel's.

``_walk_kernel`` reads stripes the encoder has just written with a one-table set (trusted input) symbol by
symbol: ``mode`` 0 counts the class pairs ``pairs[previous class, class]`` (previous 16: the stripe start),
``mode`` 1 writes the same symbols (same classes, same index bits) with the codes of a two-state set.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _decode2_kernel(words, starts, nwords, S, n_total, lut1, L, nxt, kinds, ks, params, lut3, out, err):
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
        state = 0
        while o < hi:
            while have <= 32 and pos < end:
                acc |= np.uint64(words[pos]) << np.uint64(32 - have)
                have += 32
                pos += 1
            err[2] = o - lo
            prefix = np.int64(acc >> np.uint64(64 - L))
            e = lut1[(state << L) | prefix]
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
            state = nxt[cls]
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


@njit(cache=True)
def _walk_kernel(words, starts, nwords, lut1, L, kinds, ks, mode, nxt, codes2, lens2, out, out_sw, pairs):
    n_stripes = starts.shape[0]
    mask64 = np.uint64(0xFFFFFFFFFFFFFFFF)
    p = 0
    for s in range(n_stripes):
        base = starts[s]
        end = base + nwords[s]
        hdr = words[base]
        n_exp = np.int64(hdr & 0xFFFF) + 1
        start = p
        if mode == 1:
            out[p] = hdr
            p += 1
        pos = base + 1
        acc = np.uint64(0)
        have = 0
        o = 0
        prev = 16
        state = 0
        oacc = np.uint64(0)
        nacc = 0
        while o < n_exp:
            while have <= 32 and pos < end:
                acc |= np.uint64(words[pos]) << np.uint64(32 - have)
                have += 32
                pos += 1
            e = lut1[np.int64(acc >> np.uint64(64 - L))]
            tot = e & 63
            cls = (e >> 10) & 15
            c = (e >> 6) & 15
            k = ks[cls]
            if k > 0:
                idx = ((acc << np.uint64(c)) & mask64) >> np.uint64(64 - k)
            else:
                idx = np.uint64(0)
            acc = (acc << np.uint64(tot)) & mask64
            have -= tot
            if kinds[cls] == 2:
                o += np.int64(idx) + 1
            else:
                o += 1
            if mode == 0:
                pairs[prev, cls] += 1
                prev = cls
            else:
                j = state * 16 + cls
                ln = lens2[j] + k
                oacc = (oacc << np.uint64(ln)) | (np.uint64(codes2[j]) << np.uint64(k)) | idx
                nacc += ln
                if nacc >= 32:
                    nacc -= 32
                    out[p] = np.uint32((oacc >> np.uint64(nacc)) & np.uint64(0xFFFFFFFF))
                    p += 1
                    oacc &= (np.uint64(1) << np.uint64(nacc)) - np.uint64(1)
                state = nxt[cls]
        if mode == 1:
            if nacc > 0:
                out[p] = np.uint32((oacc << np.uint64(32 - nacc)) & np.uint64(0xFFFFFFFF))
                p += 1
            elif p == start + 1:             # a stripe has at least one word of bits (P >= 1)
                out[p] = 0
                p += 1
            out_sw[s] = p - start
    return p
