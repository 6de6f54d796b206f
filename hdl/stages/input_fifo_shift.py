"""The plain shift-register input FIFO (the window front's adder step with the block-RAM LUT1).

The entries are kept in place as a shift register: they move towards ``h0`` by the number popped and a
pushed word lands behind the last entry kept, so ``h0``, ``h1``, ``h2`` come straight from flip-flops (no read
multiplexer in the window loop's paths; iCE40 needs flip-flops for this FIFO anyway). Each slot's candidates
are prepared from ``count`` alone (:mod:`lutzip.hdl.stages.input_fifo_slots`); the pop count, late, only selects
among them.

Interface
---------
The common one of :mod:`lutzip.hdl.stages.input_fifo` (clk, rst, wr, wdata, pop, h0, h1, h2, count, count_gt),
and

after                    (optional, out) four signals: what ``h0`` becomes for a pop of 0..3 (the entry, or
                         the word pushed now where the entry does not exist yet)
"""
from myhdl import Signal, always, block, intbv, modbv

from lutzip.hdl.stages.input_fifo import DEPTH, check_ports
from lutzip.hdl.stages.input_fifo_level import input_fifo_level
from lutzip.hdl.stages.input_fifo_slots import input_fifo_slots


@block
def input_fifo_shift(clk, rst, wr, wdata, pop, h0, h1, h2, count, count_gt=None, after=None):
    check_ports("input_fifo_shift", wdata, h0, h1, h2, count, count_gt, after)
    n = len(wdata)
    if count_gt is None:
        count_gt = Signal(intbv(0)[DEPTH:])
    no_pop_x = Signal(bool(0))   # constant: every pop is in pop
    level = input_fifo_level(clk, rst, wr, pop, no_pop_x, count, count_gt)

    s3 = Signal(modbv(0)[n:])
    a = list(after) if after is not None else [Signal(modbv(0)[n:]) for _ in range(4)]
    b = [Signal(modbv(0)[n:]) for _ in range(3)]
    c = [Signal(modbv(0)[n:]) for _ in range(2)]
    e0, e1, e2, e3 = e = [Signal(modbv(0)[n:]) for _ in range(4)]
    slots = input_fifo_slots(wdata, pop, count_gt, h0, h1, h2, s3, a, b, c, e)

    @always(clk.posedge)
    def ififo_shift():
        h0.next = e0
        h1.next = e1
        h2.next = e2
        s3.next = e3

    return level, slots, ififo_shift
