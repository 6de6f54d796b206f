"""LUT1: the class table read in the decoder's one-cycle loop (docs/FORMAT.md section 2).

Interface
---------
clk             clock
we, waddr, wdata   run-time write port (``waddr`` L bits, ``wdata`` 15 bits: valid|class|c|c+k)
raddr, rdata    synchronous read: ``rdata`` holds ``LUT1[raddr]`` one clock after ``raddr`` (block RAM:
                SB_RAM40_4K / DP16KD / RAMB18). The bit window drives ``raddr`` with the prefix of its
                *next* state, so ``rdata`` is the entry of the current prefix: the loop is
                RAM output -> c+k -> next pointer / window -> prefix -> RAM address.
                ``SYNC=False``: asynchronous read (distributed RAM); the bit window then addresses it with
                its registered current prefix: the same loop with the register before the RAM.
L               address bits (2^L entries)
SYNC            True: synchronous read (block RAM), False: asynchronous read (distributed RAM / LUTs)

Contents survive reset. For N interleaved stripes each lane gets its own read port (or copy) of this table.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def lut1_table(clk, we, waddr, wdata, raddr, rdata, L=8, SYNC=True):
    mem = [Signal(intbv(0)[15:]) for _ in range(1 << L)]

    if not SYNC:
        @always(clk.posedge)
        def lut1_write():
            if we:
                mem[waddr].next = wdata

        @always_comb
        def lut1_read():
            rdata.next = mem[raddr]

        return lut1_write, lut1_read

    @always(clk.posedge)
    def lut1_port():
        # no read while writing: the ports never collide, so synthesis needs no bypass logic after the RAM
        if we:
            mem[waddr].next = wdata
        else:
            rdata.next = mem[raddr]

    return lut1_port
