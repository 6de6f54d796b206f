"""A design's code lengths and bits in one C call (lutzip.codec.fastenc.design_bits, used by encoder._design with
statistics) against the Python path (package-merge lengths, then total_bits of the TableSet)."""
import numpy as np
import pytest

from lutzip.codec import encoder, fastenc
from lutzip.codec.encoder import Stats

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


def test_design_bits_as_the_python_path():
    rng = np.random.default_rng(9)
    w = np.rint(rng.laplace(0, 60, 30000)).astype(np.int16).view(np.uint16)
    w[rng.random(w.size) < 0.6] = 0
    st = Stats.of(w, 16, 4096)
    vals, counts = st.present()
    checked = 0
    for trial in range(300):
        # LUT groups of the most frequent values, RANGE classes around the rest, a residual, ZRUN classes;
        # frequencies with halves (round half to even) and below 1
        order = vals[np.argsort(-counts, kind="stable")]
        groups, pos = [], 0
        for _ in range(int(rng.integers(0, 4))):
            k = int(rng.integers(0, 4))
            mem = order[pos:pos + (1 << k)]
            if len(mem) < (1 << k):
                break
            groups.append((k, float(rng.choice([0.5, 2.5, 3.0, float(rng.integers(1, 5000))])), mem))
            pos += 1 << k
        ranges = []
        for _ in range(int(rng.integers(0, 6))):
            k = int(rng.integers(0, 9))
            base = int(rng.integers(0, 1 << (16 - k))) << k
            ranges.append((base, k, float(rng.integers(0, 3000)) + float(rng.choice([0.0, 0.5, 0.25]))))
        fres = float(rng.choice([0.0, 0.4, 100.5, 2000.0]))
        zruns = [(int(k), float(rng.integers(1, 900))) for k in rng.choice(8, int(rng.integers(0, 3)), replace=False)]
        if len(groups) + len(ranges) + (fres > 0) + len(zruns) > 16:
            continue
        fused = encoder._design(16, 8, groups, ranges, fres, zruns, st)
        plain = encoder._design(16, 8, groups, ranges, fres, zruns)
        assert fused._bits is not None and plain._bits is None
        assert fused.lens == [int(x) for x in plain.lens] and fused.classes == plain.classes
        assert np.array_equal(fused.lut3, plain.lut3)
        want = encoder.total_bits(plain.tableset(), st)
        assert fused.bits(st) == want, trial
        checked += want < float("inf")
    assert checked > 20          # designs that cover every value were among them


def _approx_py(runs, ks, n_nonzero, floor):
    """``encoder._zrun_candidates``' ``approx`` in Python (the numba symbol counts)."""
    import math
    from lutzip.codec import _encnumba as nb
    ks_d = sorted(ks, reverse=True)
    cnt = dict(zip(ks_d, (int(c) for c in nb._zrun_symbols_kernel(np.asarray(runs, np.int64),
                                                                   np.array(ks_d, np.int64)))))
    N = n_nonzero + sum(cnt.values())
    nz = n_nonzero * math.log2(N / n_nonzero) if n_nonzero else 0.0
    return nz + sum(c * (k + max(floor, math.log2(N / c))) + encoder.CLASS_BITS for k, c in cnt.items() if c)


def test_zrun_triples_in_one_call_as_python():
    import itertools
    rng = np.random.default_rng(4)
    for trial in range(30):
        runs = np.zeros(int(rng.integers(2, 5000)), np.int64)
        idx = rng.integers(1, len(runs), int(rng.integers(1, 40)))
        runs[idx] = rng.integers(1, 10**int(rng.integers(1, 7)), len(idx))
        maxk = int(rng.integers(2, 13))
        sets = list(itertools.combinations(range(maxk + 1), 3))[:60]
        nnz = int(rng.choice([0, 1, 7, 10**6, 2**40 + 3]))
        for floor in (0.0, 1.0):
            got = fastenc.zrun_approx_sets(runs, sets, nnz, floor)
            assert got == [_approx_py(runs, ks, nnz, floor) for ks in sets]


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_histogram_at_every_path(dtype):
    """lze_stats' histogram: straight counts below 2^18 16-bit words, four partial histograms above (and for 8-bit
    words at any length, with a tail of 1-3 words): numpy's bincount, added to what ``hist`` held."""
    rng = np.random.default_rng(6)
    W = 8 * np.dtype(dtype).itemsize
    for n in (0, 1, 3, 5, 4099, (1 << 18) - 1, 1 << 18, (1 << 18) + 3, 300007):
        w = rng.integers(0, 1 << W, n).astype(dtype)
        w[rng.random(n) < 0.5] = 0                 # repeated values
        start = rng.integers(0, 5, 1 << W).astype(np.int64)
        hist = start.copy()
        fastenc.stats(w, 4096, hist, None)
        assert np.array_equal(hist, start + np.bincount(w, minlength=1 << W)), n
