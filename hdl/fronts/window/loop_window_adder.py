"""Stage F of the window front, adder step: the next state is ``(hi:lo:next word) << (ptr + c+k)``.

The stripe control, the window registers and the token are :mod:`~lutzip.hdl.fronts.window.loop_window_ctrl`'s
(shared with the one-hot step); this block adds how the loop finds the next prefix, the symbol-error check and
the input FIFO pops. The loop is exactly LUT1 -> ptr + (c+k) -> next ptr / window -> prefix -> LUT1:

* ``LUT1_SYNC`` (block-RAM LUT1, registered read): the LUT1 block RAM holds the loop's register. Its address is
  the next state's prefix, selected straight by ``np = ptr + c+k`` from ``hi:lo:next word`` (``fw_vshift``),
  so the refill multiplexer is not between LUT1 and its next address; the next 32 bits at the pointer are
  registered beside it (``sym_top``).
* else (distributed LUT1, asynchronous read): the window registers hold the loop's register and LUT1 is read
  at the current prefix, selected from them (a registered address would let yosys absorb it into a block RAM).

Index extraction, LUT2, LUT3 and counting are in later stages (the token carries the 32 bits at the pointer).
All pops are in ``in_pop`` (the refill's too), so the input FIFO needs one candidate per slot
(:mod:`lutzip.hdl.stages.input_fifo_shift` / :mod:`lutzip.hdl.stages.input_fifo_ring`).

Interface
---------
clk, rst, h0, h1, h2, in_gt, credit_ok, flush, flush_tag, t_*, idle
                         as :mod:`~lutzip.hdl.fronts.window.loop_window_ctrl`
in_pop[2]                (out, comb) entries to pop this cycle: a discarded word, a refill (1), or at a stripe
                         start the header and the window words taken in one cycle when present (3, or 2 for a
                         one-word payload), else the two window words (2) or one at a time
lut1_addr[L], lut1_q[15] (out) LUT1 address, (in) the LUT1 entry of the current prefix: with ``LUT1_SYNC`` the
                         address is the next state's prefix, else the current prefix
L, LUT1_SYNC             LUT1 address bits; LUT1 read registered (block RAM) or not
STATES                   code tables (docs/FORMAT.md section 2.1): with 2, a state register (A at each stripe
                         start, LUT1's next-state bit ``lut1_q[15]`` after each symbol) is one more LUT1 address
                         bit: ``lut1_addr`` = state << L | prefix (L + 1 bits), the next state's with ``LUT1_SYNC``
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv, modbv

from lutzip.hdl.fronts.window.loop_window_ctrl import ST, WindowState, loop_window_ctrl


@block
def loop_window_adder(clk, rst, h0, h1, h2, in_gt, in_pop, lut1_addr, lut1_q, credit_ok, flush, flush_tag,
                      t_valid, t_hdr, t_ferr, t_sym, t_cls, t_c, t_first, t_n, t_tag, idle, L=8, LUT1_SYNC=True,
                      STATES=1):
    w = WindowState()
    two = STATES == 2
    st_q = Signal(bool(0))   # STATES=2: the state the current symbol is read in (0: A, 1: B)
    st_n = Signal(bool(0))   # its next value: A at a stripe start, LUT1's next-state bit after each symbol
    states = ()
    if two:
        @always_comb
        def fw_state_next():
            st_n.next = st_q
            if w.fl:
                pass
            elif w.state == ST.F_HDR:
                if w.in_nonempty and credit_ok and not w.hdr_bad:
                    st_n.next = 0
            elif w.state == ST.F_RUN:
                if w.go:
                    if w.chain:
                        st_n.next = 0
                    else:
                        st_n.next = lut1_q[15]

        @always_seq(clk.posedge, reset=rst)
        def fw_state_reg():
            st_q.next = st_n

        states = (fw_state_next, fw_state_reg)
    d_err = Signal(intbv(0)[4:])
    sym_top = Signal(intbv(0)[32:])   # (hi:lo << ptr)[63:32], the 32 bits at the pointer
    rf_base = Signal(bool(0))         # the refill's pop (part of in_pop)
    ctrl = loop_window_ctrl(clk, rst, h0, h1, h2, in_gt, lut1_q, d_err, sym_top, credit_ok, flush, flush_tag,
                            t_valid, t_hdr, t_ferr, t_sym, t_cls, t_c, t_first, t_n, t_tag, idle, w)

    if LUT1_SYNC:
        v96 = Signal(intbv(0)[96:])
        shv = Signal(modbv(0)[96:])
        sym_n = Signal(intbv(0)[32:])
        pref_q = Signal(intbv(0)[L:])     # register: the current L-bit prefix (= sym_top[32:32-L])
        pref_n = Signal(intbv(0)[L:])

        @always_comb
        def fw_v96():
            v96.next = concat(w.hi, w.lo, w.xw)

        @always_comb
        def fw_vshift():
            # bits [np, np + 32) of hi:lo:next word = the next state's 32 bits at the pointer after a RUN step:
            # selected straight by np, so the refill multiplexer is not between LUT1 and its next address
            shv.next = v96 << w.np

        @always_comb
        def fw_pref_next():
            # next state's prefix / top 32 bits, case by case as the control's fw_win_next (ptr is 0 after
            # every load)
            pref_n.next = pref_q
            sym_n.next = sym_top
            if w.fl:
                pass
            elif w.state == ST.F_HDR:
                if w.in_nonempty and credit_ok and not w.hdr_bad:
                    if w.start3 or w.start2:
                        pref_n.next = h1[32:32 - L]
                        sym_n.next = h1[32:0]
                    else:
                        pref_n.next = 0
                        sym_n.next = 0
            elif w.state == ST.F_LOAD:
                if w.fast2:
                    pref_n.next = h0[32:32 - L]
                    sym_n.next = h0[32:0]
                elif w.in_nonempty or w.end_seen:
                    pref_n.next = w.lo[32:32 - L]
                    sym_n.next = w.lo
            elif w.state == ST.F_RUN:
                if w.go:
                    if w.chain:
                        pref_n.next = h1[32:32 - L]
                        sym_n.next = h1[32:0]
                    else:
                        pref_n.next = shv[96:96 - L]
                        sym_n.next = shv[96:64]

        if two:
            @always_comb
            def fw_prefix():
                # LUT1 read synchronously (block RAM) at the *next* state and prefix
                lut1_addr.next = concat(st_n, pref_n)
        else:
            @always_comb
            def fw_prefix():
                # LUT1 read synchronously (block RAM): its address is the *next* prefix, so lut1_q holds the
                # entry of the current prefix during the cycle
                lut1_addr.next = pref_n

        @always_seq(clk.posedge, reset=rst)
        def fw_pref_regs():
            pref_q.next = pref_n
            sym_top.next = sym_n

        prefix = (fw_v96, fw_vshift, fw_pref_next, fw_prefix, fw_pref_regs)
    else:
        win = Signal(intbv(0)[64:])
        sh = Signal(modbv(0)[64:])

        @always_comb
        def fw_cur_concat():
            win.next = concat(w.hi, w.lo)

        @always_comb
        def fw_cur_shift():
            sh.next = win << w.ptr

        if two:
            @always_comb
            def fw_prefix():
                # LUT1 read asynchronously (distributed RAM) at the current state and prefix
                lut1_addr.next = concat(st_q, sh[64:64 - L])
        else:
            @always_comb
            def fw_prefix():
                # LUT1 read asynchronously (distributed RAM) at the current prefix, selected from the window
                # registers (a registered address would let yosys absorb it into a block RAM)
                lut1_addr.next = sh[64:64 - L]

        @always_comb
        def fw_cur_sym():
            sym_top.next = sh[64:32]

        prefix = (fw_cur_concat, fw_cur_shift, fw_prefix, fw_cur_sym)

    @always_comb
    def fw_err():
        if not lut1_q[14] or w.tot > 32:
            d_err.next = 3
        elif w.tot > w.avail:
            d_err.next = 4
        else:
            d_err.next = 0

    @always_comb
    def fw_refill():
        rf_base.next = w.go and w.np[5] and not w.end_seen

    @always_comb
    def fw_pop():
        if w.fl:
            in_pop.next = 0
        elif w.state == ST.F_HDR:
            if w.in_nonempty and credit_ok:
                if w.start3:
                    in_pop.next = 3
                elif w.start2:
                    in_pop.next = 2
                else:
                    in_pop.next = 1
            else:
                in_pop.next = 0
        elif w.state == ST.F_LOAD:
            if w.fast2:
                in_pop.next = 2
            elif w.in_nonempty and not w.end_seen:
                in_pop.next = 1
            else:
                in_pop.next = 0
        elif w.state == ST.F_RUN:
            if rf_base:
                in_pop.next = 1
            elif w.chain and w.start3:
                in_pop.next = 3
            elif w.chain:
                in_pop.next = 2
            else:
                in_pop.next = 0
        elif w.state == ST.F_DRAIN:
            if w.in_nonempty:
                in_pop.next = 1
            else:
                in_pop.next = 0
        else:
            in_pop.next = 0

    return (ctrl,) + states + prefix + (fw_err, fw_refill, fw_pop)
