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
Before that it decodes *speculatively*; the count stage (:mod:`lutzip.hdl.stages.count_stage`) drops tokens past
the stripe's end and raises ``flush`` (tagged with the stripe's ``tag``), after which this stage
discards input through tlast and parses the next header. A flush whose tag is not the current stripe's
(the stage already moved on) is ignored. After a prefix / overrun error the stage stops (WAIT) until the
flush, which always comes: the error token is among the stripe's first ``n - 1`` symbols (an error in the
n-th symbol needs no wait).

Interface
---------
clk, rst                 clock, synchronous reset
h0, h1, h2 [34]          the three oldest input FIFO entries ``marker_ok | tlast | tdata``
                         (:mod:`lutzip.hdl.stages.input_fifo`; marker_ok = tdata[31:16] == 0x4C5A, computed on push)
in_gt[4]                 registered number of entries in the input FIFO as a thermometer code (bit i: > i)
in_take_s                (out, comb; one-hot step, else 0) a stripe start: the input FIFO pops the header and
                         the window words it holds (1, 2 or 3, from its head flags; ``in_pop`` is then 0)
in_pop[2], in_pop_x      (out, comb) entries to pop this cycle, ``in_pop + in_pop_x``: ``in_pop_x`` = 1 for the
                         refill of a decode step with the one-hot step (late: it depends on LUT1's c+k; with
                         the adder step it is 0 and the refill is in ``in_pop``), ``in_pop`` for a discarded
                         word or at a stripe start, where the header and the window words are taken in one
                         cycle when present (3, or 2 for a one-word payload), else the two window words (2)
                         or one at a time
lut1_addr[L], lut1_q[15] (out) LUT1 address, (in) the LUT1 entry of the current prefix: with
                         ``LUT1_SYNC`` (block RAM, registered read) the address is the next state's prefix,
                         else (asynchronous read, distributed RAM) the current prefix
lut1_oh[OH], lut1_re     (in, optional, with ``LUT1_SYNC``) the entry's ``c+k`` one-hot
                         (:mod:`lutzip.hdl.stages.lut1_table`, ``OH = onehot_width(L)``), (out) LUT1's read enable
                         (low while the loop stalls): see "One-hot step" below
lut1_t2[6]               (with ``lut1_oh``) a second copy of LUT1's ``c+k`` (feeds only the adder of ``yw``)
in_after                 (with ``lut1_oh``) four signals: the input FIFO's head after popping 0..3 entries
                         (including a word pushed in this cycle; :mod:`lutzip.hdl.stages.input_fifo`)
credit_ok                registered: room downstream for one more token
flush, flush_tag[T]      one-cycle pulse from the count stage: the stripe with this tag is finished
t_valid, t_hdr, t_ferr[4], t_sym[32], t_cls[4], t_c[4], t_first, t_n[16], t_tag[3]
                         (out, registered) the token: bad header (t_hdr, t_ferr = 1, t_sym = header word) or
                         symbol (t_sym = 32 bits at the pointer, t_ferr = 3 invalid prefix, 4 overrun;
                         t_first on a stripe's first symbol, with t_n = n - 1 and t_tag of its header)
idle                     (out) waiting for a header

One-hot step (``lut1_oh`` given; ``decoder_core`` ``STEP="onehot"``, what ``hdl synth`` builds for the HX8K)
------------------------------------------------------------------------------------------------------
The step's next state is not selected from ``(hi:lo:next word) << (ptr + c+k)`` (an adder, then a 7-bit
shifter: 8 LUT levels from ``ptr`` on iCE40) but by two AND-ORs. Registers: ``vwin`` (the ``VB`` bits at the
pointer; ``sym_top`` is its top 32), ``yw`` (``hi:lo:next word`` from the pointer's byte on, ``XB + 7`` bits)
and ``pf`` (``ptr mod 8`` one-hot). ``X`` (the ``XB`` bits at the pointer) = ``yw << ptr mod 8``, an 8-term
AND-OR by ``pf``; the next ``vwin`` = ``X << c+k``, an AND-OR by LUT1's one-hot ``c+k``; the next LUT1
address = ``vwin << c+k`` the same way (3 LUT levels after the RAM). The adder ``ptr + c+k`` still runs, off
that loop: it decodes the next ``pf`` and drives the refill; a second adder from ``lut1_t2`` selects the next
``yw`` (the window before / after the refill at the next pointer's byte; the word after the window is the
input FIFO's head after this cycle's pops, ``in_after``). Loads enter as one more OR term, selected by state flip-flops only (the cases that cannot load are
don't-cares); the one-hot ``c+k`` is gated by ``s_run`` (three flip-flops); a stall holds ``vwin`` by its
enable and LUT1 by its read enable (``lut1_re``); in a flush cycle these registers may take any value (the
next header load sets them). The refill's pop is ``in_pop_x`` (late), the rest of the pops ``in_pop``.
``c+k`` is limited to ``OH = L + 16`` (the longest valid symbol; longer entries are invalid prefixes, error 3).

For N interleaved stripes, N copies of the window registers share one LUT1 read port in turn (each lane's
loop then has N cycles); the token gains a lane number.
"""
from myhdl import Signal, always_comb, always_seq, block, concat, enum, intbv, modbv

MARKER = 0x4C5A


def onehot_widths(L):
    """(OH, VB, XB) of the one-hot step for L-bit LUT1 addresses: OH = longest valid ``c+k`` (= LUT1's one-hot
    width), VB = bits kept at the pointer (>= 32, and enough for the next prefix after OH bits), XB = bits
    selected at the pointer for the step. OH = 0 where XB exceeds what ``hi:lo:next word`` holds past any
    pointer (65 bits; L >= 12)."""
    oh = min(32, L + 16)
    vb = max(32, oh + L)
    xb = oh + vb
    return (oh, vb, xb) if xb <= 65 else (0, vb, xb)


def onehot_width(L):
    """Width of LUT1's one-hot ``c+k`` copy used by the block-RAM bit window (0: not used at this L)."""
    return onehot_widths(L)[0]


@block
def bit_window(clk, rst, h0, h1, h2, in_gt, in_pop, in_pop_x, in_take_s, lut1_addr, lut1_q, credit_ok, flush, flush_tag,
               t_valid, t_hdr, t_ferr, t_sym, t_cls, t_c, t_first, t_n, t_tag, idle, lut1_oh=None, lut1_re=None,
               in_after=None, lut1_t2=None, L=8,
               LUT1_SYNC=True):
    OH, VB, XB = onehot_widths(L)
    ONEHOT = LUT1_SYNC and lut1_oh is not None
    if ONEHOT and (OH == 0 or len(lut1_oh) != OH or lut1_re is None or in_after is None or lut1_t2 is None):
        raise ValueError(f"bit_window: lut1_oh must have onehot_width(L) = {OH} bits (L = {L})")
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
    lo_zero = Signal(intbv(0)[32:])   # constant 0
    chain = Signal(bool(0))    # the n-th symbol is issued now and the next stripe starts in the same cycle
    sc0 = Signal(bool(1))      # register: scount == 0
    es_n = Signal(bool(0))     # end_seen's next value
    rf_base = Signal(bool(0))  # the refill's pop as part of in_pop (adder step)
    fl_raw, fl_q = [Signal(bool(0)) for _ in range(2)]

    @always_comb
    def fw_input():
        in_data.next = h0[32:0]
        in_last.next = h0[32]
        in_nonempty.next = in_gt[0]
        hdr_bad.next = not h0[33]
        fast2.next = in_gt[1] and not h0[32] and not nload and not end_seen

    @always_comb
    def fw_start():
        start2.next = in_gt[1] and h0[33] and not h0[32] and h1[32]
        start3.next = in_gt[2] and h0[33] and not h0[32] and not h1[32]

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

    if ONEHOT:
        oh_nz = Signal(bool(0))

        @always_comb
        def fw_oh_nz():
            # the one-hot c+k is zero for invalid entries and for c+k outside 1..OH
            oh_nz.next = lut1_oh != 0

        @always_comb
        def fw_err():
            if not oh_nz:
                d_err.next = 3
            elif tot > avail:
                d_err.next = 4
            else:
                d_err.next = 0
    else:
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
        fl_raw.next = flush and flush_tag == tag and (state == st.F_RUN or state == st.F_WAIT)
        # the flush acts one cycle later (from a flip-flop), unless the stripe ended meanwhile
        fl.next = fl_q and (state == st.F_RUN or state == st.F_WAIT)

    @always_seq(clk.posedge, reset=rst)
    def fw_flush_reg():
        fl_q.next = fl_raw and not chain

    @always_comb
    def fw_go():
        go.next = state == st.F_RUN and credit_ok and (in_nonempty or end_seen) and not fl

    @always_comb
    def fw_chain():
        chain.next = go and sc0 and end_seen and (start2 or start3)

    if ONEHOT:
        @always_comb
        def fw_pop_x():
            # the refill's pop, decided late (ptr + c+k >= 32): the input FIFO selects it with one 2:1 per bit
            in_pop_x.next = go and np[5] and not end_seen
    else:
        @always_comb
        def fw_pop_x():
            # (adder step: the refill is part of in_pop; the FIFO then needs no second candidate per slot)
            in_pop_x.next = 0
            rf_base.next = go and np[5] and not end_seen

    if ONEHOT:
        @always_comb
        def fw_take():
            # a stripe start (header, chain): the input FIFO pops 1, 2 or 3 as its head flags say (start2 /
            # start3 are its own flags), so only this bit crosses from the window's control
            in_take_s.next = (state == st.F_HDR and in_nonempty and credit_ok) or chain

        @always_comb
        def fw_pop_rest():
            # the other pops (LOAD, DRAIN); stripe starts: in_take_s, the refill: in_pop_x
            in_pop.next = 0
            if fl:
                pass
            elif state == st.F_LOAD:
                if fast2:
                    in_pop.next = 2
                elif in_nonempty and not end_seen:
                    in_pop.next = 1
            elif state == st.F_DRAIN:
                if in_nonempty:
                    in_pop.next = 1

    if ONEHOT:
        fw_pop_sel = (fw_take, fw_pop_rest)
    else:   # adder step: all pops in in_pop (in_take_s stays 0; its FIFO does not take it)
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
                if rf_base:
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

        fw_pop_sel = (fw_pop,)

    @always_comb
    def fw_idle():
        idle.next = state == st.F_HDR

    if ONEHOT:
        @always_seq(clk.posedge, reset=rst)
        def fw_win_regs():
            hi.next = hi_n
            lo.next = lo_n
            ptr.next = ptr_n
    elif LUT1_SYNC:
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

    @always_comb
    def fw_es_next():
        # end_seen's next value: the window's last word is the stripe's last (zeros follow)
        es_n.next = end_seen
        if fl:
            pass
        elif state == st.F_HDR:
            if in_nonempty and credit_ok and not hdr_bad:
                if start3:
                    es_n.next = h2[32]
                elif start2:
                    es_n.next = 1
                else:
                    es_n.next = in_last
        elif state == st.F_LOAD:
            if fast2:
                es_n.next = h1[32]
            elif in_nonempty and not end_seen:
                es_n.next = in_last
        elif state == st.F_RUN:
            if go:
                if chain:
                    if start3:
                        es_n.next = h2[32]
                    else:
                        es_n.next = 1
                elif np[5] and not end_seen:
                    es_n.next = in_last

    @always_seq(clk.posedge, reset=rst)
    def fw_regs():
        t_valid.next = 0
        end_seen.next = es_n
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
                    sc0.next = in_data[16:0] == 0
                    nload.next = 0
                    if start3:
                        hi_ok.next = 1
                        lo_ok.next = 1
                        state.next = st.F_RUN
                    elif start2:
                        hi_ok.next = 1
                        lo_ok.next = 0
                        state.next = st.F_RUN
                    else:
                        state.next = st.F_LOAD
                        hi_ok.next = 0
                        lo_ok.next = 0
        elif state == st.F_LOAD:
            if fast2:
                hi_ok.next = 1
                lo_ok.next = 1
                state.next = st.F_RUN
            elif in_nonempty or end_seen:
                hi_ok.next = lo_ok
                if end_seen:
                    lo_ok.next = 0
                else:
                    lo_ok.next = 1
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
                if sc0:
                    # n-th symbol: every symbol stands for >= 1 word, so the stripe is certainly over (an
                    # error in this symbol is reported by the count stage; its flush comes with the old tag)
                    if chain:
                        # next stripe's header and window words are in the FIFO: start it now
                        pend.next = 1
                        pend_n.next = in_data[16:0]
                        tag.next = tag1
                        scount.next = in_data[16:0]
                        sc0.next = in_data[16:0] == 0
                        hi_ok.next = 1
                        if start3:
                            lo_ok.next = 1
                        else:
                            lo_ok.next = 0
                    elif end_seen or (np[5] and in_last):
                        state.next = st.F_HDR
                    else:
                        state.next = st.F_DRAIN
                else:
                    scount.next = scount - 1
                    sc0.next = scount == 1
                    if d_err != 0:
                        state.next = st.F_WAIT
        elif state == st.F_DRAIN:
            if in_nonempty and in_last:
                state.next = st.F_HDR

    if ONEHOT:
        YB = XB + 7
        yw = Signal(intbv(0)[YB:])        # register: bits [ptr - ptr % 8, +YB) of hi:lo:next word
        pf = Signal(intbv(1)[8:])         # register: one-hot ptr % 8
        vwin = Signal(intbv(0)[VB:])      # register: the VB bits at the pointer (sym_top = the top 32)
        yw_n = Signal(intbv(0)[YB:])
        pf_n = Signal(intbv(0)[8:])
        vwin_n = Signal(intbv(0)[VB:])
        xa0 = Signal(intbv(0)[32:])
        xa1 = Signal(intbv(0)[32:])
        v0 = Signal(intbv(0)[96:])
        v1 = Signal(intbv(0)[96:])
        ystep = Signal(intbv(0)[YB:])
        yz = Signal(intbv(0)[YB:])
        ysel = Signal(bool(0))
        xv = Signal(intbv(0)[XB:])
        s_run = Signal(bool(0))
        stall = Signal(bool(0))
        dhg = Signal(intbv(0)[OH:])
        ld = Signal(bool(0))
        ldw = Signal(intbv(0)[64:])
        ldx = Signal(intbv(0)[32:])
        ld96 = Signal(intbv(0)[96:])
        pn_lo = Signal(intbv(0)[3:])
        pf_z = Signal(intbv(0)[8:])
        bv = Signal(intbv(0)[VB:])
        bp = Signal(intbv(0)[L:])
        bw = Signal(intbv(0)[64:])
        hw12 = Signal(intbv(0)[64:])
        a0, a1, a2, a3 = in_after

        @always_comb
        def fw_oh_x():
            # X = bits [ptr, ptr + XB) of hi:lo:next word: the coarse register yw selected by one-hot ptr % 8
            acc = intbv(0)[XB:]
            t = modbv(0)[YB:]
            for f in range(8):
                if pf[f]:
                    t[:] = yw << f
                    acc[:] = acc | t[YB:YB - XB]
            xv.next = acc

        np_y = Signal(intbv(0)[7:])

        @always_comb
        def fw_oh_npy():
            # ptr + c+k once more, from LUT1's second copy of c+k: this adder feeds only the next yw
            np_y.next = ptr + lut1_t2

        @always_comb
        def fw_oh_words():
            # the word after the window: the input FIFO's head after no pop / after one pop (zeros past the
            # stripe's last word); the window before / after a crossing step
            if end_seen:
                xa0.next = 0
            else:
                xa0.next = a0[32:0]
            if end_seen or in_last:
                xa1.next = 0
            else:
                xa1.next = a1[32:0]

        @always_comb
        def fw_oh_v():
            v0.next = concat(hi, lo, xa0)
            v1.next = concat(lo, xw, xa1)
            ld96.next = concat(ldw, ldx)
            pn_lo.next = np[3:0]

        @always_comb
        def fw_oh_ystep():
            # yw after a RUN step: the window after it (crossing or not) at the next pointer's byte
            t = modbv(0)[96:]
            u = modbv(0)[96:]
            if np_y[5]:
                t[:] = v1
            else:
                t[:] = v0
            if np_y[5:3] == 0:
                u[:] = t
            elif np_y[5:3] == 1:
                u[:] = t << 8
            elif np_y[5:3] == 2:
                u[:] = t << 16
            else:
                u[:] = t << 24
            ystep.next = u[96:96 - YB]

        @always_comb
        def fw_oh_yz():
            # yw otherwise: after a load (pointer 0), while RUN stalls (the FIFO head may have been pushed
            # meanwhile), else held; ysel picks this instead of the step (from registers)
            u = modbv(0)[96:]
            if ptr[5:3] == 0:
                u[:] = v0
            elif ptr[5:3] == 1:
                u[:] = v0 << 8
            elif ptr[5:3] == 2:
                u[:] = v0 << 16
            else:
                u[:] = v0 << 24
            if ld:
                yz.next = ld96[96:96 - YB]
            elif state == st.F_RUN:
                yz.next = u[96:96 - YB]
            else:
                yz.next = yw
            ysel.next = ld or not (state == st.F_RUN and go)
            if ld:
                pf_z.next = 1
            else:
                pf_z.next = pf

        @always_comb
        def fw_oh_ynext():
            if ysel:
                yw_n.next = yz
            else:
                yw_n.next = ystep
            # pf likewise: the step's value decoded straight from the adder (np % 8), else pf_z
            v = intbv(0)[8:]
            v[pn_lo] = 1
            if ysel:
                pf_n.next = pf_z
            else:
                pf_n.next = v

        @always_comb
        def fw_oh_run():
            # in RUN and not at the n-th symbol of a stripe whose last word is in: a step is the only way on
            # (from three flip-flops; a stall holds the registers by their enable, a flush is not looked
            # at: after it the next header load sets them)
            s_run.next = state == st.F_RUN and not (sc0 and end_seen)
            stall.next = state == st.F_RUN and not go

        @always_comb
        def fw_oh_gate():
            if s_run:
                dhg.next = lut1_oh
            else:
                dhg.next = 0

        @always_comb
        def fw_oh_load():
            # a load: the window after it (pointer 0) and the FIFO head after its pops (the word after the
            # window; a header-only start leads to LOAD, whose own load sets it), from registers
            ld.next = 0
            ldw.next = 0
            ldx.next = 0
            if state == st.F_HDR:
                if in_nonempty and credit_ok and not hdr_bad:
                    ld.next = 1
                    if start3:
                        ldw.next = concat(h1[32:0], h2[32:0])
                        if not h2[32]:
                            ldx.next = a3[32:0]
                    elif start2:
                        ldw.next = concat(h1[32:0], lo_zero)
            elif state == st.F_LOAD:
                if fast2:
                    ld.next = 1
                    ldw.next = concat(h0[32:0], h1[32:0])
                    if not h1[32]:
                        ldx.next = a2[32:0]
                elif in_nonempty or end_seen:
                    ld.next = 1
                    ldw.next = concat(lo, xw)
                    if not (end_seen or in_last):
                        ldx.next = a1[32:0]
            elif state == st.F_RUN:
                if credit_ok and end_seen and sc0 and (start2 or start3):
                    ld.next = 1
                    if start3:
                        ldw.next = concat(h1[32:0], h2[32:0])
                        if not h2[32]:
                            ldx.next = a3[32:0]
                    else:
                        ldw.next = concat(h1[32:0], lo_zero)

        @always_comb
        def fw_oh_b():
            # the OR term of loads (zero in RUN, whose step value comes from the AND-OR). Only the cases that
            # can be a load are told apart, and by flip-flops where possible: the value matters only if the
            # load happens (else the state is not RUN next, or RUN stalls and the enable holds)
            if state == st.F_HDR:
                bw.next = hw12
            elif state == st.F_LOAD:
                # RUN follows LOAD by fast2 (only without nload) or by the second one-word load (nload)
                if nload:
                    bw.next = concat(lo, xw)
                else:
                    bw.next = concat(h0[32:0], h1[32:0])
            elif state == st.F_RUN and sc0 and end_seen:
                bw.next = hw12
            else:
                bw.next = 0

        @always_comb
        def fw_oh_bv():
            if start3:
                hw12.next = concat(h1[32:0], h2[32:0])
            else:
                hw12.next = concat(h1[32:0], lo_zero)
            bv.next = bw[64:64 - VB]
            bp.next = bw[64:64 - L]

        @always_comb
        def fw_oh_step():
            # AND-OR by the one-hot c+k: next bits at the pointer and next LUT1 address
            av = intbv(0)[VB:]
            ap = intbv(0)[L:]
            t = modbv(0)[XB:]
            u = modbv(0)[VB:]
            for d in range(OH):
                if dhg[d]:
                    t[:] = xv << (d + 1)
                    av[:] = av | t[XB:XB - VB]
                    u[:] = vwin << (d + 1)
                    ap[:] = ap | u[VB:VB - L]
            vwin_n.next = av | bv
            pref_n.next = ap | bp

        @always_comb
        def fw_oh_sym():
            sym_top.next = vwin[VB:VB - 32]

        @always_seq(clk.posedge, reset=rst)
        def fw_oh_regs():
            yw.next = yw_n
            pf.next = pf_n
            if not stall:
                vwin.next = vwin_n

        @always_comb
        def fw_oh_re():
            lut1_re.next = not stall

        extra = (fw_oh_nz, fw_oh_npy, fw_xword, fw_oh_x, fw_oh_words, fw_oh_v, fw_oh_ystep, fw_oh_yz, fw_oh_ynext, fw_oh_run,
                 fw_oh_gate, fw_oh_load, fw_oh_b, fw_oh_bv, fw_oh_step, fw_oh_sym, fw_oh_regs, fw_oh_re)
    elif LUT1_SYNC:
        extra = (fw_xword, fw_v96, fw_vshift, fw_pref_next)
    else:
        extra = (fw_cur_concat, fw_cur_shift, fw_cur_sym)
    return extra + (fw_input, fw_start, fw_win_next, fw_prefix, fw_next_ptr, fw_avail, fw_err, fw_tag, fw_flush, fw_flush_reg,
            fw_go, fw_chain, fw_pop_x, fw_pop_sel, fw_idle, fw_win_regs, fw_es_next, fw_regs)
