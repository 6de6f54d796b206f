"""A flip-flop stage on the decoder core's table write port (``proto_engine``'s ``TABLE_REG``)."""
from myhdl import always, block


@block
def table_reg(clk, rst, s_we, s_sel, s_addr, s_wdata, m_we, m_sel, m_addr, m_wdata):
    """``m_*`` = ``s_*`` one clock edge later (``m_we`` low in reset).

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    s_we, s_sel, s_addr, s_wdata : Signal
        The table loader's write port.
    m_we, m_sel, m_addr, m_wdata : Signal
        The core's.
    """
    @always(clk.posedge)
    def c_reg():
        m_we.next = s_we and not rst
        m_sel.next = s_sel
        m_addr.next = s_addr
        m_wdata.next = s_wdata

    return c_reg
