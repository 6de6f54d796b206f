"""LUT3: the value table, one simple-dual-port block RAM (write port for tables, read port for decoding).

Interface
---------
clk             clock
we, waddr, wdata   run-time write port (``wdata`` W bits)
raddr, q        synchronous read: ``q`` holds ``LUT3[raddr]`` one clock after ``raddr`` (itself a register in
                :mod:`lutzip.hdl.stages.expand_stage`), the pattern yosys maps to DP16KD / SB_RAM40_4K / RAMB18
DEPTH           entries (<= 4096)

Contents survive reset and are not initialised (block RAM).
"""
from myhdl import Signal, always, block, intbv


@block
def lut3_ram(clk, we, waddr, wdata, raddr, q, DEPTH=4096):
    mem = [Signal(intbv(0)[len(wdata):]) for _ in range(DEPTH)]

    @always(clk.posedge)
    def lut3_port():
        # no read while writing (tables are written while the core is idle): the ports never collide, so
        # synthesis needs no bypass logic after the RAM
        if we:
            mem[waddr].next = wdata
        else:
            q.next = mem[raddr]

    return lut3_port
