"""The MyHDL decoder core against the reference decoder (lutzip.codec.bitstream), cycle-level MyHDL simulation."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lutzip.codec.bitstream import ERR_BAD_HEADER, ERR_INVALID_PREFIX, ERR_LUT3_RANGE, ERR_OVERRUN, ERR_ZRUN_OVERFLOW, STRIPE_MARKER, decode_stripes, encode_stripes
from lutzip.codec.encoder import best_tableset
from lutzip.hdl.flows import core_sim as cs
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet

ZT = TableSet(16, [ClassSpec(1, ZRUN, 5, 0), ClassSpec(2, LUT, 2, 0), ClassSpec(2, RANGE, 16, 0)],
              np.array([0, 1, 0xFFFF, 2], np.uint16))


@pytest.fixture(params=["window", "vector", "window-onehot"])
def front(request):
    """Both front ends of the core and the window front's one-hot step (docs/CORE.md): same ports, same
    words, same errors. Returned as the core's keyword parameters."""
    return {"window": {"FRONT": "window"}, "vector": {"FRONT": "vector"},
            "window-onehot": {"FRONT": "window", "STEP": "onehot"}}[request.param]


def _laplace_int16(rng, n, zeros):
    a = np.round(rng.laplace(0, 40, n)).astype(np.int16)
    a[rng.random(n) < zeros] = 0
    return a.view(np.uint16)


def _encode(words, ts, stripe):
    pay, sw = encode_stripes(words, ts, stripe)
    assert np.array_equal(decode_stripes(pay, sw, words.size, stripe, ts), words)
    return cs.packets_from_stripes(pay, sw)


def test_model_matches_reference_decoder():
    rng = np.random.default_rng(0)
    w = _laplace_int16(rng, 3000, 0.7)
    pk = _encode(w, ZT, 1000)
    exp = cs.expected_words(pk, cs.table_ops(ZT))
    assert [d for d, _, _ in exp] == [int(v) for v in w]
    assert [i for i, (_, last, _) in enumerate(exp) if last] == [999, 1999, 2999]


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), W=st.sampled_from([8, 16]), ram=st.sampled_from(["block", "distributed"]))
def test_random_tablesets_random_symbols(seed, W, ram, front):
    """Random table sets (any kinds, index lengths, LUT3 contents), random symbols, gaps and backpressure;
    both LUT1 read styles."""
    rng = np.random.default_rng(seed)
    ts = cs.random_tableset(rng, W=W)
    pk = [cs.random_stripe(rng, ts, int(rng.integers(1, 120)))[0] for _ in range(6)]
    cs.check(pk, cs.table_ops(ts), W=W, in_gap=0.2, out_stall=0.2, seed=seed % 1000, LUT1_RAM=ram, **front)


@pytest.mark.parametrize("zeros", [0.6, 0.9])
def test_laplace_int16_with_zeros(zeros, front):
    rng = np.random.default_rng(int(zeros * 10))
    w = _laplace_int16(rng, 2500, zeros)
    ts = best_tableset(w, 16, stripe_len=700)
    pk = _encode(w, ts, 700)
    res = cs.check(pk, cs.table_ops(ts), in_gap=0.25, out_stall=0.3, seed=1, **front)
    assert len(res.words) == w.size and not res.errors


def test_bf16_weights(front):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(7)
    w = (rng.standard_normal(2000) * 0.02).astype(ml_dtypes.bfloat16).view(np.uint16)
    ts = best_tableset(w, 16, stripe_len=512)
    pk = _encode(w, ts, 512)
    res = cs.check(pk, cs.table_ops(ts), in_gap=0.1, out_stall=0.1, seed=2, **front)
    assert [d for d, _, _ in res.words] == [int(v) for v in w]


def test_one_word_per_cycle_and_no_bubbles(front):
    """Always-valid input, always-ready output: one word per cycle, input word boundaries (17-bit raw
    symbols) and stripe boundaries included; zero runs one zero per cycle."""
    rng = np.random.default_rng(3)
    raw = TableSet(16, [ClassSpec(1, RANGE, 16, 0)])
    w = rng.integers(0, 1 << 16, 1500).astype(np.uint16)
    res = cs.check(_encode(w, raw, 500), cs.table_ops(raw), **front)
    oc = np.array(res.out_cycles)
    assert np.all(np.diff(oc) == 1)
    z = _laplace_int16(rng, 1500, 0.9)
    res = cs.check(_encode(z, ZT, 1500), cs.table_ops(ZT), **front)
    assert np.all(np.diff(res.out_cycles) == 1)


def _good_and_bad(rng, ts, n=300):
    w = rng.integers(-3, 4, n).astype(np.int16).view(np.uint16)
    return _encode(w, ts, 100)


def _expect_errors(res, pk, ops):
    exp = cs.expected_words(pk, ops)
    codes = [d for d, _, user in exp if user]
    assert res.errors == codes
    return codes


def test_error_bad_header_then_resync(front):
    rng = np.random.default_rng(4)
    pk = _good_and_bad(rng, ZT)
    pk[1] = [0x12345678] + pk[1][1:]
    ops = cs.table_ops(ZT)
    res = cs.check(pk, ops, in_gap=0.1, out_stall=0.1, **front)
    assert _expect_errors(res, pk, ops) == [ERR_BAD_HEADER]
    assert res.words[100] == (ERR_BAD_HEADER, True, True) and len(res.words) == 201


def test_error_truncated_stripe_overrun(front):
    rng = np.random.default_rng(5)
    pk = _good_and_bad(rng, ZT)
    pk[0] = pk[0][:2]
    ops = cs.table_ops(ZT)
    res = cs.check(pk, ops, out_stall=0.2, **front)
    assert _expect_errors(res, pk, ops) == [ERR_OVERRUN]


def test_error_invalid_prefix(front):
    ts = TableSet(16, [ClassSpec(2, RANGE, 16, 0), ClassSpec(2, LUT, 1, 0)], np.array([5, 6], np.uint16))
    w = np.array([5, 6, 1000, 5] * 30, np.uint16)
    pk = _encode(w, ts, 40)
    pk[1] = pk[1][:1] + [0xFFFFFFFF] + pk[1][2:]    # prefix 11: no class
    ops = cs.table_ops(ts)
    res = cs.check(pk, ops, **front)
    assert _expect_errors(res, pk, ops) == [ERR_INVALID_PREFIX]
    assert [d for d, _, _ in res.words[41:]] == [int(v) for v in w[80:]]


def test_error_lut3_range_and_zero_run_overflow(front):
    rng = np.random.default_rng(6)
    pk = _good_and_bad(rng, ZT)
    ops = cs.table_ops(ZT)
    short = [op for op in ops if op[0] != cs.SEL_CONFIG] + [(cs.SEL_CONFIG, 0, 2)]  # LUT3 entries 2, 3 invalid
    res = cs.check(pk, short, **front)
    assert ERR_LUT3_RANGE in _expect_errors(res, pk, short)
    # a zero run one longer than the stripe: 20 zeros = runs of 16 + 4, the header claims 15 words
    ts = TableSet(16, [ClassSpec(1, ZRUN, 4, 0), ClassSpec(1, RANGE, 16, 0)])
    pk = _encode(np.zeros(40, np.uint16), ts, 20)
    pk[0] = [STRIPE_MARKER | 14] + pk[0][1:]
    ops = cs.table_ops(ts)
    res = cs.check(pk, ops, **front)
    assert _expect_errors(res, pk, ops) == [ERR_ZRUN_OVERFLOW] and len(res.words) == 21


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_flipped_bits_match_reference_and_resync(seed, front):
    """Random bit flips: the core gives exactly the reference's words / error marker per stripe."""
    rng = np.random.default_rng(seed)
    ts = cs.random_tableset(rng, complete=bool(rng.random() < 0.5))
    pk = [cs.random_stripe(rng, ts, int(rng.integers(1, 80)))[0] for _ in range(6)]
    for p in pk[:-1]:
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(len(p)))
            p[i] ^= 1 << int(rng.integers(32 if i else 16))
    if rng.random() < 0.5:
        pk[0] = pk[0][:max(1, len(pk[0]) // 2)]
    ops = cs.table_ops(ts)
    res = cs.check(pk, ops, in_gap=0.2, out_stall=0.2, seed=seed % 100, **front)
    _expect_errors(res, pk, ops)
    assert res.words[-1][1]  # the last (intact) stripe ends properly


def test_garbage_never_hangs(front):
    rng = np.random.default_rng(8)
    ts = cs.random_tableset(rng, complete=False)
    pk = []
    for _ in range(12):
        n = int(rng.integers(1, 6))
        hdr = STRIPE_MARKER | int(rng.integers(0, 300)) if rng.random() < 0.7 else int(rng.integers(0, 2**32))
        pk.append([hdr] + [int(v) for v in rng.integers(0, 2**32, n, dtype=np.uint64)])
    ops = cs.table_ops(ts)
    res = cs.check(pk, ops, in_gap=0.3, out_stall=0.3, **front)
    assert not res.timed_out and sum(1 for _, last, _ in res.words if last) == len(pk)


def test_tables_survive_reset(front):
    rng = np.random.default_rng(9)
    pk = _good_and_bad(rng, ZT, 200)
    res = cs.check(pk, cs.table_ops(ZT), reset_after_tables=True, out_stall=0.1, **front)
    assert len(res.words) == 200 and res.cycles < 200 + 80


@pytest.mark.parametrize("L,W,depth", [(10, 8, 256), (5, 16, 64)])
def test_other_parameters(L, W, depth, front):
    """Other L / W / LUT3_DEPTH: table writes beyond the tables are ignored, LUT3 range vs the clipped config."""
    rng = np.random.default_rng(L)
    ts = cs.random_tableset(rng, W=W, L=L, lut_kmax=4, max_classes=min(16, 1 << L))
    while len(ts.lut3) > depth or sum(cl.kind == LUT for cl in ts.classes) < 2:
        ts = cs.random_tableset(rng, W=W, L=L, lut_kmax=4, max_classes=min(16, 1 << L))
    pk = [cs.random_stripe(rng, ts, int(rng.integers(1, 100)))[0] for _ in range(5)]
    ops = cs.table_ops(ts, L) + [(0, 4095, 0x7FFF), (1, 100, 0x7FFFFF), (2, 4095, 0xFF)]
    if L == 5:
        # LUT3 size written larger than the RAM and LUT3 content cut short: the config is clipped to the RAM
        ops = [op for op in ops if op[0] != cs.SEL_CONFIG and not (op[0] == 2 and op[1] >= depth // 2)]
        ops.append((cs.SEL_CONFIG, 0, 5000))
    cs.check(pk, ops, L=L, W=W, LUT3_DEPTH=depth, in_gap=0.2, out_stall=0.2, **front)


def test_tiny_stripes_back_to_back(front):
    """Stripes of 1-3 words, input always valid: stripes start every cycle or two while the flushes of
    earlier stripes are still on their way (tags must keep them apart)."""
    rng = np.random.default_rng(11)
    ts = TableSet(16, [ClassSpec(1, ZRUN, 1, 0), ClassSpec(2, RANGE, 4, 0), ClassSpec(2, LUT, 0, 0)],
                  np.array([7], np.uint16))
    pk = [cs.random_stripe(rng, ts, int(rng.integers(1, 4)))[0] for _ in range(120)]
    for ram in ("block", "distributed"):
        res = cs.check(pk, cs.table_ops(ts), LUT1_RAM=ram, **front)
        assert sum(1 for _, last, _ in res.words if last) == 120
