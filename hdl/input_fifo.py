"""The input FIFO: 4 words of ``tlast | tdata``, with the three oldest entries visible and popped 0..3 at once.

Popping several words lets the bit window take a header and both window words in one cycle at a stripe
start (see :mod:`lutzip.hdl.bit_window`).

Interface
---------
clk, rst                 clock, synchronous reset (storage is not reset)
wr, wdata[33]            push (caller checks ``count < 4``, i.e. ``s_axis_tready``)
pop[2]                   number of entries to pop this cycle (<= count)
h0, h1, h2 [33]          the oldest, second and third entry (valid when count > 0, 1, 2)
count                    registered number of entries, 0..4
"""
from myhdl import Signal, always, always_comb, always_seq, block, modbv

DEPTH = 4


@block
def input_fifo(clk, rst, wr, wdata, pop, h0, h1, h2, count):
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
        if wr:
            count.next = count + 1 - pop
        else:
            count.next = count - pop

    @always_comb
    def ififo_idx():
        rp1.next = rp + 1
        rp2.next = rp + 2

    @always_comb
    def ififo_heads():
        h0.next = mem[rp]
        h1.next = mem[rp1]
        h2.next = mem[rp2]

    return ififo_store, ififo_ptrs, ififo_idx, ififo_heads
