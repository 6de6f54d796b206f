"""Stage F of the vector front: the bit pointer loop over precomputed next positions, and the header parser.

The ring (:mod:`lutzip.hdl.entry_ring`) holds the input words in stream order, each with ``nx[j]``, the
start of the next symbol for a symbol starting at bit ``j`` (:mod:`lutzip.hdl.pos_stage`). The front copies
the word it decodes into registers (``cur``) and keeps the bit pointer ``ptr`` (0..31); ``rp`` points at
the ring entry after ``cur``. A decode step is::

    e = nx[ptr] of cur                     (six 32:1 multiplexers of flip-flops)
    ptr <= e mod 32;  cur <= ring[rp], rp <= rp + 1 if e >= 32 (and cur is not its packet's last word)

so the one-cycle loop is ``ptr -> 32:1 select -> ptr, cur``: no prefix shifter, no LUT1 read, no adder
and no memory read. The token carries the word, the word after it and ``ptr``; the next stage
(:mod:`lutzip.hdl.align_stage`) extracts the 32 bits at the pointer and reads the full LUT1 entry.

Stripes: as :mod:`lutzip.hdl.bit_window`, the front counts symbols (each stands for at least one word).
Good headers with payload have no entry of their own: their ``n`` rides on the stripe's first payload
entry (``first``); a bad header or a header-only packet is an entry with ``hdr`` set. After ``n`` symbols
the front starts the next stripe in the same cycle by loading its first entry into ``cur``: ``ring[rp]``
when ``cur`` is the stripe's last word (``chain_a``), ``ring[rp + 1]`` when ``ring[rp]`` is
(``chain_b``); otherwise it drains to tlast. With zero runs it decodes past the stripe end until the count stage's
``flush``. ``exh`` marks that the bits of the packet's last word are used up (or a header-only packet):
every further symbol is an overrun. After an overrun the front waits for the flush. An invalid prefix is
only known in the next stage: the front goes on until the flush arrives (a few cycles) or the stripe's
``n`` symbols are issued.

Interface
---------
clk, rst                 clock, synchronous reset
rp[PB], pop[2]           (out) ring read pointer (registered) and entries taken this cycle (``rp`` step)
push                     an entry is written into the ring at this clock (counted in the registered fill level)
r0_*, r1_*               ring entries at rp, rp + 1 (:mod:`lutzip.hdl.entry_ring`): the next words, with
                         ``meta`` = n[19:4] | first[3] | hdr[2] | mk[1] | last[0]
credit_ok                registered: room downstream for one more token
flush, flush_tag         one-cycle pulse from the count stage: the stripe with this tag is finished
t_valid, t_hdr, t_ovr, t_w[32], t_wn[32], t_ptr[5], t_first, t_n[16], t_tag
                         (out, registered) token: bad header (t_hdr, t_w = the word) or symbol at bit
                         ``t_ptr`` of ``t_w:t_wn``; t_ovr: the symbol needs bits past the packet (overrun
                         unless its prefix is invalid); t_first on a stripe's first symbol with t_n = n - 1
idle                     (out) waiting for a header
"""
from myhdl import Signal, always_comb, always_seq, block, concat, enum, intbv, modbv


@block
def vector_front(clk, rst, rp, pop, push,
                 r0_w, r0_wn, r0_meta, r0_v0, r0_v1, r0_v2, r0_v3, r0_v4, r0_v5,
                 r1_w, r1_wn, r1_meta, r1_v0, r1_v1, r1_v2, r1_v3, r1_v4, r1_v5,
                 credit_ok, flush, flush_tag,
                 t_valid, t_hdr, t_ovr, t_w, t_wn, t_ptr, t_first, t_n, t_tag, idle):
    st = enum("F_HDR", "F_RUN", "F_WAIT", "F_DRAIN")
    r0_last, r0_mk, r0_hdr, r0_first, r1_last, r1_mk, r1_hdr, r1_first = [Signal(bool(0)) for _ in range(8)]
    r0_n, r1_n = [Signal(intbv(0)[16:]) for _ in range(2)]
    r0_start, r1_start = [Signal(bool(0)) for _ in range(2)]   # the entry starts a stripe
    state = Signal(st.F_HDR)
    pb = len(rp)
    ptr = Signal(intbv(0)[5:])
    exh = Signal(bool(0))
    cur_w, cur_wn = [Signal(intbv(0)[32:]) for _ in range(2)]
    cur_last = Signal(bool(0))
    c0, c1, c2, c3, c4, c5 = [Signal(intbv(0)[32:]) for _ in range(6)]
    scount = Signal(intbv(0)[16:])
    pend = Signal(bool(0))
    pend_n = Signal(intbv(0)[16:])
    tag = Signal(modbv(0)[len(t_tag):])
    tag1 = Signal(modbv(0)[len(t_tag):])
    depth = 1 << (pb - 1)
    th = Signal(intbv(0)[depth:])     # ring fill level as a thermometer code: th[k] = level > k
    th_r = Signal(intbv(0)[depth:])
    th_n = Signal(modbv(0)[depth:])
    a1, a2 = [Signal(bool(0)) for _ in range(2)]
    e = Signal(intbv(0)[6:])
    ovr = Signal(bool(0))
    go = Signal(bool(0))
    zc = Signal(bool(0))
    chain_a = Signal(bool(0))
    chain_b = Signal(bool(0))
    fl = Signal(bool(0))
    inc = Signal(intbv(0)[2:])
    ld = Signal(intbv(0)[2:])   # cur <= 0: keep, 1: ring[rp], 2: ring[rp + 1]
    rp1, rp2 = [Signal(modbv(0)[pb:]) for _ in range(2)]

    @always_comb
    def vf_avail():
        rp1.next = rp + 1
        rp2.next = rp + 2
        th_r.next = th >> inc
        a1.next = th[0]
        a2.next = th[1]

    @always_comb
    def vf_level():
        # level - inc + push as a shift of the thermometer code: no adder or comparator after the loop's inc
        if push:
            th_n.next = (th_r << 1) | 1
        else:
            th_n.next = th_r

    @always_seq(clk.posedge, reset=rst)
    def vf_count():
        th.next = th_n

    @always_comb
    def vf_flags():
        zc.next = scount == 0
        tag1.next = tag + 1

    @always_comb
    def vf_select():
        # the loop: bit ptr of the six bit-sliced vectors of the current word
        e.next = concat(c5[ptr], c4[ptr], c3[ptr], c2[ptr], c1[ptr], c0[ptr])

    @always_comb
    def vf_ovr():
        ovr.next = exh or (cur_last and e[5] and e[5:0] != 0)

    @always_comb
    def vf_flush():
        fl.next = flush and flush_tag == tag and (state == st.F_RUN or state == st.F_WAIT)

    @always_comb
    def vf_go():
        go.next = state == st.F_RUN and credit_ok and (cur_last or a1) and not fl

    @always_comb
    def vf_meta():
        # entry flags (:mod:`lutzip.hdl.pos_stage`): n | first | hdr | mk | last
        r0_last.next = r0_meta[0]
        r0_mk.next = r0_meta[1]
        r0_hdr.next = r0_meta[2]
        r0_first.next = r0_meta[3]
        r0_n.next = r0_meta[20:4]
        r1_last.next = r1_meta[0]
        r1_mk.next = r1_meta[1]
        r1_hdr.next = r1_meta[2]
        r1_first.next = r1_meta[3]
        r1_n.next = r1_meta[20:4]
        r0_start.next = r0_first or (r0_hdr and r0_mk)
        r1_start.next = r1_first or (r1_hdr and r1_mk)

    @always_comb
    def vf_chain():
        # n-th symbol now and the next stripe's first entry (its first payload word carrying the header's n,
        # or a header-only packet) is the entry after the rest of this stripe (a: cur is the stripe's last
        # word; b: the next entry is): start the next stripe in this cycle
        chain_a.next = go and zc and cur_last and a1 and r0_start
        chain_b.next = go and zc and not cur_last and a1 and r0_last and a2 and r1_start

    @always_comb
    def vf_take():
        # ring entries taken this cycle (inc, moves rp) and which of them becomes cur (ld)
        inc.next = 0
        ld.next = 0
        if fl:
            pass
        elif state == st.F_HDR:
            if a1 and credit_ok:
                inc.next = 1
                if r0_start:
                    ld.next = 1
        elif state == st.F_RUN:
            if go:
                if zc:
                    if chain_a:
                        inc.next = 1
                        ld.next = 1
                    elif chain_b:
                        inc.next = 2
                        ld.next = 2
                elif e[5] and not cur_last:
                    inc.next = 1
                    ld.next = 1
        elif state == st.F_DRAIN:
            if a1:
                inc.next = 1

    @always_comb
    def vf_pop():
        pop.next = inc

    @always_comb
    def vf_idle():
        idle.next = state == st.F_HDR

    @always_seq(clk.posedge, reset=rst)
    def vf_rp():
        if inc == 1:
            rp.next = rp1
        elif inc == 2:
            rp.next = rp2

    @always_seq(clk.posedge, reset=rst)
    def vf_cur():
        if ld == 1:
            cur_w.next = r0_w
            cur_wn.next = r0_wn
            cur_last.next = r0_last
            c0.next = r0_v0
            c1.next = r0_v1
            c2.next = r0_v2
            c3.next = r0_v3
            c4.next = r0_v4
            c5.next = r0_v5
        elif ld == 2:
            cur_w.next = r1_w
            cur_wn.next = r1_wn
            cur_last.next = r1_last
            c0.next = r1_v0
            c1.next = r1_v1
            c2.next = r1_v2
            c3.next = r1_v3
            c4.next = r1_v4
            c5.next = r1_v5

    @always_seq(clk.posedge, reset=rst)
    def vf_regs():
        t_valid.next = 0
        if fl:
            if cur_last:
                state.next = st.F_HDR
            else:
                state.next = st.F_DRAIN
        elif state == st.F_HDR:
            if a1 and credit_ok:
                if r0_hdr and not r0_mk:
                    t_valid.next = 1
                    t_hdr.next = 1
                    t_ovr.next = 0
                    t_w.next = r0_w
                    t_wn.next = 0
                    t_ptr.next = 0
                    t_first.next = 0
                    if not r0_last:
                        state.next = st.F_DRAIN
                elif r0_start:
                    pend.next = 1
                    pend_n.next = r0_n
                    scount.next = r0_n
                    tag.next = tag1
                    ptr.next = 0
                    exh.next = r0_hdr    # header-only packet: no payload bits at all
                    state.next = st.F_RUN
        elif state == st.F_RUN:
            if go:
                t_valid.next = 1
                t_hdr.next = 0
                t_ovr.next = ovr
                if exh:
                    t_w.next = 0
                    t_wn.next = 0
                else:
                    t_w.next = cur_w
                    t_wn.next = cur_wn
                t_ptr.next = ptr
                t_first.next = pend
                t_n.next = pend_n
                t_tag.next = tag
                pend.next = 0
                if zc:
                    if chain_a:
                        pend.next = 1
                        tag.next = tag1
                        ptr.next = 0
                        pend_n.next = r0_n
                        scount.next = r0_n
                        exh.next = r0_hdr
                    elif chain_b:
                        pend.next = 1
                        tag.next = tag1
                        ptr.next = 0
                        pend_n.next = r1_n
                        scount.next = r1_n
                        exh.next = r1_hdr
                    elif cur_last:
                        state.next = st.F_HDR
                    else:
                        state.next = st.F_DRAIN
                else:
                    scount.next = scount - 1
                    ptr.next = e[5:0]
                    if e[5] and cur_last:
                        exh.next = 1
                    if ovr:
                        state.next = st.F_WAIT
        elif state == st.F_DRAIN:
            if a1 and r0_last:
                state.next = st.F_HDR

    return (vf_avail, vf_level, vf_count, vf_meta, vf_flags, vf_select, vf_ovr, vf_flush, vf_go, vf_chain, vf_take, vf_pop, vf_idle, vf_rp,
            vf_cur, vf_regs)
