"""``lutzip_axi``: the decoder core behind AXI DMA (MM2S in, S2MM out) with an AXI4-Lite register slave.

The normative description is docs/AXI.md; the register map is :mod:`lutzip.firmware.axi.regs`.

Structure::

    s_axis (MM2S) -> stripe_framer -> decoder_core -> axis_skid -> stripe_out -> out_packer -> m_axis (S2MM)
                          |  job FIFO (n, no-core flag)  ^    | words / padding   |
                          |  end FIFO (last, truncated)  ^    v                    v
    s_axi_ctrl <-> axi_lite <-> axi_regs (control, status, table port, counters) <- out_crc

Ports as UG1118 names them (``aclk``, ``aresetn``, ``s_axis_*``, ``m_axis_*``, ``s_axi_ctrl_*``), so
Vivado's IP packager infers the two AXI-Stream interfaces, the AXI4-Lite slave, the clock and the reset.
"""
from myhdl import ResetSignal, Signal, always, always_comb, block, concat, intbv

from lutzip.errors import UnsupportedError
from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.axi_lite import axi_lite
from lutzip.firmware.axi.axi_regs import axi_regs
from lutzip.firmware.axi.axis_skid import axis_skid
from lutzip.firmware.axi.out_crc import out_crc
from lutzip.firmware.axi.out_packer import out_packer
from lutzip.firmware.axi.stripe_framer import stripe_framer
from lutzip.firmware.axi.stripe_out import stripe_out
from lutzip.hdl.core.decoder_core import decoder_core
from lutzip.hdl.stages.sync_fifo import sync_fifo

#: Entries of the job FIFO (stripes between the framer and the output side; one more is current in
#: stripe_out); the stripe-end FIFO has twice as many (it also holds the current stripe's end).
JOB_DEPTH = 16
END_DEPTH = 2 * JOB_DEPTH


def top_signals(OUT_BYTES=4):
    """Fresh signals for every port of :func:`lutzip_axi`, in signature order (names of :func:`regs.ports`)."""
    out = {}
    for name, _d, width in R.ports(OUT_BYTES):
        if name == "aresetn":
            out[name] = Signal(bool(1))
        elif width == 1:
            out[name] = Signal(bool(0))
        else:
            out[name] = Signal(intbv(0)[width:])
    return out


def check_params(W=16, LANES=1, OUT_BYTES=4, L=8):
    """Raise :class:`lutzip.errors.UnsupportedError` naming the first parameter the top cannot build."""
    if W not in (8, 16):
        raise UnsupportedError(f"lutzip_axi: W must be 8 or 16, got {W!r}")
    if OUT_BYTES not in (4, 8):
        raise UnsupportedError(f"lutzip_axi: OUT_BYTES must be 4 or 8, got {OUT_BYTES!r}")
    if isinstance(LANES, bool) or LANES not in (1, 2, 4, 8):
        raise UnsupportedError(f"lutzip_axi: LANES must be 1, 2, 4 or 8, got {LANES!r}")
    if LANES * W > 8 * OUT_BYTES:
        raise UnsupportedError(f"lutzip_axi: LANES={LANES} x W={W} bits exceed the {8 * OUT_BYTES}-bit beat "
                               f"(OUT_BYTES={OUT_BYTES}): at most {8 * OUT_BYTES // W} lanes")
    if not 1 <= int(L) <= 15:
        raise UnsupportedError(f"lutzip_axi: L must be 1..15 (PARAMS has 4 bits), got {L!r}")


@block
def lutzip_axi(aclk, aresetn,
               s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
               m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
               s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata, s_axi_ctrl_wstrb,
               s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp, s_axi_ctrl_bvalid, s_axi_ctrl_bready,
               s_axi_ctrl_araddr, s_axi_ctrl_arvalid, s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp,
               s_axi_ctrl_rvalid, s_axi_ctrl_rready,
               L=8, W=16, LUT3_DEPTH=4096, FRONT="window", STEP="adder", LUT1_RAM="block", LANES=1,
               OUT_BYTES=4, CLK_HZ=100_000_000, **lanes_params):
    """The AXI top (docs/AXI.md); parameters as the core's (docs/CORE.md) plus ``LANES``, ``OUT_BYTES``, ``CLK_HZ``."""
    # (the docstring goes into the converted HDL's header: kept as it was, so LANES=1 converts byte for byte as before)
    # LANES 2, 4 or 8 builds lutzip_axi_n.lutzip_axi_n, the N-lane decoder behind the same ports (lanes_params: its
    # IN_ROWS, ROWS); LANES=1 builds the single core below.
    check_params(W, LANES, OUT_BYTES, L)
    if LANES != 1:
        from lutzip.firmware.axi.lutzip_axi_n import lutzip_axi_n
        return lutzip_axi_n(aclk, aresetn, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                            m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                            s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata,
                            s_axi_ctrl_wstrb, s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp,
                            s_axi_ctrl_bvalid, s_axi_ctrl_bready, s_axi_ctrl_araddr, s_axi_ctrl_arvalid,
                            s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp, s_axi_ctrl_rvalid,
                            s_axi_ctrl_rready, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, FRONT=FRONT, STEP=STEP,
                            LUT1_RAM=LUT1_RAM, LANES=LANES, OUT_BYTES=OUT_BYTES, CLK_HZ=CLK_HZ, **lanes_params)
    if lanes_params:
        raise UnsupportedError(f"lutzip_axi: {', '.join(sorted(lanes_params))} only with LANES > 1")
    rst_h = ResetSignal(0, active=1, isasync=False)   # aresetn low
    rst_s = ResetSignal(0, active=1, isasync=False)   # aresetn low or soft reset
    b = lambda: Signal(bool(0))  # noqa: E731
    hold, hold_start, no_discard, discard = b(), b(), b(), b()
    wr_en = b()
    wr_addr = Signal(intbv(0)[R.ADDR_BITS - 2:])
    rd_addr = Signal(intbv(0)[R.ADDR_BITS - 2:])
    wr_data, rd_data = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    tbl_we = b()
    tbl_sel, tbl_addr, tbl_wdata = Signal(intbv(0)[2:]), Signal(intbv(0)[12:]), Signal(intbv(0)[32:])
    # framer -> core, job / end FIFOs
    c_tdata = Signal(intbv(0)[32:])
    c_tvalid, c_tready, c_tlast = b(), b(), b()
    job_wr, job_nocore, job_space, end_wr, end_last, end_trunc = b(), b(), b(), b(), b(), b()
    job_n = Signal(intbv(0)[16:])
    in_open, last_hs, discarding = b(), b(), b()
    job_wdata, job_rdata = Signal(intbv(0)[17:]), Signal(intbv(0)[17:])
    end_wdata, end_rdata = Signal(intbv(0)[2:]), Signal(intbv(0)[2:])
    job_count = Signal(intbv(0, min=0, max=JOB_DEPTH + 1))
    end_count = Signal(intbv(0, min=0, max=END_DEPTH + 1))
    job_pop, end_pop = b(), b()
    job_ok, end_ok, h_nocore, h_last, h_trunc = b(), b(), b(), b(), b()
    h_n = Signal(intbv(0)[16:])
    # core -> output side
    k_tdata = Signal(intbv(0)[W:])
    k_tvalid, k_tready, k_tlast, k_tuser = b(), b(), b(), b()
    k_in, k_out = Signal(intbv(0)[W + 2:]), Signal(intbv(0)[W + 2:])      # {tuser, tlast, tdata} around the slice
    q_tdata = Signal(intbv(0)[W:])
    q_tvalid, q_tready, q_tlast, q_tuser = b(), b(), b(), b()
    err_valid, core_busy = b(), b()
    err_code = Signal(intbv(0)[4:])
    w_valid, w_ready, w_end, res_valid, res_last, done = b(), b(), b(), b(), b(), b()
    w_data = Signal(intbv(0)[W:])
    done_code = Signal(intbv(0)[4:])
    w_emit, m_fire, m_fire_last = b(), b(), b()
    crc = Signal(intbv(0)[32:])
    pend_out = Signal(intbv(0, min=0, max=JOB_DEPTH + 3))   # transfers ended at the input, output not done
    busy, in_reset = b(), b()

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
                    L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LANES=LANES, OUT_BYTES=OUT_BYTES, CLK_HZ=CLK_HZ)
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

    core = decoder_core(aclk, rst_s, c_tdata, c_tvalid, c_tready, c_tlast, k_tdata, k_tvalid, k_tready, k_tlast,
                        k_tuser, tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, core_busy,
                        L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT, STEP=STEP)

    @always_comb
    def ax_slice_in():
        k_in.next = concat(k_tuser, k_tlast, k_tdata)

    slice_ = axis_skid(aclk, rst_s, k_in, k_tvalid, k_tready, k_out, q_tvalid, q_tready)

    @always_comb
    def ax_slice_out():
        q_tuser.next = k_out[W + 1]
        q_tlast.next = k_out[W]
        q_tdata.next = k_out[W:0]

    sout = stripe_out(aclk, rst_s, job_ok, h_nocore, h_n, job_pop, end_ok, h_last, h_trunc, end_pop,
                      q_tdata, q_tvalid, q_tready, q_tlast, q_tuser, w_valid, w_ready, w_data, w_end,
                      res_valid, res_last, done, done_code, ERR_MISMATCH=R.ERR_MISMATCH,
                      ERR_TRUNCATED=R.ERR_TRUNCATED)
    pack = out_packer(aclk, rst_s, w_valid, w_ready, w_data, w_end, res_valid, res_last,
                      m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                      W=W, OUT_BYTES=OUT_BYTES)
    ocrc = out_crc(aclk, rst_s, rst_h, m_axis_tdata, m_axis_tkeep, m_fire, m_axis_tlast, crc, OUT_BYTES=OUT_BYTES)

    @always_comb
    def ax_events():
        w_emit.next = w_valid and w_ready
        m_fire.next = m_axis_tvalid and m_axis_tready
        m_fire_last.next = m_axis_tvalid and m_axis_tready and m_axis_tlast
        busy.next = in_open or pend_out != 0
        in_reset.next = hold or discarding

    @always(aclk.posedge)
    def ax_pending():
        if rst_s:
            pend_out.next = 0
        elif last_hs and not m_fire_last:
            pend_out.next = pend_out + 1
        elif m_fire_last and not last_hs and pend_out != 0:
            pend_out.next = pend_out - 1

    return ax_resets, lite, regs, framer, ax_fifo_in, jobs, ends, ax_fifo_out, core, ax_slice_in, slice_, \
        ax_slice_out, sout, pack, ocrc, ax_events, ax_pending
