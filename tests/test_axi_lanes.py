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
