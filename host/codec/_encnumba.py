"""The numba kernels of the encoder and the reference stripe decoder: the fallback without a C compiler and the
reference the C kernels of :mod:`lutzip.codec.fastenc` are tested against (same results, same bytes).

Importing this module imports numba (0.4-0.6 s of start-up): :mod:`lutzip.codec.encoder` and
:mod:`lutzip.codec.bitstream` import it only when the C kernels cannot be built (``LUTZIP_FASTENC=0``, no
compiler) or when the reference decoder (``decode_stripes(..., kernel="numba")``) is asked for.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from lutzip.codec.encoder import CLASS_BITS, INF, LUT3_BITS

@njit(cache=True)
def _run_histogram(words, S, out):
    n = words.shape[0]
    i = 0
    while i < n:
        if words[i] != 0:
            i += 1
            continue
        end = min(n, (i // S + 1) * S)
        r = 1
        while i + r < end and words[i + r] == 0:
            r += 1
        out[r] += 1
        i += r

@njit(cache=True)
def _lengths(size, kinds, ks, params, totals, lut3):
    """Cheapest single-word symbol length of every value (0 = not covered); as bitstream.symbol_table."""
    best = np.zeros(size, np.int64)
    for j in range(kinds.shape[0]):
        if kinds[j] == 2:
            continue
        n = 1 << ks[j]
        for i in range(n):
            v = lut3[params[j] + i] if kinds[j] == 0 else params[j] + i
            if best[v] == 0 or totals[j] < best[v]:
                best[v] = totals[j]
    return best

@njit(cache=True)
def _zrun_costs(maxr, single, zk, ztot):
    """Least bits of a run of ``r`` zeros, ``r = 0..maxr`` (as bitstream.zero_run_plan); ``2^60`` if impossible."""
    inf = 1 << 60
    cost = np.full(maxr + 1, inf, np.int64)
    cost[0] = 0
    for r in range(1, maxr + 1):
        if single > 0 and cost[r - 1] + single < cost[r]:
            cost[r] = cost[r - 1] + single
        for j in range(zk.shape[0]):
            m = min(r, 1 << zk[j])
            if cost[r - m] + ztot[j] < cost[r]:
                cost[r] = cost[r - m] + ztot[j]
    return cost

@njit(cache=True)
def _lut_dp(freq, N, M, kmax):
    """Cut ranks ``0..R-1`` (frequencies ``freq``, descending) into power-of-two groups.

    ``best[i, m]`` = least cost of covering ranks ``0..i-1`` with exactly ``m`` LUT classes; ``choice[i, m]`` =
    the ``k`` of the last group.
    """
    R = freq.shape[0]
    pre = np.zeros(R + 1)
    for i in range(R):
        pre[i + 1] = pre[i] + freq[i]
    best = np.full((R + 1, M + 1), INF)
    choice = np.full((R + 1, M + 1), -1, np.int64)
    best[0, 0] = 0.0
    for i in range(1, R + 1):
        for k in range(kmax + 1):
            g = 1 << k
            if g > i:
                break
            F = pre[i] - pre[i - g]
            if F <= 0:
                cost = CLASS_BITS + LUT3_BITS * g
            else:
                cost = F * (k + np.log2(N / F)) + CLASS_BITS + LUT3_BITS * g
            for m in range(1, M + 1):
                b = best[i - g, m - 1]
                if b < INF and b + cost < best[i, m]:
                    best[i, m] = b + cost
                    choice[i, m] = k
    return best, choice

@njit(cache=True)
def _trie_solve(F, K, left, right, N, W, c_res, M, nores, res, ch_nores, ch_res):
    """Trie DP over nodes in BFS order (children after parents), processed bottom-up.

    ``nores[i, m]``: least cost of covering node ``i``'s values with at most ``m`` classes, no residual;
    ``res``: the residual class may take some. Choice: -1 own class, -2 residual, -3 none, else the ``m``
    given to the left child.
    """
    for i in range(F.shape[0] - 1, -1, -1):
        f = F[i]
        k = K[i]
        own = f * (k + np.log2(N / f)) + CLASS_BITS
        rescost = f * (W + c_res)
        lc = left[i]
        rc = right[i]
        split = lc >= 0 or rc >= 0
        for m in range(M + 1):
            bn = INF
            bnc = -3
            br = rescost
            brc = -2
            if m >= 1:
                if own < bn:
                    bn = own
                    bnc = -1
                if own < br:
                    br = own
                    brc = -1
            if split:
                for a in range(m + 1):
                    if lc >= 0:
                        ln = nores[lc, a]
                        lr = res[lc, a]
                    else:
                        if a > 0:
                            break
                        ln = 0.0
                        lr = 0.0
                    b = m - a
                    if rc >= 0:
                        rn = nores[rc, b]
                        rr = res[rc, b]
                    else:
                        rn = 0.0
                        rr = 0.0
                    if ln + rn < bn:
                        bn = ln + rn
                        bnc = a
                    if lr + rr < br:
                        br = lr + rr
                        brc = a
            nores[i, m] = bn
            ch_nores[i, m] = bnc
            res[i, m] = br
            ch_res[i, m] = brc

@njit(cache=True)
def _zrun_symbols_kernel(runs, ks):
    """Symbols of each ZRUN class of ``ks`` (sorted, largest first) when every run is cut largest chunks
    first."""
    n = ks.shape[0]
    out = np.zeros(n, np.int64)
    for r in range(1, runs.shape[0]):
        c = runs[r]
        if c == 0:
            continue
        rem = r
        for j in range(n - 1):
            q = rem >> ks[j]
            out[j] += c * q
            rem -= q << ks[j]
        out[n - 1] += c * ((rem + (1 << ks[n - 1]) - 1) >> ks[n - 1])
    return out

@njit(cache=True)
def _package_merge(w, L):
    """Optimal code lengths of at most ``L`` bits for the positive weights ``w`` (``2 <= len(w) <= 2^L``):
    package-merge, as :func:`lutzip.codec.huffman.limited_code_lengths`, compiled."""
    n = w.shape[0]
    order = np.argsort(w, kind="mergesort")
    lw = w[order]
    lc = np.zeros((n, n), np.int64)
    for i in range(n):
        lc[i, order[i]] = 1
    pw = lw.copy()
    pc = lc.copy()
    for _ in range(L - 1):
        m = pw.shape[0] // 2
        qw = np.empty(m)
        qc = np.empty((m, n), np.int64)
        for j in range(m):
            qw[j] = pw[2 * j] + pw[2 * j + 1]
            qc[j] = pc[2 * j] + pc[2 * j + 1]
        # merge the leaves and the packages by weight (leaves first on ties)
        tw = np.empty(n + m)
        tc = np.empty((n + m, n), np.int64)
        a = 0
        b = 0
        for t in range(n + m):
            if b >= m or (a < n and lw[a] <= qw[b]):
                tw[t] = lw[a]
                tc[t] = lc[a]
                a += 1
            else:
                tw[t] = qw[b]
                tc[t] = qc[b]
                b += 1
        pw = tw
        pc = tc
    lengths = np.zeros(n, np.int64)
    for t in range(2 * n - 2):
        lengths += pc[t]
    return lengths

@njit(cache=True)
def _best_c(F, mu, L):
    """``min_c F c + mu 2^-c`` over code lengths ``1..L``: a class's Lagrangian cost and its length."""
    # the minimum of the convex F c + mu 2^-c is at c = log2(mu ln2 / F): try the two integers around it
    if F <= 0.0:
        return mu * 2.0 ** (-L), L
    c0 = int(math.floor(math.log2(mu * 0.6931471805599453 / F)))
    best = INF
    bc = 1
    for c in (c0, c0 + 1):
        c = min(max(c, 1), L)
        v = F * c + mu * 2.0 ** (-c)
        if v < best:
            best = v
            bc = c
    return best, bc

@njit(cache=True)
def _group_dp(freq, M, kmax, mu, L, W, class_bits, lut3_bits):
    """Cut ranks ``0..R-1`` (frequencies ``freq``, descending) into LUT blocks of ``2^k`` values (the last one
    padded) and optionally a raw residual for the tail, each class at an integer code length.

    The Kraft inequality is priced by the multiplier ``mu`` (a class of code length ``c`` costs ``mu 2^-c``
    extra), so the code length of every class is chosen on its own and the DP runs over ``(rank, classes)``:
    ``best[i, m]`` is the least cost of ranks ``0..i-1`` in ``m`` classes; ``ch`` the ``k`` of the last block
    (``W + 1`` = residual) and ``start`` its first rank.
    """
    R = freq.shape[0]
    pre = np.zeros(R + 1)
    for i in range(R):
        pre[i + 1] = pre[i] + freq[i]
    best = np.full((R + 1, M + 1), INF)
    ch = np.full((R + 1, M + 1), -1, np.int64)
    start = np.full((R + 1, M + 1), -1, np.int64)
    best[0, 0] = 0.0
    for i in range(R):
        reached = False
        for k in range(kmax + 2):
            if k <= kmax:
                if reached:         # a longer block from i only pads more
                    continue
                g = 1 << k
                j = min(i + g, R)
                F = pre[j] - pre[i]
                cc, _c = _best_c(F, mu, L)
                cost = F * k + cc + class_bits + lut3_bits * g
                kk = k
            else:                       # the raw residual takes the tail
                j = R
                F = pre[R] - pre[i]
                cc, _c = _best_c(F, mu, L)
                cost = F * W + cc + class_bits
                kk = W + 1
            for m in range(M):
                b = best[i, m]
                if b < INF and b + cost < best[j, m + 1]:
                    best[j, m + 1] = b + cost
                    ch[j, m + 1] = kk
                    start[j, m + 1] = i
            if j == R:
                reached = True
    return best, ch, start

@njit(cache=True)
def _zrun_parse_counts(runs, single, zk, ztot):
    """Symbols of each zero-run class (and, last, of the single-zero symbol of ``single`` bits; 0 = none) in
    the optimal coding of the runs ``runs[r]`` (the parse of bitstream.zero_run_plan, largest chunk first)."""
    maxr = runs.shape[0] - 1
    nz = zk.shape[0]
    inf = 1 << 60
    cost = np.full(maxr + 1, inf, np.int64)
    cnt = np.zeros((maxr + 1, nz + 1), np.int64)
    cost[0] = 0
    out = np.zeros(nz + 1, np.int64)
    for r in range(1, maxr + 1):
        bc = -2
        if single > 0 and cost[r - 1] + single < cost[r]:
            cost[r] = cost[r - 1] + single
            bc = -1
        for j in range(nz):
            m = min(r, 1 << zk[j])
            if cost[r - m] + ztot[j] < cost[r]:
                cost[r] = cost[r - m] + ztot[j]
                bc = j
        if bc == -1:
            cnt[r, :] = cnt[r - 1, :]
            cnt[r, nz] += 1
        elif bc >= 0:
            cnt[r, :] = cnt[r - min(r, 1 << zk[bc]), :]
            cnt[r, bc] += 1
        if runs[r]:
            for j in range(nz + 1):
                out[j] += runs[r] * cnt[r, j]
    return out

@njit(cache=True)
def _zrun_estimate(runs, zk, tabcol, mus, L, rounds, class_bits):
    """:meth:`_Grouped.estimate` in one kernel: ``(dual value, grid index, run symbol counts)``."""
    nz = zk.shape[0]
    # first counts: largest chunks first
    zF = np.zeros(nz)
    order = np.argsort(-zk)
    for r in range(1, runs.shape[0]):
        if runs[r] == 0:
            continue
        rem = r
        for oi in range(nz):
            j = order[oi]
            if oi < nz - 1:
                q = rem >> zk[j]
                zF[j] += runs[r] * q
                rem -= q << zk[j]
            else:
                zF[j] += runs[r] * ((rem + (1 << zk[j]) - 1) >> zk[j])
    for j in range(nz):
        zF[j] = max(zF[j], 1.0)
    G = mus.shape[0]
    cbest = np.zeros(nz, np.int64)
    dual_best = -INF
    gbest = 0
    for rnd in range(rounds + 1):
        dual_best = -INF
        for g in range(G):
            d = tabcol[g] - mus[g] + class_bits * nz
            for j in range(nz):
                v, _c = _best_c(zF[j], mus[g], L)
                d += v + zF[j] * zk[j]
            if d > dual_best:
                dual_best = d
                gbest = g
        if rnd == rounds:
            break
        for j in range(nz):
            cbest[j] = _best_c(zF[j], mus[gbest], L)[1]
        cnt = _zrun_parse_counts(runs, 0, zk, zk + cbest)
        for j in range(nz):
            zF[j] = max(float(cnt[j]), 1.0)
    return dual_best, gbest, zF

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

@njit(cache=True)
def _decode_states_kernel(words, starts, nwords, S, n_total, lut1, L, nxt, kinds, ks, params, lut3, out, err):
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
def _decode_kernel(words, starts, nwords, S, n_total, lut1, L, kinds, ks, params, lut3, out, err):
    """One code table: :func:`_decode_states_kernel` that never leaves state A (LUT1 of ``1 << L`` entries)."""
    return _decode_states_kernel(words, starts, nwords, S, n_total, lut1, L, np.zeros(16, np.int64), kinds, ks,
                                 params, lut3, out, err)
