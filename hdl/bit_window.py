"""Stage F: the 64-bit bit window, the bit pointer and the header parser (the decoder's only 1-cycle loop).

The window is two 32-bit registers ``hi:lo`` and a pointer ``ptr`` (0..31) to the first unused bit of ``hi``.
Each cycle in state RUN it reads LUT1 at the L-bit prefix ``(hi:lo << ptr)[63:64-L]``, issues one symbol
token and advances ``ptr`` by the symbol's total length ``c+k``; when ``ptr`` crosses 32 the window shifts by
one word (``hi <= lo``, ``lo <= next input word``) in the same cycle, so word boundaries cost no bubble.
The loop is exactly LUT1 -> ptr + (c+k) -> next ptr / window -> prefix -> LUT1; with ``LUT1_SYNC`` the LUT1
block RAM holds the loop's register (its address is the next state's prefix, ``fw_win_next``), else the
window registers do and LUT1 is read asynchronously. Index extraction, LUT2, LUT3 and counting are in later
stages (the token carries the 32 bits at the pointer, ``sym_top``).

The stage does not know exactly where a stripe ends (zero-run lengths are decoded later). Every symbol
stands for at least one word, so after ``n`` symbols the stripe is certainly over: the stage then moves
straight on to the next stripe: in the cycle of the n-th symbol it takes the next header and both window
words from the input FIFO when they are there, so consecutive stripes follow without a bubble. The header's ``n``
and tag travel to the count stage with the stripe's first symbol token (``t_first``); only a bad header
makes a token of its own.
Before that it decodes *speculatively*; the count stage (:mod:`lutzip.hdl.count_stage`) drops tokens past
the stripe's end and raises ``flush`` (tagged with the stripe's ``tag``), after which this stage
discards input through tlast and parses the next header. A flush whose tag is not the current stripe's
(the stage already moved on) is ignored. After a prefix / overrun error the stage stops (WAIT) until the
flush, which always comes: the error token is among the stripe's first ``n - 1`` symbols (an error in the
n-th symbol needs no wait).

Interface
---------
clk, rst                 clock, synchronous reset
h0, h1, h2 [34]          the three oldest input FIFO entries ``marker_ok | tlast | tdata``
                         (:mod:`lutzip.hdl.input_fifo`; marker_ok = tdata[31:16] == 0x4C5A, computed on push)
in_count                 registered number of entries in the input FIFO (0..4)
in_pop[2]                (out, comb) entries to pop this cycle: 1 per window refill or discarded word; at a
                         stripe start the header and the window words are taken in one cycle when present
                         (3, or 2 for a one-word payload), else the two window words (2) or one at a time
lut1_addr[L], lut1_q[15] (out) LUT1 address, (in) the LUT1 entry of the current prefix: with
                         ``LUT1_SYNC`` (block RAM, registered read) the address is the next state's prefix,
                         else (asynchronous read, distributed RAM) the current prefix
credit_ok                registered: room downstream for one more token
flush, flush_tag[T]      one-cycle pulse from the count stage: the stripe with this tag is finished
t_valid, t_hdr, t_ferr[4], t_sym[32], t_cls[4], t_c[4], t_first, t_n[16], t_tag[3]
                         (out, registered) the token: bad header (t_hdr, t_ferr = 1, t_sym = header word) or
                         symbol (t_sym = 32 bits at the pointer, t_ferr = 3 invalid prefix, 4 overrun;
                         t_first on a stripe's first symbol, with t_n = n - 1 and t_tag of its header)
idle                     (out) waiting for a header

For N interleaved stripes, N copies of the window registers share one LUT1 read port in turn (each lane's
loop then has N cycles); the token gains a lane number.
"""
from myhdl import Signal, always_comb, always_seq, block, concat, enum, intbv, modbv

MARKER = 0x4C5A


@block
def bit_window(clk, rst, h0, h1, h2, in_count, in_pop, lut1_addr, lut1_q, credit_ok, flush, flush_tag,
               t_valid, t_hdr, t_ferr, t_sym, t_cls, t_c, t_first, t_n, t_tag, idle, L=8, LUT1_SYNC=True):
    st = enum("F_HDR", "F_LOAD", "F_RUN", "F_WAIT", "F_DRAIN")
    state = Signal(st.F_HDR)
    hi = Signal(intbv(0)[32:])
    lo = Signal(intbv(0)[32:])
    hi_ok = Signal(bool(0))
    lo_ok = Signal(bool(0))
    end_seen = Signal(bool(0))
    nload = Signal(bool(0))
    ptr = Signal(intbv(0)[5:])
    hi_n = Signal(intbv(0)[32:])
    lo_n = Signal(intbv(0)[32:])
    ptr_n = Signal(intbv(0)[5:])
    xw = Signal(intbv(0)[32:])
    v96 = Signal(intbv(0)[96:])
    shv = Signal(modbv(0)[96:])
    sym_top = Signal(intbv(0)[32:])   # register: (hi:lo << ptr)[63:32], the 32 bits at the pointer
    sym_n = Signal(intbv(0)[32:])
    pref_q = Signal(intbv(0)[L:])     # register: the current L-bit prefix (= sym_top[32:32-L])
    pref_n = Signal(intbv(0)[L:])
    tot = Signal(intbv(0)[6:])
    np = Signal(intbv(0)[7:])
    avail = Signal(intbv(0)[7:])
    d_err = Signal(intbv(0)[4:])
    go = Signal(bool(0))
    in_data = Signal(intbv(0)[32:])
    in_last = Signal(bool(0))
    in_nonempty = Signal(bool(0))
    hdr_bad = Signal(bool(0))
    start2 = Signal(bool(0))   # good header + a one-word payload in the FIFO
    start3 = Signal(bool(0))   # good header + two payload words in the FIFO
    fast2 = Signal(bool(0))
    fl = Signal(bool(0))
    scount = Signal(intbv(0)[16:])
    pend = Signal(bool(0))
    pend_n = Signal(intbv(0)[16:])
    tag = Signal(modbv(0)[len(t_tag):])
    tag1 = Signal(modbv(0)[len(t_tag):])
    chain = Signal(bool(0))    # the n-th symbol is issued now and the next stripe starts in the same cycle

    @always_comb
    def fw_input():
        in_data.next = h0[32:0]
        in_last.next = h0[32]
        in_nonempty.next = in_count != 0
        hdr_bad.next = not h0[33]
        fast2.next = in_count >= 2 and not h0[32] and not nload and not end_seen

    @always_comb
    def fw_start():
        start2.next = in_count >= 2 and h0[33] and not h0[32] and h1[32]
        start3.next = in_count >= 3 and h0[33] and not h0[32] and not h1[32]

    @always_comb
    def fw_win_next():
        # next state of the window: refill / stripe start / load, as in fw_regs
        hi_n.next = hi
        lo_n.next = lo
        ptr_n.next = ptr
        if fl:
            pass
        elif state == st.F_HDR:
            if in_nonempty and credit_ok and not hdr_bad:
                ptr_n.next = 0
                if start3:
                    hi_n.next = h1[32:0]
                    lo_n.next = h2[32:0]
                elif start2:
                    hi_n.next = h1[32:0]
                    lo_n.next = 0
                else:
                    hi_n.next = 0
                    lo_n.next = 0
        elif state == st.F_LOAD:
            if fast2:
                hi_n.next = h0[32:0]
                lo_n.next = h1[32:0]
            elif in_nonempty or end_seen:
                hi_n.next = lo
                if end_seen:
                    lo_n.next = 0
                else:
                    lo_n.next = in_data
        elif state == st.F_RUN:
            if go:
                if chain:
                    ptr_n.next = 0
                    hi_n.next = h1[32:0]
                    if start3:
                        lo_n.next = h2[32:0]
                    else:
                        lo_n.next = 0
                else:
                    ptr_n.next = np[5:]
                    if np[5]:
                        hi_n.next = lo
                        if end_seen:
                            lo_n.next = 0
                        else:
                            lo_n.next = in_data

    @always_comb
    def fw_xword():
        # the word a refill would bring in (zeros past the stripe's last word)
        if end_seen:
            xw.next = 0
        else:
            xw.next = in_data

    @always_comb
    def fw_v96():
        v96.next = concat(hi, lo, xw)

    @always_comb
    def fw_vshift():
        # bits [np, np + 32) of hi:lo:next word = the next state's 32 bits at the pointer after a RUN step:
        # selected straight by np, so the refill multiplexer is not between LUT1 and its next address
        shv.next = v96 << np

    @always_comb
    def fw_pref_next():
        # next state's prefix / top 32 bits, case by case as fw_win_next (ptr is 0 after every load)
        pref_n.next = pref_q
        sym_n.next = sym_top
        if fl:
            pass
        elif state == st.F_HDR:
            if in_nonempty and credit_ok and not hdr_bad:
                if start3 or start2:
                    pref_n.next = h1[32:32 - L]
                    sym_n.next = h1[32:0]
                else:
                    pref_n.next = 0
                    sym_n.next = 0
        elif state == st.F_LOAD:
            if fast2:
                pref_n.next = h0[32:32 - L]
                sym_n.next = h0[32:0]
            elif in_nonempty or end_seen:
                pref_n.next = lo[32:32 - L]
                sym_n.next = lo
        elif state == st.F_RUN:
            if go:
                if chain:
                    pref_n.next = h1[32:32 - L]
                    sym_n.next = h1[32:0]
                else:
                    pref_n.next = shv[96:96 - L]
                    sym_n.next = shv[96:64]

    if LUT1_SYNC:
        @always_comb
        def fw_prefix():
            # LUT1 read synchronously (block RAM): its address is the *next* prefix, so lut1_q holds the
            # entry of the current prefix during the cycle
            lut1_addr.next = pref_n
            tot.next = lut1_q[6:0]
    else:
        win = Signal(intbv(0)[64:])
        sh = Signal(modbv(0)[64:])

        @always_comb
        def fw_cur_concat():
            win.next = concat(hi, lo)

        @always_comb
        def fw_cur_shift():
            sh.next = win << ptr

        @always_comb
        def fw_prefix():
            # LUT1 read asynchronously (distributed RAM) at the current prefix, selected from the window
            # registers (a registered address would let yosys absorb it into a block RAM)
            lut1_addr.next = sh[64:64 - L]
            tot.next = lut1_q[6:0]

    @always_comb
    def fw_next_ptr():
        np.next = ptr + tot

    @always_comb
    def fw_avail():
        if lo_ok:
            avail.next = 64 - ptr
        elif hi_ok:
            avail.next = 32 - ptr
        else:
            avail.next = 0

    @always_comb
    def fw_err():
        if not lut1_q[14] or tot > 32:
            d_err.next = 3
        elif tot > avail:
            d_err.next = 4
        else:
            d_err.next = 0

    @always_comb
    def fw_tag():
        tag1.next = tag + 1

    @always_comb
    def fw_flush():
        fl.next = flush and flush_tag == tag and (state == st.F_RUN or state == st.F_WAIT)

    @always_comb
    def fw_go():
        go.next = state == st.F_RUN and credit_ok and (in_nonempty or end_seen) and not fl

    @always_comb
    def fw_chain():
        chain.next = go and scount == 0 and end_seen and (start2 or start3)

    @always_comb
    def fw_pop():
        if fl:
            in_pop.next = 0
        elif state == st.F_HDR:
            if in_nonempty and credit_ok:
                if start3:
                    in_pop.next = 3
                elif start2:
                    in_pop.next = 2
                else:
                    in_pop.next = 1
            else:
                in_pop.next = 0
        elif state == st.F_LOAD:
            if fast2:
                in_pop.next = 2
            elif in_nonempty and not end_seen:
                in_pop.next = 1
            else:
                in_pop.next = 0
        elif state == st.F_RUN:
            if go and np[5] and not end_seen:
                in_pop.next = 1
            elif chain and start3:
                in_pop.next = 3
            elif chain:
                in_pop.next = 2
            else:
                in_pop.next = 0
        elif state == st.F_DRAIN:
            if in_nonempty:
                in_pop.next = 1
            else:
                in_pop.next = 0
        else:
            in_pop.next = 0

    @always_comb
    def fw_idle():
        idle.next = state == st.F_HDR

    if LUT1_SYNC:
        @always_seq(clk.posedge, reset=rst)
        def fw_win_regs():
            hi.next = hi_n
            lo.next = lo_n
            ptr.next = ptr_n
            pref_q.next = pref_n
            sym_top.next = sym_n
    else:
        @always_seq(clk.posedge, reset=rst)
        def fw_win_regs():
            hi.next = hi_n
            lo.next = lo_n
            ptr.next = ptr_n

        @always_comb
        def fw_cur_sym():
            sym_top.next = sh[64:32]

    @always_seq(clk.posedge, reset=rst)
    def fw_regs():
        t_valid.next = 0
        if fl:
            if end_seen:
                state.next = st.F_HDR
            else:
                state.next = st.F_DRAIN
        elif state == st.F_HDR:
            if in_nonempty and credit_ok:
                if hdr_bad:
                    t_valid.next = 1
                    t_hdr.next = 1
                    t_ferr.next = 1
                    t_sym.next = in_data
                    t_c.next = 0
                    t_cls.next = 0
                    t_first.next = 0
                    if not in_last:
                        state.next = st.F_DRAIN
                else:
                    pend.next = 1
                    pend_n.next = in_data[16:0]
                    tag.next = tag1
                    scount.next = in_data[16:0]
                    nload.next = 0
                    if start3:
                        hi_ok.next = 1
                        lo_ok.next = 1
                        end_seen.next = h2[32]
                        state.next = st.F_RUN
                    elif start2:
                        hi_ok.next = 1
                        lo_ok.next = 0
                        end_seen.next = 1
                        state.next = st.F_RUN
                    else:
                        state.next = st.F_LOAD
                        end_seen.next = in_last
                        hi_ok.next = 0
                        lo_ok.next = 0
        elif state == st.F_LOAD:
            if fast2:
                hi_ok.next = 1
                lo_ok.next = 1
                end_seen.next = h1[32]
                state.next = st.F_RUN
            elif in_nonempty or end_seen:
                hi_ok.next = lo_ok
                if end_seen:
                    lo_ok.next = 0
                else:
                    lo_ok.next = 1
                    end_seen.next = in_last
                nload.next = 1
                if nload:
                    state.next = st.F_RUN
        elif state == st.F_RUN:
            if go:
                t_valid.next = 1
                t_hdr.next = 0
                t_ferr.next = d_err
                t_sym.next = sym_top
                t_cls.next = lut1_q[14:10]
                t_c.next = lut1_q[10:6]
                t_first.next = pend
                t_n.next = pend_n
                t_tag.next = tag
                pend.next = 0
                if np[5]:
                    hi_ok.next = lo_ok
                    if end_seen:
                        lo_ok.next = 0
                    else:
                        lo_ok.next = 1
                        end_seen.next = in_last
                if scount == 0:
                    # n-th symbol: every symbol stands for >= 1 word, so the stripe is certainly over (an
                    # error in this symbol is reported by the count stage; its flush comes with the old tag)
                    if chain:
                        # next stripe's header and window words are in the FIFO: start it now
                        pend.next = 1
                        pend_n.next = in_data[16:0]
                        tag.next = tag1
                        scount.next = in_data[16:0]
                        hi_ok.next = 1
                        if start3:
                            lo_ok.next = 1
                            end_seen.next = h2[32]
                        else:
                            lo_ok.next = 0
                            end_seen.next = 1
                    elif end_seen or (np[5] and in_last):
                        state.next = st.F_HDR
                    else:
                        state.next = st.F_DRAIN
                else:
                    scount.next = scount - 1
                    if d_err != 0:
                        state.next = st.F_WAIT
        elif state == st.F_DRAIN:
            if in_nonempty and in_last:
                state.next = st.F_HDR

    if LUT1_SYNC:
        extra = (fw_xword, fw_v96, fw_vshift, fw_pref_next)
    else:
        extra = (fw_cur_concat, fw_cur_shift, fw_cur_sym)
    return extra + (fw_input, fw_start, fw_win_next, fw_prefix, fw_next_ptr, fw_avail, fw_err, fw_tag, fw_flush,
            fw_go, fw_chain, fw_pop, fw_idle, fw_win_regs, fw_regs)
