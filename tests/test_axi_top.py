"""The AXI top ``lutzip_axi`` (docs/AXI.md) in MyHDL, bit-exact against the software decoder and the top's
model (lutzip.firmware.axi.buffer.model_transfer): registers, packing (W = 8 / 16, 32- / 64-bit beats, odd
word counts), backpressure and source pauses, garbage, corrupt descriptors, soft reset mid-transfer; and the
converted VHDL once in GHDL."""
import shutil
import zlib

import numpy as np
import pytest

from lutzip.codec.arrays import compress
from lutzip.firmware.axi import buffer as B
from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.mysim import MyhdlAxi
from lutzip.hdl.flows import model as _m, vectors as _v


class cs:  # noqa: N801  (the reference model's helpers used here)
    table_ops, random_tableset, random_stripe = _m.table_ops, _v.random_tableset, _v.random_stripe


def _stripes(rng, ts, k, n_max=40):
    """k random good stripes of ``ts`` as (packet, n)."""
    out = []
    for _ in range(k):
        pk = cs.random_stripe(rng, ts, int(rng.integers(1, n_max)))[0]
        out.append((list(pk), (pk[0] & 0xFFFF) + 1))
    return out


def _buffer(stripes):
    buf = []
    for pk, n in stripes:
        buf += [B.descriptor(n, len(pk) - 1)] + pk
    return buf


def _garbage_transfers(sim, rng, ops, n):
    """n random MM2S buffers (every second one with a plausible descriptor) through ``sim``: each transfer
    completes with tlast, its bytes and error count equal the top's model."""
    for s in range(n):
        g = rng.integers(0, 2**32, int(rng.integers(1, 60)), dtype=np.uint64)
        if s % 2:
            g[0] = (int(rng.integers(0, 300)) << 16) | int(rng.integers(0, 80))
        exp, fails = B.model_transfer(g, ops)
        sim.clear()
        out, last, _ = sim.transfer(g, B.out_capacity(len(exp)), ready_prob=0.7, valid_prob=0.7, seed=s)
        assert last and out == B.out_bytes(exp), s
        assert sim.read_reg(R.ERR_COUNT) == len(fails)


def _check_transfer(m, buf, ops, W, OUT_BYTES, L=8, **kw):
    """One transfer; output, tlast, counters and error registers equal the model's. Returns the failures."""
    exp, fails = B.model_transfer(buf, ops, L=L, W=W)
    m.write_reg(R.CONTROL, R.CTRL_CLEAR_COUNTERS | R.CTRL_CLEAR_ERROR)
    cap = B.out_capacity(len(exp), W, OUT_BYTES)
    out, last, cyc = m.transfer(buf, cap, **kw)
    assert last, "no tlast"
    assert out == B.out_bytes(exp, W)
    assert m.read_reg(R.WORDS_OUT) == len(exp)
    assert m.read_reg(R.OUT_CRC) == zlib.crc32(out)
    st = R.decode_status(m.read_reg(R.STATUS))
    assert not st["busy"] and not st["in_reset"]
    assert st["error"] == bool(fails)
    assert m.read_reg(R.ERR_COUNT) == len(fails)
    if fails:
        assert st["code"] == fails[0][1]
        assert m.read_reg(R.ERR_STRIPE) == fails[0][0]
    return fails


def test_identity_registers_and_lite_rules():
    with MyhdlAxi(W=8, OUT_BYTES=8, L=8, LUT3_DEPTH=2048, CLK_HZ=125_000_000) as m:
        assert m.read_reg(R.ID) == R.ID_VALUE
        assert m.read_reg(R.VERSION) == R.VERSION_VALUE
        p = m.read_reg(R.PARAMS)
        assert [R.field("PARAMS", f, p) for f in ("L", "W", "LANES", "OUT_BYTES")] == [8, 8, 1, 8]
        assert m.read_reg(R.LUT3) == 2048 and m.read_reg(R.CLK_HZ) == 125_000_000
        assert m.read_reg(0x2C) == 0 and m.read_reg(0xFC) == 0           # unknown addresses read 0
        m.write_reg(R.TBL_ADDR, (2 << 12) | 0x123)
        assert m.read_reg(R.TBL_ADDR) == (2 << 12) | 0x123
        m.write_reg(R.TBL_ADDR, 0x5, wstrb=0x3)                           # partial write: ignored
        assert m.read_reg(R.TBL_ADDR) == (2 << 12) | 0x123
        m.write_reg(R.TBL_DATA, 7)                                        # auto-increment
        assert m.read_reg(R.TBL_ADDR) == (2 << 12) | 0x124
        m.write_reg(R.ID, 0)                                              # read-only
        assert m.read_reg(R.ID) == R.ID_VALUE


# (16, 4) in the default run; the other widths with -m slow (the Verilator tests below also run W 8 / 64-bit)
@pytest.mark.parametrize("W,OUT_BYTES", [(16, 4), pytest.param(16, 8, marks=pytest.mark.slow),
                                         pytest.param(8, 4, marks=pytest.mark.slow), (8, 8)])
def test_random_stripes_bit_exact(W, OUT_BYTES):
    """Good stripes of random table sets, odd and even word counts, random backpressure and source pauses."""
    rng = np.random.default_rng(W * 10 + OUT_BYTES)
    ts = cs.random_tableset(rng, W=W)
    ops = cs.table_ops(ts)
    blocked = 0
    with MyhdlAxi(W=W, OUT_BYTES=OUT_BYTES) as m:
        m.load_tables(ops)
        for k, (rp, vp) in enumerate([(1.0, 1.0), (0.5, 0.7), (0.3, 1.0)]):
            st = _stripes(rng, ts, 3, n_max=80)
            while k == 0 and sum(n for _, n in st) % 4 != 3:   # odd: the last beat is partial
                st = _stripes(rng, ts, 3, n_max=80)
            assert _check_transfer(m, _buffer(st), ops, W, OUT_BYTES, ready_prob=rp, valid_prob=vp, seed=k) == []
            if rp == 1:
                assert m.read_reg(R.CYC_BLOCKED) == 0
            blocked += m.read_reg(R.CYC_BLOCKED)
            assert m.read_reg(R.STRIPES) == len(st)
    assert blocked > 0


def test_container_tensor_layout_and_throughput():
    """mm2s_words / expected_out_words of a real container; one transfer per tensor; ~1 word per cycle."""
    rng = np.random.default_rng(3)
    a = np.round(rng.laplace(0, 30, 1500)).astype(np.int16)
    a[rng.random(a.size) < 0.5] = 0
    c = compress({"w": a}, stripe_len=256)
    t = c.tensor("w")
    ops = cs.table_ops(c.tables[t.table], 8)
    buf = B.mm2s_words(c, t)
    exp = B.expected_out_words(c, t)
    assert len(buf) == int(np.sum(t.stripe_words)) + len(t.stripe_words)
    assert np.array_equal(exp.view(np.int16), a)
    with MyhdlAxi(W=16) as m:
        m.load_tables(ops)
        m.write_reg(R.CONTROL, R.CTRL_CLEAR_COUNTERS)
        out, last, _ = m.transfer(buf, B.out_capacity(a.size, 16, 4))
        assert last and out == a.tobytes()
        total, words = m.read_reg(R.CYC_TOTAL), m.read_reg(R.WORDS_OUT)
        assert words == a.size and m.read_reg(R.STRIPES) == len(t.stripe_words)
        assert words / total > 0.95, (words, total)
        assert m.read_reg(R.CYC_BUSY) == -(-a.size // 2)
        # a run of stripes of the same tensor
        buf2 = B.mm2s_words(c, t, stripes=range(2, 4))
        out, last, _ = m.transfer(buf2, 10_000)
        assert last and out == B.out_bytes(B.expected_out_words(c, t, range(2, 4)))
    with pytest.raises(B.BufferError, match="out of range"):
        B.mm2s_words(c, t, stripes=range(5, 9))
    with pytest.raises(B.BufferError, match="consecutive"):
        B.mm2s_words(c, t, stripes=[0, 2])


def test_group_stream_buffer():
    """A tensor of a group stream (format v3) stands for its stream: one transfer moves the stream's stripes;
    the model of the top decodes them to the words the software decoder gives; the tensor is a slice."""
    rng = np.random.default_rng(4)
    arrays = {f"t{i}": rng.integers(-9, 9, int(rng.integers(5, 300))).astype(np.int16) for i in range(12)}
    c = compress(arrays, stripe_len=512)
    t = c.tensor("t5")
    s = c.stream_of(t)
    assert t.grouped and len(s.members) > 1
    buf = B.mm2s_words(c, t)
    assert np.array_equal(buf, B.mm2s_words(c, s))
    assert len(buf) == int(np.sum(s.stripe_words)) + len(s.stripe_words)
    exp = B.expected_out_words(c, t)
    assert len(exp) == s.numel
    assert np.array_equal(exp[t.word_offset:t.word_offset + t.numel].view(np.int16), arrays["t5"])
    ops = cs.table_ops(c.tables[s.table], 8)
    words, _ = B.model_transfer(buf, ops)[:2]
    assert np.array_equal(np.asarray(words, np.int64), exp.astype(np.int64))


def test_corrupt_descriptors_and_garbage_never_hang():
    """Descriptor n too large / too small (14), payload claimed longer than the transfer (15), tlast on a
    descriptor (15), a corrupt header (1) and random garbage: every transfer completes with the model's
    length and bytes, the error registers name the first failure, and a good transfer passes afterwards."""
    rng = np.random.default_rng(7)
    ts = cs.random_tableset(rng, W=16)
    ops = cs.table_ops(ts)
    good = _stripes(rng, ts, 3)
    with MyhdlAxi(W=16) as m:
        m.load_tables(ops)
        (p0, n0), (p1, n1), (p2, n2) = good
        cases = [
            [B.descriptor(n0 + 5, len(p0) - 1)] + p0 + _buffer([good[1]]),             # n too large: 14, padding
            [B.descriptor(max(1, n0 - 1), len(p0) - 1)] + p0,                           # n too small: 14, truncated
            _buffer([good[0]]) + [B.descriptor(n1, len(p1) + 10)] + p1,                 # input ends early: 15
            _buffer([good[0]]) + [B.descriptor(7, 3)],                                  # tlast on a descriptor: 15
            [B.descriptor(n0, len(p0) - 1), p0[0] ^ 0x10000] + p0[1:] + _buffer([good[2]]),  # bad header: 1
        ]
        codes = []
        for k, buf in enumerate(cases):
            f = _check_transfer(m, buf, ops, 16, 4, ready_prob=0.8, valid_prob=0.8, seed=k)
            codes.append(f[0][1])
        assert codes == [R.ERR_MISMATCH, R.ERR_MISMATCH, R.ERR_TRUNCATED, R.ERR_TRUNCATED, 1]
        for k in range(4):                                                             # random garbage
            g = rng.integers(0, 2**32, int(rng.integers(1, 30)), dtype=np.uint64)
            g[0] = (int(rng.integers(0, 40)) << 16) | int(rng.integers(0, 20))         # keep transfers short
            _check_transfer(m, g, ops, 16, 4, ready_prob=0.7, valid_prob=0.9, seed=10 + k)
        assert _check_transfer(m, _buffer(good), ops, 16, 4) == []


def test_soft_reset_mid_transfer():
    """Soft reset with input half sent: the rest up to tlast is discarded, the top returns to idle, the next
    transfer passes; with NO_DISCARD the next transfer passes directly; with output pending (S2MM not ready)
    the output stops and BUSY clears; tables survive."""
    rng = np.random.default_rng(11)
    ts = cs.random_tableset(rng, W=16)
    ops = cs.table_ops(ts)
    good = _stripes(rng, ts, 3, n_max=60)
    buf = _buffer(good)
    half = len(buf) // 2
    with MyhdlAxi(W=16) as m:
        m.load_tables(ops)
        out, last, _ = m.transfer(buf, 10**6, stop_after_words=half, max_idle=100)
        assert not last
        assert R.decode_status(m.read_reg(R.STATUS))["busy"]
        m.soft_reset()
        assert R.decode_status(m.read_reg(R.STATUS))["in_reset"]                   # discarding
        m.run_idle(8)
        m.soft_reset()                                                              # again: still discarding
        m.run_idle(8)
        assert R.decode_status(m.read_reg(R.STATUS))["in_reset"]
        out, last, _ = m.transfer(buf[half:], 10**6, max_idle=100)                  # the DMA finishes MM2S
        assert not last and out == b""
        st = R.decode_status(m.read_reg(R.STATUS))
        assert not st["in_reset"] and not st["busy"]
        _check_transfer(m, buf, ops, 16, 4)
        # NO_DISCARD: the host reset its MM2S too; the next transfer starts at once
        m.transfer(buf, 10**6, stop_after_words=half, max_idle=100)
        m.soft_reset(no_discard=True)
        m.run_idle(8)
        assert not R.decode_status(m.read_reg(R.STATUS))["in_reset"]
        _check_transfer(m, buf, ops, 16, 4, valid_prob=0.6, seed=2)
        # output pending: all input in, S2MM never ready
        out, last, _ = m.transfer(buf, 10**6, ready_prob=0.0, max_idle=200)
        assert not last and R.decode_status(m.read_reg(R.STATUS))["busy"]
        m.soft_reset()
        m.run_idle(8)
        st = R.decode_status(m.read_reg(R.STATUS))
        assert not st["busy"] and not st["in_reset"]
        _check_transfer(m, buf, ops, 16, 4, ready_prob=0.5, seed=3)


def test_bad_parameters_are_one_line_errors():
    from lutzip.errors import UnsupportedError
    from lutzip.firmware.axi.lutzip_axi import lutzip_axi, top_signals
    for kw, what in [({"W": 12}, "W must be"), ({"OUT_BYTES": 2}, "OUT_BYTES"), ({"LANES": 3}, "LANES")]:
        with pytest.raises(UnsupportedError, match=what):
            lutzip_axi(**top_signals(), **kw)
    with pytest.raises(B.BufferError, match="descriptor"):
        B.descriptor(0, 5)


# ------------------------------------------------------------------ the converted HDL: Verilator, GHDL
def _tables_script(ops):
    return [("W", off, val) for off, val in R.table_writes(ops)]


@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
def test_converted_vhdl_in_ghdl(tmp_path):
    """The converted VHDL (GHDL --std=08): registers, a good transfer with an odd word count and a failing
    stripe, bit-exact against the model; counters and CRC."""
    from lutzip.firmware.axi.ghdl import run_ghdl
    rng = np.random.default_rng(21)
    ts = cs.random_tableset(rng, W=16)
    ops = cs.table_ops(ts)
    st = _stripes(rng, ts, 3, n_max=30)
    while sum(n for _, n in st) % 2 == 0:
        st = _stripes(rng, ts, 3, n_max=30)
    good = _buffer(st)
    (p0, n0) = st[0]
    bad = [B.descriptor(n0 + 3, len(p0) - 1)] + p0 + _buffer(st[1:2])              # code 14 in stripe 0
    script = [("R", R.ID), ("R", R.PARAMS)] + _tables_script(ops) + [
        ("T", good), ("R", R.WORDS_OUT), ("R", R.STRIPES), ("R", R.OUT_CRC), ("R", R.STATUS),
        ("W", R.CONTROL, R.CTRL_CLEAR_COUNTERS | R.CTRL_CLEAR_ERROR),
        ("T", bad), ("R", R.STATUS), ("R", R.ERR_COUNT), ("R", R.ERR_STRIPE)]
    res = run_ghdl(script, tmp_path, W=16, OUT_BYTES=4)
    assert res[0] == R.ID_VALUE and res[1] == R.params_word(8, 16, 1, 4)
    exp, _ = B.model_transfer(good, ops)
    out, last, _ = res[2]
    assert last and out == B.out_bytes(exp) and len(exp) % 2 == 1
    assert res[3:6] == [len(exp), 3, zlib.crc32(out)]
    assert res[6] == 0
    exp, fails = B.model_transfer(bad, ops)
    out, last, _ = res[7]
    assert last and out == B.out_bytes(exp) and fails == [(0, R.ERR_MISMATCH)]
    st = R.decode_status(res[8])
    assert st["error"] and st["code"] == R.ERR_MISMATCH and res[9:] == [1, 0]


needs_verilator = pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")


@needs_verilator
def test_axisim_verilator_bit_exact_garbage_reset_and_cycles():
    """AxiSim (the converted Verilog in Verilator): a real tensor in one transfer at ~1 word per cycle,
    backpressure and pauses, random garbage never hangs, soft reset mid-transfer; same cycle counts as
    the MyHDL top for the same transfer."""
    from lutzip.firmware.axi.sim import AxiSim
    rng = np.random.default_rng(5)
    a = np.round(rng.laplace(0, 50, 30_000)).astype(np.int16)
    a[rng.random(a.size) < 0.4] = 0
    c = compress({"w": a}, stripe_len=1024)
    t = c.tensor("w")
    ops = cs.table_ops(c.tables[t.table], 8)
    buf = B.mm2s_words(c, t)
    small = B.mm2s_words(c, t, stripes=range(0, 1))[:120]      # a truncated first stripe (code 15)
    with AxiSim(W=16, OUT_BYTES=4) as sim:
        assert sim.read_reg(R.ID) == R.ID_VALUE
        sim.load_tables(ops)
        sim.clear()
        out, last, cyc = sim.transfer(buf, B.out_capacity(a.size))
        assert last and out == a.tobytes()
        k = sim.counters()
        assert k["WORDS_OUT"] == a.size and k["STRIPES"] == len(t.stripe_words) and k["ERR_COUNT"] == 0
        assert k["WORDS_OUT"] / k["CYC_TOTAL"] >= 0.99, k
        assert k["OUT_CRC"] == zlib.crc32(out)
        sim.clear()
        out, last, _ = sim.transfer(buf, B.out_capacity(a.size), ready_prob=0.6, valid_prob=0.8, seed=9)
        assert last and out == a.tobytes()
        k = sim.counters()
        assert k["CYC_BLOCKED"] > 0 and k["CYC_STARVED"] > 0
        _garbage_transfers(sim, rng, ops, 40)                   # garbage: always completes, as the model says
        sim.transfer(buf, 10**7, stop_after_words=len(buf) // 2, max_idle=200)   # soft reset mid-transfer
        assert sim.status()["busy"]
        sim.soft_reset()
        out, last, _ = sim.transfer(buf[len(buf) // 2:], 10**7, max_idle=200)
        assert out == b"" and not last and not sim.status()["busy"] and not sim.status()["in_reset"]
        out, last, _ = sim.transfer(buf, B.out_capacity(a.size))
        assert last and out == a.tobytes()
        sim.clear()
        out, last, cyc_v = sim.transfer(small, 10**6)
        total_v = sim.read_reg(R.CYC_TOTAL)
    with MyhdlAxi(W=16, OUT_BYTES=4) as m:
        m.load_tables(ops)
        m.clear()
        out_m, last_m, cyc_m = m.transfer(small, 10**6)
        assert (out_m, last_m, cyc_m, m.read_reg(R.CYC_TOTAL)) == (out, last, cyc_v, total_v)
        assert R.decode_status(m.read_reg(R.STATUS))["code"] == R.ERR_TRUNCATED


@needs_verilator
def test_axisim_w8_64bit_beats():
    from lutzip.firmware.axi.sim import AxiSim
    rng = np.random.default_rng(8)
    ts = cs.random_tableset(rng, W=8)
    ops = cs.table_ops(ts)
    with AxiSim(W=8, OUT_BYTES=8) as sim:
        sim.load_tables(ops)
        for s in range(6):
            st = _stripes(rng, ts, int(rng.integers(1, 8)), n_max=300)
            buf = _buffer(st)
            exp, fails = B.model_transfer(buf, ops, W=8)
            assert fails == []
            out, last, _ = sim.transfer(buf, B.out_capacity(len(exp), 8, 8), ready_prob=0.8, valid_prob=0.9, seed=s)
            assert last and out == B.out_bytes(exp, 8)


@needs_verilator
@pytest.mark.slow   # a second Verilator build (the vector front); the Zynq builds' core
def test_axisim_vector_front():
    """The front the Zynq builds use: same bytes as the model for a tensor, garbage and a soft reset."""
    from lutzip.firmware.axi.sim import AxiSim
    rng = np.random.default_rng(13)
    a = np.round(rng.laplace(0, 20, 6000)).astype(np.int16)
    a[rng.random(a.size) < 0.7] = 0
    c = compress({"w": a}, stripe_len=512)
    t = c.tensor("w")
    ops = cs.table_ops(c.tables[t.table], 8)
    buf = B.mm2s_words(c, t)
    with AxiSim(FRONT="vector") as sim:
        sim.load_tables(ops)
        out, last, _ = sim.transfer(buf, B.out_capacity(a.size), ready_prob=0.7, valid_prob=0.8, seed=1)
        assert last and out == a.tobytes()
        for s in range(10):
            g = rng.integers(0, 2**32, int(rng.integers(1, 40)), dtype=np.uint64)
            g[0] = (int(rng.integers(0, 100)) << 16) | int(rng.integers(0, 40))
            exp, fails = B.model_transfer(g, ops)
            sim.clear()
            out, last, _ = sim.transfer(g, B.out_capacity(len(exp)), ready_prob=0.8, seed=s)
            assert last and out == B.out_bytes(exp) and sim.read_reg(R.ERR_COUNT) == len(fails)
        sim.transfer(buf, 10**7, stop_after_words=len(buf) // 3, max_idle=200)
        sim.soft_reset(no_discard=True)
        sim.run_idle(8)
        sim.clear()
        out, last, _ = sim.transfer(buf, B.out_capacity(a.size))
        assert last and out == a.tobytes() and sim.read_reg(R.ERR_COUNT) == 0
