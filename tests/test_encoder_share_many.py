"""plan_tables' sharing test with every table set's cost of a tensor in one C call (fastenc.ExactBitsMany) against
TableCost.bits one by one: the same bits, and the same tables and assignment from plan_tables_stats."""
import numpy as np
import pytest

from lutzip.codec import encoder, fastenc
from lutzip.codec.encoder import Stats, TableCost

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


def _stats(rng, n_tensors):
    out = []
    for i in range(n_tensors):
        n = int(rng.choice([64, 700, 5000, 40000]))
        if i % 3 == 2:
            w = np.rint(rng.laplace(0, rng.uniform(20, 400), n)).astype(np.int16).view(np.uint16)
            bits = 16
        else:
            w = np.rint(rng.laplace(0, rng.uniform(2, 30), n)).clip(-128, 127).astype(np.int8)
            if i % 2:
                w[rng.random(n) < rng.uniform(0.3, 0.95)] = 0
            w, bits = w.view(np.uint8), 8
        out.append(Stats.of(w, bits, 4096))
    return out


def test_exact_bits_many_equals_tablecost_bits():
    rng = np.random.default_rng(11)
    sts = _stats(rng, 24)
    by_w = {}
    for st in sts[:12]:
        ts, _b = encoder.design_tableset(st, 8, effort=0)
        tc = TableCost(ts, 4096)
        many, tcs = by_w.setdefault(ts.word_bits, (fastenc.ExactBitsMany(), []))
        many.add(tc._cls, tc._lut3u)
        tcs.append(tc)
    n = 0
    for st in sts:
        many, tcs = by_w[st.word_bits]
        got = many.bits(encoder._stats_args(st))
        assert got == [tc.bits(st) for tc in tcs]
        n += len(got)
    assert n > 50 and any(b == np.inf for m, t in by_w.values() for st in sts if st.word_bits == 8
                          for b in m.bits(encoder._stats_args(st)))          # (uncovered values: inf as well)


class _NoMany:
    def __getattr__(self, name):
        if name == "ExactBitsMany":
            raise AttributeError(name)
        return getattr(fastenc, name)


def test_plan_tables_same_with_and_without_the_batched_costs(monkeypatch):
    rng = np.random.default_rng(12)
    sts = _stats(rng, 40)
    got = {}
    for name, k in (("many", fastenc), ("one", _NoMany())):
        monkeypatch.setattr(encoder, "_k", lambda k=k: k)
        tables, assign = encoder.plan_tables_stats([Stats(s.word_bits, s.hist, s.runs, s.n_stripes, s.stripe_len)
                                                    for s in sts], 4096, 8)
        got[name] = ([(t.word_bits, list(t.classes), np.asarray(t.lut3).tolist()) for t in tables], assign)
    assert got["many"] == got["one"]
    assert len(set(got["many"][1])) < len(sts)          # some tensors share a set
