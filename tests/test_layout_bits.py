"""layout._bits_pos (choose_axes' estimate of positive counts, without _bits' filter) = layout._bits, and
choose_axes picks the same orders with either; layout._bits_many (every order's estimate at once) = _bits_pos of
each, bit for bit."""
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


def test_bits_many_equals_bits_pos_of_each():
    rng = np.random.default_rng(9)
    for n_lit in (0, 1, 3, 200, 255):
        lits = rng.integers(1, 50000, n_lit)
        runs = [rng.integers(1, rng.integers(2, 3000), rng.integers(0, 300)) for _ in range(int(rng.integers(1, 25)))]
        runs += [np.zeros(0, np.int64), np.ones(1, np.int64), rng.integers(1, 9, 4000)]
        got = layout._bits_many(lits, runs)
        assert got == [layout._bits_pos(lits, r) for r in runs], n_lit
        assert all(type(x) is float for x in got)


def test_choose_axes_same_with_bits_pos_one_by_one(monkeypatch):
    rng = np.random.default_rng(6)
    arrs = []
    for shape in ((32, 16, 3, 3), (8, 64, 5, 5), (64, 3, 7, 7), (16, 16, 16), (40, 30, 9)):
        x = rng.integers(-600, 600, shape).astype(np.int16)
        keep = rng.random(shape[:2]) < 0.3
        x[~keep] = 0
        x[rng.random(shape) < 0.3] = 0
        arrs += [x, np.ascontiguousarray(np.moveaxis(x, -1, 0))]
    got = [layout.choose_axes(a) for a in arrs]
    monkeypatch.setattr(layout, "_bits_many", lambda lits, runs: [layout._bits_pos(lits, r) for r in runs])
    assert [layout.choose_axes(a) for a in arrs] == got
    assert any(g is not None for g in got)
