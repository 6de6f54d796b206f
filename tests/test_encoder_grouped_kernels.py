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
