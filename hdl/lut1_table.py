"""LUT1: the class table read in the decoder's one-cycle loop (docs/FORMAT.md section 2).

Interface
---------
clk             clock
we, waddr, wdata   run-time write port (``waddr`` L bits, ``wdata`` 15 bits: valid|class|c|c+k)
raddr, rdata    asynchronous read: ``rdata = LUT1[raddr]`` in the same cycle (distributed RAM / LUTs).
                ``raddr`` is the L-bit prefix at the bit pointer, so this read sits inside the
                pointer -> prefix -> LUT1 -> pointer loop; it must stay combinational.
L               address bits (2^L entries)

Contents survive reset. For N interleaved stripes each lane gets its own read port (or copy) of this table.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def lut1_table(clk, we, waddr, wdata, raddr, rdata, L=8):
    mem = [Signal(intbv(0)[15:]) for _ in range(1 << L)]

    @always(clk.posedge)
    def lut1_write():
        if we:
            mem[waddr].next = wdata

    @always_comb
    def lut1_read():
        rdata.next = mem[raddr]

    return lut1_write, lut1_read
