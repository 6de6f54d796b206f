"""Response framer: turns ACK/NACK/IDENT requests, result descriptors, decoded words and counter snapshots into
board -> host frames (docs/PROTOCOL.md), one byte per cycle on an AXI-like byte stream."""
from myhdl import Signal, always, always_comb, block, enum, intbv, modbv

from lutzip.firmware.engine.crc32_byte import crc32_byte
from lutzip.firmware.engine.crc8_byte import crc8_byte
from lutzip.link.protocol import ACK, COUNTERS, DATA, IDENT, NACK, PROTOCOL_VERSION, RESULT, SYNC

ST = enum("F_IDLE", "F_HDR", "F_PAY", "F_CRC")


def ident_value(L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, CLK_HZ, BAUD):
    """The IDENT payload as one little-endian integer (see lutzip.link.protocol.IDENT_STRUCT)."""
    return (PROTOCOL_VERSION | L << 16 | W << 24 | LUT3_DEPTH << 32 | RING_DEPTH << 48 | MAX_PAYLOAD << 64
            | (CLK_HZ & 0xFFFFFFFF) << 96 | (BAUD & 0xFFFFFFFF) << 128)


@block
def resp_framer(clk, rst, srst, out_tdata, out_tvalid, out_tready,
                ack_req, nack_req, nack_reason, ident_req, barrier_req, next_seq, credit,
                qdata, qvalid, qready, ddata, dvalid, dready,
                cnt0, cnt1, cnt2, cnt3, cnt4, cnt5, cnt6, cnt7, cnt8, cnt9,
                idle, res_idle,
                L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=4096, MAX_PAYLOAD=1024, CLK_HZ=100_000_000, BAUD=0,
                FAST_CRC=False):
    """``srst`` aborts the frame being sent and restarts the frame numbering."""
    IDENT_VAL = ident_value(L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, CLK_HZ, BAUD)
    WB = W // 8
    state = Signal(ST.F_IDLE)
    p_ack = Signal(bool(0))
    p_nack = Signal(bool(0))
    p_reason = Signal(intbv(0)[3:])
    p_ident = Signal(bool(0))
    p_cnt = Signal(bool(0))
    p_res = Signal(bool(0))      # a RESULT frame is due for the descriptor held in dsc
    dsc = Signal(intbv(0)[64:])
    is_data = Signal(bool(0))
    ftype = Signal(intbv(0)[8:])
    flen = Signal(intbv(0)[16:])
    left = Signal(intbv(0)[16:])
    txseq = Signal(modbv(0)[8:])
    stripe = Signal(modbv(0)[32:])
    idx = Signal(intbv(0)[3:])
    bsel = Signal(modbv(0)[1:])
    psr = Signal(intbv(0)[160:])
    csr = Signal(intbv(0)[64:])      # the counter being sent (COUNTERS frames)
    cidx = Signal(intbv(0)[4:])
    cpos = Signal(modbv(0)[3:])
    nxc = Signal(intbv(0)[64:])
    c8 = Signal(intbv(0)[8:])
    c32 = Signal(intbv(0)[32:])
    adv = Signal(bool(0))

    @always_comb
    def c_adv():
        adv.next = out_tready or not out_tvalid

    @always_comb
    def c_flags():
        idle.next = (state == ST.F_IDLE and not p_ack and not p_nack and not p_ident and not p_cnt
                     and not p_res and not qvalid and not out_tvalid)
        res_idle.next = not qvalid and not p_res and not ((state != ST.F_IDLE) and (ftype == RESULT or ftype == DATA))

    @always_comb
    def c_pop():
        qready.next = adv and state == ST.F_IDLE and not p_ack and not p_nack and not p_ident and not p_cnt \
            and not p_res and not srst
        dready.next = adv and state == ST.F_PAY and is_data and (WB == 1 or bsel == 1) and not srst

    bb = Signal(intbv(0)[8:])
    bv = Signal(bool(0))
    c8n = Signal(intbv(0)[8:])
    c32n = Signal(intbv(0)[32:])
    u_c8 = crc8_byte(c8, bb, c8n, ROM=FAST_CRC)
    u_c32 = crc32_byte(c32, bb, c32n, ROM=FAST_CRC)

    @always_comb
    def c_nxc():
        """The next counter to send (COUNTERS frames, one counter after the other)."""
        if cidx == 0:
            nxc.next = cnt1
        elif cidx == 1:
            nxc.next = cnt2
        elif cidx == 2:
            nxc.next = cnt3
        elif cidx == 3:
            nxc.next = cnt4
        elif cidx == 4:
            nxc.next = cnt5
        elif cidx == 5:
            nxc.next = cnt6
        elif cidx == 6:
            nxc.next = cnt7
        elif cidx == 7:
            nxc.next = cnt8
        else:
            nxc.next = cnt9

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
                bb.next = 0
            elif idx == 4:
                bb.next = flen[8:0]
            elif idx == 5:
                bb.next = flen[16:8]
            else:
                bb.next = c8
        elif state == ST.F_PAY:
            if is_data:
                bv.next = dvalid
                if bsel == 0:
                    bb.next = ddata[8:0]
                else:
                    bb.next = ddata[W:W - 8]
            elif ftype == COUNTERS:
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
            p_ack.next = 0
            p_nack.next = 0
            txseq.next = 0
            stripe.next = 0
            out_tvalid.next = 0
            is_data.next = 0
            ftype.next = 0
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
            if adv:
                out_tvalid.next = bv
                out_tdata.next = bb
                if state == ST.F_IDLE:
                    if p_nack or p_ack or p_ident or p_cnt or p_res or qvalid:
                        v = intbv(0)[160:]
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
                            n[:] = 20
                            p_ident.next = ident_req
                        elif p_cnt:
                            t[:] = COUNTERS
                            csr.next = cnt0
                            cidx.next = 0
                            cpos.next = 0
                            n[:] = 80
                            p_cnt.next = barrier_req
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
                            dsc.next = qdata
                            if qdata[9:0] != 0:
                                t[:] = DATA
                                dt = True
                                n[:] = qdata[9:0] * WB
                                p_res.next = qdata[9]
                            else:
                                t[:] = RESULT
                                v[32:0] = stripe
                                v[49:32] = qdata[31:14]
                                v[68:64] = qdata[14:10]
                                v[128:96] = qdata[64:32]
                                n[:] = 16
                                stripe.next = stripe + 1
                        state.next = ST.F_HDR
                        ftype.next = t
                        flen.next = n
                        left.next = n
                        psr.next = v
                        is_data.next = dt
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
                        if ftype == COUNTERS:
                            cpos.next = cpos + 1
                            if cpos == 7:
                                csr.next = nxc
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

    return u_c8, u_c32, c_nxc, c_byte, c_adv, c_flags, c_pop, fsm
