"""The row-mode kernel (lutzip.codec.fastenc.row_modes, ``lze_row_modes``) against the numpy path of
lutzip.codec.rows: the same modes as ``find_modes`` and the same count of moded non-zero rows, and
``rows.candidate`` choosing the same with and without it."""
import numpy as np
import pytest

from lutzip.codec import fastenc, rows
from lutzip.codec.arrays import to_words

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")

DTYPES = {"int8": (np.uint8, 0), "int16": (np.uint16, 0), "bfloat16": (np.uint16, 1), "float16": (np.uint16, 1)}


def _rows(rng, R, N, dtype):
    wt, negf = DTYPES[dtype]
    bits = 8 * np.dtype(wt).itemsize
    x = rng.integers(0, 1 << bits, (R, N)).astype(wt)
    x[rng.random((R, N)) < 0.4] = 0
    if negf:                                   # signed zeros and the sign bit alone
        x[rng.random((R, N)) < 0.1] = 0x8000
    h = N // 2 + 1
    for r in range(R):
        kind = rng.integers(0, 7)
        if N - h < 1:
            continue
        src = x[r, N - h:0:-1]                 # row[N - m] for m = h .. N - 1
        if kind == 0:
            x[r, h:] = src
        elif kind == 1:
            x[r, h:] = rows.negate_words(src, bits, negf)
        elif kind == 2:
            x[r] = 0
        elif kind == 3:                        # mirrored up to one word (at a random place)
            x[r, h:] = src
            m = int(rng.integers(h, N))
            x[r, m] ^= wt(1)
        elif kind == 4:                        # negated mirror up to one word
            x[r, h:] = rows.negate_words(src, bits, negf)
            m = int(rng.integers(h, N))
            x[r, m] ^= wt(1 << (bits - 1))
        elif kind == 5:                        # zero tail, zero head words too (mirror wins over neg)
            x[r, h:] = 0
            x[r, 1:h] = 0
    return x


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_row_modes_equals_find_modes(dtype):
    rng = np.random.default_rng(len(dtype))
    for N in (2, 3, 4, 5, 8, 9, 31, 64, 65, 200):
        for R in (1, 7, 40):
            x = _rows(rng, R, N, dtype)
            modes, good = fastenc.row_modes(x, rows.neg_flag(dtype))
            ref = rows.find_modes(x, N, dtype)
            assert modes.dtype == np.uint8 and np.array_equal(modes, ref), (N, R)
            assert good == int(np.count_nonzero((ref != rows.PLAIN) & np.any(x != 0, axis=1))), (N, R)
    assert set(np.unique(ref).tolist()) == {rows.PLAIN, rows.MIRROR, rows.NEG_MIRROR}


@pytest.mark.parametrize("dtype", ["int8", "int16", "bfloat16"])
def test_candidate_same_with_and_without_kernel(dtype, monkeypatch):
    import ml_dtypes  # noqa: F401  (bfloat16 arrays)
    rng = np.random.default_rng(7)
    wt, negf = DTYPES[dtype]
    cases = []
    for shape, share in (((64, 9), 0.5), ((64, 9), 0.05), ((40, 3, 3), 0.9), ((16, 2, 5), 0.3), ((33, 65), 0.2)):
        R, N = shape[0], int(np.prod(shape[1:]))
        x = _rows(rng, R, N, dtype)
        keep = rng.random(R) < share           # the other rows plain (random), so the count decides
        x[~keep] = rng.integers(1, 1 << (8 * np.dtype(wt).itemsize), (int((~keep).sum()), N)).astype(wt)
        arr = x.view(np.int8 if dtype == "int8" else np.int16 if dtype == "int16" else ml_dtypes.bfloat16)
        cases.append(arr.reshape(shape))
    got = []
    for arr in cases:
        words, dt = to_words(arr)
        assert dt == dtype
        got.append(rows.candidate(arr, None, words, dt))
    monkeypatch.delattr(fastenc, "row_modes")
    for arr, g in zip(cases, got):
        words, dt = to_words(arr)
        ref = rows.candidate(arr, None, words, dt)
        assert (g is None) == (ref is None)
        if g is not None:
            assert g[0] == ref[0] and np.array_equal(g[1], ref[1])
    assert any(g is not None for g in got) and any(g is None for g in got)
