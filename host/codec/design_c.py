"""The class cut of :mod:`lutzip.codec.states_design` in C (``_design.c``), compiled at first use and loaded with
ctypes like the other kernels (:mod:`lutzip.codec.cbuild`, cache folder ``design``). :func:`cut` and :func:`join`
return what ``states_design._cut`` and the choice in ``states_design._partition`` compute in numpy (the same
operations in the same order; tests/test_design_c.py). Without a compiler, or with ``LUTZIP_DESIGN=0``,
:func:`lib` is ``None`` and :mod:`lutzip.codec.states_design` uses its numpy code.
"""
from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import numpy as np

from lutzip.codec import cbuild

SOURCE = Path(__file__).with_name("_design.c")
FLAGS = ["-O2", "-march=native", "-ffp-contract=off", "-shared", "-fPIC", "-fvisibility=hidden"]

_lock = threading.Lock()
_state = {"tried": False, "lib": None, "why": None}


def _build(cc: str, dest: Path):
    cbuild.build(cc, SOURCE, dest / "_design.so", FLAGS, libs=["-lm"])


def _configure(lib):
    vp, i64, i32, dbl = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_double
    lib.lzd_cut.argtypes = [vp, vp, i64, i64, i64, dbl, dbl, i32, i64, vp, vp]
    lib.lzd_cut.restype = i32
    lib.lzd_join.argtypes = [vp, i64, vp, i64, i64, vp, vp, vp, vp, dbl, dbl, i32, i64, vp, vp]
    lib.lzd_join.restype = i32
    lib.lzd_intervals.argtypes = [vp, i64, i64, vp, vp]
    lib.lzd_intervals.restype = i32
    lib.lzd_design.argtypes = [vp, vp, vp, i64, vp, i64, i64, i64, vp, vp, vp, i64, vp, vp, vp, vp]
    lib.lzd_design.restype = i32
    lib.lzd_pairs.argtypes = [vp, i32, i64, vp, vp, vp, vp]
    lib.lzd_pairs.restype = i32
    return lib


def _load():
    return cbuild.load_kernel("design", "the C class-cut kernels", SOURCE, FLAGS, _build, _configure,
                              cbuild.compiler())


def lib():
    """The loaded C library (built on first call), or ``None`` when it cannot be built."""
    return cbuild.load_once(_state, _lock, _load)


def _mu(mu):
    return (0.0, 0.0, 0) if mu[0] is None else (float(mu[0]), float(mu[1]), 1)


def cut(a, b, max_m: int, max_k: int, mu, L: int):
    """``states_design._cut(a, b, max_m, max_k, mu, L)``: ``(f, back)``."""
    a = np.ascontiguousarray(a, np.int64)
    b = np.ascontiguousarray(b, np.int64)
    n = len(a)
    f = np.empty((max_m + 1, n + 1), np.float64)
    back = np.empty((max_m + 1, n + 1, 2), np.int64)
    ma, mb, has = _mu(mu)
    if lib().lzd_cut(cbuild.ptr(a), cbuild.ptr(b), n, int(max_m), int(max_k), ma, mb, has, int(L),
                     cbuild.ptr(f), cbuild.ptr(back)):
        raise MemoryError("design cut: no memory")
    return f, back


def join(f1, f2, room: int, ta1, tb1, ta2, tb2, mu, L: int):
    """``(m1, i1, m2, i2)`` of ``states_design._partition``'s smallest total, or ``None``."""
    f1 = np.ascontiguousarray(f1, np.float64)
    f2 = np.ascontiguousarray(f2, np.float64)
    t = [np.ascontiguousarray(x, np.float64) for x in (ta1, tb1, ta2, tb2)]
    out = np.zeros(4, np.int64)
    cost = np.zeros(1, np.float64)
    ma, mb, has = _mu(mu)
    rc = lib().lzd_join(cbuild.ptr(f1), f1.shape[1] - 1, cbuild.ptr(f2), f2.shape[1] - 1, int(room),
                        *(cbuild.ptr(x) for x in t), ma, mb, has, int(L), cbuild.ptr(out), cbuild.ptr(cost))
    if rc == -2:
        raise MemoryError("design join: no memory")
    if rc:
        return None
    return tuple(int(x) for x in out)


def interval_costs(P, total):
    """``states_design.intervals``' cost of every interval of rows ``[lo, hi)`` (``P``: (R + 1) x C prefix sums of
    the rows' counts, ``total``: the columns' counts), in ``numpy.triu_indices(R + 1, 1)`` order."""
    P = np.ascontiguousarray(P, np.int64)
    total = np.ascontiguousarray(total, np.int64)
    R, C = P.shape[0] - 1, P.shape[1]
    cost = np.empty((R + 1) * R // 2, np.float64)
    if lib().lzd_intervals(cbuild.ptr(P), R, C, cbuild.ptr(total), cbuild.ptr(cost)):
        raise MemoryError("design intervals: no memory")
    return cost


def design(ha, hb, S, zr_ks, room: int, max_k: int, mus, L: int):
    """``states_design.design_two``'s partitions, one per multiplier pair of ``mus`` (``(None, None)``: the ideal
    lengths), in one call: ``(bits, part)`` with ``bits[q]`` :func:`states_design._bits` of the ``q``-th
    partition (infinite: ``_partition`` finds none) and ``part(q)`` that partition as ``_partition`` gives it,
    ``(small, large, rest)``: ``small``, ``large`` lists of ``(k, values)`` (values in list order: by count, then
    by word), ``rest`` the escape's words. ``zr_ks``: the index bits of the ZRUN classes kept (value 0 is then
    left to them)."""
    ha = np.ascontiguousarray(ha, np.int64)
    hb = np.ascontiguousarray(hb, np.int64)
    Sm = np.ascontiguousarray(np.asarray(S, bool), np.uint8)
    zr_ks = list(zr_ks)
    zk = np.ascontiguousarray(zr_ks or [0], np.int64)
    n = len(mus)
    ma = np.array([0.0 if m[0] is None else float(m[0]) for m in mus], np.float64)
    mb = np.array([0.0 if m[0] is None else float(m[1]) for m in mus], np.float64)
    has = np.array([0 if m[0] is None else 1 for m in mus], np.int32)
    bits = np.zeros(n, np.float64)
    cls = np.zeros((n, 256), np.int64)
    kk = np.zeros((n, 16), np.int64)
    nsl = np.zeros((n, 2), np.int64)
    rc = lib().lzd_design(cbuild.ptr(ha), cbuild.ptr(hb), cbuild.ptr(Sm), len(zr_ks), cbuild.ptr(zk), int(room),
                          int(max_k), n, cbuild.ptr(ma), cbuild.ptr(mb), cbuild.ptr(has), int(L), cbuild.ptr(bits),
                          cbuild.ptr(cls), cbuild.ptr(kk), cbuild.ptr(nsl))
    if rc == -2:
        raise MemoryError("design: no memory")
    if rc:
        from lutzip.errors import TableError
        raise TableError(f"design: no code lengths of at most {L} bits (rc {rc})")

    def part(q):
        c = cls[q]
        ns, nl = int(nsl[q, 0]), int(nsl[q, 1])
        members = [[] for _ in range(ns + nl)]
        for v in np.lexsort((np.arange(256), -(ha + hb))).tolist():     # list order: by count, then by word
            if c[v] >= 0:
                members[c[v]].append(v)
        groups = [(int(kk[q, j]), members[j]) for j in range(ns + nl)]
        rest = [v for v in range(256) if c[v] < 0 and not (zr_ks and v == 0)]
        return groups[:ns], groups[ns:], rest
    return bits, part


def pairs(words, joint, first) -> bool:
    """Add the pair counts of the 8-bit words of array ``words`` (one- or two-byte unsigned words below 256; any
    view, read in C order: e.g. a transposed tensor without a copy) to ``joint`` (65 536 int64) and ``first`` (256
    int64), as ``states_design.pair_counts`` counts them; ``False`` (nothing added) when ``words`` is of another
    dtype, has more than 8 axes or a word above 255."""
    w = np.asarray(words)
    if w.dtype.kind != "u" or w.dtype.itemsize not in (1, 2) or w.ndim > 8:
        return False
    if w.ndim == 0:
        w = w.reshape(1)
    if w.size == 0:
        return True
    size = w.dtype.itemsize
    shape = np.array(w.shape, np.int64)
    strides = np.array([x // size for x in w.strides], np.int64)
    ptr = w.__array_interface__["data"][0]             # the view's first element (numpy keeps w alive here)
    return lib().lzd_pairs(ptr, int(size == 2), w.ndim, cbuild.ptr(shape), cbuild.ptr(strides), cbuild.ptr(joint),
                           cbuild.ptr(first)) == 0
