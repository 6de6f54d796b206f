"""The replay unit of an N-lane board (``proto_engine``'s ``LANES`` > 1; docs/PROTOCOL.md section 6.1): the replay
buffer split into one region per lane, the N-lane decoder (:func:`lutzip.hdl.core.decoder_lanes.decoder_lanes`,
``ASSIGN="rr"``) fed from the regions, its beats (up to ``LANES`` words each) going to a CRC32 instead of the link.

The same ring entries, run protocol and REPLAY_DONE values as :func:`lutzip.firmware.engine.replay.replay_unit`;
what differs:

* Lane ``j``'s region is buffer words ``j * REPLAY_WORDS / LANES`` and up (:mod:`lutzip.firmware.engine.replay_feed`);
  its length is one past the last word a load wrote into it. The host loads lane ``j``'s stripes there (stripe
  ``i`` of a pass to lane ``i mod LANES``: the decoder's ``"rr"`` rule) with a number of stripes per pass that is a
  multiple of ``LANES``, so every pass starts again at lane 0. A run's ``n_words`` is not used (the lanes' lengths
  are); each lane reads its region ``passes`` times, its pass's last word given ``tlast``.
* The N-lane decoder is this unit's own (the streaming path keeps the board's single-lane core, unchanged): it
  takes every table write, and it is reset at a run's start and end (its lane order starts at lane 0 in every run).
* A pass is over when the output has given as many packets as the lanes took in pass 1 (counted on the input).
* The watchdog: a run ends when for :data:`lutzip.firmware.engine.replay.DRAIN_LIMIT` cycles no lane took a word and
  no beat came out (a layout whose lanes do not follow the rule, or a region never loaded); its missing passes
  count as bad.
"""
from myhdl import ConcatSignal, ResetSignal, Signal, always, always_comb, block, intbv, modbv

from lutzip.firmware.engine.replay import DRAIN_LIMIT
from lutzip.firmware.engine.replay_feed import replay_feed
from lutzip.firmware.engine.replay_load import replay_load
from lutzip.firmware.engine.replay_read import replay_read
from lutzip.hdl.core.decoder_lanes import decoder_lanes
from lutzip.hdl.lanes.decoder_lane import keep_bits
from lutzip.link.protocol import REPLAY_NAMES


@block
def replay_lanes(clk, rst, s_axis_ring_tdata, s_axis_ring_tvalid, s_axis_ring_tready,
                 m_axis_ring_tdata, m_axis_ring_tvalid, m_axis_ring_tready,
                 s_axis_ld_tdata, s_axis_ld_tvalid, s_axis_ld_tready, s_axis_ld_tlast,
                 m_axis_core_tdata, m_axis_core_tvalid, m_axis_core_tready, m_axis_core_tlast,
                 s_axis_core_tdata, s_axis_core_tvalid, s_axis_core_tready, s_axis_core_tlast, s_axis_core_tuser,
                 m_axis_res_tvalid, m_axis_res_tready, core_busy, stripes_done, results_idle, active, done_req, rd,
                 tbl_we=None, tbl_sel=None, tbl_addr=None, tbl_wdata=None,
                 REPLAY_WORDS=4096, W=16, BITS=40, FAST_CRC=False, LANES=2, ROWS=0, L=8, LUT3_DEPTH=4096,
                 STATES=1, FRONT="window", MIRROR=0, MAX_N=512):
    """``replay_unit``'s ports (the single-lane core's streams pass through unchanged) and the table-write port.

    Parameters
    ----------
    tbl_we, tbl_sel, tbl_addr, tbl_wdata : Signal
        The core's table-write port (the N-lane decoder takes every write too).
    REPLAY_WORDS, W, BITS, FAST_CRC : int, bool
        As :func:`lutzip.firmware.engine.replay.replay_unit`.
    LANES, ROWS : int
        The N-lane decoder's lanes (2, 4, 8) and rows per lane (0: its default).
    L, LUT3_DEPTH, STATES, FRONT, MIRROR, MAX_N
        The lanes' core parameters (docs/CORE.md; ``MIRROR=1``: row stripes in every lane, section 6.8).
    """
    assert len(REPLAY_NAMES) == 11
    N = LANES
    AW = max(1, (REPLAY_WORDS - 1).bit_length())
    assert 1 << AW == REPLAY_WORDS, "REPLAY_WORDS must be a power of two"
    DEPTH = REPLAY_WORDS // N
    assert DEPTH >= 32, "REPLAY_WORDS must hold 32 words per lane"
    kb = keep_bits(N)
    B = W // 8
    wa = Signal(modbv(0)[AW:])
    we = Signal(bool(0))
    wd = Signal(intbv(0)[33:])
    tag = Signal(intbv(0)[2:])
    rp_entry = Signal(bool(0))
    sent = Signal(modbv(0)[16:])
    idle = Signal(bool(0))
    start = Signal(bool(0))
    phase = Signal(bool(0))                 # the run's word count has been read
    k_pass = Signal(intbv(0)[32:])          # passes asked for
    n_m1 = Signal(modbv(0)[AW:])            # (not used: the lanes' region lengths are)
    lrst = ResetSignal(1, active=1, isasync=False)      # the N-lane decoder's reset
    # lanes: inputs, feeds' chains
    l_data = [Signal(intbv(0)[32:]) for _ in range(N)]
    l_valid = [Signal(bool(0)) for _ in range(N)]
    l_last = [Signal(bool(0)) for _ in range(N)]
    l_ready = Signal(intbv(0)[N:])
    reading = [Signal(bool(0)) for _ in range(N)]
    flight = [Signal(bool(0)) for _ in range(N)]
    psum = [Signal(intbv(0)[AW + 1:]) for _ in range(N)]
    pkc = [Signal(bool(0)) for _ in range(N)]
    hsc = [Signal(bool(0)) for _ in range(N)]
    stc = [Signal(bool(0)) for _ in range(N)]
    lt_data = ConcatSignal(*reversed(l_data))
    lt_valid = ConcatSignal(*reversed(l_valid))
    lt_last = ConcatSignal(*reversed(l_last))
    # the decoder's output
    k_data = Signal(intbv(0)[N * W:])
    k_keep = Signal(intbv(0)[kb:])
    k_valid, k_ready, k_last, k_user, l_busy = [Signal(bool(0)) for _ in range(5)]
    e_valid = Signal(intbv(0)[N:])
    e_code = Signal(intbv(0)[4 * N:])
    e_stripe = Signal(intbv(0)[32 * N:])
    # the beat's valid data words (keep, less the error marker), the CRC after 0 .. N of them
    nd = Signal(intbv(0)[kb:])
    crc = Signal(intbv(0xFFFFFFFF)[32:])
    crc_n = Signal(intbv(0)[32:])
    code = Signal(intbv(0)[4:])
    m_pos = Signal(modbv(0)[max(1, (N - 1).bit_length()):])      # keep - 1: the beat's last valid word
    m_sh = ConcatSignal(m_pos, intbv(0)[(W - 1).bit_length():])
    m_shifted = Signal(intbv(0)[N * W:])
    # the run
    p_tot = Signal(intbv(0)[AW + 1:])       # packets per pass (pass 1's input packets, registered)
    allpk = Signal(bool(0))                 # every lane took its pass 1's last word (registered)
    pkt = Signal(intbv(0)[AW + 1:])         # output packets of the current pass
    hs_any, st_any, out_hs = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    k_cycles, k_busy, k_sin, k_words = [Signal(modbv(0)[BITS:]) for _ in range(4)]
    k_stripes, k_derr, k_passes, k_bad = [Signal(modbv(0)[32:]) for _ in range(4)]
    crc_first, crc_last = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    pd = Signal(bool(0))
    pcrc = Signal(intbv(0)[32:])
    pfirst = Signal(bool(0))
    sd = Signal(bool(0))
    first_err = Signal(intbv(0)[4:])
    quiet = Signal(intbv(0)[8:])

    u_feeds = [replay_feed(clk, rst, we, wa, wd, start, active, k_pass, l_data[j], l_valid[j], l_ready(j),
                           l_last[j], reading[j], flight[j], psum[j - 1] if j else None, psum[j],
                           pkc[j - 1] if j else None, pkc[j], hsc[j - 1] if j else None, hsc[j],
                           stc[j - 1] if j else None, stc[j], LANE=j, DEPTH=DEPTH) for j in range(N)]
    # the lanes' table port from flip-flops (one cycle after the core's: tables are written long before a run
    # starts), so the engine's table-write logic does not reach the lanes' RAMs across the die
    q_we = Signal(bool(0))
    q_sel, q_addr, q_wdata = Signal(intbv(0)[len(tbl_sel):]), Signal(intbv(0)[len(tbl_addr):]), \
        Signal(intbv(0)[len(tbl_wdata):])

    @always(clk.posedge)
    def c_tbl():
        q_we.next = tbl_we
        q_sel.next = tbl_sel
        q_addr.next = tbl_addr
        q_wdata.next = tbl_wdata

    u_dec = decoder_lanes(clk, lrst, lt_data, lt_valid, l_ready, lt_last,
                          k_data, k_keep, k_valid, k_ready, k_last, k_user,
                          q_we, q_sel, q_addr, q_wdata, e_valid, e_code, e_stripe, l_busy,
                          LANES=N, ROWS=ROWS, ASSIGN="rr", L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, FRONT=FRONT,
                          STATES=STATES, MIRROR=MIRROR, MAX_N=MAX_N)

    @always_comb
    def c_ring():
        tag.next = s_axis_ring_tdata[34:32]
        rp_entry.next = s_axis_ring_tdata[34]
        m_axis_ring_tdata.next = s_axis_ring_tdata[34:0]
        idle.next = (not core_busy) and (not l_busy) and sent == stripes_done and results_idle

    @always_comb
    def c_pass():
        """The single-lane core's streams, unchanged."""
        m_axis_core_tdata.next = s_axis_ld_tdata
        m_axis_core_tvalid.next = s_axis_ld_tvalid
        m_axis_core_tlast.next = s_axis_ld_tlast
        s_axis_ld_tready.next = m_axis_core_tready
        s_axis_core_tready.next = m_axis_res_tready
        m_axis_res_tvalid.next = s_axis_core_tvalid

    @always_comb
    def c_beat():
        k_ready.next = active
        out_hs.next = active and k_valid
        hs_any.next = hsc[N - 1]
        st_any.next = stc[N - 1]
        if k_user:
            nd.next = k_keep - 1
        else:
            nd.next = k_keep

    @always_comb
    def c_crc_n():
        """The CRC32 (reflected, 0xEDB88320, as crc32_byte without its ROM) after the beat's first ``nd`` words,
        word 0 first, each word's low byte first: one XOR network of the beat's bits (``FAST_CRC`` is not used)."""
        k = intbv(0)[32:]
        r = intbv(0)[32:]
        k[:] = crc
        r[:] = crc
        for w in range(N):
            for y in range(W):
                if k[0] ^ k_data[w * W + y]:
                    k[:] = (k >> 1) ^ 0xEDB88320
                else:
                    k[:] = k >> 1
            if nd == w + 1:
                r[:] = k
        crc_n.next = r

    @always_comb
    def c_mpos():
        m_pos.next = k_keep - 1

    @always_comb
    def c_mshift():
        m_shifted.next = k_data >> m_sh

    @always_comb
    def c_code():
        """The error marker's code: the beat's last valid word's low 4 bits."""
        code.next = m_shifted[4:0]

    @always(clk.posedge)
    def c_lrst():
        lrst.next = rst or start or done_req

    u_load = replay_load(clk, rst, s_axis_ring_tdata, s_axis_ring_tvalid, s_axis_ring_tready, m_axis_ring_tvalid,
                         m_axis_ring_tready, tag, rp_entry, idle, active, start, phase, we, wa, wd, n_m1, k_pass, sent,
                         active, s_axis_ld_tvalid, m_axis_core_tready, s_axis_ld_tlast)

    @always(clk.posedge)
    def c_run():
        """The run: counters, packets per pass, CRC per pass, the run's end."""
        done_req.next = 0
        pd.next = 0
        sd.next = 0
        p_tot.next = psum[N - 1]
        allpk.next = pkc[N - 1]
        if rst:
            active.next = 0
        elif start:
            active.next = 1
            pkt.next = 0
            crc.next = 0xFFFFFFFF
            k_cycles.next = 0
            k_busy.next = 0
            k_sin.next = 0
            k_words.next = 0
            k_stripes.next = 0
            k_derr.next = 0
            k_passes.next = 0
            sd.next = 1
            first_err.next = 0
            quiet.next = 0
        if not rst and active:
            k_cycles.next = k_cycles + 1
            if l_busy:
                k_busy.next = k_busy + 1
                if st_any:
                    k_sin.next = k_sin + 1
            if out_hs:
                k_words.next = k_words + nd
                if k_user:
                    k_derr.next = k_derr + 1
                    if first_err == 0:
                        first_err.next = code
                if k_last:
                    k_stripes.next = k_stripes + 1
                    if allpk and pkt + 1 == p_tot:
                        # the pass's last packet: its CRC is booked a cycle later (pd)
                        pcrc.next = crc_n ^ 0xFFFFFFFF
                        pd.next = 1
                        pfirst.next = k_passes == 0
                        k_passes.next = k_passes + 1
                        crc.next = 0xFFFFFFFF
                        pkt.next = 0
                    else:
                        crc.next = crc_n
                        pkt.next = pkt + 1
                else:
                    crc.next = crc_n
            # the watchdog: no word taken and no beat out
            if out_hs or hs_any:
                quiet.next = 0
            elif quiet != DRAIN_LIMIT:
                quiet.next = quiet + 1
            if k_passes == k_pass:
                active.next = 0
                done_req.next = 1
            elif quiet == DRAIN_LIMIT:
                active.next = 0
                done_req.next = 1
                k_bad.next = k_bad + (k_pass - k_passes)
        if sd:
            crc_first.next = 0
            crc_last.next = 0
            k_bad.next = 0
        elif pd:
            if pfirst:
                crc_first.next = pcrc
            elif pcrc != crc_first:
                k_bad.next = k_bad + 1
            crc_last.next = pcrc

    u_read = replay_read(rd, k_cycles, k_busy, k_sin, k_words, k_stripes, k_derr, k_passes, k_bad, crc_first,
                         crc_last, first_err)

    return (u_feeds, u_dec, c_tbl, c_ring, u_load, c_pass, c_beat, c_crc_n, c_mpos, c_mshift, c_code,
            c_lrst, c_run, u_read)
