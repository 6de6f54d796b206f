"""``lutzip_axi``: the decoder core behind AXI DMA (MM2S in, S2MM out) with an AXI4-Lite register slave.

The normative description is docs/AXI.md; the register map is :mod:`lutzip.firmware.axi.regs`.

Structure::

    s_axis (MM2S) -> stripe_framer -> decoder_core -> axis_skid -> stripe_out -> out_packer -> m_axis (S2MM)
                          |  job FIFO (n, no-core flag)  ^    | words / padding   |
                          |  end FIFO (last, truncated)  ^    v                    v
    s_axi_ctrl <-> axi_lite <-> axi_regs (control, status, table port, counters) <- out_crc

(The framer, the two FIFOs, axi_lite, axi_regs, out_crc and the resets are :mod:`lutzip.firmware.axi.axi_shell`,
shared with the N-lane top.)

Ports as UG1118 names them (``aclk``, ``aresetn``, ``s_axis_*``, ``m_axis_*``, ``s_axi_ctrl_*``), so
Vivado's IP packager infers the two AXI-Stream interfaces, the AXI4-Lite slave, the clock and the reset.
"""
from myhdl import ResetSignal, Signal, always_comb, block, concat, intbv

from lutzip.errors import UnsupportedError
from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.axi_shell import axi_shell, pend_out_signal
from lutzip.firmware.axi.axis_skid import axis_skid
from lutzip.firmware.axi.out_packer import out_packer
from lutzip.firmware.axi.stripe_out import stripe_out
from lutzip.hdl.core.decoder_core import decoder_core


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


def check_params(W=16, LANES=1, OUT_BYTES=4, L=8, STATES=1, MIRROR=0, MAX_N=512):
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
    from lutzip.hdl.core.ports import check_mirror, check_states
    check_states(STATES, int(L))
    check_mirror(MIRROR, MAX_N)


@block
def lutzip_axi(aclk, aresetn,
               s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
               m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
               s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata, s_axi_ctrl_wstrb,
               s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp, s_axi_ctrl_bvalid, s_axi_ctrl_bready,
               s_axi_ctrl_araddr, s_axi_ctrl_arvalid, s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp,
               s_axi_ctrl_rvalid, s_axi_ctrl_rready,
               L=8, W=16, LUT3_DEPTH=4096, FRONT="window", STEP="adder", LUT1_RAM="block", LANES=1,
               OUT_BYTES=4, CLK_HZ=100_000_000, STATES=1, MIRROR=0, MAX_N=512, **lanes_params):
    """The AXI top (docs/AXI.md); parameters as the core's (docs/CORE.md) plus ``LANES``, ``OUT_BYTES``, ``CLK_HZ``."""
    # (the docstring goes into the converted HDL's header: kept as it was, so LANES=1 converts byte for byte as before)
    # STATES: the core's code tables (docs/CORE.md; 2: format version 5 too), reported in PARAMS bits 21:20 as
    # STATES - 1 (docs/AXI.md); STATES=1 converts to the HDL of before.
    # MIRROR, MAX_N: the core's row stripes (docs/CORE.md section 7; format version 6), reported in PARAMS bit 22 and
    # bits 27:24 (log2(MAX_N)); with LANES > 1 every lane's core takes them; MIRROR=0 converts to the HDL of before.
    # LANES 2, 4 or 8 builds lutzip_axi_n.lutzip_axi_n, the N-lane decoder behind the same ports (lanes_params: its
    # IN_ROWS, ROWS); LANES=1 builds the single core below.
    check_params(W, LANES, OUT_BYTES, L, STATES, MIRROR, MAX_N)
    if LANES != 1:
        from lutzip.firmware.axi.lutzip_axi_n import lutzip_axi_n
        return lutzip_axi_n(aclk, aresetn, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                            m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                            s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata,
                            s_axi_ctrl_wstrb, s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp,
                            s_axi_ctrl_bvalid, s_axi_ctrl_bready, s_axi_ctrl_araddr, s_axi_ctrl_arvalid,
                            s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp, s_axi_ctrl_rvalid,
                            s_axi_ctrl_rready, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, FRONT=FRONT, STEP=STEP,
                            LUT1_RAM=LUT1_RAM, LANES=LANES, OUT_BYTES=OUT_BYTES, CLK_HZ=CLK_HZ, STATES=STATES,
                            **({"MIRROR": 1, "MAX_N": MAX_N} if MIRROR else {}), **lanes_params)
    if lanes_params:
        raise UnsupportedError(f"lutzip_axi: {', '.join(sorted(lanes_params))} only with LANES > 1")
    rst_s = ResetSignal(0, active=1, isasync=False)   # aresetn low or soft reset (driven by the shell)
    b = lambda: Signal(bool(0))  # noqa: E731
    hold = b()
    tbl_we = b()
    tbl_sel, tbl_addr, tbl_wdata = Signal(intbv(0)[2:]), Signal(intbv(0)[12:]), Signal(intbv(0)[32:])
    # framer -> core, job / end FIFO heads
    c_tdata = Signal(intbv(0)[32:])
    c_tvalid, c_tready, c_tlast = b(), b(), b()
    in_open, discarding = b(), b()
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
    pend_out = pend_out_signal()
    busy, in_reset = b(), b()

    shell = axi_shell(aclk, aresetn, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                      m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                      s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata, s_axi_ctrl_wstrb,
                      s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp, s_axi_ctrl_bvalid, s_axi_ctrl_bready,
                      s_axi_ctrl_araddr, s_axi_ctrl_arvalid, s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp,
                      s_axi_ctrl_rvalid, s_axi_ctrl_rready,
                      rst_s, c_tdata, c_tvalid, c_tready, c_tlast, tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                      job_ok, h_nocore, h_n, job_pop, end_ok, h_last, h_trunc, end_pop,
                      hold, in_open, discarding, pend_out, w_emit, done, done_code, m_fire, m_fire_last, busy,
                      in_reset, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LANES=LANES, OUT_BYTES=OUT_BYTES, CLK_HZ=CLK_HZ,
                      STATES=STATES, **({"MIRROR": 1, "MAX_N": MAX_N} if MIRROR else {}))

    core = decoder_core(aclk, rst_s, c_tdata, c_tvalid, c_tready, c_tlast, k_tdata, k_tvalid, k_tready, k_tlast,
                        k_tuser, tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, core_busy,
                        L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT, STEP=STEP, STATES=STATES,
                        **({"MIRROR": 1, "MAX_N": MAX_N} if MIRROR else {}))

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

    @always_comb
    def ax_events():
        w_emit.next = w_valid and w_ready
        m_fire.next = m_axis_tvalid and m_axis_tready
        m_fire_last.next = m_axis_tvalid and m_axis_tready and m_axis_tlast
        busy.next = in_open or pend_out != 0
        in_reset.next = hold or discarding

    return shell, core, ax_slice_in, slice_, ax_slice_out, sout, pack, ax_events
