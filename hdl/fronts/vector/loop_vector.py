"""Stage F of the vector front (its loop stage; assembled by :mod:`lutzip.hdl.fronts.vector.front_vector`): the bit
pointer loop over precomputed next positions, and the header parser.

The ring (:mod:`lutzip.hdl.fronts.vector.entry_ring`) holds the input words in stream order, each with ``nx[j]``, the
start of the next symbol for a symbol starting at bit ``j`` (:mod:`lutzip.hdl.fronts.vector.pos_stage`). The front holds
the word being decoded (``cur``) and the word after it (``nxt``) in registers and runs one symbol ahead:
``ptr`` is the current symbol's start in ``cur`` and ``p2`` the next symbol's start relative to ``cur``
(0..63). A decode step is::

    ptr <= p2 mod 32
    p2  <= nx[p2 mod 32] of (nxt if p2 >= 32 else cur)    (a 2:1 and six 32:1 multiplexers)
    cur <= nxt, nxt <= next ring entry                     if p2 >= 32 (and cur is not its packet's last)

The values of ``nx`` are relative to the word they belong to, and after such a step that word is ``cur``:
no adder. Whether the step moves to the next word is bit 5 of the *registered* ``p2``, so the wide loads
of ``cur`` and ``nxt`` hang off a flip-flop, not off the select: the one-cycle loop is just
``p2 -> 64:1 select -> p2``. The token carries the word, the word after it and ``ptr``; the next stage
(:mod:`lutzip.hdl.fronts.vector.align_stage`) extracts the 32 bits at the pointer and reads the full LUT1 entry.

Stripes: as the window front (:mod:`lutzip.hdl.fronts.window.loop_window_ctrl`), the front counts symbols (each stands for at least one word).
Good headers with payload have no entry of their own: their ``n`` rides on the stripe's first payload
entry (``first``); a bad header or a header-only packet is an entry with ``hdr`` set. After ``n`` symbols
the front starts the next stripe in the same cycle by loading its first entry into ``cur``: ``nxt`` when
``cur`` is the stripe's last word (``chain_a``), ``ring[rp]`` when ``nxt`` is (``chain_b``; ``nxt`` is
refilled a cycle later, before the first symbol can need it); otherwise it drains to tlast. With zero runs it decodes past the stripe end until the count stage's ``flush`` or
the packet's bits run out.
``exh`` marks that the bits of the packet's last word are used up (or a header-only packet): every
further symbol is an overrun. The overrun token ends the stripe for the front: it goes to the header state
and starts the next packet (``nxt``, the entry after the packet's last word) without waiting for the flush
(the count stage drops that token past the stripe's end or reports the overrun; the flush, with the old tag,
is ignored): a zero-run stripe, whose ``n`` symbols are never all there, costs no cycles for the flush to come
back. An invalid prefix is only
known in the next stage: the front goes on until the flush arrives (a few cycles), an overrun or the stripe's ``n``
symbols are issued.

Interface
---------
clk, rst                 clock, synchronous reset
rp[PB], pop[2]           (out) ring read pointer (registered) and entries taken this cycle (0 or 1)
push                     an entry is written into the ring at this clock (counted in the registered fill level)
push_flags[3]            that entry's flags: [0] starts a stripe (``first``, or ``hdr`` and ``mk``), [1] last,
                         [2] n = 0
r0_*                     the ring entry at rp (:mod:`lutzip.hdl.fronts.vector.entry_ring`): the word after ``nxt``, with
                         ``meta`` = n[19:4] | first[3] | hdr[2] | mk[1] | last[0]
r1_flags[3]              the same flags of the entry at rp + 1 (the front keeps those of ring[rp] in ``r0f``)
credit_ok                registered: room downstream for one more token
flush, flush_tag         one-cycle pulse from the count stage: the stripe with this tag is finished
t_valid, t_hdr, t_ovr, t_w[32], t_wn[32], t_ptr[5], t_first, t_n[16], t_tag
                         (out, registered) token: bad header (t_hdr, t_w = the word) or symbol at bit
                         ``t_ptr`` of ``t_w:t_wn``; t_ovr: the symbol needs bits past the packet (overrun
                         unless its prefix is invalid); t_first on a stripe's first symbol with t_n = n - 1
idle                     (out) waiting for a header
r0_vs, t_st, STATES      two code tables (``STATES=2``, docs/FORMAT.md section 2.1): the vectors hold ``nx`` for
                         both states (bits 31..0: A, 63..32: B) and ``r0_vs`` the next state after a symbol at
                         each bit (same halves). The loop carries ``s2``, the state of the symbol at ``p2``,
                         beside ``p2``: each vector has a 64:1 select per half and the flip-flop ``s2`` picks one
                         (a 2:1 after the selects, before the loop's last multiplexer); a seventh pair of
                         selects gives the next ``s2``; a stripe starts in state A
                         (``nx`` and next state at bit 0 of the A half). ``t_st`` (out) is the token's state.

Enables: the word registers' loads (``cur_ld``, ``nxt_ld``, the ring pop ``inc``) and the step conditions
(``adv``, ``chain_a``, ``chain_b``, ``hstart``, ``hbad``) are products of ``credit_ok``, ``p2[5]`` and a dozen
flip-flops (state, ``m_*``, ``nx_ok``, the flags of ``nxt`` and ``ring[rp]``, the fill level). The products of
those flip-flops are flip-flops themselves (``e_*``), set a cycle early from the values the flip-flops take at
that clock, so each enable is one LUT (``cur_ld``: 4 inputs, ``nxt_ld``: 5) before its fan-out to ~270
flip-flops; ``credit_ok`` and ``p2[5]`` stay outside (they are the late ones).
"""
from myhdl import Signal, always_comb, always_seq, block, concat, enum, intbv, modbv

from lutzip.hdl.fronts.vector.select64 import select64

# the constants the six copies of p2 are stored XOR (one per next-position bit's select tree)
P2_COPY_XOR = (0x3f, 0x15, 0x2a, 0x33, 0x0c, 0x1e)


@block
def loop_vector(clk, rst, rp, pop, push, push_flags,
                r0_w, r0_wn, r0_meta, r0_v0, r0_v1, r0_v2, r0_v3, r0_v4, r0_v5, r1_flags,
                credit_ok, flush, flush_tag,
                t_valid, t_hdr, t_ovr, t_w, t_wn, t_ptr, t_first, t_n, t_tag, idle, r0_vs=None, t_st=None,
                STATES=1):
    st = enum("F_HDR", "F_RUN", "F_DRAIN", encoding="one_hot")
    state = Signal(st.F_HDR)
    pb = len(rp)
    depth = 1 << (pb - 1)
    mb = len(r0_meta)
    # the current word and the next one
    cur_w, cur_wn, nxt_w, nxt_wn = [Signal(intbv(0)[32:]) for _ in range(4)]
    cur_meta, nxt_meta = [Signal(intbv(0)[mb:]) for _ in range(2)]
    vw = len(r0_v0)                      # 32, or 64 with two code tables (A half, B half)
    cur_v0, cur_v1, cur_v2, cur_v3, cur_v4, cur_v5 = [Signal(intbv(0)[vw:]) for _ in range(6)]
    nxt_v0, nxt_v1, nxt_v2, nxt_v3, nxt_v4, nxt_v5 = [Signal(intbv(0)[vw:]) for _ in range(6)]
    nx_ok = Signal(bool(0))
    nxt_start_r = Signal(bool(0))        # nxt_start, registered when nxt is loaded
    nxt_z_r = Signal(bool(0))            # nxt's n = 0, the same way
    cur_last, nxt_last, nxt_mk, nxt_hdr, r0_hdr = [Signal(bool(0)) for _ in range(5)]
    r0f = Signal(intbv(0)[3:])           # flags of ring[rp] (start, last, n = 0) in flip-flops, not read through the RAM
    nxt_n, r0_n = [Signal(intbv(0)[16:]) for _ in range(2)]
    ptr = Signal(intbv(0)[5:])
    p2 = Signal(intbv(0)[6:])
    p2_n = Signal(intbv(0)[6:])
    p2_d = Signal(intbv(0)[6:])          # next value of p2
    p2_alt = Signal(intbv(0)[6:])
    p2_use = Signal(bool(0))
    # copies of p2 for the six vector multiplexers, each stored XOR a constant so that synthesis does not
    # merge them with p2 (yosys still merges equal bits: per bit one true and one inverted copy remain, which
    # halves the fan-out of the loop's select lines)
    q0, q1, q2, q3, q4, q5 = [Signal(intbv(0)[6:]) for _ in range(6)]
    X0, X1, X2, X3, X4, X5 = P2_COPY_XOR
    b0, b1, b2, b3, b4, b5 = [Signal(bool(0)) for _ in range(6)]
    nxt_at0 = Signal(intbv(0)[6:])       # nx[0] of nxt / of ring[rp]: p2 of a stripe's first symbol
    r0_at0 = Signal(intbv(0)[6:])
    exh = Signal(bool(0))
    scount = Signal(intbv(0)[16:])
    zc = Signal(bool(0))
    pend = Signal(bool(0))
    pend_n = Signal(intbv(0)[16:])
    tag = Signal(modbv(0)[len(t_tag):])
    tag1 = Signal(modbv(0)[len(t_tag):])
    th = Signal(intbv(0)[depth:])        # ring fill level as a thermometer code: th[k] = level > k
    th_r = Signal(intbv(0)[depth:])
    th_n = Signal(modbv(0)[depth:])
    ovr = Signal(bool(0))
    go = Signal(bool(0))
    adv = Signal(bool(0))                # this step moves to the next word
    chain_a, chain_b, start_h = [Signal(bool(0)) for _ in range(3)]
    cur_ld = Signal(bool(0))             # cur is loaded this cycle
    nxt_ld = Signal(bool(0))             # nxt is loaded this cycle
    fl = Signal(bool(0))
    fl_raw = Signal(bool(0))
    inc = Signal(intbv(0)[2:])
    state_n = Signal(st.F_HDR)
    zc_n, cur_last_n, hstart, hbad, step, chain = [Signal(bool(0)) for _ in range(6)]
    m_cb = Signal(bool(0))               # registered: RUN and zc and not cur_last (chain_b's case: cur from ring[rp])
    rp1 = Signal(modbv(0)[pb:])

    @always_comb
    def vf_fields():
        # entry flags (:mod:`lutzip.hdl.fronts.vector.pos_stage`): n | first | hdr | mk | last
        cur_last.next = cur_meta[0]
        nxt_last.next = nxt_meta[0]
        nxt_mk.next = nxt_meta[1]
        nxt_hdr.next = nxt_meta[2]
        nxt_n.next = nxt_meta[mb:4]
        r0_hdr.next = r0_meta[2]
        r0_n.next = r0_meta[mb:4]
        nxt_at0.next = concat(nxt_v5[0], nxt_v4[0], nxt_v3[0], nxt_v2[0], nxt_v1[0], nxt_v0[0])
        r0_at0.next = concat(r0_v5[0], r0_v4[0], r0_v3[0], r0_v2[0], r0_v1[0], r0_v0[0])

    two = STATES == 2
    if two:
        # two code tables: the loop's state s2 (of the symbol at p2) picks the half of each vector
        s2, s2_n, s2_d, s2_alt, s1, bs = [Signal(bool(0)) for _ in range(6)]
        cur_vs, nxt_vs = [Signal(intbv(0)[vw:]) for _ in range(2)]
        # one select tree per vector half (A: bits 31..0, B: 63..32), the half picked after the select by the
        # flip-flop s2: the 2:1 meets the loop's last multiplexer (p2_d), not the data of the 64:1
        ba0, ba1, ba2, ba3, ba4, ba5, bas = [Signal(bool(0)) for _ in range(7)]
        bb0, bb1, bb2, bb3, bb4, bb5, bbs = [Signal(bool(0)) for _ in range(7)]
        # the halves as signals of their own (wires; the ECP5 select mapping finds each select's inputs by name)
        ca0, ca1, ca2, ca3, ca4, ca5, cas, na0, na1, na2, na3, na4, na5, nas = [Signal(intbv(0)[32:]) for _ in range(14)]
        cb0, cb1, cb2, cb3, cb4, cb5, cbs, nb0, nb1, nb2, nb3, nb4, nb5, nbs = [Signal(intbv(0)[32:]) for _ in range(14)]

        @always_comb
        def vf_halves():
            ca0.next = cur_v0[32:0]
            ca1.next = cur_v1[32:0]
            ca2.next = cur_v2[32:0]
            ca3.next = cur_v3[32:0]
            ca4.next = cur_v4[32:0]
            ca5.next = cur_v5[32:0]
            cas.next = cur_vs[32:0]
            na0.next = nxt_v0[32:0]
            na1.next = nxt_v1[32:0]
            na2.next = nxt_v2[32:0]
            na3.next = nxt_v3[32:0]
            na4.next = nxt_v4[32:0]
            na5.next = nxt_v5[32:0]
            nas.next = nxt_vs[32:0]
            cb0.next = cur_v0[64:32]
            cb1.next = cur_v1[64:32]
            cb2.next = cur_v2[64:32]
            cb3.next = cur_v3[64:32]
            cb4.next = cur_v4[64:32]
            cb5.next = cur_v5[64:32]
            cbs.next = cur_vs[64:32]
            nb0.next = nxt_v0[64:32]
            nb1.next = nxt_v1[64:32]
            nb2.next = nxt_v2[64:32]
            nb3.next = nxt_v3[64:32]
            nb4.next = nxt_v4[64:32]
            nb5.next = nxt_v5[64:32]
            nbs.next = nxt_vs[64:32]

        sel0 = select64(ca0, na0, q0, ba0, INV=P2_COPY_XOR[0])
        sel1 = select64(ca1, na1, q1, ba1, INV=P2_COPY_XOR[1])
        sel2 = select64(ca2, na2, q2, ba2, INV=P2_COPY_XOR[2])
        sel3 = select64(ca3, na3, q3, ba3, INV=P2_COPY_XOR[3])
        sel4 = select64(ca4, na4, q4, ba4, INV=P2_COPY_XOR[4])
        sel5 = select64(ca5, na5, q5, ba5, INV=P2_COPY_XOR[5])
        selb0 = select64(cb0, nb0, q0, bb0, INV=P2_COPY_XOR[0])
        selb1 = select64(cb1, nb1, q1, bb1, INV=P2_COPY_XOR[1])
        selb2 = select64(cb2, nb2, q2, bb2, INV=P2_COPY_XOR[2])
        selb3 = select64(cb3, nb3, q3, bb3, INV=P2_COPY_XOR[3])
        selb4 = select64(cb4, nb4, q4, bb4, INV=P2_COPY_XOR[4])
        selb5 = select64(cb5, nb5, q5, bb5, INV=P2_COPY_XOR[5])
        sela_s = select64(cas, nas, q0, bas, INV=P2_COPY_XOR[0])
        selb_s = select64(cbs, nbs, q1, bbs, INV=P2_COPY_XOR[1])

        @always_comb
        def vf_half():
            if s2:
                b0.next = bb0
                b1.next = bb1
                b2.next = bb2
                b3.next = bb3
                b4.next = bb4
                b5.next = bb5
                bs.next = bbs
            else:
                b0.next = ba0
                b1.next = ba1
                b2.next = ba2
                b3.next = ba3
                b4.next = ba4
                b5.next = ba5
                bs.next = bas

        sels = (vf_halves, selb0, selb1, selb2, selb3, selb4, selb5, sela_s, selb_s)

        @always_comb
        def vf_s2():
            # as vf_p2: a stripe's first symbol is read in state A, the one after it in the state its entry says
            s2_alt.next = s2
            if hstart or chain_a:
                s2_alt.next = nxt_vs[0]
            elif chain_b:
                s2_alt.next = r0_vs[0]
            s2_n.next = bs
            if p2_use:
                s2_d.next = bs
            else:
                s2_d.next = s2_alt

        @always_seq(clk.posedge, reset=rst)
        def vf_s2_regs():
            s2.next = s2_d
            # the state of the symbol at ptr (the token's): A at a stripe start, s2 after a step (as vf_regs)
            if hstart or chain_a or chain_b:
                s1.next = 0
            elif step:
                s1.next = s2

        @always_seq(clk.posedge, reset=rst)
        def vf_words_s():
            # as vf_words
            if cur_ld:
                if m_cb:
                    cur_vs.next = r0_vs
                else:
                    cur_vs.next = nxt_vs
            if nxt_ld:
                nxt_vs.next = r0_vs

        @always_seq(clk.posedge, reset=rst)
        def vf_tok_s():
            t_st.next = s1

        states = (vf_half, sels, vf_s2, vf_s2_regs, vf_words_s, vf_tok_s)
    else:
        # the loop: the start of the symbol after the next one, from the word the next one starts in
        sel0 = select64(cur_v0, nxt_v0, q0, b0, INV=P2_COPY_XOR[0])
        sel1 = select64(cur_v1, nxt_v1, q1, b1, INV=P2_COPY_XOR[1])
        sel2 = select64(cur_v2, nxt_v2, q2, b2, INV=P2_COPY_XOR[2])
        sel3 = select64(cur_v3, nxt_v3, q3, b3, INV=P2_COPY_XOR[3])
        sel4 = select64(cur_v4, nxt_v4, q4, b4, INV=P2_COPY_XOR[4])
        sel5 = select64(cur_v5, nxt_v5, q5, b5, INV=P2_COPY_XOR[5])
        states = ()

    @always_comb
    def vf_select():
        p2_n.next = concat(b5, b4, b3, b2, b1, b0)

    @always_comb
    def vf_p2():
        # as the branches of vf_regs: a stripe's first symbol, a chained stripe, a step within the stripe;
        # the loop's value p2_n meets one 2:1 at the end (p2_alt and p2_use come from the control in parallel)
        p2_alt.next = p2
        if hstart or chain_a:
            p2_alt.next = nxt_at0
        elif chain_b:
            p2_alt.next = r0_at0
        # = step and not (p2[5] and cur_last)
        if p2[5]:
            p2_use.next = credit_ok and e_s1c
        else:
            p2_use.next = credit_ok and e_s0

    @always_comb
    def vf_p2d():
        if p2_use:
            p2_d.next = p2_n
        else:
            p2_d.next = p2_alt

    @always_seq(clk.posedge, reset=rst)
    def vf_p2_regs():
        p2.next = p2_d
        q0.next = p2_d ^ X0
        q1.next = p2_d ^ X1
        q2.next = p2_d ^ X2
        q3.next = p2_d ^ X3
        q4.next = p2_d ^ X4
        q5.next = p2_d ^ X5

    if two:
        # (STATES=2) the copies in a process of their own, ``c_keep_q``: the board flow marks it ``(* keep *)``
        # (:func:`lutzip.firmware.boards.build.keep_reset_copies`), so that yosys keeps the six copies apart
        # instead of merging the equal bits (each bit of a copy then drives two or three select trees, not eight)
        @always_seq(clk.posedge, reset=rst)
        def vf_p2_reg():
            p2.next = p2_d

        @always_seq(clk.posedge, reset=rst)
        def c_keep_q():
            q0.next = p2_d ^ X0
            q1.next = p2_d ^ X1
            q2.next = p2_d ^ X2
            q3.next = p2_d ^ X3
            q4.next = p2_d ^ X4
            q5.next = p2_d ^ X5

        p2_regs = (vf_p2_reg, c_keep_q)
    else:
        p2_regs = (vf_p2_regs,)

    @always_comb
    def vf_flags():
        tag1.next = tag + 1
        rp1.next = rp + 1
        ovr.next = exh or (cur_last and p2[5] and p2[5:0] != 0)
        fl_raw.next = flush and flush_tag == tag and state == st.F_RUN

    @always_comb
    def vf_go():
        # nxt is needed only when the next symbol starts in it (p2 >= 32). A flush does not stop the word
        # registers (it only changes the state and suppresses the token), so their loads hang off few bits.
        # = RUN and credit_ok and (cur_last or nx_ok or not p2[5])
        go.next = credit_ok and (e_g1 or (state == st.F_RUN and not p2[5]))

    @always_comb
    def vf_pop():
        pop.next = inc
        th_r.next = th >> inc

    @always_comb
    def vf_level():
        if push:
            th_n.next = (th_r << 1) | 1
        else:
            th_n.next = th_r

    @always_comb
    def vf_idle():
        idle.next = state == st.F_HDR

    @always_seq(clk.posedge, reset=rst)
    def vf_flush_reg():
        # the flush acts one cycle later (a flip-flop), unless the stripe ended meanwhile
        fl.next = fl_raw and not (chain_a or chain_b) and state_n == st.F_RUN

    @always_seq(clk.posedge, reset=rst)
    def vf_ring():
        th.next = th_n
        if inc == 1:
            rp.next = rp1
            # the new head: the entry after it, or the one written now if the ring held only one
            if th[1]:
                r0f.next = r1_flags
            else:
                r0f.next = push_flags
        elif not th[0]:
            r0f.next = push_flags

    @always_seq(clk.posedge, reset=rst)
    def vf_words():
        # while cur is loaded, chain_b is the case m_cb (the other three need RUN without zc, cur_last or the header state):
        # the data come through a 2:1 selected by a flip-flop and the load is the flip-flops' enable
        if cur_ld:
            if m_cb:
                cur_w.next = r0_w
                cur_wn.next = r0_wn
                cur_meta.next = r0_meta
                cur_v0.next = r0_v0
                cur_v1.next = r0_v1
                cur_v2.next = r0_v2
                cur_v3.next = r0_v3
                cur_v4.next = r0_v4
                cur_v5.next = r0_v5
            else:
                cur_w.next = nxt_w
                cur_wn.next = nxt_wn
                cur_meta.next = nxt_meta
                cur_v0.next = nxt_v0
                cur_v1.next = nxt_v1
                cur_v2.next = nxt_v2
                cur_v3.next = nxt_v3
                cur_v4.next = nxt_v4
                cur_v5.next = nxt_v5
        if nxt_ld:
            nx_ok.next = th[0] and not chain_b     # chain_b: ring[rp] went into cur; refill next cycle
            nxt_start_r.next = r0f[0]
            nxt_z_r.next = r0f[2]
            nxt_w.next = r0_w
            nxt_wn.next = r0_wn
            nxt_meta.next = r0_meta
            nxt_v0.next = r0_v0
            nxt_v1.next = r0_v1
            nxt_v2.next = r0_v2
            nxt_v3.next = r0_v3
            nxt_v4.next = r0_v4
            nxt_v5.next = r0_v5

    @always_comb
    def vf_next():
        # next state, zc and cur_last (registered below, with the step conditions derived from them)
        state_n.next = state
        zc_n.next = zc
        if fl and not chain:
            # the stripe is finished: no token; the word registers may have moved on this cycle
            if adv:
                if nxt_last:
                    state_n.next = st.F_HDR
                else:
                    state_n.next = st.F_DRAIN
            elif cur_last:
                state_n.next = st.F_HDR
            else:
                state_n.next = st.F_DRAIN
        elif state == st.F_HDR:
            if hbad:
                if not nxt_last:
                    state_n.next = st.F_DRAIN
            elif hstart:
                zc_n.next = nxt_z_r
                state_n.next = st.F_RUN
        elif state == st.F_RUN:
            if chain_a:
                zc_n.next = nxt_z_r
            elif chain_b:
                zc_n.next = r0f[2]
            elif go and zc:
                if cur_last:
                    state_n.next = st.F_HDR
                else:
                    state_n.next = st.F_DRAIN
            elif go:
                zc_n.next = scount == 1       # registered: the n-th symbol is known a cycle ahead
                if ovr:
                    # the packet's bits are used up (cur is its last word): this token ends the stripe (the
                    # count stage drops it past the stripe's end, or reports the overrun); the next packet's
                    # first entry is nxt, so start it as after a header, without waiting for the flush
                    state_n.next = st.F_HDR
        elif state == st.F_DRAIN:
            if nx_ok and nxt_last:
                state_n.next = st.F_HDR
        if chain_b:
            cur_last_n.next = r0f[1]
        elif adv or chain_a or start_h:
            cur_last_n.next = nxt_last
        else:
            cur_last_n.next = cur_last

    # the products of flip-flops in the enables and step conditions (vf_steps, vf_ld), registered from the
    # values those flip-flops take at this clock (d_*, state_n, zc_n, cur_last_n, th_n): e_a = nx_ok and RUN and
    # not zc and not cur_last, e_ca = nx_ok and RUN and zc and cur_last and nxt_start_r, e_cb = nx_ok and m_cb
    # and nxt_last and th[0] and r0f[0], e_hs / e_hb = the header start
    # / bad header without credit_ok, e_x = e_ca or e_cb or e_hs, e_y = e_ca or e_cb or (nx_ok and F_HDR),
    # e_nn = nx_ok and not F_DRAIN (inverted: after reset nxt_ld = 1)
    # e_g1 = RUN and (cur_last or nx_ok) (go with p2 >= 32), e_s0 = RUN and not zc and not fl (step with
    # p2 < 32), e_s1 = e_s0 and (cur_last or nx_ok) (step with p2 >= 32), e_s1c = e_s1 and not cur_last
    e_a, e_ca, e_cb, e_hs, e_hb, e_x, e_y, e_nn = [Signal(bool(0)) for _ in range(8)]
    e_g1, e_s0, e_s1, e_s1c = [Signal(bool(0)) for _ in range(4)]
    d_nx, d_sr, d_last, d_hdr, d_mk, d_f0 = [Signal(bool(0)) for _ in range(6)]

    @always_comb
    def vf_early_next():
        # as vf_words and vf_ring
        if nxt_ld:
            d_nx.next = th[0] and not chain_b
            d_sr.next = r0f[0]
            d_last.next = r0_meta[0]
            d_hdr.next = r0_meta[2]
            d_mk.next = r0_meta[1]
        else:
            d_nx.next = nx_ok
            d_sr.next = nxt_start_r
            d_last.next = nxt_last
            d_hdr.next = nxt_hdr
            d_mk.next = nxt_mk
        if inc == 1:
            if th[1]:
                d_f0.next = r1_flags[0]
            else:
                d_f0.next = push_flags[0]
        elif not th[0]:
            d_f0.next = push_flags[0]
        else:
            d_f0.next = r0f[0]

    @always_seq(clk.posedge, reset=rst)
    def vf_early_regs():
        run = state_n == st.F_RUN
        hd = d_nx and state_n == st.F_HDR
        ca = d_nx and run and zc_n and cur_last_n and d_sr
        cb = d_nx and run and zc_n and not cur_last_n and d_last and th_n[0] and d_f0
        hs = hd and d_sr and not (d_hdr and not d_mk)
        e_a.next = d_nx and run and not zc_n and not cur_last_n
        e_ca.next = ca
        e_cb.next = cb
        e_hs.next = hs
        e_hb.next = hd and d_hdr and not d_mk
        e_x.next = ca or cb or hs
        e_y.next = ca or cb or hd
        e_nn.next = d_nx and state_n != st.F_DRAIN
        fl_n = fl_raw and not (chain_a or chain_b)
        e_g1.next = run and (cur_last_n or d_nx)
        e_s0.next = run and not zc_n and not fl_n
        e_s1.next = run and not zc_n and not fl_n and (cur_last_n or d_nx)
        e_s1c.next = run and not zc_n and not fl_n and d_nx and not cur_last_n

    @always_comb
    def vf_steps():
        # with zc and cur_last (as e_*): adv = go and not zc and not cur_last and p2[5] (and nxt is there);
        # chain_a = n-th symbol now and the next stripe's first entry is nxt, chain_b: it is ring[rp]
        adv.next = credit_ok and e_a and p2[5]
        chain_a.next = credit_ok and e_ca
        chain_b.next = credit_ok and e_cb
        start_h.next = hstart
        hstart.next = credit_ok and e_hs
        hbad.next = credit_ok and e_hb
        # = go and not fl and not zc
        step.next = credit_ok and (e_s1 or (e_s0 and not p2[5]))
        chain.next = chain_a or chain_b

    @always_comb
    def vf_ld():
        # nxt is loaded from ring[rp] when it is empty or leaves its register (into cur: adv, chain_a, chain_b,
        # a header start; or discarded: a bad header, a drained word), and a ring entry is taken then if there
        # is one (inc = th[0] and nxt_ld, written out so that the ring pointer and level do not hang behind
        # nxt_ld); cur is loaded on adv, chain_a, chain_b (from ring[rp], nxt is refilled next cycle), hstart
        nxt_ld.next = not e_nn or (credit_ok and (e_y or (e_a and p2[5])))
        inc.next = 0
        if th[0] and (not e_nn or (credit_ok and (e_y or (e_a and p2[5])))):
            inc.next = 1
        cur_ld.next = credit_ok and (e_x or (e_a and p2[5]))

    @always_seq(clk.posedge, reset=rst)
    def vf_state():
        state.next = state_n
        zc.next = zc_n
        # the word registers' load conditions from few flip-flops (see vf_steps)
        m_cb.next = state_n == st.F_RUN and zc_n and not cur_last_n

    @always_seq(clk.posedge, reset=rst)
    def vf_regs():
        t_valid.next = hbad or (go and not fl)
        if hstart:
            pend.next = 1
            pend_n.next = nxt_n
            scount.next = nxt_n
            tag.next = tag1
            ptr.next = 0
            exh.next = nxt_hdr    # header-only packet: no payload bits at all
        elif chain_a:
            pend.next = 1
            tag.next = tag1
            ptr.next = 0
            pend_n.next = nxt_n
            scount.next = nxt_n
            exh.next = nxt_hdr
        elif chain_b:
            pend.next = 1
            tag.next = tag1
            ptr.next = 0
            pend_n.next = r0_n
            scount.next = r0_n
            exh.next = r0_hdr
        elif step:
            pend.next = 0
            scount.next = scount - 1
            ptr.next = p2[5:0]
            if p2[5] and cur_last:
                exh.next = 1
        elif go and not fl:
            pend.next = 0

    @always_seq(clk.posedge, reset=rst)
    def vf_tok():
        # token data, loaded every cycle (t_valid says when it is a token): a bad header or the symbol at ptr
        hd = state == st.F_HDR
        t_hdr.next = hd
        t_ovr.next = ovr and not hd
        t_ptr.next = 0
        t_first.next = 0
        t_wn.next = 0
        if hd:
            t_w.next = nxt_w
        elif exh:
            t_w.next = 0
        else:
            t_w.next = cur_w
            t_wn.next = cur_wn
        if not hd:
            t_ptr.next = ptr
            t_first.next = pend
        t_n.next = pend_n
        t_tag.next = tag

    return (vf_fields, vf_select, vf_flags, vf_go, vf_pop, vf_level, vf_idle, vf_flush_reg, vf_ring, vf_words,
            vf_regs, vf_p2d, sel0, sel1, sel2, sel3, sel4, sel5, vf_p2) + p2_regs + (vf_next, vf_state, vf_tok,
            vf_early_next, vf_early_regs, vf_steps, vf_ld) + states
