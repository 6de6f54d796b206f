"""Frame parser: bytes in, checked frames out into the command ring (docs/PROTOCOL.md)."""
from myhdl import Signal, always, always_comb, block, enum, intbv, modbv

from lutzip.firmware.engine.crc32_byte import crc32_byte
from lutzip.firmware.engine.crc8_byte import crc8_byte
from lutzip.link.protocol import BARRIER, IDENTIFY, PING, REPLAY_LOAD, REPLAY_RUN, RESET, STREAM, SYNC, TABLE

ST = enum("R_HUNT", "R_HDR", "R_PAY", "R_CRC", "R_FIN")

#: ``gap_tick`` bit in fast mode (``BAUD`` = 0): a partial frame is dropped after 2**18 .. 2**19 idle cycles.
FAST_GAP_LOG2 = 18

#: Shortest pause (seconds) inside a frame that the board tolerates on a UART. USB-UART bridges hand a frame
#: to the line in USB packets, and a host's scheduler can hold the next packet back for milliseconds: a timeout
#: of a few byte times would drop good frames on real boards. (20 ms, not 10: at 10 ms, K = 17 on the
#: iCEBreaker, YoWASP yosys 0.70's ABC9 trapped on `synth_ice40 -dff`, without which the UP5K does not fit.)
RX_GAP_MIN_S = 0.020


def rx_gap_log2(CLK_HZ, BAUD):
    """The bit of the cycle counter that times the inter-byte timeout of :func:`frame_rx`.

    A partial frame is dropped after the input has been silent for two changes of that bit, i.e. for more than
    ``2**K`` and at most ``2**(K + 1)`` cycles.

    Parameters
    ----------
    CLK_HZ, BAUD : int
        Clock and link rate; ``BAUD`` 0 is the byte-level link (one byte per clock, the virtual board's fast
        mode).

    Returns
    -------
    int
        ``K``: the smallest with ``2**K`` >= both :data:`RX_GAP_MIN_S` seconds and two byte times (20 bit
        times of 8N1) when ``BAUD`` > 0, so the timeout is 20 to 80 ms at usual rates; :data:`FAST_GAP_LOG2`
        when ``BAUD`` is 0.
    """
    if BAUD <= 0:
        return FAST_GAP_LOG2
    cycles = max(-(-20 * CLK_HZ // BAUD), int(CLK_HZ * RX_GAP_MIN_S))
    return max(1, (cycles - 1).bit_length())


@block
def frame_rx(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready,
             ring_we, ring_wdata, ring_commit, ring_rollback, ring_free,
             next_seq, ack_req, nack_req, nack_reason, ident_req, soft_rst, mode_words, link_err, hunting,
             gap_tick, MAX_PAYLOAD=1024, FAST_CRC=False, REPLAY_WORDS=0):
    """Parse host frames; write TABLE/STREAM/BARRIER (and REPLAY_LOAD/REPLAY_RUN) frames to the ring, request
    ACK/NACK/IDENT answers.

    Refused with NACK malformed (reason 4), never executed: a length that does not fit the type, a TABLE frame
    whose ``sel`` > 3, reserved byte is not 0 or ``addr`` >= 4096, and a TABLE or BARRIER frame while a stripe
    is open (the last STREAM frame committed had no last
    flag: the core would wait for the rest of the stripe). A frame whose bytes stop for two changes of
    ``gap_tick`` is dropped (counted as a link error, no answer; speculative ring entries are rolled back).

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        The byte stream from the host.
    ring_we, ring_wdata, ring_commit, ring_rollback, ring_free : Signal
        The command ring's write side (:func:`lutzip.firmware.engine.cmd_ring.cmd_ring`).
    next_seq : Signal
        The next sequence number expected (for ACK/NACK frames).
    ack_req, nack_req, nack_reason, ident_req : Signal
        Answers requested from the response framer (one-cycle pulses).
    soft_rst : Signal
        Pulses for a RESET frame; ``mode_words`` is then set to the RESET frame's mode bit 0.
    mode_words : Signal
        Words mode (decoded words are sent back, not only stripe CRCs).
    link_err : Signal
        Pulses for every frame refused (bad CRC, sequence, room, malformed).
    hunting : Signal
        The parser is between frames.
    gap_tick : Signal
        A free-running bit that changes every ``2**K`` cycles (:func:`rx_gap_log2`): the inter-byte timeout.
    MAX_PAYLOAD : int
        Longest payload accepted (bytes).
    FAST_CRC : bool
        CRCs through table ROMs.
    REPLAY_WORDS : int
        Replay buffer words; 0: no replay buffer (protocol version 1). Above 0 (docs/PROTOCOL.md, section 6):
        ``ring_wdata`` is 35 bits wide (bit 34: a replay entry), REPLAY_LOAD and REPLAY_RUN frames are
        accepted (a load must fit the buffer, offset + words; a run replays 1 .. ``REPLAY_WORDS`` words at
        least once; otherwise the frame is malformed), and a refused frame always rolls back what it wrote
        (a REPLAY_RUN frame is checked word by word, after its first word went to the ring). Ring entries of
        replay frames: REPLAY_LOAD's offset as tag 2, its words as tag 0 / 1 (1: the frame's last word with
        FLAGS bit 0, a stripe end), REPLAY_RUN's two words (word count, passes) as tag 3.

    Every ``RP`` branch below is a Python constant: MyHDL writes it into the HDL (``if (1'b0)`` / ``if False``
    in the build without replay) and synthesis removes it; the yosys netlists of every top are those of the
    two blocks this one replaced (docs/log/2026-12-house.md, 2026-12-03 evening).
    """
    RP = REPLAY_WORDS > 0
    RP_BIT = len(ring_wdata) - 1    # bit 34 in the replay build (in range, and dead, without replay)
    # The replay frames' range checks split at bit LS / RS of the word (the bits above: an OR; below: a short sum
    # / compare of flip-flops, the word's top byte, the one arriving, is above both). LS: 2**LS > REPLAY_WORDS + 1,
    # so a word with a bit at LS or above makes offset + words > REPLAY_WORDS + 1; RS: 2**RS > REPLAY_WORDS.
    LS = (REPLAY_WORDS + 1).bit_length()
    RS = max(1, REPLAY_WORDS.bit_length())
    LE = max(LS, 14) + 1            # offset[LS:0] + flen / 4 (< 2**14) without overflow
    assert LS <= 24, "the replay load's offset bits below LS are in the word's first 3 bytes"
    assert len(ring_wdata) == (35 if RP else 34), "ring_wdata: 34 bits, 35 with REPLAY_WORDS"
    state = Signal(ST.R_HUNT)
    idx = Signal(intbv(0)[3:])
    ftype = Signal(intbv(0)[8:])
    fseq = Signal(intbv(0)[8:])
    fflags = Signal(intbv(0)[8:])
    flen = Signal(intbv(0)[16:])
    left = Signal(intbv(0)[16:])
    c8 = Signal(intbv(0)[8:])
    c32 = Signal(intbv(0)[32:])
    rcv = Signal(intbv(0)[32:])
    word = Signal(intbv(0)[32:])
    bi = Signal(modbv(0)[2:])
    accept = Signal(bool(0))      # sequenced, in order, room, well formed: payload goes to the ring
    first = Signal(bool(0))
    reason = Signal(intbv(0)[3:])  # why a sequenced frame is refused (0: not refused)
    dup = Signal(bool(0))
    sopen = Signal(bool(0))       # the last STREAM frame committed did not end its stripe
    tick_d = Signal(bool(0))
    gap1 = Signal(bool(0))        # gap_tick changed once since the last byte
    nacked = Signal(bool(0))
    expect = Signal(modbv(0)[8:])
    fin_commit = Signal(bool(0))
    fin_ack = Signal(bool(0))
    # a REPLAY_LOAD's offset[LS:0] + flen / 4, registered with the word's third byte (2026-12-07): offset[LS:0]
    # lies in the first three bytes (LS <= 24), so the sum is known a byte before the check needs it
    esum = Signal(intbv(0)[LE:])

    c8_n = Signal(intbv(0)[8:])
    c32_n = Signal(intbv(0)[32:])
    u_c8 = crc8_byte(c8, s_axis_tdata, c8_n, ROM=FAST_CRC)
    u_c32 = crc32_byte(c32, s_axis_tdata, c32_n, ROM=FAST_CRC)

    @always_comb
    def outs():
        s_axis_tready.next = state != ST.R_FIN
        next_seq.next = expect
        hunting.next = state == ST.R_HUNT

    @always(clk.posedge)
    def fsm():
        ring_we.next = 0
        ring_commit.next = 0
        ring_rollback.next = 0
        ack_req.next = 0
        nack_req.next = 0
        ident_req.next = 0
        soft_rst.next = 0
        link_err.next = 0
        tick_d.next = gap_tick
        if rst:
            state.next = ST.R_HUNT
            expect.next = 0
            nacked.next = 0
            mode_words.next = 0
            idx.next = 0
            sopen.next = 0
        elif state == ST.R_FIN:
            if fin_commit:
                ring_commit.next = 1
                expect.next = expect + 1
                nacked.next = 0
                if ftype == STREAM:
                    sopen.next = not fflags[0]
            if fin_ack:
                ack_req.next = 1
            state.next = ST.R_HUNT
        elif s_axis_tvalid:
            gap1.next = 0
            b = intbv(0)[8:]
            b[:] = s_axis_tdata
            # running CRCs (table ROMs)
            c = intbv(0)[8:]
            c[:] = c8_n
            k = intbv(0)[32:]
            k[:] = c32_n
            if state == ST.R_HUNT:
                if b == SYNC:
                    state.next = ST.R_HDR
                    idx.next = 0
                    c8.next = 0
                    c32.next = 0xFFFFFFFF
            elif state == ST.R_HDR:
                c32.next = k
                c8.next = c
                idx.next = idx + 1
                if idx == 0:
                    ftype.next = b
                elif idx == 1:
                    fseq.next = b
                elif idx == 2:
                    fflags.next = b
                elif idx == 3:
                    flen.next[8:0] = b
                elif idx == 4:
                    flen.next[16:8] = b
                else:
                    # idx 5: header CRC-8
                    if b != c8 or flen > MAX_PAYLOAD:
                        link_err.next = 1
                        state.next = ST.R_HUNT
                    else:
                        d = modbv(0)[8:]
                        d[:] = fseq - expect
                        rs = intbv(0)[3:]
                        dp = False
                        if ftype == TABLE:
                            if flen < 8 or flen[2:0] != 0:
                                rs[:] = 4
                        elif ftype == STREAM:
                            if flen < 4 or flen[2:0] != 0:
                                rs[:] = 4
                        elif ftype == BARRIER:
                            if flen != 0:
                                rs[:] = 4
                        elif RP and ftype == REPLAY_LOAD:
                            if flen < 8 or flen[2:0] != 0:
                                rs[:] = 4
                        elif RP and ftype == REPLAY_RUN:
                            if flen != 8:
                                rs[:] = 4
                        elif ftype == RESET:
                            if flen != 4:
                                rs[:] = 4
                        elif ftype == IDENTIFY or ftype == PING:
                            if flen != 0:
                                rs[:] = 4
                        else:
                            rs[:] = 4
                        seqd = (ftype == TABLE or ftype == STREAM or ftype == BARRIER or (RP and ftype == REPLAY_LOAD)
                                or (RP and ftype == REPLAY_RUN))
                        if seqd and rs == 0:
                            if d[7]:
                                dp = True
                            elif d != 0:
                                rs[:] = 2
                            elif flen[16:2] > ring_free or (flen == 0 and ring_free == 0):
                                rs[:] = 3
                            elif sopen and ftype != STREAM:
                                rs[:] = 4
                        reason.next = rs
                        dup.next = dp
                        accept.next = seqd and rs == 0 and not dp
                        first.next = 1
                        bi.next = 0
                        left.next = flen
                        if flen == 0:
                            state.next = ST.R_CRC
                            idx.next = 0
                        else:
                            state.next = ST.R_PAY
            elif state == ST.R_PAY:
                c32.next = k
                w = intbv(0)[32:]
                w[:] = word >> 8
                w[32:24] = b
                word.next = w
                bi.next = bi + 1
                left.next = left - 1
                # a TABLE frame's first word, byte by byte: sel 0..3, reserved byte 0, addr < 4096
                bad = False
                if first and ftype == TABLE:
                    if bi == 0:
                        bad = b[8:2] != 0
                    elif bi == 1:
                        bad = b != 0
                    elif bi == 3:
                        bad = b[8:4] != 0
                rp = False
                if RP:
                    rp = ftype == REPLAY_LOAD or ftype == REPLAY_RUN
                    if bi == 2:
                        # w holds bytes 0..2 in its bits 8..31: the final word's bits [LS:0] are w[LS + 8:8]
                        esum.next = w[LS + 8:8] + flen[16:2]
                    if bi == 3 and rp:
                        # a replay frame's words: the load must fit the buffer (offset + flen / 4 <=
                        # REPLAY_WORDS + 1), a run has 1..REPLAY_WORDS words and at least one pass
                        if ftype == REPLAY_LOAD:
                            if first and (w[32:LS] != 0 or esum > REPLAY_WORDS + 1):
                                bad = True
                        elif w == 0:
                            bad = True
                        elif first and (w[32:RS] != 0 or w[RS:0] > REPLAY_WORDS):
                            bad = True
                if bad:
                    accept.next = 0
                    reason.next = 4
                if bi == 3:
                    first.next = 0
                    t = intbv(0)[2:]
                    if ftype == TABLE:
                        if first:
                            t[:] = 2
                        else:
                            t[:] = 3
                    elif RP and ftype == REPLAY_RUN:
                        t[:] = 3
                    elif RP and ftype == REPLAY_LOAD and first:
                        t[:] = 2
                    elif left == 1 and fflags[0]:
                        t[:] = 1
                    if RP:
                        # ring_wdata takes every word; ring_we alone says whether it is written (cmd_ring reads
                        # wdata only with we): ``bad`` reaches one flip-flop, not the entry's 35 (2026-12-04)
                        ring_we.next = accept and not bad
                        ring_wdata.next[RP_BIT] = rp
                        ring_wdata.next[34:32] = t
                        ring_wdata.next[32:0] = w
                    elif accept and not bad:
                        ring_we.next = 1
                        ring_wdata.next[34:32] = t
                        ring_wdata.next[32:0] = w
                if left == 1:
                    state.next = ST.R_CRC
                    idx.next = 0
            elif state == ST.R_CRC:
                r = intbv(0)[32:]
                r[:] = rcv >> 8
                r[32:24] = b
                rcv.next = r
                idx.next = idx + 1
                if idx == 3:
                    state.next = ST.R_FIN
                    fin_commit.next = 0
                    fin_ack.next = 0
                    if r != (c32 ^ 0xFFFFFFFF):
                        link_err.next = 1
                        if RP:
                            ring_rollback.next = 1
                        elif accept:
                            ring_rollback.next = 1
                        if not nacked:
                            nack_req.next = 1
                            nack_reason.next = 1
                            nacked.next = 1
                    elif accept:
                        if ftype == BARRIER:
                            ring_we.next = 1
                            ring_wdata.next = 0x200000010
                        fin_commit.next = 1
                        fin_ack.next = 1
                    elif dup:
                        fin_ack.next = 1
                    elif reason != 0:
                        link_err.next = 1
                        if RP:
                            ring_rollback.next = 1
                        if not nacked:
                            nack_req.next = 1
                            nack_reason.next = reason
                            nacked.next = 1
                    elif ftype == RESET:
                        soft_rst.next = 1
                        mode_words.next = word[0]
                        expect.next = fseq + 1
                        nacked.next = 0
                        sopen.next = 0
                        fin_ack.next = 1
                    elif ftype == IDENTIFY:
                        ident_req.next = 1
                    else:
                        fin_ack.next = 1
        elif state != ST.R_HUNT and gap_tick != tick_d:
            # inter-byte timeout: a second change of gap_tick without a byte drops the partial frame
            gap1.next = 1
            if gap1:
                state.next = ST.R_HUNT
                link_err.next = 1
                if RP:
                    ring_rollback.next = 1
                elif accept:
                    ring_rollback.next = 1

    return u_c8, u_c32, outs, fsm
