"""Output packer of ``lutzip_axi`` with ``LANES > 1`` (docs/AXI.md): groups of up to ``G`` W-bit words per cycle
-> little-endian DMA beats, ``tkeep``, one ``tlast`` per transfer.

Interface
---------
clk, rst                        clock, synchronous active-high reset (hard or soft)
w_valid, w_ready, w_data, w_count, w_end   groups from :mod:`stripe_out_n`: ``w_count`` (1 .. G) words, word 0
                                in the low bits, zeros above them; ``w_end``: the group ends a stripe
res_valid, res_last             as :mod:`out_packer`
m_tdata, m_tkeep, m_tvalid, m_tready, m_tlast   the S2MM stream (all from flip-flops)
W, OUT_BYTES, G                 word width, beat bytes, words per group (G <= 8 * OUT_BYTES / W)

The accumulator holds up to ``2K - 1`` words (K words per beat): a group is appended at the accumulator's word
count, a beat of its lowest K words moves to the output register whenever it is full, so one beat per cycle
leaves while groups come in. After a stripe's last word the packer takes no group until it knows whether the
stripe ended the transfer, and the beat holding that word stays until then: on the transfer's end the words
left go out, the last beat with ``tlast`` and ``tkeep`` marking its bytes.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def out_packer_n(clk, rst, w_valid, w_ready, w_data, w_count, w_end, res_valid, res_last,
                 m_tdata, m_tkeep, m_tvalid, m_tready, m_tlast, W=16, OUT_BYTES=4, G=2):
    if W not in (8, 16) or OUT_BYTES not in (4, 8):
        raise ValueError(f"out_packer_n: W must be 8 or 16 and OUT_BYTES 4 or 8 (got W={W}, OUT_BYTES={OUT_BYTES})")
    K = 8 * OUT_BYTES // W          # words per beat
    if not 1 <= G <= K:
        raise ValueError(f"out_packer_n: G = {G} words per group, 1 .. {K} (words per beat)")
    BPW = W // 8
    DB = 8 * OUT_BYTES
    AW = 2 * DB                     # accumulator bits (2K words)
    acc = Signal(intbv(0)[AW:])
    ac = Signal(intbv(0, min=0, max=2 * K))   # words in acc
    hold = Signal(bool(0))          # acc ends with a stripe's last word, transfer end unknown
    fl = Signal(bool(0))            # the transfer ended: flush every word left
    ob = Signal(intbv(0)[DB:])
    okeep = Signal(intbv(0)[OUT_BYTES:])
    ovalid = Signal(bool(0))
    olast = Signal(bool(0))
    move = Signal(bool(0))
    rdy = Signal(bool(0))
    base_acc = Signal(intbv(0)[AW:])
    base_ac = Signal(intbv(0, min=0, max=2 * K))
    kmin = Signal(intbv(0, min=0, max=K + 1))
    ins = Signal(intbv(0)[AW:])     # the group at its place in the accumulator
    keep_tab = tuple(int((1 << (BPW * j)) - 1) if j < K else int((1 << OUT_BYTES) - 1) for j in range(K + 1))

    @always_comb
    def pn_move():
        move.next = (ac > K or (ac == K and not hold) or (fl and ac != 0)) and (not ovalid or m_tready)
        if ac < K:
            kmin.next = ac
        else:
            kmin.next = K

    @always_comb
    def pn_base():
        if move:
            base_acc.next = acc >> DB
            if ac > K:
                base_ac.next = ac - K
            else:
                base_ac.next = 0
        else:
            base_acc.next = acc
            base_ac.next = ac

    @always_comb
    def pn_rdy():
        rdy.next = not hold and not fl and base_ac < K

    @always_comb
    def pn_ins():
        v = intbv(0)[AW:]
        v[:] = w_data
        ins.next = 0
        for j in range(K):  # constant shifts only (VHDL)
            if base_ac == j:
                ins.next = v << (j * W)

    @always_comb
    def pn_outs():
        w_ready.next = rdy
        m_tdata.next = ob
        m_tkeep.next = okeep
        m_tvalid.next = ovalid
        m_tlast.next = olast

    @always(clk.posedge)
    def pn_seq():
        if rst:
            acc.next = 0
            ac.next = 0
            hold.next = 0
            fl.next = 0
            ovalid.next = 0
            olast.next = 0
            okeep.next = 0
        else:
            if move:
                ob.next = acc[DB:0]
                okeep.next = keep_tab[int(kmin)]
                olast.next = fl and ac <= K
                ovalid.next = 1
                if fl and ac <= K:
                    fl.next = 0
            elif ovalid and m_tready:
                ovalid.next = 0
            if w_valid and rdy:
                acc.next = base_acc | ins
                ac.next = base_ac + w_count
                if w_end:
                    if res_valid:
                        fl.next = res_last
                    else:
                        hold.next = 1
            else:
                acc.next = base_acc
                ac.next = base_ac
                if hold and res_valid:
                    hold.next = 0
                    fl.next = res_last

    return pn_move, pn_base, pn_rdy, pn_ins, pn_outs, pn_seq
