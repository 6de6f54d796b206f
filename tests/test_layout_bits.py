"""layout._bits_pos (choose_axes' estimate of positive counts, without _bits' filter) = layout._bits, and
choose_axes picks the same orders with either."""
import numpy as np

from lutzip.codec import layout


def test_bits_pos_equals_bits():
    rng = np.random.default_rng(3)
    for n_lit, n_run in ((0, 0), (1, 0), (0, 1), (1, 1), (3, 7), (200, 40), (255, 900)):
        lits = rng.integers(1, 5000, n_lit)
        runs = rng.integers(1, 300, n_run)
        a, b = layout._bits(lits, runs), layout._bits_pos(lits, runs)
        assert a == b and type(b) is float, (n_lit, n_run)


def test_choose_axes_same_with_bits(monkeypatch):
    rng = np.random.default_rng(5)
    arrs = []
    for shape in ((32, 16, 3, 3), (8, 64, 5, 5), (64, 3, 7, 7), (16, 16, 16)):
        x = rng.integers(-60, 60, shape).astype(np.int8)
        keep = rng.random(shape[:2]) < 0.3                   # pruned kernels: zero runs along the last axes
        x[~keep] = 0
        x[rng.random(shape) < 0.2] = 0
        arrs += [x, np.ascontiguousarray(np.moveaxis(x, -1, 0))]
    got = [layout.choose_axes(a) for a in arrs]
    monkeypatch.setattr(layout, "_bits_pos", layout._bits)
    assert [layout.choose_axes(a) for a in arrs] == got
    assert any(g is not None for g in got)
