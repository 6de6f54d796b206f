"""The encoder's grouped design for small alphabets (every int8 tensor): never worse than the trie search it
extends, a real gain where the zero runs are not geometric, table sets the software decoder and the core
decode; and (``-m slow``) the bundled real models against xz -9e in every mode."""
import lzma

import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import encoder
from lutzip.codec.bitstream import decode_stripes, encode_stripes
from lutzip.codec.tables import LUT, MAX_LUT3, ZRUN

#: the grouped design may cost at most this much more than the trie search alone (it never did when measured;
#: the trie search still runs, without LUT classes, and its result is kept when it is smaller)
TOLERANCE = 0.001


def laplace_int8(n, scale, sparsity=0.0, seed=0):
    rng = np.random.default_rng(seed)
    a = np.clip(np.rint(rng.laplace(0, scale, n)), -127, 127).astype(np.int8)
    if sparsity:
        a[np.abs(a) <= np.quantile(np.abs(a), sparsity)] = 0
    return a.view(np.uint8)


def kernels_int8(n_kernels, taps=9, kept=0.25, seed=0):
    """Pruned 3x3 kernels: most kernels are zero, the kept ones hold one or two large taps, so the zero runs
    cluster near multiples of ``taps`` (not geometric: a handful of ZRUN classes fits them well)."""
    rng = np.random.default_rng(seed)
    a = np.zeros((n_kernels, taps), np.int8)
    live = rng.random(n_kernels) < kept
    for i in np.nonzero(live)[0]:
        pos = rng.choice(taps, int(rng.integers(1, 3)), replace=False)
        a[i, pos] = np.clip(np.rint(rng.laplace(0, 25, len(pos))), -127, 127).astype(np.int8)
    return a.reshape(-1).view(np.uint8)


def _trie_only(st, monkeypatch, **kw):
    with monkeypatch.context() as m:
        m.setattr(encoder, "GROUPED_MAX_VALUES", 0)
        return encoder.design_tableset(st, **kw)


def run_bound_bits(st):
    """Order-0 entropy of the literals and the (stripe-cut) zero-run lengths, as symbols of one alphabet."""
    nz = st.hist[1:][st.hist[1:] > 0].astype(float)
    runs = st.runs[st.runs > 0].astype(float)
    sym = np.r_[nz, runs]
    return float(-(sym * np.log2(sym / sym.sum())).sum())


@pytest.mark.parametrize("sparsity", [0.0, 0.6, 0.75, 0.9])
@pytest.mark.parametrize("scale", [3, 12, 40])
def test_grouped_never_worse_than_trie_search(scale, sparsity, monkeypatch):
    words = laplace_int8(30000, scale, sparsity, seed=scale)
    st = encoder.Stats.of(words, 8, 4096)
    ts, bits = encoder.design_tableset(st)
    _old, old_bits = _trie_only(st, monkeypatch)
    assert bits <= old_bits * (1 + TOLERANCE)
    assert bits == encoder.total_bits(ts, st)
    ts.validate()
    assert ts.max_code_len <= 8 and len(ts.classes) <= 16


@pytest.mark.parametrize("lut3_max", [0, 16])
def test_small_lut3_keeps_the_full_trie_search(lut3_max, monkeypatch):
    """With LUT3 too small for any grouped set the trie search must still run in full."""
    words = laplace_int8(30000, 40, 0.6, seed=2)
    st = encoder.Stats.of(words, 8, 4096)
    ts, bits = encoder.design_tableset(st, lut3_max=lut3_max)
    assert len(ts.lut3) <= lut3_max
    assert bits <= _trie_only(st, monkeypatch, lut3_max=lut3_max)[1]


def test_grouped_gain_on_clustered_zero_runs(monkeypatch):
    words = kernels_int8(20000)
    st = encoder.Stats.of(words, 8, 4096)
    ts, bits = encoder.design_tableset(st)
    _old, old_bits = _trie_only(st, monkeypatch)
    assert bits < 0.99 * old_bits
    assert sum(cl.kind == ZRUN for cl in ts.classes) >= 2
    # within 5 % of the order-0 bound of literals and run lengths (plus the 48-bit stripe estimate)
    assert bits - encoder.table_bits(ts) - 48 * st.n_stripes < 1.05 * run_bound_bits(st)


def test_dense_int8_near_huffman():
    """Dense laplacian int8: every value in LUT3 (power-of-two blocks by frequency), within 1 % of the
    order-0 entropy plus tables and stripe overhead."""
    words = laplace_int8(100000, 12, seed=5)
    st = encoder.Stats.of(words, 8, 4096)
    ts, bits = encoder.design_tableset(st)
    assert any(cl.kind == LUT for cl in ts.classes)
    assert bits <= 1.01 * encoder._ideal_bits(st) + encoder.table_bits(ts) + 48 * st.n_stripes


@pytest.mark.parametrize("L", [2, 4, 8, 12])
@pytest.mark.parametrize("kind", ["dense", "sparse", "kernels", "few"])
def test_grouped_tables_decode(L, kind):
    rng = np.random.default_rng(L)
    if kind == "dense":
        words = laplace_int8(20000, 20, seed=L)
    elif kind == "sparse":
        words = laplace_int8(20000, 20, 0.9, seed=L)
    elif kind == "kernels":
        words = kernels_int8(3000, seed=L)
    else:
        words = rng.choice(np.array([0, 3, 200, 255], np.uint8), 5000)
    st = encoder.Stats.of(words, 8, 1024)
    for ts, bits in encoder._grouped_candidates(st, L, 16):
        ts.validate()
        assert ts.max_code_len <= L and len(ts.lut3) <= MAX_LUT3
        payload, sw = encode_stripes(words, ts, 1024)
        assert np.array_equal(decode_stripes(payload, sw, words.size, 1024, ts), words)
        assert bits - 48 * st.n_stripes - encoder.table_bits(ts) <= 32 * (len(payload) - st.n_stripes)


def test_grouped_roundtrip_container():
    arrays = {"conv": kernels_int8(4000, seed=3).view(np.int8).reshape(-1, 3, 3),
              "fc": laplace_int8(30000, 9, 0.75, seed=4).view(np.int8).reshape(100, 300),
              "bias": laplace_int8(64, 30, seed=5).view(np.int8)}
    data = ct.to_bytes(codec.compress(arrays))
    out = codec.decompress(ct.from_bytes(data))
    assert all(np.array_equal(out[k], v) for k, v in arrays.items())


def test_grouped_tables_on_the_core():
    """A grouped table set (W = 8, L = 8, ZRUN classes, padded LUT blocks) on the MyHDL core."""
    from lutzip.hdl.flows import model as M
    from lutzip.hdl.flows import simulate as S
    from lutzip.hdl.flows.vectors import Vectors
    words = kernels_int8(600, kept=0.5, seed=9)
    st = encoder.Stats.of(words, 8, 600)
    both = [(ts, b) for ts, b in encoder._grouped_candidates(st, 8, 16)
            if {ZRUN, LUT} <= {cl.kind for cl in ts.classes}]
    ts = min(both, key=lambda x: x[1])[0]
    payload, sw = encode_stripes(words, ts, 600)
    pk = [[int(v) for v in s] for s in M.split_stripes(payload, sw)]
    res = S.check(Vectors.from_packets(pk, M.table_ops(ts), W=8), in_gap=0.2, out_stall=0.2, seed=3)
    assert [d for d, _, _ in res.rows] == [int(v) for v in words]


# ------------------------------------------------------------------------------------------- real models
MODES = [("int8", p) for p in (0.0, 0.6, 0.75, 0.9)] + [("int16", p) for p in (0.0, 0.6, 0.75, 0.9)] + \
    [("bf16", 0.0)]
#: cells measured behind xz -9e with the default output (two code tables where they pay, ``states=2``, since
#: 2026-12-07 late night; docs/BENCHMARKS.md "Real models", 2026-12-08: 62 of 63 cells ahead, ddddocr's 9 included;
#: tests/test_bench_models.py checks the same cells against recorded xz sizes); expected to fail (not strict: a
#: cell that gets ahead shows as XPASS and should leave this list)
BEHIND_XZ = {           # cell -> lutzip's size against xz -9e's, as measured
    ("nudenet", "int8", 0.0): "+0.48 %",
}
#: every registered real model (ddddocr: 13.5 M weights, its 9 cells add a few minutes)
BENCH_MODELS = ["silero-vad", "oww-embedding", "magika", "ppocr-det", "ppocr-rec", "nudenet", "ddddocr"]
_cache = {}


def _sizes(model, mode, p):
    key = (model, mode, p)
    if key not in _cache:
        from lutzip.weights.models import load_real_model, real_model_path
        from lutzip.weights.quantize import prepare
        if real_model_path(model) is None:
            pytest.skip(f"{model} is not installed")
        arrays = load_real_model(model)
        prep, attrs = prepare(arrays, quantize=None if mode == "bf16" else mode, bf16=mode == "bf16",
                              prune_fraction=p, skip_unsupported=True)
        raw = b"".join(np.ascontiguousarray(a).tobytes() for a in prep.values())
        lz = len(ct.to_bytes(codec.compress(prep, attrs=attrs, states=2)))          # the default output
        _cache[key] = (lz, len(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME)))
    return _cache[key]


def _cells():
    for model in BENCH_MODELS:
        for mode, p in MODES:
            marks = [pytest.mark.slow]
            if (model, mode, p) in BEHIND_XZ:
                marks.append(pytest.mark.xfail(reason=f"measured behind xz -9e: {BEHIND_XZ[model, mode, p]}",
                                               strict=False))
            yield pytest.param(model, mode, p, marks=marks, id=f"{model}-{mode}-{int(p * 100)}")


@pytest.mark.parametrize("model,mode,p", list(_cells()))
def test_real_model_ahead_of_xz(model, mode, p):
    lz, xz = _sizes(model, mode, p)
    assert lz < xz, f"{model} {mode} {p:.0%}: lutzip {lz} B, xz -9e {xz} B ({lz / xz - 1:+.2%})"


#: cells ahead of xz -9e only with two code tables and the classes cut for them (``states.apply(redesign=True)``;
#: docs/log/2026-12-compression.md, 2026-12-07 late night: nudenet int8 0 % 1 995 942 B against xz's 1 996 032)
AHEAD_WITH_REDESIGN = [("nudenet", "int8", 0.0)]


@pytest.mark.slow
@pytest.mark.parametrize("model,mode,p", AHEAD_WITH_REDESIGN, ids=lambda v: str(v))
def test_real_model_ahead_of_xz_with_two_tables_redesigned(model, mode, p):
    from lutzip.codec import states
    from lutzip.weights.models import load_real_model, real_model_path
    from lutzip.weights.quantize import prepare
    if real_model_path(model) is None:
        pytest.skip(f"{model} is not installed")
    prep, attrs = prepare(load_real_model(model), quantize=mode, prune_fraction=p, skip_unsupported=True)
    raw = b"".join(np.ascontiguousarray(a).tobytes() for a in prep.values())
    xz = len(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
    data = ct.to_bytes(states.apply(codec.compress(prep, attrs=attrs), L=8, redesign=True))
    back = codec.decompress(ct.from_bytes(data))
    for k, a in prep.items():
        assert np.array_equal(np.ascontiguousarray(back[k]).view(np.uint8), np.ascontiguousarray(a).view(np.uint8)), k
    assert len(data) < xz, f"{model} {mode} {p:.0%} two tables, redesigned: lutzip {len(data)} B, xz -9e {xz} B " \
                           f"({len(data) / xz - 1:+.2%})"
