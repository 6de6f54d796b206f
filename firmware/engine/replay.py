"""Replay unit: a buffer of stripe words in block RAM that the decoder core decodes K times back to back at the
core clock, its output going to a CRC32 instead of the link (docs/PROTOCOL.md, section 6).

It sits between the command ring and the table loader (ring entries with bit 34 set are its own; the others
pass through), in front of the core's input (a multiplexer: the table loader's stream, or the buffer during a
run) and behind the core's output (the result path, or the run's CRC). Built only when ``REPLAY_WORDS`` > 0.
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv

from lutzip.firmware.engine.crc32_byte import crc32_byte
from lutzip.firmware.engine.replay_bank import replay_bank
from lutzip.firmware.engine.replay_load import replay_load
from lutzip.firmware.engine.replay_pipe import replay_pipe
from lutzip.firmware.engine.replay_read import replay_read
from lutzip.link.protocol import REPLAY_NAMES

#: Cycles without core activity after the last input word before a run is ended anyway (a core that lost a
#: packet; never seen -- the run then reports the passes it did not finish as bad).
DRAIN_LIMIT = 255

#: Words in flight or waiting in the output FIFO of the pipelined feed (``PIPE``; >= 8 for one word per cycle).
PIPE_FIFO = 8


@block
def replay_unit(clk, rst, s_axis_ring_tdata, s_axis_ring_tvalid, s_axis_ring_tready,
                m_axis_ring_tdata, m_axis_ring_tvalid, m_axis_ring_tready,
                s_axis_ld_tdata, s_axis_ld_tvalid, s_axis_ld_tready, s_axis_ld_tlast,
                m_axis_core_tdata, m_axis_core_tvalid, m_axis_core_tready, m_axis_core_tlast,
                s_axis_core_tdata, s_axis_core_tvalid, s_axis_core_tready, s_axis_core_tlast, s_axis_core_tuser,
                m_axis_res_tvalid, m_axis_res_tready, core_busy, stripes_done, results_idle, active, done_req, rd,
                REPLAY_WORDS=4096, W=16, BITS=40, FAST_CRC=False, PIPE=False):
    """Load the replay buffer from the ring, run it K times through the core, count and CRC the output.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset (aborts a run; the buffer keeps its contents).
    s_axis_ring_tdata, s_axis_ring_tvalid, s_axis_ring_tready : Signal
        Ring entries (35 bits: ``replay[34] | tag[33:32] | data``). Replay entries: tag 2 sets the load
        address, tag 0 / 1 writes a word (1: it ends a stripe), tag 3 twice: a run of ``data`` words, then
        ``data`` passes (the run starts when the decoder is idle).
    m_axis_ring_tdata, m_axis_ring_tvalid, m_axis_ring_tready : Signal
        The other entries (34 bits) to the table loader.
    s_axis_ld_tdata, s_axis_ld_tvalid, s_axis_ld_tready, s_axis_ld_tlast : Signal
        The table loader's stream to the core (passed on outside a run).
    m_axis_core_tdata, m_axis_core_tvalid, m_axis_core_tready, m_axis_core_tlast : Signal
        The core's input.
    s_axis_core_tdata, s_axis_core_tvalid, s_axis_core_tready, s_axis_core_tlast, s_axis_core_tuser : Signal
        The core's output; ``s_axis_core_tready`` is driven here (1 during a run, else ``m_axis_res_tready``).
    m_axis_res_tvalid, m_axis_res_tready : Signal
        The result path's view of the core's output valid (low during a run) and its ready.
    core_busy : Signal
        The core's ``busy``.
    stripes_done, results_idle : Signal
        From the result path / response framer: with the stripes sent this says when the decoder is idle.
    active : Signal
        A run is in progress.
    done_req : Signal
        One-cycle pulse at the end of a run (the framer sends REPLAY_DONE).
    rd : lutzip.firmware.engine.perf_counters.CounterPort
        Read port of the run's values, :data:`lutzip.link.protocol.REPLAY_NAMES` order.
    REPLAY_WORDS : int
        Buffer words (a power of two); each holds 32 data bits and a stripe-end bit.
    W : int
        Output word width (8 or 16): the CRC covers ``W / 8`` bytes per decoded word.
    BITS : int
        Width of the cycle and word counters.
    FAST_CRC : bool
        CRC through table ROMs.
    PIPE : bool
        The pipelined feed (the two-domain ULX3S build at 100 MHz): the buffer in banks of at most 1024 words
        (two DP16KDs of 1024 x 18 each on the ECP5), read every cycle from a registered address, each bank's read data
        through the RAM's output register and one more flip-flop (0 unless the bank was addressed), then two
        registered OR stages (8 banks, then the groups); a counted
        prefetch (at most :data:`PIPE_FIFO` words read and not yet taken by the core) into a small FIFO keeps
        one word per cycle despite the 6 cycles from address to FIFO. Nothing of the feed's handshake reaches
        the RAMs' enables. The run's start is a flip-flop too: the run entry is taken in the cycle its
        condition holds (the ring's entry, ``phase``, the decoder idle), the run's counters and feed start a
        cycle later, and the ring waits in between (``hold``). The decoder's idle that the run entry waits for is
        a flip-flop as well (2026-12-07 late night: it was the critical path at 100 MHz, the descriptor FIFO's
        valid through the framer's idle into the ring's ready): the idle of the cycle before, 0 when anything in
        that cycle can end it (an entry for the table loader at the ring's head, a run's ``done_req``), so
        it is never 1 where the idle is 0; a run whose entry waits for the idle starts a cycle later than
        without it. False converts to the HDL of before.

    Notes
    -----
    The buffer is read one word per cycle (registered read, first word fall through); the last word of a pass
    is always given ``tlast``, so garbage in the buffer cannot leave the core waiting. The core turns every
    input packet into one output packet (CORE.md 3.1, 3.2): a pass is over when its packets are all out, the
    next pass's words follow without a gap. The CRC restarts with every pass; pass 1's is kept, later passes
    are compared with it (``bad_passes``).
    """
    assert len(REPLAY_NAMES) == 11
    AW = max(1, (REPLAY_WORDS - 1).bit_length())
    assert 1 << AW == REPLAY_WORDS, "REPLAY_WORDS must be a power of two"
    mem = [] if PIPE else [Signal(intbv(0)[33:]) for _ in range(REPLAY_WORDS)]
    wa = Signal(modbv(0)[AW:])
    we = Signal(bool(0))
    wd = Signal(intbv(0)[33:])
    tag = Signal(intbv(0)[2:])
    rp_entry = Signal(bool(0))
    sent = Signal(modbv(0)[16:])
    idle = Signal(bool(0))
    start = Signal(bool(0))
    if PIPE:
        # (PIPE) start_c takes the run entry, start follows from a flip-flop a cycle later; hold: the ring waits
        # for the run (active, or the cycle between)
        start_c, hold = Signal(bool(0)), Signal(bool(0))
        # (PIPE) the decoder's idle as computed (``idle_c``) and registered with its guards (``idle``, c_idle_reg)
        idle_c = Signal(bool(0))
    else:
        start_c, hold = start, active
    phase = Signal(bool(0))                 # the run's word count has been read
    n_m1 = Signal(modbv(0)[AW:])            # words per pass - 1
    k_pass = Signal(intbv(0)[32:])          # passes asked for
    # feed: read address, output register
    ra = Signal(intbv(0)[AW:])
    reading = Signal(bool(0))
    p_read = Signal(intbv(0)[32:])          # passes read from the buffer
    ov = Signal(bool(0))
    od = Signal(intbv(0)[33:])
    ol = Signal(bool(0))                    # the word in od ends its pass
    flight = Signal(bool(0))                # a word read from the buffer, not yet taken by the core
    drained = Signal(bool(0))               # not flight (its own signal: each feed's original term, so the
                                            # netlists stay those of the two processes this one replaced)
    # packets of a pass: counted on the input in pass 1, then known
    in_pkts = Signal(intbv(0)[AW + 1:])
    pk = Signal(bool(0))
    # the current pass's output packets so far minus in_pkts, AW + 3 bits two's complement (output count
    # < 2**(AW + 2), in_pkts < 2**(AW + 1)): its sign bit is ``output count < in_pkts``, no compare needed
    pkt_d = Signal(modbv(0)[AW + 3:])
    pend = Signal(bool(0))                  # the current pass's output is complete
    # results
    crc = Signal(intbv(0xFFFFFFFF)[32:])
    crc_in = Signal(intbv(0)[32:])
    crc_n = Signal(intbv(0)[32:])
    crc1 = Signal(intbv(0)[32:])
    b0, b1 = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    k_cycles, k_busy, k_sin, k_words = [Signal(modbv(0)[BITS:]) for _ in range(4)]
    k_stripes, k_derr, k_passes, k_bad = [Signal(modbv(0)[32:]) for _ in range(4)]
    crc_first, crc_last = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    # a pass's end is booked a cycle after ``pend`` (2026-12-07): its CRC, whether it was pass 1, and the run's
    # start (clears crc_first / crc_last / k_bad), so neither ``pend`` nor ``start`` reaches the 32-bit compare
    # and those 96 flip-flops
    pd = Signal(bool(0))
    pcrc = Signal(intbv(0)[32:])
    pfirst = Signal(bool(0))
    sd = Signal(bool(0))
    first_err = Signal(intbv(0)[4:])
    quiet = Signal(intbv(0)[8:])
    in_hs, out_hs = Signal(bool(0)), Signal(bool(0))

    if PIPE:
        @always_comb
        def c_ring():
            tag.next = s_axis_ring_tdata[34:32]
            rp_entry.next = s_axis_ring_tdata[34]
            m_axis_ring_tdata.next = s_axis_ring_tdata[34:0]
            idle_c.next = (not core_busy) and sent == stripes_done and results_idle
    else:
        @always_comb
        def c_ring():
            tag.next = s_axis_ring_tdata[34:32]
            rp_entry.next = s_axis_ring_tdata[34]
            m_axis_ring_tdata.next = s_axis_ring_tdata[34:0]
            idle.next = (not core_busy) and sent == stripes_done and results_idle

    @always_comb
    def c_mux():
        if active:
            m_axis_core_tdata.next = od[32:0]
            m_axis_core_tvalid.next = ov
            m_axis_core_tlast.next = od[32] or ol
            s_axis_ld_tready.next = 0
            s_axis_core_tready.next = 1
            m_axis_res_tvalid.next = 0
        else:
            m_axis_core_tdata.next = s_axis_ld_tdata
            m_axis_core_tvalid.next = s_axis_ld_tvalid
            m_axis_core_tlast.next = s_axis_ld_tlast
            s_axis_ld_tready.next = m_axis_core_tready
            s_axis_core_tready.next = m_axis_res_tready
            m_axis_res_tvalid.next = s_axis_core_tvalid

    @always_comb
    def c_hs():
        in_hs.next = active and ov and m_axis_core_tready
        out_hs.next = active and s_axis_core_tvalid
        pend.next = pk and not pkt_d[AW + 2]

    @always_comb
    def c_crc_in():
        if pend:
            crc_in.next = 0xFFFFFFFF
        else:
            crc_in.next = crc
        b0.next = s_axis_core_tdata[8:0]

    gens = []
    if W == 16:
        @always_comb
        def c_b1():
            b1.next = s_axis_core_tdata[16:8]
        gens.append(c_b1)

    u_c0 = crc32_byte(crc_in, b0, crc1, ROM=FAST_CRC)
    if W == 16:
        u_c1 = crc32_byte(crc1, b1, crc_n, ROM=FAST_CRC)
    else:
        @always_comb
        def u_c1():
            crc_n.next = crc1

    @always(clk.posedge)
    def c_write():
        if we:
            mem[wa].next = wd

    u_load = replay_load(clk, rst, s_axis_ring_tdata, s_axis_ring_tvalid, s_axis_ring_tready, m_axis_ring_tvalid,
                         m_axis_ring_tready, tag, rp_entry, idle, hold, start_c, phase, we, wa, wd, n_m1, k_pass, sent,
                         active, s_axis_ld_tvalid, m_axis_core_tready, s_axis_ld_tlast)

    @always(clk.posedge)
    def c_run():
        """The run: counters, packets per pass, CRC per pass, the run's end (the feed is c_feed_plain, or
        c_feed / c_pipe with PIPE; ``flight``: a word read from the buffer and not yet taken by the core,
        ``drained``: none)."""
        done_req.next = 0
        pd.next = 0
        sd.next = 0
        if rst:
            active.next = 0
        elif start:
            active.next = 1
            in_pkts.next = 0
            pk.next = 0
            pkt_d.next = 0
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
            if core_busy:
                k_busy.next = k_busy + 1
                if m_axis_core_tready and not ov:
                    k_sin.next = k_sin + 1
            # packets per pass, from pass 1's input
            inc = bool(in_hs and not pk and m_axis_core_tlast)
            if inc:
                in_pkts.next = in_pkts + 1
                if ol:
                    pk.next = 1
            # output: CRC per pass, counters
            if pend:
                pcrc.next = crc ^ 0xFFFFFFFF
                pd.next = 1
                pfirst.next = k_passes == 0
                k_passes.next = k_passes + 1
                crc.next = 0xFFFFFFFF
            if out_hs:
                if s_axis_core_tuser:
                    k_derr.next = k_derr + 1
                    if first_err == 0:
                        first_err.next = s_axis_core_tdata[4:0]
                else:
                    k_words.next = k_words + 1
                    crc.next = crc_n
                if s_axis_core_tlast:
                    k_stripes.next = k_stripes + 1
            # packet accounting: + 1 for an output packet, - 1 for an input packet of pass 1, - in_pkts at a pass
            # end (pend needs pk: no input packet is counted then). The sums come from flip-flops only; pend (one
            # LUT) and the handshakes select.
            t = bool(out_hs and s_axis_core_tlast)
            if pend:
                if t:
                    pkt_d.next = pkt_d - in_pkts + 1
                else:
                    pkt_d.next = pkt_d - in_pkts
            elif t and not inc:
                pkt_d.next = pkt_d + 1
            elif inc and not t:
                pkt_d.next = pkt_d - 1
            # end: every pass's output complete (or the core went quiet with all input consumed)
            if out_hs or core_busy or reading or flight:
                quiet.next = 0
            elif quiet != DRAIN_LIMIT:
                quiet.next = quiet + 1
            if not reading and drained and not pend and pk and k_passes == k_pass:
                active.next = 0
                done_req.next = 1
            elif not reading and drained and quiet == DRAIN_LIMIT:
                active.next = 0
                done_req.next = 1
                k_bad.next = k_bad + (k_pass - k_passes)
        # a cycle after ``start`` / ``pend``, whatever rst and active are then: the values of before one cycle
        # later. Neither meets the branch above: ``pd`` follows a cycle with an output or input handshake, so
        # ``quiet`` <= 1 now; ``sd`` follows ``start`` (an inactive cycle), ``pd`` an active one, and a run lasts
        # longer than a cycle; done_req is seen from the cycle after this one, with the values written.
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

    if not PIPE:
        @always(clk.posedge)
        def c_feed_plain():
            """The feed without PIPE: first word fall through from the RAM's registered read."""
            if rst:
                reading.next = 0
                ov.next = 0
            elif start:
                reading.next = 1
                ra.next = 0
                p_read.next = 0
                ov.next = 0
            # ``start`` needs ``not active``: this branch (the buffer's read enable) does not depend on it, so the
            # ring's read data (``start``'s source) stays off the read-enable path
            if not rst and active:
                if reading and (not ov or m_axis_core_tready):
                    od.next = mem[ra]
                    ov.next = 1
                    ol.next = ra == n_m1
                    if ra == n_m1:
                        ra.next = 0
                        p_read.next = p_read + 1
                        if p_read + 1 == k_pass:
                            reading.next = 0
                    else:
                        ra.next = ra + 1
                elif m_axis_core_tready:
                    ov.next = 0

        @always_comb
        def c_flight():
            flight.next = ov
            drained.next = not ov

        return (c_ring, c_mux, c_hs, c_crc_in, u_c0, u_c1, c_write, u_load, c_feed_plain, c_flight,
                c_run, u_read, *gens)

    # ---- PIPE: the pipelined feed (banks, registered multiplexer, counted prefetch, output FIFO) ----
    BD = min(1024, REPLAY_WORDS // 8)       # bank words: >= 8 banks, two DP16KDs (1024 x 18) each at most
    BW = (BD - 1).bit_length()
    NB = REPLAY_WORDS // BD
    raddr = Signal(intbv(0)[AW:])           # the banks' read address (a flip-flop: nothing else on that path)
    rq = [Signal(intbv(0)[33:]) for _ in range(NB)]
    cnt = Signal(intbv(0, min=0, max=PIPE_FIFO + 1))   # words read and not yet taken by the core
    fo = Signal(intbv(0)[34:])
    u_banks = [replay_bank(clk, we, wa, wd, raddr, rq[b], BANK=b, DEPTH=BD) for b in range(NB)]
    # the counted prefetch; groups of 8 banks: an OR per group, then an OR of the groups, then the FIFO
    u_pipe = replay_pipe(clk, rst, start, active, n_m1, k_pass, raddr, rq, reading, cnt, fo, ov, m_axis_core_tready,
                         DEPTH=PIPE_FIFO, GROUP=8)

    @always(clk.posedge)
    def c_start():
        start.next = start_c and not rst

    @always(clk.posedge)
    def c_idle_reg():
        # the idle that takes the run entry, a flip-flop: idle_c of the cycle before, unless something in that
        # cycle can end the idle in this one -- an entry for the table loader at the ring's head (a stripe's last
        # word counted in ``sent``, a word to the core, a table write, a barrier) or a run's end (``done_req``: the
        # framer's REPLAY_DONE is due from the next cycle, in ``results_idle``; during the run ``hold`` keeps the
        # ring). So when it is 1, idle_c is 1 too: a run starts only where it started before, a cycle later when
        # the idle has just begun.
        idle.next = idle_c and not rst and not done_req and not (s_axis_ring_tvalid and not rp_entry)

    @always_comb
    def c_hold():
        hold.next = active or start

    @always_comb
    def c_od():
        od.next = fo[33:0]
        ol.next = fo[33]

    @always_comb
    def c_flight():
        flight.next = cnt != 0
        drained.next = cnt == 0

    # (u_banks first: MyHDL names this level's signals from the locals seen by its first instance, and raddr is
    # used by no process of this level)
    return (u_banks, c_ring, c_mux, c_hs, c_crc_in, u_c0, u_c1, u_load, u_read, *gens,
            c_start, c_idle_reg, c_hold, u_pipe, c_od, c_flight, c_run)
