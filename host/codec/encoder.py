"""Choosing table sets: which classes, of which kinds and sizes, and what goes into LUT3.

``greedy_tableset`` is the published scheme (classes of equal rounded code length, power-of-two sizes,
raw residual) and serves as the baseline. ``best_tableset`` / :func:`plan_tables` search the format's whole
design space under an exact cost model:

* **Statistics** (:class:`Stats`): the histogram of the words and the histogram of zero-run lengths (runs cut at
  stripe ends, as the stripe coder cuts them). Payload size is a function of these alone, so every candidate
  table set is costed exactly without coding the tensor (:func:`exact_bits`).
* **Zero runs**: none, one ``ZRUN`` class or two (a short and a long one); the run lengths are chosen from the
  run histogram.
* **LUT classes**: the most frequent values, sorted by frequency, are cut into power-of-two groups (one ``LUT``
  class each) by a dynamic programme over ranks (:func:`_lut_dp`) that charges every group its payload bits,
  its 8 metadata bytes and 2 bytes per LUT3 entry.
* **RANGE classes**: the remaining values are covered by aligned dyadic intervals ``[base, base + 2^k)``
  (``base mod 2^k = 0``: exactly the intervals a ``RANGE`` class can be) chosen by a dynamic programme over the
  binary trie of the ``W``-bit value space (:func:`_trie_dp`); anything not worth a class of its own falls to
  the raw residual class ``RANGE(0, W)``. For bf16 the trie finds the "one exponent, raw mantissa" intervals
  by itself; LUT groups of similar frequency pick up the two signs of a frequent exponent.
* Class code lengths come from a length-limited Huffman code (package-merge, :mod:`lutzip.codec.huffman`) over the
  class frequencies; the dynamic programmes use ideal code lengths ``log2(N / F)``, then the candidates are
  re-costed exactly with the real code lengths and the best one wins.
* **Grouped design** (:class:`_Grouped`, alphabets of at most :data:`GROUPED_MAX_VALUES` values: every int8
  tensor): the values by falling frequency are cut into LUT blocks of ``2^k`` values at *integer* code lengths
  (a DP over ranks and the class budget with the Kraft inequality priced by a multiplier, then package-merge),
  jointly with up to :data:`GROUPED_MAX_ZRUNS` ZRUN classes chosen on the Lagrangian dual; the trie search
  above still runs (without LUT classes unless metadata matters) and the smaller result is kept.
* **Table sharing** (:func:`plan_tables`): a tensor joins an existing table set when coding it with that set
  costs fewer bits than its own set plus that set's metadata (small tensors such as biases usually do).
"""
from __future__ import annotations

import contextlib
import itertools
import math
from dataclasses import dataclass

import numpy as np

from lutzip.codec.decode import MAX_STRIPE_WORDS
from lutzip.codec.fastenc import kernels as _k
from lutzip.errors import TableError
from lutzip.codec.huffman import limited_code_lengths
from lutzip.codec.tables import LUT, MAX_CLASSES, MAX_CODE_LEN, MAX_LUT3, MAX_LUT_K, MAX_ZRUN_K, RANGE, ZRUN, ClassSpec, TableSet

CLASS_BITS = 32        # metadata bits of one class record (container: 2 bytes and a 1-3 byte varint)
LUT3_BITS = 16         # metadata bits of one LUT3 entry
TABLE_HEAD_BITS = 32   # metadata bits of a table-set header
INF = 1e300


#: words counted per ``numpy.bincount`` call (each call makes an ``int64`` copy of its part)
HIST_CHUNK = 1 << 20


def histogram(words: np.ndarray, word_bits: int) -> np.ndarray:
    """Count of every ``word_bits``-bit value in ``words``, counted in parts of :data:`HIST_CHUNK` words.

    ``numpy.bincount`` converts its input to ``int64``: counting a large tensor at once would take 4 to 8
    times its size in memory, counting it in parts takes 8 MB.
    """
    flat = np.asarray(words).reshape(-1)
    size = 1 << word_bits
    if flat.size <= HIST_CHUNK:
        return np.bincount(flat.astype(np.int64, copy=False), minlength=size)
    hist = np.zeros(size, np.int64)
    for i in range(0, flat.size, HIST_CHUNK):
        part = np.bincount(flat[i:i + HIST_CHUNK], minlength=size)
        if len(part) > len(hist):                  # a value beyond word_bits: the counts grow, as bincount's do
            hist = np.concatenate([hist, np.zeros(len(part) - len(hist), np.int64)])
        hist[:len(part)] += part
    return hist


# ------------------------------------------------------------------------------------------------ baseline
def _assign_lengths(freqs, L):
    lens = limited_code_lengths([max(int(f), 1) for f in freqs], L)
    return lens


def greedy_tableset(words: np.ndarray, word_bits: int, L: int = 8, lut3_max: int = MAX_LUT3) -> TableSet:
    """The published greedy grouping: a baseline, not the best the format can do."""
    hist = histogram(words, word_bits)
    total = int(hist.sum())
    order = np.argsort(-hist, kind="stable")
    order = order[hist[order] > 0]
    lut3, classes, freqs = [], [], []
    i = 0
    while i < len(order) and len(classes) < min(MAX_CLASSES, 1 << L) - 1:
        p = hist[order[i]] / total
        bits = round(-math.log2(p))
        j = i
        while j < len(order) and round(-math.log2(hist[order[j]] / total)) == bits:
            j += 1
        size = 1 << math.ceil(math.log2(j - i)) if j - i > 1 else 1
        if len(lut3) + size > lut3_max:
            break
        members = order[i:i + size]
        k = int(math.log2(size))
        classes.append([LUT, k, len(lut3)])
        freqs.append(int(hist[members].sum()))
        lut3.extend(int(v) for v in members)
        lut3.extend([int(members[-1])] * (size - len(members)))
        i += len(members)
    # raw residual class covers everything, including values already in LUT3 (cheaper symbols win)
    classes.append([RANGE, word_bits, 0])
    freqs.append(int(hist[order[i:]].sum()) if i < len(order) else 0)
    lens = _assign_lengths(freqs, L)
    return TableSet(word_bits, [ClassSpec(lens[j], kind, k, param) for j, (kind, k, param) in enumerate(classes)],
                    np.array(lut3, np.uint16)).validate()


# ------------------------------------------------------------------------------------------------ statistics


@dataclass
class Stats:
    """What the payload size of a tensor (or a group of tensors) depends on."""

    word_bits: int
    hist: np.ndarray        # count of every W-bit value
    runs: np.ndarray        # runs[r] = number of maximal zero runs of length r (cut at stripe ends)
    n_stripes: int
    stripe_len: int

    @classmethod
    def of(cls, words: np.ndarray, word_bits: int, stripe_len: int) -> "Stats":
        flat = np.ascontiguousarray(words).reshape(-1)
        if flat.dtype not in (np.uint8, np.uint16):     # 8-bit words are counted as they are (no 2x copy)
            flat = flat.astype(np.uint16)
        runs = np.zeros(min(stripe_len, max(flat.size, 1)) + 1, np.int64)
        k = _k()
        if hasattr(k, "stats") and flat.dtype.itemsize * 8 == word_bits:     # the C kernel
            hist = np.zeros(1 << word_bits, np.int64)
            k.stats(flat, stripe_len, hist, None)
            if hist[0]:
                k.stats(flat, stripe_len, None, runs)
            return cls(word_bits, hist, runs, -(-flat.size // stripe_len), stripe_len)
        hist = histogram(flat, word_bits)
        if hist[0]:
            k._run_histogram(flat, stripe_len, runs)
        return cls(word_bits, hist, runs, -(-flat.size // stripe_len), stripe_len)

    @property
    def n_words(self) -> int:
        n = self.__dict__.get("_n_words")          # cached, as present() (statistics are not changed)
        if n is None:
            n = self._n_words = int(self.hist.sum())
        return n

    def present(self):
        """``(values, counts)`` of the values that occur (cached)."""
        if getattr(self, "_present", None) is None:
            vals = np.flatnonzero(self.hist)
            self._present = (vals, self.hist[vals].astype(np.int64))
        return self._present

    def __add__(self, other: "Stats") -> "Stats":
        if other.word_bits != self.word_bits or other.stripe_len != self.stripe_len:
            raise ValueError("statistics of different word widths or stripe lengths")
        n = max(len(self.runs), len(other.runs))
        runs = np.zeros(n, np.int64)
        runs[:len(self.runs)] += self.runs
        runs[:len(other.runs)] += other.runs
        return Stats(self.word_bits, self.hist + other.hist, runs, self.n_stripes + other.n_stripes,
                     self.stripe_len)


def _stats_args(st: Stats):
    """The C kernel's arguments for the statistics ``st`` (``fastenc.stats_args``), made once per ``st``."""
    a = st.__dict__.get("_cargs")
    if a is None:
        vals, counts = st.present()
        with0 = st.__dict__.get("_with0")
        if with0 is None:
            with0 = st._with0 = vals if len(vals) and vals[0] == 0 else np.r_[np.zeros(1, np.int64), vals]
        a = st._cargs = _k().stats_args(with0, len(with0) - len(vals), counts, st.runs, int(st.hist[0]),
                                        st.n_stripes)
    return a


def table_bits(ts: TableSet) -> int:
    """Metadata bits of a table set (a LUT3 entry is stored in ``W`` bits)."""
    return TABLE_HEAD_BITS + CLASS_BITS * len(ts.classes) + min(LUT3_BITS, ts.word_bits) * len(ts.lut3)






class TableCost:
    """Per-value symbol lengths and per-run-length zero-run costs of a table set: prices any statistics fast.

    With ``at`` (statistics), only the lengths of the values present in ``at`` are computed (the C kernel
    ``lengths_at``; much less than the ``2^W`` table of :attr:`length`, which is then computed on first use) and
    :meth:`bits` of ``at`` uses them; the result is the same.
    """

    def __init__(self, ts: TableSet, max_run: int = 1, at: Stats | None = None):
        self._kinds = kinds = np.array([cl.kind for cl in ts.classes], np.int64)
        self.ks = np.array([cl.k for cl in ts.classes], np.int64)
        self._params = np.array([cl.param for cl in ts.classes], np.int64)
        self.totals = np.array([cl.total for cl in ts.classes], np.int64)
        self._lut3 = ts.lut3.astype(np.int64)
        self._size = 1 << ts.word_bits
        self._length = None
        self._at = None
        kern = _k()
        self.zmask = kinds == ZRUN
        self.zcost = None
        self._max_run = max_run
        self._cls = self._len0 = None
        if hasattr(kern, "exact_bits") and len(ts.classes) <= MAX_CLASSES:       # bits() in one C call
            self._cls = np.stack([kinds, self.ks, self._params, self.totals], 1)
            self._lut3u = np.ascontiguousarray(ts.lut3, np.uint16)
            self._kern = kern
        if at is not None and hasattr(kern, "lengths_at"):
            vals = at.present()[0]
            with0 = vals if len(vals) and vals[0] == 0 else np.r_[np.zeros(1, np.int64), vals]
            lv = kern.lengths_at(with0, kinds, self.ks, self._params, self.totals, self._lut3)
            self._at, self._lv, self._len0 = at, lv[len(with0) - len(vals):], int(lv[0])
        elif self._cls is None:
            self._len0 = int(self.length[0])
        if self._len0 is not None and self.zmask.any():
            self._run_costs(max_run)

    @property
    def length(self) -> np.ndarray:
        """Cheapest single-word symbol length of every ``W``-bit value (0 = not covered)."""
        if self._length is None:
            self._length = _k()._lengths(self._size, self._kinds, self.ks, self._params, self.totals, self._lut3)
        return self._length

    def _run_costs(self, max_run):
        self.zcost = _k()._zrun_costs(max(int(max_run), 1), self._len0, self.ks[self.zmask],
                                      self.totals[self.zmask])

    def bits(self, st: Stats) -> float:
        """Payload bits of ``st`` (stripe headers and padding estimated at 48 bits a stripe); inf if a present
        value is not covered."""
        if self._cls is not None:
            return self._kern.exact_bits(self._cls, self._lut3u, _stats_args(st))
        return self._bits_numpy(st)

    def _bits_numpy(self, st: Stats) -> float:
        """:meth:`bits` from the length table (numpy; the path without the C kernels, and their reference)."""
        if self._len0 is None:
            self._len0 = int(self.length[0])
        if self.zmask.any() and self.zcost is None:
            self._run_costs(self._max_run)
        hist = st.hist
        vals, counts = st.present()
        lv = self._lv if st is self._at else self.length[vals]
        bad = lv == 0
        if self.zcost is not None and len(vals) and vals[0] == 0:
            bad[0] = False                  # zeros go through the zero-run plan
        if bad.any():
            return math.inf
        bits = int(np.dot(counts, lv))
        if self.zcost is not None and hist[0]:
            runs = st.runs
            if len(runs) > len(self.zcost):
                self._run_costs(len(runs) - 1)
            c = self.zcost[:len(runs)]
            if np.any((runs > 0) & (c >= (1 << 60))):
                return math.inf
            bits += int(np.dot(runs, c)) - int(hist[0]) * self._len0
        return float(bits + 48 * st.n_stripes)


def exact_bits(ts: TableSet, st: Stats) -> float:
    """Payload bits of coding ``st`` with ``ts`` (stripe headers and padding estimated at 48 bits a stripe);
    ``inf`` when a present value is not covered.

    With the C kernels one call (``fastenc.exact_bits``: the lengths at the present values, the zero-run costs
    and the sums; the statistics' arrays taken once per ``st``), else :meth:`TableCost.bits` from numpy; the
    same integer sums."""
    kern = _k()
    if hasattr(kern, "exact_bits") and len(ts.classes) <= MAX_CLASSES:        # one C call
        cls = np.array([(cl.kind, cl.k, cl.param, cl.total) for cl in ts.classes], np.int64)
        return kern.exact_bits(cls, np.ascontiguousarray(ts.lut3, np.uint16), _stats_args(st))
    return TableCost(ts, len(st.runs) - 1, at=st)._bits_numpy(st)


def total_bits(ts: TableSet, st: Stats) -> float:
    return exact_bits(ts, st) + table_bits(ts)


# ------------------------------------------------------------------------------------------------ DPs




def _trie_tree(hist, W, min_gain=CLASS_BITS / 2, vals=None):
    """The binary trie of the W-bit values present in ``hist``, expanded only where splitting a node could
    pay: a node of ``F`` symbols whose values have entropy ``H`` within it can gain at most ``F (k - H)`` bits
    by any refinement, so it stays a leaf when that is below ``min_gain``. ``vals``: the present values
    (sorted), when the caller has them."""
    vals = np.nonzero(hist)[0].astype(np.int64) if vals is None else np.asarray(vals, np.int64)
    h = hist[vals].astype(np.float64)
    C = np.r_[0.0, np.cumsum(h)]
    D = np.r_[0.0, np.cumsum(h * np.log2(h))]
    kern = _k()
    if hasattr(kern, "trie_tree"):             # the C kernel (the same nodes in the same order)
        return kern.trie_tree(vals, C, D, W, min_gain)
    keys, lo, hi, ks = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)], [np.full(1, len(vals), np.int64)], [W]
    Fs, lefts, rights = [], [], []
    base = 0
    cur_keys, cur_lo, cur_hi = keys[0], lo[0], hi[0]
    k = W
    levels = []
    while True:
        F = C[cur_hi] - C[cur_lo]
        S1 = D[cur_hi] - D[cur_lo]
        gain = F * k - (F * np.log2(F) - S1)
        expand = (gain >= min_gain) if k > 0 else np.zeros(len(F), bool)
        n = len(F)
        levels.append((cur_keys, F, k))
        ek, el, eh = cur_keys[expand], cur_lo[expand], cur_hi[expand]
        if k > 0:
            mid = np.searchsorted(vals, ((2 * ek + 1) << (k - 1)))
            mid = np.clip(mid, el, eh)
        else:
            mid = el
        left = np.full(n, -1, np.int64)
        right = np.full(n, -1, np.int64)
        has_l = mid > el
        has_r = eh > mid
        nxt = base + n
        nl = np.cumsum(has_l.astype(np.int64) + has_r.astype(np.int64))
        first = nxt + np.r_[0, nl[:-1]] if len(nl) else np.zeros(0, np.int64)
        idx = np.nonzero(expand)[0]
        left[idx] = np.where(has_l, first, -1)
        right[idx] = np.where(has_r, first + has_l, -1)
        lefts.append(left)
        rights.append(right)
        Fs.append(F)
        # children in order (left, right) per parent
        ck = np.stack([2 * ek, 2 * ek + 1], 1).reshape(-1)
        clo = np.stack([el, mid], 1).reshape(-1)
        chi = np.stack([mid, eh], 1).reshape(-1)
        keep = chi > clo
        base = nxt
        cur_keys, cur_lo, cur_hi = ck[keep], clo[keep], chi[keep]
        k -= 1
        if len(cur_keys) == 0:
            break
    node_keys = np.concatenate([lv[0] for lv in levels])
    node_k = np.concatenate([np.full(len(lv[0]), lv[2], np.float64) for lv in levels])
    return (node_keys, node_k, np.concatenate(Fs), np.concatenate(lefts), np.concatenate(rights))


#: the trie half of :func:`design_tableset` (effort 0 and 1) in one C call where the kernels have it (False: the
#: Python path, the reference)
TRIE_PART_C = True
#: (tests) a list that receives the total bits of every design :func:`design_tableset` considers, in turn
_TRACE = None

#: trees of fewer nodes are solved in full, not from a base (the mapping and the calls cost more than such a DP)
REF_MIN_NODES = 2048


def _trie_dp(hist, W, N, M, c_res, tree=None, prev=None, nonempty=None, slot=None, base=None, as_base=False):
    """Cover every value with ``hist > 0`` by aligned dyadic RANGE intervals (or the residual).

    Returns a function ``solve(m, residual)`` -> ``(cost, [(base, k, F)...], F_residual)``, with
    ``solve.cost(m, residual)`` (the cost alone), ``solve.ranges(m, residual)`` (the classes alone) and
    ``solve.keep``. ``prev``: the ``keep`` of a solve of the same ``tree``, ``N`` and ``M`` (another ``c_res``):
    its no-residual tables do not depend on ``c_res`` and are reused (C kernels). ``nonempty``: whether
    ``hist`` has a value, when the caller knows. ``slot``: the tables go into the thread's work arrays of that
    slot (C kernels, ``fastenc.dp_tables``; the solve checks on every use that no later DP of the slot has taken
    them; with ``prev``, ``prev``'s slot must be another one and stay untouched too). ``base``: the ``base`` of a
    full solve (C kernels, in work arrays) of another tree with the same ``W``, ``N``, ``c_res`` and a budget of at
    least ``M``: the nodes whose subtree is one of that tree (``fastenc.trie_same``) are read from its tables, not
    computed (the same values and choices; such a solve has no ``keep`` and no ``base``; trees of at least
    :data:`REF_MIN_NODES` nodes). ``as_base``: keep what a base needs; ``solve.base``: this solve's tree, tables
    and work-array generations when it can serve as a base, else None.
    """
    if not (hist.any() if nonempty is None else nonempty):
        def empty(m, residual):
            return 0.0, [], 0
        empty.cost = lambda m, residual: 0.0
        empty.ranges = lambda m, residual: ([], 0)
        return empty
    keys, K, F, left, right = tree if tree is not None else _trie_tree(hist, W)
    n = len(F)
    kern = _k()
    use_prev = prev is not None and hasattr(kern, "trie_walker")
    own = ()                                    # (slot, generation) of the work arrays these tables are in
    if slot is not None and hasattr(kern, "dp_tables"):
        g, nores, res, chn, chr_ = kern.dp_tables(slot, n, M, not use_prev)
        own = ((slot, g),) if g is not None else ()
    else:
        nores, chn = np.empty((n, M + 1)), np.empty((n, M + 1), np.int64)
        res, chr_ = np.empty((n, M + 1)), np.empty((n, M + 1), np.int64)
    refs = has_sat = None
    if base is not None and n < REF_MIN_NODES:
        base = None
    if own and (as_base or base is not None) and hasattr(kern, "trie_solve_ref"):
        has_sat = kern._scratch(f"dp{slot}s", n, np.int64)
        if base is not None and not use_prev and all(kern.dp_gen(sl) == g for sl, g in base[2]):
            (bF, bl, br), (bn, brs, bcn, bcr, bsat), _bg = base
            if bn.shape[1] - 1 >= M:
                same = kern.trie_same(F, left, right, bF, bl, br)
                if same[0] < 0 and (same >= 0).any():
                    refs = (same, bcn, bcr)
                    kern.trie_solve_ref(F, K, left, right, float(N), float(W), float(c_res), M, nores, res, chn,
                                        chr_, has_sat, same, (bn, brs, bsat))
    sat_kw = {} if has_sat is None else {"sat": has_sat}
    if refs is not None:
        n_gens = own
    elif use_prev:
        nores, chn = prev[:2]
        n_gens = tuple(prev[2:])
        kern._trie_solve(F, K, left, right, float(N), float(W), float(c_res), M, nores, res, chn, chr_, True,
                         **sat_kw)
    else:
        n_gens = own
        kern._trie_solve(F, K, left, right, float(N), float(W), float(c_res), M, nores, res, chn, chr_, **sat_kw)
    gens = own + (n_gens if use_prev else ()) + (base[2] if refs is not None else ())

    def check():
        for sl, g in gens:
            if kern.dp_gen(sl) != g:
                raise RuntimeError("trie DP tables used after their work arrays were taken by another DP")
    walk = None
    if refs is not None:
        walk = kern.trie_walker(chn, chr_, keys, K, F, left, right, refs[0], refs[1:])
    elif hasattr(kern, "trie_walker"):
        walk = kern.trie_walker(chn, chr_, keys, K, F, left, right)

    def solve(m, residual):
        check()
        cost = float((res if residual else nores)[0, m])
        if cost >= INF:
            return INF, [], 0
        return cost, *ranges_of(m, residual)

    def ranges_of(m, residual):
        """The classes of the solution ``solve(m, residual)`` (its cost known below INF)."""
        check()
        chs = chr_ if residual else chn
        if walk is not None:                    # the C kernel: the same ranges in the same order
            return walk(residual, m)
        ranges, fres = [], 0.0
        stack = [(0, m)]
        while stack:
            i, mm = stack.pop()
            c = int(chs[i, mm])
            if c == -1:
                k = int(K[i])
                ranges.append((int(keys[i]) << k, k, float(F[i])))
            elif c == -2:
                fres += float(F[i])
            elif c >= 0:
                if left[i] >= 0:
                    stack.append((int(left[i]), c))
                if right[i] >= 0:
                    stack.append((int(right[i]), mm - c))
        return ranges, fres
    def cost_of(m, residual):
        check()
        return float((res if residual else nores)[0, m])
    solve.cost = cost_of

    def root():
        check()
        return nores[0], res[0]
    solve.root = root
    solve.ranges = ranges_of
    solve.keep = None if refs is not None else (nores, chn) + n_gens
    solve.base = ((F, left, right), (nores, res, chn, chr_, has_sat), gens) \
        if as_base and refs is None and has_sat is not None else None
    return solve


# ------------------------------------------------------------------------------------------------ design


def _zrun_symbols(runs, ks):
    """Number of symbols of each ZRUN class (largest chunks first) to code the runs: ``{k: count}``."""
    ks = sorted(ks, reverse=True)
    cnt = _k()._zrun_symbols_kernel(np.asarray(runs, np.int64), np.array(ks, np.int64))
    return {k: int(c) for k, c in zip(ks, cnt)}


def _st_zrun_symbols(st: Stats, ks):
    """:func:`_zrun_symbols` of ``st.runs``, remembered on ``st`` (the zero-run candidates and designs ask
    for the same sets again; a dict copy, as callers may keep it)."""
    memo = st.__dict__.setdefault("_zsym", {})
    key = tuple(sorted(ks))
    if key not in memo:
        memo[key] = _zrun_symbols(st.runs, ks)
    return dict(memo[key])


def _st_zrun_symbols_many(st: Stats, sets):
    """Fill :func:`_st_zrun_symbols`' memo on ``st`` for every (non-empty) set of ``sets`` in one C call (the same
    dicts)."""
    kern = _k()
    memo = st.__dict__.setdefault("_zsym", {})
    keys = list(dict.fromkeys(tuple(sorted(ks)) for ks in sets if ks))
    keys = [k for k in keys if k not in memo]
    if keys and hasattr(kern, "zrun_symbols_sets"):
        memo.update(zip(keys, kern.zrun_symbols_sets(st.runs, keys)))


def _zrun_candidates(st: Stats, n_nonzero: int, per_size: int = 2):
    """Candidate sets of ZRUN index lengths: () (zeros as ordinary values), and the best ``per_size`` sets of
    one, two and three ZRUN classes by an estimate (ideal code lengths of the class choice, index bits)."""
    return list(_zrun_candidates_iter(st, n_nonzero, per_size))


def _zrun_candidates_iter(st: Stats, n_nonzero: int, per_size: int = 2, lazy: bool = True):
    """:func:`_zrun_candidates`' sets one at a time, in its order, each estimated when it is reached (a caller
    that needs the first few stops early: the later sizes and the second estimate are not computed). ``lazy``
    False: the caller takes them all (with the C kernels: one call, not the first set alone first)."""
    cands = [()]
    yield ()
    h0 = int(st.hist[0])
    if h0 == 0 or h0 < 0.01 * st.n_words:
        return
    maxk = min(MAX_ZRUN_K, max(0, int(np.nonzero(st.runs)[0][-1]).bit_length()))
    kern = _k()
    if hasattr(kern, "zrun_candidates"):     # the sets below in C (the same order): the first, then the rest
        first = kern.zrun_candidates(st.runs, maxk, n_nonzero, per_size, 1 if lazy else -1)
        if not lazy:
            yield from first
            return
        yield from first
        if first:
            yield from kern.zrun_candidates(st.runs, maxk, n_nonzero, per_size)[1:]
        return

    def approx(ks, floor):
        cnt = _st_zrun_symbols(st, ks)
        N = n_nonzero + sum(cnt.values())
        nz = n_nonzero * math.log2(N / n_nonzero) if n_nonzero else 0.0
        return nz + sum(c * (k + max(floor, math.log2(N / c))) + CLASS_BITS for k, c in cnt.items() if c)

    # two estimates: ideal code lengths, and code lengths of at least 1 bit (which makes single-zero symbols
    # dear); neither is right everywhere, the exact costing of the candidates decides
    for floor in (0.0, 1.0):
        if hasattr(kern, "zrun_approx"):        # every single and pair in one C call (the same floats)
            one, two = kern.zrun_approx(st.runs, maxk, n_nonzero, floor)
            one, two = one.tolist(), two.tolist()          # (Python floats: the same values, no numpy scalars)
            singles = sorted((one[k], (k,)) for k in range(maxk + 1))
            pairs = sorted((two[a][b], (a, b)) for a, b in itertools.combinations(range(maxk + 1), 2))
        else:
            singles = sorted((approx((k,), floor), (k,)) for k in range(maxk + 1))
            pairs = sorted((approx(ks, floor), ks) for ks in itertools.combinations(range(maxk + 1), 2))
        for scored in (singles, pairs, None):
            if scored is None:
                # triples: the best pairs with one more run length
                triples = {tuple(sorted(set(ks) | {k})) for _, ks in pairs[:3] for k in range(maxk + 1)
                           if k not in ks}
                if hasattr(kern, "zrun_approx_sets"):   # in one C call (the same floats)
                    triples = list(triples)
                    scored = sorted(zip(kern.zrun_approx_sets(st.runs, triples, n_nonzero, floor), triples))
                else:
                    scored = sorted((approx(ks, floor), ks) for ks in triples)
            for ks in [ks for _, ks in scored[:per_size] if ks not in cands]:
                cands.append(ks)
                yield ks




def _code_lengths(freqs, L):
    """:func:`limited_code_lengths` of the (positive) class frequencies, compiled for the common case."""
    if 2 <= len(freqs) <= (1 << L):
        return [int(x) for x in _k()._package_merge(np.asarray(freqs, np.float64), L)]
    return limited_code_lengths(freqs, L)


class _Built:
    """A designed table set before its :class:`TableSet` is made: the class tuples ``(kind, k, param)``, their
    code lengths and LUT3. Enough to cost it exactly (:meth:`bits`, one C call); :meth:`tableset` makes the
    TableSet (once: the design search makes and discards thousands, and keeps a few)."""

    __slots__ = ("W", "classes", "lens", "lut3", "_ts", "_bits")

    def __init__(self, W, classes, lens, lut3, bits=None):
        self.W, self.classes, self.lens, self.lut3, self._ts = W, classes, lens, lut3, None
        self._bits = bits                       # (statistics, bits) when costed as it was designed

    @property
    def word_bits(self) -> int:
        return self.W

    def tableset(self) -> TableSet:
        if self._ts is None:
            self._ts = TableSet(self.W, [ClassSpec(self.lens[j], kind, k, p)
                                         for j, (kind, k, p) in enumerate(self.classes)], self.lut3)
        return self._ts

    def bits(self, st: Stats) -> float:
        """``total_bits(self.tableset(), st)``: the same sums, without making the TableSet (C kernels)."""
        if self._bits is not None and self._bits[0] is st:
            return self._bits[1]
        kern = _k()
        n = len(self.classes)
        if hasattr(kern, "exact_bits") and n <= MAX_CLASSES:
            cls = np.empty((n, 4), np.int64)
            cls[:, :3] = self.classes
            cls[:, 3] = cls[:, 1]
            cls[:, 3] += self.lens
            lut3 = self.lut3
            return kern.exact_bits(cls, lut3, _stats_args(st)) + (
                TABLE_HEAD_BITS + CLASS_BITS * n + min(LUT3_BITS, self.W) * len(lut3))
        return total_bits(self.tableset(), st)


def _tableset(ts) -> TableSet:
    """The TableSet of a design search's result (a :class:`_Built` or a TableSet)."""
    return ts.tableset() if isinstance(ts, _Built) else ts


def _design(W, L, lut_groups, ranges, fres, zruns, st: Stats | None = None) -> _Built:
    """A design's classes and their code lengths by package-merge over the class frequencies (the TableSet of
    :func:`_build`, not yet made). With ``st`` and the C kernels, the code lengths and the bits of ``st``
    (:meth:`_Built.bits`) come from one call (``fastenc.design_bits``: the same lengths and sums)."""
    classes, freqs, lut3, n3 = [], [], [], 0
    for k, F, members in lut_groups:
        classes.append((LUT, k, n3))
        freqs.append(F)
        lut3.append(np.asarray(members, np.int64).reshape(-1))
        n3 += len(lut3[-1])
    _add_range_classes(W, ranges, fres, zruns, classes, freqs)
    if not lut3:
        lut3 = np.zeros(0, np.uint16)
    else:
        lut3 = np.concatenate(lut3).astype(np.uint16) if len(lut3) > 1 else lut3[0].astype(np.uint16)
    if st is not None:
        kern = _k()
        if hasattr(kern, "design_bits"):
            got = kern.design_bits(classes, freqs, L, lut3, _stats_args(st))
            if got is not None:
                lens, bits = got
                n = len(classes)
                return _Built(W, classes, lens, lut3, (st, bits + (
                    TABLE_HEAD_BITS + CLASS_BITS * n + min(LUT3_BITS, W) * len(lut3))))
    lens = _code_lengths([max(int(round(f)), 1) for f in freqs], L)
    return _Built(W, classes, lens, lut3)


def _add_range_classes(W, ranges, fres, zruns, classes, freqs):
    """Append a design's RANGE classes (``ranges``, then the residual class of ``fres``) and ZRUN classes to
    ``classes`` / ``freqs``; a design left without any class gets the residual class (frequency 1)."""
    classes += [(RANGE, k, base) for base, k, _F in ranges]
    freqs += [F for _b, _k, F in ranges]
    if fres > 0:
        classes.append((RANGE, W, 0))
        freqs.append(fres)
    for k, F in zruns:
        classes.append((ZRUN, k, 0))
        freqs.append(F)
    if not classes:
        classes.append((RANGE, W, 0))
        freqs.append(1)


def _design_batch(W, L, specs, st: Stats):
    """:func:`_design` (without LUT classes) and :meth:`_Built.bits` of each ``(ranges, fres, zruns)`` of
    ``specs`` in one C call (``fastenc.design_bits_batch``): a list of ``(classes, lens, total bits)``, None
    for a design the Python path must make (or for all, without the C kernels)."""
    kern = _k()
    if not specs or not hasattr(kern, "design_bits_batch"):
        return [None] * len(specs)
    all_cls, all_fr, off = [], [], [0]
    for ranges, fres, zruns in specs:
        cls, fr = [], []
        _add_range_classes(W, ranges, fres, zruns, cls, fr)
        all_cls.append(cls)
        all_fr += fr
        off.append(len(all_fr))
    lens, bits = kern.design_bits_batch(off, all_cls, all_fr, L, _stats_args(st))
    out = []
    for d, cls in enumerate(all_cls):
        b = bits[d]
        if b is None:
            out.append(None)
            continue
        n = len(cls)
        out.append((cls, lens[off[d]:off[d + 1]], b + (TABLE_HEAD_BITS + CLASS_BITS * n)))
    return out


def _build(W, L, lut_groups, ranges, fres, zruns):
    """Assemble a TableSet from a design; code lengths by package-merge over the class frequencies."""
    return _design(W, L, lut_groups, ranges, fres, zruns).tableset()


def _order_by_count(counts: np.ndarray) -> np.ndarray:
    """``numpy.argsort(-counts, kind="stable")`` of non-negative counts (the same permutation): the stable sort of
    ``max - counts`` as 16-bit keys, in one or two passes (numpy sorts 16-bit keys stably by radix, several
    times faster than int64 keys), the int64 sort above 2^32."""
    counts = np.asarray(counts, np.int64)
    if len(counts) == 0:
        return np.zeros(0, np.intp)
    top = int(counts.max())
    key = top - counts
    if top < 1 << 16:
        return np.argsort(key.astype(np.uint16), kind="stable")
    if top < 1 << 32:                       # low 16 bits, then high 16 bits: a stable sort by the whole key
        p1 = np.argsort((key & 0xFFFF).astype(np.uint16), kind="stable")
        p2 = np.argsort((key >> 16).astype(np.uint16)[p1], kind="stable")
        return p1[p2]
    return np.argsort(-counts, kind="stable")


def _split_cands(lut_row, Mv, row_n, row_r):
    """The splits of the class budget ``Mv`` between the LUT part (``m1`` classes at ``lut_row[m1]``) and the trie
    DP (root rows ``row_n`` without and ``row_r`` with the residual class, which takes one class of the budget):
    ``[(cost, m1, m, residual)]`` by falling cost, ties in the order of ``m1`` and then without the residual first
    (a stable sort), finite costs only. On Python floats (the same sums as numpy's): a few microseconds where
    numpy's calls on 17-entry arrays took ten times that."""
    lr = lut_row[:Mv + 1].tolist() if hasattr(lut_row, "tolist") else list(lut_row[:Mv + 1])
    rn = row_n[:Mv + 1].tolist()
    rr = row_r[:Mv + 1].tolist()
    cands = []
    for m1 in range(Mv + 1):
        a = lr[m1]
        if a >= INF:
            continue
        m2 = Mv - m1
        c = rn[m2]
        if c < INF:
            cands.append((a + c, m1, m2, False))
        if m2 >= 1:
            c = rr[m2 - 1]
            if c < INF:
                cands.append((a + c, m1, m2 - 1, True))
    cands.sort(key=lambda x: x[0])
    return cands


class _ZDesign:
    """Everything about one choice of ZRUN classes that the value designs need."""

    def __init__(self, st: Stats, zks, lut3_max, M, shared: dict | None = None):
        self.zks = zks
        key = bool(zks)
        if shared is not None and key in shared:      # one histogram for every ZRUN set (read-only)
            hist, hsum, vals = shared[key]
        else:
            hist = st.hist.copy()
            vals = st.present()[0]                  # the values present in hist (sorted)
            hsum = st.n_words
            if zks:
                hist[0] = 0
                hsum -= int(st.hist[0])
                if len(vals) and vals[0] == 0:
                    vals = vals[1:]
            if shared is not None:
                shared[key] = (hist, hsum, vals)
        nnz = len(vals)
        self.zruns = []
        if zks:
            cnt = _st_zrun_symbols(st, zks)
            self.zruns = [(k, cnt[k]) for k in zks]
        self.hist = hist
        self.N = N = float(hsum + sum(F for _, F in self.zruns))
        self.zcost = sum(F * (k + math.log2(N / F)) if F else 0.0 for k, F in self.zruns) + CLASS_BITS * len(zks)
        self.Mv = M - len(zks)
        self.R = int(min(nnz, lut3_max))
        self.lut3_max = lut3_max
        self._lut = None
        self._vals = vals
        self._hh = None
        self._hord = None       # hist[order] (int64), for fastenc.design_lut
        self.hsum = hsum
        self._base = None       # the base (encoder._trie_dp) of the trie DPs of t > 0: round 1 of t = 0
        self._base2 = {}        # c_res -> round 2 of t = 0

    def _lut_part(self):
        """Values by falling frequency, the LUT DP over them and the entropy tails (computed on first use)."""
        if self._lut is None:
            hist, N = self.hist, self.N
            # the present values by falling count, ties by value: the stable argsort of -hist without its
            # zero-count tail (which nothing reads)
            self._pos = _order_by_count(hist[self._vals])
            order = self._vals[self._pos]
            self.order = order[:self.R]
            if self.R:
                self.lut_best, self.lut_choice = _k()._lut_dp(hist[self.order].astype(np.float64), N, self.Mv,
                                                         MAX_LUT_K)
            hs = hist[order]
            hs = hs[hs > 0].astype(np.float64)
            self.tail = np.r_[np.cumsum((hs * np.log2(N / hs))[::-1])[::-1], 0.0]
            self._lut = True

    def lower_bound(self, t):
        """Estimated floor of any design with the top ``t`` values in LUT3: the LUT part plus the ideal
        (entropy) bits of the other values and of the zero runs. Used to order and prune LUT sizes."""
        self._lut_part()
        lut_lb = float(self.lut_best[t].min()) if t else 0.0
        return lut_lb + self.tail[t] + TABLE_HEAD_BITS + self.zcost

    def t_candidates(self, effort):
        if not self.R or effort <= 0:
            return [0]
        ts = {1 << a for a in range(13) if (1 << a) <= self.R} | {self.R}
        if effort > 1:
            ts |= set(range(0, self.R + 1, max(1, self.R // 32)))
        return sorted(ts - {0})

    def _designs_c(self, kern, t, W, L, st):
        """:meth:`designs` of ``t > 0`` by ``fastenc.design_lut`` (its bases: t = 0's DPs whose work arrays are
        still theirs): ``[(classes, lens, lut3, payload bits)]``, or None where the Python path decides."""
        vals = self._vals
        if self._hh is None:
            h = self.hist[vals].astype(np.float64)
            self._hh = (h, h * np.log2(h))
        if self._hord is None:
            self._hord = np.ascontiguousarray(self.hist[self.order], np.int64)
            self._pos64 = np.ascontiguousarray(self._pos, np.int64)
            self._order64 = np.ascontiguousarray(self.order, np.int64)

        def valid(b):
            return b is not None and all(kern.dp_gen(sl) == g for sl, g in b[2])
        b1 = self._base if valid(self._base) else None
        b2 = {c: b for c, b in self._base2.items() if valid(b)}
        return kern.design_lut(vals, *self._hh, self._pos64, t, W, CLASS_BITS / 2, self.N, self.Mv, CLASS_BITS, L,
                               self.lut_best[t], self.lut_choice, self._order64, self._hord, self.zruns,
                               REF_MIN_NODES, b1, b2, _stats_args(st))

    def designs(self, t, W, L, st, screen=None):
        """Exact-costed table sets with the top ``t`` values in LUT classes: yields ``(tableset, bits)``.

        ``screen``: ``(tree, M, solve)`` of a trie DP of this design's values, ``N`` and ``c_res`` 12 with a class
        budget ``M >= Mv`` (design_tableset's screening), used for ``t = 0``: its tables at ``m <= Mv`` are those
        of a DP with budget ``Mv`` (a column depends on the columns up to it only; the saturated scans choose
        alike), so its first round is not computed again."""
        hist, Mv = self.hist, self.Mv
        if self.hsum == 0:
            ts = _design(W, L, [], [], 0, self.zruns, st)
            yield ts, ts.bits(st)
            return
        vals = self._vals
        if t:
            self._lut_part()
        n_rest = len(vals) - t                  # the top t values are present ones
        kern = _k()
        if t and hasattr(kern, "design_lut"):   # the C kernel: every round below in one call (the same designs)
            got = self._designs_c(kern, t, W, L, st)
            if got is not None:
                for classes, lens, lut3, bits in got:
                    ts = _Built(W, classes, lens, lut3, (st, bits + (
                        TABLE_HEAD_BITS + CLASS_BITS * len(classes) + min(LUT3_BITS, W) * len(lut3))))
                    yield ts, ts.bits(st)
                return
        Mdp, solve0 = Mv, None
        if t == 0 and screen is not None and n_rest:
            tree, Mdp, solve0 = screen
            rest = None if hasattr(kern, "trie_tree_sub") else hist
        elif hasattr(kern, "trie_tree_sub"):    # the C kernel: the tree of the values left, without a histogram
            rest = None
            if n_rest:
                if self._hh is None:
                    h = hist[vals].astype(np.float64)
                    self._hh = (h, h * np.log2(h))
                keep = None
                if t:
                    keep = np.ones(len(vals), np.uint8)
                    keep[self._pos[:t]] = 0
                tree = kern.trie_tree_sub(vals, *self._hh, keep, W, CLASS_BITS / 2)
            else:
                tree = None
        else:
            rest = hist.copy()
            if t:
                rest[self.order[:t]] = 0
                vals = vals[rest[vals] > 0]
            tree = _trie_tree(rest, W, vals=vals) if len(vals) else None
        lut_row = self.lut_best[t] if t else np.r_[0.0, np.full(Mv, INF)]
        c_res = 12.0
        solve = None
        for _it in range(2):
            if _it == 0 and solve0 is not None:
                solve = solve0
            else:
                # the rounds of t = 0 are full DPs in slots of their own (2 and 4 for the set without ZRUN classes,
                # 3 and 5 for the others; 3 is the screening's): the bases of the other sizes' rounds at the same
                # c_res (the same N; their trees share most subtrees with t = 0's)
                slot = (2 + 2 * _it + (1 if self.zks else 0)) if t == 0 else _it
                base = None
                if t:
                    base = self._base if _it == 0 else self._base2.get(c_res)
                solve = _trie_dp(rest, W, self.N, Mdp, c_res, tree, getattr(solve, "keep", None), n_rest > 0,
                                 slot=slot, base=base, as_base=t == 0)
            if t == 0 and getattr(solve, "base", None) is not None:
                if _it == 0:
                    self._base = solve.base
                else:
                    self._base2[c_res] = solve.base
            # every split of the class budget is costed from the DP tables; only the winners' classes are
            # walked (a stable sort: the same order, so the same winners, as walking every candidate)
            root = getattr(solve, "root", None)
            if root is not None:                # numpy: the same sums, the same stable order
                cands = _split_cands(lut_row, Mv, *root())
            else:
                cands = []
                for m1 in range(0, Mv + 1):
                    if lut_row[m1] >= INF:
                        continue
                    m2 = Mv - m1
                    for residual in (False, True):
                        mm = m2 - 1 if residual else m2
                        if mm < 0:
                            continue
                        c = solve.cost(mm, residual)
                        if c < INF:
                            cands.append((lut_row[m1] + c, m1, mm, residual))
                cands.sort(key=lambda x: x[0])
            if not cands:
                return
            new_c_res = None
            for _, m1, mm_, residual in cands[:2 if t == 0 else 1]:
                ranges, fres = solve.ranges(mm_, residual)
                groups = []
                i, mm = t, m1
                while i > 0:
                    k = int(self.lut_choice[i, mm])
                    members = self.order[i - (1 << k):i]
                    groups.append((k, float(hist[members].sum()), members))
                    i -= 1 << k
                    mm -= 1
                groups.reverse()
                ts = _design(W, L, groups, ranges, fres, self.zruns, st)
                yield ts, ts.bits(st)
                if fres > 0 and new_c_res is None:
                    new_c_res = float(ts.lens[len(groups) + len(ranges)])
            if new_c_res is None or abs(new_c_res - c_res) < 0.5:
                return
            c_res = new_c_res


# ------------------------------------------------------------------------------------------------ grouped design
#: alphabets up to this many distinct values (every int8 tensor) also get the grouped design
GROUPED_MAX_VALUES = 512
#: most zero-run classes the grouped design tries
GROUPED_MAX_ZRUNS = 5
#: the full trie search also runs for a small alphabet when the grouped set's metadata is above this share
GROUPED_META_SHARE = 0.005










class _Grouped:
    """The grouped design of one tensor's statistics (small alphabets).

    The present values (zero left out when ``zeros`` is False: zero runs go to ZRUN classes) by falling
    frequency are cut into LUT blocks of ``2^k`` values -- one class each, so a block's symbols share one code
    length -- by :func:`_group_dp`, with the Kraft inequality priced by a multiplier ``mu``. The value part
    does not depend on the ZRUN classes, so it is solved once on a grid of ``mu`` (:meth:`table`):

    * a set of ZRUN classes is scored by the Lagrangian dual (value part + ZRUN classes at their best code
      lengths - ``mu``, maximised over the grid: about the integer-code-length cost), its run symbol counts
      taken from the optimal parse at those code lengths (:meth:`estimate`, :meth:`zrun_sets`);
    * :meth:`designs` takes the value partitions of every grid point, gives each (with the ZRUN classes)
      its optimal code lengths by package-merge, and builds and costs exactly the best two.
    """

    STEP = 0.25

    def __init__(self, st: Stats, L: int, M: int, zeros: bool, lut3_max: int = MAX_LUT3):
        self.st, self.L, self.M, self.W, self.lut3_max = st, L, min(M, MAX_CLASSES, 1 << L), st.word_bits, lut3_max
        hist = st.hist.copy()
        if not zeros:
            hist[0] = 0
        self.zeros = zeros
        vals = np.flatnonzero(hist)
        self.R = R = len(vals)
        self.order = vals[np.argsort(-hist[vals], kind="stable")]      # = argsort(-hist, stable)[:R]
        self.freq = hist[self.order].astype(np.float64)
        self.kmax = min(MAX_LUT_K, self.W, max(0, (R - 1).bit_length()))
        self.lut3_bits = float(min(LUT3_BITS, self.W))
        last = int(np.nonzero(st.runs)[0][-1]) if st.runs.any() else 0
        self.runs = st.runs[:last + 1]
        self.maxk = min(MAX_ZRUN_K, max(0, last - 1).bit_length())
        self._table = None
        self._grid = None
        self._parts = {}

    @classmethod
    def lmus_of(cls, n_sym):
        """The grid (log2 of the multipliers) for ``n_sym`` symbols."""
        # with ideal code lengths the multiplier is N ln 2 (N symbols); integer lengths move it (on the real
        # models' int8 tensors the best lies between log2(N) - 2 and log2(N) + 1.75; a narrower grid measured up
        # to 0.03 % larger files)
        return math.log2(max(n_sym, 2.0)) + np.arange(-3.0, 2.0 + 1e-9, cls.STEP)

    @classmethod
    def grid_mus(cls, n_sym):
        """``(multipliers as table() makes them, as zrun_sets makes them)`` for ``n_sym`` symbols (the same
        expressions: fastenc.grouped_all takes them from here)."""
        lmus = cls.lmus_of(n_sym)
        return np.array([2.0 ** lmu for lmu in lmus]), 2.0 ** lmus

    def table(self):
        """``lmus`` (log2 of the multipliers) and ``best[g, m]``: value-part Lagrangian with at most ``m``
        classes; the DP's back pointers of every grid point are kept for :meth:`partitions`."""
        if self._table is None:
            n_sym = self.freq.sum() + (0.0 if self.zeros else float(self.runs.sum()))
            lmus = self.lmus_of(n_sym)
            tab = np.full((len(lmus), self.M + 1), INF)
            self._bt = []
            kern = _k()
            if hasattr(kern, "group_dp_grid"):          # every grid point in one C call (the same tables)
                mus = np.array([2.0 ** lmu for lmu in lmus])
                self._grid = kern.group_dp_grid(self.freq, self.M, self.kmax, mus, self.L, self.W,
                                                float(CLASS_BITS), self.lut3_bits)
                bestR = self._grid[0][:, self.R, :]
                tab[:, :] = np.minimum.accumulate(bestR, axis=1)
                self._table = (lmus, tab)
                return self._table
            for g, lmu in enumerate(lmus):
                best, ch, start = _k()._group_dp(self.freq, self.M, self.kmax, 2.0 ** lmu, self.L, self.W,
                                            float(CLASS_BITS), self.lut3_bits)
                tab[g, :] = np.minimum.accumulate(best[self.R, :])
                self._bt.append((best[self.R, :].copy(), ch, start))
            self._table = (lmus, tab)
        return self._table

    def partitions(self, Mv):
        """Distinct value partitions of the grid with at most ``Mv`` classes: ``[(blocks, residual F)]`` with
        ``blocks`` a list of ``(k, F, first rank)``."""
        if Mv not in self._parts:
            lmus, _tab = self.table()
            out, seen = [], set()
            pre = np.r_[0.0, np.cumsum(self.freq)]
            if getattr(self, "_grid", None) is not None:   # the walks in one C call (the same blocks)
                for part in _k().group_walk(*self._grid, pre, Mv, self.W + 1):
                    if part is None:
                        continue
                    key = (tuple(b[0] for b in part[0]), part[1])
                    if key not in seen:
                        seen.add(key)
                        out.append(part)
                self._parts[Mv] = out
                return out
            for g, lmu in enumerate(lmus):
                bestR, ch, start = self._bt[g]
                m = int(np.argmin(bestR[:Mv + 1]))
                if bestR[m] >= INF:
                    continue
                blocks, res_F = [], 0.0
                i = self.R
                while i > 0:
                    k = int(ch[i, m])
                    s0 = int(start[i, m])
                    F = float(pre[i] - pre[s0])
                    if k == self.W + 1:
                        res_F = F
                    else:
                        blocks.append((k, F, s0))
                    i = s0
                    m -= 1
                blocks.reverse()
                key = (tuple(b[0] for b in blocks), res_F)
                if key not in seen:
                    seen.add(key)
                    out.append((blocks, res_F))
            self._parts[Mv] = out
        return self._parts[Mv]

    def _flat_parts(self, Mv):
        """:meth:`partitions` as ``fastenc.grouped_parts`` flattens them (C kernels), made once per ``Mv``: from
        the grid's tables in one call where they are kept (``fastenc.group_parts``), else from the list."""
        flats = self.__dict__.setdefault("_gflat", {})
        got = flats.get(Mv)
        if got is None:
            self.table()
            kern = _k()
            if getattr(self, "_grid", None) is not None and hasattr(kern, "group_parts"):
                got = kern.group_parts(*self._grid, np.r_[0.0, np.cumsum(self.freq)], Mv, self.W + 1)
            else:
                got = kern.grouped_parts(self.partitions(Mv))
            flats[Mv] = got
        return got

    def estimate(self, zks, rounds: int = 2):
        """``(dual value, log2 mu at the optimum, run symbol counts)`` of the ZRUN set ``zks``."""
        lmus, tab = self.table()
        Mv = self.M - len(zks)
        if Mv < 0:
            return INF, float(lmus[0]), np.ones(len(zks))
        cols = self.__dict__.setdefault("_cols", {})     # the table's columns and the multipliers, made once
        col = cols.get(Mv)
        if col is None:
            col = cols[Mv] = (np.ascontiguousarray(tab[:, Mv]), 2.0 ** lmus, lmus.tolist())
        d, g, zF = _k()._zrun_estimate(self.runs, np.array(zks, np.int64), col[0], col[1], self.L, rounds,
                                       float(CLASS_BITS))
        return float(d), col[2][g], zF

    def zrun_sets(self, max_z: int = GROUPED_MAX_ZRUNS, beam: int = 5, keep: int = 3, exhaustive: int = 3):
        """The ``keep`` best sets of 1..``max_z`` ZRUN index lengths by :meth:`estimate` (two rounds of run
        re-parsing): every set of up to ``exhaustive`` classes, a beam search above, then a local search; the
        kept sets are re-estimated with three rounds."""
        if not self.runs.any() or self.M < 2:
            return []
        kern = _k()
        if hasattr(kern, "zrun_sets"):      # the whole search below in one C call (the same sets and floats)
            lmus, tab = self.table()
            mus = self.__dict__.get("_mus")
            if mus is None:
                mus = self._mus = 2.0 ** lmus
            got = kern.zrun_sets(self.runs, self.maxk, self.M, max_z, beam, keep, exhaustive, tab, mus, self.L,
                                 float(CLASS_BITS))
            if got is not None:
                lm = lmus.tolist()
                return [(ks, (d, lm[g], zF)) for ks, d, g, zF in got]
        memo = {}                       # set -> its estimate (rounds 2), in the order the search asks for them
        many = None
        if hasattr(kern, "zrun_estimate_sets"):
            lmus, tab = self.table()
            mus = self.__dict__.get("_mus")
            if mus is None:
                mus = self._mus = 2.0 ** lmus
            runs = self.runs

            def many(sets):             # the estimates of several sets in one C call (the same floats)
                return kern.zrun_estimate_sets(runs, sets, tab, mus, self.L, 2, float(CLASS_BITS))

        def fill(sets):
            """Estimate the sets of ``sets`` not yet estimated, in that order (as ``est`` one by one would)."""
            new = [ks for ks in sets if ks not in memo]
            if many is None:
                for ks in new:
                    memo[ks] = self.estimate(ks, 2)[0]
            else:
                memo.update(zip(new, many(new)))

        def est(ks):
            if ks not in memo:
                fill((ks,))
            return memo[ks]

        ks_all = range(self.maxk + 1)
        top = min(max_z, self.maxk + 1, self.M - 1)
        # every set of up to ``full`` classes (the estimate is far from monotone in the set), then the beam
        full = min(exhaustive, top)
        fill([ks for size in range(1, full + 1) for ks in itertools.combinations(ks_all, size)])
        frontier = sorted((v, ks) for ks, v in memo.items() if len(ks) == full)[:beam]
        for _size in range(full + 1, top + 1):
            cand = {tuple(sorted(ks + (k,))) for _, ks in frontier for k in ks_all if k not in ks}
            fill(list(cand))            # (in the set's order: the order est() would meet them below)
            frontier = sorted((est(ks), ks) for ks in cand)[:beam]
        # local search from the best set: swap one index length for another, add or drop one
        cur = min(memo, key=memo.get)
        for _pass in range(4):
            moves = {tuple(sorted(set(cur) - {a} | {b})) for a in cur for b in ks_all if b not in cur}
            if len(cur) < min(max_z, self.M - 1):
                moves |= {tuple(sorted(cur + (b,))) for b in ks_all if b not in cur}
            if len(cur) > 1:
                moves |= {tuple(x for x in cur if x != a) for a in cur}
            fill(list(moves))
            nxt = min(moves, key=est, default=cur)
            if est(nxt) >= est(cur):
                break
            cur = nxt
        ranked = sorted((v, ks) for ks, v in memo.items())
        return [(ks, self.estimate(ks, 3)) for _, ks in ranked[:keep]]

    def _score(self, blocks, res_F, zks, zF):
        """Bits of a partition with the ZRUN classes at package-merge code lengths (payload and metadata)."""
        F = [b[1] for b in blocks] + ([res_F] if res_F > 0 else []) + list(zF)
        ks = [b[0] for b in blocks] + ([self.W] if res_F > 0 else []) + list(zks)
        if not F:
            return INF
        w = np.maximum(np.rint(np.array(F)), 1.0)
        c = _k()._package_merge(w, self.L) if len(F) >= 2 else np.ones(1, np.int64)
        lut3 = sum(1 << b[0] for b in blocks)
        return float(np.dot(w, c + np.array(ks))) + CLASS_BITS * len(F) + self.lut3_bits * lut3

    def _scores(self, parts, zks, zF):
        """:meth:`_score` of every partition of ``parts`` (one C call with the C kernels: the same floats)."""
        kern = _k()
        flat = self.__dict__.setdefault("_flat", {})    # per partition list (partitions() keeps them): made once
        got = flat.get(id(parts))
        if got is None or got[0] is not parts:
            got = flat[id(parts)] = (
                parts, max((len(b) for b, _ in parts), default=0),
                [[b[1] for b in blocks] + ([res_F] if res_F > 0 else []) for blocks, res_F in parts],
                [[b[0] for b in blocks] + ([self.W] if res_F > 0 else []) for blocks, res_F in parts],
                [sum(1 << b[0] for b in blocks) for blocks, _r in parts])
        _parts, longest, Fs, kss, lut3 = got
        if not hasattr(kern, "score_parts") or len(zks) + 1 + longest > (1 << self.L):
            return [self._score(b, r, zks, zF) for b, r in parts]
        off, F, ks = [0], [], []
        zF, zks = list(zF), list(zks)
        for f, k in zip(Fs, kss):
            F += f
            F += zF
            ks += k
            ks += zks
            off.append(len(F))
        return kern.score_parts(off, F, ks, lut3, self.L, self.lut3_bits).tolist()

    def designs(self, zks=(), zF=None, iters: int = 2, top: int = 2, tablesets: bool = True):
        """Exact-costed table sets of the ZRUN set ``zks``: ``(tableset, bits)`` (``tablesets`` False: the
        :class:`_Built` designs, their TableSets not made -- design_tableset makes its winner's)."""
        st, W, L = self.st, self.W, self.L
        zks = tuple(zks)
        Mv = self.M - len(zks)
        if Mv < 1 or (self.R == 0 and not zks):
            return
        if zF is None:
            cnt = _zrun_symbols(self.runs, zks) if zks else {}
            zF = np.array([max(cnt[k], 1) for k in zks], np.float64)
        if self.R == 0:
            ts = _design(W, L, [], [], 0, list(zip(zks, zF)), st)
            yield ts.tableset() if tablesets else ts, ts.bits(st)
            return
        kern = _k()
        if hasattr(kern, "grouped_designs"):       # the whole loop below in one C call (the same designs)
            flat = self._flat_parts(Mv)
            if self.__dict__.get("_order64") is None:
                self._order64 = np.ascontiguousarray(self.order, np.int64)
            out = kern.grouped_designs(flat, self.R, self._order64, W, L, self.lut3_max, zks, zF, iters, top,
                                       CLASS_BITS, self.lut3_bits, TABLE_HEAD_BITS, min(LUT3_BITS, W), self.runs,
                                       _stats_args(st))
            if out is not None:
                for classes, lens, lut3, bits in out:
                    ts = _Built(W, classes, lens, lut3, (st, bits))
                    yield ts.tableset() if tablesets else ts, bits
                return
        parts = self.partitions(Mv)
        seen = set()
        for _it in range(iters):
            scored = sorted(zip(self._scores(parts, zks, zF), range(len(parts))))
            best_ts, best_bits = None, math.inf
            for _sc, n in scored[:top]:
                blocks, res_F = parts[n]
                key = (n, tuple(zF.astype(np.int64)))
                if key in seen:
                    continue
                seen.add(key)
                groups = []
                for k, F, s0 in blocks:
                    members = self.order[s0:min(s0 + (1 << k), self.R)]
                    if len(members) < (1 << k):
                        members = np.r_[members, np.full((1 << k) - len(members), members[-1])]
                    groups.append((k, F, members))
                ts = _design(W, L, groups, [], res_F, list(zip(zks, zF)), st)
                if len(ts.lut3) > self.lut3_max:
                    continue
                bits = ts.bits(st)
                if tablesets:
                    ts = ts.tableset()
                if bits < best_bits:
                    best_ts, best_bits = ts, bits
                yield ts, bits
            if not zks or best_ts is None:
                return
            # re-estimate the run symbol counts from the optimal parse with the best set's real costs
            len0, zk, ztot = _zero_costs(best_ts, st)
            zF = np.maximum(_k()._zrun_parse_counts(self.runs, len0, zk, ztot)[:-1].astype(np.float64), 1.0)


def _zero_costs(ts, st: Stats):
    """``(symbol length of the value 0 (0: not covered), ZRUN index lengths, ZRUN symbol lengths)`` of a TableSet
    or :class:`_Built` -- what ``TableCost(ts, 1, at=st)`` gives as ``_len0``, ``ks[zmask]``, ``totals[zmask]``,
    without its lengths of every present value (C kernels)."""
    kern = _k()
    if not hasattr(kern, "lengths_at"):
        tc = TableCost(_tableset(ts), 1, at=st)
        return tc._len0, tc.ks[tc.zmask], tc.totals[tc.zmask]
    if isinstance(ts, _Built):
        rows = [(kind, k, p, k + n) for (kind, k, p), n in zip(ts.classes, ts.lens)]
    else:
        rows = [(cl.kind, cl.k, cl.param, cl.total) for cl in ts.classes]
    cls = np.array(rows, np.int64)
    len0 = int(kern.lengths_at(np.zeros(1, np.int64), cls[:, 0], cls[:, 1], cls[:, 2], cls[:, 3], ts.lut3)[0])
    zrow = cls[:, 0] == ZRUN
    return len0, cls[zrow, 1], cls[zrow, 3]


def _grouped_candidates(st: Stats, L: int, M: int, lut3_max: int = MAX_LUT3, effort: int = 1,
                        tablesets: bool = True):
    """The grouped design's table sets (:class:`_Grouped`): zeros as a value (unless most words are zero),
    and the best few ZRUN sets (when at least 1 % of the words are zero). ``tablesets`` False: :class:`_Built`
    designs instead of TableSets."""
    kern = _k()
    if hasattr(kern, "grouped_all"):          # everything below in one C call (the same designs, in order)
        W, M1 = st.word_bits, min(M, MAX_CLASSES, 1 << L)
        last = int(np.nonzero(st.runs)[0][-1]) if st.runs.any() else 0
        n_rest = float(st.n_words - int(st.hist[0])) + float(st.runs[:last + 1].sum())
        mus_t0, _ = _Grouped.grid_mus(float(st.n_words))
        mus_t1, mus_z = _Grouped.grid_mus(n_rest)
        got = kern.grouped_all(st.hist, st.runs, W, L, M1, lut3_max, effort, MAX_LUT_K, MAX_ZRUN_K, CLASS_BITS,
                               float(min(LUT3_BITS, W)), TABLE_HEAD_BITS, min(LUT3_BITS, W), mus_t0, mus_t1, mus_z,
                               _stats_args(st))
        if got is not None:
            for classes, lens, lut3, bits in got:
                ts = _Built(W, classes, lens, lut3, (st, bits))
                yield ts.tableset() if tablesets else ts, bits
            return
    zeros = int(st.hist[0])
    if zeros < 0.5 * st.n_words:            # zeros as a value: hopeless when most words are zero
        yield from _Grouped(st, L, M, True, lut3_max).designs(tablesets=tablesets)
    if zeros >= 0.01 * st.n_words and st.runs.any():
        gz = _Grouped(st, L, M, False, lut3_max)
        if effort < 1:
            sets = gz.zrun_sets(max_z=3, beam=2, keep=1, exhaustive=1)
        elif st.n_words < 65536:            # a smaller search where fewer bits are at stake
            sets = gz.zrun_sets(beam=3, keep=2, exhaustive=2 if st.n_words >= 16384 else 1)
        else:
            sets = gz.zrun_sets()
        for zks, (_v, _lmu, zF) in sets:
            yield from gz.designs(zks, zF, tablesets=tablesets)


def design_tableset(st: Stats, L: int = 8, lut3_max: int = MAX_LUT3, max_classes: int = MAX_CLASSES,
                    effort: int = 1):
    """Search for the table set of least total size (payload + table) for the statistics ``st``.

    ``effort`` 0: no LUT classes, two zero-run choices; 1 (default): the two best zero-run choices are tried
    with LUT parts of up to 4 promising sizes; 2: wider search. Returns ``(tableset, total_bits)``.
    """
    with _scope():
        return _design_tableset(st, L, lut3_max, max_classes, effort)


def _scope():
    """The C kernels' ``scratch_scope`` (work arrays kept for reuse while it is open), else a no-op."""
    kern = _k()
    return kern.scratch_scope() if hasattr(kern, "scratch_scope") else contextlib.nullcontext()


def _design_tableset(st, L, lut3_max, max_classes, effort):
    W = st.word_bits
    if not 1 <= L <= MAX_CODE_LEN:
        raise TableError(f"code length limit L={L} outside 1..{MAX_CODE_LEN}")
    M = min(max_classes, MAX_CLASSES, 1 << L)
    raw = _build(W, L, [], [], 1, [])
    best = [raw, total_bits(raw, st)]
    if st.n_words == 0:
        return tuple(best)

    trace = _TRACE

    def consider(gen):
        found = math.inf
        for ts, tb in gen:
            if trace is not None:
                trace.append(tb)
            found = min(found, tb)
            if tb < best[1]:
                best[:] = [ts, tb]
        return found

    if int(np.count_nonzero(st.hist)) <= GROUPED_MAX_VALUES:
        # small alphabets (every int8 tensor): the grouped design, with integer code lengths and up to
        # GROUPED_MAX_ZRUNS zero-run classes, first. It covers the LUT part of the trie search below, which
        # then runs without LUT classes -- unless the grouped set's LUT3 is a noticeable part of its size
        # (mid-size tensors, where RANGE classes without LUT3 entries can win)
        found = consider(_grouped_candidates(st, L, M, lut3_max, effort, tablesets=False))
        if effort == 1 and found == best[1] and table_bits(best[0]) < GROUPED_META_SHARE * best[1]:
            effort = 0

    kern = _k()
    if TRIE_PART_C and effort <= 1 and hasattr(kern, "trie_part"):
        # everything below in one C call (the same sets, designs, floats and order)
        vals, cnt = st.present()
        hh = st.__dict__.get("_hh")
        if hh is None:
            h = cnt.astype(np.float64)
            hh = st._hh = (np.ascontiguousarray(vals, np.int64), np.ascontiguousarray(cnt, np.int64), h,
                           h * np.log2(h))
        got = kern.trie_part(W, L, M, lut3_max, effort, MAX_LUT_K, CLASS_BITS, LUT3_BITS, TABLE_HEAD_BITS,
                             min(LUT3_BITS, W), REF_MIN_NODES, CLASS_BITS / 2, *hh, st.n_words, MAX_ZRUN_K, 2, best[1],
                             _stats_args(st), trace)
        if got is not None:
            if got:
                classes, lens, lut3, tb = got
                best[:] = [_Built(W, classes, lens, lut3, (st, tb)), tb]
            best[0] = _tableset(best[0]).validate()
            return tuple(best)
    zcands = []
    for z in _zrun_candidates_iter(st, int(st.n_words - st.hist[0]), lazy=effort <= 0):
        if len(z) < M:
            zcands.append(z)
            if effort <= 0 and len(zcands) == 2:    # (effort 0 tries the first two: the rest is not estimated)
                break
    _st_zrun_symbols_many(st, zcands)           # (their run symbol counts in one call, for _ZDesign)
    shared = {}
    zds = [_ZDesign(st, z, lut3_max, M, shared) for z in zcands]
    # screen the zero-run choices: the value classes hardly depend on them, so one trie DP over the non-zero
    # values serves every ZRUN set (only the number of classes left for values differs)
    scores, full = {}, set()
    with_z = [n for n, zd in enumerate(zds) if zd.zks]
    for n, zd in enumerate(zds):
        if not zd.zks:
            scores[n] = consider(zd.designs(0, W, L, st))
            full.add(n)
    if with_z:
        ref = zds[with_z[0]]
        rest = ref.hist
        # the values of rest.hist are ref's present values (zero left out)
        screen = None
        if len(ref._vals):
            tree = _trie_tree(rest, W, vals=ref._vals)
            solve = _trie_dp(rest, W, ref.N, M - 1, 12.0, tree, nonempty=True, slot=3,  # round 1 of designs(0)
                             as_base=True)
            screen = (tree, M - 1, solve)           # ref's first round of designs(0)
        else:
            solve = None
        walks = {}                      # (budget, residual) -> solve(...): the sets of one size share it
        specs = []                      # (set n, ranges, residual F): every design of the screening, in order
        for n in with_z:
            zd = zds[n]
            scores[n] = math.inf
            for residual in (False, True):
                mm = zd.Mv - (1 if residual else 0)
                if solve is None:
                    c, ranges, fres = (0.0, [], 0.0) if not residual else (INF, [], 0.0)
                elif mm < 0:
                    continue
                else:
                    if (mm, residual) not in walks:
                        walks[mm, residual] = solve(mm, residual)
                    c, ranges, fres = walks[mm, residual]
                if c < INF:
                    specs.append((n, ranges, fres))
        # their code lengths and bits in one C call where it can (the same as _design and _Built.bits)
        costed = _design_batch(W, L, [(ranges, fres, zds[n].zruns) for n, ranges, fres in specs], st)
        for (n, ranges, fres), got in zip(specs, costed):
            if got is None:
                ts = _design(W, L, [], ranges, fres, zds[n].zruns, st)
                tb = ts.bits(st)
            else:
                classes, lens, tb = got
                ts = None
            if trace is not None:
                trace.append(tb)
            scores[n] = min(scores[n], tb)
            if tb < best[1]:
                best[:] = [ts if ts is not None else _Built(W, classes, lens, np.zeros(0, np.uint16), (st, tb)), tb]
    max_t = 4 if effort == 1 else 1000
    for n in sorted(scores, key=scores.get)[:1 if effort <= 1 else len(scores)]:
        zd = zds[n]
        if n not in full:
            consider(zd.designs(0, W, L, st, screen if with_z and zd is zds[with_z[0]] else None))
        # (designs(0) has been considered for this set now, just above or in the screening: the same designs
        # again -- t = 0 is the only size where effort <= 0 or no value is left -- cannot win, consider keeps the
        # first of equal bits; the LUT DP of lower_bound is not needed then)
        tc = zd.t_candidates(effort)
        if tc == [0]:
            continue
        cands = sorted((zd.lower_bound(t), t) for t in tc)
        # the bound is loose, so besides the most promising sizes always try "every value in LUT3" (or the
        # largest LUT3) and the median size
        picks = cands[:max_t]
        extra = [c for c in cands if c[1] == zd.R] + ([cands[len(cands) // 2]] if cands else [])
        picks += [c for c in extra if c not in picks]
        for lb, t in picks:
            if lb >= best[1]:
                continue
            consider(zd.designs(t, W, L, st))
    best[0] = _tableset(best[0]).validate()
    return tuple(best)


def best_tableset(words: np.ndarray, word_bits: int, L: int = 8, lut3_max: int = MAX_LUT3,
                  stripe_len: int = 4096) -> TableSet:
    """The encoder's choice of table set for one tensor (see :func:`design_tableset`)."""
    st = Stats.of(words, word_bits, min(stripe_len, MAX_STRIPE_WORDS))
    return design_tableset(st, L, lut3_max)[0]


# ------------------------------------------------------------------------------------------------ sharing
def _ideal_bits(st: Stats) -> float:
    """Order-0 entropy of the words (a rough floor: zero-run classes can go below it on sparse tensors)."""
    h = st.present()[1].astype(np.float64)        # the non-zero counts in value order, as hist[hist > 0]
    n = h.sum()
    return float(-(h * np.log2(h / n)).sum()) if n else 0.0


def plan_tables(word_list, bits_list, stripe_len: int = 4096, L: int = 8, share: bool = True, progress=None,
                threads: int = 1):
    """Choose table sets for several tensors and which tensor uses which.

    Tensors are visited largest first; a tensor joins an existing table set of its word width when coding it
    with that set costs fewer bits than a set of its own (payload plus metadata). Returns
    ``(tables, assignment)`` with ``assignment[i]`` the table index of tensor ``i``. ``threads``: the tensors'
    own table sets are designed on this many threads (:func:`plan_tables_stats`; the same tables).
    """
    if int(threads) > 1 and len(word_list) > 1:     # counted on threads too (the C kernel releases the GIL)
        from lutzip.codec.bitstream import _pool
        stats = list(_pool(int(threads)).map(lambda wb: Stats.of(wb[0], wb[1], stripe_len), zip(word_list, bits_list)))
    else:
        stats = [Stats.of(w, b, stripe_len) for w, b in zip(word_list, bits_list)]
    return plan_tables_stats(stats, stripe_len, L, share, progress, threads)


def plan_tables_stats(stats, stripe_len: int = 4096, L: int = 8, share: bool = True, progress=None,
                      threads: int = 1):
    """:func:`plan_tables` from the streams' statistics (:meth:`Stats.of`) instead of their words.

    The table design depends on the statistics alone, so a file can be planned tensor by tensor, each
    tensor's words read, counted and let go (:mod:`lutzip.codec.writer`). ``threads`` > 1: every tensor's own
    design (:func:`design_tableset`, which depends on its statistics alone) is started ahead on ``threads - 1``
    worker threads while this thread makes the choices in the same order, taking a design from them or making it
    itself: the same tables and assignment as one thread (a design that turns out unneeded is wasted work). Each
    worker thread has its designs made by a worker process of its own (:mod:`lutzip.codec.designpool`: the design
    is half Python, which threads would run one at a time under the GIL).
    """
    with _scope():
        if int(threads) <= 1 or len(stats) < 2:
            return _plan_tables_stats(stats, stripe_len, L, share, progress)
        with _Ahead(stats, L, int(threads) - 1) as ahead:
            return _plan_tables_stats(stats, stripe_len, L, share, progress, ahead)


def _own_effort(st: Stats) -> int:
    return 1 if st.n_words >= 4096 else 0


class _Ahead:
    """Own designs of the tensors (``design_tableset(st, L, effort=_own_effort(st))``), taken in the order of
    :func:`_plan_tables_stats` by worker threads (each in one ``_scope`` for its life: work arrays reused; each
    has its designs made by a worker process of its own where :mod:`lutzip.codec.designpool` is enabled).
    :meth:`get` returns a design: the worker's (waiting for it, and meanwhile designing the next ones not yet
    taken), or made here when no worker has taken it yet. :meth:`add` queues more designs (the shared sets'
    redesigns from merged statistics); the workers wait for jobs until the context closes."""

    def __init__(self, stats, L, workers):
        import collections
        import threading
        self._L = L
        order = sorted(range(len(stats)), key=lambda i: -stats[i].n_words)
        self._jobs = {}                         # key -> (statistics, effort, future)
        self._queue = collections.deque()
        self._cv = threading.Condition(threading.Lock())
        self._closed = False
        for i in order:
            self._new(i, stats[i], _own_effort(stats[i]))
        from lutzip.codec import designpool
        self._pool = designpool if designpool.enabled() else None   # each worker thread's designs in a process
        self._threads = [threading.Thread(target=self._work, args=(n,), daemon=True, name=f"lutzip-design-{n}")
                         for n in range(workers)]

    def _new(self, key, st, effort):
        import concurrent.futures
        self._jobs[key] = (st, effort, concurrent.futures.Future())
        self._queue.append(key)

    def add(self, key, st, effort: int = 1):
        """Queue ``design_tableset(st, L, effort=effort)`` under ``key`` (a key not used before)."""
        with self._cv:
            self._new(key, st, effort)
            self._cv.notify()

    def __enter__(self):
        if self._pool is not None:              # forked here, before this file's threads run (none hold a lock)
            for n in range(len(self._threads)):
                self._pool.worker(n)
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        with self._cv:
            self._queue.clear()                 # nothing new is started; running designs finish
            self._closed = True
            self._cv.notify_all()
        for t in self._threads:
            t.join()
        return False

    def _take(self, wait=False):
        """The next design no one has taken (its key, marked running), or None (``wait``: None once closed)."""
        with self._cv:
            while True:
                while self._queue:
                    key = self._queue.popleft()
                    if self._jobs[key][2].set_running_or_notify_cancel():
                        return key
                if not wait or self._closed:
                    return None
                self._cv.wait()

    def _run(self, key, proc=None):
        st, effort, fut = self._jobs[key]
        try:
            if proc is None:
                fut.set_result(design_tableset(st, self._L, effort=effort))
            else:                               # worker process ``proc`` (the same function, the same result)
                fut.set_result(self._pool.design(proc, st, self._L, effort))
        except BaseException as e:              # handed to get()'s caller
            fut.set_exception(e)

    def _work(self, n):
        with _scope():
            while True:
                key = self._take(wait=True)
                if key is None:
                    return
                self._run(key, proc=n if self._pool is not None else None)

    def get(self, key):
        st, effort, fut = self._jobs[key]
        with self._cv:
            mine = fut.cancel()                 # no worker has it: made here
        if mine:
            return design_tableset(st, self._L, effort=effort)
        while not fut.done():
            job = self._take()
            if job is None:
                break
            self._run(job)
        return fut.result()

    def skip(self, key):
        """No design is needed for ``key``: not started when no worker has it yet."""
        with self._cv:
            self._jobs[key][2].cancel()


def _plan_tables_stats(stats, stripe_len, L, share, progress, ahead=None):
    order = sorted(range(len(stats)), key=lambda i: -stats[i].n_words)
    tables, costs, members, assignment = [], [], [], [0] * len(stats)
    kern = _k()
    many = {} if hasattr(kern, "ExactBitsMany") else None   # word bits -> (tables, their costs in one C call)
    for i in order:
        st = stats[i]
        shared, shared_bits = None, math.inf
        if share:
            got = many.get(st.word_bits) if many is not None else None
            if got is not None and got[0]:      # every set of this width at once (the same bits, the first least)
                for j, b in zip(got[0], got[1].bits(_stats_args(st))):
                    if b < shared_bits:
                        shared, shared_bits = j, b
            else:
                for j, ts in enumerate(tables):
                    if ts.word_bits == st.word_bits:
                        b = costs[j].bits(st)
                        if b < shared_bits:
                            shared, shared_bits = j, b
        # no table set of its own can cost less than the order-0 entropy plus one class (for tensors without
        # zero runs): when an existing set does as well, the tensor joins it without a design of its own
        own, own_bits = None, math.inf
        if shared is None or shared_bits > _ideal_bits(st) + CLASS_BITS + TABLE_HEAD_BITS:
            own, own_bits = ahead.get(i) if ahead is not None else design_tableset(st, L, effort=_own_effort(st))
        elif ahead is not None:
            ahead.skip(i)
        choice = shared if shared_bits <= own_bits else None
        if choice is None:
            tables.append(own)
            costs.append(TableCost(own, stripe_len))
            if many is not None:
                tc = costs[-1]
                got = many.setdefault(own.word_bits, ([], kern.ExactBitsMany()))
                if got[0] is not None:
                    if tc._cls is None:                 # (a set the C call cannot cost: all one by one)
                        many[own.word_bits] = (None, None)
                    else:
                        got[0].append(len(tables) - 1)
                        got[1].add(tc._cls, tc._lut3u)
            members.append([i])
            assignment[i] = len(tables) - 1
        else:
            members[choice].append(i)
            assignment[i] = choice
        if progress:
            progress(i)
    # redesign shared sets from their members' merged statistics when that is smaller
    redo = []
    for j, mem in enumerate(members):
        if len(mem) < 2:
            continue
        merged = stats[mem[0]]
        for i in mem[1:]:
            merged = merged + stats[i]
        redo.append((j, merged))
        if ahead is not None:                   # the redesigns on the workers too (each its own)
            ahead.add(("merged", j), merged)
    for j, merged in redo:
        new, new_bits = ahead.get(("merged", j)) if ahead is not None else design_tableset(merged, L)
        if new_bits < total_bits(tables[j], merged):
            tables[j] = new
    return tables, assignment
