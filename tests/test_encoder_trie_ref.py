"""The trie DP of a LUT size read from the DP of the full tree (lutzip.codec.fastenc.trie_same, trie_solve_ref and
the walk over the base's choices) against the full DP of that size's tree: the same root costs, the same classes
for every budget, the same rows wherever a node is computed."""
import numpy as np
import pytest

from lutzip.codec import encoder, fastenc
from lutzip.codec.encoder import CLASS_BITS, Stats

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


def _tables(n, M):
    return [np.empty((n, M + 1)), np.empty((n, M + 1)), np.empty((n, M + 1), np.int64),
            np.empty((n, M + 1), np.int64)]


@pytest.mark.parametrize("kind", ["wide", "sparse", "bf16"])
def test_reference_dp_equals_full_dp(kind):
    rng = np.random.default_rng({"wide": 1, "sparse": 2, "bf16": 3}[kind])
    if kind == "bf16":
        w = (rng.standard_normal(60000).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        w = np.rint(rng.laplace(0, 700 if kind == "wide" else 40, 60000)).astype(np.int16).view(np.uint16)
        if kind == "sparse":
            w[rng.random(w.size) < 0.75] = 0
    st = Stats.of(w, 16, 4096)
    vals = st.present()[0]
    if kind == "sparse":
        vals = vals[1:]
    h = st.hist[vals].astype(np.float64)
    hl = h * np.log2(h)
    order = vals[np.argsort(-st.hist[vals], kind="stable")]
    pos = {int(v): i for i, v in enumerate(vals)}
    N = float(h.sum())
    tree0 = fastenc.trie_tree_sub(vals, h, hl, None, 16, CLASS_BITS / 2)
    used = 0
    for Mb in (15, 16):
        base = _tables(len(tree0[2]), Mb)
        bsat = np.empty(len(tree0[2]), np.int64)
        fastenc._trie_solve(tree0[2], tree0[1], tree0[3], tree0[4], N, 16.0, 12.0, Mb, *base, sat=bsat)
        for t in (1, 2, 8, 64, 300):
            keep = np.ones(len(vals), np.uint8)
            keep[[pos[int(v)] for v in order[:t]]] = 0
            tree = fastenc.trie_tree_sub(vals, h, hl, keep, 16, CLASS_BITS / 2)
            keys, K, F, left, right = tree
            n = len(F)
            same = fastenc.trie_same(F, left, right, tree0[2], tree0[3], tree0[4])
            assert same[0] < 0
            used += int((same >= 0).sum())
            for M in (Mb - 1, Mb):
                full = _tables(n, M)
                fastenc._trie_solve(F, K, left, right, N, 16.0, 12.0, M, *full)
                ref = _tables(n, M)
                for a in ref:
                    a.fill(-5)          # unwritten rows must not be read
                sat = np.empty(n, np.int64)
                fastenc.trie_solve_ref(F, K, left, right, N, 16.0, 12.0, M, *ref, sat, same, (base[0], base[1], bsat))
                comp = same < 0
                for a, b in zip(ref, full):
                    assert np.array_equal(a[comp], b[comp])
                assert np.all(ref[0][~comp] == -5)               # the base's nodes were not written
                wf = fastenc.trie_walker(full[2], full[3], keys, K, F, left, right)
                wr = fastenc.trie_walker(ref[2], ref[3], keys, K, F, left, right, same, (base[2], base[3]))
                for m in range(M + 1):
                    for residual in (False, True):
                        if (full[1] if residual else full[0])[0, m] < encoder.INF:
                            assert wr(residual, m) == wf(residual, m)
    assert used > 0
