"""A LUT size's designs in one C call (lutzip.codec.fastenc.design_lut, used by encoder._ZDesign.designs for t > 0)
against the Python path over the separate kernels: the same designs (classes, code lengths, LUT3, bits) in the same
order, with and without t = 0's DPs as bases, with zero-run classes, and the same table set from design_tableset."""
import numpy as np
import pytest

from lutzip.codec import encoder, fastenc
from lutzip.codec.encoder import Stats

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


class _NoFused:
    """The C kernels without design_lut: encoder._ZDesign.designs takes its Python path."""

    def __getattr__(self, name):
        if name == "design_lut":
            raise AttributeError(name)
        return getattr(fastenc, name)


def _words(kind, rng):
    if kind == "bf16":
        return (rng.standard_normal(80000).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16), 16
    if kind == "int8":
        return np.rint(rng.laplace(0, 9, 50000)).clip(-128, 127).astype(np.int8).view(np.uint8), 8
    if kind == "wide":          # heavy tails: a trie of over 2000 nodes (DPs over t = 0's as bases), two rounds
        return np.rint(rng.standard_cauchy(200000) * 50).clip(-32768, 32767).astype(np.int16).view(np.uint16), 16
    w = np.rint(rng.laplace(0, {"narrow": 30, "sparse": 60}[kind], 80000)).astype(np.int16)
    w = w.view(np.uint16)
    if kind == "sparse":
        w[rng.random(w.size) < 0.75] = 0
    return w, 16


def _design_rows(gen, st):
    return [(list(ts.classes), list(ts.lens), np.asarray(ts.lut3).tolist(), ts.bits(st), tb) for ts, tb in gen]


@pytest.mark.parametrize("kind", ["wide", "narrow", "sparse", "bf16", "int8"])
@pytest.mark.parametrize("with_base,L", [(True, 8), (False, 8), (True, 12)])
def test_design_lut_equals_python_path(kind, with_base, L, monkeypatch):
    """(L = 12: residual code lengths near the first round's 12 bits, where the second round's threshold decides)"""
    rng = np.random.default_rng(["wide", "narrow", "sparse", "bf16", "int8"].index(kind) + 10)
    w, W = _words(kind, rng)
    st = Stats.of(w, W, 4096)
    zcands = encoder._zrun_candidates(st, int(st.n_words - st.hist[0]))
    n_designs = n_two_rounds = n_based = 0
    for zks in zcands[:3]:
        with fastenc.scratch_scope():
            zd = encoder._ZDesign(st, zks, encoder.MAX_LUT3, 16, {})
            if with_base:
                list(zd.designs(0, W, L, st))
                n_based += zd._base is not None
            for t in zd.t_candidates(2):
                monkeypatch.setattr(encoder, "_k", lambda: fastenc)
                c = _design_rows(zd.designs(t, W, L, st), st)
                monkeypatch.setattr(encoder, "_k", lambda: _NoFused())
                p = _design_rows(zd.designs(t, W, L, st), st)
                assert c == p, (kind, zks, t)
                n_designs += len(c)
                n_two_rounds += len(c) == 2
    assert n_designs > 10
    if kind != "int8":
        assert n_two_rounds > 0        # the second round (another residual cost) is covered
    if kind == "wide" and with_base:
        assert n_based > 0             # DPs read from t = 0's tables are covered


@pytest.mark.parametrize("kind", ["wide", "sparse", "bf16"])
def test_design_tableset_same_with_design_lut(kind, monkeypatch):
    rng = np.random.default_rng(["wide", "sparse", "bf16"].index(kind) + 20)
    w, W = _words(kind, rng)
    st = Stats.of(w, W, 4096)
    got = {}
    for name, k in (("c", fastenc), ("py", _NoFused())):
        monkeypatch.setattr(encoder, "_k", lambda k=k: k)
        for effort in (1, 2):
            ts, bits = encoder.design_tableset(Stats.of(w, W, 4096), 8, effort=effort)
            got[name, effort] = (ts.word_bits, list(ts.classes), np.asarray(ts.lut3).tolist(), bits)
    assert got["c", 1] == got["py", 1] and got["c", 2] == got["py", 2]


@pytest.mark.parametrize("kind", ["sparse", "narrow", "int8"])
def test_design_batch_equals_design(kind):
    """encoder._design_batch (the zero-run screening's designs in one C call) = _design + _Built.bits of each, None
    where the Python path decides (more classes than 16 or 2^L)."""
    rng = np.random.default_rng(["sparse", "narrow", "int8"].index(kind) + 30)
    w, W = _words(kind, rng)
    st = Stats.of(w, W, 4096)
    vals = st.present()[0]
    specs = []
    for j in range(40):
        nr = int(rng.integers(0, 18))
        ks = rng.integers(0, 6, nr)
        bases = rng.choice(len(vals), nr, replace=False) if nr <= len(vals) else np.zeros(0, np.int64)
        ranges = [(int(vals[b]) >> int(k) << int(k), int(k), float(rng.integers(1, 5000))) for b, k in zip(bases, ks)]
        fres = float(rng.integers(1, 900)) if j % 3 else 0.0
        zruns = [(int(k), int(rng.integers(1, 300))) for k in rng.choice(8, int(rng.integers(0, 4)), replace=False)]
        specs.append((ranges, fres, zruns))
    specs.append(([], 0.0, []))                 # no class at all: the one raw class
    n_none = 0
    for L in (8, 3):
        got = encoder._design_batch(W, L, specs, st)
        for (ranges, fres, zruns), g in zip(specs, got):
            n = max(len(ranges) + (fres > 0) + len(zruns), 1)
            if g is None:
                assert n > 16 or n > (1 << L)
                n_none += 1
                continue
            ts = encoder._design(W, L, [], ranges, fres, zruns, st)
            classes, lens, tb = g
            assert classes == ts.classes and lens == ts.lens and tb == ts.bits(st)
            assert tb == encoder.total_bits(ts.tableset(), st)
    assert 0 < n_none < 2 * len(specs)
