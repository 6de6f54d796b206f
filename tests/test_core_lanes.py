"""The N-lane decoder (docs/CORE.md section 6): bit-exact against its reference model
(``lutzip.hdl.flows.lanes_model``) in MyHDL, GHDL, Icarus and Verilator, with random source pauses per lane and sink
backpressure, stripes of uneven lengths, one-stripe tensors, per-lane errors and garbage."""
import numpy as np
import pytest

from lutzip.codec import bitstream as bs
from lutzip.errors import UnsupportedError
from lutzip.hdl.flows import lanes_model as LM
from lutzip.hdl.flows import lanes_sim as LS
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.model import split_stripes, table_ops
from lutzip.hdl.flows.vectors import random_stripe, random_tableset

ROWS = 8   # small lane buffers in the tests (the default is a 4096-word stripe's worth)


def tensors_stripes(ts, rng, sizes, stripe_len):
    """The stripes of several tensors coded with ``ts`` one after another (each tensor's last stripe short)."""
    out = []
    for n in sizes:
        words = []
        while len(words) < n:   # words the table set covers: those of random symbol sequences
            words += random_stripe(rng, ts, 64)[1]
        words = np.array(words[:n], np.uint16)
        payload, sw = bs.encode_stripes(words, ts, stripe_len)
        out += split_stripes(payload, sw)
    return out


def lane_vectors(lanes, seed=0, W=16, sizes=(60, 9, 1, 20), stripe_len=16, corrupt=False, assign="rr", **params):
    rng = np.random.default_rng(seed)
    ts = random_tableset(rng, W=W, L=8, zrun_kmax=5)
    stripes = tensors_stripes(ts, rng, sizes, stripe_len)
    if corrupt:
        # lane-spread errors: a bad header, a truncated stripe, a garbage packet
        stripes[1] = stripes[1].copy()
        stripes[1][0] ^= 0x10000
        if len(stripes[2]) > 1:
            stripes[2] = stripes[2][:1]
        stripes.insert(5, rng.integers(0, 1 << 32, 3, dtype=np.uint64).astype(np.uint32))
    return LS.LaneVectors.make(stripes, table_ops(ts, 8), lanes, ROWS, assign, W=W, **params)


def need(sim):
    why = S.available(sim)
    if why:
        pytest.skip(why)


def test_model_keeps_the_word_order():
    vec = lane_vectors(4, corrupt=True)
    one = LS.LaneVectors.make(vec.stripes, vec.table_ops, 1, ROWS, **vec.params)
    assert np.array_equal(LM.beats_words(vec.beats, 4), LM.beats_words(one.beats, 1))
    assert all(1 <= int(b[1]) <= 4 for b in vec.beats)
    # the last beat of each stripe (only) may be short; one tlast per stripe
    assert sum(int(b[2]) for b in vec.beats) == len(vec.stripes)
    assert all(int(b[1]) == 4 for b in vec.beats if not b[2])
    # errors name the lane and the stripe index
    assert [tuple(e) for e in vec.errors][:2] == [(1, bs.ERR_BAD_HEADER, 1), (2, bs.ERR_OVERRUN, 2)]
    assert all(e[0] == e[2] % 4 for e in vec.errors)


def test_assign_least_loaded():
    hdr = lambda n: np.array([bs.STRIPE_MARKER | (n - 1)], np.uint32)   # noqa: E731
    # equal stripes: round robin; a long stripe keeps its lane busy for the next ones
    assert LM.assign_lanes([hdr(64)] * 6, 2, "load")[0] == [0, 1, 0, 1, 0, 1]
    lanes, loads = LM.assign_lanes([hdr(100), hdr(10), hdr(10), hdr(10), hdr(100)], 2, "load")
    assert lanes == [0, 1, 1, 1, 1] and loads == [100, 130]
    # a bad header weighs 1
    assert LM.assign_lanes([np.array([0], np.uint32), hdr(5), hdr(5)], 2, "load")[0] == [0, 1, 0]
    with pytest.raises(UnsupportedError):
        LM.assign_lanes([hdr(1)], 2, "fifo")


def test_lane_packets_round_robin():
    st = [np.array([i], np.uint32) for i in range(7)]
    pk = LM.lane_packets(st, 4, first=1, assign="rr")
    assert [[int(p[0]) for p in q] for q in pk] == [[3], [0, 4], [1, 5], [2, 6]]
    with pytest.raises(UnsupportedError):
        LM.lane_packets(st, 3)


@pytest.mark.parametrize("lanes,in_gap,out_stall,assign", [
    (1, 0.3, 0.4, "rr"), (2, 0.3, 0.4, "rr"), (4, 0.2, 0.5, "load"),
    pytest.param(2, 0.2, 0.3, "load", marks=pytest.mark.slow),
    pytest.param(4, 0.2, 0.5, "rr", marks=pytest.mark.slow),
    pytest.param(2, 0.0, 0.0, "rr", marks=pytest.mark.slow),
    pytest.param(4, 0.0, 0.0, "load", marks=pytest.mark.slow),
    pytest.param(8, 0.3, 0.3, "load", marks=pytest.mark.slow)])
def test_myhdl_bit_exact(lanes, in_gap, out_stall, assign, tmp_path):
    vec = lane_vectors(lanes, seed=lanes, assign=assign, sizes=(60, 9, 1, 20) if lanes < 4 else (36, 5, 1, 12))
    LS.check(vec, "myhdl", workdir=tmp_path, in_gap=in_gap, out_stall=out_stall, seed=lanes)


@pytest.mark.parametrize("lanes,assign", [(2, "load"), pytest.param(2, "rr", marks=pytest.mark.slow),
                                          pytest.param(4, "load", marks=pytest.mark.slow)])
def test_myhdl_errors_per_lane(lanes, assign, tmp_path):
    vec = lane_vectors(lanes, seed=7, W=8, corrupt=True, assign=assign, sizes=(40, 9, 1, 14))
    assert len(vec.errors) >= 3
    out = LS.check(vec, "myhdl", workdir=tmp_path, in_gap=0.2, out_stall=0.3, seed=2)
    assert sorted(int(e[0]) for e in out.errors) == sorted(int(e[0]) for e in vec.errors)


@pytest.mark.slow
def test_myhdl_garbage_never_hangs(tmp_path):
    rng = np.random.default_rng(11)
    ts = random_tableset(rng, W=16, L=8)
    stripes = [rng.integers(0, 1 << 32, int(rng.integers(1, 6)), dtype=np.uint64).astype(np.uint32)
               for _ in range(8)]
    for s in stripes[::2]:
        s[0] = bs.STRIPE_MARKER | int(rng.integers(0, 40))
    vec = LS.LaneVectors.make(stripes, table_ops(ts, 8), 2, ROWS, W=16)
    out = LS.check(vec, "myhdl", workdir=tmp_path, in_gap=0.2, out_stall=0.2, seed=4)
    assert not out.timed_out


@pytest.mark.slow
def test_myhdl_full_rate(tmp_path):
    """Every lane decodes one word per cycle: N words per cycle once the buffers have filled (printed)."""
    rng = np.random.default_rng(3)
    ts = random_tableset(rng, W=16, L=8, zrun_kmax=3)
    stripes = tensors_stripes(ts, rng, (1024,), 64)
    vec = LS.LaneVectors.make(stripes, table_ops(ts, 8), 2, 64, W=16)
    out = LS.check(vec, "myhdl", workdir=tmp_path)
    oc = out.out_cycles
    rate = (vec.n_words - int(out.beats[-1, 1])) / (oc[-1] - oc[0])
    print(f"2 lanes, 16 stripes of 64 words: {rate:.3f} words/cycle")
    assert rate > 1.5   # one lane would give at most 1.0


@pytest.mark.parametrize("assign", ["load", pytest.param("rr", marks=pytest.mark.slow)])
def test_myhdl_no_idle_cycle_between_stripes(assign, tmp_path):
    """Stripes already buffered leave back to back: one beat per cycle across stripe ends (with ASSIGN="load" the
    lanes of the next stripes are known before the output needs them)."""
    rng = np.random.default_rng(5)
    ts = random_tableset(rng, W=16, L=8, zrun_kmax=3)
    stripes = tensors_stripes(ts, rng, (192,), 32)                     # 6 stripes of 32 words, 16 beats each
    vec = LS.LaneVectors.make(stripes, table_ops(ts, 8), 2, 64, assign, W=16)
    stim = LS.make_lane_stimulus(vec)
    hold = len(stim.prefix) + 400                                      # the sink waits while the lanes fill up
    stim.ready = [0] * hold + [1] * (4096 - hold)
    out = LS.run("myhdl", stim, tmp_path, 2, vec.params, 64, assign=assign)
    assert LS.first_difference(out, vec) is None
    oc = out.out_cycles
    assert oc[0] >= hold and len(oc) == 6 * 16
    assert np.all(np.diff(oc) == 1), f"idle cycles after beats {np.nonzero(np.diff(oc) != 1)[0]}"


@pytest.mark.parametrize("sim", ["ghdl", pytest.param("icarus", marks=pytest.mark.slow), "verilator"])
def test_hdl_bit_exact_two_lanes(sim, tmp_path, hdl_cache):
    need(sim)
    vec = lane_vectors(2, seed=5, corrupt=True, assign="load")
    LS.check(vec, sim, workdir=tmp_path, build_dir=hdl_cache, in_gap=0.25, out_stall=0.3, seed=9)


@pytest.mark.slow
@pytest.mark.parametrize("assign", ["rr", "load"])
def test_hdl_sims_agree_to_the_cycle(assign, tmp_path, hdl_cache):
    vec = lane_vectors(2, seed=6, corrupt=True, assign=assign)
    stim = LS.make_lane_stimulus(vec, in_gap=0.25, out_stall=0.3, seed=3)
    ref = LS.run("myhdl", stim, tmp_path / "myhdl", 2, vec.params, ROWS, hdl_cache, assign=assign)
    assert LS.first_difference(ref, vec) is None
    for sim in ("ghdl", "icarus", "verilator"):
        if S.available(sim):
            continue
        out = LS.run(sim, stim, tmp_path / sim, 2, vec.params, ROWS, hdl_cache, assign=assign)
        assert LS.first_difference(out, vec) is None
        assert LS.first_cycle_difference(ref, out) is None


@pytest.mark.slow
@pytest.mark.parametrize("lanes", [1, 4, 8])
@pytest.mark.parametrize("sim", ["ghdl", "icarus", "verilator"])
def test_hdl_bit_exact_slow(lanes, sim, tmp_path, hdl_cache):
    need(sim)
    vec = lane_vectors(lanes, seed=20 + lanes, W=8, corrupt=True, assign="load")
    stim = LS.make_lane_stimulus(vec, in_gap=0.3, out_stall=0.4, seed=lanes)
    ref = LS.run("myhdl", stim, tmp_path / "myhdl", lanes, vec.params, ROWS, hdl_cache, assign="load")
    assert LS.first_difference(ref, vec) is None
    out = LS.run(sim, stim, tmp_path / sim, lanes, vec.params, ROWS, hdl_cache, assign="load")
    assert LS.first_difference(out, vec) is None
    assert LS.first_cycle_difference(ref, out) is None


@pytest.mark.slow
@pytest.mark.parametrize("sim", ["ghdl", "icarus", "verilator"])
def test_hdl_vector_front_four_lanes(sim, tmp_path, hdl_cache):
    """4 lanes with the vector front (the ECP5 build): per-lane errors, random pauses and backpressure, zero-run
    stripes ending at their overrun token; converted HDL bit-exact and cycle-equal to MyHDL."""
    need(sim)
    vec = lane_vectors(4, seed=31, W=16, corrupt=True, assign="load", sizes=(36, 5, 1, 12), FRONT="vector")
    assert len(vec.errors) >= 3
    stim = LS.make_lane_stimulus(vec, in_gap=0.3, out_stall=0.4, seed=6)
    ref = LS.run("myhdl", stim, tmp_path / "myhdl", 4, vec.params, ROWS, hdl_cache, assign="load")
    assert LS.first_difference(ref, vec) is None
    assert sorted(int(e[0]) for e in ref.errors) == sorted(int(e[0]) for e in vec.errors)
    out = LS.run(sim, stim, tmp_path / sim, 4, vec.params, ROWS, hdl_cache, assign="load")
    assert LS.first_difference(out, vec) is None
    assert LS.first_cycle_difference(ref, out) is None


def test_bad_parameters():
    from lutzip.hdl.flows.convert import elaborate_lanes
    with pytest.raises(UnsupportedError, match="LANES"):
        elaborate_lanes(3)
    with pytest.raises(UnsupportedError, match="ROWS"):
        elaborate_lanes(2, rows=6)


def test_cli_lanes_choices(capsys):
    from lutzip.cli import main
    for cmd in (["hdl", "convert", "--out", "x", "--lanes", "3"], ["hdl", "bench", "--lanes", "5"],
                ["hdl", "synth", "--target", "ecp5-85k", "--lanes", "0"]):
        with pytest.raises(SystemExit) as e:
            main(cmd)
        assert e.value.code == 2
        assert "--lanes" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_convert_lanes(tmp_path):
    from lutzip.cli import main
    assert main(["hdl", "convert", "--out", str(tmp_path), "--hdl", "verilog", "--lanes", "2"]) == 0
    text = (tmp_path / "decoder_lanes.v").read_text()
    assert "module decoder_lanes" in text and "m_axis_tkeep" in text and "err_stripe" in text
