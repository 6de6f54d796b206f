"""The MyHDL decoder core against the reference model (lutzip.hdl.flows.model), cycle-level MyHDL simulation
under the one stimulus driver (lutzip.hdl.flows.simulate)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lutzip.codec.bitstream import ERR_BAD_HEADER, ERR_INVALID_PREFIX, ERR_LUT3_RANGE, ERR_OVERRUN, ERR_ZRUN_OVERFLOW, STRIPE_MARKER, decode_stripes, encode_stripes
from lutzip.codec.encoder import best_tableset
from lutzip.hdl.flows import model as M
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.vectors import Vectors, random_stripe, random_tableset
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet

ZT = TableSet(16, [ClassSpec(1, ZRUN, 5, 0), ClassSpec(2, LUT, 2, 0), ClassSpec(2, RANGE, 16, 0)],
              np.array([0, 1, 0xFFFF, 2], np.uint16))


@pytest.fixture(params=["window", "vector", "window-onehot"])
def front(request):
    """Both front ends of the core and the window front's one-hot step (docs/CORE.md): same ports, same
    words, same errors. Returned as the core's keyword parameters."""
    return {"window": {"FRONT": "window"}, "vector": {"FRONT": "vector"},
            "window-onehot": {"FRONT": "window", "STEP": "onehot"}}[request.param]


def default_run_excludes(item):
    """Default-run budget: the window front runs every test of this file; the vector front and the one-hot
    step run the flipped-bits test (random table sets and symbols, bit errors, resynchronisation, pauses)
    and the rest with ``-m slow``. Their MyHDL descriptions also run every quick case of
    tests/test_hdl_sims.py (the cycle-exact yardstick of the converted HDL)."""
    front = getattr(item, "callspec", None) and item.callspec.params.get("front")
    return front not in (None, "window") and item.originalname != "test_flipped_bits_match_reference_and_resync"


PARAMS = ("L", "W", "LUT3_DEPTH", "LUT1_RAM", "FRONT", "STEP")


def check(packets, ops, **kw):
    """Run ``packets`` after the table writes ``ops`` in MyHDL (core parameters and make_stimulus options in
    ``kw``) and compare with the reference model (raises on any difference)."""
    params = {k: kw.pop(k) for k in PARAMS if k in kw}
    return S.check(Vectors.from_packets(packets, ops, **params), **kw)


def _laplace_int16(rng, n, zeros):
    a = np.round(rng.laplace(0, 40, n)).astype(np.int16)
    a[rng.random(n) < zeros] = 0
    return a.view(np.uint16)


def _encode(words, ts, stripe):
    pay, sw = encode_stripes(words, ts, stripe)
    assert np.array_equal(decode_stripes(pay, sw, words.size, stripe, ts), words)
    return [[int(v) for v in s] for s in M.split_stripes(pay, sw)]


def test_model_matches_reference_decoder():
    rng = np.random.default_rng(0)
    w = _laplace_int16(rng, 3000, 0.7)
    pk = _encode(w, ZT, 1000)
    exp = M.expected_outputs(pk, M.table_ops(ZT))
    assert [d for d, _, _ in exp] == [int(v) for v in w]
    assert [i for i, (_, last, _) in enumerate(exp) if last] == [999, 1999, 2999]


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), W=st.sampled_from([8, 16]), ram=st.sampled_from(["block", "distributed"]))
def test_random_tablesets_random_symbols(seed, W, ram, front):
    """Random table sets (any kinds, index lengths, LUT3 contents), random symbols, gaps and backpressure;
    both LUT1 read styles."""
    rng = np.random.default_rng(seed)
    ts = random_tableset(rng, W=W)
    pk = [random_stripe(rng, ts, int(rng.integers(1, 120)))[0] for _ in range(6)]
    check(pk, M.table_ops(ts), W=W, in_gap=0.2, out_stall=0.2, seed=seed % 1000, LUT1_RAM=ram, **front)


@pytest.mark.parametrize("zeros", [0.6, 0.9])
def test_laplace_int16_with_zeros(zeros, front):
    rng = np.random.default_rng(int(zeros * 10))
    w = _laplace_int16(rng, 2500, zeros)
    ts = best_tableset(w, 16, stripe_len=700)
    pk = _encode(w, ts, 700)
    res = check(pk, M.table_ops(ts), in_gap=0.25, out_stall=0.3, seed=1, **front)
    assert len(res.rows) == w.size and not res.error_codes


def test_bf16_weights(front):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(7)
    w = (rng.standard_normal(2000) * 0.02).astype(ml_dtypes.bfloat16).view(np.uint16)
    ts = best_tableset(w, 16, stripe_len=512)
    pk = _encode(w, ts, 512)
    res = check(pk, M.table_ops(ts), in_gap=0.1, out_stall=0.1, seed=2, **front)
    assert [d for d, _, _ in res.rows] == [int(v) for v in w]


def test_one_word_per_cycle_and_no_bubbles(front):
    """Always-valid input, always-ready output: one word per cycle, input word boundaries (17-bit raw
    symbols) and stripe boundaries included; zero runs one zero per cycle."""
    rng = np.random.default_rng(3)
    raw = TableSet(16, [ClassSpec(1, RANGE, 16, 0)])
    w = rng.integers(0, 1 << 16, 1500).astype(np.uint16)
    res = check(_encode(w, raw, 500), M.table_ops(raw), **front)
    oc = res.out_cycles
    assert np.all(np.diff(oc) == 1)
    z = _laplace_int16(rng, 1500, 0.9)
    res = check(_encode(z, ZT, 1500), M.table_ops(ZT), **front)
    assert np.all(np.diff(res.out_cycles) == 1)


def _good_and_bad(rng, ts, n=300):
    w = rng.integers(-3, 4, n).astype(np.int16).view(np.uint16)
    return _encode(w, ts, 100)


def _expect_errors(res, pk, ops):
    exp = M.expected_outputs(pk, ops)
    codes = [int(d) for d, _, user in exp if user]
    assert res.error_codes == codes
    return codes


def test_error_bad_header_then_resync(front):
    rng = np.random.default_rng(4)
    pk = _good_and_bad(rng, ZT)
    pk[1] = [0x12345678] + pk[1][1:]
    ops = M.table_ops(ZT)
    res = check(pk, ops, in_gap=0.1, out_stall=0.1, **front)
    assert _expect_errors(res, pk, ops) == [ERR_BAD_HEADER]
    assert res.rows[100] == (ERR_BAD_HEADER, 1, 1) and len(res.rows) == 201


def test_error_truncated_stripe_overrun(front):
    rng = np.random.default_rng(5)
    pk = _good_and_bad(rng, ZT)
    pk[0] = pk[0][:2]
    ops = M.table_ops(ZT)
    res = check(pk, ops, out_stall=0.2, **front)
    assert _expect_errors(res, pk, ops) == [ERR_OVERRUN]


def test_error_invalid_prefix(front):
    ts = TableSet(16, [ClassSpec(2, RANGE, 16, 0), ClassSpec(2, LUT, 1, 0)], np.array([5, 6], np.uint16))
    w = np.array([5, 6, 1000, 5] * 30, np.uint16)
    pk = _encode(w, ts, 40)
    pk[1] = pk[1][:1] + [0xFFFFFFFF] + pk[1][2:]    # prefix 11: no class
    ops = M.table_ops(ts)
    res = check(pk, ops, **front)
    assert _expect_errors(res, pk, ops) == [ERR_INVALID_PREFIX]
    assert [d for d, _, _ in res.rows[41:]] == [int(v) for v in w[80:]]


def test_error_lut3_range_and_zero_run_overflow(front):
    rng = np.random.default_rng(6)
    pk = _good_and_bad(rng, ZT)
    ops = M.table_ops(ZT)
    short = [op for op in ops if op[0] != M.SEL_CONFIG] + [(M.SEL_CONFIG, 0, 2)]  # LUT3 entries 2, 3 invalid
    res = check(pk, short, **front)
    assert ERR_LUT3_RANGE in _expect_errors(res, pk, short)
    # a zero run one longer than the stripe: 20 zeros = runs of 16 + 4, the header claims 15 words
    ts = TableSet(16, [ClassSpec(1, ZRUN, 4, 0), ClassSpec(1, RANGE, 16, 0)])
    pk = _encode(np.zeros(40, np.uint16), ts, 20)
    pk[0] = [STRIPE_MARKER | 14] + pk[0][1:]
    ops = M.table_ops(ts)
    res = check(pk, ops, **front)
    assert _expect_errors(res, pk, ops) == [ERR_ZRUN_OVERFLOW] and len(res.rows) == 21


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_flipped_bits_match_reference_and_resync(seed, front):
    """Random bit flips: the core gives exactly the reference's words / error marker per stripe."""
    rng = np.random.default_rng(seed)
    ts = random_tableset(rng, complete=bool(rng.random() < 0.5))
    pk = [random_stripe(rng, ts, int(rng.integers(1, 80)))[0] for _ in range(6)]
    for p in pk[:-1]:
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(len(p)))
            p[i] ^= 1 << int(rng.integers(32 if i else 16))
    if rng.random() < 0.5:
        pk[0] = pk[0][:max(1, len(pk[0]) // 2)]
    ops = M.table_ops(ts)
    res = check(pk, ops, in_gap=0.2, out_stall=0.2, seed=seed % 100, **front)
    _expect_errors(res, pk, ops)
    assert res.rows[-1][1]  # the last (intact) stripe ends properly


def test_garbage_never_hangs(front):
    rng = np.random.default_rng(8)
    ts = random_tableset(rng, complete=False)
    pk = []
    for _ in range(12):
        n = int(rng.integers(1, 6))
        hdr = STRIPE_MARKER | int(rng.integers(0, 300)) if rng.random() < 0.7 else int(rng.integers(0, 2**32))
        pk.append([hdr] + [int(v) for v in rng.integers(0, 2**32, n, dtype=np.uint64)])
    ops = M.table_ops(ts)
    res = check(pk, ops, in_gap=0.3, out_stall=0.3, **front)
    assert not res.timed_out and sum(1 for _, last, _ in res.rows if last) == len(pk)


def test_tables_survive_reset(front, tmp_path):
    rng = np.random.default_rng(9)
    pk = _good_and_bad(rng, ZT, 200)
    vec = Vectors.from_packets(pk, M.table_ops(ZT), **front)
    stim = S.make_stimulus(vec, reset_after_tables=3, out_stall=0.1)
    res = S.run("myhdl", stim, tmp_path, vec.params)
    S.assert_matches(res, vec.expected)
    assert len(res.rows) == 200 and res.out_cycles[-1] - stim.stream_start() < 200 + 80


@pytest.mark.parametrize("L,W,depth", [(10, 8, 256), (5, 16, 64)])
def test_other_parameters(L, W, depth, front):
    """Other L / W / LUT3_DEPTH: table writes beyond the tables are ignored, LUT3 range vs the clipped config."""
    rng = np.random.default_rng(L)
    ts = random_tableset(rng, W=W, L=L, lut_kmax=4, max_classes=min(16, 1 << L))
    while len(ts.lut3) > depth or sum(cl.kind == LUT for cl in ts.classes) < 2:
        ts = random_tableset(rng, W=W, L=L, lut_kmax=4, max_classes=min(16, 1 << L))
    pk = [random_stripe(rng, ts, int(rng.integers(1, 100)))[0] for _ in range(5)]
    ops = M.table_ops(ts, L) + [(0, 4095, 0x7FFF), (1, 100, 0x7FFFFF), (2, 4095, 0xFF)]
    if L == 5:
        # LUT3 size written larger than the RAM and LUT3 content cut short: the config is clipped to the RAM
        ops = [op for op in ops if op[0] != M.SEL_CONFIG and not (op[0] == 2 and op[1] >= depth // 2)]
        ops.append((M.SEL_CONFIG, 0, 5000))
    check(pk, ops, L=L, W=W, LUT3_DEPTH=depth, in_gap=0.2, out_stall=0.2, **front)


def test_tiny_stripes_back_to_back(front):
    """Stripes of 1-3 words, input always valid: stripes start every cycle or two while the flushes of
    earlier stripes are still on their way (tags must keep them apart)."""
    rng = np.random.default_rng(11)
    ts = TableSet(16, [ClassSpec(1, ZRUN, 1, 0), ClassSpec(2, RANGE, 4, 0), ClassSpec(2, LUT, 0, 0)],
                  np.array([7], np.uint16))
    pk = [random_stripe(rng, ts, int(rng.integers(1, 4)))[0] for _ in range(120)]
    for ram in ("block", "distributed"):
        res = check(pk, M.table_ops(ts), LUT1_RAM=ram, **front)
        assert sum(1 for _, last, _ in res.rows if last) == 120
