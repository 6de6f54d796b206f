"""The two-code-table encoder's C kernels (``_states.c``), compiled at first use and loaded with ctypes.

Each function here returns what the Python or numba code it replaces returns (:mod:`lutzip.codec.states`,
:mod:`lutzip.codec._statesnumba`; tested against them in tests/test_states_c.py): the code lengths and the
follow-set search of :func:`lutzip.codec.states.design`, the walk over one-table stripes, the literal classes, the
zero-run plan and the two-state stripe coder. With them ``states=2`` imports no numba and its design loop runs
in C. Built like the other kernels (:mod:`lutzip.codec.cbuild`) into ``lutzip.cache.cache_dir("states")``;
without a compiler, or with ``LUTZIP_STATES=0``, :func:`lib` is ``None`` and :mod:`lutzip.codec.states` uses the
Python / numba code.
"""
from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import numpy as np

from lutzip.codec import cbuild

SOURCE = Path(__file__).with_name("_states.c")
FLAGS = ["-O2", "-march=native", "-shared", "-fPIC", "-fvisibility=hidden"]

_lock = threading.Lock()
_state = {"tried": False, "lib": None, "why": None}


def _build(cc: str, dest: Path):
    cbuild.build(cc, SOURCE, dest / "_states.so", FLAGS)


def _configure(lib):
    vp, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    sig = {
        "lzs_lengths": ([i64, vp, i64, i32, vp], i32),
        "lzs_design": ([vp, i64, i64, i64, i32, i64, vp, vp, vp, vp], i32),
        "lzs_walk": ([vp, i64, vp, vp, i64, vp, i64, vp, vp, i64, vp, vp, vp, vp, vp, vp], i64),
        "lzs_literals": ([i64, i64, vp, vp, vp, vp, vp, i64, vp, vp, vp], i32),
        "lzs_run_dp": ([i64, i64, vp, vp, vp, vp, vp, vp, vp], None),
        "lzs_encode2": ([vp, i32, i64, i64, i64, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp], i64),
        "lzs_tokstats": ([vp, i32, i64, i64, i64, vp, i64, i64, vp, vp, vp, i64], i64),
        "lzs_tokeval": ([vp, i64, vp, vp, vp, vp, i64, vp, vp, vp, vp, vp, vp, vp, vp], i64),
    }
    for name, (args, res) in sig.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    return lib


def _load():
    return cbuild.load_kernel("states", "the C states kernels", SOURCE, FLAGS, _build, _configure, cbuild.compiler())


def lib():
    """The loaded C library (built on first call), or ``None`` when it cannot be built (:func:`why_not`)."""
    return cbuild.load_once(_state, _lock, _load)


def why_not():
    """Why the C kernels are not used (a short sentence), or ``None`` when they are."""
    lib()
    return _state["why"]


_cbuf, _addr = ctypes.c_char.from_buffer, ctypes.addressof


def _p(a: np.ndarray) -> int:
    """The address of an array's data, through the buffer protocol (about a fifth of ``cbuild.ptr``'s time);
    read-only or empty arrays take ``cbuild.ptr``."""
    try:
        return _addr(_cbuf(a))
    except (TypeError, ValueError, BufferError):
        return cbuild.ptr(a)


def _i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, np.int64)


def lengths(counts, L: int, every: bool) -> list:
    """:func:`lutzip.codec.states._lengths` (at most 16 counts, integers or floats below 2^53)."""
    c = np.ascontiguousarray(counts, np.float64)
    out = np.zeros(len(c), np.int64)
    rc = lib().lzs_lengths(len(c), _p(c), int(L), int(bool(every)), _p(out))
    if rc:
        from lutzip.errors import TableError
        raise TableError(f"{int((c > 0).sum())} classes cannot have codes of at most {L} bits")
    return out.tolist()


def design_search(pairs: np.ndarray, n: int, L: int, zr: int, greedy: bool, max_steps: int):
    """The follow set :func:`lutzip.codec.states.design` chooses and its ``(bits, lens_a, lens_b)``, or ``None``."""
    pr = _i64(pairs)
    if pr.shape != (17, 16):
        raise ValueError("design_search: pairs must be 17 x 16")
    F = np.zeros(1, np.int64)
    bits = np.zeros(1, np.int64)
    la = np.zeros(16, np.int64)
    lb = np.zeros(16, np.int64)
    rc = lib().lzs_design(_p(pr), int(n), int(L), int(zr), int(bool(greedy)), int(max_steps), _p(F), _p(bits),
                          _p(la), _p(lb))
    if rc == -2:
        raise MemoryError("states design: no memory")
    if rc:
        from lutzip.errors import TableError
        raise TableError(f"{n} classes cannot have codes of at most {L} bits")
    if not F[0]:
        return None
    return int(F[0]), int(bits[0]), la[:n].tolist(), lb[:n].tolist()


def walk(payload, starts, sw, lut1, L, kinds, ks, mode, nxt, codes, lens, out, out_sw, pairs) -> int:
    """``_statesnumba._walk_kernel`` (mode 0, 1; mode 2: mode 1's stripe words only, ``out`` not written)."""
    n = len(payload)
    padded = np.zeros(n + 2, np.uint32)            # the kernel reads up to two words past the last symbol's
    padded[:n] = payload
    return int(lib().lzs_walk(_p(padded), n, _p(starts), _p(sw), len(sw), _p(lut1), int(L), _p(kinds),
                              _p(ks), int(mode), _p(nxt), _p(codes), _p(lens), _p(out) if out is not None else None,
                              _p(out_sw), _p(pairs)))


def literals(word_bits: int, kinds, ks, params, totals, lut3):
    """:func:`lutzip.codec.states._literals`' ``(lit_cls, lit_idx)``; ``None`` where a class reads past LUT3 or
    codes a value out of range (the Python code would raise)."""
    size = 1 << int(word_bits)
    kinds, ks, params, totals = _i64(kinds), _i64(ks), _i64(params), _i64(totals)
    lut3 = np.ascontiguousarray(lut3, np.uint16)
    lit_cls = np.empty(size, np.int64)
    lit_idx = np.empty(size, np.int64)
    best = np.empty(size, np.int64)
    if lib().lzs_literals(size, len(kinds), _p(kinds), _p(ks), _p(params), _p(totals), _p(lut3), len(lut3),
                          _p(lit_cls), _p(lit_idx), _p(best)):
        return None
    return lit_cls, lit_idx


def run_dp(S, opt_cls, opt_cap, lens2, ks, nxt, g, ch):
    """``_statesnumba._run_dp`` (``g``, ``ch``: int64 arrays of shape (2, S + 1, 2), filled)."""
    lib().lzs_run_dp(int(S), len(opt_cls), _p(opt_cls), _p(opt_cap), _p(lens2), _p(ks), _p(nxt), _p(g), _p(ch))


def encode2(words, S, lit_cls, lit_idx, opt_cls, opt_cap, opt_lit, lens2, codes2, ks, nxt, g, ch, out, out_sw,
            pairs) -> int:
    """``_statesnumba._encode2_kernel`` on uint8 or uint16 words (``out`` None: only the stripe words and pairs;
    ``pairs`` None: the stripes only);
    ``lit_cls`` has an entry for every value of the words' width."""
    w = np.ascontiguousarray(words).reshape(-1)
    if w.dtype == np.uint8:
        wide = 0
    else:
        w = np.ascontiguousarray(w, np.uint16)
        wide = 1
    size = len(lit_cls)
    word_bits = size.bit_length() - 1
    if size != 1 << word_bits or (word_bits < 8 * w.itemsize and w.size and int(w.max()) >= size):
        raise ValueError("encode2: words wider than the literal table")
    rc = int(lib().lzs_encode2(_p(w), wide, len(w), word_bits, int(S), _p(lit_cls), _p(lit_idx), _p(opt_cls),
                               _p(opt_cap), _p(opt_lit), _p(lens2), _p(codes2), _p(ks), _p(nxt), _p(g), _p(ch),
                               _p(out) if out is not None else None, _p(out_sw),
                               _p(pairs) if pairs is not None else None))
    if rc == -(1 << 62):
        raise MemoryError("encode2: no memory")
    return rc


#: runs of at most this many zeros are counted in :func:`tokstats`' dense histogram, longer ones listed
RCAP = 64


def tokstats(words, S: int, lit_cls, step: int = 1):
    """The order-1 token statistics of ``words`` (uint8 or uint16) in stripes of ``S`` (``lzs_tokstats``):
    ``(ll, runs)`` with ``ll`` the literal class pairs (17 x 16, int64; row 16: at a stripe start) and ``runs``
    an int64 array of rows ``(a, b, r, count)``: ``count`` runs of ``r`` zeros after a literal of class ``a`` (16:
    the stripe start) and before one of class ``b`` (16: the stripe end). ``lit_cls``: the class of each value
    (-1: none; :func:`lutzip.codec.states._literals`). ``step``: only every ``step``-th stripe, from the first."""
    return tokstats_many([words], [S], [step], lit_cls)


def tokstats_many(words_list, S_list, steps, lit_cls):
    """:func:`tokstats` of several streams (each its words, stripe length and step) counted together."""
    lc = np.ascontiguousarray(lit_cls, np.int8)
    ll = np.zeros((17, 16), np.int64)
    rh = np.zeros((17, 17, RCAP + 1), np.int64)
    longs, R = [], 1
    for words, S, step in zip(words_list, S_list, steps):
        w = np.ascontiguousarray(words).reshape(-1)
        wide = 0 if w.dtype == np.uint8 else 1
        if wide:
            w = np.ascontiguousarray(w, np.uint16)
        n, S = int(w.size), int(S)
        R = max(R, S)
        cap = n // (RCAP + 1) + (-(-n // S) if n else 0) + 1
        lr = np.empty(3 * cap, np.int64)
        rc = int(lib().lzs_tokstats(_p(w), wide, n, S, max(int(step), 1), _p(lc), len(lc), RCAP, _p(ll), _p(rh),
                                    _p(lr), cap))
        if rc < -1 - n:
            raise AssertionError("tokstats: long-run list overflow")
        if rc < 0:
            from lutzip.errors import TableError
            raise TableError(f"word {-1 - rc} is not covered by a class of the table set")
        if rc:
            longs.append(lr[:3 * rc].reshape(rc, 3))
    a, b, r = np.nonzero(rh)
    dense = np.stack([a, b, r, rh[a, b, r]], 1)
    if longs:
        lr = np.concatenate(longs) if len(longs) > 1 else longs[0]
        key, cnt = np.unique((lr[:, 0] * 17 + lr[:, 1]) * (R + 1) + lr[:, 2], return_counts=True)
        ab, r = np.divmod(key, R + 1)
        a, b = np.divmod(ab, 17)
        dense = np.concatenate([dense, np.stack([a, b, r, cnt], 1)])
    return ll, np.asfortranarray(dense, np.int64)


def tokeval(ll, runs, S, opt_cls, opt_cap, lens2, ks, nxt, g, ch, pairs) -> int:
    """``lzs_tokeval``: the class-code and index bits of the tokens (:func:`tokstats`) coded with the two-state
    arrays (the run plan ``g`` / ``ch`` of :func:`run_dp` for stripes of ``S``), their class pairs added to
    ``pairs`` (17 x 16 int64); -1 when a literal has no code in its state."""
    runs = np.asarray(runs, np.int64).reshape(-1, 4)
    ra, rb, rr, rn = (np.ascontiguousarray(runs[:, i]) for i in range(4))     # no copies of a Fortran-order array
    if len(rr) and int(rr.max()) > S:
        raise ValueError("tokeval: a run longer than the stripe")
    ll = _i64(ll)
    return int(lib().lzs_tokeval(_p(ll), len(ra), _p(ra), _p(rb), _p(rr), _p(rn), int(S), _p(_i64(opt_cls)),
                                 _p(_i64(opt_cap)), _p(lens2), _p(ks), _p(nxt), _p(g), _p(ch), _p(pairs)))
