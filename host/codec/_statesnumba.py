"""The numba kernels of :mod:`lutzip.codec.states` (two code tables, format version 5): imported on first use.

``_decode2_kernel`` is ``_encnumba._decode_states_kernel`` (the one-table ``_decode_kernel`` is that kernel
never leaving state A): LUT1 has ``2 << L`` entries, addressed by ``state << L | prefix``; the state is 0 (A) at
a stripe start and ``nxt[class]`` after each symbol. The error codes and the word / stripe reported in ``err`` are
the same for both.

``_walk_kernel`` reads stripes the encoder has just written with a one-table set (trusted input) symbol by
symbol: ``mode`` 0 counts the class pairs ``pairs[previous class, class]`` (previous 16: the stripe start),
``mode`` 1 writes the same symbols (same classes, same index bits) with the codes of a two-state set.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from lutzip.codec._encnumba import _decode_states_kernel as _decode2_kernel   # the one-table kernel's checks


@njit(cache=True)
def _put_symbol(out, p, oacc, nacc, code, clen, k, idx):
    """Append one symbol (a ``clen``-bit code, then ``k`` index bits) to the bit accumulator ``oacc`` of ``nacc``
    bits; a full 32-bit word goes to ``out[p]``. Returns ``(p, oacc, nacc)``."""
    ln = clen + k
    oacc = (oacc << np.uint64(ln)) | (np.uint64(code) << np.uint64(k)) | idx
    nacc += ln
    if nacc >= 32:
        nacc -= 32
        out[p] = np.uint32((oacc >> np.uint64(nacc)) & np.uint64(0xFFFFFFFF))
        p += 1
        oacc &= (np.uint64(1) << np.uint64(nacc)) - np.uint64(1)
    return p, oacc, nacc


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
                p, oacc, nacc = _put_symbol(out, p, oacc, nacc, codes2[j], lens2[j], k, idx)
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


@njit(cache=True)
def _run_dp(S, opt_cls, opt_cap, lens2, ks, nxt, g, ch):
    """``g[s, r, e]``: fewest bits coding ``r`` zeros from state ``s`` ending in state ``e`` with the chunks of
    ``opt_cls`` (each chunk ``min(r, opt_cap)`` words); ``ch[s, r, e]``: the option of the first chunk (-1: none)."""
    big = np.int64(1) << 40
    for s in range(2):
        for e in range(2):
            for r in range(S + 1):
                g[s, r, e] = big
                ch[s, r, e] = -1
        g[s, 0, s] = 0
    for r in range(1, S + 1):
        for s in range(2):
            for o in range(opt_cls.shape[0]):
                j = opt_cls[o]
                ln = lens2[s * 16 + j]
                if ln == 0:
                    continue
                m = min(r, opt_cap[o])
                t = nxt[j]
                c = ln + ks[j]
                for e in range(2):
                    v = c + g[t, r - m, e]
                    if v < g[s, r, e]:
                        g[s, r, e] = v
                        ch[s, r, e] = o


@njit(cache=True)
def _encode2_kernel(words, S, lit_cls, lit_idx, opt_cls, opt_cap, opt_lit, lens2, codes2, ks, nxt, g, ch, out,
                    out_sw, pairs):
    """Code ``words`` in stripes of ``S`` with two-state codes: each non-zero word (and a lone zero when the
    run plan says so) as the literal of ``lit_cls``, each zero run by the state-aware plan ``g``/``ch`` that
    counts the following literal's code in the state the run ends in. Counts ``pairs`` like ``_walk_kernel``.
    Returns the words written, or ``-1 - i`` for a word ``i`` no class covers."""
    n = words.shape[0]
    p = 0
    s_i = 0
    for lo in range(0, n, S):
        hi = min(n, lo + S)
        start = p
        out[p] = np.uint32(0x4C5A0000 | (hi - lo - 1))
        p += 1
        oacc = np.uint64(0)
        nacc = 0
        state = 0
        prev = 16
        i = lo
        while i < hi:
            v = words[i]
            if v != 0:
                j = lit_cls[v]
                if j < 0 or lens2[state * 16 + j] == 0:
                    return -1 - i
                idx = np.uint64(lit_idx[v])
                p, oacc, nacc = _put_symbol(out, p, oacc, nacc, codes2[state * 16 + j], lens2[state * 16 + j], ks[j],
                                            idx)
                pairs[prev, j] += 1
                prev = j
                state = nxt[j]
                i += 1
                continue
            r = 1
            while i + r < hi and words[i + r] == 0:
                r += 1
            # the end state: the cheaper of (run ending in e) + (the next literal's code in e)
            e_best = -1
            best = np.int64(1) << 50
            for e in range(2):
                t = g[state, r, e]
                if i + r < hi:
                    jl = lit_cls[words[i + r]]
                    if jl < 0:
                        return -1 - (i + r)
                    l2 = lens2[e * 16 + jl]
                    if l2 == 0:
                        continue
                    t += l2
                if t < best:
                    best = t
                    e_best = e
            if e_best < 0 or best >= (np.int64(1) << 40):
                return -1 - (i + r if i + r < hi else i)
            rr = r
            while rr > 0:
                o = ch[state, rr, e_best]
                j = opt_cls[o]
                m = min(rr, opt_cap[o])
                if opt_lit[o]:
                    idx = np.uint64(lit_idx[0])
                else:
                    idx = np.uint64(m - 1)
                p, oacc, nacc = _put_symbol(out, p, oacc, nacc, codes2[state * 16 + j], lens2[state * 16 + j], ks[j],
                                            idx)
                pairs[prev, j] += 1
                prev = j
                state = nxt[j]
                rr -= m
            i += r
        if nacc > 0:
            out[p] = np.uint32((oacc << np.uint64(32 - nacc)) & np.uint64(0xFFFFFFFF))
            p += 1
        out_sw[s_i] = p - start
        s_i += 1
    return p
