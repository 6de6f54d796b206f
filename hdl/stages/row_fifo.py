"""A first-word-fall-through FIFO in one simple-dual-port block RAM (the lane output buffer of the N-lane decoder).

Interface
---------
clk, rst        clock, synchronous active-high reset (the RAM is not reset)
wr, wdata       write strobe and row; the caller never writes when ``level`` is ``DEPTH + 1`` (credits upstream)
rd              pops the head (only when ``rvalid``)
rdata, rvalid   the head row, a register loaded from the RAM's registered read port, and its valid flag
level           registered number of rows held (RAM + head register), 0 .. DEPTH + 1
DEPTH           RAM rows, a power of two >= 2

The RAM is read with an enable (``fetch``: rows in the RAM and the head register empty or being popped) into
the head register itself, the pattern yosys maps to DP16KD / SB_RAM40_4K / RAMB36 (the head register is the RAM's
read register; on ECP5 the RAM's clock-to-out then starts the output select's path, docs/log/2026-12-lanes.md). A
row written in cycle t can be the head from cycle t + 2. One row in, one row out per cycle. The small FIFO with an
asynchronous head read (LUT RAM) is :mod:`lutzip.hdl.stages.sync_fifo`.
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv, modbv


@block
def row_fifo(clk, rst, wr, wdata, rd, rdata, rvalid, level, DEPTH=16):
    abits = max(1, (DEPTH - 1).bit_length())
    if DEPTH < 2 or (1 << abits) != DEPTH:
        raise ValueError(f"row_fifo DEPTH {DEPTH} is not a power of two >= 2")
    mem = [Signal(intbv(0)[len(wdata):]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[abits:])
    rp = Signal(modbv(0)[abits:])
    n_ram = Signal(intbv(0, min=0, max=DEPTH + 1))
    fetch = Signal(bool(0))
    qv = Signal(bool(0))

    @always_comb
    def fifo_fetch():
        fetch.next = n_ram != 0 and (not qv or rd)

    @always(clk.posedge)
    def fifo_write():
        if wr:
            mem[wp].next = wdata

    @always(clk.posedge)
    def fifo_read():
        if fetch:
            rdata.next = mem[rp]

    @always_seq(clk.posedge, reset=rst)
    def fifo_ptrs():
        if wr:
            wp.next = wp + 1
        if fetch:
            rp.next = rp + 1
        if wr and not fetch:
            n_ram.next = n_ram + 1
        elif fetch and not wr:
            n_ram.next = n_ram - 1
        if fetch:
            qv.next = 1
        elif rd:
            qv.next = 0
        if wr and not rd:
            level.next = level + 1
        elif rd and not wr:
            level.next = level - 1

    @always_comb
    def fifo_valid():
        rvalid.next = qv

    return fifo_fetch, fifo_write, fifo_read, fifo_ptrs, fifo_valid
