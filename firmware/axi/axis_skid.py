"""AXI-Stream register slice: the output stream comes from flip-flops and the input's ``s_axis_tready`` is a
flip-flop too, so no combinational path crosses it in either direction (``lutzip_axi``: the core's output
before the stripe bookkeeping; ``lane_feed``, ``core_in_reg``, the engine's command ring and result path).

Interface
---------
clk, rst                clock, synchronous active-high reset
s_axis_tdata, s_axis_tvalid, s_axis_tready
                        input side (``s_axis_tready`` registered: high while the skid register is empty)
m_axis_tdata, m_axis_tvalid, m_axis_tready
                        output side (``m_axis_tdata`` / ``m_axis_tvalid`` registered)

Two entries (output register and skid register): full throughput, one word per cycle.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def axis_skid(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, m_axis_tdata, m_axis_tvalid, m_axis_tready):
    width = len(s_axis_tdata)
    d0 = Signal(intbv(0)[width:])
    d1 = Signal(intbv(0)[width:])
    v0 = Signal(bool(0))
    v1 = Signal(bool(0))

    @always_comb
    def sk_outs():
        s_axis_tready.next = not v1
        m_axis_tdata.next = d0
        m_axis_tvalid.next = v0

    @always(clk.posedge)
    def sk_seq():
        if rst:
            v0.next = 0
            v1.next = 0
        elif m_axis_tready or not v0:          # the output register is free this cycle
            if v1:
                d0.next = d1
                v0.next = 1
                v1.next = 0
            elif s_axis_tvalid:
                d0.next = s_axis_tdata
                v0.next = 1
            else:
                v0.next = 0
        elif s_axis_tvalid and not v1:          # output held: the word goes to the skid register
            d1.next = s_axis_tdata
            v1.next = 1

    return sk_outs, sk_seq
