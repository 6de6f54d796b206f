"""The input FIFO's fill level: ``count`` and its thermometer code ``count_gt``, both registered.

Shared by every input FIFO (:mod:`lutzip.hdl.stages.input_fifo`). The late pop ``pop_x`` only shifts the
thermometer code at the end, so it drives one 2:1 per bit.

Interface
---------
clk, rst                 clock, synchronous reset
wr                       an entry is pushed this cycle
pop[2]                   entries popped this cycle (early)
pop_x                    one more entry popped this cycle (late; tie to a constant 0 where there is none)
count                    (out) registered number of entries, 0..DEPTH
count_gt[DEPTH]          (out) the same as a registered thermometer code: bit i = count > i
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv

from lutzip.hdl.stages.input_fifo import DEPTH


@block
def input_fifo_level(clk, rst, wr, pop, pop_x, count, count_gt):
    dec = Signal(intbv(0)[3:])   # entries leaving minus the one arriving, + 1 (0..5 for -1..4)

    @always_comb
    def ififo_cnt_next():
        if wr and not pop_x:
            dec.next = pop
        elif wr or not pop_x:
            dec.next = pop + 1
        else:
            dec.next = pop + 2

    gt0 = Signal(intbv(0)[DEPTH:])   # the thermometer code after the push and pop (pop_x not yet)

    @always_comb
    def ififo_gt():
        u = intbv(0)[DEPTH + 1:]
        if wr:
            u[:] = concat(count_gt, True)
        else:
            u[DEPTH:] = count_gt
        if pop == 0:
            gt0.next = u[DEPTH:]
        elif pop == 1:
            gt0.next = u[DEPTH + 1:1]
        elif pop == 2:
            gt0.next = concat(False, u[DEPTH + 1:2])
        else:
            gt0.next = concat(False, False, u[DEPTH + 1:3])

    @always_seq(clk.posedge, reset=rst)
    def ififo_count():
        count.next = count + 1 - dec
        # the thermometer code shifted by the late pop_x only at the end
        if pop_x:
            count_gt.next = concat(False, gt0[DEPTH:1])
        else:
            count_gt.next = gt0

    return ififo_cnt_next, ififo_gt, ififo_count
