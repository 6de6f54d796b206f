"""Command executor: feeds stream words to the decoder core and table writes to its table port, in ring order.

Table writes and barriers wait until the core is idle (no stripe in flight, every stripe's result out).
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def table_loader(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready,
                 m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                 tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                 core_busy, stripes_done, results_idle, barrier_req, guard=None, IDLE_REG=False):
    """Execute ring entries: stream words to the core, table words to its table port, barriers.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        Ring entries (34 bits, see :func:`lutzip.firmware.engine.cmd_ring.cmd_ring`).
    m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast : Signal
        The decoder core's input stream.
    tbl_we, tbl_sel, tbl_addr, tbl_wdata : Signal
        The decoder core's table write port.
    core_busy : Signal
        The core's ``busy``.
    stripes_done : Signal
        16-bit wrapping count of stripes the result path has finished.
    results_idle : Signal
        Nothing left to send for them; with ``stripes_done`` this tells when the decoder is idle.
    barrier_req : Signal
        One-cycle pulse: a barrier was reached with the decoder idle (the framer sends COUNTERS).
    guard : Signal, optional
        (``IDLE_REG``) high in a cycle after which the idle may end without an entry of the loader's own: the
        replay unit's run or its end (``active or done_req``).
    IDLE_REG : bool
        The idle that table writes and barriers wait for is a flip-flop (the two-domain ULX3S build at 100 MHz,
        2026-12-07 late night: the framer's idle through the loader's ready into the command ring's register
        slice was the critical path): the idle of the cycle before, 0 when in that cycle a stream word was at
        the head (its ``tlast`` ends the idle) or ``guard`` was high, so it is 1 only where the idle is 1; a
        table write or barrier that waits for the idle goes a cycle later than without. False converts to the
        HDL of before.
    """
    tsel = Signal(intbv(0)[2:])
    taddr = Signal(modbv(0)[12:])
    sent = Signal(modbv(0)[16:])
    idle = Signal(bool(0))
    tag = Signal(intbv(0)[2:])
    go = Signal(bool(0))

    if IDLE_REG:
        if guard is None:
            raise ValueError("table_loader: IDLE_REG needs guard")
        idle_c = Signal(bool(0))

        @always_comb
        def comb_idle():
            idle_c.next = (not core_busy) and sent == stripes_done and results_idle
            tag.next = s_axis_tdata[34:32]

        @always(clk.posedge)
        def idle_reg():
            idle.next = idle_c and not rst and not guard and not (s_axis_tvalid and tag[1] == 0)

        comb_idle = (comb_idle, idle_reg)
    else:
        @always_comb
        def comb_idle():
            idle.next = (not core_busy) and sent == stripes_done and results_idle
            tag.next = s_axis_tdata[34:32]

    @always_comb
    def comb():
        m_axis_tdata.next = s_axis_tdata[32:0]
        m_axis_tlast.next = tag == 1
        m_axis_tvalid.next = s_axis_tvalid and tag[1] == 0
        tbl_sel.next = tsel
        tbl_addr.next = taddr
        tbl_wdata.next = s_axis_tdata[32:0]
        tbl_we.next = s_axis_tvalid and tag == 3 and idle
        if tag[1] == 0:
            s_axis_tready.next = m_axis_tready
        elif tag == 3:
            s_axis_tready.next = idle
        elif s_axis_tdata[8:4] == 1:
            s_axis_tready.next = idle
        else:
            s_axis_tready.next = 1

    @always_comb
    def comb_go():
        go.next = s_axis_tvalid and tag == 2 and s_axis_tdata[8:4] == 1 and idle

    @always(clk.posedge)
    def seq():
        barrier_req.next = 0
        if rst:
            sent.next = 0
            taddr.next = 0
            tsel.next = 0
        else:
            if s_axis_tvalid and tag[1] == 0 and m_axis_tready and tag == 1:
                sent.next = sent + 1
            if s_axis_tvalid and tag == 2:
                if s_axis_tdata[8:4] == 0:
                    tsel.next = s_axis_tdata[2:0]
                    taddr.next = s_axis_tdata[28:16]
            if s_axis_tvalid and tag == 3 and idle:
                taddr.next = taddr + 1
            if go:
                barrier_req.next = 1

    return comb_idle, comb, comb_go, seq
