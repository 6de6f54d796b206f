"""Command executor: feeds stream words to the decoder core and table writes to its table port, in ring order.

Table writes and barriers wait until the core is idle (no stripe in flight, every stripe's result out).
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def table_loader(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready,
                 m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                 tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                 core_busy, stripes_done, results_idle, barrier_req):
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
    """
    tsel = Signal(intbv(0)[2:])
    taddr = Signal(modbv(0)[12:])
    sent = Signal(modbv(0)[16:])
    idle = Signal(bool(0))
    tag = Signal(intbv(0)[2:])
    go = Signal(bool(0))

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
