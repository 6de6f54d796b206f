"""Class sets designed for two code tables (format version 5), for 8-bit table sets: an encoder choice only.

:func:`lutzip.codec.states.apply` keeps the one-table encoder's classes and only gives them a second vector of
code lengths. On dense int8 tensors that leaves most of what the previous value says unused: the classes were
cut for one order-0 code (e.g. a 16-value class for 2..9 whose members are common after a small value and rare
after a large one), and the state a symbol is read in can only change its *class* code. Here the classes are cut
for the two states instead (docs/log/2026-12-compression.md, 2026-12-07 afternoon 2):

1. a value set ``S`` splits the values into "small" (in ``S``) and "large" ones; the state of a word is "the
   previous word was in ``S``" (state B) or not (state A, also at a stripe start). ``S`` is a magnitude threshold
   (``|v| < T``) or an interval of values (:func:`intervals`, e.g. ``[0, 83]``: the previous value's sign, which
   says more than its magnitude on nudenet's dense 3x3 convolutions), the candidates ranked by the two-state
   order-0 bits of the values (:func:`candidates`), each cut once quickly and the best few again with every
   Lagrange multiplier (:func:`designs`); only the design of the smallest estimate is coded;
2. each of the two value lists, sorted by count, is cut into consecutive LUT classes of ``2^k`` entries by a
   dynamic programme whose cost is the two-state ideal code length (``-sum_s n_s log2(n_s / N_s)``) plus the
   index bits; the tails of both lists go to one RANGE escape class of ``W`` index bits; a class never mixes
   small and large values, so ``F`` (the follow mask) is exactly the small classes and the one-table encoder's
   ZRUN classes (kept as they are; in ``F`` when 0 is in ``S``; dense words are also cut without them);
3. the code lengths come from package-merge on the state-split counts, the streams are coded by
   :func:`lutzip.codec.states._encode2` (zero runs planned for the two states) and the lengths re-derived from
   that parse's class pairs.

The set is a plain version-5 table set: every decoder reads it as before (no format change). The caller
(:func:`lutzip.codec.states.apply`) keeps it only where the streams plus the table set's own bytes get smaller.
"""
from __future__ import annotations

import functools

import numpy as np

from lutzip.codec.tables import LUT, MAX_CLASSES, RANGE, ZRUN, ClassSpec, TableSet
from lutzip.errors import TableError

#: ``"auto"``: the C cut of :mod:`lutzip.codec.design_c` where it builds, else the numpy code; ``"py"``: always numpy
KERNELS = "auto"


def _c():
    """The :mod:`lutzip.codec.design_c` module when its kernels are used, else ``None``."""
    if KERNELS != "auto":
        return None
    from lutzip.codec import design_c
    return design_c if design_c.lib() is not None else None


#: the largest LUT class (index bits) the design cuts
MAX_K = 7

#: words with fewer than 1 in ``DENSE_ZEROS`` zeros are also cut without the one-table set's ZRUN classes
DENSE_ZEROS = 8


def signed8(words: np.ndarray) -> np.ndarray:
    """The int8 values of 8-bit words (two's complement), as int64."""
    w = np.asarray(words).astype(np.int64)
    return np.where(w >= 128, w - 256, w)


def value_set(T) -> np.ndarray:
    """The set ``S`` of 8-bit words after which a word is read in state B, as a boolean mask of 256: ``T`` an int is a
    magnitude threshold (``|v| < T``); else ``T`` is the mask itself (e.g. an interval of values, :func:`intervals`)."""
    if isinstance(T, (int, np.integer)):
        return np.abs(signed8(np.arange(256))) < int(T)
    S = np.asarray(T, bool).reshape(-1)
    if S.shape != (256,):
        raise ValueError(f"a value set is a mask of 256 words, not of {S.size}")
    return S


def state_counts(words_list, T):
    """``(hist_a, hist_b)``: counts of each 8-bit word read in state A (after a word not in ``S`` =
    :func:`value_set` of ``T``, or first in its array) and in state B (after a word in ``S``; ``T`` an int: after a
    word of magnitude < ``T``)."""
    S = value_set(T)
    ha = np.zeros(256, np.int64)
    hb = np.zeros(256, np.int64)
    for w in words_list:
        w = np.asarray(w).astype(np.int64).reshape(-1)
        if not w.size:
            continue
        small = S[w]
        sb = np.zeros(w.size, bool)
        sb[1:] = small[:-1]
        ha += np.bincount(w[~sb], minlength=256)
        hb += np.bincount(w[sb], minlength=256)
    return ha, hb


def joint_state_counts(joint, T):
    """:func:`state_counts` from the words' :func:`pair_counts` ``(joint, first)`` (the same counts)."""
    joint, first = joint
    S = value_set(T)
    hb = joint[S].sum(0)
    return joint.sum(0) + first - hb, hb


def _xlogx(x):
    x = np.asarray(x, np.float64)
    return np.where(x > 0, x * np.log2(np.maximum(x, 1e-300)), 0.0)


def ideal_bits(ha: np.ndarray, hb: np.ndarray) -> float:
    """Bits of the words under the two-state order-0 model of the values themselves (a lower bound for step 2)."""
    out = 0.0
    for h in (ha, hb):
        n = float(h.sum())
        if n:
            out += n * np.log2(n) - float(_xlogx(h).sum())
    return out


def thresholds(words_list, keep: int = 2, candidates=range(1, 65), joint=None):
    """The ``keep`` magnitude thresholds of the smallest :func:`ideal_bits`, best first (``joint``: the words'
    :func:`pair_counts`, if known)."""
    joint, first = pair_counts(words_list) if joint is None else joint
    mag = np.abs(signed8(np.arange(256)))
    total = joint.sum(0) + first
    Ts = np.array(list(candidates), np.int64)
    if not len(Ts):
        return []
    # the state-B counts of every threshold at once: the rows of each magnitude, summed up to T - 1
    by_mag = np.zeros((129, 256), np.int64)
    np.add.at(by_mag, mag, joint)
    HB = np.concatenate([np.zeros((1, 256), np.int64), np.cumsum(by_mag, 0)])[np.clip(Ts, 0, 129)]
    HA = total[None, :] - HB
    ok = (HA.sum(1) > 0) & (HB.sum(1) > 0)
    bits = _rows_entropy(HA) + _rows_entropy(HB)
    scored = sorted((float(b), int(T)) for b, T, o in zip(bits, Ts, ok) if o)
    return [T for _, T in scored[:keep]]


def pair_counts(words_list):
    """``(joint, first)``: counts of each pair of consecutive 8-bit words (``joint[prev, word]``, 256 x 256) within
    each array (read in C order: a transposed view counts in its own order), and of the arrays' first words (read
    in state A whatever ``S`` is)."""
    joint = np.zeros(256 * 256, np.int64)
    first = np.zeros(256, np.int64)
    k = _c()
    for w in words_list:
        if k is not None and k.pairs(w, joint, first):        # one-byte words, any view: counted in C
            continue
        w = np.asarray(w).astype(np.int64).reshape(-1)
        if not w.size:
            continue
        first[w[0]] += 1
        joint += np.bincount(w[:-1] * 256 + w[1:], minlength=256 * 256)
    return joint.reshape(256, 256), first


def _rows_entropy(m: np.ndarray) -> np.ndarray:
    """``n log2 n - sum x log2 x`` of each row of ``m`` (bits of an ideal order-0 code of the row's counts)."""
    m = np.asarray(m, np.float64)
    n = m.sum(-1)
    return _xlogx(n) - _xlogx(m).sum(-1)


def intervals(words_list, keep: int = 1, joint=None):
    """The ``keep`` sets ``S`` that are an interval ``[lo, hi]`` of int8 values (boolean masks of 256 words) of the
    smallest :func:`ideal_bits`, best first, as ``(bits, lo, hi, mask)``.

    A magnitude threshold is the interval ``[1 - T, T - 1]``; the others let the state say more than "the previous
    value was small": e.g. its sign (nudenet's dense 3x3 convolutions: ``[0, 83]`` is 1.5 % below the best
    threshold, model.7.conv.weight)."""
    if joint is None:
        joint, first = pair_counts(words_list)
    else:
        joint, first = joint
    sv = signed8(np.arange(256))
    order = np.argsort(sv, kind="stable")                             # words by value, -128 .. 127
    rows = order[joint[order].sum(1) > 0]                             # the words that precede another
    cols = (joint.sum(0) + first) > 0
    if not len(rows):
        return []
    P = np.concatenate([np.zeros((1, int(cols.sum())), np.int64), np.cumsum(joint[rows][:, cols], 0)])
    total = P[-1] + first[cols]
    lo, hi = np.triu_indices(len(rows) + 1, 1)
    k = _c()
    if k is not None:
        cost = k.interval_costs(P, total)
    else:
        hb = P[hi] - P[lo]
        cost = _rows_entropy(hb) + _rows_entropy(total - hb)
        ok = (hb.sum(-1) > 0) & ((total - hb).sum(-1) > 0)
        cost = np.where(ok, cost, np.inf)
    out = []
    for i in np.argsort(cost, kind="stable")[:keep]:
        if not np.isfinite(cost[i]):
            break
        a, b = int(sv[rows[lo[i]]]), int(sv[rows[hi[i] - 1]])
        out.append((float(cost[i]), a, b, (sv >= a) & (sv <= b)))
    return out


def _code_cost(x, mu, L: int):
    """``min over l in 1..L of x * l + mu * 2^-l`` (Lagrangian code bits of a class of count ``x``; ``mu`` None: the
    ideal ``-x log2 x``, the ``N log2 N`` left out)."""
    x = np.asarray(x, np.float64)
    if mu is None:
        return -_xlogx(x)
    ls = np.arange(1, L + 1, dtype=np.float64)
    return np.min(x[..., None] * ls + mu * np.exp2(-ls), axis=-1)


def _cut(a: np.ndarray, b: np.ndarray, max_m: int, max_k: int = MAX_K, mu=(None, None), L: int = 8):
    """Dynamic programme over one value list (counts ``a``, ``b`` per state, sorted by ``a + b`` descending).

    Returns ``(f, back)``: ``f[m, i]`` the cost (``-sum x log2 x`` of the classes' state counts plus index bits)
    of the first ``i`` values cut into ``m`` classes; ``back[m, i] = (k, start)`` of the last class (a class that
    runs past the list's end is padded)."""
    n = len(a)
    A = np.concatenate([[0], np.cumsum(a)]).astype(np.float64)
    B = np.concatenate([[0], np.cumsum(b)]).astype(np.float64)
    f = np.full((max_m + 1, n + 1), np.inf)
    back = np.full((max_m + 1, n + 1, 2), -1, np.int64)
    f[0, 0] = 0.0
    idx = np.arange(n)
    segs = []                                   # per k: (end, j, cost of the class [i, i + 2^k)), the same for every m
    for k in range(max_k + 1):
        end = idx + (1 << k)
        j = np.minimum(end, n)
        sa = A[j] - A[idx]
        sb = B[j] - B[idx]
        segs.append((end, j, _code_cost(sa, mu[0], L) + _code_cost(sb, mu[1], L) + (sa + sb) * k))
    for m in range(1, max_m + 1):
        for k in range(max_k + 1):
            end, j, seg = segs[k]
            cost = f[m - 1, :n] + seg
            full = (end <= n) & np.isfinite(cost)
            t, c, s = j[full], cost[full], idx[full]          # distinct targets
            better = c < f[m, t]
            f[m, t[better]] = c[better]
            back[m, t[better], 0] = k
            back[m, t[better], 1] = s[better]
            pad = (end > n) & np.isfinite(cost)
            if pad.any():
                i = int(idx[pad][np.argmin(cost[pad])])
                if cost[i] < f[m, n]:
                    f[m, n] = cost[i]
                    back[m, n] = (k, i)
    return f, back


def _classes_of(back, order, m: int, i: int):
    """The ``(k, values)`` of the classes of the cut ending at ``(m, i)`` (:func:`_cut`), in list order."""
    out = []
    while m > 0 and i > 0:
        k, start = (int(x) for x in back[m, i])
        out.append((k, start, i))
        m, i = m - 1, start
    if i != 0:
        raise AssertionError("cut does not start at the list head")
    out.reverse()
    return [(k, [int(order[x]) for x in range(s, e)]) for k, s, e in out]


#: Lagrange multipliers tried for the two states' Kraft sums, as multiples of ``N_s / ln 2`` (1: the ideal lengths)
MU_FACTORS = (0.7, 0.85, 1.0, 1.2, 1.45)


def _partition(ha, hb, zr, T, room: int, mu, L: int):
    """One cut of the small and the large values into at most ``room`` LUT classes plus the escape
    (:func:`_cut` per list, the tails joined into the escape): ``(small, large, rest)`` lists of ``(k, values)``
    and the escape's values, or ``None``."""
    vals = np.arange(256)
    S = value_set(T)
    present = (ha + hb) > 0
    if zr:
        present[0] = False
    k = _c()
    lists = []
    for sel in (S, ~S):
        v = vals[sel & present]
        order = v[np.argsort(-(ha[v] + hb[v]), kind="stable")]
        f, back = (k.cut if k is not None else _cut)(ha[order], hb[order], room, MAX_K, mu, L)
        tail_a = np.concatenate([np.cumsum(ha[order][::-1])[::-1], [0]]) if len(order) else np.zeros(1)
        tail_b = np.concatenate([np.cumsum(hb[order][::-1])[::-1], [0]]) if len(order) else np.zeros(1)
        lists.append((order, f, back, tail_a, tail_b))
    (o1, f1, b1, ta1, tb1), (o2, f2, b2, ta2, tb2) = lists
    if k is not None:
        got = k.join(f1, f2, room, ta1, tb1, ta2, tb2, mu, L)
        if got is None:
            return None
        m1, i1, m2, i2 = got
        return _parts(b1, o1, m1, i1, b2, o2, m2, i2, zr)
    ea = ta1[:, None] + ta2[None, :]                  # the escape's counts for every pair of list ends
    eb = tb1[:, None] + tb2[None, :]
    esc = _code_cost(ea, mu[0], L) + _code_cost(eb, mu[1], L) + (ea + eb) * 8
    g2 = np.full(f2.shape[1], np.inf)                 # min over m2 <= m of f2[m2], and its m2
    arg2 = np.zeros(f2.shape[1], np.int64)
    best2 = []
    for m in range(room + 1):
        better = f2[m] < g2
        g2 = np.where(better, f2[m], g2)
        arg2 = np.where(better, m, arg2)
        best2.append((g2.copy(), arg2.copy()))
    best = None
    for m1 in range(room + 1):
        g, a2 = best2[room - m1]
        tot = f1[m1][:, None] + g[None, :] + esc
        p = np.unravel_index(int(np.argmin(tot)), tot.shape)
        if np.isfinite(tot[p]) and (best is None or tot[p] < best[0]):
            best = (float(tot[p]), m1, int(p[0]), int(a2[p[1]]), int(p[1]))
    if best is None:
        return None
    _, m1, i1, m2, i2 = best
    return _parts(b1, o1, m1, i1, b2, o2, m2, i2, zr)


def _parts(b1, o1, m1, i1, b2, o2, m2, i2, zr):
    """:func:`_partition`'s ``(small, large, rest)`` of the chosen ends of the two lists."""
    small = _classes_of(b1, o1, m1, i1)
    large = _classes_of(b2, o2, m2, i2)
    covered = set(v for _, ms in small + large for v in ms)
    rest = [v for v in range(256) if v not in covered and not (zr and v == 0)]
    return small, large, rest


def _bits(ha, hb, zr, small, large, rest, L: int) -> float:
    """The estimated bits :func:`_build` gives the partition (the same sums), without building the table set."""
    from lutzip.codec.states import _lengths
    za = int(ha[0]) if zr else 0
    zb = int(hb[0]) if zr else 0
    ca, cb, ks = [], [], []
    for k, members in small + large:
        ca.append(float(ha[members].sum()))
        cb.append(float(hb[members].sum()))
        ks.append(k)
    ca.append(float(ha[rest].sum()))
    cb.append(float(hb[rest].sum()))
    ks.append(8)
    for cl in zr:
        ca.append(za / len(zr))
        cb.append(zb / len(zr))
        ks.append(cl.k)
    la = _lengths(ca, L, True)
    lb = _lengths(cb, L, True)
    return float(sum(x * l + y * m + (x + y) * k for x, y, l, m, k in zip(ca, cb, la, lb, ks)))


def _build(ha, hb, zr, small, large, rest, L: int, zero_in_s: bool = True):
    """The table set of a partition (:func:`_partition`), its code lengths by package-merge on the value-level
    state counts; ``(tableset, estimated bits)``. The ZRUN classes are in ``F`` when ``zero_in_s`` (0 is in
    ``S``: after a zero run the next word is read in state B)."""
    from lutzip.codec.states import _lengths
    za = int(ha[0]) if zr else 0                          # zeros: one ZRUN symbol each (an estimate)
    zb = int(hb[0]) if zr else 0
    specs, ca, cb, follow, blocks = [], [], [], 0, []
    for group, in_f in ((small, True), (large, False)):
        for k, members in group:
            # a class's members in LUT3, and the classes' places in it, are free: members by int8 value, the
            # classes' blocks by their smallest member, compress best in the LZMA2 metadata block (nudenet int8
            # 0 %: -121 B against members by word, classes in list order)
            members = sorted(members, key=lambda v: v - 256 if v >= 128 else v)
            blocks.append((members[0] - 256 if members[0] >= 128 else members[0], len(specs),
                           members + [members[-1]] * ((1 << k) - len(members))))
            if in_f:
                follow |= 1 << len(specs)
            specs.append((LUT, k, 0))
            ca.append(float(ha[members].sum()))
            cb.append(float(hb[members].sum()))
    lut3 = []
    for _, j, block in sorted(blocks, key=lambda b: b[:2]):
        specs[j] = (LUT, specs[j][1], len(lut3))
        lut3 += block
    specs.append((RANGE, 8, 0))
    ca.append(float(ha[rest].sum()))
    cb.append(float(hb[rest].sum()))
    for cl in zr:
        if zero_in_s:
            follow |= 1 << len(specs)
        specs.append((ZRUN, cl.k, 0))
        ca.append(za / len(zr))
        cb.append(zb / len(zr))
    la = _lengths(ca, L, True)
    lb = _lengths(cb, L, True)
    bits = sum(x * l + y * m + (x + y) * sp[1] for x, y, l, m, sp in zip(ca, cb, la, lb, specs))
    classes = [ClassSpec(int(c), kind, k, param) for c, (kind, k, param) in zip(la, specs)]
    two = TableSet(8, classes, np.array(lut3, np.uint16), lens_b=tuple(int(x) for x in lb), follow=int(follow))
    two.validate()
    return two, float(bits)


def design_two(words_list, zruns, T, L: int = 8, factors=MU_FACTORS, joint=None, refine: bool = False):
    """A two-state 8-bit table set for the words (steps 1-2 of the module text), or ``None`` when there is no room.
    ``T``: the magnitude threshold, or a value set ``S`` (:func:`value_set`).

    ``zruns``: the ZRUN classes (``ClassSpec``) of the one-table set, kept; value 0 is then left to them. The cut is
    made for each pair of Lagrange multipliers of ``factors`` (the states' Kraft sums: the classes' integer code
    lengths enter the cut's cost) and the ideal lengths; the partition of the fewest bits after package-merge is
    kept. Returns ``(tableset, estimated_bits)``. ``joint``: the words' :func:`pair_counts`, if known (the state
    counts then come from them: :func:`joint_state_counts`).
    """
    ha, hb = state_counts(words_list, T) if joint is None else joint_state_counts(joint, T)
    zr = [cl for cl in zruns if cl.kind == ZRUN]
    room = MAX_CLASSES - len(zr) - 1                      # the escape class
    if room < 2 or not ha.sum() or not hb.sum():
        return None
    NA, NB = float(ha.sum()) / np.log(2), float(hb.sum()) / np.log(2)
    mus = [(None, None)] + [(fa * NA, fb * NB) for fa in factors for fb in factors]
    parts, seen = [], set()
    k = _c()
    if k is not None:                                     # every multiplier's partition and bits in one C call
        bits, part = k.design(ha, hb, value_set(T), [cl.k for cl in zr], room, MAX_K, mus, L)
        # the partitions in order of bits (the first of equals: _partition's order), made as they are tried
        parts = [(float(bits[q]), q, functools.partial(part, q)) for q in range(len(mus)) if np.isfinite(bits[q])]
        mus = []
    for mu in mus:
        part = _partition(ha, hb, zr, T, room, mu, L)
        if part is None:
            continue
        key = repr(part)
        if key in seen:
            continue
        seen.add(key)
        parts.append((_bits(ha, hb, zr, *part, L), len(parts), part))
    best = None
    for _, _, part in sorted(parts, key=lambda x: x[:2]):   # the set of the fewest bits is built (the first
        part = part() if callable(part) else part           # that is a valid set)
        try:
            best, best_part = _build(ha, hb, zr, *part, L, bool(value_set(T)[0])), part
            break
        except TableError:
            continue
    if best is not None and refine:
        best = _refine(ha, hb, zr, best_part, best, L, value_set(T))
    return best


#: rounds of :func:`_refine` (moves and swaps of values between classes, then new code lengths)
REFINE_ROUNDS = 4


def _refine(ha, hb, zr, part, built, L: int, S: np.ndarray):
    """Values moved between the classes of a partition (:func:`_partition`) while that makes the estimate smaller:
    with each class's code lengths fixed (those :func:`_build` gave it), the best single move (a value to a class
    with a free LUT3 slot, or to the escape) or swap of two values, one at a time, within the small and within
    the large values; then the code lengths are derived again. The cut is optimal only for classes that are runs
    of the values sorted by count; this drops that restriction. Returns ``(tableset, estimated bits)``."""
    small, large, rest = [[(k, list(m)) for k, m in g] for g in part[:2]] + [list(part[2])]
    zero_in_s = bool(S[0])
    best = built
    for _ in range(REFINE_ROUNDS):
        two = best[0]
        n_s, n_l = len(small), len(large)
        la = np.array([cl.c for cl in two.classes], np.float64)
        lb = np.array(two.lens_b, np.float64)
        ks = np.array([cl.k for cl in two.classes], np.float64)
        wa, wb = la + ks, lb + ks                         # bits of a value of each class, per state
        esc = n_s + n_l                                   # the escape's class index (after the LUT classes)
        moved = False
        for lo, group, side in ((0, small, True), (n_s, large, False)):
            # the values of this list and the escape's values of the same list (by the present value set)
            vals = [v for _, m in group for v in m]
            cls = [lo + j for j, (_, m) in enumerate(group) for _ in m]
            eidx = [v for v in rest if (ha[v] + hb[v]) > 0 and bool(S[v]) == side and not (zr and v == 0)]
            vals += eidx
            cls += [esc] * len(eidx)
            if len(vals) < 2:
                continue
            vals = np.array(vals)
            cls = np.array(cls)
            cids = np.array(list(range(lo, lo + len(group))) + [esc])
            cap = np.array([1 << k for k, _ in group] + [1 << 30])
            A, B = ha[vals].astype(np.float64), hb[vals].astype(np.float64)
            C = A[:, None] * wa[cids][None, :] + B[:, None] * wb[cids][None, :]      # value x class (local)
            loc = np.array([int(np.flatnonzero(cids == x)[0]) for x in cls])
            for _ in range(4 * len(vals)):
                cnt = np.bincount(loc, minlength=len(cids))
                cur = C[np.arange(len(vals)), loc]
                Cx = C[:, loc]                                  # Cx[u, v]: u in v's class
                gs = cur[:, None] + cur[None, :] - Cx - Cx.T
                i = int(np.argmax(gs))
                gsw = gs.flat[i]
                gm = cur[:, None] - C
                ok = (cnt < cap)[None, :] & (cnt[loc] > 1)[:, None]
                gm = np.where(ok, gm, -np.inf)
                jm = int(np.argmax(gm))
                gmv = gm.flat[jm]
                if max(gsw, gmv) <= 1e-9:
                    break
                if gsw >= gmv:
                    u, v = divmod(i, len(vals))
                    loc[u], loc[v] = loc[v], loc[u]
                else:
                    u, c = divmod(jm, len(cids))
                    loc[u] = c
                moved = True
            members = [[] for _ in cids]
            for v, c in zip(vals.tolist(), loc.tolist()):
                members[c].append(v)
            group[:] = [(k, sorted(m, key=lambda v: -(ha[v] + hb[v]))) for (k, _), m in zip(group, members[:-1])]
            rest = [v for v in rest if v not in set(eidx)] + members[-1]
        if not moved:
            break
        try:
            got = _build(ha, hb, zr, small, large, sorted(rest), L, zero_in_s)
        except TableError:
            break
        if got[1] >= best[1]:
            break
        best = got
    return best


def relength(two: TableSet, pairs: np.ndarray, L: int = 8) -> TableSet:
    """``two`` with both code-length vectors re-derived (package-merge, every class a code in both states) from the
    class-pair counts ``pairs`` of a parse (17 x 16; row 16: the stripe start)."""
    from lutzip.codec.states import _lengths
    n = len(two.classes)
    inF = np.array([(two.follow >> j) & 1 for j in range(MAX_CLASSES)] + [0], bool)
    ca = pairs[~inF].sum(0)[:n]
    cb = pairs[inF].sum(0)[:n]
    la = _lengths(ca.tolist(), L, True)
    lb = _lengths(cb.tolist(), L, True)
    out = TableSet(two.word_bits, [ClassSpec(int(a), cl.kind, cl.k, cl.param) for a, cl in zip(la, two.classes)],
                   two.lut3.copy(), lens_b=tuple(int(b) for b in lb), follow=two.follow)
    out.validate()
    return out


def table_bytes(ts: TableSet) -> int:
    """Bytes the table set takes in the container's table block (version 5)."""
    from lutzip.codec.container import _pack_tables
    return len(_pack_tables([ts], 5))


def candidates(words_list, n_thresholds: int = 2, n_intervals: int = 1, joint=None, ivals=None) -> list:
    """The value sets :func:`redesign` tries: the ``n_thresholds`` best magnitude thresholds (ints) and the
    ``n_intervals`` best intervals (masks) that are not one of those thresholds, by :func:`ideal_bits`. ``ivals``:
    :func:`intervals` of the same words with ``keep`` at least ``n_thresholds + n_intervals``, if known."""
    joint = pair_counts(words_list) if joint is None else joint
    out = list(thresholds(words_list, n_thresholds, joint=joint))
    seen = [value_set(T) for T in out]
    if n_intervals:
        if ivals is None:
            ivals = intervals(words_list, n_intervals + len(out), joint=joint)
        for _, _, _, S in ivals[:n_intervals + len(out)]:
            if len(out) >= n_thresholds + n_intervals:
                break
            if not any(np.array_equal(S, x) for x in seen):
                out.append(S)
                seen.append(S)
    return out


#: what a table set's byte costs in a file, for the choices here: the metadata block is LZMA2-compressed
#: (nudenet int8 0 %, two code tables with redesigned sets: the table block 3 963 -> 2 121 bytes)
TABLE_WEIGHT = 0.5


def table_cost(ts: TableSet) -> float:
    """:func:`table_bytes` of ``ts`` weighted by :data:`TABLE_WEIGHT` (what the choices between table sets count)."""
    return TABLE_WEIGHT * table_bytes(ts)


def designs(words_list, ts: TableSet, L: int = 8, n_thresholds: int = 4, n_intervals: int = 4, joint=None,
            factors=None, full_top="default", ivals=None) -> list:
    """The table sets :func:`redesign` codes, by estimate: ``[(estimated bits, tableset)]``, smallest first (bits of
    :func:`design_two` plus 8 x :func:`table_cost`). ``joint``: the words' :func:`pair_counts`, if known;
    ``ivals``: their :func:`intervals` (``keep`` at least ``n_thresholds + n_intervals``), if known.

    Each value set of :func:`candidates` (with and, for dense words, without the ZRUN classes) is cut with the
    multipliers :data:`QUICK_FACTORS`, then the ``full_top`` (default :data:`FULL_TOP`) best again with ``factors``
    (default :data:`MU_FACTORS`)."""
    factors = MU_FACTORS if factors is None else factors
    full_top = FULL_TOP if full_top == "default" else full_top
    if ts.word_bits != 8:
        return []
    joint = pair_counts(words_list) if joint is None else joint
    zr = [cl for cl in ts.classes if cl.kind == ZRUN]
    first = joint[1]
    n = int(joint[0].sum() + first.sum())
    zeros = int(joint[0][:, 0].sum() + first[0])
    # dense words: zero also as a plain value (no ZRUN class), its class slot free for the cut
    zr_sets = [zr] + ([[]] if zr and zeros * DENSE_ZEROS < n else [])
    tried = []
    sets = candidates(words_list, n_thresholds, n_intervals, joint=joint, ivals=ivals)
    for T, zr in ((T, z) for T in sets for z in zr_sets):
        got = design_two(words_list, zr, T, L, factors=QUICK_FACTORS if full_top else factors, joint=joint)
        if got is not None:
            tried.append((got[1] + 8 * table_cost(got[0]), len(tried), got[0], T, zr))
    tried.sort(key=lambda x: x[:2])
    if full_top:                          # the best few by the quick estimate cut again with every multiplier
        for i, (_, o, _, T, zr) in enumerate(tried[:full_top]):
            got = design_two(words_list, zr, T, L, factors=factors, joint=joint)
            if got is not None:
                tried[i] = (min(tried[i][0], got[1] + 8 * table_cost(got[0])), o,
                            got[0] if got[1] + 8 * table_cost(got[0]) < tried[i][0] else tried[i][2], T, zr)
        tried.sort(key=lambda x: x[:2])
    return [(b, two, T, zr) for b, _, two, T, zr in tried]


#: the multipliers of :func:`designs`' first pass over the value sets (the best :data:`FULL_TOP` are cut again
#: with :data:`MU_FACTORS`)
QUICK_FACTORS = (1.0,)
#: how many value sets :func:`designs` cuts with every multiplier of :data:`MU_FACTORS` (``None``: all, one pass)
FULL_TOP = 4


def redesign(words_list, stripe_lens, ts: TableSet, L: int = 8, n_thresholds: int = 2, rounds: int = 2,
             n_intervals: int = 1, joint=None, n_coded: int | None = None, found=None, refine: bool = False):
    """The smallest coding of the streams ``words_list`` (stripe lengths ``stripe_lens``) with a table set of
    :func:`design_two`, or ``None`` (not an 8-bit set, or nothing could be designed).

    The value sets tried are :func:`candidates` (``n_thresholds`` magnitude thresholds, ``n_intervals`` intervals).
    ``n_coded``: code only that many of them, the smallest by estimate (:func:`designs`; ``None``: all);
    ``found``: :func:`designs` of the words, if known; ``refine``: the coded designs' values moved between their
    classes where that lowers the estimate (:func:`_refine`). Returns ``(tableset, [(payload, stripe_words)], bytes)``:
    ``bytes`` the streams' payload plus the table set's own bytes (:func:`table_cost`), so it compares with the
    one-table set's streams plus its table cost.
    """
    from lutzip.codec.states import _encode2
    if ts.word_bits != 8:
        return None
    joint = pair_counts(words_list) if joint is None else joint
    found = designs(words_list, ts, L, n_thresholds, n_intervals, joint) if found is None else found
    best = None
    for entry in (found if n_coded is None else found[:n_coded]):
        cur = entry[1]
        if refine and len(entry) > 2:                 # values moved between the classes (:func:`_refine`)
            got = design_two(words_list, entry[3], entry[2], L, joint=joint, refine=True)
            if got is not None and got[1] + 8 * table_cost(got[0]) < entry[0]:
                cur = got[0]
        for _ in range(int(rounds) + 1):
            try:
                res = [_encode2(w, S, cur) for w, S in zip(words_list, stripe_lens)]
            except TableError:
                break
            size = sum(4 * int(sw.astype(np.int64).sum()) for _, sw, _ in res) + table_cost(cur)
            if best is None or size < best[2]:
                best = (cur, [(p, sw) for p, sw, _ in res], size)
            cur = relength(cur, sum(pr for _, _, pr in res), L)
    return best
