"""A register slice for the decoder core's input stream (32-bit words and ``tlast``): two entries, full
throughput, one cycle of latency (:func:`lutzip.firmware.axi.axis_skid.axis_skid` on the packed word)."""
from myhdl import Signal, always_comb, block, concat, intbv

from lutzip.firmware.axi.axis_skid import axis_skid


@block
def core_in_reg(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast):
    """``s_axis_*`` in, the same stream out of flip-flops (``s_axis_tready`` is a flip-flop too).

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset (empties the slice).
    s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast : Signal
        Input stream.
    m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast : Signal
        Output stream (to the core).
    """
    W = len(s_axis_tdata)
    sk_in, sk_out = Signal(intbv(0)[W + 1:]), Signal(intbv(0)[W + 1:])

    @always_comb
    def c_pack():
        sk_in.next = concat(s_axis_tlast, s_axis_tdata)
        m_axis_tdata.next = sk_out[W:0]
        m_axis_tlast.next = sk_out[W]

    u_skid = axis_skid(clk, rst, sk_in, s_axis_tvalid, s_axis_tready, sk_out, m_axis_tvalid, m_axis_tready)
    return c_pack, u_skid
