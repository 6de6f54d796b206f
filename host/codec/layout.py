"""The order in which a tensor's words are coded (format version 4's axis order, docs/FORMAT.md section 4.1).

An order-0 code of literals and zero runs (the classes of section 1) costs the same for every order of a tensor's
non-zero words, but not for its zeros: a pruned convolution's zero runs follow its kernels in one axis order and
are cut short in another. :func:`choose_axes` estimates, for each order of a tensor's axes, the order-0 entropy of
its symbol sequence (each non-zero word a literal, each maximal zero run one symbol by its length) and keeps the
order that beats the tensor's own by a clear margin. The hardware decodes the stream as it is; the host (or an
accelerator told the order) transposes back.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from lutzip.codec import fastenc

#: tensors of fewer words keep their order (the estimate is noise there, and the index byte per axis costs)
MIN_WORDS = 4096
#: tensors with fewer zero words than this fraction keep their order (an order only moves the zeros)
MIN_ZERO_FRACTION = 0.125
#: a new order must save at least this fraction of the estimated bits of the tensor's own order
MIN_GAIN = 0.02
#: orders of at most this many axes are all tried (4 axes: 24 orders); larger tensors keep theirs
MAX_NDIM = 4
#: tensors of fewer axes keep their order: a pruned matrix has no kernel pattern for an order to follow (on
#: all-MiniLM-L6-v2 int16 75 % the one matrix the estimate picked saved 0.06 % of the file and cost 1.8 % of
#: the decode time, a transposing copy; on six real models' int8 / int16 cells matrices gave 0.003 % in all)
MIN_NDIM = 3
#: the orders are compared on at most this many words: a block of the tensor (its largest axis halved until the
#: block fits), whose zero runs follow the same kernels
SAMPLE_WORDS = 1 << 15
#: zero runs are counted as symbols up to this length (longer ones count as several, as a ZRUN class codes them)
RUN_CAP = 4096


def run_counts(nonzero: np.ndarray) -> np.ndarray:
    """Counts of the zero-run symbols of a flat mask of non-zero words: one per maximal run of zeros, by its
    length up to :data:`RUN_CAP` (a longer run counts as several, as a ZRUN class codes it)."""
    pos = np.flatnonzero(nonzero)
    if not pos.size:
        runs = np.array([nonzero.size])
    else:
        runs = np.diff(pos, prepend=-1, append=nonzero.size) - 1
        runs = runs[runs > 0]
    full, rest = np.divmod(runs, RUN_CAP)
    counts = np.bincount(rest)[1:]
    n_full = int(full.sum())
    return np.append(counts[counts > 0], n_full) if n_full else counts[counts > 0]


def symbol_bits(literal_counts: np.ndarray, nonzero: np.ndarray) -> float:
    """Order-0 entropy in bits of a word sequence read as literals (the non-zero words, counted by value in
    ``literal_counts``: the same in every order) and zero runs (:func:`run_counts` of the flat mask)."""
    return _bits(literal_counts, run_counts(nonzero))


def _bits(literal_counts: np.ndarray, runs: np.ndarray) -> float:
    """:func:`symbol_bits` of the literal counts and the zero-run counts (:func:`run_counts`)."""
    c = np.concatenate((literal_counts, runs)).astype(np.float64)
    c = c[c > 0]
    if c.size <= 1:
        return 0.0
    return float(-(c * np.log2(c / c.sum())).sum())


def _bits_pos(lits: np.ndarray, runs: np.ndarray) -> float:
    """:func:`_bits` of positive counts (``lits`` without zeros, :func:`run_counts` / ``fastenc.layout_runs``
    arrays): the same array and expression, without the filter that keeps it whole."""
    c = np.concatenate((lits, runs)).astype(np.float64)
    if c.size <= 1:
        return 0.0
    return float(-(c * np.log2(c / c.sum())).sum())


def _bits_many(lits: np.ndarray, runs_list) -> list:
    """``[_bits_pos(lits, r) for r in runs_list]``: the same arrays and expressions (each order's counts as one
    contiguous float64 run, summed alone: numpy's pairwise sum of the same values), the elementwise steps done for
    all orders at once."""
    parts, n = [], []
    for r in runs_list:
        parts += (lits, r)
        n.append(len(lits) + len(r))
    c = np.concatenate(parts).astype(np.float64)
    ends = np.cumsum(n).tolist()
    bounds = list(zip([0] + ends[:-1], ends))
    sums = np.array([c[a:b].sum() for a, b in bounds], np.float64)
    t = -(c * np.log2(c / np.repeat(sums, n)))
    return [0.0 if b - a <= 1 else float(t[a:b].sum()) for a, b in bounds]


@functools.lru_cache(maxsize=64)
def _orders(big: tuple) -> list:
    """The axis orders :func:`choose_axes` tries besides the own one, for a tensor whose axis ``a`` has a size other
    than 1 where ``big[a]``: every permutation that reads the words in an order not tried before (moving axes of size
    1 does not change it), in ``itertools.permutations`` order (a list the caller must not change)."""
    own = tuple(range(len(big)))
    orders, seen = [], {tuple(a for a in own if big[a])}      # word orders tried (the own one first)
    for axes in itertools.permutations(own):
        moved = tuple(a for a in axes if big[a])
        if moved not in seen:
            seen.add(moved)
            orders.append(axes)
    return orders


def choose_axes(arr: np.ndarray) -> tuple | None:
    """The axis order to code ``arr`` in (``numpy.transpose(arr, axes)``), or ``None`` to keep its own.

    Only for tensors of :data:`MIN_NDIM` .. :data:`MAX_NDIM` axes, at least :data:`MIN_WORDS` words and
    :data:`MIN_ZERO_FRACTION` zeros; an order is taken when its estimate (:func:`symbol_bits`) is at least
    :data:`MIN_GAIN` below the tensor's own. The orders are compared on a block of at most
    :data:`SAMPLE_WORDS` words (:func:`sample_block`).
    """
    arr = np.asarray(arr)
    if not MIN_NDIM <= arr.ndim <= MAX_NDIM or arr.size < MIN_WORDS or arr.dtype.itemsize > 2:
        return None
    arr = sample_block(arr)
    words = np.ascontiguousarray(arr).reshape(-1).view(np.uint8 if arr.itemsize == 1 else np.uint16)
    nonzero = words != 0
    n_zero = words.size - int(np.count_nonzero(nonzero))
    if n_zero < MIN_ZERO_FRACTION * words.size:
        return None
    lits = np.bincount(words[nonzero], minlength=1)
    lits = lits[lits > 0]
    mask = nonzero.reshape(arr.shape)
    own = tuple(range(arr.ndim))
    orders = _orders(tuple(n != 1 for n in arr.shape))
    runs = fastenc.layout_runs(mask, [own] + orders, RUN_CAP)   # the C walk of every order, no copies
    if runs is None:
        runs = [run_counts(np.ascontiguousarray(mask.transpose(axes)).reshape(-1)) for axes in [own] + orders]
    est = _bits_many(lits, runs)
    best, best_bits = None, est[0] * (1.0 - MIN_GAIN)
    for axes, bits in zip(orders, est[1:]):
        if bits < best_bits:
            best, best_bits = axes, bits
    return best


def sample_block(arr: np.ndarray) -> np.ndarray:
    """A leading block of ``arr`` of at most :data:`SAMPLE_WORDS` words: its largest axis cut to its first half
    until the block fits (every axis keeps its neighbours, so the zero runs of every order look alike)."""
    shape = list(arr.shape)
    while math.prod(shape) > SAMPLE_WORDS:
        j = int(np.argmax(shape))
        shape[j] = (shape[j] + 1) // 2
    return arr[tuple(slice(0, n) for n in shape)]


def stored(arr: np.ndarray, axes) -> np.ndarray:
    """``arr`` in the order its words are coded in: transposed by ``axes`` (C-contiguous), or as it is."""
    return arr if axes is None else np.ascontiguousarray(np.transpose(arr, axes))


def restore(stored_arr: np.ndarray, axes) -> np.ndarray:
    """Inverse of :func:`stored`: the tensor in its own axis order (C-contiguous)."""
    if axes is None:
        return stored_arr
    return np.ascontiguousarray(np.transpose(stored_arr, np.argsort(axes)))
