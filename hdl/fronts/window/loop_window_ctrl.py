"""The window loop's stripe control, shared by both decode steps: header parser, state, window registers.

Stage F of the window front is the 64-bit bit window, the bit pointer and the header parser (the decoder's
only 1-cycle loop). The window is two 32-bit registers ``hi:lo`` and a pointer ``ptr`` (0..31) to the first
unused bit of ``hi``. Each cycle in state RUN the loop reads LUT1 at the L-bit prefix
``(hi:lo << ptr)[63:64-L]``, issues one symbol token and advances ``ptr`` by the symbol's total length ``c+k``;
when ``ptr`` crosses 32 the window shifts by one word (``hi <= lo``, ``lo <= next input word``) in the same
cycle, so word boundaries cost no bubble. How the next prefix is found is the decode step's
(:mod:`~lutzip.hdl.fronts.window.loop_window_adder`, :mod:`~lutzip.hdl.fronts.window.loop_window_onehot`):
this block is everything both steps share, the stripe control and the window registers ``hi``, ``lo``, ``ptr``.

The loop does not know exactly where a stripe ends (zero-run lengths are decoded later). Every symbol
stands for at least one word, so after ``n`` symbols the stripe is certainly over: the loop then moves
straight on to the next stripe: in the cycle of the n-th symbol it takes the next header and both window
words from the input FIFO when they are there (``chain``), so consecutive stripes follow without a bubble.
The header's ``n`` and tag travel to the count stage with the stripe's first symbol token (``t_first``);
only a bad header makes a token of its own.
Before that it decodes *speculatively*; the count stage (:mod:`lutzip.hdl.stages.count_stage`) drops tokens
past the stripe's end and raises ``flush`` (tagged with the stripe's ``tag``), after which the loop
discards input through tlast and parses the next header. A flush whose tag is not the current stripe's
(the loop already moved on) is ignored. After a prefix / overrun error the loop stops (WAIT) until the
flush, which always comes: the error token is among the stripe's first ``n - 1`` symbols (an error in the
n-th symbol needs no wait).

Interface
---------
clk, rst                 clock, synchronous reset
h0, h1, h2 [34]          the three oldest input FIFO entries ``marker_ok | tlast | tdata``
                         (:mod:`lutzip.hdl.stages.input_fifo`; marker_ok = tdata[31:16] == MARKER, computed on push)
in_gt[4]                 registered number of entries in the input FIFO as a thermometer code (bit i: > i)
lut1_q[15]               the LUT1 entry of the current prefix (``c+k`` = ``lut1_q[6:0]``, class, ``c``)
d_err[4]                 (from the step) the current symbol's error: 0, 3 invalid prefix, 4 overrun
sym_top[32]              (from the step) the 32 bits at the pointer
credit_ok                registered: room downstream for one more token
flush, flush_tag[T]      one-cycle pulse from the count stage: the stripe with this tag is finished
t_valid, t_hdr, t_ferr[4], t_sym[32], t_cls[4], t_c[4], t_first, t_n[16], t_tag[T]
                         (out, registered) the token: bad header (t_hdr, t_ferr = 1, t_sym = header word) or
                         symbol (t_sym = 32 bits at the pointer, t_ferr = d_err; t_first on a stripe's first
                         symbol, with t_n = n - 1 and t_tag of its header)
idle                     (out) waiting for a header
w                        (out) :class:`WindowState`, the state a step reads

The input FIFO pops each step decides itself from ``w`` (``in_pop`` and, with the one-hot step, the late
``in_pop_x`` and ``in_take_s``): where the header and the window words are taken in one cycle when present
(3, or 2 for a one-word payload), else the two window words (2) or one at a time.
"""
from myhdl import Signal, always_comb, always_seq, block, enum, intbv, modbv

#: States of the window loop: waiting for a header, loading the window, decoding, waiting for the flush
#: after an error, discarding input through tlast.
ST = enum("F_HDR", "F_LOAD", "F_RUN", "F_WAIT", "F_DRAIN")


class WindowState:
    """The window loop's state that both decode steps read (a MyHDL interface; driven by
    :func:`loop_window_ctrl`, members convert to ``<name>_<member>``).

    Attributes
    ----------
    state : Signal(ST)
        F_HDR, F_LOAD, F_RUN, F_WAIT or F_DRAIN.
    hi, lo : Signal(intbv[32])
        The window registers; ``ptr`` (5 bits) points at the first unused bit of ``hi``.
    tot, np, avail : Signal
        LUT1's ``c+k``, ``ptr + c+k`` (7 bits; bit 5: the step crosses into ``lo``), bits left in the window.
    in_data, in_last, in_nonempty, hdr_bad : Signal
        The input FIFO's head word, its tlast, the FIFO holds an entry, the head is not a good header.
    start2, start3 : Signal(bool)
        A good header with a one-word payload / with two payload words is in the FIFO.
    fast2 : Signal(bool)
        LOAD can take both window words at once.
    end_seen, nload : Signal(bool)
        The window's last word is the stripe's last; LOAD has loaded its first word.
    xw : Signal(intbv[32])
        The word a refill would bring in (zeros past the stripe's last word).
    fl, go, chain, sc0 : Signal(bool)
        A flush acts now; RUN issues a symbol now; the n-th symbol is issued now and the next stripe starts
        in the same cycle; the symbol counter is at the stripe's last symbol (register).
    """

    def __init__(self):
        self.state = Signal(ST.F_HDR)
        self.hi = Signal(intbv(0)[32:])
        self.lo = Signal(intbv(0)[32:])
        self.ptr = Signal(intbv(0)[5:])
        self.tot = Signal(intbv(0)[6:])
        self.np = Signal(intbv(0)[7:])
        self.avail = Signal(intbv(0)[7:])
        self.in_data = Signal(intbv(0)[32:])
        self.in_last = Signal(bool(0))
        self.in_nonempty = Signal(bool(0))
        self.hdr_bad = Signal(bool(0))
        self.start2 = Signal(bool(0))   # good header + a one-word payload in the FIFO
        self.start3 = Signal(bool(0))   # good header + two payload words in the FIFO
        self.fast2 = Signal(bool(0))
        self.end_seen = Signal(bool(0))
        self.nload = Signal(bool(0))
        self.xw = Signal(intbv(0)[32:])
        self.fl = Signal(bool(0))
        self.go = Signal(bool(0))
        self.chain = Signal(bool(0))    # the n-th symbol is issued now and the next stripe starts in the same cycle
        self.sc0 = Signal(bool(1))      # register: scount == 0


@block
def loop_window_ctrl(clk, rst, h0, h1, h2, in_gt, lut1_q, d_err, sym_top, credit_ok, flush, flush_tag,
                     t_valid, t_hdr, t_ferr, t_sym, t_cls, t_c, t_first, t_n, t_tag, idle, w):
    hi_ok = Signal(bool(0))
    lo_ok = Signal(bool(0))
    hi_n = Signal(intbv(0)[32:])
    lo_n = Signal(intbv(0)[32:])
    ptr_n = Signal(intbv(0)[5:])
    scount = Signal(intbv(0)[16:])
    pend = Signal(bool(0))
    pend_n = Signal(intbv(0)[16:])
    tag = Signal(modbv(0)[len(t_tag):])
    tag1 = Signal(modbv(0)[len(t_tag):])
    es_n = Signal(bool(0))     # end_seen's next value
    fl_raw, fl_q = [Signal(bool(0)) for _ in range(2)]

    @always_comb
    def fw_input():
        w.in_data.next = h0[32:0]
        w.in_last.next = h0[32]
        w.in_nonempty.next = in_gt[0]
        w.hdr_bad.next = not h0[33]
        w.fast2.next = in_gt[1] and not h0[32] and not w.nload and not w.end_seen

    @always_comb
    def fw_start():
        w.start2.next = in_gt[1] and h0[33] and not h0[32] and h1[32]
        w.start3.next = in_gt[2] and h0[33] and not h0[32] and not h1[32]

    @always_comb
    def fw_win_next():
        # next state of the window: refill / stripe start / load, as in fw_regs
        hi_n.next = w.hi
        lo_n.next = w.lo
        ptr_n.next = w.ptr
        if w.fl:
            pass
        elif w.state == ST.F_HDR:
            if w.in_nonempty and credit_ok and not w.hdr_bad:
                ptr_n.next = 0
                if w.start3:
                    hi_n.next = h1[32:0]
                    lo_n.next = h2[32:0]
                elif w.start2:
                    hi_n.next = h1[32:0]
                    lo_n.next = 0
                else:
                    hi_n.next = 0
                    lo_n.next = 0
        elif w.state == ST.F_LOAD:
            if w.fast2:
                hi_n.next = h0[32:0]
                lo_n.next = h1[32:0]
            elif w.in_nonempty or w.end_seen:
                hi_n.next = w.lo
                if w.end_seen:
                    lo_n.next = 0
                else:
                    lo_n.next = w.in_data
        elif w.state == ST.F_RUN:
            if w.go:
                if w.chain:
                    ptr_n.next = 0
                    hi_n.next = h1[32:0]
                    if w.start3:
                        lo_n.next = h2[32:0]
                    else:
                        lo_n.next = 0
                else:
                    ptr_n.next = w.np[5:]
                    if w.np[5]:
                        hi_n.next = w.lo
                        if w.end_seen:
                            lo_n.next = 0
                        else:
                            lo_n.next = w.in_data

    @always_comb
    def fw_xword():
        # the word a refill would bring in (zeros past the stripe's last word)
        if w.end_seen:
            w.xw.next = 0
        else:
            w.xw.next = w.in_data

    @always_comb
    def fw_tot():
        w.tot.next = lut1_q[6:0]

    @always_comb
    def fw_next_ptr():
        w.np.next = w.ptr + w.tot

    @always_comb
    def fw_avail():
        if lo_ok:
            w.avail.next = 64 - w.ptr
        elif hi_ok:
            w.avail.next = 32 - w.ptr
        else:
            w.avail.next = 0

    @always_comb
    def fw_tag():
        tag1.next = tag + 1

    @always_comb
    def fw_flush():
        fl_raw.next = flush and flush_tag == tag and (w.state == ST.F_RUN or w.state == ST.F_WAIT)
        # the flush acts one cycle later (from a flip-flop), unless the stripe ended meanwhile
        w.fl.next = fl_q and (w.state == ST.F_RUN or w.state == ST.F_WAIT)

    @always_seq(clk.posedge, reset=rst)
    def fw_flush_reg():
        fl_q.next = fl_raw and not w.chain

    @always_comb
    def fw_go():
        w.go.next = w.state == ST.F_RUN and credit_ok and (w.in_nonempty or w.end_seen) and not w.fl

    @always_comb
    def fw_chain():
        w.chain.next = w.go and w.sc0 and w.end_seen and (w.start2 or w.start3)

    @always_comb
    def fw_idle():
        idle.next = w.state == ST.F_HDR

    @always_seq(clk.posedge, reset=rst)
    def fw_win_regs():
        w.hi.next = hi_n
        w.lo.next = lo_n
        w.ptr.next = ptr_n

    @always_comb
    def fw_es_next():
        # end_seen's next value: the window's last word is the stripe's last (zeros follow)
        es_n.next = w.end_seen
        if w.fl:
            pass
        elif w.state == ST.F_HDR:
            if w.in_nonempty and credit_ok and not w.hdr_bad:
                if w.start3:
                    es_n.next = h2[32]
                elif w.start2:
                    es_n.next = 1
                else:
                    es_n.next = w.in_last
        elif w.state == ST.F_LOAD:
            if w.fast2:
                es_n.next = h1[32]
            elif w.in_nonempty and not w.end_seen:
                es_n.next = w.in_last
        elif w.state == ST.F_RUN:
            if w.go:
                if w.chain:
                    if w.start3:
                        es_n.next = h2[32]
                    else:
                        es_n.next = 1
                elif w.np[5] and not w.end_seen:
                    es_n.next = w.in_last

    @always_seq(clk.posedge, reset=rst)
    def fw_regs():
        t_valid.next = 0
        w.end_seen.next = es_n
        if w.fl:
            if w.end_seen:
                w.state.next = ST.F_HDR
            else:
                w.state.next = ST.F_DRAIN
        elif w.state == ST.F_HDR:
            if w.in_nonempty and credit_ok:
                if w.hdr_bad:
                    t_valid.next = 1
                    t_hdr.next = 1
                    t_ferr.next = 1
                    t_sym.next = w.in_data
                    t_c.next = 0
                    t_cls.next = 0
                    t_first.next = 0
                    if not w.in_last:
                        w.state.next = ST.F_DRAIN
                else:
                    pend.next = 1
                    pend_n.next = w.in_data[16:0]
                    tag.next = tag1
                    scount.next = w.in_data[16:0]
                    w.sc0.next = w.in_data[16:0] == 0
                    w.nload.next = 0
                    if w.start3:
                        hi_ok.next = 1
                        lo_ok.next = 1
                        w.state.next = ST.F_RUN
                    elif w.start2:
                        hi_ok.next = 1
                        lo_ok.next = 0
                        w.state.next = ST.F_RUN
                    else:
                        w.state.next = ST.F_LOAD
                        hi_ok.next = 0
                        lo_ok.next = 0
        elif w.state == ST.F_LOAD:
            if w.fast2:
                hi_ok.next = 1
                lo_ok.next = 1
                w.state.next = ST.F_RUN
            elif w.in_nonempty or w.end_seen:
                hi_ok.next = lo_ok
                if w.end_seen:
                    lo_ok.next = 0
                else:
                    lo_ok.next = 1
                w.nload.next = 1
                if w.nload:
                    w.state.next = ST.F_RUN
        elif w.state == ST.F_RUN:
            if w.go:
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
                if w.np[5]:
                    hi_ok.next = lo_ok
                    if w.end_seen:
                        lo_ok.next = 0
                    else:
                        lo_ok.next = 1
                if w.sc0:
                    # n-th symbol: every symbol stands for >= 1 word, so the stripe is certainly over (an
                    # error in this symbol is reported by the count stage; its flush comes with the old tag)
                    if w.chain:
                        # next stripe's header and window words are in the FIFO: start it now
                        pend.next = 1
                        pend_n.next = w.in_data[16:0]
                        tag.next = tag1
                        scount.next = w.in_data[16:0]
                        w.sc0.next = w.in_data[16:0] == 0
                        hi_ok.next = 1
                        if w.start3:
                            lo_ok.next = 1
                        else:
                            lo_ok.next = 0
                    elif w.end_seen or (w.np[5] and w.in_last):
                        w.state.next = ST.F_HDR
                    else:
                        w.state.next = ST.F_DRAIN
                else:
                    scount.next = scount - 1
                    w.sc0.next = scount == 1
                    if d_err != 0:
                        w.state.next = ST.F_WAIT
        elif w.state == ST.F_DRAIN:
            if w.in_nonempty and w.in_last:
                w.state.next = ST.F_HDR

    return (fw_input, fw_start, fw_win_next, fw_xword, fw_tot, fw_next_ptr, fw_avail, fw_tag, fw_flush,
            fw_flush_reg, fw_go, fw_chain, fw_idle, fw_win_regs, fw_es_next, fw_regs)
