"""The C walk of a mask in every axis order (fastenc.layout_runs) against layout.run_counts of the transposed copy,
and layout.choose_axes with the C walk against the numpy path (the same order chosen)."""
import itertools

import numpy as np
import pytest

from lutzip.codec import fastenc, layout

pytestmark = pytest.mark.skipif(not fastenc.available(), reason="no C compiler for the encoder kernels")


def _masks():
    rng = np.random.default_rng(17)
    yield rng.random((3, 5, 7, 2)) < 0.3
    yield rng.random((8, 4, 3, 3)) < 0.75
    yield rng.random((2, 3, 4)) < 0.5
    yield np.zeros((4, 3, 5), bool)                    # one run, the whole mask
    yield np.ones((4, 3, 5), bool)                     # no runs
    m = np.zeros((3, 4100, 2), bool)                   # runs past RUN_CAP: cap-long symbols and remainders
    m[1, 7, 1] = m[2, 0, 0] = True
    yield m
    k = rng.random((16, 8, 3, 3)) < 0.4                # kernel-structured zeros: some orders give long runs
    k[:, ::2] = False
    yield k
    yield rng.random((5, 1, 6, 1)) < 0.4               # axes of size 1
    yield rng.random((7,)) < 0.5


@pytest.mark.parametrize("mask", list(_masks()), ids=lambda m: "x".join(map(str, m.shape)))
@pytest.mark.parametrize("cap", [layout.RUN_CAP, 4, 1])
def test_layout_runs_equal_run_counts_of_every_order(mask, cap, monkeypatch):
    monkeypatch.setattr(layout, "RUN_CAP", cap)
    orders = list(itertools.permutations(range(mask.ndim)))
    got = fastenc.layout_runs(mask, orders, cap)
    assert len(got) == len(orders)
    for axes, g in zip(orders, got):
        want = layout.run_counts(np.ascontiguousarray(mask.transpose(axes)).reshape(-1))
        assert g.dtype == want.dtype and g.tolist() == want.tolist(), (axes, g, want)


def test_choose_axes_same_with_and_without_the_c_walk(monkeypatch):
    rng = np.random.default_rng(5)
    arrs = []
    for shape in [(64, 32, 3, 3), (32, 16, 5, 5), (96, 48, 1, 1), (16, 64, 3, 3), (40, 30, 9), (128, 3, 7, 7)]:
        a = rng.integers(-127, 128, shape).astype(np.int8)
        a[rng.random(shape) < 0.6] = 0
        k = a.reshape(shape[0], shape[1], -1)
        k[rng.random(shape[:2]) < 0.5] = 0                 # whole kernels pruned: an order can follow them
        arrs += [a, np.ascontiguousarray(a.astype(np.int16) * 7), np.ascontiguousarray(np.transpose(a, (2, 0, 1, 3)))
                 if a.ndim == 4 else a]
    got = [layout.choose_axes(a) for a in arrs]
    monkeypatch.setattr(fastenc, "layout_runs", lambda *args: None)
    want = [layout.choose_axes(a) for a in arrs]
    assert got == want
    assert any(g is not None for g in got)             # the comparison covers chosen orders too
