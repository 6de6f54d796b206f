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

The framer, the job / end FIFOs, the registers, the CRC and the soft reset are the single-lane top's; the
decoder returns the stripes in stream order, so stripe i's bookkeeping is unchanged. ``LANES * W`` must not exceed
the beat (``8 * OUT_BYTES``): the output moves at most one beat per cycle, more lanes would only wait.
"""
from myhdl import ResetSignal, Signal, always, always_comb, block, concat, intbv

from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.axi_lite import axi_lite
from lutzip.firmware.axi.axi_regs import axi_regs
from lutzip.firmware.axi.axis_skid import axis_skid
from lutzip.firmware.axi.lane_feed import lane_feed
from lutzip.firmware.axi.out_crc import out_crc
from lutzip.firmware.axi.out_packer_n import out_packer_n
from lutzip.firmware.axi.stripe_framer import stripe_framer
from lutzip.firmware.axi.stripe_out_n import stripe_out_n
from lutzip.hdl.core.decoder_lanes import decoder_lanes
from lutzip.hdl.lanes.decoder_lane import keep_bits
from lutzip.hdl.stages.sync_fifo import sync_fifo

#: Entries of the job FIFO (as the single-lane top's JOB_DEPTH) and of the stripe-end FIFO.
JOB_DEPTH = 16
END_DEPTH = 2 * JOB_DEPTH
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
                 OUT_BYTES=4, CLK_HZ=100_000_000, IN_ROWS=IN_ROWS, ROWS=0):
    """The AXI top with ``LANES`` (2, 4, 8) decoder lanes; ``IN_ROWS``: words of each lane's input FIFO (a power
    of two >= 4), ``ROWS``: the decoder's output rows per lane (docs/CORE.md 6.1; 0 = its default)."""
    N = LANES
    kb = keep_bits(N)
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
    # framer -> lane feed, job / end FIFOs
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

    feed = lane_feed(aclk, rst_s, c_tdata, c_tvalid, c_tready, c_tlast, l_tdata, l_tvalid, l_tready, l_tlast,
                     LANES=N, IN_ROWS=IN_ROWS)
    core = decoder_lanes(aclk, rst_s, l_tdata, l_tvalid, l_tready, l_tlast,
                         k_tdata, k_tkeep, k_tvalid, k_tready, k_tlast, k_tuser,
                         tbl_we, tbl_sel, tbl_addr, tbl_wdata, e_valid, e_code, e_stripe, k_busy,
                         LANES=N, ROWS=ROWS, ASSIGN="rr", L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM,
                         FRONT=FRONT, STEP=STEP)

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
    ocrc = out_crc(aclk, rst_s, rst_h, m_axis_tdata, m_axis_tkeep, m_fire, m_axis_tlast, crc, OUT_BYTES=OUT_BYTES)

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

    @always(aclk.posedge)
    def ax_pending():
        if rst_s:
            pend_out.next = 0
        elif last_hs and not m_fire_last:
            pend_out.next = pend_out + 1
        elif m_fire_last and not last_hs and pend_out != 0:
            pend_out.next = pend_out - 1

    return ax_resets, lite, regs, framer, ax_fifo_in, jobs, ends, ax_fifo_out, feed, core, ax_slice_in, slice_, \
        ax_slice_out, sout, pack, ocrc, ax_events, ax_pending
