"""The trie half of encoder.design_tableset in one C call (lutzip.codec.fastenc.trie_part: the zero-run sets'
designs without LUT classes, the screening, the best set's LUT sizes) against the Python path over the separate
kernels: the same table set and bits, on int8 / int16 / bf16 statistics dense and sparse, tiny (effort 0) and
large (t = 0's DPs as bases), several code length limits, LUT3 limits and class budgets (2 and 3: zero-run
candidates of too many classes left out). Every design's bits in the order considered are compared too."""
import numpy as np
import pytest

from lutzip.codec import encoder, fastenc
from lutzip.codec.encoder import Stats

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


def _words(kind, rng, n):
    if kind == "bf16":
        return (rng.standard_normal(n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16), 16
    if kind in ("int8", "int8_sparse", "int8_runs"):
        w = np.rint(rng.laplace(0, 9, n)).clip(-128, 127).astype(np.int8)
        if kind == "int8_sparse":
            w[rng.random(n) < 0.8] = 0
        if kind == "int8_runs":                 # long zero runs (zero-run classes of several lengths)
            for s in rng.integers(0, n, 40):
                w[s:s + int(rng.integers(5, 3000))] = 0
        return w.view(np.uint8), 8
    if kind == "zeros":                         # all zero but a few words
        w = np.zeros(n, np.int16)
        w[rng.integers(0, n, 3)] = rng.integers(-5, 5, 3)
        return w.view(np.uint16), 16
    if kind == "wide":                          # heavy tails: a trie of thousands of nodes (bases, two rounds)
        return np.rint(rng.standard_cauchy(n) * 50).clip(-32768, 32767).astype(np.int16).view(np.uint16), 16
    w = np.rint(rng.laplace(0, 40, n)).astype(np.int16)
    if kind == "int16_sparse":
        w[rng.random(n) < 0.75] = 0
    return w.view(np.uint16), 16


def _design(st, L, lut3_max, max_classes, effort, c):
    """The table set, its bits and every design's bits in the order they were considered."""
    encoder.TRIE_PART_C = c
    encoder._TRACE = trace = []
    try:
        ts, bits = encoder.design_tableset(Stats(st.word_bits, st.hist, st.runs, st.n_stripes, st.stripe_len), L,
                                           lut3_max, max_classes, effort)
    finally:
        encoder.TRIE_PART_C = True
        encoder._TRACE = None
    return ts.word_bits, list(ts.classes), np.asarray(ts.lut3).tolist(), bits, trace


KINDS = ["int8", "int8_sparse", "int8_runs", "int16", "int16_sparse", "wide", "bf16", "zeros"]


@pytest.mark.parametrize("kind", KINDS)
def test_trie_part_equals_python_path(kind, monkeypatch):
    rng = np.random.default_rng(KINDS.index(kind) + 40)
    taken = []
    real = fastenc.trie_part

    def spy(*a, **k):
        r = real(*a, **k)
        taken.append(r is not None)
        return r
    monkeypatch.setattr(fastenc, "trie_part", spy)
    cases = 0
    for n in (1500, 30000, 200000 if kind == "wide" else 60000):
        w, W = _words(kind, rng, n)
        st = Stats.of(w, W, 4096 if n > 2000 else 512)
        for L, lut3_max, max_classes, effort in ((8, encoder.MAX_LUT3, 16, 1), (12, encoder.MAX_LUT3, 16, 1),
                                                 (5, 8, 16, 1), (8, 64, 7, 1), (8, encoder.MAX_LUT3, 16, 0),
                                                 (6, encoder.MAX_LUT3, 3, 0), (8, encoder.MAX_LUT3, 2, 1)):
            assert _design(st, L, lut3_max, max_classes, effort, True) == \
                _design(st, L, lut3_max, max_classes, effort, False), (kind, n, L, lut3_max, max_classes, effort)
            cases += 1
    assert cases == 21 and sum(taken) >= 21      # the C call decided (the Python path ran only with it off)


def test_trie_part_leaves_effort_2_to_python(monkeypatch):
    rng = np.random.default_rng(3)
    w, W = _words("int16_sparse", rng, 30000)
    st = Stats.of(w, W, 4096)
    calls = []
    real = fastenc.trie_part
    monkeypatch.setattr(fastenc, "trie_part", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert _design(st, 8, encoder.MAX_LUT3, 16, 2, True) == _design(st, 8, encoder.MAX_LUT3, 16, 2, False)
    assert not calls
