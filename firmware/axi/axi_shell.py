"""``axi_shell``: the part of ``lutzip_axi`` that does not depend on the decoder (docs/AXI.md), one block for the
single-lane top (:mod:`lutzip.firmware.axi.lutzip_axi`) and the N-lane top (:mod:`lutzip.firmware.axi.lutzip_axi_n`).

Structure::

    s_axis (MM2S) -> stripe_framer -> c_* (to the decoder)
                          |  job FIFO (n, no-core flag) -> job_ok, h_nocore, h_n   (job_pop)
                          |  end FIFO (last, truncated) -> end_ok, h_last, h_trunc (end_pop)
    s_axi_ctrl <-> axi_lite <-> axi_regs (control, status, table port, counters) <- out_crc <- m_axis (S2MM)

plus the resets (``rst_s``: ``aresetn`` low or soft reset) and the count of transfers whose input ended and whose
output has not (``pend_out``). The top computes ``w_emit``, ``m_fire``, ``m_fire_last``, ``busy``, ``in_reset``
from its output side and these.
"""
from myhdl import ResetSignal, Signal, always, always_comb, block, concat, intbv

from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.axi_lite import axi_lite
from lutzip.firmware.axi.axi_regs import axi_regs
from lutzip.firmware.axi.out_crc import out_crc
from lutzip.firmware.axi.stripe_framer import stripe_framer
from lutzip.hdl.stages.sync_fifo import sync_fifo

#: Entries of the job FIFO (stripes between the framer and the output side; one more is current in
#: stripe_out); the stripe-end FIFO has twice as many (it also holds the current stripe's end).
JOB_DEPTH = 16
END_DEPTH = 2 * JOB_DEPTH


def pend_out_signal():
    """A fresh ``pend_out`` for :func:`axi_shell`: transfers ended at the input whose output is not done."""
    return Signal(intbv(0, min=0, max=JOB_DEPTH + 3))


@block
def axi_shell(aclk, aresetn,
              s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
              m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
              s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata, s_axi_ctrl_wstrb,
              s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp, s_axi_ctrl_bvalid, s_axi_ctrl_bready,
              s_axi_ctrl_araddr, s_axi_ctrl_arvalid, s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp,
              s_axi_ctrl_rvalid, s_axi_ctrl_rready,
              rst_s, c_tdata, c_tvalid, c_tready, c_tlast, tbl_we, tbl_sel, tbl_addr, tbl_wdata,
              job_ok, h_nocore, h_n, job_pop, end_ok, h_last, h_trunc, end_pop,
              hold, in_open, discarding, pend_out, w_emit, done, done_code, m_fire, m_fire_last, busy, in_reset,
              L=8, W=16, LUT3_DEPTH=4096, LANES=1, OUT_BYTES=4, CLK_HZ=100_000_000, STATES=1, MIRROR=0, MAX_N=512):
    """The AXI top's register slave, framer, job / end FIFOs, output CRC and resets.

    Parameters
    ----------
    aclk, aresetn, s_axis_*, m_axis_*, s_axi_ctrl_* : Signal
        The top's ports (:func:`lutzip.firmware.axi.regs.ports`); ``m_axis_*`` are only read here.
    rst_s : ResetSignal
        Output: ``aresetn`` low or the soft reset held (CONTROL SOFT_RESET); resets the decoder side.
    c_tdata, c_tvalid, c_tready, c_tlast : Signal
        The framer's stream to the decoder (:func:`lutzip.firmware.axi.stripe_framer.stripe_framer`).
    tbl_we, tbl_sel, tbl_addr, tbl_wdata : Signal
        Outputs: the table write port (TBL_ADDR / TBL_DATA).
    job_ok, h_nocore, h_n, job_pop : Signal
        The job FIFO's head (a stripe: no-core flag, words) and its pop (input).
    end_ok, h_last, h_trunc, end_pop : Signal
        The stripe-end FIFO's head (last stripe of its transfer, truncated) and its pop (input).
    hold, in_open, discarding, pend_out : Signal
        Outputs: soft reset held, an input transfer is open, the framer drops the rest of one, transfers ended at
        the input whose output is not done (:func:`pend_out_signal`).
    w_emit, done, done_code : Signal
        Inputs to the counters and the error registers: words emitted this cycle (a flag, or a count with lanes),
        a stripe ended and its code.
    m_fire, m_fire_last : Signal
        Inputs: an output beat / the last beat of a transfer moves.
    busy, in_reset : Signal
        Inputs: STATUS BUSY (``in_open`` or ``pend_out``) and STATUS IN_RESET (``hold`` or ``discarding``).
    L, W, LUT3_DEPTH, LANES, OUT_BYTES, CLK_HZ : int
        Reported in PARAMS / CLK_HZ (:func:`lutzip.firmware.axi.axi_regs.axi_regs`); ``OUT_BYTES`` sizes the CRC.
    """
    rst_h = ResetSignal(0, active=1, isasync=False)   # aresetn low
    b = lambda: Signal(bool(0))  # noqa: E731
    hold_start, no_discard, discard = b(), b(), b()
    wr_en = b()
    wr_addr = Signal(intbv(0)[R.ADDR_BITS - 2:])
    rd_addr = Signal(intbv(0)[R.ADDR_BITS - 2:])
    wr_data, rd_data = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    job_wr, job_nocore, job_space, end_wr, end_last, end_trunc = b(), b(), b(), b(), b(), b()
    job_n = Signal(intbv(0)[16:])
    last_hs = b()
    job_wdata, job_rdata = Signal(intbv(0)[17:]), Signal(intbv(0)[17:])
    end_wdata, end_rdata = Signal(intbv(0)[2:]), Signal(intbv(0)[2:])
    job_count = Signal(intbv(0, min=0, max=JOB_DEPTH + 1))
    end_count = Signal(intbv(0, min=0, max=END_DEPTH + 1))
    crc = Signal(intbv(0)[32:])

    @always_comb
    def ax_resets():
        rst_h.next = not aresetn
        rst_s.next = (not aresetn) or hold
        discard.next = not no_discard

    lite = axi_lite(aclk, rst_h, s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata,
                    s_axi_ctrl_wstrb, s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp, s_axi_ctrl_bvalid,
                    s_axi_ctrl_bready, s_axi_ctrl_araddr, s_axi_ctrl_arvalid, s_axi_ctrl_arready, s_axi_ctrl_rdata,
                    s_axi_ctrl_rresp, s_axi_ctrl_rvalid, s_axi_ctrl_rready, wr_en, wr_addr, wr_data, rd_addr, rd_data)
    regs = axi_regs(aclk, rst_h, wr_en, wr_addr, wr_data, rd_addr, rd_data, hold, hold_start, no_discard,
                    tbl_we, tbl_sel, tbl_addr, tbl_wdata, busy, in_open, in_reset, s_axis_tvalid, s_axis_tready,
                    m_axis_tvalid, m_axis_tready, w_emit, done, done_code, crc,
                    L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LANES=LANES, OUT_BYTES=OUT_BYTES, CLK_HZ=CLK_HZ, STATES=STATES,
                    MIRROR=MIRROR, MAX_N=MAX_N)
    framer = stripe_framer(aclk, rst_h, hold, hold_start, discard, s_axis_tdata, s_axis_tvalid, s_axis_tready,
                           s_axis_tlast, c_tdata, c_tvalid, c_tready, c_tlast, job_wr, job_nocore, job_n,
                           job_space, end_wr, end_last, end_trunc, in_open, last_hs, discarding)

    @always_comb
    def ax_fifo_in():
        job_wdata.next = concat(job_nocore, job_n)
        end_wdata.next = concat(end_last, end_trunc)
        job_space.next = job_count != JOB_DEPTH

    jobs = sync_fifo(aclk, rst_s, job_wr, job_wdata, job_pop, job_rdata, job_count, DEPTH=JOB_DEPTH)
    ends = sync_fifo(aclk, rst_s, end_wr, end_wdata, end_pop, end_rdata, end_count, DEPTH=END_DEPTH)

    @always_comb
    def ax_fifo_out():
        job_ok.next = job_count != 0
        end_ok.next = end_count != 0
        h_nocore.next = job_rdata[16]
        h_n.next = job_rdata[16:0]
        h_last.next = end_rdata[1]
        h_trunc.next = end_rdata[0]

    ocrc = out_crc(aclk, rst_s, rst_h, m_axis_tdata, m_axis_tkeep, m_fire, m_axis_tlast, crc, OUT_BYTES=OUT_BYTES)

    @always(aclk.posedge)
    def ax_pending():
        if rst_s:
            pend_out.next = 0
        elif last_hs and not m_fire_last:
            pend_out.next = pend_out + 1
        elif m_fire_last and not last_hs and pend_out != 0:
            pend_out.next = pend_out - 1

    return ax_resets, lite, regs, framer, ax_fifo_in, jobs, ends, ax_fifo_out, ocrc, ax_pending
