"""Stage F of the window front, one-hot step (``decoder_core`` ``STEP="onehot"``, what ``hdl synth`` builds for the HX8K).

The stripe control, the window registers and the token are :mod:`~lutzip.hdl.fronts.window.loop_window_ctrl`'s
(shared with the adder step, :mod:`~lutzip.hdl.fronts.window.loop_window_adder`); this block adds how the loop
finds the next prefix, the symbol-error check and the input FIFO pops. It needs the block-RAM LUT1 with its
one-hot ``c+k`` copy (:mod:`lutzip.hdl.stages.lut1_table`, ``OH = onehot_width(L)`` > 0, i.e. L <= 11) and the
deferred-pop input FIFO (:mod:`lutzip.hdl.stages.input_fifo_defer`).

The step's next state is not selected from ``(hi:lo:next word) << (ptr + c+k)`` (an adder, then a 7-bit
shifter: 8 LUT levels from ``ptr`` on iCE40) but by two AND-ORs. Registers: ``vwin`` (the ``VB`` bits at the
pointer; ``sym_top`` is its top 32), ``yw`` (``hi:lo:next word`` from the pointer's byte on, ``XB + 7`` bits)
and ``pf`` (``ptr mod 8`` one-hot). ``X`` (the ``XB`` bits at the pointer) = ``yw << ptr mod 8``, an 8-term
AND-OR by ``pf``; the next ``vwin`` = ``X << c+k``, an AND-OR by LUT1's one-hot ``c+k``; the next LUT1
address = ``vwin << c+k`` the same way (3 LUT levels after the RAM). The adder ``ptr + c+k`` still runs, off
that loop: it decodes the next ``pf`` and drives the refill; a second adder from ``lut1_t2`` selects the next
``yw`` (the window before / after the refill at the next pointer's byte; the word after the window is the
input FIFO's head after this cycle's pops, ``in_after``). Loads enter by a last 2:1 selected by ``s_run`` (three
flip-flops: the AND-OR's value or the load term, chosen by the state alone; the cases that cannot load are
don't-cares); a stall holds ``vwin`` by its enable and LUT1 by its read enable (``lut1_re``); in a flush cycle
these registers may take any value (the next header load sets them). The refill's pop is ``in_pop_x`` (late),
a stripe start is ``in_take_s`` (the FIFO pops what its own head flags say), the rest of the pops ``in_pop``.
``c+k`` is limited to ``OH = L + 16`` (the longest valid symbol; longer entries are invalid prefixes, error 3).

Interface
---------
clk, rst, h0, h1, h2, in_gt, credit_ok, flush, flush_tag, t_*, idle
                         as :mod:`~lutzip.hdl.fronts.window.loop_window_ctrl`
in_pop[2], in_pop_x, in_take_s
                         (out, comb) input FIFO pops: ``in_pop`` for a word loaded or discarded in LOAD / DRAIN,
                         ``in_pop_x`` = 1 for the refill of a decode step (late: it depends on LUT1's ``c+k``),
                         ``in_take_s`` a stripe start (the FIFO pops the header and the window words it holds)
in_after                 four signals: the input FIFO's head after popping 0..3 entries (including a word
                         pushed in this cycle; :mod:`lutzip.hdl.stages.input_fifo_defer`)
lut1_addr[L], lut1_q[15] (out) LUT1 address (the next state's prefix), (in) the LUT1 entry of the current prefix
lut1_oh[OH], lut1_re     (in) the entry's ``c+k`` one-hot, (out) LUT1's read enable (low while the loop stalls)
lut1_t2[6]               (in) a second copy of LUT1's ``c+k`` (feeds only the adder of ``yw``)
L                        LUT1 address bits (``onehot_width(L)`` must be > 0)
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.fronts.window.loop_window_ctrl import ST, WindowState, loop_window_ctrl


def onehot_widths(L):
    """Widths of the one-hot step for L-bit LUT1 addresses.

    Parameters
    ----------
    L : int
        LUT1 address bits.

    Returns
    -------
    tuple of int
        ``(OH, VB, XB)``: OH = longest valid ``c+k`` (= LUT1's one-hot width), VB = bits kept at the pointer
        (>= 32, and enough for the next prefix after OH bits), XB = bits selected at the pointer for the step.
        OH = 0 where XB exceeds what ``hi:lo:next word`` holds past any pointer (65 bits; L >= 12).
    """
    oh = min(32, L + 16)
    vb = max(32, oh + L)
    xb = oh + vb
    return (oh, vb, xb) if xb <= 65 else (0, vb, xb)


def onehot_width(L):
    """Width of LUT1's one-hot ``c+k`` copy for the one-hot step.

    Parameters
    ----------
    L : int
        LUT1 address bits.

    Returns
    -------
    int
        The width, or 0 where the one-hot step does not apply at this L (L >= 12).
    """
    return onehot_widths(L)[0]


@block
def loop_window_onehot(clk, rst, h0, h1, h2, in_gt, in_pop, in_pop_x, in_take_s, in_after, lut1_addr, lut1_q,
                       lut1_oh, lut1_re, lut1_t2, credit_ok, flush, flush_tag, t_valid, t_hdr, t_ferr, t_sym,
                       t_cls, t_c, t_first, t_n, t_tag, idle, L=8):
    OH, VB, XB = onehot_widths(L)
    if OH == 0:
        raise UnsupportedError(f"loop_window_onehot: L = {L}: the one-hot step needs L <= 11")
    if len(lut1_oh) != OH:
        raise UnsupportedError(f"loop_window_onehot: lut1_oh has {len(lut1_oh)} bits, needs onehot_width(L) = "
                               f"{OH} (L = {L})")
    if len(lut1_t2) != 6 or len(in_after) != 4:
        raise UnsupportedError("loop_window_onehot: lut1_t2 must have 6 bits and in_after four signals")
    w = WindowState()
    d_err = Signal(intbv(0)[4:])
    sym_top = Signal(intbv(0)[32:])   # the 32 bits at the pointer (the top of vwin)
    pref_n = Signal(intbv(0)[L:])     # the next state's prefix
    lo_zero = Signal(intbv(0)[32:])   # constant 0
    ctrl = loop_window_ctrl(clk, rst, h0, h1, h2, in_gt, lut1_q, d_err, sym_top, credit_ok, flush, flush_tag,
                            t_valid, t_hdr, t_ferr, t_sym, t_cls, t_c, t_first, t_n, t_tag, idle, w)
    oh_nz = Signal(bool(0))

    @always_comb
    def fw_oh_nz():
        # the one-hot c+k is zero for invalid entries and for c+k outside 1..OH
        oh_nz.next = lut1_oh != 0

    @always_comb
    def fw_err():
        if not oh_nz:
            d_err.next = 3
        elif w.tot > w.avail:
            d_err.next = 4
        else:
            d_err.next = 0

    @always_comb
    def fw_pop_x():
        # the refill's pop, decided late (ptr + c+k >= 32): the input FIFO selects it with one 2:1 per bit
        in_pop_x.next = w.go and w.np[5] and not w.end_seen

    @always_comb
    def fw_take():
        # a stripe start (header, chain): the input FIFO pops 1, 2 or 3 as its head flags say (start2 /
        # start3 are its own flags), so only this bit crosses from the window's control
        in_take_s.next = (w.state == ST.F_HDR and w.in_nonempty and credit_ok) or w.chain

    @always_comb
    def fw_pop_rest():
        # the other pops (LOAD, DRAIN); stripe starts: in_take_s, the refill: in_pop_x
        in_pop.next = 0
        if w.fl:
            pass
        elif w.state == ST.F_LOAD:
            if w.fast2:
                in_pop.next = 2
            elif w.in_nonempty and not w.end_seen:
                in_pop.next = 1
        elif w.state == ST.F_DRAIN:
            if w.in_nonempty:
                in_pop.next = 1

    @always_comb
    def fw_prefix():
        # LUT1 read synchronously (block RAM): its address is the *next* prefix, so lut1_q holds the
        # entry of the current prefix during the cycle
        lut1_addr.next = pref_n

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
        np_y.next = w.ptr + lut1_t2

    @always_comb
    def fw_oh_words():
        # the word after the window: the input FIFO's head after no pop / after one pop (zeros past the
        # stripe's last word); the window before / after a crossing step
        if w.end_seen:
            xa0.next = 0
        else:
            xa0.next = a0[32:0]
        if w.end_seen or w.in_last:
            xa1.next = 0
        else:
            xa1.next = a1[32:0]

    @always_comb
    def fw_oh_v():
        v0.next = concat(w.hi, w.lo, xa0)
        v1.next = concat(w.lo, w.xw, xa1)
        ld96.next = concat(ldw, ldx)
        pn_lo.next = w.np[3:0]

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
        if w.ptr[5:3] == 0:
            u[:] = v0
        elif w.ptr[5:3] == 1:
            u[:] = v0 << 8
        elif w.ptr[5:3] == 2:
            u[:] = v0 << 16
        else:
            u[:] = v0 << 24
        if ld:
            yz.next = ld96[96:96 - YB]
        elif w.state == ST.F_RUN:
            yz.next = u[96:96 - YB]
        else:
            yz.next = yw
        ysel.next = ld or not (w.state == ST.F_RUN and w.go)
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
        s_run.next = w.state == ST.F_RUN and not (w.sc0 and w.end_seen)
        stall.next = w.state == ST.F_RUN and not w.go

    @always_comb
    def fw_oh_load():
        # a load: the window after it (pointer 0) and the FIFO head after its pops (the word after the
        # window; a header-only start leads to LOAD, whose own load sets it), from registers
        ld.next = 0
        ldw.next = 0
        ldx.next = 0
        if w.state == ST.F_HDR:
            if w.in_nonempty and credit_ok and not w.hdr_bad:
                ld.next = 1
                if w.start3:
                    ldw.next = concat(h1[32:0], h2[32:0])
                    if not h2[32]:
                        ldx.next = a3[32:0]
                elif w.start2:
                    ldw.next = concat(h1[32:0], lo_zero)
        elif w.state == ST.F_LOAD:
            if w.fast2:
                ld.next = 1
                ldw.next = concat(h0[32:0], h1[32:0])
                if not h1[32]:
                    ldx.next = a2[32:0]
            elif w.in_nonempty or w.end_seen:
                ld.next = 1
                ldw.next = concat(w.lo, w.xw)
                if not (w.end_seen or w.in_last):
                    ldx.next = a1[32:0]
        elif w.state == ST.F_RUN:
            if credit_ok and w.end_seen and w.sc0 and (w.start2 or w.start3):
                ld.next = 1
                if w.start3:
                    ldw.next = concat(h1[32:0], h2[32:0])
                    if not h2[32]:
                        ldx.next = a3[32:0]
                else:
                    ldw.next = concat(h1[32:0], lo_zero)

    @always_comb
    def fw_oh_b():
        # the load term, taken by fw_oh_step's last 2:1 where s_run is low (in RUN that is sc0 and end_seen:
        # the next header's load, so RUN selects like HDR). Only the cases that can be a load are told apart,
        # by the state alone: the value matters only if the load happens (else the state is not RUN next, or
        # RUN stalls and the enable holds)
        if w.state == ST.F_HDR or w.state == ST.F_RUN:
            bw.next = hw12
        elif w.state == ST.F_LOAD:
            # RUN follows LOAD by fast2 (only without nload) or by the second one-word load (nload)
            if w.nload:
                bw.next = concat(w.lo, w.xw)
            else:
                bw.next = concat(h0[32:0], h1[32:0])
        else:
            bw.next = 0

    @always_comb
    def fw_oh_bv():
        if w.start3:
            hw12.next = concat(h1[32:0], h2[32:0])
        else:
            hw12.next = concat(h1[32:0], lo_zero)
        bv.next = bw[64:64 - VB]
        bp.next = bw[64:64 - L]

    @always_comb
    def fw_oh_step():
        # AND-OR by the one-hot c+k: next bits at the pointer and next LUT1 address; a 2:1 by s_run (a
        # flip-flop function) picks it or the load term last (a step and a load never meet: s_run is low in
        # every case that can load)
        av = intbv(0)[VB:]
        ap = intbv(0)[L:]
        t = modbv(0)[XB:]
        u = modbv(0)[VB:]
        for d in range(OH):
            if lut1_oh[d]:
                t[:] = xv << (d + 1)
                av[:] = av | t[XB:XB - VB]
                u[:] = vwin << (d + 1)
                ap[:] = ap | u[VB:VB - L]
        if s_run:
            vwin_n.next = av
            pref_n.next = ap
        else:
            vwin_n.next = bv
            pref_n.next = bp

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


    return (ctrl, fw_oh_nz, fw_err, fw_pop_x, fw_take, fw_pop_rest, fw_prefix, fw_oh_npy, fw_oh_x, fw_oh_words,
            fw_oh_v, fw_oh_ystep, fw_oh_yz, fw_oh_ynext, fw_oh_run, fw_oh_load, fw_oh_b, fw_oh_bv,
            fw_oh_step, fw_oh_sym, fw_oh_regs, fw_oh_re)
