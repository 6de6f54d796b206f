"""Asynchronous (dual-clock) FIFO: gray-coded pointers, each crossing through a two-flop synchroniser.

The storage is a simple dual-port RAM with a write port in the write domain and a registered read port in
the read domain (first word fall through from an output register, as :mod:`lutzip.firmware.engine.fifo`).
Synthesis picks the memory by size: a few entries map to distributed RAM / LUT RAM (ECP5 DPR16X4, Xilinx
RAM32M) or flip-flops, larger ones to dual-clock block RAM (ECP5 DP16KD, iCE40 SB_RAM40_4K with RCLK / WCLK).
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def cdc_fifo(wclk, wrst, s_axis_tdata, s_axis_tvalid, s_axis_tready,
             rclk, rrst, m_axis_tdata, m_axis_tvalid, m_axis_tready, wfill=None, DEPTH=16):
    """A stream from the ``wclk`` domain to the ``rclk`` domain, in order, without loss or duplicates.

    Parameters
    ----------
    wclk, wrst : Signal
        Write clock and its synchronous reset (from
        :func:`lutzip.firmware.engine.cdc_reset.cdc_reset` of the same source as ``rrst``).
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        Write side (``wclk``); ``s_axis_tready`` is low while the RAM is full and during ``wrst``.
    rclk, rrst : Signal
        Read clock and its synchronous reset.
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        Read side (``rclk``), first word fall through.
    wfill : Signal, optional
        Write side: high while written words have not yet been read out of the RAM (the write pointer is
        ahead of the synchronised read pointer; for idle detection).
    DEPTH : int
        RAM entries, a power of two >= 4.

    Notes
    -----
    Each pointer is a binary counter of ``log2(DEPTH) + 1`` bits with its gray code in a register of its own
    domain; only the gray registers cross (one bit changes per step, so a synchroniser sees the old or the
    new value, never a mix). Full: the write gray pointer equals the synchronised read gray pointer with its
    two top bits inverted; empty: the read gray pointer equals the synchronised write gray pointer. Both
    flags are pessimistic (they see the other side two or three cycles late), never wrong. Both resets must
    come from one source (a reset of one side alone would leave the other's pointer behind).
    """
    AW = max(2, (DEPTH - 1).bit_length())
    assert 1 << AW == DEPTH, "DEPTH must be a power of two >= 4"
    W = len(s_axis_tdata)
    mem = [Signal(intbv(0)[W:]) for _ in range(DEPTH)]
    wbin, wgray, wbin_n = Signal(modbv(0)[AW + 1:]), Signal(intbv(0)[AW + 1:]), Signal(modbv(0)[AW + 1:])
    rbin, rgray, rbin_n = Signal(modbv(0)[AW + 1:]), Signal(intbv(0)[AW + 1:]), Signal(modbv(0)[AW + 1:])
    rq1, rq2 = Signal(intbv(0)[AW + 1:]), Signal(intbv(0)[AW + 1:])     # read gray pointer in wclk
    wq1, wq2 = Signal(intbv(0)[AW + 1:]), Signal(intbv(0)[AW + 1:])     # write gray pointer in rclk
    full, empty, ov, we, pop = [Signal(bool(0)) for _ in range(5)]
    wa, ra = Signal(intbv(0)[AW:]), Signal(intbv(0)[AW:])
    TOP2 = 3 << (AW - 1)
    if wfill is None:
        wfill = Signal(bool(0))

    @always_comb
    def c_flags():
        full.next = wgray == (rq2 ^ TOP2)
        empty.next = rgray == wq2
        wfill.next = wgray != rq2
        wa.next = wbin[AW:]
        ra.next = rbin[AW:]
        wbin_n.next = wbin + 1
        rbin_n.next = rbin + 1

    @always_comb
    def c_hs():
        s_axis_tready.next = not full and not wrst
        m_axis_tvalid.next = ov
        we.next = s_axis_tvalid and not full and not wrst
        pop.next = (not ov or m_axis_tready) and not empty

    @always(wclk.posedge)
    def c_write():
        if we:
            mem[wa].next = s_axis_tdata

    @always(wclk.posedge)
    def c_wptr():
        if wrst:
            wbin.next = 0
            wgray.next = 0
            rq1.next = 0
            rq2.next = 0
        else:
            rq1.next = rgray
            rq2.next = rq1
            if we:
                wbin.next = wbin_n
                wgray.next = (wbin_n >> 1) ^ wbin_n

    @always(rclk.posedge)
    def c_rptr():
        if rrst:
            rbin.next = 0
            rgray.next = 0
            wq1.next = 0
            wq2.next = 0
            ov.next = 0
        else:
            wq1.next = wgray
            wq2.next = wq1
            if pop:
                m_axis_tdata.next = mem[ra]
                ov.next = 1
                rbin.next = rbin_n
                rgray.next = (rbin_n >> 1) ^ rbin_n
            elif m_axis_tready:
                ov.next = 0

    return c_flags, c_hs, c_write, c_wptr, c_rptr
