"""The encoder's C kernels (``_fastenc.c``), compiled at first use and loaded with ctypes.

Every function here has the signature and the result of the numba kernel of the same name in
:mod:`lutzip.codec._encnumba` (the reference, tested against these): the statistics, the cost tables, the
table design's dynamic programmes and the stripe coder. With them, compressing never imports numba (about
0.5 s of a process's start-up), and the GIL is released while a kernel runs (ctypes), so stripes and tensors
can be coded on several threads.

Build: as the decoder's (:mod:`lutzip.codec.fastdec`: the same compiler search and cache, keyed by the
source, the compiler, the flags and the CPU) into ``lutzip.cache.cache_dir("fastenc")``; ``-ffp-contract=off``
keeps every floating-point rounding as numba's, so both choose the same tables. Without a compiler, or with
``LUTZIP_FASTENC=0``, :func:`kernels` is the numba module.
"""
from __future__ import annotations

import ctypes
from itertools import chain as _itchain
import math
import threading
from pathlib import Path

import numpy as np

from lutzip.codec import cbuild

_compiler = cbuild.compiler
_cbuf, _addr = ctypes.c_char.from_buffer, ctypes.addressof


def _ptr(a: np.ndarray) -> int:
    """The address of an array's data (``cbuild.ptr``), taken through the buffer protocol: about a fifth of the
    time of ``__array_interface__`` (the design makes tens of thousands of calls a file); read-only or empty
    arrays take ``cbuild.ptr``."""
    try:
        return _addr(_cbuf(a))
    except (TypeError, ValueError, BufferError):
        return cbuild.ptr(a)


SOURCE = Path(__file__).with_name("_fastenc.c")
FLAGS = ["-O2", "-march=native", "-shared", "-fPIC", "-ffp-contract=off", "-fvisibility=hidden"]
INF = 1e300

_lock = threading.Lock()
_state = {"tried": False, "lib": None, "why": None}


def _build(cc: str, dest: Path):
    """Compile the kernels into ``dest/_fastenc.so`` (``-march=native`` first, then without it)."""
    cbuild.build(cc, SOURCE, dest / "_fastenc.so", FLAGS, libs=("-lm",))


def _configure(lib):
    vp, i64, i32, f64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_double
    sig = {
        "lze_stats": ([vp, i64, i32, i64, vp, vp, i32], None),
        "lze_lengths": ([i64, i64, vp, vp, vp, vp, vp, vp], None),
        "lze_zrun_costs": ([i64, i64, i64, vp, vp, vp], None),
        "lze_zero_run_dp": ([i64, i64, i64, vp, vp, vp, vp, vp], None),
        "lze_lut_dp": ([i64, vp, f64, i64, i64, f64, f64, vp, vp], None),
        "lze_trie_solve": ([i64, vp, vp, vp, vp, f64, f64, f64, i64, f64, vp, vp, vp, vp, i32, vp], None),
        "lze_trie_solve_ref": ([i64, vp, vp, vp, vp, f64, f64, f64, i64, f64, vp, vp, vp, vp, vp, vp, i64, vp, vp, vp],
                               None),
        "lze_trie_same": ([i64, vp, vp, vp, i64, vp, vp, vp, vp, vp], None),
        "lze_trie_walk_ref": ([i64, i64, vp, vp, vp, vp, vp, vp, i64, vp, vp, vp, vp, vp, i64, vp], i64),
        "lze_zrun_symbols": ([i64, vp, i64, vp, vp], None),
        "lze_package_merge": ([i64, vp, i64, vp], i32),
        "lze_group_dp": ([i64, vp, i64, i64, f64, i64, i64, f64, f64, vp, vp, vp], None),
        "lze_group_dp_grid": ([i64, vp, i64, i64, i64, vp, i64, i64, f64, f64, vp, vp, vp], i32),
        "lze_group_walk": ([i64, i64, i64, vp, vp, vp, vp, i64, i64, vp, vp, vp, vp, vp], i32),
        "lze_zrun_parse_counts": ([i64, vp, i64, i64, vp, vp, vp], i32),
        "lze_zrun_estimate": ([i64, vp, i64, vp, vp, i64, vp, i64, i64, f64, vp, vp], f64),
        "lze_group_parts": ([i64, i64, i64, vp, vp, vp, vp, i64, i64, vp, vp, vp, vp, vp], i64),
        "lze_grouped_designs": ([i64, vp, vp, vp, vp, vp, i64, vp, i64, i64, i64, i64, vp, vp, i64, i64, f64, f64, i64,
                                 i64, i64, vp, i64, vp, i64, vp, i64, vp, i64, i64, i64, vp, vp, vp, vp, vp, vp], i64),
        "lze_zrun_estimate_sets": ([i64, vp, i64, vp, vp, vp, i64, i64, vp, i64, i64, f64, vp], i32),
        "lze_zrun_sets": ([i64, vp, i64, i64, i64, i64, i64, i64, vp, i64, vp, i64, f64, vp, vp, vp, vp], i64),
        "lze_zrun_symbols_sets": ([i64, vp, i64, vp, vp, vp], None),
        "lze_zrun_candidates": ([i64, vp, i64, i64, i64, i64, f64, vp], i64),
        "lze_grouped_all": ([i64, vp, i64, vp, i64, i64, i64, i64, i64, i64, f64, f64, i64, i64, i64, vp, vp, vp,
                             i64, vp, i64, vp, i64, vp, i64, i64, i64, i64, vp, vp, vp, vp, vp, vp], i64),
        "lze_trie_tree": ([i64, vp, vp, vp, i64, f64, i64, vp, vp, vp, vp, vp, vp, vp], i64),
        "lze_symbols": ([i64, i64, vp, vp, vp, vp, vp, vp, vp], None),
        "lze_trie_walk": ([i64, i64, vp, vp, vp, vp, vp, vp, i64, vp, vp, vp, vp], i64),
        "lze_lengths_at": ([i64, vp, i64, vp, vp, vp, vp, vp, vp], None),
        "lze_encode": ([vp, i64, i32, i64, vp, i32, vp, vp, vp, vp, vp, vp], i64),
        "lze_trie_tree_sub": ([i64, vp, vp, vp, vp, i64, f64, i64, vp, vp, vp, vp, vp, vp, vp], i64),
        "lze_exact_bits": ([i64, vp, vp, i64, vp, i64, vp, i64, vp, i64, i64], f64),
        "lze_design_bits": ([i64, vp, vp, i64, vp, vp, i64, vp, i64, vp, i64, vp, i64, i64], f64),
        "lze_zrun_approx": ([i64, vp, i64, i64, f64, f64, vp, vp], None),
        "lze_zrun_approx_sets": ([i64, vp, i64, i64, vp, i64, f64, f64, vp], None),
        "lze_score_parts": ([i64, vp, vp, vp, vp, i64, f64, f64, vp], i32),
        "lze_design_lut": ([i64, vp, vp, vp, vp, i64, i64, f64, f64, i64, f64, i64, vp, vp, vp, vp, i64, vp, vp, i64,
                            i64, i64, vp, vp, vp, vp, i64, vp, i64, vp, i64, vp, i64, i64, vp, vp, vp, vp, vp, vp],
                           i64),
        "lze_arena_free": ([], None),
        "lze_design_bits_batch": ([i64, vp, vp, vp, i64, vp, vp, i64, vp, i64, vp, i64, vp, i64, i64], i64),
        "lze_layout_runs": ([vp, i64, vp, i64, vp, i64, vp, vp, i64, vp, vp], i32),
        "lze_row_modes": ([vp, i64, i64, i32, i32, vp], i64),
        "lze_exact_bits_many": ([i64, vp, vp, vp, i64, vp, i64, vp, i64, vp, i64, i64, vp], i64),
        "lze_trie_part": ([i64, i64, i64, i64, i64, i64, f64, f64, i64, i64, i64, i64, f64, i64, vp, vp, vp, vp, i64,
                           i64, i64, f64, i64, vp, i64, vp, i64, vp, i64, i64, i64, vp, vp, vp, vp, vp, vp, vp, vp], i64),
    }
    for name, (args, res) in sig.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    return lib


def _load():
    return cbuild.load_kernel("fastenc", "the C encoder kernels", SOURCE, FLAGS, _build, _configure, _compiler())


def lib():
    """The loaded C library (built on first call), or ``None`` when it cannot be built (:func:`why_not`)."""
    return cbuild.load_once(_state, _lock, _load)


def available() -> bool:
    """Whether the C encoder kernels can be used."""
    return lib() is not None


def why_not():
    """Why the C kernels are not used (a short sentence), or ``None`` when they are."""
    lib()
    return _state["why"]


def kernels():
    """The kernel namespace the encoder calls: this module when the C library loads, else the numba kernels of
    :mod:`lutzip.codec._encnumba` (same names, same results)."""
    if _state["lib"] is not None or lib() is not None:      # (the loaded library: no lock, no import)
        return _me
    from lutzip.codec import _encnumba
    return _encnumba


import sys as _sys                  # noqa: E402
_me = _sys.modules[__name__]        # this module (kernels())

# ----------------------------------------------------------------------------------------------- scratch
#: a thread's reusable work arrays (the trie's capacity arrays, the trie DP's tables): fresh arrays of these sizes
#: come from new pages of the system (tens of MB a table design, zeroed by the kernel at every first touch: a
#: quarter of the CPU time of an int16 tensor with many values); kept while a ``scratch_scope`` is open
_tls = threading.local()


#: work arrays of fewer entries are fresh arrays (the allocator serves them from its heap, without new pages)
SCRATCH_MIN = 1 << 15


def _scratch(name: str, n: int, dtype) -> np.ndarray:
    """The first ``n`` entries of this thread's work array ``name`` (grown as needed; contents undefined). A later
    call with the same name may hand out the same memory."""
    if n < SCRATCH_MIN or not getattr(_tls, "depth", 0):
        return np.empty(int(n), dtype)
    bufs = getattr(_tls, "bufs", None)
    if bufs is None:
        bufs = _tls.bufs = {}
    b = bufs.get(name)
    if b is None or b.size < n or b.dtype != dtype:
        b = bufs[name] = np.empty(max(int(n), 0 if b is None else b.size + b.size // 4), dtype)
    return b[:n]


class scratch_scope:
    """Context manager: work arrays (:func:`_scratch`) are kept for reuse until the outermost scope of this
    thread closes (the encoder opens one per file's table design)."""

    def __enter__(self):
        _tls.depth = getattr(_tls, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _tls.depth -= 1
        if _tls.depth == 0:
            _tls.bufs = {}                 # (the generations go on: a solve kept past the scope holds its arrays)
            if _state["lib"] is not None:
                _state["lib"].lze_arena_free()      # this thread's work arrays of lze_design_lut


def dp_tables(slot: int, n: int, M: int, with_n: bool = True):
    """Tables of a trie DP of ``n`` nodes and budget ``M`` in this thread's work arrays of ``slot``: ``(gen,
    nores, res, ch_nores, ch_res)`` (``nores``, ``ch_nores`` None unless ``with_n``); ``gen`` is the slot's
    generation, :func:`dp_gen` tells whether the tables are still this DP's (a later call for the same slot
    reuses them). Outside a :class:`scratch_scope`, and for tables under :data:`SCRATCH_MIN` entries, the tables
    are fresh arrays and ``gen`` is None."""
    shape, size = (n, M + 1), n * (M + 1)
    if size < SCRATCH_MIN or not getattr(_tls, "depth", 0):     # small tables: fresh arrays, no generation
        return (None, np.empty(shape) if with_n else None, np.empty(shape),
                np.empty(shape, np.int64) if with_n else None, np.empty(shape, np.int64))
    gens = getattr(_tls, "gen", None)
    if gens is None:
        gens = _tls.gen = {}
    g = gens[slot] = gens.get(slot, 0) + 1

    def mk(name, dt):
        return _scratch(f"dp{slot}{name}", size, dt).reshape(shape)
    return (g, mk("n", np.float64) if with_n else None, mk("r", np.float64), mk("cn", np.int64) if with_n else None,
            mk("cr", np.int64))


def dp_gen(slot: int) -> int:
    """The present generation of the DP table ``slot`` of this thread (:func:`dp_tables`)."""
    return getattr(_tls, "gen", {}).get(slot, 0)


# ----------------------------------------------------------------------------------------------- kernels
def _i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, np.int64)


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, np.float64)


def _p(a: np.ndarray):
    return _ptr(a) if a.size else None


def stats(flat: np.ndarray, S: int, hist: np.ndarray | None, runs: np.ndarray | None):
    """Add the histogram of ``flat`` (uint8 or uint16, C-contiguous) to ``hist`` (int64, ``2^8``/``2^16``
    entries) and its zero runs (cut at stripe ends) to ``runs``; either may be ``None``."""
    lib().lze_stats(_p(flat), flat.size, flat.dtype == np.uint16, int(S), None if hist is None else _ptr(hist),
                    None if runs is None else _ptr(runs), runs is not None)


def _run_histogram(words, S, out):
    stats(np.ascontiguousarray(words), S, None, out)


def _lengths(size, kinds, ks, params, totals, lut3):
    kinds, ks, params, totals, lut3 = map(_i64, (kinds, ks, params, totals, lut3))
    best = np.empty(int(size), np.int64)
    lib().lze_lengths(int(size), len(kinds), _p(kinds), _p(ks), _p(params), _p(totals), _p(lut3), _ptr(best))
    return best


def _zrun_costs(maxr, single, zk, ztot):
    zk, ztot = _i64(zk), _i64(ztot)
    cost = np.empty(int(maxr) + 1, np.int64)
    lib().lze_zrun_costs(int(maxr), int(single), len(zk), _p(zk), _p(ztot), _ptr(cost))
    return cost


def _zero_run_dp(max_run, single, zj, zk, ztot):
    zj, zk, ztot = _i64(zj), _i64(zk), _i64(ztot)
    choice = np.empty(int(max_run) + 1, np.int64)
    cost = np.empty(int(max_run) + 1, np.int64)
    lib().lze_zero_run_dp(int(max_run), int(single), len(zj), _p(zj), _p(zk), _p(ztot), _ptr(choice), _ptr(cost))
    return choice, cost


def _lut_dp(freq, N, M, kmax):
    from lutzip.codec.encoder import CLASS_BITS, LUT3_BITS
    freq = _f64(freq)
    R = len(freq)
    best = np.empty((R + 1, M + 1))
    choice = np.empty((R + 1, M + 1), np.int64)
    lib().lze_lut_dp(R, _p(freq), float(N), int(M), int(kmax), float(CLASS_BITS), float(LUT3_BITS), _ptr(best),
                     _ptr(choice))
    return best, choice


def _trie_solve(F, K, left, right, N, W, c_res, M, nores, res, ch_nores, ch_res, keep_n=False, sat=None):
    """The trie DP; ``keep_n``: ``nores``/``ch_nores`` already hold this tree's values (they do not depend on
    ``c_res``): only ``res``/``ch_res`` are computed (the numba kernel computes both, the same values). ``sat``
    (int64, one per node): receives each node's saturation (the first budget from which its rows stay constant;
    what :func:`trie_solve_ref` needs of a base)."""
    from lutzip.codec.encoder import CLASS_BITS
    F, K, left, right = _f64(F), _f64(K), _i64(left), _i64(right)
    for a in (nores, res, ch_nores, ch_res):
        assert a.flags.c_contiguous and a.shape == (len(F), M + 1)
    if sat is not None:
        assert sat.dtype == np.int64 and sat.flags.c_contiguous and sat.shape == (len(F),)
    lib().lze_trie_solve(len(F), _p(F), _p(K), _p(left), _p(right), float(N), float(W), float(c_res), int(M),
                         float(CLASS_BITS), _p(nores), _p(res), _p(ch_nores), _p(ch_res), bool(keep_n),
                         None if sat is None else _p(sat))


def trie_same(F, left, right, Fb, leftb, rightb):
    """``same[i]``: the node of the trie ``(Fb, leftb, rightb)`` whose subtree is node ``i``'s of the trie ``(F,
    left, right)`` (the same place, counts and shape below; both of one ``W``, :func:`trie_tree` order), else -1."""
    F, left, right, Fb, leftb, rightb = _f64(F), _i64(left), _i64(right), _f64(Fb), _i64(leftb), _i64(rightb)
    n = len(F)
    same, scratch = np.empty(n, np.int64), np.empty(n, np.int64)
    lib().lze_trie_same(n, _p(F), _p(left), _p(right), len(Fb), _p(Fb), _p(leftb), _p(rightb), _p(scratch),
                        _p(same))
    return same


def trie_solve_ref(F, K, left, right, N, W, c_res, M, nores, res, ch_nores, ch_res, sat, same, base):
    """The trie DP (both tables) of a tree whose nodes with ``same[i] >= 0`` (:func:`trie_same`) are read from
    ``base = (nores, res, sat)`` of a full DP of that tree (the same ``N``, ``W``, ``c_res``, a budget of at least
    ``M``): those nodes' rows here are left unwritten; walk with :func:`trie_walker` given ``same`` and the base's
    choices. The values and choices of the other nodes are the full DP's."""
    from lutzip.codec.encoder import CLASS_BITS
    F, K, left, right, same = _f64(F), _f64(K), _i64(left), _i64(right), _i64(same)
    n = len(F)
    for a in (nores, res, ch_nores, ch_res):
        assert a.flags.c_contiguous and a.shape == (n, M + 1)
    bn, br, bsat = base
    Mb = bn.shape[1] - 1
    # (same[] holds node indices of the base's tree: lze_trie_same's, whose tables these are)
    assert Mb >= M and br.shape == bn.shape and bn.flags.c_contiguous and br.flags.c_contiguous
    assert bsat.dtype == np.int64 and bsat.shape == (bn.shape[0],) and len(same) == n
    lib().lze_trie_solve_ref(n, _p(F), _p(K), _p(left), _p(right), float(N), float(W), float(c_res), int(M),
                             float(CLASS_BITS), _p(nores), _p(res), _p(ch_nores), _p(ch_res), _p(sat), _p(same),
                             int(Mb), _ptr(bn), _ptr(br), _ptr(bsat))


def _zrun_symbols_kernel(runs, ks):
    runs, ks = _i64(runs), _i64(ks)
    out = np.empty(len(ks), np.int64)
    lib().lze_zrun_symbols(len(runs), _p(runs), len(ks), _p(ks), _p(out))
    return out


def zrun_symbols_sets(runs, sets):
    """``encoder._zrun_symbols`` of each set of ``sets`` (non-empty tuples) in one call: a list of ``{k: count}``
    dicts, keys largest first (as ``_zrun_symbols`` makes them)."""
    runs = _i64(runs)
    desc = [sorted(x, reverse=True) for x in sets]
    off = np.zeros(len(sets) + 1, np.int64)
    np.cumsum([len(x) for x in desc], out=off[1:])
    ks = np.fromiter(_itchain.from_iterable(desc), np.int64, int(off[-1]))
    out = np.zeros(int(off[-1]), np.int64)
    lib().lze_zrun_symbols_sets(len(runs), _p(runs), len(sets), _ptr(off), _p(ks), _p(out))
    o, c = off.tolist(), out.tolist()
    return [dict(zip(d, c[o[t]:o[t + 1]])) for t, d in enumerate(desc)]


def layout_runs(mask: np.ndarray, orders, cap: int):
    """:func:`lutzip.codec.layout.run_counts` of ``mask.transpose(axes).reshape(-1)`` for every ``axes`` of
    ``orders`` (the same int64 arrays), without the transposing copies: ``mask`` a C-contiguous bool array of
    1 to 4 axes, ``cap`` a power of two. ``None`` without the C library."""
    lb = lib()
    if lb is None:
        return None
    mask = np.ascontiguousarray(mask, np.bool_)
    nd, n = mask.ndim, mask.size
    assert 1 <= nd <= 4 and cap > 0 and cap & (cap - 1) == 0
    perms = np.array(orders, np.int64).reshape(-1, nd)
    maxout = min(cap - 1, math.isqrt(2 * n) + 1) + 1    # distinct run lengths r: 1 + 2 + .. + r <= n
    out = np.empty((len(perms), maxout), np.int64)
    nout = np.empty(len(perms), np.int64)
    bytes_, shape, hist = mask.view(np.uint8), np.array(mask.shape, np.int64), np.zeros(cap, np.int64)
    buf = np.empty(n + 1, np.int64)
    if lb.lze_layout_runs(_ptr(bytes_), nd, _ptr(shape), len(perms), _p(perms), cap.bit_length() - 1, _ptr(hist),
                          _ptr(buf), maxout, _p(out), _ptr(nout)):
        raise AssertionError("layout_runs: more run lengths than bound")
    return [out[p, :k] for p, k in enumerate(nout.tolist())]


def zrun_approx(runs, maxk, n_nonzero, floor):
    """The zero-run candidates' estimate of every set of one and of two ZRUN index lengths from ``0..maxk``
    (``encoder._zrun_candidates``' ``approx``, the same floats): ``(single[k], pair[a, b])`` for ``a < b``."""
    from lutzip.codec.encoder import CLASS_BITS
    runs = _i64(runs)
    K = int(maxk) + 1
    single = np.empty(K)
    pair = np.full((K, K), np.nan)
    lib().lze_zrun_approx(len(runs), _p(runs), int(maxk), int(n_nonzero), float(floor), float(CLASS_BITS),
                          _ptr(single), _ptr(pair))
    if K and np.isnan(single[0]):
        raise MemoryError("zrun_approx: no memory")
    return single, pair


def zrun_candidates(runs, maxk, n_nonzero, per_size, limit=-1):
    """``encoder._zrun_candidates_iter``'s sets after ``()``, in its order (the same estimates, sorts and sets), at
    most ``limit`` of them (-1: all), in one call (``lze_zrun_candidates``): a list of tuples."""
    from lutzip.codec.encoder import CLASS_BITS
    runs = _i64(runs)
    out = np.zeros(6 * max(int(per_size), 0) + 1, np.uint32)
    n = lib().lze_zrun_candidates(len(runs), _p(runs), int(maxk), int(n_nonzero), int(per_size), int(limit),
                                  float(CLASS_BITS), _ptr(out))
    if n < 0:
        raise MemoryError("zrun_candidates: no memory")
    return [tuple(k for k in range(32) if m >> k & 1) for m in out[:n].tolist()]


def zrun_approx_sets(runs, sets, n_nonzero, floor):
    """``encoder._zrun_candidates``' ``approx`` of each set of ZRUN index lengths in ``sets`` (tuples of one size),
    the same floats, in one call: a list of floats."""
    from lutzip.codec.encoder import CLASS_BITS
    if not sets:
        return []
    runs = _i64(runs)
    ks = np.array([sorted(x, reverse=True) for x in sets], np.int64)
    out = np.empty(len(sets))
    lib().lze_zrun_approx_sets(len(runs), _p(runs), len(sets), ks.shape[1], _ptr(ks), int(n_nonzero), float(floor),
                               float(CLASS_BITS), _ptr(out))
    if np.isnan(out).any():
        raise ValueError("zrun_approx_sets: 1 to 16 index lengths a set")
    return out.tolist()


def score_parts(off, F, ks, lut3, L, lut3_bits):
    """The grouped design's partition scores (``encoder._Grouped._score``, the same floats) in one call: part
    ``p`` has the classes ``off[p]:off[p + 1]`` of ``F`` / ``ks`` and ``lut3[p]`` LUT3 entries."""
    from lutzip.codec.encoder import CLASS_BITS
    off, ks, lut3, F = _i64(off), _i64(ks), _i64(lut3), _f64(F)
    out = np.empty(len(off) - 1)
    if lib().lze_score_parts(len(out), _ptr(off), _p(F), _p(ks), _p(lut3), int(L), float(CLASS_BITS),
                             float(lut3_bits), _p(out)):
        raise MemoryError("score_parts: no memory")
    return out


def _package_merge(w, L):
    w = _f64(w)
    out = np.empty(len(w), np.int64)
    if lib().lze_package_merge(len(w), _p(w), int(L), _p(out)):
        raise MemoryError("package-merge: no memory")
    return out


def _group_dp(freq, M, kmax, mu, L, W, class_bits, lut3_bits):
    freq = _f64(freq)
    R = len(freq)
    best = np.empty((R + 1, M + 1))
    ch = np.empty((R + 1, M + 1), np.int64)
    start = np.empty((R + 1, M + 1), np.int64)
    lib().lze_group_dp(R, _p(freq), int(M), int(kmax), float(mu), int(L), int(W), float(class_bits),
                       float(lut3_bits), _ptr(best), _ptr(ch), _ptr(start))
    return best, ch, start


def group_dp_grid(freq, M, kmax, mus, L, W, class_bits, lut3_bits):
    """:func:`_group_dp` at every multiplier of ``mus`` in one call: ``(best, ch, start)`` of shape ``(len(mus),
    R + 1, M + 1)``, ``[g]`` the tables of ``_group_dp(..., mus[g], ...)`` (the same values)."""
    freq, mus = _f64(freq), _f64(mus)
    R, G = len(freq), len(mus)
    best = np.empty((G, R + 1, M + 1))
    ch = np.empty((G, R + 1, M + 1), np.int64)
    start = np.empty((G, R + 1, M + 1), np.int64)
    if lib().lze_group_dp_grid(R, _p(freq), int(M), int(kmax), G, _p(mus), int(L), int(W), float(class_bits),
                               float(lut3_bits), _p(best), _p(ch), _p(start)):
        raise MemoryError("grouped DP: no memory")
    return best, ch, start


def group_walk(best, ch, start, pre, Mv, Wp1):
    """The partitions of :func:`group_dp_grid`'s tables (``encoder._Grouped.partitions``' walks): for every
    multiplier ``g`` None (no partition within ``Mv`` classes) or ``(blocks, residual F)``, ``blocks`` a list of
    ``(k, F, first rank)`` in rank order; ``F = pre[i] - pre[s0]``, the residual block has index length ``Wp1``."""
    G, R1, M1 = best.shape
    pre = _f64(pre)
    nb, resF = np.empty(G, np.int64), np.empty(G)
    bk, bs, bF = np.empty((G, M1), np.int64), np.empty((G, M1), np.int64), np.empty((G, M1))
    if lib().lze_group_walk(R1 - 1, M1 - 1, G, _ptr(best), _ptr(ch), _ptr(start), _ptr(pre), int(Mv), int(Wp1),
                            _ptr(nb), _ptr(resF), _ptr(bk), _ptr(bF), _ptr(bs)):
        raise RuntimeError("grouped DP: the tables do not walk back")
    out = []
    nbl, rl, bkl, bFl, bsl = nb.tolist(), resF.tolist(), bk.tolist(), bF.tolist(), bs.tolist()
    for g in range(G):
        n = nbl[g]
        if n < 0:
            out.append(None)
            continue
        out.append((list(zip(bkl[g][n - 1::-1] if n else [], bFl[g][n - 1::-1] if n else [],
                             bsl[g][n - 1::-1] if n else [])), rl[g]))
    return out


def _zrun_parse_counts(runs, single, zk, ztot):
    runs, zk, ztot = _i64(runs), _i64(zk), _i64(ztot)
    out = np.empty(len(zk) + 1, np.int64)
    if lib().lze_zrun_parse_counts(len(runs), _p(runs), int(single), len(zk), _p(zk), _p(ztot), _ptr(out)):
        raise MemoryError("zero-run parse: no memory")
    return out


def _zrun_estimate(runs, zk, tabcol, mus, L, rounds, class_bits):
    runs, zk, tabcol, mus = _i64(runs), _i64(zk), _f64(tabcol), _f64(mus)
    g = np.zeros(1, np.int64)
    zF = np.empty(len(zk))
    d = lib().lze_zrun_estimate(len(runs), _p(runs), len(zk), _p(zk), _p(tabcol), len(mus), _p(mus), int(L),
                                int(rounds), float(class_bits), _ptr(g), _p(zF))
    return d, int(g[0]), zF


def zrun_estimate_sets(runs, sets, tab, mus, L, rounds, class_bits):
    """:func:`_zrun_estimate`'s dual value of every ZRUN set of ``sets`` (tuples) in one call, each at its own table
    column ``tab[:, M - len(set)]`` (``tab``: the grid's ``(G, M + 1)`` table; inf where that is negative), as
    ``encoder._Grouped.estimate`` gives it: a list of floats."""
    if not sets:
        return []
    runs, tab, mus = _i64(runs), _f64(tab), _f64(mus)
    off = np.zeros(len(sets) + 1, np.int64)
    np.cumsum([len(x) for x in sets], out=off[1:])
    zks = np.fromiter(_itchain.from_iterable(sets), np.int64, int(off[-1]))
    out = np.empty(len(sets))
    G, M1 = tab.shape
    rc = lib().lze_zrun_estimate_sets(len(runs), _p(runs), len(sets), _ptr(off), _p(zks), _ptr(tab), M1 - 1, G,
                                      _ptr(mus), int(L), int(rounds), float(class_bits), _ptr(out))
    if rc == -1:
        raise ValueError("zrun_estimate_sets: more than 32 index lengths in a set")
    if rc:
        raise MemoryError("zrun_estimate_sets: no memory")
    return out.tolist()


def zrun_sets(runs, maxk, M, max_z, beam, keep, exhaustive, tab, mus, L, class_bits):
    """``encoder._Grouped.zrun_sets``' search in one call (``lze_zrun_sets``: the same estimates, the same sets):
    ``[(ks, dual, grid index, zF)]`` of the ``keep`` best sets, each re-estimated with 3 rounds, or None where
    the Python search must decide (two sets with the same least estimate: its choice follows a set's order)."""
    runs, tab, mus = _i64(runs), _f64(tab), _f64(mus)
    G, M1 = tab.shape
    keep = max(int(keep), 0)
    om, od = np.zeros(keep + 1, np.uint32), np.empty(keep + 1)
    og, oz = np.zeros(keep + 1, np.int64), np.empty((keep + 1, 32))
    n = lib().lze_zrun_sets(len(runs), _p(runs), int(maxk), M1 - 1, int(max_z), int(beam), keep, int(exhaustive),
                            _ptr(tab), G, _ptr(mus), int(L), float(class_bits), _ptr(om), _ptr(od), _ptr(og),
                            _ptr(oz))
    if n == -2:
        return None
    if n < 0:
        raise MemoryError("zrun_sets: no memory")
    out = []
    for s in range(n):
        m = int(om[s])
        ks = tuple(k for k in range(32) if m >> k & 1)
        out.append((ks, float(od[s]), int(og[s]), oz[s, :len(ks)].copy()))
    return out


def grouped_parts(parts):
    """The flattened arrays of a list of grouped partitions (``encoder._Grouped.partitions``) for
    :func:`grouped_designs`: ``(poff, k, F, first rank, residual F, most LUT3 entries of a part)``."""
    poff = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([len(b) for b, _r in parts], out=poff[1:])
    blocks = [x for b, _r in parts for x in b]
    bk = np.array([x[0] for x in blocks], np.int64)
    bF = np.array([x[1] for x in blocks], np.float64)
    bs = np.array([x[2] for x in blocks], np.int64)
    resF = np.array([r for _b, r in parts], np.float64)
    cap3 = max([sum(1 << x[0] for x in b) for b, _r in parts], default=0)
    return poff, bk, bF, bs, resF, max(cap3, 1)


def group_parts(best, ch, start, pre, Mv, Wp1):
    """:func:`group_walk`'s partitions without repeats (``encoder._Grouped.partitions``: the same list, in grid
    order) as :func:`grouped_parts` gives them, in one call (``lze_group_parts``)."""
    G, R1, M1 = best.shape
    pre = _f64(pre)
    poff = np.empty(G + 1, np.int64)
    bk, bs, bF = np.empty(G * M1, np.int64), np.empty(G * M1, np.int64), np.empty(G * M1)
    resF = np.empty(G)
    n = lib().lze_group_parts(R1 - 1, M1 - 1, G, _ptr(best), _ptr(ch), _ptr(start), _ptr(pre), int(Mv), int(Wp1),
                              _ptr(poff), _ptr(bk), _ptr(bF), _ptr(bs), _ptr(resF))
    if n < 0:
        raise RuntimeError("grouped DP: the tables do not walk back")
    poff = poff[:n + 1].copy()
    m = int(poff[-1])
    c = np.zeros(m + 1, np.int64)
    np.cumsum(np.left_shift(1, bk[:m]), out=c[1:])
    cap3 = max(1, int((c[poff[1:]] - c[poff[:-1]]).max()) if n else 1)      # the most LUT3 entries of a part
    return poff, bk[:m].copy(), bF[:m].copy(), bs[:m].copy(), resF[:n].copy(), cap3


def grouped_designs(flat, R, order, W, L, lut3_max, zks, zF, iters, top, class_bits, lut3_bits, head_bits, lut3w,
                    runs, sargs):
    """``encoder._Grouped.designs`` of the ZRUN set ``zks`` (run symbol counts ``zF``) over the partitions ``flat``
    (:func:`grouped_parts`) in one call (``lze_grouped_designs``): a list of ``(classes, lens, lut3, total bits)``
    in the order the Python loop yields them (the same floats), or None where the Python path must decide."""
    poff, bk, bF, bs, resF, cap3 = flat
    nz = len(zks)
    zk = np.array(zks, np.int64)
    zFa = np.array(zF, np.float64)          # (a copy: the kernel re-estimates it in place)
    runs = _i64(runs)
    nd = iters * top
    nc, n3, bits = np.empty(nd, np.int64), np.empty(nd, np.int64), np.empty(nd)
    cls, lens, lut3 = np.empty((nd, 16, 3), np.int64), np.empty((nd, 16), np.int64), np.empty((nd, cap3), np.uint16)
    r = lib().lze_grouped_designs(len(resF), _ptr(poff), _p(bk), _p(bF), _p(bs), _ptr(resF), int(R), _ptr(order),
                                  int(W), int(L), int(lut3_max), nz, _p(zk), _p(zFa), int(iters), int(top),
                                  float(class_bits), float(lut3_bits), int(head_bits), int(lut3w), len(runs),
                                  _p(runs), *sargs[0], int(cap3), _ptr(nc), _ptr(cls), _ptr(lens), _ptr(n3),
                                  _ptr(lut3), _ptr(bits))
    if r == -2:
        return None
    if r < 0:
        raise MemoryError("grouped designs: no memory")
    ncl, n3l, bl = nc.tolist(), n3.tolist(), bits.tolist()
    return [([tuple(x) for x in cls[d, :ncl[d]].tolist()], lens[d, :ncl[d]].tolist(), lut3[d, :n3l[d]].copy(),
             bl[d]) for d in range(r)]


def grouped_all(hist, runs, W, L, M, lut3_max, effort, max_lut_k, max_zrun_k, class_bits, lut3_bits, head_bits,
                lut3w, mus_t0, mus_t1, mus_z, sargs):
    """``encoder._grouped_candidates`` in one call (``lze_grouped_all``: the grouped designs with zeros as a value,
    the ZRUN set search, each kept set's designs): a list of ``(classes, lens, lut3, total bits)`` in the order the
    Python generator yields them (the same floats), or None where the Python path must decide. ``mus_*``: the
    grids' multipliers as ``_Grouped.table`` (with and without zeros as a value) and ``zrun_sets`` make them."""
    hist, runs = _i64(hist), _i64(runs)
    mus_t0, mus_t1, mus_z = _f64(mus_t0), _f64(mus_t1), _f64(mus_z)
    G = len(mus_z)
    assert len(mus_t0) == G and len(mus_t1) == G and len(hist) == 1 << W
    nv = int(np.count_nonzero(hist))
    cap3 = 4 * nv + 64                       # (a part's LUT3 holds at most 3 R entries)
    nd = 16                                  # (2 rounds x 2 designs, zeros as a value and up to 3 ZRUN sets)
    nc, n3, bits = np.empty(nd, np.int64), np.empty(nd, np.int64), np.empty(nd)
    cls, lens, lut3 = np.empty((nd, 16, 3), np.int64), np.empty((nd, 16), np.int64), np.empty((nd, cap3), np.uint16)
    r = lib().lze_grouped_all(int(W), _ptr(hist), len(runs), _ptr(runs), int(L), int(M), int(lut3_max), int(effort),
                              int(max_lut_k), int(max_zrun_k), float(class_bits), float(lut3_bits), int(head_bits),
                              int(lut3w), G, _ptr(mus_t0), _ptr(mus_t1), _ptr(mus_z), *sargs[0], nd, cap3,
                              _ptr(nc), _ptr(cls), _ptr(lens), _ptr(n3), _ptr(lut3), _ptr(bits))
    if r == -2:
        return None
    if r == -3:
        raise RuntimeError("grouped DP: the tables do not walk back")
    if r < 0:
        raise MemoryError("grouped designs: no memory")
    ncl, n3l, bl = nc.tolist(), n3.tolist(), bits.tolist()
    return [([tuple(x) for x in cls[d, :ncl[d]].tolist()], lens[d, :ncl[d]].tolist(), lut3[d, :n3l[d]].copy(),
             bl[d]) for d in range(r)]


def encode(flat, S, sym, has_zrun, zr_choice, zr_bits, zr_len, zr_k, out, stripe_words):
    """The stripe coder (``lze_encode``): ``flat`` uint8/uint16 words, ``sym[v] = bits << 8 | length``; returns
    the words written or ``-1 - i`` for an uncovered word ``i`` (as the numba ``_encode_kernel``)."""
    p = int(lib().lze_encode(_p(flat), flat.size, flat.dtype == np.uint16, int(S), _ptr(sym), bool(has_zrun),
                             _ptr(zr_choice), _ptr(zr_bits), _ptr(zr_len), _ptr(zr_k), _ptr(out), _p(stripe_words)))
    if p == LZE_NOMEM:
        raise MemoryError("stripe coder: no memory for its zero-run tables")
    return p


LZE_NOMEM = -(1 << 63)      # lze_encode: the run-code table or the zero bitmap could not be allocated


def trie_tree(vals, C, D, W, min_gain):
    """:func:`lutzip.codec.encoder._trie_tree` from the present values and the prefix sums of their counts
    (``C``) and of ``h log2 h`` (``D``): ``(keys, K, F, left, right)``."""
    vals, C, D = _i64(vals), _f64(C), _f64(D)
    cap = (int(W) + 1) * max(len(vals), 1) + 1
    keys, lo, hi, left, right = (_scratch(f"tree{j}", cap, np.int64) for j in range(5))
    K, F = _scratch("treeK", cap, np.float64), _scratch("treeF", cap, np.float64)
    n = lib().lze_trie_tree(len(vals), _p(vals), _p(C), _p(D), int(W), float(min_gain), cap, _ptr(keys), _ptr(K),
                            _ptr(F), _ptr(left), _ptr(right), _ptr(lo), _ptr(hi))
    if n < 0:
        raise MemoryError("trie: more nodes than values times levels")
    return keys[:n].copy(), K[:n].copy(), F[:n].copy(), left[:n].copy(), right[:n].copy()


def trie_tree_sub(vals, h, hl, keep, W, min_gain):
    """:func:`trie_tree` of the values ``vals[keep != 0]`` (all when ``keep`` is None), from their counts ``h``
    and ``hl = h * log2(h)`` (float64, numpy's elementwise values): the prefix sums are summed in C in numpy's
    order, so the tree is the one of ``trie_tree(vals[keep], ...)`` with numpy's prefix sums."""
    vals, h, hl = _i64(vals), _f64(h), _f64(hl)
    nk = len(vals) if keep is None else int(len(vals) - np.count_nonzero(keep == 0))
    cap = (int(W) + 1) * max(nk, 1) + 1
    keys, lo, hi, left, right = (_scratch(f"tree{j}", cap, np.int64) for j in range(5))
    K, F = _scratch("treeK", cap, np.float64), _scratch("treeF", cap, np.float64)
    n = lib().lze_trie_tree_sub(len(vals), _p(vals), _p(h), _p(hl), None if keep is None else _ptr(keep), int(W),
                                float(min_gain), cap, _ptr(keys), _ptr(K), _ptr(F), _ptr(left), _ptr(right), _ptr(lo),
                                _ptr(hi))
    if n < 0:
        raise MemoryError("trie: more nodes than values times levels" if n == -1 else "trie: no memory")
    return keys[:n].copy(), K[:n].copy(), F[:n].copy(), left[:n].copy(), right[:n].copy()


def symbols(size, kinds, ks, params, totals, codes, lut3):
    """:func:`lutzip.codec.bitstream.symbol_table` as one array ``bits << 8 | length`` (0: not covered)."""
    kinds, ks, params, totals, codes, lut3 = map(_i64, (kinds, ks, params, totals, codes, lut3))
    sym = np.empty(int(size), np.uint64)
    lib().lze_symbols(int(size), len(kinds), _p(kinds), _p(ks), _p(params), _p(totals), _p(codes), _p(lut3),
                      _ptr(sym))
    return sym


def trie_walker(chn, chr_, keys, K, F, left, right, same=None, base_ch=None):
    """The classes of trie DP solutions (the ``solve`` of :func:`lutzip.codec.encoder._trie_dp`): returns
    ``walk(residual, m) -> ([(base, k, F)...], F of the residual)`` over the choices ``chr_`` (residual) or
    ``chn``; the arrays' addresses are taken once (``walk`` is called for every class budget)."""
    keys, left, right = _i64(keys), _i64(left), _i64(right)
    K, F = _f64(K), _f64(F)
    chn, chr_ = np.ascontiguousarray(chn, np.int64), np.ascontiguousarray(chr_, np.int64)
    n, M1 = chn.shape
    base, ks = np.empty(n, np.int64), np.empty(n, np.int64)
    Fo, fres = np.empty(n), np.zeros(1)
    keep = (keys, left, right, K, F, chn, chr_, base, ks, Fo, fres)      # alive as long as the closure
    fn = lib().lze_trie_walk
    head = (n, M1 - 1)
    tail = (_ptr(keys), _ptr(K), _ptr(F), _ptr(left), _ptr(right))
    outs = (_ptr(base), _ptr(ks), _ptr(Fo), _ptr(fres))
    pn, pr = _ptr(chn), _ptr(chr_)
    ref_n = ref_r = ()
    if same is not None:                # choices of the nodes with same[i] >= 0 from the base's tables
        same = _i64(same)
        bcn, bcr = base_ch
        assert bcn.flags.c_contiguous and bcr.flags.c_contiguous and bcn.shape == bcr.shape and bcn.dtype == np.int64
        assert bcr.dtype == np.int64 and len(same) == n
        keep = keep + (same, bcn, bcr)
        fn = lib().lze_trie_walk_ref
        ref_n = (_ptr(same), bcn.shape[1] - 1, _ptr(bcn))
        ref_r = (_ptr(same), bcn.shape[1] - 1, _ptr(bcr))

    def walk(residual, m):
        fres[0] = 0.0
        cnt = fn(*head, pr if residual else pn, *tail, int(m), *outs, *(ref_r if residual else ref_n))
        if cnt < 0:
            raise MemoryError("trie walk: no memory")
        return list(zip(base[:cnt].tolist(), ks[:cnt].tolist(), Fo[:cnt].tolist())), float(fres[0])
    walk.keep = keep
    return walk


def lengths_at(vals, kinds, ks, params, totals, lut3):
    """``_lengths(...)[vals]`` for the sorted values ``vals``, without the ``2^W`` table."""
    vals, kinds, ks, params, totals, lut3 = map(_i64, (vals, kinds, ks, params, totals, lut3))
    out = np.empty(len(vals), np.int64)
    lib().lze_lengths_at(len(vals), _p(vals), len(kinds), _p(kinds), _p(ks), _p(params), _p(totals), _p(lut3),
                         _p(out))
    return out


def stats_args(with0, off, counts, runs, hist0, n_stripes):
    """The arguments of :func:`exact_bits` that belong to one statistics (``encoder.Stats``), pointers taken once:
    ``with0`` the sorted present values with zero first (``off`` = 1 when zero itself is absent), ``counts``
    the present values' counts, ``runs`` the zero-run histogram, ``hist0`` the zero words."""
    with0, runs = _i64(with0), _i64(runs)
    cum = np.zeros(len(with0) + 1, np.int64)
    np.cumsum(counts, out=cum[1 + int(off):])
    return ((len(with0), _ptr(with0), int(off), _ptr(cum), len(runs), _p(runs), int(hist0), int(n_stripes)),
            (with0, cum, runs))


def exact_bits(cls, lut3, sargs):
    """``encoder.exact_bits`` in one call (``lze_exact_bits``): ``cls`` the table set's classes as rows
    ``(kind, k, param, total)`` (int64, C order), ``lut3`` its LUT3 (uint16), ``sargs`` :func:`stats_args`;
    returns the payload bits, ``inf`` when a present value is not covered."""
    r = lib().lze_exact_bits(len(cls), _ptr(cls), _p(lut3), *sargs[0])
    if r < 0:
        raise MemoryError("exact bits: no memory")
    return math.inf if r >= INF else r


class ExactBitsMany:
    """:func:`exact_bits` of one statistics under each of a list of table sets in one call
    (``lze_exact_bits_many``): :meth:`add` a set's ``(cls, lut3)`` arrays (kept alive here), :meth:`bits` of
    statistics ``sargs`` (:func:`stats_args`) gives every set's payload bits in the order added."""

    def __init__(self):
        self._keep, self._n, self._cp, self._lp = [], [], [], []
        self._arrays = None

    def __len__(self):
        return len(self._n)

    def add(self, cls, lut3):
        assert cls.dtype == np.int64 and cls.flags.c_contiguous and cls.shape[1:] == (4,)
        assert lut3.dtype == np.uint16 and lut3.flags.c_contiguous
        self._keep.append((cls, lut3))
        self._n.append(len(cls))
        self._cp.append(_ptr(cls))
        self._lp.append(_p(lut3) or 0)
        self._arrays = None

    def bits(self, sargs):
        if self._arrays is None:
            self._arrays = (np.array(self._n, np.int64), np.array(self._cp, np.uint64), np.array(self._lp, np.uint64),
                            np.empty(len(self._n)))
        n, cp, lp, out = self._arrays
        if lib().lze_exact_bits_many(len(n), _p(n), _p(cp), _p(lp), *sargs[0], _p(out)):
            raise MemoryError("exact bits: no memory")
        return [math.inf if b >= INF else b for b in out.tolist()]


_chain = _itchain.from_iterable


def design_bits(classes, freqs, L, lut3, sargs):
    """``encoder._design``'s code lengths and ``exact_bits`` of the design in one call (``lze_design_bits``):
    ``classes`` the ``(kind, k, param)`` tuples, ``freqs`` their frequencies (rounded half to even, at least 1,
    package-merge over them), ``lut3`` uint16, ``sargs`` :func:`stats_args`. Returns ``(lens, payload bits)``
    (``inf`` when a present value is not covered), or None where the Python path decides (over 16 or 2^L
    classes)."""
    n = len(classes)
    cls3 = np.fromiter(_chain(classes), np.int64, 3 * n)
    fr = np.array(freqs, np.float64)
    lens = np.empty(n, np.int64)
    r = lib().lze_design_bits(n, _p(cls3), _p(fr), int(L), _p(lens), _p(lut3), *sargs[0])
    if r == -2.0:
        return None
    if r < 0:
        raise MemoryError("design bits: no memory")
    return lens.tolist(), (math.inf if r >= INF else r)


def design_lut(vals, h, hl, pos, t, W, min_gain, N, Mv, class_bits, L, lut_row, lut_choice, order, hord, zruns,
               ref_min, base1, bases2, sargs):
    """``encoder._ZDesign.designs(t)`` for ``t > 0`` in one call (``lze_design_lut``): the trie of the values left
    (``vals`` without the ranks ``pos[:t]``; ``h``, ``hl`` as :func:`trie_tree_sub`'s), the rounds of trie DP,
    budget split, walk, LUT groups (``lut_row``, ``lut_choice`` of the LUT DP over ``order`` with counts ``hord``)
    and design, the same floats. ``zruns``: ``[(k, F)]``; ``base1``: round 1's base (``encoder._trie_dp``'s
    ``solve.base``, its work arrays checked still valid) or None; ``bases2``: ``{c_res: base}`` of round 2.
    Returns a list of ``(classes, lens, lut3, payload bits)``, or None where the Python path must decide."""
    bases = ([base1] if base1 is not None else []) + list(bases2.values())
    nb = len(bases)
    bcres = np.array(([12.0] if base1 is not None else []) + [float(c) for c in bases2], np.float64)
    bnn, bM = np.empty(nb, np.int64), np.empty(nb, np.int64)
    bptr = np.empty(8 * nb, np.uint64)
    for j, ((bF, bl, br), (bn, brs, bcn, bcr, bsat), _g) in enumerate(bases):
        bnn[j], bM[j] = len(bF), bn.shape[1] - 1
        bptr[8 * j:8 * j + 8] = [_ptr(a) for a in (bF, bl, br, bn, brs, bcn, bcr, bsat)]
    zk = np.array([k for k, _F in zruns], np.int64)
    zF = np.array([F for _k, F in zruns], np.float64)
    lut_row = _f64(lut_row)
    assert lut_choice.dtype == np.int64 and lut_choice.flags.c_contiguous and lut_choice.shape[1] == Mv + 1
    assert pos.dtype == np.int64 and order.dtype == np.int64 and hord.dtype == np.int64 and len(order) >= t
    nc, n3, bits = np.empty(2, np.int64), np.empty(2, np.int64), np.empty(2)
    cls, lens, lut3 = np.empty((2, 16, 3), np.int64), np.empty((2, 16), np.int64), np.empty((2, max(t, 1)), np.uint16)
    r = lib().lze_design_lut(len(vals), _p(vals), _p(h), _p(hl), _p(pos), int(t), int(W), float(min_gain), float(N),
                             int(Mv), float(class_bits), int(L), _ptr(lut_row), _ptr(lut_choice), _ptr(order),
                             _ptr(hord), len(zk), _p(zk), _p(zF), int(ref_min), base1 is not None, nb, _p(bcres),
                             _p(bnn), _p(bM), _p(bptr), *sargs[0], _ptr(nc), _ptr(cls), _ptr(lens), _ptr(n3),
                             _ptr(lut3), _ptr(bits))
    if r == -2:
        return None
    if r == -3:
        raise MemoryError("trie: more nodes than values times levels")
    if r < 0:
        raise MemoryError("design: no memory")
    out = []
    for d in range(r):
        c = int(nc[d])
        b = float(bits[d])
        out.append(([tuple(x) for x in cls[d, :c].tolist()], lens[d, :c].tolist(), lut3[d, :int(n3[d])].copy(),
                    math.inf if b >= INF else b))
    return out


def design_bits_batch(off, classes, freqs, L, sargs):
    """:func:`design_bits` of several designs without LUT3 in one call (``lze_design_bits_batch``): design ``d`` has
    the classes ``classes[d]`` (``(kind, k, param)`` tuples) and the frequencies ``freqs[off[d]:off[d + 1]]``.
    Returns ``(lens, bits)``: the code lengths of all classes in one list (at ``off``), each design's payload bits
    (``inf`` when a present value is not covered; None where the Python path decides)."""
    nd = len(off) - 1
    n = off[-1]
    cls3 = np.fromiter(_chain(_chain(classes)), np.int64, 3 * n)
    fr = np.array(freqs, np.float64)
    offs = np.array(off, np.int64)
    lens = np.empty(n, np.int64)
    bits = np.empty(nd)
    if lib().lze_design_bits_batch(nd, _ptr(offs), _p(cls3), _p(fr), int(L), _p(lens), _ptr(bits), *sargs[0]):
        raise MemoryError("design bits: no memory")
    return lens.tolist(), [None if b == -2.0 else (math.inf if b >= INF else b) for b in bits.tolist()]


def row_modes(rows: np.ndarray, neg_float: int):
    """``(modes, good)``: :func:`lutzip.codec.rows.find_modes` of the ``R x N`` words ``rows`` (uint8 / uint16; a
    dtype of ``rows.ROW_DTYPES``, ``neg_float`` its ``rows.neg_flag``) and how many rows have a mode and a non-zero
    word (``rows.candidate``'s count), in one pass that stops at each row's first mismatch (``lze_row_modes``)."""
    rows = np.ascontiguousarray(rows)
    R, N = rows.shape
    modes = np.empty(R, np.uint8)
    good = lib().lze_row_modes(_p(rows), R, N, rows.dtype.itemsize == 2, int(neg_float), _p(modes))
    return modes, int(good)


def trie_part(W, L, M, lut3_max, effort, max_lut_k, class_bits, lut3_bits, head_bits, lut3w, ref_min, min_gain, vals,
              cnt, h, hl, n_words, max_zrun_k, per_size, best_bits, sargs, trace=None):
    """``encoder._design_tableset``'s trie half at effort 0 or 1 in one call (``lze_trie_part``): the zero-run
    candidates (``encoder._zrun_candidates_iter`` with ``per_size``, index lengths up to ``max_zrun_k``) and their run
    symbol counts, their designs without LUT classes, the screening, the best set's LUT sizes -- the same sets, DPs,
    designs and floats as the Python path, the
    bases of the LUT sizes' DPs where it has them (tables of at least :data:`SCRATCH_MIN` entries). ``vals``,
    ``cnt``: the present values and their counts; ``h``, ``hl``: the counts as float64 and ``h * log2(h)`` (numpy's).
    Returns ``(classes, lens, lut3, total bits)`` of the best design when it is smaller than ``best_bits``, ``()``
    when none is, None where the Python path must decide. ``trace`` (tests): a list that receives every design's total
    bits in the order the Python path considers them."""
    cap3 = max(len(vals), 1)
    nc, n3, bits = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)
    cls, lens, lut3 = np.empty((16, 3), np.int64), np.empty(16, np.int64), np.empty(cap3, np.uint16)
    tr, ntr = (np.empty(4096), np.full(1, 4096, np.int64)) if trace is not None else (None, None)
    r = lib().lze_trie_part(int(W), int(L), int(M), int(lut3_max), int(effort), int(max_lut_k), float(class_bits),
                            float(lut3_bits), int(head_bits), int(lut3w), int(ref_min), SCRATCH_MIN, float(min_gain),
                            len(vals), _ptr(vals), _ptr(cnt), _ptr(h), _ptr(hl), int(n_words), int(max_zrun_k),
                            int(per_size), float(best_bits), *sargs[0], cap3, _ptr(nc), _ptr(cls), _ptr(lens),
                            _ptr(n3), _ptr(lut3), _ptr(bits), None if tr is None else _ptr(tr),
                            None if ntr is None else _ptr(ntr))
    if r == -2:
        return None
    if trace is not None:
        assert ntr[0] <= len(tr)
        trace += [math.inf if b >= INF else b for b in tr[:int(ntr[0])].tolist()]
    if r == -3:
        raise MemoryError("trie: more nodes than values times levels")
    if r < 0:
        raise MemoryError("trie designs: no memory")
    if r == 0:
        return ()
    c = int(nc[0])
    b = float(bits[0])
    return ([tuple(x) for x in cls[:c].tolist()], lens[:c].tolist(), lut3[:int(n3[0])].copy(),
            math.inf if b >= INF else b)
