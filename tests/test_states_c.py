"""The C kernels of the two-table encoder (lutzip.codec.states_c, _states.c) against the Python / numba code they
replace (lutzip.codec.states with ``KERNELS = "py"``, lutzip.codec._statesnumba, lutzip.codec.huffman): the same
code lengths (ties included), the same follow set, the same pairs and stripes, and ``states.apply`` writing the
same bytes with either."""
import numpy as np
import pytest

import lutzip
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import states, states_c
from lutzip.codec.huffman import limited_code_lengths
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet
from lutzip.errors import TableError

pytestmark = pytest.mark.skipif(states_c.lib() is None, reason="no C compiler for the states kernels")


@pytest.fixture
def py_kernels(monkeypatch):
    """Run a block with the Python / numba code: ``with py_kernels(): ...``."""
    import contextlib

    @contextlib.contextmanager
    def use():
        monkeypatch.setattr(states, "KERNELS", "py")
        try:
            yield
        finally:
            monkeypatch.setattr(states, "KERNELS", "auto")
    return use


def sparse(shape, scale, sparsity, dtype, seed=0):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    a = np.clip(np.rint(rng.laplace(0, scale, shape)), info.min + 1, info.max).astype(dtype)
    a[rng.random(shape) < sparsity] = 0
    return a


def py_lengths(counts, L, every):
    if every:
        counts = [float(v) if v > 0 else 1e-9 for v in counts]
    return limited_code_lengths(list(counts), L)


@pytest.mark.parametrize("seed", range(40))
def test_lengths_as_package_merge(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 17))
    kind = seed % 4
    if kind == 0:                                   # ties everywhere
        counts = rng.integers(0, 4, n)
    elif kind == 1:                                 # skewed, some zero
        counts = (rng.pareto(1.0, n) * 100).astype(np.int64) * (rng.random(n) < 0.8)
    elif kind == 2:                                 # large counts
        counts = rng.integers(0, 1 << 30, n)
    else:                                           # float counts (states_design._build's ZRUN estimate)
        counts = rng.integers(0, 50, n) / rng.integers(1, 4)
    counts = counts.tolist()
    for L in (int(rng.integers(4, 9)), 8, 12):
        for every in (False, True):
            if sum(1 for c in counts if c > 0 or every) > (1 << L):
                continue
            assert states_c.lengths(counts, L, every) == py_lengths(counts, L, every), (counts, L, every)


def test_lengths_limit_binds():
    # Fibonacci counts: an unlimited Huffman code would be 15 deep; L = 5 must cut it and still match
    counts = [1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987]
    got = states_c.lengths(counts, 5, False)
    assert max(got) == 5 and got == py_lengths(counts, 5, False)
    assert sum(2.0 ** -c for c in got) <= 1.0


def random_pairs(rng, n, style):
    p = np.zeros((17, 16), np.int64)
    if style == 0:
        p[:, :n] = rng.integers(0, 5, (17, n))                      # small counts: ties
    elif style == 1:
        p[:, :n] = (rng.pareto(0.8, (17, n)) * 50).astype(np.int64)
    else:                                                           # one class followed by a skewed other
        p[:, :n] = rng.integers(0, 1000, (17, n))
        p[0, :n] = 0
        p[0, min(1, n - 1)] = 100000
    p[n:16] = 0
    return p


@pytest.mark.parametrize("seed", range(60))
def test_design_search_as_python(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 17))
    pairs = random_pairs(rng, n, seed % 3)
    zr = int(rng.integers(0, 1 << n)) if seed % 2 else 0
    L = int(rng.integers(4, 13))
    for greedy in (False, True):
        for steps in (0, 1, 8):
            want = states._search_py(pairs, n, L, zr, greedy, steps)
            got = states_c.design_search(pairs, n, L, zr, greedy, steps)
            if want is not None:
                want = (want[0], want[1], list(want[2]), list(want[3]))
            assert got == want, (n, zr, L, greedy, steps)


def test_design_search_python_side_can_differ():
    """The comparison above is not vacuous: other pairs give another follow set."""
    rng = np.random.default_rng(3)
    a = random_pairs(rng, 8, 2)
    b = a.copy()
    b[[0, 5]] = b[[5, 0]]
    assert states_c.design_search(a, 8, 8, 0, True, 8)[0] != states_c.design_search(b, 8, 8, 0, True, 8)[0]


def one_table_streams(arrays):
    c = codec.compress(arrays)
    return c, [(c.stripe_payload(s), s.stripe_words, c.tables[s.table]) for s in c.streams]


def test_walk_pairs_and_transcode_as_numba(monkeypatch):
    arrays = {"a": sparse((400, 300), 15, 0.8, np.int8, 1), "b": sparse((150, 200), 300, 0.6, np.int16, 2),
              "c": sparse((50000,), 6, 0.0, np.int8, 3)}
    c, streams = one_table_streams(arrays)
    checked = 0
    for payload, sw, ts in streams:
        got = states._walk(payload, sw, ts, 0)
        monkeypatch.setattr(states, "KERNELS", "py")
        want = states._walk(payload, sw, ts, 0)
        monkeypatch.setattr(states, "KERNELS", "auto")
        assert np.array_equal(got, want)
        d = states.design(got, ts, 8, True)
        if d is None:
            continue
        two = d[0]
        gp, gsw = states._walk(payload, sw, ts, 1, two)
        monkeypatch.setattr(states, "KERNELS", "py")
        wp, wsw = states._walk(payload, sw, ts, 1, two)
        monkeypatch.setattr(states, "KERNELS", "auto")
        assert np.array_equal(gsw, wsw) and np.array_equal(gp, wp)
        checked += 1
    assert checked >= 1


def random_tableset(rng, wb):
    classes, lut3 = [], []
    size = 1 << wb
    for j in range(int(rng.integers(2, 9))):
        kind = int(rng.integers(0, 3))
        k = int(rng.integers(0, 5))
        if kind == LUT:
            param = len(lut3)
            lut3 += rng.integers(0, size, 1 << k).tolist()
        elif kind == RANGE:
            param = int(rng.integers(0, size - (1 << k) + 1))
        else:
            param = 0
        classes.append(ClassSpec(4, kind, k, param))
    return TableSet(wb, classes, np.array(lut3, np.uint16))


@pytest.mark.parametrize("seed", range(20))
def test_literals_as_numpy(seed):
    rng = np.random.default_rng(seed)
    ts = random_tableset(rng, 8 if seed % 2 else 12)
    ts.classes = [ClassSpec(int(rng.integers(1, 9)), cl.kind, cl.k, cl.param) for cl in ts.classes]
    got = states._literals(ts)
    want = states._literals_py(ts)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def forced_two(pairs, ts):
    """A two-state version of ``ts`` from the greedy follow set, whether or not it saves bits."""
    n = len(ts.classes)
    zr = sum(1 << j for j, cl in enumerate(ts.classes) if cl.kind == ZRUN)
    F, _, la, lb = states_c.design_search(pairs, n, 8, zr, True, 8)
    assert any(lb)
    return TableSet(ts.word_bits, [ClassSpec(int(a), cl.kind, cl.k, cl.param) for a, cl in zip(la, ts.classes)],
                    ts.lut3.copy(), lens_b=tuple(int(b) for b in lb), follow=F)


@pytest.mark.parametrize("dtype,sparsity", [(np.int8, 0.0), (np.int8, 0.9), (np.int16, 0.75), (np.uint8, 0.5)])
def test_encode2_as_numba(dtype, sparsity, py_kernels):
    a = sparse((300, 200), 20 if dtype != np.int16 else 500, sparsity, dtype, 5)
    if dtype == np.uint8:
        a = np.abs(a.astype(np.int16)).astype(np.uint8)
    c, streams = one_table_streams({"a": a})
    s = c.streams[0]
    ts = c.tables[s.table]
    pairs = states._walk(c.stripe_payload(s), s.stripe_words, ts, 0)
    two = forced_two(pairs, ts)
    words = states._stream_words(c, s, ts)
    for S in (s.stripe_len, 1000, 37):
        got = states._encode2(words, S, two)
        with py_kernels():
            want = states._encode2(words, S, two)
        for x, y in zip(got, want):
            assert np.array_equal(x, y)


def test_encode2_refuses_as_numba(py_kernels):
    # a literal whose class has no code in state B, read in state B: both refuse at the same word
    ts = TableSet(8, [ClassSpec(1, ZRUN, 2, 0), ClassSpec(2, RANGE, 4, 1), ClassSpec(2, RANGE, 7, 128)],
                  lens_b=(1, 1, 0), follow=0b001)
    words = np.array([0, 0, 200, 3], np.uint8)
    with pytest.raises(TableError) as e1:
        states._encode2(words, 4, ts)
    with py_kernels():
        with pytest.raises(TableError) as e2:
            states._encode2(words, 4, ts)
    assert str(e1.value) == str(e2.value)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_apply_same_bytes(seed, py_kernels):
    rng = np.random.default_rng(seed)
    arrays = {"conv": sparse((64, 32, 3, 3), 20, 0.9, np.int8, seed),
              "fc": sparse((300, 400), 10, [0.0, 0.6, 0.8][seed], np.int8, seed + 1),
              "w16": sparse((200, 150), 400, 0.75, np.int16, seed + 2)}
    for i in range(10):
        arrays[f"b{i}"] = sparse((20 + 9 * i,), 7, 0.4, np.int8, seed + 10 + i)
    arrays["u8"] = rng.integers(0, 30, (80, 90)).astype(np.uint8)
    blob1 = lutzip.compress(arrays)
    c1 = ct.from_bytes(blob1)
    got = ct.to_bytes(states.apply(c1))
    with py_kernels():
        want = ct.to_bytes(states.apply(c1))
    assert got == want
    assert ct.from_bytes(got).version == 5


def test_transcoded_sizes_from_stripe_pairs():
    """The stripe words a transcoding writes, from the stripes' class pairs, equal the numba walk's (every
    stripe); the pairs' sum is the walk's pairs."""
    arrays = {"a": sparse((400, 300), 15, 0.8, np.int8, 1), "b": sparse((150, 200), 300, 0.6, np.int16, 2),
              "c": sparse((50000,), 6, 0.0, np.int8, 3), "d": sparse((9000,), 4, 0.95, np.int8, 4)}
    c, streams = one_table_streams(arrays)
    checked = 0
    for payload, sw, ts in streams:
        sp = states._stripe_pairs(payload, sw, ts)
        assert sp.shape == (len(sw), 17, 16)
        states.KERNELS = "py"
        try:
            want_pairs = states._walk(payload, sw, ts, 0)
            two = forced_two(want_pairs, ts)
            _, want_sw = states._walk(payload, sw, ts, 1, two)
        finally:
            states.KERNELS = "auto"
        assert np.array_equal(sp.sum(0), want_pairs)
        assert np.array_equal(states._transcoded_words(sp, ts, two), want_sw.astype(np.int64))
        checked += 1
    assert checked >= 3
