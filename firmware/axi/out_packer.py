"""Output packer of ``lutzip_axi`` (docs/AXI.md): W-bit words -> little-endian DMA beats, ``tkeep``, one ``tlast``.

Interface
---------
clk, rst                        clock, synchronous active-high reset (hard or soft)
w_valid, w_ready, w_data, w_end words from :mod:`stripe_out`; ``w_end`` marks a stripe's last word
res_valid, res_last             the stripe of the last ``w_end`` word is complete (same cycle or later);
                                ``res_last``: it was the transfer's last stripe
m_tdata, m_tkeep, m_tvalid, m_tready, m_tlast   the S2MM stream (all from flip-flops)

Words fill the accumulator from the lowest bits up; a full beat (``8 * OUT_BYTES / W`` words) moves to the
output register. After a stripe's last word the packer waits (``w_ready`` low) until it knows whether the
stripe ended the transfer: then the partial beat is flushed with ``tlast`` and ``tkeep`` marking its
bytes, or filling goes on with the next stripe. While the output register is free or drained this cycle, a
word is taken every cycle (no bubbles at the core's rate).
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def out_packer(clk, rst, w_valid, w_ready, w_data, w_end, res_valid, res_last,
               m_tdata, m_tkeep, m_tvalid, m_tready, m_tlast, W=16, OUT_BYTES=4):
    if W not in (8, 16) or OUT_BYTES not in (4, 8):
        raise ValueError(f"out_packer: W must be 8 or 16 and OUT_BYTES 4 or 8 (got W={W}, OUT_BYTES={OUT_BYTES})")
    K = 8 * OUT_BYTES // W          # words per beat
    BPW = W // 8                    # bytes per word
    DB = 8 * OUT_BYTES
    cbits = K.bit_length()
    acc = Signal(intbv(0)[DB:])
    ac = Signal(intbv(0)[cbits:])   # words in acc
    hold = Signal(bool(0))          # acc ends with a stripe's last word, transfer end unknown
    pend = Signal(bool(0))          # acc is ready to move to the output register
    pend_last = Signal(bool(0))
    ob = Signal(intbv(0)[DB:])
    okeep = Signal(intbv(0)[OUT_BYTES:])
    ovalid = Signal(bool(0))
    olast = Signal(bool(0))
    move = Signal(bool(0))
    rdy = Signal(bool(0))
    base_acc = Signal(intbv(0)[DB:])
    base_ac = Signal(intbv(0)[cbits:])
    ins = Signal(intbv(0)[DB:])     # the word at its place in the beat
    keep_tab = tuple(int((1 << (BPW * j)) - 1) if j < K else int((1 << OUT_BYTES) - 1) for j in range(K + 1))

    @always_comb
    def pk_move():
        move.next = pend and (not ovalid or m_tready)
        rdy.next = not hold and (not pend or not ovalid or m_tready)

    @always_comb
    def pk_base():
        if move:
            base_acc.next = 0
            base_ac.next = 0
        else:
            base_acc.next = acc
            base_ac.next = ac

    @always_comb
    def pk_ins():
        v = intbv(0)[DB:]
        v[:] = w_data
        ins.next = 0
        for j in range(K):  # no multiply by W in the shift: VHDL's unsigned * natural keeps the operand width
            if base_ac == j:
                ins.next = v << (j * W)

    @always_comb
    def pk_outs():
        w_ready.next = rdy
        m_tdata.next = ob
        m_tkeep.next = okeep
        m_tvalid.next = ovalid
        m_tlast.next = olast

    @always(clk.posedge)
    def pk_seq():
        if rst:
            acc.next = 0
            ac.next = 0
            hold.next = 0
            pend.next = 0
            pend_last.next = 0
            ovalid.next = 0
            olast.next = 0
            okeep.next = 0
        else:
            if move:
                ob.next = acc
                okeep.next = keep_tab[int(ac)]
                olast.next = pend_last
                ovalid.next = 1
            elif ovalid and m_tready:
                ovalid.next = 0
            if w_valid and rdy:
                acc.next = base_acc | ins
                ac.next = base_ac + 1
                if w_end:
                    if res_valid:
                        hold.next = 0
                        pend.next = res_last or base_ac + 1 == K
                        pend_last.next = res_last
                    else:
                        hold.next = 1
                        pend.next = 0
                        pend_last.next = 0
                else:
                    pend.next = base_ac + 1 == K
                    pend_last.next = 0
            elif hold and res_valid:
                hold.next = 0
                pend.next = res_last or ac == K
                pend_last.next = res_last
            else:
                if move:
                    acc.next = 0
                    ac.next = 0
                    pend.next = 0
                    pend_last.next = 0

    return pk_move, pk_base, pk_ins, pk_outs, pk_seq
