"""The PYNQ DMA path on the simulated PYNQ device: the real pynq package (Overlay, DefaultIP, MMIO, DMA,
allocate) on x86, the AXI DMA model in front of the AXI top simulator (Verilator's AxiSim when it is built,
else the MyHDL top on small tensors), the driver lutzip.board.pynq and the verify layer."""
import json
import subprocess
import sys

import numpy as np
import pytest

pynq = pytest.importorskip("pynq", reason="pynq not installed (pip install 'lutzip[pynq]')")
try:                                             # the driver's one-line reason, e.g. pynq with numpy >= 2
    import lutzip.board.pynq  # noqa: E402,F401
except ImportError as e:
    pytest.skip(str(e), allow_module_level=True)

from lutzip.board.base import BoardError, LinkError  # noqa: E402
from lutzip.board.verify import format_report, stream_container  # noqa: E402
from lutzip.codec import arrays as codec  # noqa: E402
from lutzip.firmware.axi import regs as R  # noqa: E402

try:
    from lutzip.firmware.axi.sim import AxiSim  # noqa: F401
    BACKEND = "verilator"
except ImportError:
    BACKEND = "myhdl"
#: The MyHDL top simulates a few thousand cycles per second: keep its tensors small.
SMALL = BACKEND == "myhdl"


def _digits(kind="int16", limit=None):
    from lutzip.weights.models import load_digits_cnn
    from lutzip.weights.quantize import quantize_int
    w = load_digits_cnn()
    out = {}
    for k, v in w.items():
        if limit and v.size > limit:
            continue
        if kind == "bf16":
            import ml_dtypes
            out[k] = np.asarray(v, np.float32).astype(ml_dtypes.bfloat16)
        else:
            out[k] = quantize_int(v, kind)[0]
    return out


def _container(kind="int16", stripe_len=256):
    c = codec.compress(_digits(kind, 1200 if SMALL else None), stripe_len=stripe_len)
    assert {t.dtype for t in c.tensors} == {"bfloat16" if kind == "bf16" else kind}
    return c


@pytest.fixture(scope="module")
def board():
    from lutzip.board.pynq import open_board
    b = open_board(sim=True, timeout=5.0 if not SMALL else 60.0, backend=BACKEND)
    yield b
    b.close()


class NoSim:
    """Registers only (ID answers): for tests that never start a transfer."""
    params = {}

    def read_reg(self, off):
        return {R.ID: R.ID_VALUE}.get(off, 0)

    def write_reg(self, off, v):
        pass

    def transfer(self, *a, **k):
        raise AssertionError("no transfer expected")

    def close(self):
        pass


def test_hwh_parsed_by_pynq(tmp_path):
    from lutzip.board.pynq import LutzipAxi
    from lutzip.board.pynq_sim import hwh as H
    from lutzip.board.pynq_sim.device import SimDevice

    dev = SimDevice(NoSim(), length_width=23)
    bit = H.write_overlay(tmp_path, dma_length_width=23)
    ov = pynq.Overlay(str(bit), download=False, device=dev)
    core = ov.ip_dict[H.CORE_NAME]
    assert core["type"] == R.VLNV and core["phys_addr"] == H.CORE_BASE
    regs = core["registers"]
    assert {k: regs[k]["address_offset"] for k in R.REGISTERS} == {k: v[0] for k, v in R.REGISTERS.items()}
    dma_params = ov.ip_dict[H.DMA_NAME]["parameters"]
    assert dma_params["c_sg_length_width"] == "23"
    tcl = H.board_design()["dma"]                   # CONFIG.c_* of firmware/axi/vivado/bd_pynq_z2.tcl
    assert tcl["c_include_sg"] == "0" and tcl["c_sg_length_width"] == "26"
    assert {k: dma_params[k] for k in tcl if k != "c_sg_length_width"} == \
        {k: v for k, v in tcl.items() if k != "c_sg_length_width"}
    ip = getattr(ov, H.CORE_NAME)
    assert isinstance(ip, LutzipAxi)               # bound by VLNV
    assert ip.reg(R.ID) == R.ID_VALUE             # through pynq's MMIO to the device
    dma = getattr(ov, H.DMA_NAME)
    assert dma.buffer_max_size == (1 << 23) - 1
    assert type(dma).__name__ == "DMA" and dma.sendchannel is not None and dma.recvchannel is not None


def test_overlay_download_sets_fclk0_despite_the_zynq7000_clock_bug(tmp_path):
    """pynq 4.0.0 + pynqmetadata 0.2.0: Overlay(download=True) raises TypeError in Clocks.set_pl_clk for a
    Zynq-7000 .hwh; load_overlay downloads without that step and sets FCLK0 from the .hwh (SLCR registers)."""
    from pynq.ps import Clocks
    from lutzip.board.pynq import load_overlay
    from lutzip.board.pynq_sim import hwh as H
    from lutzip.board.pynq_sim.device import SimDevice
    dev = SimDevice(NoSim())
    dev.slcr[0x170] = (1 << 20) | (20 << 8)         # FCLK0 at 50 MHz before the download
    bit = H.write_overlay(tmp_path)
    try:
        ov = load_overlay(bit, download=True, device=dev)
        assert ov.is_loaded()
        assert dev.fclk_mhz(0) == pytest.approx(H.board_design()["fclk_mhz"])
        assert dev.register_accesses("slcr") > 0     # pynq's own Zynq clock driver did it
    finally:
        Clocks.device = None
        if "_real_instance" in vars(Clocks):
            del Clocks._real_instance


def test_overlay_off_a_board_is_a_one_line_error(tmp_path):
    from lutzip.board.pynq import load_overlay
    from lutzip.board.pynq_sim import hwh as H
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if pynq.Device.devices:
            pytest.skip("a real pynq device is present")
    with pytest.raises(BoardError, match="No Devices Found"):
        load_overlay(H.write_overlay(tmp_path))
    with pytest.raises(BoardError, match="no missing.hwh beside"):
        load_overlay(tmp_path / "missing.bit")


@pytest.mark.parametrize("verify", ["full", "crc"])
def test_stream_digits_int16(board, verify):
    c = _container("int16")
    r = stream_container(board, c, verify)
    assert r["ok"], r["first_mismatch"]
    assert r["kind"] == "pynq-sim" and r["simulated"]
    assert r["counters"]["words"] == sum(t.numel for t in c.tensors)
    assert r["transfers"] == len(c.streams)             # one transfer each way per stream (v3: small tensors share one)
    assert 0.5 < r["weights_per_cycle"] <= 1.0
    host = [ln for ln in format_report(r).splitlines() if ln.startswith("host:")]
    assert len(host) == 1 and "moved by DMA" in host[0] and "frames resent" not in host[0], host


def test_stream_digits_bf16(board):
    c = _container("bf16")
    r = stream_container(board, c, "full")
    assert r["ok"], r["first_mismatch"]
    assert all(t["status"] == "pass" for t in r["tensors"])


def test_odd_word_counts(board):
    """Tensors of odd length: the last S2MM beat is partial (TKEEP), S2MM_LENGTH counts only its valid bytes."""
    rng = np.random.default_rng(5)
    c = codec.compress({f"odd{n}": np.rint(rng.laplace(0, 9, n)).astype(np.int16) for n in (1, 7, 301)},
                       stripe_len=64)
    r = stream_container(board, c, "full")
    assert r["ok"], r["first_mismatch"]
    assert r["counters"]["words"] == 309


@pytest.mark.slow
@pytest.mark.skipif(BACKEND != "verilator", reason="needs the Verilator AxiSim")
@pytest.mark.parametrize("out_bytes", [4, 8])
def test_int8_core_and_64_bit_stream(out_bytes):
    """An 8-bit core (four or eight words per S2MM beat): two more Verilator builds, hence slow."""
    from lutzip.board.pynq import open_board
    from lutzip.weights.models import load_digits_cnn
    from lutzip.weights.quantize import quantize_int
    c = codec.compress({k: quantize_int(v, "int8")[0] for k, v in load_digits_cnn().items()})
    with open_board(sim=True, W=8, OUT_BYTES=out_bytes) as b:
        assert (b.identify().W, b.info.out_bytes) == (8, out_bytes)
        r = stream_container(b, c, "full")
    assert r["ok"], r["first_mismatch"]


def _accesses_per_transfer(board, n_stripes, stripe_len=32):
    rng = np.random.default_rng(n_stripes)
    c = codec.compress({"t": np.rint(rng.laplace(0, 20, n_stripes * stripe_len)).astype(np.int16)},
                       stripe_len=stripe_len)
    t = c.tensors[0]
    board.load_tables(c.tables[t.table])
    res = board.stream([(t.name, c.tables[t.table], list(c.stripes(t)))], words=False)
    assert len(res.stripes) == n_stripes and all(s.err == 0 for s in res.stripes)
    assert res.stats["transfers"] == 1
    return res.stats["register_accesses"]


@pytest.mark.slow
@pytest.mark.skipif(BACKEND != "verilator", reason="needs the Verilator AxiSim")
def test_two_lane_top_behind_the_dma():
    """The 2-lane top (docs/AXI.md "LANES > 1") behind the DMA model: the unchanged driver reads LANES = 2 from
    PARAMS and streams the digits CNN bit-exact, one transfer per stream, above one word per cycle (slow: a
    Verilator build of the 2-lane top)."""
    from lutzip.board.pynq import open_board
    c = _container("int16", stripe_len=4096)
    with open_board(sim=True, timeout=60.0, LANES=2) as b:
        assert b.identify().lanes == 2
        r = stream_container(b, c, "full")
    assert r["ok"], r["first_mismatch"]
    assert r["transfers"] == len(c.streams) and r["counters"]["words"] == sum(t.numel for t in c.tensors)
    assert r["weights_per_cycle"] > 1.0, r["weights_per_cycle"]


def test_bench_prints_the_figures():
    """python -m lutzip.board.pynq_sim.bench on the digits CNN: every tensor passes, one transfer each, the same
    register accesses for every tensor, and the lines the closing figures are read from."""
    import io
    from lutzip.board.pynq_sim import bench
    out = io.StringIO()
    rows, tot = bench.run("digits", "int16", 0, BACKEND, out=out)
    text = out.getvalue()
    assert tot["ok"] and all(x["transfers"] == 1 for x in rows) and len(tot["reg_per_transfer"]) == 1, tot
    assert "decoded words per cycle (counters of the top)" in text and "host overhead" in text
    assert "silicon estimate at 100 MHz" in text and "PG021" in text


def test_register_accesses_do_not_depend_on_stripes(board):
    a1 = _accesses_per_transfer(board, 1)
    a8 = _accesses_per_transfer(board, 4 if SMALL else 24)
    assert a1 == a8
    assert a1 <= 30                                 # 22 with pynq 4.0: CONTROL, 2 x 5 DMA start, 2 polls, ...


def test_garbage_stripe_completes_and_next_tensor_passes(board):
    c = _container("int16")
    good = [t for t in c.tensors if len(t.stripe_words) >= 1 and not t.grouped][:2]   # tensors owning their stripes
    t0, t1 = good
    bad = [s.copy() for s in c.stripes(t0)]
    rng = np.random.default_rng(7)
    bad[0][1:] = rng.integers(0, 2 ** 32, len(bad[0]) - 1, dtype=np.uint64).astype(np.uint32)   # payload garbage
    bad[0][0] ^= np.uint32(0x01000000)              # and a header whose marker is wrong (count kept)
    jobs = [(t0.name, c.tables[t0.table], bad), (t1.name, c.tables[t1.table], list(c.stripes(t1)))]
    res = board.stream(jobs, words=True)
    first = [s for s in res.stripes if s.tensor == t0.name]
    assert first[0].err == 1                        # the top's error status (bad header), for that stripe
    assert first[0].n_words == (int(bad[0][0]) & 0xFFFF) + 1   # the transfer completed with its full length
    from lutzip.board.verify import expected_words
    exp = expected_words(c, t1)
    got = np.concatenate([s.words for s in res.stripes if s.tensor == t1.name])
    assert np.array_equal(got, exp)
    assert not board.core.status()["in_reset"]


def test_stall_mid_transfer_times_out_then_recovers(board):
    c = _container("int16")
    t = max(c.tensors, key=lambda t: t.numel)
    job = [(t.name, c.tables[t.table], list(c.stripes(t)))]
    board.device.dma_model.inject["stall_after_words"] = 5
    old = board.timeout
    board.timeout = 0.3
    try:
        with pytest.raises(LinkError, match="not finished after"):
            board.stream(job)
    finally:
        board.timeout = old
    st = board.core.status()
    assert not st["busy"] and not st["in_reset"]    # soft reset returned the top to idle
    res = board.stream(job, words=True)
    from lutzip.board.verify import expected_words
    assert np.array_equal(np.concatenate([s.words for s in res.stripes]), expected_words(c, t))


def test_soft_reset_mid_transfer_discards_to_tlast(board, monkeypatch):
    """The host soft-resets the top (discard mode) while MM2S is half way: the top swallows the rest of the
    input up to TLAST, so MM2S completes, S2MM never sees TLAST; after the DMA reset the next tensor passes."""
    from lutzip.board.pynq import DmaError
    from lutzip.board.pynq_sim.dma import SR_IDLE
    c = _container("int16")
    t = max(c.tensors, key=lambda t: t.numel)
    job = [(t.name, c.tables[t.table], list(c.stripes(t)))]
    dm = board.device.dma_model
    seen = {}

    def soft_reset_instead_of_waiting():
        board.core.control(R.CTRL_SOFT_RESET)                    # discard mode: MM2S is left running
        seen["in_reset"] = board.core.status()["in_reset"]     # input transfer open: discarding
        dm.resume()                                            # the DMA feeds the rest of the buffer
        seen["mm2s_idle"] = bool(dm.read(0x04) & SR_IDLE)
        seen["s2mm_idle"] = bool(dm.read(0x34) & SR_IDLE)
        seen["after"] = board.core.status()
        board._recover()
        raise DmaError("aborted by the test")

    dm.inject["stall_after_words"] = 7
    monkeypatch.setattr(board, "_wait", soft_reset_instead_of_waiting)
    with pytest.raises(DmaError, match="aborted"):
        board.stream(job)
    monkeypatch.undo()
    assert seen["in_reset"] and seen["mm2s_idle"] and not seen["s2mm_idle"]
    assert not seen["after"]["in_reset"] and not seen["after"]["busy"]
    res = board.stream(job, words=True)
    from lutzip.board.verify import expected_words
    assert np.array_equal(np.concatenate([s.words for s in res.stripes]), expected_words(c, t))


@pytest.mark.parametrize("channel,bit,name", [("mm2s", 0x20, "DMASlvErr"), ("s2mm", 0x40, "DMADecErr")])
def test_dma_error_bits_raise(board, channel, bit, name):
    c = _container("int16")
    t = c.tensors[0]
    job = [(t.name, c.tables[t.table], list(c.stripes(t)))]
    board.device.dma_model.inject[channel] = bit
    with pytest.raises(LinkError, match=name):
        board.stream(job)
    assert board.stream(job).stripes[0].err == 0    # the DMA was reset and restarted


def test_tensor_longer_than_dma_length_register_is_split():
    from lutzip.board.pynq import open_board
    rng = np.random.default_rng(3)
    n = 6 * 64
    c = codec.compress({"long": np.rint(rng.laplace(0, 20, n)).astype(np.int16)}, stripe_len=64)
    with open_board(sim=True, length_width=9, backend=BACKEND, timeout=60.0) as b:   # 511-byte transfers
        r = stream_container(b, c, "full")
        assert r["ok"], r["first_mismatch"]
        assert r["transfers"] == 2                  # 6 stripes of 128 output bytes: 3 per 511-byte transfer
        big = codec.compress({"big": np.rint(rng.laplace(0, 20, 512)).astype(np.int16)}, stripe_len=512)
        t = big.tensors[0]
        with pytest.raises(BoardError, match="length register"):
            b.stream([(t.name, big.tables[t.table], list(big.stripes(t)))])


@pytest.mark.skipif(BACKEND != "verilator", reason="the CLI's simulated device runs the Verilator AxiSim")
def test_cli_stream_pynq_sim_json(tmp_path):
    from lutzip.codec import container as ct
    p = tmp_path / "d.lutz"
    ct.write(p, _container("int16"))
    out = subprocess.run([sys.executable, "-m", "lutzip.cli", "stream", str(p), "--pynq", "--sim", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout)
    assert r["ok"] and r["kind"] == "pynq-sim" and r["simulated"]
    for key in ("tensors", "counters", "weights_per_cycle", "first_mismatch"):
        assert key in r
