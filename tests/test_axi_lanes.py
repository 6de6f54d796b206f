"""``lutzip_axi`` with LANES > 1 (the N-lane decoder behind the AXI top, docs/AXI.md "LANES > 1"): the same
MM2S buffers and the same S2MM bytes as one lane, bit-exact against the top's model
(lutzip.firmware.axi.buffer.model_transfer) and the software decoder; PARAMS reports LANES; garbage, soft reset;
the converted Verilog in Verilator on a real model's tensor, through the simulated PYNQ device."""
import zlib

import numpy as np
import pytest

from lutzip.errors import UnsupportedError
from lutzip.firmware.axi import buffer as B
from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.lutzip_axi import lutzip_axi, top_signals
from lutzip.firmware.axi.mysim import MyhdlAxi
from lutzip.hdl.flows import model as _m, vectors as _v

from test_axi_top import _buffer, _garbage_transfers, _stripes  # the single top's test helpers

try:
    from lutzip.firmware.axi.sim import AxiSim  # noqa: F401
    import shutil
    HAVE_VERILATOR = shutil.which("verilator") is not None
except ImportError:
    HAVE_VERILATOR = False
needs_verilator = pytest.mark.skipif(not HAVE_VERILATOR, reason="verilator not installed")

#: Small lane buffers: the MyHDL elaboration stays quick (the rates need the defaults, not the bytes).
SMALL = dict(IN_ROWS=64, ROWS=16)


def _check(m, buf, ops, W, OUT_BYTES, **kw):
    exp, fails = B.model_transfer(buf, ops, W=W)
    m.write_reg(R.CONTROL, R.CTRL_CLEAR_COUNTERS | R.CTRL_CLEAR_ERROR)
    out, last, _ = m.transfer(buf, B.out_capacity(len(exp), W, OUT_BYTES), **kw)
    assert last, "no tlast"
    assert out == B.out_bytes(exp, W)
    assert m.read_reg(R.WORDS_OUT) == len(exp)
    assert m.read_reg(R.OUT_CRC) == zlib.crc32(out)
    st = R.decode_status(m.read_reg(R.STATUS))
    assert not st["busy"] and not st["in_reset"]
    assert m.read_reg(R.ERR_COUNT) == len(fails)
    if fails:
        assert st["code"] == fails[0][1] and m.read_reg(R.ERR_STRIPE) == fails[0][0]
    return fails


def test_lane_parameters_are_checked():
    for kw, what in [({"LANES": 3}, "LANES must be"), ({"LANES": 4}, "exceed the 32-bit beat"),
                     ({"LANES": 8, "W": 8, "OUT_BYTES": 4}, "at most 4 lanes"), ({"IN_ROWS": 64}, "only with LANES")]:
        with pytest.raises(UnsupportedError, match=what):
            lutzip_axi(**top_signals(kw.get("OUT_BYTES", 4)), **kw)


def test_two_lanes_bit_exact_garbage_and_soft_reset():
    """W = 16, 32-bit beats, 2 lanes (MyHDL): PARAMS says 2; good stripes with odd and even counts under
    backpressure and source pauses; corrupt descriptors, a bad header and a truncated stripe complete with the
    model's bytes and codes; a soft reset mid-transfer discards to tlast and the next transfer passes."""
    rng = np.random.default_rng(21)
    ts = _v.random_tableset(rng, W=16)
    ops = _m.table_ops(ts)
    with MyhdlAxi(W=16, OUT_BYTES=4, LANES=2, **SMALL) as m:
        assert R.field("PARAMS", "LANES", m.read_reg(R.PARAMS)) == 2
        m.load_tables(ops)
        assert _check(m, _buffer(_stripes(rng, ts, 5, 40)), ops, 16, 4, ready_prob=0.6, valid_prob=0.8) == []
        assert m.read_reg(R.STRIPES) == 5 and m.read_reg(R.CYC_BLOCKED) > 0
        good = _stripes(rng, ts, 3)
        while good[0][1] < 3:                    # n0 - 1 must still be a mismatch
            good = _stripes(rng, ts, 3)
        (p0, n0), (p1, n1), _ = good
        cases = [[B.descriptor(n0 + 5, len(p0) - 1)] + p0 + _buffer([good[1]]),              # 14, padding
                 [B.descriptor(max(1, n0 - 1), len(p0) - 1)] + p0 + _buffer([good[2]]),      # 14, words dropped
                 _buffer([good[0]]) + [B.descriptor(n1, len(p1) + 10)] + p1,                  # 15
                 _buffer(good[:1]) + [B.descriptor(7, 3)],                                    # 15: no packet
                 _buffer(good[:2]) + [B.descriptor(n0, len(p0) - 1), p0[0] ^ 0x10000] + p0[1:]]   # 1: bad header
        codes = [_check(m, buf, ops, 16, 4, ready_prob=0.8, valid_prob=0.8, seed=5 + k)[0][1]
                 for k, buf in enumerate(cases)]
        assert codes == [R.ERR_MISMATCH, R.ERR_MISMATCH, R.ERR_TRUNCATED, R.ERR_TRUNCATED, 1]
        buf = _buffer(_stripes(rng, ts, 3, 40))
        half = len(buf) // 2
        m.transfer(buf, 10**6, stop_after_words=half, max_idle=100)
        m.soft_reset()
        out, last, _ = m.transfer(buf[half:], 10**6, max_idle=100)
        assert out == b"" and not last
        assert _check(m, buf, ops, 16, 4) == []


@pytest.mark.slow
@pytest.mark.parametrize("W,OUT_BYTES,LANES", [(8, 4, 4), (16, 8, 4), (8, 8, 8), (8, 4, 2)])
def test_lanes_widths_bit_exact(W, OUT_BYTES, LANES):
    """More lanes and the other beat widths (MyHDL): good stripes and garbage, bit-exact."""
    rng = np.random.default_rng(W + OUT_BYTES + LANES)
    ts = _v.random_tableset(rng, W=W)
    ops = _m.table_ops(ts)
    with MyhdlAxi(W=W, OUT_BYTES=OUT_BYTES, LANES=LANES, **SMALL) as m:
        m.load_tables(ops)
        for k in range(2):
            assert _check(m, _buffer(_stripes(rng, ts, 2 * LANES + 1, 70)), ops, W, OUT_BYTES, ready_prob=0.7,
                          valid_prob=0.8, seed=k) == []
        for k in range(3):
            g = rng.integers(0, 2**32, int(rng.integers(1, 30)), dtype=np.uint64)
            g[0] = (int(rng.integers(0, 40)) << 16) | int(rng.integers(0, 20))
            _check(m, g, ops, W, OUT_BYTES, ready_prob=0.7, valid_prob=0.9, seed=10 + k)


def _real_tensor(name="conv2.weight"):
    """A real model's tensor (the bundled digits CNN), int16, and its container (4096-word stripes)."""
    from lutzip.codec.arrays import compress
    from lutzip.weights.models import load_digits_cnn
    from lutzip.weights.quantize import quantize_int
    w = {k: quantize_int(v, "int16")[0] for k, v in load_digits_cnn().items()}
    big = max(w, key=lambda k: w[k].size)
    return w[big], compress({big: w[big]}, stripe_len=4096).tensor(big), compress({big: w[big]}, stripe_len=4096)


@needs_verilator
@pytest.mark.slow   # one Verilator build of the 2-lane top (about a minute)
def test_two_lanes_verilator_real_tensor_rate_garbage_reset():
    """AxiSim with LANES=2: the digits CNN's largest tensor in one transfer, bit-exact, at more than one word
    per cycle (the one-lane top's bound); random garbage completes as the model says; soft reset."""
    from lutzip.firmware.axi.sim import AxiSim
    a, t, c = _real_tensor()
    ops = _m.table_ops(c.tables[t.table], 8)
    buf = B.mm2s_words(c, t)
    rng = np.random.default_rng(3)
    with AxiSim(W=16, OUT_BYTES=4, LANES=2) as sim:
        assert R.field("PARAMS", "LANES", sim.read_reg(R.PARAMS)) == 2
        sim.load_tables(ops)
        sim.clear()
        out, last, _ = sim.transfer(buf, B.out_capacity(a.size))
        assert last and out == a.tobytes()
        k = sim.counters()
        assert k["WORDS_OUT"] == a.size and k["ERR_COUNT"] == 0 and k["OUT_CRC"] == zlib.crc32(out)
        assert k["WORDS_OUT"] / k["CYC_TOTAL"] > 1.2, k
        sim.clear()
        out, last, _ = sim.transfer(buf, B.out_capacity(a.size), ready_prob=0.6, valid_prob=0.8, seed=9)
        assert last and out == a.tobytes()
        _garbage_transfers(sim, rng, ops, 20)
        sim.transfer(buf, 10**7, stop_after_words=len(buf) // 2, max_idle=200)
        sim.soft_reset()
        out, last, _ = sim.transfer(buf[len(buf) // 2:], 10**7, max_idle=200)
        assert out == b"" and not last and not sim.status()["busy"]
        out, last, _ = sim.transfer(buf, B.out_capacity(a.size))
        assert last and out == a.tobytes()


@pytest.mark.slow   # GHDL analyses and elaborates the 2-lane top (about a minute)
@pytest.mark.skipif(__import__("shutil").which("ghdl") is None, reason="ghdl not installed")
def test_two_lanes_converted_vhdl_in_ghdl(tmp_path):
    """The converted VHDL of the 2-lane top (GHDL --std=08): PARAMS, a good transfer with an odd word count and
    a failing stripe, bit-exact against the model; counters and CRC."""
    from lutzip.firmware.axi.ghdl import run_ghdl
    rng = np.random.default_rng(22)
    ts = _v.random_tableset(rng, W=16)
    ops = _m.table_ops(ts)
    st = _stripes(rng, ts, 5, n_max=30)
    while sum(n for _, n in st) % 2 == 0:
        st = _stripes(rng, ts, 5, n_max=30)
    good = _buffer(st)
    (p0, n0) = st[0]
    bad = _buffer(st[1:2]) + [B.descriptor(n0 + 3, len(p0) - 1)] + p0 + _buffer(st[2:4])   # 14 in stripe 1
    script = [("R", R.PARAMS)] + [("W", off, val) for off, val in R.table_writes(ops)] + [
        ("T", good), ("R", R.WORDS_OUT), ("R", R.STRIPES), ("R", R.OUT_CRC), ("R", R.STATUS),
        ("W", R.CONTROL, R.CTRL_CLEAR_COUNTERS | R.CTRL_CLEAR_ERROR),
        ("T", bad), ("R", R.STATUS), ("R", R.ERR_COUNT), ("R", R.ERR_STRIPE)]
    res = run_ghdl(script, tmp_path, W=16, OUT_BYTES=4, LANES=2, **SMALL)
    assert res[0] == R.params_word(8, 16, 2, 4)
    exp, _ = B.model_transfer(good, ops)
    out, last, _ = res[1]
    assert last and out == B.out_bytes(exp) and len(exp) % 2 == 1
    assert res[2:5] == [len(exp), 5, zlib.crc32(out)] and res[5] == 0
    exp, fails = B.model_transfer(bad, ops)
    out, last, _ = res[6]
    assert last and out == B.out_bytes(exp) and fails == [(1, R.ERR_MISMATCH)]
    st = R.decode_status(res[7])
    assert st["error"] and st["code"] == R.ERR_MISMATCH and res[8:] == [1, 1]


# ------------------------------------------------------------------------------------------ row streams (MIRROR=1)
def _row_file(R_=16, N=64, rs=4):
    """A one-tensor file whose tensor is a row stream of mirrored rows (tests/row_mirror_cases.exact_basis_int8:
    every row exactly symmetric or antisymmetric), ``rs`` rows a stripe: ``(container, tensor, mm2s buffer,
    the software decoder's words)``."""
    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    from lutzip.codec.rows import summary
    from row_mirror_cases import exact_basis_int8
    a = exact_basis_int8(R_, N)
    c = ct.from_bytes(ct.to_bytes(codec.compress({"stft": a}, stripe_len=rs * N, group_below=64)))
    t = c.tensor("stft")
    s = summary(c, t)
    assert c.version == 6 and t.rows and s["mirror"] + s["neg_mirror"] == R_, s       # really mirrored rows
    exp = B.expected_out_words(c, t)
    assert np.array_equal(exp.astype(np.uint8).view(np.int8).reshape(a.shape), a)
    return c, t, B.mm2s_words(c, t), exp


def _bad_row_buffer(c, t, k):
    """The file's buffer with stripe ``k``'s row descriptor (word 1 after its header) given a reserved bit: that
    stripe fails with code 10 (docs/CORE.md 7.1) and yields zero words, the others decode."""
    buf = B.mm2s_words(c, t).copy()
    sw = np.asarray(t.stripe_words, np.int64)
    starts = np.concatenate([[0], np.cumsum(sw + 1)])      # + 1: the AXI descriptor word before each stripe
    buf[starts[k] + 2] |= np.uint32(1 << 25)
    exp = B.expected_out_words(c, t).copy()
    S = int(t.stripe_len)
    exp[k * S:(k + 1) * S] = 0
    return buf, exp


def _rows_check(m, c, t, W, OUT_BYTES, MAX_N, **kw):
    """The row file through ``m`` (an N-lane MIRROR=1 top): PARAMS, bit-exact output, a failing row stripe."""
    p = m.read_reg(R.PARAMS)
    assert R.params_mirror(p) == MAX_N and R.field("PARAMS", "LANES", p) == m.params["LANES"]
    ts = c.tables[t.table]
    ops = _m.table_ops(ts, 8, states=ts.n_states, mirror=1)
    m.load_tables(ops)
    buf = B.mm2s_words(c, t)
    exp = B.expected_out_words(c, t)
    m.clear()
    out, last, _ = m.transfer(buf, B.out_capacity(len(exp), W, OUT_BYTES), **kw)
    assert last and out == B.out_bytes(exp, W)
    k = m.counters()
    assert (k["WORDS_OUT"], k["STRIPES"], k["ERR_COUNT"], k["OUT_CRC"]) == (len(exp), len(t.stripe_words), 0,
                                                                           zlib.crc32(out))
    bad, exp_bad = _bad_row_buffer(c, t, 1)
    m.clear()
    out, last, _ = m.transfer(bad, B.out_capacity(len(exp), W, OUT_BYTES), **kw)
    assert last and out == B.out_bytes(exp_bad, W)
    st = m.status()
    assert st["code"] == 10 and m.read_reg(R.ERR_STRIPE) == 1 and m.read_reg(R.ERR_COUNT) == 1
    return ops


def test_two_lanes_mirror_row_stream_bit_exact():
    """MIRROR=1 with 2 lanes (MyHDL, W = 16, an int8 row stream of exactly mirrored rows, 4 stripes of 4 rows of
    64 words): PARAMS bit 22 and log2(MAX_N), the software decoder's words under backpressure and source pauses, a
    bad row stripe fails with code 10 on its own stripe and the next decode; a plain stream on the same top."""
    c, t, _buf, _exp = _row_file()
    rng = np.random.default_rng(31)
    ts = _v.random_tableset(rng, W=16)
    with MyhdlAxi(W=16, OUT_BYTES=4, LANES=2, MIRROR=1, MAX_N=64, **SMALL) as m:
        _rows_check(m, c, t, 16, 4, 64, ready_prob=0.7, valid_prob=0.8, seed=2)
        ops = _m.table_ops(ts, mirror=1)
        m.load_tables(ops)
        assert _check(m, _buffer(_stripes(rng, ts, 5, 40)), ops, 16, 4, ready_prob=0.7, valid_prob=0.8) == []


def test_two_lanes_mirror0_marks_row_stripes():
    """The same file on a MIRROR=0 2-lane top (PARAMS bit 22 clear): every row stripe fails (code 1, the bad
    header), so the MIRROR=1 test above can fail."""
    c, t, buf, exp = _row_file(12, 32, 4)
    with MyhdlAxi(W=16, OUT_BYTES=4, LANES=2, **SMALL) as m:
        assert R.params_mirror(m.read_reg(R.PARAMS)) == 0
        m.load_tables(_m.table_ops(c.tables[t.table], 8))
        m.clear()
        out, last, _ = m.transfer(buf, B.out_capacity(len(exp)))
        assert last and out == bytes(2 * len(exp)) and out != B.out_bytes(exp)
        assert m.status()["code"] == 1 and m.read_reg(R.ERR_COUNT) == len(t.stripe_words)


def _default_rows_file():
    """A default ``lutzip compress`` file (``api.compress``, default stripes: 16 rows of 256 words) holding an int8
    row stream of exactly mirrored rows (96 rows of 256: 6 stripes), an int16 row stream and a plain conv tensor."""
    from lutzip import api
    from lutzip.codec import container as ct
    from row_mirror_cases import basis, exact_basis_int8
    rng = np.random.default_rng(5)
    w = {"stft": exact_basis_int8(96, 256), "dft16": basis(40, 130, "int16"),
         "conv": np.round(rng.laplace(0, 6, (64, 3, 5))).clip(-128, 127).astype(np.int8)}
    c = ct.from_bytes(api.compress(w))
    rows = {c.tensors[s.members[0]].name for s in c.streams if s.rows}
    assert c.version == 6 and {"stft", "dft16"} <= rows, rows
    return c


@needs_verilator
@pytest.mark.slow   # a Verilator build of the 2-lane MIRROR=1 top (a few minutes)
@pytest.mark.timeout(2400)
def test_mirror_lanes_verilator_default_file_through_pynq_driver():
    """A default file with row streams through the simulated PYNQ device on a 2-lane top (MIRROR=1, the PYNQ
    default): the unchanged driver reads LANES = 2 and MIRROR from PARAMS, every word bit-exact against the software
    decoder, above one word per cycle; the row buffer's stripes directly through the same top (AxiSim) with random
    pauses and backpressure, a bad row stripe failing alone."""
    pytest.importorskip("pynq", reason="pynq not installed")
    from lutzip.board.pynq import open_board
    from lutzip.board.verify import format_report, stream_container
    c = _default_rows_file()
    with open_board(sim=True, timeout=120.0, LANES=2) as b:
        info = b.identify()
        assert (info.lanes, info.mirror, info.max_n) == (2, 1, 512)
        r = stream_container(b, c, "full", progress=False)
    assert r["ok"], format_report(r)
    assert r["counters"]["words"] == sum(t.numel for t in c.tensors)
    assert r["weights_per_cycle"] > 1.2, r["weights_per_cycle"]


@needs_verilator
@pytest.mark.slow   # a Verilator build of the 4-lane W = 8 MIRROR=1 top
@pytest.mark.timeout(2400)
def test_four_lanes_mirror_verilator_rows_bit_exact():
    """AxiSim, 4 lanes of W = 8 (one 32-bit beat), STATES=2, MIRROR=1: the default file's int8 row stream (6 stripes
    of 16 mirrored rows of 256, two code tables) bit-exact with and without pauses / backpressure, a bad row stripe (code 10), at more
    than two words per cycle."""
    from lutzip.firmware.axi.sim import AxiSim
    c = _default_rows_file()
    t = c.tensor("stft")
    assert c.tables[t.table].n_states == 2         # the default file's int8 stream: two code tables (STATES=2)
    with AxiSim(W=8, OUT_BYTES=4, LANES=4, STATES=2, MIRROR=1, MAX_N=512) as sim:
        _rows_check(sim, c, t, 8, 4, 512, ready_prob=0.7, valid_prob=0.8, seed=4)
        exp = B.expected_out_words(c, t)
        sim.clear()
        out, last, _ = sim.transfer(B.mm2s_words(c, t), B.out_capacity(len(exp), 8, 4))
        assert last and out == B.out_bytes(exp, 8)
        k = sim.counters()
        assert k["WORDS_OUT"] / k["CYC_TOTAL"] > 2.0, k


@pytest.mark.slow   # GHDL analyses and elaborates the 2-lane MIRROR=1 top
@pytest.mark.skipif(__import__("shutil").which("ghdl") is None, reason="ghdl not installed")
@pytest.mark.timeout(3600)
def test_two_lanes_mirror_converted_vhdl_in_ghdl(tmp_path):
    """The converted VHDL of the 2-lane MIRROR=1 top (GHDL --std=08): PARAMS with bit 22, the int8 row stream of
    exactly mirrored rows bit-exact against the software decoder, counters and CRC; a bad row stripe (code 10)."""
    from lutzip.firmware.axi.ghdl import run_ghdl
    c, t, buf, exp = _row_file(12, 64, 4)
    ops = _m.table_ops(c.tables[t.table], 8, mirror=1)
    bad, exp_bad = _bad_row_buffer(c, t, 1)
    script = [("R", R.PARAMS)] + [("W", off, val) for off, val in R.table_writes(ops)] + [
        ("T", buf), ("R", R.WORDS_OUT), ("R", R.STRIPES), ("R", R.OUT_CRC), ("R", R.STATUS),
        ("W", R.CONTROL, R.CTRL_CLEAR_COUNTERS | R.CTRL_CLEAR_ERROR),
        ("T", bad), ("R", R.STATUS), ("R", R.ERR_COUNT), ("R", R.ERR_STRIPE)]
    res = run_ghdl(script, tmp_path, W=16, OUT_BYTES=4, LANES=2, MIRROR=1, MAX_N=64, **SMALL)
    assert res[0] == R.params_word(8, 16, 2, 4, MIRROR=1, MAX_N=64)
    out, last, _ = res[1]
    assert last and out == B.out_bytes(exp)
    assert res[2:5] == [len(exp), len(t.stripe_words), zlib.crc32(out)] and res[5] == 0
    out, last, _ = res[6]
    assert last and out == B.out_bytes(exp_bad)
    st = R.decode_status(res[7])
    assert st["error"] and st["code"] == 10 and res[8:] == [1, 1]
