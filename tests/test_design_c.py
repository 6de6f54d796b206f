"""The C class cut (lutzip.codec.design_c, _design.c) against the numpy code of lutzip.codec.states_design."""
import numpy as np
import pytest

from lutzip.codec import design_c
from lutzip.codec import states_design as sd

pytestmark = pytest.mark.skipif(design_c.lib() is None, reason="no C compiler for the design kernels")


def _counts(rng, n):
    a = np.sort(rng.geometric(0.02, n))[::-1] * rng.integers(0, 3, n)
    b = rng.geometric(0.05, n) * rng.integers(0, 2, n)
    return a.astype(np.int64), b.astype(np.int64)


@pytest.mark.parametrize("mu", [(None, None), (700.0, 300.0), (1e5, 2e4)])
@pytest.mark.parametrize("n", [1, 5, 37, 200])
def test_cut_matches_numpy(mu, n):
    rng = np.random.default_rng(n)
    a, b = _counts(rng, n)
    f, back = sd._cut(a, b, 14, sd.MAX_K, mu, 8)
    fc, backc = design_c.cut(a, b, 14, sd.MAX_K, mu, 8)
    assert np.array_equal(np.isinf(f), np.isinf(fc))
    assert np.allclose(f[np.isfinite(f)], fc[np.isfinite(fc)], rtol=1e-12, atol=1e-6)
    assert np.array_equal(back, backc)


def _words(seed, n=20000):
    rng = np.random.default_rng(seed)
    v = np.round(rng.laplace(0, 6, n) * np.where(rng.random(n) < 0.5, 1, 3)).clip(-128, 127).astype(np.int64)
    v[1:] += (v[:-1] > 0) * 2                         # a sign context
    return [(v.clip(-128, 127) & 0xFF).astype(np.uint8)]


@pytest.mark.parametrize("seed", [1, 2])
def test_designs_and_intervals_match_numpy(seed, monkeypatch):
    from lutzip.codec.tables import ClassSpec, ZRUN, TableSet, LUT, RANGE
    words = _words(seed)
    ts = TableSet(8, [ClassSpec(2, RANGE, 8, 0), ClassSpec(2, ZRUN, 2, 0), ClassSpec(1, LUT, 1, 0)],
                  np.array([0, 1], np.uint16))
    got = {}
    for mode in ("auto", "py"):
        monkeypatch.setattr(sd, "KERNELS", mode)
        iv = sd.intervals(words, 4)
        found = sd.designs(words, ts, 8)
        got[mode] = ([(x[1], x[2]) for x in iv], [round(x[0], 3) for x in iv],
                     [(x[0], repr(x[1].classes), x[1].lut3.tolist(), x[1].lens_b, x[1].follow) for x in found])
    assert got["auto"][0] == got["py"][0]
    assert np.allclose(got["auto"][1], got["py"][1], rtol=1e-9)
    assert got["auto"][2] == got["py"][2]
    assert got["auto"][2]                             # something was designed


def _pairs_numpy(words_list):
    joint = np.zeros(256 * 256, np.int64)
    first = np.zeros(256, np.int64)
    for w in words_list:
        w = np.ascontiguousarray(w).astype(np.int64).reshape(-1)
        if w.size:
            first[w[0]] += 1
            joint += np.bincount(w[:-1] * 256 + w[1:], minlength=256 * 256)
    return joint.reshape(256, 256), first


def test_pair_counts_of_views_match_numpy():
    """lzd_pairs counts one- and two-byte words of transposed, reversed and strided views in their C order (the
    axis orders of states._axis_order without a copy), as the numpy count of a contiguous copy does."""
    rng = np.random.default_rng(3)
    a = (rng.laplace(0, 9, (6, 5, 3, 7)).clip(-128, 127).astype(np.int64) & 0xFF).astype(np.uint8)
    cases = [[a.reshape(-1)], [a.transpose(1, 0, 3, 2)], [a[:, ::-1, :, 1:]], [a.astype(np.uint16).transpose(3, 2, 1, 0)],
             [a[::2].astype(np.uint16), np.zeros(0, np.uint16), a[0, 0, 0, :1]], [np.array(7, np.uint8)]]
    for ws in cases:
        joint, first = sd.pair_counts(ws)
        ref = _pairs_numpy(ws)
        assert np.array_equal(joint, ref[0]) and np.array_equal(first, ref[1])
    joint, first = np.zeros(65536, np.int64), np.zeros(256, np.int64)
    assert design_c.pairs(a.transpose(2, 0, 1, 3), joint, first)
    assert joint.sum() == a.size - 1 and first.sum() == 1
    # a two-byte word above 255 is not an 8-bit word: nothing counted, the caller's numpy path decides
    assert not design_c.pairs(np.array([3, 300], np.uint16), joint, first)
    assert joint.sum() == a.size - 1


@pytest.mark.parametrize("room", [2, 5, 15])
@pytest.mark.parametrize("seed", [4, 5])
def test_whole_design_matches_numpy_partition_and_bits(room, seed, monkeypatch):
    """lzd_design (every multiplier's partition and estimate in one call) against _partition and _bits in numpy,
    for the ideal lengths and multipliers, with few classes (a long escape) and with ZRUN classes kept."""
    from lutzip.codec.tables import ClassSpec, ZRUN
    rng = np.random.default_rng(seed)
    ha = (rng.geometric(0.03, 256) * (rng.random(256) < 0.8)).astype(np.int64)
    hb = (rng.geometric(0.05, 256) * (rng.random(256) < 0.6)).astype(np.int64)
    S = sd.value_set(int(rng.integers(3, 40)))
    NA, NB = ha.sum() / np.log(2), hb.sum() / np.log(2)
    mus = [(None, None), (NA, NB), (0.7 * NA, 1.45 * NB), (3 * NA, 0.2 * NB)]
    seen_escape = False
    for zr in ([], [ClassSpec(3, ZRUN, 2, 0), ClassSpec(4, ZRUN, 5, 0)]):
        r = min(room, 15 - len(zr))                    # design_two's room: the escape and the ZRUN classes kept
        bits, part = design_c.design(ha, hb, S, [cl.k for cl in zr], r, sd.MAX_K, mus, 8)
        monkeypatch.setattr(sd, "KERNELS", "py")
        for q, mu in enumerate(mus):
            ref = sd._partition(ha, hb, zr, S, r, mu, 8)
            seen_escape = seen_escape or (ref is not None and any(ha[v] + hb[v] for v in ref[2]))
            if ref is None:
                assert not np.isfinite(bits[q])
                continue
            assert part(q) == ref
            assert bits[q] == sd._bits(ha, hb, zr, *ref, 8)
        monkeypatch.setattr(sd, "KERNELS", "auto")
    assert seen_escape or room > 5                     # few classes: values were left to the escape
