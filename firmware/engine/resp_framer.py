"""Response framer: turns ACK/NACK/IDENT requests, result descriptors, decoded words and counter snapshots (and,
with a replay buffer, REPLAY_DONE reports) into board -> host frames (docs/PROTOCOL.md), one byte per cycle on an
AXI-Stream-like byte stream."""
from myhdl import Signal, always, always_comb, block, enum, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.firmware.engine.crc32_byte import crc32_byte
from lutzip.firmware.engine.crc8_byte import crc8_byte
from lutzip.firmware.engine.perf_counters import WIRE_BITS
from lutzip.link.protocol import ACK, COUNTER_NAMES, COUNTERS, DATA, IDENT, IDENT_LANES_SHIFT, IDENT_MAX_N_BASE, \
    IDENT_MAX_N_MASK, IDENT_MAX_N_SHIFT, IDENT_MIRROR_BIT, IDENT_STATES_MASK, NACK, PROTOCOL_VERSION, REPLAY_DONE, \
    REPLAY_NAMES, REPLAY_PROTOCOL_VERSION, REPLAY_UNIT, RESULT, SYNC

ST = enum("F_IDLE", "F_HDR", "F_PAY", "F_CRC")


def ident_value(L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, CLK_HZ, BAUD):
    """The IDENT payload as one little-endian integer (see lutzip.link.protocol.IDENT_STRUCT)."""
    return (PROTOCOL_VERSION | L << 16 | W << 24 | LUT3_DEPTH << 32 | RING_DEPTH << 48 | MAX_PAYLOAD << 64
            | (CLK_HZ & 0xFFFFFFFF) << 96 | (BAUD & 0xFFFFFFFF) << 128)


def ident_flags(STATES=1, MIRROR=0, MAX_N=512, LANES=1):
    """The IDENT frame's header FLAGS byte (docs/PROTOCOL.md sections 3 and 6.1; see lutzip.link.protocol.ident_flags):
    ``STATES - 1`` in bits 1..0; with ``MIRROR=1`` bit 2 set and ``log2(MAX_N) - 5`` in bits 5..3 (a board's row
    buffer is reported as MAX_N 32 .. 4096); ``log2(LANES)`` of the replay unit in bits 7..6."""
    f = (STATES - 1) & IDENT_STATES_MASK
    if MIRROR:
        k = int(MAX_N).bit_length() - 1 - IDENT_MAX_N_BASE
        if MAX_N & (MAX_N - 1) or not 0 <= k <= IDENT_MAX_N_MASK:
            raise UnsupportedError(f"MAX_N={MAX_N!r}: a board's row buffer is a power of two 32 .. 4096 (IDENT FLAGS)")
        f |= IDENT_MIRROR_BIT | k << IDENT_MAX_N_SHIFT
    return f | ((int(LANES).bit_length() - 1) & 0x3) << IDENT_LANES_SHIFT


#: Payload length of a COUNTERS frame (every counter, ``WIRE_BITS`` each).
COUNTERS_LEN = len(COUNTER_NAMES) * WIRE_BITS // 8

#: Payload length of a REPLAY_DONE frame.
REPLAY_LEN = len(REPLAY_NAMES) * WIRE_BITS // 8


@block
def resp_framer(clk, rst, srst, m_axis_tdata, m_axis_tvalid, m_axis_tready,
                ack_req, nack_req, nack_reason, ident_req, barrier_req, next_seq, credit,
                s_axis_desc_tdata, s_axis_desc_tvalid, s_axis_desc_tready,
                s_axis_data_tdata, s_axis_data_tvalid, s_axis_data_tready,
                counters, idle, res_idle, replay_req=None, rcounters=None,
                L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=4096, MAX_PAYLOAD=1024, CLK_HZ=100_000_000, BAUD=0,
                FAST_CRC=False, LINK_CLK_HZ=0, REPLAY_WORDS=0, INIT_END=False, STATES=1, MIRROR=0, MAX_N=512,
                LANES=1):
    """Board -> host frames, one byte per cycle on ``m_axis_*``.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    srst : Signal
        Soft reset (RESET frame): aborts the frame being sent and restarts the frame numbering.
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        The byte stream to the host.
    ack_req, nack_req, nack_reason, ident_req, barrier_req : Signal
        Requests from the frame parser / table loader (one-cycle pulses, latched here).
    next_seq, credit : Signal
        Contents of ACK/NACK frames: next expected sequence number, free ring entries.
    s_axis_desc_tdata, s_axis_desc_tvalid, s_axis_desc_tready : Signal
        Result descriptors (see :func:`lutzip.firmware.engine.result_path.result_path`).
    s_axis_data_tdata, s_axis_data_tvalid, s_axis_data_tready : Signal
        Decoded words (words mode).
    counters : lutzip.firmware.engine.perf_counters.CounterPort
        Read port of the counter bank (COUNTERS frames, ``len(COUNTER_NAMES)`` counters).
    idle, res_idle : Signal
        Outputs: nothing to send at all; nothing left to send for the stripes decoded so far.
    L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, CLK_HZ, BAUD : int
        Reported in the IDENT frame (:func:`ident_value`).
    FAST_CRC : bool
        CRCs through table ROMs (see :func:`lutzip.firmware.engine.crc32_byte.crc32_byte`).
    replay_req : Signal, optional
        With ``REPLAY_WORDS``: a one-cycle pulse, a replay run ended; send a REPLAY_DONE frame (docs/PROTOCOL.md,
        section 6), through ``rcounters`` like a COUNTERS frame.
    rcounters : lutzip.firmware.engine.perf_counters.CounterPort, optional
        With ``REPLAY_WORDS``: the replay unit's read port (``len(REPLAY_NAMES)`` values); its ``idx`` is
        ``counters.idx``.
    REPLAY_WORDS : int
        Replay buffer words (0: none, protocol version 1). Above 0 the IDENT frame reports protocol version 2
        and the buffer size (units of ``REPLAY_UNIT`` words).
    INIT_END : bool
        The header CRC, the frame CRC, the byte index and the word half (``c8``, ``c32``, ``idx``, ``bsel``)
        are set to their start values when a frame ends (and in reset) instead of when the next one starts:
        nothing reads them between frames, so the bytes are the same cycle for cycle, and those 44 flip-flops
        leave the frame start's wide enable / reset net (``proto_engine``'s ``RESULT_REG``: the two-domain ULX3S
        build at 100 MHz). False converts to the netlist of before (the ``INIT_END`` branches are constants, as
        the ``RP`` ones).

    STATES : int
        The decoder core's code tables (1 or 2): the IDENT frame's header FLAGS byte carries ``STATES - 1`` in
        bits 1..0 (docs/PROTOCOL.md, section 3; 0 in every other frame). With 1 the ``S2`` branch is a constant
        false (the netlist of before).

    Every ``RP`` branch below is a Python constant: MyHDL writes it into the HDL (``1'b0`` / ``False`` in the
    build without replay) and synthesis removes it; the yosys netlists of every top are those of the two blocks
    this one replaced (docs/log/2026-12-house.md, 2026-12-03 evening).
    """
    # MIRROR, MAX_N (not in the docstring above, kept as it was): the decoder core's row stripes (docs/CORE.md
    # section 7); with MIRROR=1 the IDENT frame's FLAGS also carry bit 2 and log2(MAX_N) - 5 in bits 5..3
    # (ident_flags); MIRROR=0 builds the framer of before.
    RP = REPLAY_WORDS > 0
    if STATES not in (1, 2):
        raise ValueError(f"resp_framer: STATES must be 1 or 2, not {STATES!r}")
    IDENT_FLAGS = ident_flags(STATES, MIRROR, MAX_N, LANES)
    S2 = IDENT_FLAGS != 0      # the IDENT frame has FLAGS (STATES=2, MIRROR=1 or LANES > 1); else a constant-false branch
    IDENT_VAL = ident_value(L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, CLK_HZ, BAUD)
    if RP:
        assert rcounters.idx is counters.idx, "the replay read port shares the counter index"
        assert REPLAY_WORDS % REPLAY_UNIT == 0 and 0 < REPLAY_WORDS // REPLAY_UNIT < 1 << 16
        IDENT_VAL = IDENT_VAL & ~0xFFFF | REPLAY_PROTOCOL_VERSION | (REPLAY_WORDS // REPLAY_UNIT) << 80
    else:
        assert replay_req is None and rcounters is None, "replay_req / rcounters only with REPLAY_WORDS"
        # read only in the (dead) RP branches: the replay unit's ports stand for nothing here
        replay_req, rcounters = Signal(bool(0)), counters
    # LINK_CLK_HZ (two-domain tops, docs/PROTOCOL.md section 7): IDENT grows by a u32, the link clock
    IDENT_LEN = 24 if LINK_CLK_HZ else 20
    PSR_BITS = 8 * max(20, IDENT_LEN)
    IDENT_VAL = IDENT_VAL | (LINK_CLK_HZ & 0xFFFFFFFF) << 160
    WB = W // 8
    state = Signal(ST.F_IDLE)
    p_ack = Signal(bool(0))
    p_nack = Signal(bool(0))
    p_reason = Signal(intbv(0)[3:])
    p_ident = Signal(bool(0))
    p_cnt = Signal(bool(0))
    p_res = Signal(bool(0))      # a RESULT frame is due for the descriptor held in dsc
    p_rep = Signal(bool(0))      # a REPLAY_DONE frame is due (RP)
    dsc = Signal(intbv(0)[64:])
    is_data = Signal(bool(0))
    ftype = Signal(intbv(0)[8:])
    flen = Signal(intbv(0)[16:])
    left = Signal(intbv(0)[16:])
    txseq = Signal(modbv(0)[8:])
    stripe = Signal(modbv(0)[32:])
    idx = Signal(intbv(0)[3:])
    bsel = Signal(modbv(0)[1:])
    psr = Signal(intbv(0)[PSR_BITS:])
    csr = Signal(intbv(0)[WIRE_BITS:])      # the counter being sent (COUNTERS frames)
    cidx = counters.idx              # its index (drives the counter bank's read port)
    cpos = Signal(modbv(0)[3:])
    c8 = Signal(intbv(0)[8:])
    c32 = Signal(intbv(0xFFFFFFFF if INIT_END else 0)[32:])
    adv = Signal(bool(0))

    @always_comb
    def c_adv():
        adv.next = m_axis_tready or not m_axis_tvalid

    @always_comb
    def c_flags():
        idle.next = (state == ST.F_IDLE and not p_ack and not p_nack and not p_ident and not p_cnt
                     and not p_res and not (RP and p_rep) and not s_axis_desc_tvalid and not m_axis_tvalid)
        res_idle.next = not s_axis_desc_tvalid and not p_res and not (RP and p_rep) and \
            not ((state != ST.F_IDLE) and (ftype == RESULT or ftype == DATA or (RP and ftype == REPLAY_DONE)))

    @always_comb
    def c_pop():
        s_axis_desc_tready.next = adv and state == ST.F_IDLE and not p_ack and not p_nack and not p_ident \
            and not p_cnt and not p_res and not (RP and p_rep) and not srst
        s_axis_data_tready.next = adv and state == ST.F_PAY and is_data and (WB == 1 or bsel == 1) and not srst

    bb = Signal(intbv(0)[8:])
    bv = Signal(bool(0))
    c8n = Signal(intbv(0)[8:])
    c32n = Signal(intbv(0)[32:])
    u_c8 = crc8_byte(c8, bb, c8n, ROM=FAST_CRC)
    u_c32 = crc32_byte(c32, bb, c32n, ROM=FAST_CRC)

    @always_comb
    def c_byte():
        """The byte the framer sends next (``bv``: there is one)."""
        f = intbv(0)[32:]
        f[:] = c32 ^ 0xFFFFFFFF
        bv.next = 0
        bb.next = 0
        if state == ST.F_HDR:
            bv.next = 1
            if idx == 0:
                bb.next = SYNC
            elif idx == 1:
                bb.next = ftype
            elif idx == 2:
                bb.next = txseq
            elif idx == 3:
                if S2 and ftype == IDENT:
                    bb.next = IDENT_FLAGS
                else:
                    bb.next = 0
            elif idx == 4:
                bb.next = flen[8:0]
            elif idx == 5:
                bb.next = flen[16:8]
            else:
                bb.next = c8
        elif state == ST.F_PAY:
            if is_data:
                bv.next = s_axis_data_tvalid
                if bsel == 0:
                    bb.next = s_axis_data_tdata[8:0]
                else:
                    bb.next = s_axis_data_tdata[W:W - 8]
            elif ftype == COUNTERS or (RP and ftype == REPLAY_DONE):
                bv.next = 1
                bb.next = csr[8:0]
            else:
                bv.next = 1
                bb.next = psr[8:0]
        elif state == ST.F_CRC:
            bv.next = 1
            if idx == 0:
                bb.next = f[8:0]
            elif idx == 1:
                bb.next = f[16:8]
            elif idx == 2:
                bb.next = f[24:16]
            else:
                bb.next = f[32:24]

    @always(clk.posedge)
    def fsm():
        if rst or srst:
            state.next = ST.F_IDLE
            p_ident.next = 0
            p_cnt.next = 0
            p_res.next = 0
            p_rep.next = 0
            p_ack.next = 0
            p_nack.next = 0
            txseq.next = 0
            stripe.next = 0
            m_axis_tvalid.next = 0
            is_data.next = 0
            ftype.next = 0
            if INIT_END:
                idx.next = 0
                bsel.next = 0
                c8.next = 0
                c32.next = 0xFFFFFFFF
        else:
            # latch requests
            if nack_req:
                p_nack.next = 1
                p_reason.next = nack_reason
            if ack_req:
                p_ack.next = 1
            if ident_req:
                p_ident.next = 1
            if barrier_req:
                p_cnt.next = 1
            if RP:
                if replay_req:
                    p_rep.next = 1
            if adv:
                m_axis_tvalid.next = bv
                m_axis_tdata.next = bb
                if state == ST.F_IDLE:
                    if p_nack or p_ack or p_ident or p_cnt or p_res or (RP and p_rep) or s_axis_desc_tvalid:
                        v = intbv(0)[PSR_BITS:]
                        dt = False
                        n = intbv(0)[16:]
                        t = intbv(0)[8:]
                        if p_nack or p_ack:
                            t[:] = ACK
                            if p_nack:
                                t[:] = NACK
                                v[16:8] = p_reason
                            v[8:0] = next_seq
                            v[32:16] = credit
                            n[:] = 4
                            p_ack.next = ack_req
                            p_nack.next = nack_req
                        elif p_ident:
                            t[:] = IDENT
                            v[:] = IDENT_VAL
                            n[:] = IDENT_LEN
                            p_ident.next = ident_req
                        elif p_cnt:
                            t[:] = COUNTERS
                            csr.next = counters.first
                            cidx.next = 0
                            cpos.next = 0
                            n[:] = COUNTERS_LEN
                            p_cnt.next = barrier_req
                        elif RP and p_rep:
                            t[:] = REPLAY_DONE
                            csr.next = rcounters.first
                            cidx.next = 0
                            cpos.next = 0
                            n[:] = REPLAY_LEN
                            p_rep.next = replay_req
                        elif p_res:
                            t[:] = RESULT
                            v[32:0] = stripe
                            v[49:32] = dsc[31:14]
                            v[68:64] = dsc[14:10]
                            v[128:96] = dsc[64:32]
                            n[:] = 16
                            p_res.next = 0
                            stripe.next = stripe + 1
                        else:
                            dsc.next = s_axis_desc_tdata
                            if s_axis_desc_tdata[9:0] != 0:
                                t[:] = DATA
                                dt = True
                                n[:] = s_axis_desc_tdata[9:0] * WB
                                p_res.next = s_axis_desc_tdata[9]
                            else:
                                t[:] = RESULT
                                v[32:0] = stripe
                                v[49:32] = s_axis_desc_tdata[31:14]
                                v[68:64] = s_axis_desc_tdata[14:10]
                                v[128:96] = s_axis_desc_tdata[64:32]
                                n[:] = 16
                                stripe.next = stripe + 1
                        state.next = ST.F_HDR
                        ftype.next = t
                        flen.next = n
                        left.next = n
                        psr.next = v
                        is_data.next = dt
                        if not INIT_END:
                            idx.next = 0
                            bsel.next = 0
                            c8.next = 0
                            c32.next = 0xFFFFFFFF
                elif state == ST.F_HDR:
                    idx.next = idx + 1
                    if idx >= 1 and idx <= 5:
                        c8.next = c8n
                    if idx >= 1:
                        c32.next = c32n
                    if idx == 6:
                        txseq.next = txseq + 1
                        if flen == 0:
                            state.next = ST.F_CRC
                            idx.next = 0
                        else:
                            state.next = ST.F_PAY
                elif state == ST.F_PAY:
                    if bv:
                        if ftype == COUNTERS or (RP and ftype == REPLAY_DONE):
                            cpos.next = cpos + 1
                            if cpos == 7:
                                if not RP or ftype == COUNTERS:
                                    csr.next = counters.nxt
                                else:
                                    csr.next = rcounters.nxt
                                cidx.next = cidx + 1
                            else:
                                csr.next = csr >> 8
                        elif not is_data:
                            psr.next = psr >> 8
                        if WB == 2:
                            bsel.next = bsel + 1
                        c32.next = c32n
                        left.next = left - 1
                        if left == 1:
                            state.next = ST.F_CRC
                            idx.next = 0
                else:
                    idx.next = idx + 1
                    if idx == 3:
                        state.next = ST.F_IDLE
                        if INIT_END:
                            idx.next = 0
                            bsel.next = 0
                            c8.next = 0
                            c32.next = 0xFFFFFFFF

    return u_c8, u_c32, c_byte, c_adv, c_flags, c_pop, fsm
