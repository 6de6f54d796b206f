"""A test's decoder core whose table writes arrive late: ``DELAY`` flip-flop stages on the table port
(tests/test_core_tbl_reg.py: the stimulus there must fail when the last table writes land too late)."""
from myhdl import Signal, always, block, intbv

from lutzip.hdl.core.decoder_core import decoder_core


@block
def late_core(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
              m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
              tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy, DELAY=1, **params):
    """:func:`lutzip.hdl.core.decoder_core.decoder_core` (``params``) with its table port ``DELAY`` clock edges
    late."""
    we = [tbl_we] + [Signal(bool(0)) for _ in range(DELAY)]
    sel = [tbl_sel] + [Signal(intbv(0)[2:]) for _ in range(DELAY)]
    addr = [tbl_addr] + [Signal(intbv(0)[12:]) for _ in range(DELAY)]
    wd = [tbl_wdata] + [Signal(intbv(0)[32:]) for _ in range(DELAY)]

    @always(clk.posedge)
    def c_late():
        for i in range(DELAY):
            we[i + 1].next = we[i]
            sel[i + 1].next = sel[i]
            addr[i + 1].next = addr[i]
            wd[i + 1].next = wd[i]

    u_core = decoder_core(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                          m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                          we[DELAY], sel[DELAY], addr[DELAY], wd[DELAY], err_valid, err_code, busy, **params)
    return c_late, u_core
