"""The table design's reusable work arrays (lutzip.codec.fastenc: ``scratch_scope``, ``dp_tables``): the same
table sets as with fresh arrays, a trie DP's tables that another DP has taken are refused, not read."""
import contextlib

import numpy as np
import pytest

from lutzip.codec import encoder, fastenc
from lutzip.codec.encoder import Stats

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


def _cases():
    rng = np.random.default_rng(11)
    wide = np.rint(rng.laplace(0, 900, 60000)).astype(np.int16).view(np.uint16)       # many values
    sparse = np.rint(rng.laplace(0, 40, 50000)).astype(np.int16).view(np.uint16)
    sparse[rng.random(sparse.size) < 0.75] = 0
    bf16 = (rng.standard_normal(30000).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return [wide, sparse, bf16, wide[:5000]]


def _same(a, b):
    return a.word_bits == b.word_bits and np.array_equal(a.lut3, b.lut3) and \
        [(c.c, c.kind, c.k, c.param) for c in a.classes] == [(c.c, c.kind, c.k, c.param) for c in b.classes]


@pytest.mark.parametrize("small", [False, True])
def test_work_arrays_give_the_same_tables(monkeypatch, small):
    """Every design of these statistics with the work arrays reused (the default) equals the one with fresh
    arrays for every DP (no scope open, so no trie DP read from another); and a file's plan (several tensors, one
    scope) equals it too. ``small``: every table in work arrays and every LUT size's DP from t = 0's (the
    thresholds at 0), as large tensors have them."""
    stats = [Stats.of(w, 16, 4096) for w in _cases()]
    with monkeypatch.context() as m:
        if small:
            m.setattr(fastenc, "SCRATCH_MIN", 0)
            m.setattr(encoder, "REF_MIN_NODES", 0)
        reused = [encoder.design_tableset(st) for st in stats]
        plan_reused = encoder.plan_tables_stats(stats)
    with monkeypatch.context() as m:
        m.setattr(encoder, "_scope", contextlib.nullcontext)
        fresh = [encoder.design_tableset(st) for st in stats]
        plan_fresh = encoder.plan_tables_stats(stats)
    for (a, ab), (b, bb) in zip(reused, fresh):
        assert ab == bb and _same(a, b)
    assert plan_reused[1] == plan_fresh[1]
    assert all(_same(a, b) for a, b in zip(plan_reused[0], plan_fresh[0]))
    assert getattr(fastenc._tls, "depth", 0) == 0 and not getattr(fastenc._tls, "bufs", {})   # released


def test_taken_tables_are_refused(monkeypatch):
    """Within a scope a later DP of the same slot takes the work arrays: the earlier solve raises instead of
    reading them; another slot leaves them alone; a round-2 solve checks its round-1 tables too."""
    monkeypatch.setattr(fastenc, "SCRATCH_MIN", 0)
    st = Stats.of(_cases()[0], 16, 4096)
    vals = st.present()[0]
    tree = encoder._trie_tree(st.hist, 16, vals=vals)
    with fastenc.scratch_scope():
        a = encoder._trie_dp(st.hist, 16, float(st.n_words), 15, 12.0, tree, slot=0)
        cost = a.cost(15, False)
        b = encoder._trie_dp(st.hist, 16, float(st.n_words), 15, 9.0, tree, a.keep, slot=1)   # round 2
        assert a.cost(15, False) == cost and a.ranges(15, True) is not None and b.cost(14, True) < encoder.INF
        encoder._trie_dp(st.hist, 16, float(st.n_words), 15, 12.0, tree, slot=0)
        with pytest.raises(RuntimeError):
            a.cost(15, False)
        with pytest.raises(RuntimeError):
            a.ranges(15, False)
        with pytest.raises(RuntimeError):
            b.cost(14, True)                    # its no-residual tables were a's
    # without a scope the tables are the solve's own
    a = encoder._trie_dp(st.hist, 16, float(st.n_words), 15, 12.0, tree, slot=0)
    encoder._trie_dp(st.hist, 16, float(st.n_words), 15, 12.0, tree, slot=0)
    assert a.cost(15, False) == cost


def _split_cands_loop(lut_row, Mv, row_n, row_r):
    """The encoder's loop before ``_split_cands`` (the reference)."""
    cands = []
    for m1 in range(0, Mv + 1):
        if lut_row[m1] >= encoder.INF:
            continue
        m2 = Mv - m1
        for residual in (False, True):
            mm = m2 - 1 if residual else m2
            if mm < 0:
                continue
            c = float((row_r if residual else row_n)[mm])
            if c < encoder.INF:
                cands.append((lut_row[m1] + c, m1, mm, residual))
    cands.sort(key=lambda x: x[0])
    return cands


def test_split_candidates_as_the_loop():
    """The budget splits in numpy: the same costs, splits and order (ties: the loop's stable order) as the
    loop, with unreachable LUT budgets and DP rows (INF), equal costs, budgets 0..16 and longer DP rows."""
    rng = np.random.default_rng(3)
    INF = encoder.INF
    for trial in range(400):
        Mv = int(rng.integers(0, 17))
        Md = Mv + int(rng.integers(0, 2))
        lut_row = np.where(rng.random(Mv + 1) < 0.3, INF, rng.integers(0, 6, Mv + 1) * 1.5)
        if trial % 4 == 0:
            lut_row[:] = INF
        row_n = np.where(rng.random(Md + 1) < 0.2, INF, rng.integers(0, 6, Md + 1) * 2.25)
        row_r = np.where(rng.random(Md + 1) < 0.2, INF, rng.integers(0, 6, Md + 1) * 2.25)
        got = encoder._split_cands(lut_row, Mv, row_n, row_r)
        want = _split_cands_loop(lut_row, Mv, row_n, row_r)
        assert [(float(c), m1, mm, r) for c, m1, mm, r in want] == got
