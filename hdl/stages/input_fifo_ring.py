"""The circular-buffer input FIFO (the window front's adder step with the distributed LUT1).

A circular buffer (LUT RAM on ECP5) read at ``rp``, ``rp + 1``, ``rp + 2``; ``pop`` only moves the read
pointer, so the loop's refill decision drives 2 pointer bits instead of the 4 x N storage multiplexers.

Interface
---------
The common one of :mod:`lutzip.hdl.stages.input_fifo` (clk, rst, wr, wdata, pop, h0, h1, h2, count, count_gt).
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv, modbv

from lutzip.hdl.stages.input_fifo import DEPTH, check_ports
from lutzip.hdl.stages.input_fifo_level import input_fifo_level


@block
def input_fifo_ring(clk, rst, wr, wdata, pop, h0, h1, h2, count, count_gt=None):
    check_ports("input_fifo_ring", wdata, h0, h1, h2, count, count_gt)
    if count_gt is None:
        count_gt = Signal(intbv(0)[DEPTH:])
    no_pop_x = Signal(bool(0))   # constant: every pop is in pop
    level = input_fifo_level(clk, rst, wr, pop, no_pop_x, count, count_gt)
    mem = [Signal(modbv(0)[len(wdata):]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[2:])
    rp = Signal(modbv(0)[2:])
    rp1 = Signal(modbv(0)[2:])
    rp2 = Signal(modbv(0)[2:])

    @always(clk.posedge)
    def ififo_store():
        if wr:
            mem[wp].next = wdata

    @always_seq(clk.posedge, reset=rst)
    def ififo_ptrs():
        if wr:
            wp.next = wp + 1
        rp.next = rp + pop

    @always_comb
    def ififo_idx():
        rp1.next = rp + 1
        rp2.next = rp + 2

    @always_comb
    def ififo_heads():
        h0.next = mem[rp]
        h1.next = mem[rp1]
        h2.next = mem[rp2]

    return level, ififo_store, ififo_ptrs, ififo_idx, ififo_heads
