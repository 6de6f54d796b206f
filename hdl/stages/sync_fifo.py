"""A small first-word-fall-through FIFO (registers / distributed RAM).

Interface
---------
clk, rst        clock, synchronous active-high reset (the storage is not reset)
wr, wdata       write strobe and data; the caller never writes into a full FIFO (credit counting upstream)
rd, rdata       read strobe and head data; ``rdata`` is the oldest entry whenever ``count`` is non-zero,
                ``rd`` pops it (the caller never pops an empty FIFO)
count           registered number of entries, 0..DEPTH
DEPTH           entries, a power of two >= 2

All handshakes of the core are derived from *registered* counts (``count`` here, credit counters in
:mod:`lutzip.hdl.core.decoder_core`), so no combinational path runs from one FIFO side to the other.

The head is read asynchronously (LUT RAM / registers), for small FIFOs. The deep one, in block RAM, is
:mod:`lutzip.hdl.stages.row_fifo`: a registered read into a head register, with its own count and valid flag.
The two share only the write port and the pointers, so each stays one block that can be read whole.
"""
from myhdl import Signal, always, always_comb, always_seq, block, modbv


@block
def sync_fifo(clk, rst, wr, wdata, rd, rdata, count, DEPTH=4):
    abits = max(1, (DEPTH - 1).bit_length())
    if (1 << abits) != DEPTH:
        raise ValueError(f"sync_fifo DEPTH {DEPTH} is not a power of two")
    width = len(wdata)
    mem = [Signal(modbv(0)[width:]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[abits:])
    rp = Signal(modbv(0)[abits:])

    @always(clk.posedge)
    def fifo_store():
        if wr:
            mem[wp].next = wdata

    @always_seq(clk.posedge, reset=rst)
    def fifo_ptrs():
        if wr:
            wp.next = wp + 1
        if rd:
            rp.next = rp + 1
        if wr and not rd:
            count.next = count + 1
        elif rd and not wr:
            count.next = count - 1

    @always_comb
    def fifo_head():
        rdata.next = mem[rp]

    return fifo_store, fifo_ptrs, fifo_head
