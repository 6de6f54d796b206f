"""``lutzip_axi`` with ``LANES > 1``: the N-lane decoder (docs/CORE.md section 6) behind the same ports, registers
and MM2S buffer layout as the single-lane top (docs/AXI.md); :func:`lutzip.firmware.axi.lutzip_axi.lutzip_axi`
builds this body when ``LANES`` is 2, 4 or 8.

Structure::

    s_axis (MM2S) -> stripe_framer -> lane_feed (lane i mod LANES, FIFO per lane) -> decoder_lanes (ASSIGN="rr")
                          |  job FIFO (n, no-core flag)                                   | up to LANES words / beat
                          |  end FIFO (last, truncated)        axis_skid <----------------+
                          v                                        v
                     stripe_out_n (n words per stripe, up to LANES per cycle) -> out_packer_n -> m_axis (S2MM)
    s_axi_ctrl <-> axi_lite <-> axi_regs (LANES in PARAMS; WORDS_OUT counts the words of each group) <- out_crc

The framer, the job / end FIFOs, the registers, the CRC and the soft reset are the single-lane top's
(:mod:`lutzip.firmware.axi.axi_shell`); the decoder returns the stripes in stream order, so stripe i's bookkeeping
is unchanged. ``LANES * W`` must not exceed the beat (``8 * OUT_BYTES``): the output moves at most one beat per
cycle, more lanes would only wait.
"""
from myhdl import ResetSignal, Signal, always_comb, block, concat, intbv

from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.axi_shell import axi_shell, pend_out_signal
from lutzip.firmware.axi.axis_skid import axis_skid
from lutzip.firmware.axi.lane_feed import lane_feed
from lutzip.firmware.axi.out_packer_n import out_packer_n
from lutzip.firmware.axi.stripe_out_n import stripe_out_n
from lutzip.hdl.core.decoder_lanes import decoder_lanes
from lutzip.hdl.lanes.decoder_lane import keep_bits
#: Default words of each lane's input FIFO: a 4096-word int16 stripe compressed about 1.25x is ~1640 words.
IN_ROWS = 2048


@block
def lutzip_axi_n(aclk, aresetn,
                 s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                 m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                 s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata, s_axi_ctrl_wstrb,
                 s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp, s_axi_ctrl_bvalid, s_axi_ctrl_bready,
                 s_axi_ctrl_araddr, s_axi_ctrl_arvalid, s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp,
                 s_axi_ctrl_rvalid, s_axi_ctrl_rready,
                 L=8, W=16, LUT3_DEPTH=4096, FRONT="window", STEP="adder", LUT1_RAM="block", LANES=2,
                 OUT_BYTES=4, CLK_HZ=100_000_000, IN_ROWS=IN_ROWS, ROWS=0, STATES=1, MIRROR=0, MAX_N=512):
    """The AXI top with ``LANES`` (2, 4, 8) decoder lanes; ``IN_ROWS``: words of each lane's input FIFO (a power
    of two >= 4), ``ROWS``: the decoder's output rows per lane (docs/CORE.md 6.1; 0 = its default)."""
    # MIRROR, MAX_N: row stripes in every lane's core (docs/CORE.md 6.8), reported in PARAMS bit 22 / bits 27:24 as
    # the single top does; a row stripe is one packet like a plain one (its descriptor counts its R x N output words),
    # so the framer, the lane feed and stripe_out_n are unchanged. MIRROR=0 converts to the HDL of before.
    mirror_kw = {"MIRROR": 1, "MAX_N": MAX_N} if MIRROR else {}
    N = LANES
    kb = keep_bits(N)
    rst_s = ResetSignal(0, active=1, isasync=False)   # aresetn low or soft reset (driven by the shell)
    b = lambda: Signal(bool(0))  # noqa: E731
    hold = b()
    tbl_we = b()
    tbl_sel, tbl_addr, tbl_wdata = Signal(intbv(0)[2:]), Signal(intbv(0)[12:]), Signal(intbv(0)[32:])
    # framer -> lane feed, job / end FIFO heads
    c_tdata = Signal(intbv(0)[32:])
    c_tvalid, c_tready, c_tlast = b(), b(), b()
    in_open, discarding = b(), b()
    job_pop, end_pop = b(), b()
    job_ok, end_ok, h_nocore, h_last, h_trunc = b(), b(), b(), b(), b()
    h_n = Signal(intbv(0)[16:])
    # lane feed -> decoder
    l_tdata = Signal(intbv(0)[32 * N:])
    l_tvalid, l_tready, l_tlast = Signal(intbv(0)[N:]), Signal(intbv(0)[N:]), Signal(intbv(0)[N:])
    # decoder -> output side
    k_tdata = Signal(intbv(0)[N * W:])
    k_tkeep = Signal(intbv(0)[kb:])
    k_tvalid, k_tready, k_tlast, k_tuser, k_busy = b(), b(), b(), b(), b()
    e_valid = Signal(intbv(0)[N:])
    e_code = Signal(intbv(0)[4 * N:])
    e_stripe = Signal(intbv(0)[32 * N:])
    KW = N * W + kb + 2
    k_in, k_out = Signal(intbv(0)[KW:]), Signal(intbv(0)[KW:])   # {tuser, tlast, tkeep, tdata} around the slice
    q_tdata = Signal(intbv(0)[N * W:])
    q_tkeep = Signal(intbv(0)[kb:])
    q_tvalid, q_tready, q_tlast, q_tuser = b(), b(), b(), b()
    w_valid, w_ready, w_end, res_valid, res_last, done = b(), b(), b(), b(), b(), b()
    w_data = Signal(intbv(0)[N * W:])
    w_count = Signal(intbv(0, min=0, max=N + 1))
    w_emit = Signal(intbv(0, min=0, max=N + 1))
    done_code = Signal(intbv(0)[4:])
    m_fire, m_fire_last = b(), b()
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
                      STATES=STATES, **mirror_kw)

    feed = lane_feed(aclk, rst_s, c_tdata, c_tvalid, c_tready, c_tlast, l_tdata, l_tvalid, l_tready, l_tlast,
                     LANES=N, IN_ROWS=IN_ROWS)
    core = decoder_lanes(aclk, rst_s, l_tdata, l_tvalid, l_tready, l_tlast,
                         k_tdata, k_tkeep, k_tvalid, k_tready, k_tlast, k_tuser,
                         tbl_we, tbl_sel, tbl_addr, tbl_wdata, e_valid, e_code, e_stripe, k_busy,
                         LANES=N, ROWS=ROWS, ASSIGN="rr", L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM,
                         FRONT=FRONT, STEP=STEP, STATES=STATES, **mirror_kw)

    @always_comb
    def ax_slice_in():
        k_in.next = concat(k_tuser, k_tlast, k_tkeep, k_tdata)

    slice_ = axis_skid(aclk, rst_s, k_in, k_tvalid, k_tready, k_out, q_tvalid, q_tready)

    @always_comb
    def ax_slice_out():
        q_tuser.next = k_out[KW - 1]
        q_tlast.next = k_out[KW - 2]
        q_tkeep.next = k_out[KW - 2:N * W]
        q_tdata.next = k_out[N * W:0]

    sout = stripe_out_n(aclk, rst_s, job_ok, h_nocore, h_n, job_pop, end_ok, h_last, h_trunc, end_pop,
                        q_tdata, q_tkeep, q_tvalid, q_tready, q_tlast, q_tuser, w_valid, w_ready, w_data, w_count,
                        w_end, res_valid, res_last, done, done_code, LANES=N, W=W, ERR_MISMATCH=R.ERR_MISMATCH,
                        ERR_TRUNCATED=R.ERR_TRUNCATED)
    pack = out_packer_n(aclk, rst_s, w_valid, w_ready, w_data, w_count, w_end, res_valid, res_last,
                        m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                        W=W, OUT_BYTES=OUT_BYTES, G=N)
    @always_comb
    def ax_events():
        if w_valid and w_ready:
            w_emit.next = w_count
        else:
            w_emit.next = 0
        m_fire.next = m_axis_tvalid and m_axis_tready
        m_fire_last.next = m_axis_tvalid and m_axis_tready and m_axis_tlast
        busy.next = in_open or pend_out != 0
        in_reset.next = hold or discarding

    return shell, feed, core, ax_slice_in, slice_, ax_slice_out, sout, pack, ax_events
