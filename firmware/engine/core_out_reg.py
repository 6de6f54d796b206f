"""A register slice for the decoder core's output stream (``W``-bit words, ``tlast``, ``tuser``): two entries, full
throughput, one cycle of latency (:func:`lutzip.firmware.axi.axis_skid.axis_skid` on the packed word;
``proto_engine``'s ``RESULT_REG``)."""
from myhdl import Signal, always_comb, block, concat, intbv

from lutzip.firmware.axi.axis_skid import axis_skid


@block
def core_out_reg(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, s_axis_tuser,
                 m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser):
    """``s_axis_*`` (the core's output) in, the same stream out of flip-flops (``s_axis_tready`` is a flip-flop
    too).

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset (empties the slice).
    s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, s_axis_tuser : Signal
        Input stream (from the core).
    m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser : Signal
        Output stream (to the replay unit / result path).
    """
    W = len(s_axis_tdata)
    sk_in, sk_out = Signal(intbv(0)[W + 2:]), Signal(intbv(0)[W + 2:])

    @always_comb
    def c_pack():
        sk_in.next = concat(s_axis_tuser, s_axis_tlast, s_axis_tdata)
        m_axis_tdata.next = sk_out[W:0]
        m_axis_tlast.next = sk_out[W]
        m_axis_tuser.next = sk_out[W + 1]

    u_skid = axis_skid(clk, rst, sk_in, s_axis_tvalid, s_axis_tready, sk_out, m_axis_tvalid, m_axis_tready)
    return c_pack, u_skid
