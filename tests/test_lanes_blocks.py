"""Blocks of the N-lane decoder on their own (MyHDL): the lane buffer (:mod:`lutzip.hdl.lanes.lane_buffer`), the
skid register (:mod:`lutzip.hdl.lanes.lane_skid`) and the least-loaded scheduler (:mod:`lutzip.hdl.lanes.lane_sched`)
against plain Python references."""
import numpy as np
import pytest
from myhdl import Signal, block, delay, instance, intbv, ResetSignal

from lutzip.hdl.flows.lanes_model import assign_lanes
from lutzip.hdl.lanes.lane_buffer import lane_buffer
from lutzip.hdl.lanes.lane_sched import lane_sched
from lutzip.hdl.lanes.lane_skid import lane_skid


def run_buffer(p_wr, p_rd, n_rows, depth=8, seed=0):
    """Write ``n_rows`` rows (when the writer wants to, with probability ``p_wr``, and ``level < depth``) and pop
    the head (probability ``p_rd``); returns (rows read in order, the cycles of the reads)."""
    rng = np.random.default_rng(seed)
    clk, rst = Signal(bool(0)), ResetSignal(1, active=1, isasync=False)
    wr, rd, rvalid = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    wdata, rdata = Signal(intbv(0)[20:]), Signal(intbv(0)[20:])
    level = Signal(intbv(0, min=0, max=depth + 1))
    got, cycles = [], []

    @block
    def bench():
        dut = lane_buffer(clk, rst, wr, wdata, rd, rdata, rvalid, level, DEPTH=depth)

        @instance
        def drive():
            nxt = 0
            k = 0
            rst.next = 1
            for _ in range(3):
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(5)
            rst.next = 0
            while len(got) < n_rows and k < 40 * n_rows + 200:
                w = nxt < n_rows and level < depth and rng.random() < p_wr
                wr.next = w
                wdata.next = nxt if w else 0
                yield delay(1)
                r = bool(rvalid) and rng.random() < p_rd
                rd.next = r
                yield delay(1)
                if r:
                    got.append(int(rdata))
                    cycles.append(k)
                if w:
                    nxt += 1
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(3)
                k += 1

        return dut, drive

    bench().run_sim(quiet=True)
    return got, cycles


@pytest.mark.parametrize("p_wr,p_rd,seed", [(1.0, 1.0, 0), (0.5, 0.9, 1), (0.9, 0.3, 2), (0.7, 0.7, 3)])
def test_lane_buffer_keeps_order(p_wr, p_rd, seed):
    got, _ = run_buffer(p_wr, p_rd, 300, seed=seed)
    assert got == list(range(300))


def test_lane_buffer_full_rate():
    # writer and reader always willing: after the first row, one row per cycle
    got, cycles = run_buffer(1.0, 1.0, 200)
    assert got == list(range(200))
    assert np.all(np.diff(cycles) == 1)
    assert cycles[0] == 5   # written in cycle 0, the head from cycle 5 (write stage, RAM, output register, head queue)


def run_skid(p_in, p_out, n_rows, seed=0):
    """Offer rows ``0 .. n_rows - 1`` in order (each cycle with probability ``p_in``) and take the head
    (probability ``p_out``); returns (rows taken in order, their cycles, whether ``s_ready`` ever changed within a
    cycle after ``m_ready`` did)."""
    rng = np.random.default_rng(seed)
    clk, rst = Signal(bool(0)), ResetSignal(1, active=1, isasync=False)
    s_valid, s_ready, s_take = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    m_valid, m_ready = Signal(bool(0)), Signal(bool(0))
    s_data, m_data = Signal(intbv(0)[12:]), Signal(intbv(0)[12:])
    got, cycles, moved = [], [], []

    @block
    def bench():
        dut = lane_skid(clk, rst, s_data, s_valid, s_ready, s_take, m_data, m_valid, m_ready)

        @instance
        def drive():
            nxt = 0
            rst.next = 1
            for _ in range(3):
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(5)
            rst.next = 0
            k = 0
            while len(got) < n_rows and k < 40 * n_rows + 100:
                v = nxt < n_rows and rng.random() < p_in
                s_valid.next = v
                s_data.next = nxt if v else 0
                yield delay(1)
                r0 = bool(s_ready)
                r = bool(m_valid) and rng.random() < p_out
                m_ready.next = r
                yield delay(1)
                moved.append(bool(s_ready) != r0)
                assert bool(s_take) == (v and r0)
                if r:
                    got.append(int(m_data))
                    cycles.append(k)
                if s_take:
                    nxt += 1
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(3)
                k += 1

        return dut, drive

    bench().run_sim(quiet=True)
    return got, cycles, any(moved)


@pytest.mark.parametrize("p_in,p_out,seed", [(1.0, 1.0, 0), (0.5, 0.9, 1), (0.9, 0.3, 2), (0.7, 0.7, 3)])
def test_skid_keeps_order_and_ready_is_registered(p_in, p_out, seed):
    got, _, moved = run_skid(p_in, p_out, 300, seed=seed)
    assert got == list(range(300))
    assert not moved


def test_skid_full_rate():
    got, cycles, _ = run_skid(1.0, 1.0, 200)
    assert got == list(range(200))
    assert np.all(np.diff(cycles) == 1) and cycles[0] == 1


def run_sched(weights, lanes, lag=0, seed=0):
    """Feed each lane's weights (the lanes given by the rule) and pop the queue of lanes; returns the lanes in
    queue order, one per stripe."""
    rng = np.random.default_rng(seed)
    clk, rst = Signal(bool(0)), ResetSignal(1, active=1, isasync=False)
    per_lane = [[] for _ in range(lanes)]
    for w, j in zip(weights, assign_lanes([[0x4C5A0000 | (w - 1)] for w in weights], lanes, "load")[0]):
        per_lane[j].append(w)
    w_valid = [Signal(bool(0)) for _ in range(lanes)]
    w_data = [Signal(intbv(0)[17:]) for _ in range(lanes)]
    w_pop = [Signal(bool(0)) for _ in range(lanes)]
    cur = Signal(intbv(0, min=0, max=lanes))
    cur_valid, cur_pop = Signal(bool(0)), Signal(bool(0))
    order = []

    @block
    def bench():
        dut = lane_sched(clk, rst, w_valid, w_data, w_pop, cur, cur_valid, cur_pop, LANES=lanes)

        @instance
        def drive():
            idx = [0] * lanes
            rst.next = 1
            for _ in range(3):
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(5)
            rst.next = 0
            k = 0
            while len(order) < len(weights) and k < 10 * len(weights) + 100:
                for j in range(lanes):
                    ok = idx[j] < len(per_lane[j]) and (lag == 0 or rng.random() < 0.5)
                    w_valid[j].next = ok
                    w_data[j].next = per_lane[j][idx[j]] if ok else 0
                yield delay(1)
                p = bool(cur_valid) and rng.random() < 0.6
                cur_pop.next = p
                yield delay(1)
                if p:
                    order.append(int(cur))
                for j in range(lanes):
                    if w_pop[j]:
                        idx[j] += 1
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(3)
                k += 1

        return dut, drive

    bench().run_sim(quiet=True)
    return order


@pytest.mark.parametrize("lanes,lag", [(2, 0), (4, 1), (8, 0)])
def test_sched_least_loaded_beyond_the_load_width(lanes, lag):
    # weights up to 65536: the loads pass 2^18 many times, the modular compare must stay exact
    rng = np.random.default_rng(lanes)
    weights = [int(w) for w in rng.choice([1, 17, 4096, 65536, 60000, 300], 160)]
    expect = assign_lanes([[0x4C5A0000 | (w - 1)] for w in weights], lanes, "load")[0]
    assert sum(weights) > 8 * (1 << 18)
    assert run_sched(weights, lanes, lag, seed=lanes) == expect


def test_synth_marks_only_the_lane_buffer_rams():
    from lutzip.hdl.flows.synth import mark_lane_buffers
    text = ("reg [15:0] decoder_lanes0_decoder_lane0_decoder_core0_lut3_ram0_mem [0:4096-1];\n"
            "reg [35:0] decoder_lanes0_decoder_lane0_lane_buffer0_mem [0:2048-1];\n"
            "reg [68:0] decoder_lane3_lane_buffer3_mem [0:2048-1];\n"
            "        decoder_lane0_lane_buffer0_mem[wp] <= wdata;\n")
    out = mark_lane_buffers(text).splitlines()
    assert out[0].startswith("reg [15:0]")
    assert out[1] == "(* no_rw_check *)" and out[2].startswith("reg [35:0] decoder_lanes0_decoder_lane0_lane_buffer0")
    assert out[3] == "(* no_rw_check *)" and out[4].startswith("reg [68:0] decoder_lane3_lane_buffer3_mem")
    assert out[5].strip().startswith("decoder_lane0_lane_buffer0_mem[wp]") and len(out) == 6
