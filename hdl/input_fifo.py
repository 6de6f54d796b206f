"""The input FIFO: 4 words, popped 0..3 at once, the three oldest entries visible.

Popping several words lets the bit window take a header and both window words in one cycle at a stripe
start (see :mod:`lutzip.hdl.bit_window`). Two implementations, same behaviour:

* ``SHIFT=True`` (used with the block-RAM LUT1): the entries are kept in place as a shift register, they move
  towards ``h0`` by the number popped and a pushed word lands behind the last entry kept, so ``h0``, ``h1``,
  ``h2`` come straight from flip-flops (no read multiplexer in the bit window's paths; iCE40 needs flip-flops
  for this FIFO anyway).
* ``SHIFT=False`` (used with the distributed LUT1): a circular buffer (LUT RAM on ECP5) read at ``rp``,
  ``rp + 1``, ``rp + 2``; ``pop`` only moves the read pointer, so the loop's refill decision drives 2
  pointer bits instead of the 4 x N storage multiplexers.

Interface
---------
clk, rst                 clock, synchronous reset (storage is not reset)
wr, wdata[N]             push (caller checks ``count < 4``, i.e. ``s_axis_tready``); any width N
pop[2]                   number of entries to pop this cycle (<= count)
h0, h1, h2 [N]           the oldest, second and third entry (valid when count > 0, 1, 2)
count                    registered number of entries, 0..4
"""
from myhdl import Signal, always, always_comb, always_seq, block, modbv

DEPTH = 4


@block
def input_fifo(clk, rst, wr, wdata, pop, h0, h1, h2, count, SHIFT=True):

    @always_seq(clk.posedge, reset=rst)
    def ififo_count():
        if wr:
            count.next = count + 1 - pop
        else:
            count.next = count - pop

    if SHIFT:
        s3 = Signal(modbv(0)[len(wdata):])

        @always(clk.posedge)
        def ififo_shift():
            # slot i takes entry i + pop while that is kept, else the pushed word (slots past the end unused)
            if count > pop:
                if pop == 0:
                    h0.next = h0
                elif pop == 1:
                    h0.next = h1
                elif pop == 2:
                    h0.next = h2
                else:
                    h0.next = s3
            else:
                h0.next = wdata
            if count > pop + 1:
                if pop == 0:
                    h1.next = h1
                elif pop == 1:
                    h1.next = h2
                else:
                    h1.next = s3
            else:
                h1.next = wdata
            if count > pop + 2:
                if pop == 0:
                    h2.next = h2
                else:
                    h2.next = s3
            else:
                h2.next = wdata
            if count > pop + 3:
                s3.next = s3
            else:
                s3.next = wdata

        return ififo_count, ififo_shift

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

    return ififo_count, ififo_store, ififo_ptrs, ififo_idx, ififo_heads
