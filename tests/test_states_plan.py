"""Two code tables planned from token statistics (lutzip.codec.states_plan, lzs_tokstats / lzs_tokeval): the
statistics give the two-state coder's parse exactly (its class pairs, its bits within the stripes' padding), and
``codec.compress(states=2)`` writes files that decode, are smaller where a second table pays and are the
one-table bytes where it does not."""
import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import states, states_c, states_plan
from lutzip.codec.tables import MAX_CLASSES

pytestmark = pytest.mark.skipif(states_c.lib() is None, reason="no C compiler for the states kernels")


def sparse(n, scale, sparsity, dtype, seed=0, clumps=False):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    a = np.clip(np.rint(rng.laplace(0, scale, n)), info.min + 1, info.max).astype(dtype)
    a[rng.random(n) < sparsity] = 0
    if clumps:                                          # long zero runs (beyond the dense run histogram)
        for lo in rng.integers(0, n - 3000, 20):
            a[lo:lo + int(rng.integers(70, 3000))] = 0
    return a


def one_table(words, bits, S):
    c = codec.compress({"t": words.view({8: np.int8, 16: np.int16}[bits])}, stripe_len=S, min_stripes=0,
                       reorder=False, rows=False)
    return c.tables[0]


CASES = [(np.int8, 0.9, 4096, False), (np.int8, 0.75, 1000, True), (np.int8, 0.9, 8192, True),
         (np.int16, 0.6, 2048, True), (np.int16, 0.9, 777, False)]


@pytest.mark.parametrize("dt,sp,S,clumps", CASES)
def test_statistics_give_the_coders_parse(dt, sp, S, clumps):
    a = sparse(60_000, 3 if dt == np.int8 else 40, sp, dt, seed=int(sp * 10) + S, clumps=clumps)
    words = a.view({np.int8: np.uint8, np.int16: np.uint16}[dt])
    ts = one_table(words, 8 * a.itemsize, S)
    lits = states_plan.literals(ts)
    ll, runs, _ = states_plan.stats([words], [S], lits[0], sample=False)
    # the statistics count every word once
    assert int(ll.sum()) + int((runs[:, 3] * (runs[:, 2] + (runs[:, 1] < 16))).sum()) == words.size
    two, bits, base = states_plan.plan(ll, runs, ts, lits[0])
    designs = [two] if two is not None else []
    got = states.design(states_plan.one_table(ll, runs, ts, lits[0])[1], ts, 8, True)
    if got is not None:
        designs.append(got[0])
    assert designs, "no two-table design to check on these words"
    for d in designs:
        lens, _, nxt = states.state_arrays(d)
        est, pairs = states_plan.evaluate(ll, runs, lens, nxt, states._class_field(ts, "k"),
                                          *states_plan._options(ts, lits[0]))
        payload, sw, cpairs = states._encode2(words, S, d, lits)
        np.testing.assert_array_equal(pairs, cpairs)
        n_stripes = len(sw)
        sym_words = int(sw.astype(np.int64).sum()) - n_stripes
        assert est / 32 <= sym_words <= est / 32 + n_stripes
        # the decoder reads the words back
        out = np.zeros(words.size, words.dtype)
        starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))[:-1]])
        rc, _, _ = states.decode_stripes2(payload, starts, sw, S, words.size, d, out)
        assert rc == 0
        np.testing.assert_array_equal(out, words)


def test_one_table_bits_are_the_one_table_coders_or_fewer():
    a = sparse(80_000, 3, 0.85, np.int8, seed=3, clumps=True)
    words = a.view(np.uint8)
    S = 4096
    c = codec.compress({"t": a}, stripe_len=S, min_stripes=0, reorder=False, rows=False)
    ts = c.tables[0]
    lits = states_plan.literals(ts)
    ll, runs, _ = states_plan.stats([words], [S], lits[0], sample=False)
    base, pairs = states_plan.one_table(ll, runs, ts, lits[0])
    sw = c.tensors[0].stripe_words
    assert base / 32 <= int(sw.astype(np.int64).sum()) - len(sw)
    assert pairs.sum() > 0


def test_uncovered_word_is_refused():
    a = sparse(10_000, 3, 0.5, np.int8, seed=1)
    words = a.view(np.uint8)
    lit = np.full(256, -1, np.int64)
    from lutzip.errors import TableError
    with pytest.raises(TableError, match="not covered"):
        states_plan.stats([words], [4096], lit)


@pytest.mark.parametrize("sp", [0.9, 0.8])
def test_compress_states2_smaller_and_decodes(sp):
    arrays = {f"w{i}": sparse(50_000 + 7000 * i, 3, sp, np.int8, seed=i) for i in range(3)}
    arrays["tiny"] = sparse(300, 3, sp, np.int8, seed=9)
    arrays["h"] = sparse(40_000, 50, sp, np.int16, seed=5)
    one = ct.to_bytes(codec.compress(arrays))
    c2 = codec.compress(arrays, states=2)
    two = ct.to_bytes(c2)
    assert len(two) < len(one)
    p = ct.from_bytes(two)
    assert p.version == 5 and any(ts.lens_b is not None for ts in p.tables)
    back = codec.decompress(p)
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)
    # the same bytes on more threads
    assert ct.to_bytes(codec.compress(arrays, states=2, threads=2)) == two


def test_no_gain_is_the_one_table_file():
    rng = np.random.default_rng(0)
    arrays = {"u": rng.integers(-128, 128, 70_000).astype(np.int8)}
    one = ct.to_bytes(codec.compress(arrays))
    assert ct.to_bytes(codec.compress(arrays, states=2)) == one


def test_without_the_c_kernels_the_container_is_rewritten(monkeypatch):
    arrays = {"w": sparse(60_000, 3, 0.9, np.int8, seed=2)}
    monkeypatch.setattr(states_plan, "available", lambda: False)
    called = []
    real = states.apply
    monkeypatch.setattr(states, "apply", lambda c, L=8: called.append(1) or real(c, L=L))
    c = codec.compress(arrays, states=2)
    assert called and c.tables[0].lens_b is not None
    np.testing.assert_array_equal(codec.decompress(ct.from_bytes(ct.to_bytes(c)))["w"], arrays["w"])


def test_bad_states_option():
    from lutzip.errors import TableError
    with pytest.raises(TableError, match="states=3"):
        codec.compress({"a": np.zeros(10, np.int8)}, states=3)


def _two_table_arrays():
    arrays = {f"w{i}": sparse(40_000 + 9000 * i, 3, 0.9, np.int8, seed=20 + i, clumps=i == 1) for i in range(3)}
    arrays["tiny"] = sparse(500, 3, 0.9, np.int8, seed=7)
    arrays["h"] = sparse(30_000, 50, 0.8, np.int16, seed=8)
    return arrays


def test_default_save_cli_and_rewrite_write_the_same_bytes(tmp_path):
    import lutzip
    from lutzip import cli
    arrays = _two_table_arrays()
    data = lutzip.compress(arrays)                       # the default: two code tables where they pay
    assert data == ct.to_bytes(codec.compress(arrays, states=2))
    assert ct.from_bytes(data).version == 5
    one = lutzip.compress(arrays, states=1)
    assert ct.from_bytes(one).version < 5 and len(data) < len(one)
    assert ct.to_bytes(states_plan.rewrite(ct.from_bytes(one))) == data
    p = tmp_path / "a.lutz"
    assert lutzip.save(p, arrays) == len(data) and p.read_bytes() == data
    lutzip.save(p, arrays, states=1)
    assert p.read_bytes() == one
    np.savez(tmp_path / "a.npz", **arrays)
    for extra, want in (([], data), (["--states", "1"], one)):
        out = tmp_path / f"c{len(extra)}.lutz"
        assert cli.main(["compress", str(tmp_path / "a.npz"), "-o", str(out), *extra]) == 0
        assert out.read_bytes() == want
    back = lutzip.decompress(data)
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)


def _tokstats_reference(words, S, lit_cls):
    ll = np.zeros((17, 16), np.int64)
    runs = {}
    for lo in range(0, len(words), S):
        w = [int(v) for v in words[lo:lo + S]]
        prev, i = 16, 0
        while i < len(w):
            if w[i]:
                c = int(lit_cls[w[i]])
                ll[prev, c] += 1
                prev, i = c, i + 1
                continue
            j = i
            while j < len(w) and not w[j]:
                j += 1
            b = int(lit_cls[w[j]]) if j < len(w) else 16
            runs[(prev, b, j - i)] = runs.get((prev, b, j - i), 0) + 1
            prev, i = (b, j + 1) if j < len(w) else (prev, j)
    return ll, runs


@pytest.mark.parametrize("dt,sp,S", [(np.int8, 0.02, 1000), (np.int8, 0.3, 777), (np.int16, 0.02, 500),
                                     (np.int8, 0.97, 4096)])
def test_tokstats_against_a_python_count(dt, sp, S):
    a = sparse(20_000, 3 if dt == np.int8 else 40, sp, dt, seed=S)
    words = a.view({np.int8: np.uint8, np.int16: np.uint16}[dt])
    lits = states_plan.literals(one_table(words, 8 * a.itemsize, S))
    for step in (1, 3):
        sel = np.concatenate([words[lo:lo + S] for lo in range(0, words.size, step * S)])
        ll, runs = states_c.tokstats(words, S, lits[0], step)
        ref_ll, ref_runs = _tokstats_reference(sel, S, lits[0])
        np.testing.assert_array_equal(ll, ref_ll)
        assert {(int(x), int(y), int(r)): int(n) for x, y, r, n in runs} == ref_runs
