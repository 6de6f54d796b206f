"""The N-lane decoder with fewer pins, for place and route on one device (``lutzip hdl synth --lanes N``).

Every port of :func:`lutzip.hdl.core.decoder_lanes.decoder_lanes` is a pin of the top except ``err_stripe``
(32 bits per lane: 409 pins with four lanes, more than the 365 of the LFE5U-85F-CABGA381): here ``err_sel`` (a pin)
picks one lane's stripe index into a register, ``err_stripe_q`` (32 pins). The decoder inside is unchanged.
"""
from myhdl import Signal, always, block, intbv

from lutzip.hdl.core.decoder_lanes import decoder_lanes


@block
def decoder_lanes_pnr(clk, rst,
                      s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                      m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                      tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                      err_valid, err_code, err_sel, err_stripe_q, busy, LANES=2, **params):
    es = Signal(intbv(0)[32 * LANES:])
    dut = decoder_lanes(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                        m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                        tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, es, busy, LANES=LANES, **params)

    @always(clk.posedge)
    def pick():
        err_stripe_q.next = (es >> (32 * err_sel)) & 0xFFFFFFFF

    return dut, pick


def pnr_signals(lanes: int, W: int = 16) -> dict:
    """The top's signals: :func:`lutzip.hdl.core.ports.lanes_signals` without ``err_stripe``, plus ``err_sel`` and
    ``err_stripe_q``."""
    from lutzip.hdl.core.ports import lanes_signals
    sig = lanes_signals(lanes, W)
    del sig["err_stripe"]
    sig["err_sel"] = Signal(intbv(0)[max(1, (lanes - 1).bit_length()):])
    sig["err_stripe_q"] = Signal(intbv(0)[32:])
    return sig
