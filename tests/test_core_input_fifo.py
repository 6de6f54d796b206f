"""The core's input FIFOs (shift register, circular buffer, deferred pop) against a Python model: random
pushes and 0..3-word pops; for the deferred-pop FIFO, split between the early pop count and the late
``pop_x`` bit, and stripe starts that pop what the FIFO's own head flags say."""
from collections import deque

import numpy as np
import pytest
from myhdl import ResetSignal, Signal, StopSimulation, block, delay, instance, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.stages.input_fifo import DEPTH
from lutzip.hdl.stages.input_fifo_defer import input_fifo_defer
from lutzip.hdl.stages.input_fifo_ring import input_fifo_ring
from lutzip.hdl.stages.input_fifo_shift import input_fifo_shift


@block
def _bench(kind, seed, cycles, log, with_after=True):
    clk = Signal(bool(0))
    rst = ResetSignal(1, active=1, isasync=False)
    wr = Signal(bool(0))
    wdata = Signal(intbv(0)[34:])
    pop = Signal(intbv(0)[2:])
    h0, h1, h2 = [Signal(intbv(0)[34:]) for _ in range(3)]
    count = Signal(intbv(0, min=0, max=DEPTH + 1))
    pop_x = Signal(bool(0))
    take_s = Signal(bool(0))
    gt = Signal(intbv(0)[DEPTH:])
    after = [Signal(intbv(0)[34:]) for _ in range(4)] if with_after and kind != "ring" else None
    if kind == "shift":
        dut = input_fifo_shift(clk, rst, wr, wdata, pop, h0, h1, h2, count, count_gt=gt, after=after)
    elif kind == "ring":
        dut = input_fifo_ring(clk, rst, wr, wdata, pop, h0, h1, h2, count, count_gt=gt)
    else:
        dut = input_fifo_defer(clk, rst, wr, wdata, pop, pop_x, take_s, h0, h1, h2, count, gt, after=after)
    late = kind == "defer"
    rng = np.random.default_rng(seed)

    @instance
    def stim():
        model = deque()
        yield delay(1)
        for _ in range(2):
            clk.next = 1
            yield delay(1)
            clk.next = 0
            yield delay(1)
        rst.next = 0
        for cyc in range(cycles):
            # registered count and the visible heads match the model
            assert int(count) == len(model), (cyc, int(count), len(model))
            assert int(gt) == (1 << len(model)) - 1, (cyc, bin(int(gt)), len(model))
            heads = [int(h0), int(h1), int(h2)]
            for i, v in enumerate(list(model)[:3]):
                assert heads[i] == v, (cyc, i, hex(heads[i]), hex(v))
            p = int(rng.integers(0, min(3, len(model)) + 1))
            w = len(model) < DEPTH and rng.random() < 0.7
            d = int(rng.integers(0, 1 << 34))
            # deferred-pop FIFO: a single pop may come late, as pop_x (alone), or a stripe start
            x = late and p == 1 and rng.random() < 0.5
            t = late and len(model) > 0 and rng.random() < 0.3
            if t:
                # a stripe start: 3 / 2 / 1 entries as the heads' good-header (bit 33) / tlast (bit 32) say
                m = list(model) + [0, 0]
                ok0, last0, last1 = m[0] >> 33 & 1, m[0] >> 32 & 1, m[1] >> 32 & 1
                p = 3 if len(model) >= 3 and ok0 and not last0 and not last1 else \
                    2 if len(model) >= 2 and ok0 and not last0 and last1 else 1
                x = False
            take_s.next = t
            pop.next = 0 if t else p - int(x)
            pop_x.next = x
            wr.next = w
            wdata.next = d
            yield delay(1)
            if after is not None:
                # the head after 0..3 pops, counting the word pushed now
                m = list(model) + ([d] if w else [])
                for i in range(4):
                    if i < len(m):
                        assert int(after[i]) == m[i], (cyc, i, hex(int(after[i])), hex(m[i]))
            clk.next = 1
            yield delay(1)
            clk.next = 0
            for _ in range(p):
                model.popleft()
            if w:
                model.append(d)
            log.append(len(model))
        raise StopSimulation

    return dut, stim


@pytest.mark.parametrize("kind,with_after,seed", [("shift", True, 7), ("shift", False, 9), ("ring", False, 8),
                                                  ("defer", True, 7)])
def test_input_fifo_matches_model(kind, with_after, seed):
    log = []
    inst = _bench(kind, seed, 3000, log, with_after=with_after)
    try:
        inst.run_sim(quiet=1)
    finally:
        inst.quit_sim()
    assert len(log) == 3000
    assert set(log) == set(range(DEPTH + 1))  # every fill level was visited


def test_input_fifo_config_checked():
    wd, h = Signal(intbv(0)[32:]), [Signal(intbv(0)[32:]) for _ in range(3)]
    count, gt = Signal(intbv(0, min=0, max=DEPTH + 1)), Signal(intbv(0)[DEPTH:])
    one = [Signal(bool(0)) for _ in range(5)]
    with pytest.raises(UnsupportedError, match="flag bits"):
        input_fifo_defer(one[0], one[1], one[2], wd, Signal(intbv(0)[2:]), one[3], one[4], *h, count, gt)
    with pytest.raises(UnsupportedError, match="h1 has 8 bits"):
        input_fifo_shift(one[0], one[1], one[2], wd, Signal(intbv(0)[2:]), h[0], Signal(intbv(0)[8:]), h[2],
                         count)
    with pytest.raises(UnsupportedError, match="count_gt has 3 bits"):
        input_fifo_ring(one[0], one[1], one[2], wd, Signal(intbv(0)[2:]), *h, count, Signal(intbv(0)[3:]))
