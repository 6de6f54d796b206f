"""The grouped design's batched C kernels (lutzip.codec.fastenc.group_dp_grid, group_walk) against the numba
``_group_dp`` and the Python walk of ``encoder._Grouped.partitions``: the same tables and partitions, also where
``mu ln 2 / F`` sits at or next to a power of two (where the exponent-bit floor of log2 hands over to log2)."""
import math

import numpy as np
import pytest

from lutzip.codec import _encnumba as nb
from lutzip.codec import encoder, fastenc
from lutzip.codec.encoder import CLASS_BITS, LUT3_BITS, Stats

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


def _freqs(rng, R):
    return np.sort(rng.pareto(1.2, R) * 100 + rng.integers(0, 2, R))[::-1].astype(np.float64)


def test_group_dp_grid_equals_numba_per_multiplier():
    rng = np.random.default_rng(5)
    ln2 = 0.6931471805599453
    for trial in range(20):
        R = int(rng.integers(1, 260)) if trial > 2 else trial + 1
        freq = _freqs(rng, R)
        if trial % 3 == 0:
            freq = np.rint(freq) + 1.0                      # integral counts, as the encoder's
        M = 16 if trial % 2 else int(rng.integers(1, 17))  # (16: the C grid's own DP, group_dp16)
        kmax = min(12, max(0, (R - 1).bit_length()))
        mus = list(2.0 ** rng.uniform(5, 20, 6))
        # multipliers that put mu ln2 / F on a power of two and one ulp either side, for block counts F
        pre = np.r_[0.0, np.cumsum(freq)]
        for F in (freq[0], pre[min(R, 2)] - pre[0], pre[R] - pre[R // 2]):
            if F > 0:
                for e in (3, 9, 14):
                    mu = 2.0 ** e * F / ln2
                    mus += [mu, np.nextafter(mu, 0), np.nextafter(mu, np.inf)]
        mus = np.array(mus)
        W = 8 if trial % 4 == 1 else 16
        grid = fastenc.group_dp_grid(freq, M, kmax, mus, 8, W, float(CLASS_BITS), float(LUT3_BITS))
        for g, mu in enumerate(mus):
            ref = nb._group_dp(freq, M, kmax, float(mu), 8, W, float(CLASS_BITS), float(LUT3_BITS))
            one = fastenc._group_dp(freq, M, kmax, float(mu), 8, W, float(CLASS_BITS), float(LUT3_BITS))
            for a, b, c in zip((x[g] for x in grid), ref, one):
                assert np.array_equal(a, b) and np.array_equal(c, b), (trial, g)


def _python_partitions(gz, Mv):
    """The Python walk of partitions (encoder before the C walk), over the grid's tables."""
    lmus, _ = gz.table()
    best, ch, start = gz._grid
    out, seen = [], set()
    pre = np.r_[0.0, np.cumsum(gz.freq)]
    for g in range(len(lmus)):
        bestR = best[g, gz.R]
        m = int(np.argmin(bestR[:Mv + 1]))
        if bestR[m] >= encoder.INF:
            continue
        blocks, res_F, i = [], 0.0, gz.R
        while i > 0:
            k, s0 = int(ch[g, i, m]), int(start[g, i, m])
            F = float(pre[i] - pre[s0])
            if k == gz.W + 1:
                res_F = F
            else:
                blocks.append((k, F, s0))
            i, m = s0, m - 1
        blocks.reverse()
        key = (tuple(b[0] for b in blocks), res_F)
        if key not in seen:
            seen.add(key)
            out.append((blocks, res_F))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_group_walk_equals_python_walk(seed):
    rng = np.random.default_rng(seed)
    w = np.clip(np.rint(rng.laplace(0, [3, 12, 40][seed], 40000)), -127, 127).astype(np.int8).view(np.uint8)
    w[rng.random(w.size) < 0.5] = 0
    st = Stats.of(w, 8, 4096)
    for zeros in (True, False):
        gz = encoder._Grouped(st, 8, 16, zeros)
        gz.table()
        assert gz._grid is not None
        for Mv in (1, 3, 8, 15, 16):
            assert gz.partitions(Mv) == _python_partitions(gz, Mv)


def _sparse_int8(seed, n=60000):
    rng = np.random.default_rng(seed)
    w = np.clip(np.rint(rng.laplace(0, [3, 12, 40, 6][seed % 4], n)), -127, 127).astype(np.int8).view(np.uint8)
    # zero runs of many lengths (runs of up to a few hundred words: several ZRUN index lengths pay)
    pos = 0
    while pos < n:
        r = int(rng.geometric(1 / [3, 30, 200][int(rng.integers(0, 3))]))
        w[pos:pos + r] = 0
        pos += r + int(rng.integers(1, 40))
    return w


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_zrun_estimate_sets_equals_numba_estimate(seed):
    """The batched estimate (fastenc.zrun_estimate_sets) = numba's _zrun_estimate at each set's own table column
    (inf where the set leaves no class for values), for sets of 1..6 index lengths."""
    st = Stats.of(_sparse_int8(seed), 8, 4096)
    gz = encoder._Grouped(st, 8, 16 if seed != 3 else 4, False)
    lmus, tab = gz.table()
    mus = 2.0 ** lmus
    rng = np.random.default_rng(seed)
    sets = [tuple(sorted(rng.choice(gz.maxk + 1, size=int(rng.integers(1, min(6, gz.maxk + 1) + 1)),
                                    replace=False).tolist())) for _ in range(40)]
    for rounds in (0, 2, 3):
        got = fastenc.zrun_estimate_sets(gz.runs, sets, tab, mus, 8, rounds, float(CLASS_BITS))
        for ks, d in zip(sets, got):
            Mv = gz.M - len(ks)
            if Mv < 0:
                assert d == encoder.INF
                continue
            ref = nb._zrun_estimate(np.asarray(gz.runs, np.int64), np.array(ks, np.int64),
                                    np.ascontiguousarray(tab[:, Mv]), mus, 8, rounds, float(CLASS_BITS))[0]
            assert d == ref, (ks, rounds)
    assert any(d < encoder.INF for d in got)


@pytest.mark.parametrize("seed", range(6))
def test_zrun_estimate_sets_parse_paths(seed):
    """The batched estimate's parse (segments by the classes' run lengths, the fixed-size steps of 1..4 classes
    reading the DP with and without a class of length 1, the loop over 5 or more, the greedy first counts over the
    non-zero lengths only) = numba's _zrun_estimate: run histograms short and long (beyond every class's length),
    dense and sparse, sets of 1..7 index lengths in sorted and in shuffled order (the first index of the least cost
    decides ties; small integer costs make them common), rounds 1..3."""
    rng = np.random.default_rng(100 + seed)
    G = 9
    mus = 2.0 ** (np.arange(G) * 0.5 + 6.0)
    for trial in range(12):
        nr = int(rng.choice([2, 3, 9, 40, 300, 2000]))
        runs = np.zeros(nr, np.int64)
        dens = [1.0, 0.3, 0.03][trial % 3]
        runs[1:] = np.where(rng.random(nr - 1) < dens, rng.integers(1, 50, nr - 1), 0)
        if not runs.any():
            runs[-1] = 3
        maxk = max(1, (nr - 1).bit_length())
        M = 16
        tab = np.sort(rng.random((G, M + 1)) * 1e4, axis=1)[:, ::-1].copy()
        sets = []
        for _ in range(30):
            size = int(rng.integers(1, min(7, maxk + 1) + 1))
            ks = rng.choice(maxk + 1, size=size, replace=False).tolist()
            sets.append(tuple(ks) if rng.random() < 0.4 else tuple(sorted(ks)))
        for rounds in (1, 2, 3):
            L = int(rng.choice([4, 8, 12]))
            got = fastenc.zrun_estimate_sets(runs, sets, tab, mus, L, rounds, float(CLASS_BITS))
            for ks, d in zip(sets, got):
                ref = nb._zrun_estimate(runs, np.array(ks, np.int64), np.ascontiguousarray(tab[:, M - len(ks)]), mus,
                                        L, rounds, float(CLASS_BITS))[0]
                assert d == ref, (nr, ks, rounds, L)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zrun_sets_batched_equals_one_by_one(seed, monkeypatch):
    """_Grouped.zrun_sets with the batched estimates = with one estimate a set (the search's path without the
    batch kernel): the same sets in the same order, the same estimates."""
    st = Stats.of(_sparse_int8(seed), 8, 4096)
    args = [dict(), dict(max_z=3, beam=2, keep=1, exhaustive=1), dict(beam=3, keep=2, exhaustive=2)]
    got = [encoder._Grouped(st, 8, 16, False).zrun_sets(**a) for a in args]
    monkeypatch.delattr(fastenc, "zrun_sets")
    monkeypatch.delattr(fastenc, "zrun_estimate_sets")
    ref = [encoder._Grouped(st, 8, 16, False).zrun_sets(**a) for a in args]
    for g, r in zip(got, ref):
        assert [x[0] for x in g] == [x[0] for x in r] and len(g) >= 1
        for (_k1, (d1, l1, z1)), (_k2, (d2, l2, z2)) in zip(g, r):
            assert d1 == d2 and l1 == l2 and np.array_equal(z1, z2)


def _same_sets(g, r):
    assert [x[0] for x in g] == [x[0] for x in r]
    for (_k1, (d1, l1, z1)), (_k2, (d2, l2, z2)) in zip(g, r):
        assert d1 == d2 and l1 == l2 and np.array_equal(z1, z2) and z1.dtype == z2.dtype


@pytest.mark.parametrize("seed", range(8))
def test_zrun_sets_search_in_c_equals_python_search(seed, monkeypatch):
    """_Grouped.zrun_sets through fastenc.zrun_sets (the whole search in one C call) = the Python search (with the
    batched estimates): the same sets in the same order with the same 3-round estimates, on sparse int8 statistics
    with short and long runs, class budgets M 2..16, L 4..12, and the search's parameters (the effort-0 and small
    tensor settings, beams of 1..5, keep beyond the sets there are)."""
    rng = np.random.default_rng(300 + seed)
    w = _sparse_int8(seed)
    if seed % 2:
        w = w[: int(rng.integers(200, len(w)))]
    st = Stats.of(w, 8, 4096)
    args = [dict(), dict(max_z=3, beam=2, keep=1, exhaustive=1), dict(beam=3, keep=2, exhaustive=2),
            dict(max_z=5, beam=1, keep=40, exhaustive=1), dict(max_z=4, beam=5, keep=3, exhaustive=3)]
    Ms = [16, 2, 3, int(rng.integers(4, 16))]
    L = int(rng.choice([4, 8, 12]))
    calls = []
    real = fastenc.zrun_sets
    monkeypatch.setattr(fastenc, "zrun_sets", lambda *a: calls.append(a) or real(*a))
    got = [encoder._Grouped(st, L, M, False).zrun_sets(**a) for M in Ms for a in args]
    assert len(calls) == len(got)
    undecided = sum(real(*a) is None for a in calls)
    assert undecided < len(calls) // 2
    monkeypatch.delattr(fastenc, "zrun_sets")
    ref = [encoder._Grouped(st, L, M, False).zrun_sets(**a) for M in Ms for a in args]
    assert any(len(r) >= 2 for r in ref)
    for g, r in zip(got, ref):
        _same_sets(g, r)


def test_zrun_sets_in_c_leaves_ties_to_python(monkeypatch):
    """Where sets tie on the least estimate (Python's pick would follow a set's iteration order) the C search
    returns None and _Grouped.zrun_sets takes the Python search: a table of inf (every set estimates to inf)."""
    st = Stats.of(_sparse_int8(0), 8, 4096)
    gz = encoder._Grouped(st, 8, 16, False)
    lmus, tab = gz.table()
    assert fastenc.zrun_sets(gz.runs, gz.maxk, gz.M, 5, 5, 3, 3, np.full_like(tab, encoder.INF), 2.0 ** lmus, 8,
                             float(CLASS_BITS)) is None
    assert fastenc.zrun_sets(gz.runs, gz.maxk, gz.M, 5, 5, 3, 3, tab, 2.0 ** lmus, 8, float(CLASS_BITS))
    monkeypatch.setattr(fastenc, "zrun_sets", lambda *a: None)
    got = encoder._Grouped(st, 8, 16, False).zrun_sets()
    monkeypatch.delattr(fastenc, "zrun_sets")
    _same_sets(got, encoder._Grouped(st, 8, 16, False).zrun_sets())


def _designs_list(gz, zks, zF, **kw):
    out = []
    for ts, bits in gz.designs(zks, None if zF is None else np.array(zF, np.float64), **kw):
        b = ts if isinstance(ts, encoder._Built) else None
        out.append((bits, ts.tableset() if b is not None else ts))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_grouped_designs_equals_python_loop(seed, monkeypatch):
    """_Grouped.designs through fastenc.grouped_designs (one C call) = the Python loop: the same table sets with the
    same bits in the same order -- with zeros as a value and with ZRUN sets (their counts re-estimated between the
    rounds), several rounds and tops, a LUT3 limit that drops designs, L 8 and 12."""
    st = Stats.of(_sparse_int8(seed), 8, 4096)
    cases = []
    for L in (8, 12):
        cases.append((True, L, (), None, dict()))
        gz = encoder._Grouped(st, L, 16, False)
        for zks, (_v, _l, zF) in gz.zrun_sets(beam=3, keep=3, exhaustive=2):
            cases.append((False, L, zks, zF, dict()))
            cases.append((False, L, zks, zF, dict(iters=3, top=3)))
            cases.append((False, L, zks, zF, dict(iters=1, top=1)))
        cases.append((False, L, (0, 3), None, dict(tablesets=True)))
    parts = encoder._Grouped(st, 8, 16, True).partitions(16)
    exact = sorted({sum(1 << b[0] for b in blocks) for blocks, _r in parts})      # limits a part's LUT3 meets
    for m in sorted({1, 2, 3, 5, 8, 12, 16, 24, 32, 48} | set(exact)):  # LUT3 limits that drop some designs
        cases.append((True, 8, (), None, dict(lut3_max=m)))
        cases.append((False, 8, (1, 4), None, dict(lut3_max=m)))

    def run():
        res = []
        for zeros, L, zks, zF, kw in cases:
            kw = dict(kw)
            lut3_max = kw.pop("lut3_max", encoder.MAX_LUT3)
            gz = encoder._Grouped(st, L, 16, zeros, lut3_max)
            res.append(_designs_list(gz, zks, zF, **({"tablesets": False} | kw)))
        return res
    got = run()
    calls = []
    real = fastenc.grouped_designs
    monkeypatch.setattr(fastenc, "grouped_designs", lambda *a: calls.append(1) or real(*a))
    run()
    assert len(calls) == len(cases)                 # (every case took the C loop)
    monkeypatch.delattr(fastenc, "grouped_designs")
    ref = run()
    assert sum(len(r) for r in ref) > len(cases) and any(len(r) < 2 for r in ref)
    for c, (g, r) in enumerate(zip(got, ref)):
        assert len(g) == len(r), c
        for (gb, gts), (rb, rts) in zip(g, r):
            assert gb == rb, c
            assert gts.word_bits == rts.word_bits and np.array_equal(gts.lut3, rts.lut3), c
            assert [(x.kind, x.k, x.param, x.total) for x in gts.classes] == \
                [(x.kind, x.k, x.param, x.total) for x in rts.classes], c


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_group_parts_equals_flattened_partitions(seed):
    """fastenc.group_parts (the grid's walks, repeats left out, flattened in C) = fastenc.grouped_parts of the
    Python-side list of _Grouped.partitions, for every budget."""
    st = Stats.of(_sparse_int8(seed), 8, 4096)
    for zeros, M in ((True, 16), (False, 16), (False, 5)):
        gz = encoder._Grouped(st, 8, M, zeros)
        gz.table()
        pre = np.r_[0.0, np.cumsum(gz.freq)]
        for Mv in range(1, gz.M + 1):
            got = fastenc.group_parts(*gz._grid, pre, Mv, gz.W + 1)
            ref = fastenc.grouped_parts(gz.partitions(Mv))
            assert len(got[0]) == len(gz.partitions(Mv)) + 1
            for a, b in zip(got, ref):
                assert np.array_equal(a, b), (zeros, M, Mv)


def test_build_without_avx2_gives_the_same_tables(tmp_path, monkeypatch):
    """The kernels built without -march=native (the build's fallback: no AVX2, the scalar grid DP rows and block
    costs) give the same grid tables and the same partitions as the library in use."""
    import ctypes

    from lutzip.codec import cbuild
    cc = cbuild.compiler()
    if cc is None:
        pytest.skip("no C compiler")
    flags = [f for f in fastenc.FLAGS if f != "-march=native"]
    cbuild.build(cc, fastenc.SOURCE, tmp_path / "_fastenc.so", flags, libs=("-lm",), variants=[flags])
    plain = fastenc._configure(ctypes.CDLL(str(tmp_path / "_fastenc.so")))
    rng = np.random.default_rng(8)
    ln2 = 0.6931471805599453
    cases = []
    for trial in range(12):
        R = int(rng.integers(1, 260))
        freq = np.rint(_freqs(rng, R)) + 1.0
        M = 16 if trial % 3 else int(rng.integers(1, 17))
        kmax = min(8, max(0, (R - 1).bit_length()))
        mus = list(2.0 ** rng.uniform(5, 20, 8))
        mus += [2.0 ** 9 * freq[min(3, R - 1)] / ln2, np.nextafter(2.0 ** 9 * freq[0] / ln2, 0)]
        cases.append((freq, M, kmax, np.array(mus)))
    ref = [fastenc.group_dp_grid(f, M, k, mus, 8, 8, float(CLASS_BITS), 8.0) for f, M, k, mus in cases]
    monkeypatch.setitem(fastenc._state, "lib", plain)
    got = [fastenc.group_dp_grid(f, M, k, mus, 8, 8, float(CLASS_BITS), 8.0) for f, M, k, mus in cases]
    for (f, M, k, mus), a, b in zip(cases, ref, got):
        for x, y in zip(a, b):
            assert np.array_equal(x, y), (len(f), M)


def _grouped_words(rng, n, zero_share, W=8):
    """Laplace-like words (a small alphabet also at W = 16) with about ``zero_share`` of them zero, in runs."""
    w = np.rint(rng.laplace(0, [2, 6, 20][int(rng.integers(0, 3))], n)).astype(np.int64)
    w[w == 0] = 1
    pos = 0
    while pos < n and zero_share > 0:
        r = int(rng.geometric(1 / [2, 12, 90][int(rng.integers(0, 3))]))
        w[pos:pos + r] = 0
        pos += r + int(rng.geometric(min(1.0, zero_share / (1 - zero_share) / r)))
    dt = np.uint8 if W == 8 else np.uint16
    return (w & ((1 << W) - 1)).astype(dt)


def _design_key(ts, bits):
    t = ts.tableset() if isinstance(ts, encoder._Built) else ts
    return bits, t.word_bits, [(c.kind, c.k, c.param, c.total) for c in t.classes], t.lut3.tolist()


@pytest.mark.parametrize("seed", range(6))
def test_grouped_all_equals_python_generator(seed, monkeypatch):
    """encoder._grouped_candidates through fastenc.grouped_all (zeros as a value, the ZRUN set search and every kept
    set's designs in one C call) = the Python generator (its kernels one call each): the same designs with the same
    bits in the same order -- zero shares either side of 1 % and 50 %, the three search sizes (below 16384, below
    65536, above), efforts 0 and 1, L 4 / 8 / 12, class budgets, LUT3 limits that drop designs, 8- and 16-bit words
    and TableSets as well as designs."""
    rng = np.random.default_rng(700 + seed)
    cases = []
    for zero_share in (0.0, 0.004, 0.02, 0.3, 0.6, 0.95):
        n = int(rng.choice([3000, 20000, 70000]))
        W = 16 if rng.random() < 0.25 else 8
        st = Stats.of(_grouped_words(rng, n, zero_share, W), W, 4096)
        L = int(rng.choice([4, 8, 8, 12]))
        M = int(rng.choice([16, 16, 5, 3]))
        lut3_max = int(rng.choice([encoder.MAX_LUT3, encoder.MAX_LUT3, 8, 40]))
        for effort in (0, 1):
            cases.append((st, L, M, lut3_max, effort, bool(rng.random() < 0.3)))
    # rich zero runs at the three search sizes; one whose longest run is a power of two (the index lengths tried)
    for n in (3000, 20000, 60000):
        st = Stats.of(_sparse_int8(seed, n), 8, 4096)
        cases += [(st, 8, 16, encoder.MAX_LUT3, effort, False) for effort in (0, 1)]
    runs = st.runs.copy()
    runs[65:] = 0
    runs[64] += 3
    st2 = Stats(8, st.hist, runs, st.n_stripes, st.stripe_len)
    cases += [(st2, 8, 16, encoder.MAX_LUT3, 1, False), (st2, 12, 16, encoder.MAX_LUT3, 1, False)]
    calls = []
    real = fastenc.grouped_all
    monkeypatch.setattr(fastenc, "grouped_all", lambda *a: calls.append(1) or real(*a))
    got = [[_design_key(*x) for x in encoder._grouped_candidates(*c)] for c in cases]
    assert len(calls) == len(cases)
    monkeypatch.delattr(fastenc, "grouped_all")
    ref = [[_design_key(*x) for x in encoder._grouped_candidates(*c)] for c in cases]
    assert sum(len(r) for r in ref) >= len(cases)
    undecided = 0
    for c, (g, r) in enumerate(zip(got, ref)):
        assert g == r, c
        st, L, M, lut3_max, effort, _t = cases[c]
        hist = st.hist
        undecided += real(hist, st.runs, st.word_bits, L, min(M, 16, 1 << L), lut3_max, effort, encoder.MAX_LUT_K,
                          encoder.MAX_ZRUN_K, CLASS_BITS, float(min(LUT3_BITS, st.word_bits)),
                          encoder.TABLE_HEAD_BITS, min(LUT3_BITS, st.word_bits),
                          *_mus3(st), encoder._stats_args(st)) is None
    assert undecided <= len(cases) // 4


def _mus3(st):
    last = int(np.nonzero(st.runs)[0][-1]) if st.runs.any() else 0
    t0, _ = encoder._Grouped.grid_mus(float(st.n_words))
    t1, z = encoder._Grouped.grid_mus(float(st.n_words - int(st.hist[0])) + float(st.runs[:last + 1].sum()))
    return t0, t1, z


def test_grouped_all_leaves_an_all_zero_tensor_to_python(monkeypatch):
    """An all-zero tensor (no value left beside the zero runs): fastenc.grouped_all returns None and the Python
    generator's single ZRUN-only design is the result, as without the kernel."""
    st = Stats.of(np.zeros(5000, np.uint8), 8, 4096)
    args = (st.hist, st.runs, 8, 8, 16, encoder.MAX_LUT3, 1, encoder.MAX_LUT_K, encoder.MAX_ZRUN_K, CLASS_BITS, 8.0,
            encoder.TABLE_HEAD_BITS, 8, *_mus3(st), encoder._stats_args(st))
    assert fastenc.grouped_all(*args) is None
    got = [_design_key(*x) for x in encoder._grouped_candidates(st, 8, 16)]
    monkeypatch.delattr(fastenc, "grouped_all")
    assert got == [_design_key(*x) for x in encoder._grouped_candidates(st, 8, 16)] and got


@pytest.mark.parametrize("seed", range(4))
def test_zrun_candidates_in_c_equals_python(seed, monkeypatch):
    """encoder._zrun_candidates_iter through fastenc.zrun_candidates (the singles, pairs and triples of both floors
    sorted in C) = the Python generator (its estimates one C call per size): the same sets in the same order, for
    per_size 1..3, on statistics with short and long runs (a long run: many index lengths; estimates that tie), and
    an early stop after the first set as effort 0 takes it."""
    rng = np.random.default_rng(900 + seed)
    stats = [Stats.of(_sparse_int8(seed, n), 8, 4096) for n in (500, 20000)]
    stats.append(Stats.of(_grouped_words(rng, 30000, 0.3), 8, 4096))
    w = np.ones(9000, np.uint8)
    w[100:4100] = 0                     # one run of 4000 (cut at the stripe end), ties among the lengths >= 12
    w[5000:5003] = 0
    stats.append(Stats.of(w, 8, 4096))
    cases = [(st, ps) for st in stats for ps in (1, 2, 3)]

    def run():
        out = []
        for st, ps in cases:
            nnz = int(st.n_words - st.hist[0])
            out.append(list(encoder._zrun_candidates_iter(st, nnz, ps)))
            g = encoder._zrun_candidates_iter(st, nnz, ps)
            out.append([next(g), next(g)])
        return out
    got = run()
    monkeypatch.delattr(fastenc, "zrun_candidates")
    ref = run()
    assert got == ref
    assert all(len(r) >= 4 for r in ref[::2]) and any(len(x) == 3 for r in ref for x in r)


def test_zrun_symbols_sets_fill_the_memo_as_one_by_one():
    """encoder._st_zrun_symbols_many (fastenc.zrun_symbols_sets: many sets in one call) leaves on the statistics
    the dicts _zrun_symbols makes one set at a time: the same counts, keys in the same order (largest first), for
    sets in any order, repeated sets and the empty set left out."""
    st = Stats.of(_sparse_int8(1), 8, 4096)
    sets = [(0,), (3, 1), (1, 3), (), (0, 2, 5, 9), (12,), (4, 7, 2), (0, 1, 2, 3, 4, 5, 6)]
    encoder._st_zrun_symbols_many(st, sets)
    memo = st.__dict__["_zsym"]
    assert set(memo) == {tuple(sorted(s)) for s in sets if s}
    for s in sets:
        if s:
            ref = encoder._zrun_symbols(st.runs, s)
            got = memo[tuple(sorted(s))]
            assert got == ref and list(got) == list(ref) and all(type(c) is int for c in got.values())
            assert encoder._st_zrun_symbols(st, s) == ref
    assert any(c > 0 for s in sets if s for c in memo[tuple(sorted(s))].values())
