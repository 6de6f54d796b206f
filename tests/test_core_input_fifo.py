"""The core's input FIFO (both implementations) against a Python model: random pushes and 0..3-word pops, split
between the early pop count and the late ``pop_x`` bit."""
from collections import deque

import numpy as np
import pytest
from myhdl import ResetSignal, Signal, StopSimulation, block, delay, instance, intbv

from lutzip.hdl.stages.input_fifo import DEPTH, input_fifo


@block
def _bench(shift, seed, cycles, log, late=False, take=False, defer=False):
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
    after = [Signal(intbv(0)[34:]) for _ in range(4)] if shift else None
    dut = input_fifo(clk, rst, wr, wdata, pop, h0, h1, h2, count, pop_x=pop_x if late else None, count_gt=gt,
                     take_start=take_s if take else None, after=after, SHIFT=shift, DEFER=defer)
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
            # one of the p pops comes as pop_x (with take_start the FIFO expects pop_x only alone)
            x = late and (p == 1 if take else p > 0) and rng.random() < 0.5
            t = take and len(model) > 0 and rng.random() < 0.3
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


@pytest.mark.parametrize("late,take,defer", [(False, False, False), (True, False, False), (True, True, False),
                                             (True, False, True), (True, True, True)])
@pytest.mark.parametrize("shift", [True, False])
def test_input_fifo_matches_model(shift, late, take, defer):
    if (take or defer) and not shift:
        pytest.skip("take_start and DEFER are SHIFT-mode options")
    log = []
    inst = _bench(shift, 7 if shift else 8, 3000, log, late=late, take=take, defer=defer)
    try:
        inst.run_sim(quiet=1)
    finally:
        inst.quit_sim()
    assert len(log) == 3000
    assert set(log) == set(range(DEPTH + 1))  # every fill level was visited
