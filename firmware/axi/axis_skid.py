"""AXI-Stream register slice of ``lutzip_axi``: the core's output reaches the stripe bookkeeping from
flip-flops, and the core's ``m_axis_tready`` is a flip-flop too (no combinational path from the S2MM
``tready`` into the core).

Interface
---------
clk, rst                clock, synchronous active-high reset
s_tdata, s_tvalid, s_tready   input side (``s_tready`` registered: high while the skid register is empty)
m_tdata, m_tvalid, m_tready   output side (``m_tdata`` / ``m_tvalid`` registered)

Two entries (output register and skid register): full throughput, one word per cycle.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def axis_skid(clk, rst, s_tdata, s_tvalid, s_tready, m_tdata, m_tvalid, m_tready):
    width = len(s_tdata)
    d0 = Signal(intbv(0)[width:])
    d1 = Signal(intbv(0)[width:])
    v0 = Signal(bool(0))
    v1 = Signal(bool(0))

    @always_comb
    def sk_outs():
        s_tready.next = not v1
        m_tdata.next = d0
        m_tvalid.next = v0

    @always(clk.posedge)
    def sk_seq():
        if rst:
            v0.next = 0
            v1.next = 0
        elif m_tready or not v0:          # the output register is free this cycle
            if v1:
                d0.next = d1
                v0.next = 1
                v1.next = 0
            elif s_tvalid:
                d0.next = s_tdata
                v0.next = 1
            else:
                v0.next = 0
        elif s_tvalid and not v1:          # output held: the word goes to the skid register
            d1.next = s_tdata
            v1.next = 1

    return sk_outs, sk_seq
