"""Stage S1 of the vector front: the 32 bits at the pointer and the full LUT1 entry of each token.

Four registered steps after :mod:`lutzip.hdl.fronts.vector.loop_vector`: (a) ``sym = (w:wn << ptr)[63:32]``, the symbol
bits at the pointer; (b) the LUT1 entry of ``sym``'s top L bits, registered (a block RAM's output register)
and (c) registered again (so the RAM's clock-to-output time meets no logic); (d) class, code length and
the front-end error code: 3 invalid prefix (invalid entry or ``c+k > 32``), else
4 if the front flagged an overrun. The output is the token of the window front (:mod:`lutzip.hdl.fronts.window.loop_window_ctrl`), so S2 onwards are shared by both fronts.

Interface
---------
clk, rst                 clock, synchronous reset
lut1_addr[L], lut1_q[15] (out) LUT1 address = the prefix registered in step (a), (in) its entry: ``SYNC``
                         (block RAM) read on the clock edge, so the entry arrives in step (b) without a
                         register of ours; else (asynchronous read) registered in step (b)
i_valid, i_hdr, i_ovr, i_w[32], i_wn[32], i_ptr[5], i_first, i_n[16], i_tag
                         token from the front
o_valid, o_hdr, o_ferr[4], o_sym[32], o_cls[4], o_c[4], o_first, o_n[16], o_tag
                         (out, registered) token for S2 (bad header: o_ferr = 1, o_sym = the word)
i_st                     (optional; two code tables) the state the token's symbol is read in: LUT1 is read at
                         ``i_st << L | prefix`` (``lut1_addr`` L + 1 bits, ``lut1_q`` 16 bits)
"""
from myhdl import Signal, always, always_comb, always_seq, block, concat, intbv, modbv


@block
def align_stage(clk, rst, lut1_addr, lut1_q, i_valid, i_hdr, i_ovr, i_w, i_wn, i_ptr, i_first, i_n, i_tag,
                o_valid, o_hdr, o_ferr, o_sym, o_cls, o_c, o_first, o_n, o_tag, L=8, SYNC=True, i_st=None):
    a_valid, a_hdr, a_ovr, a_first = [Signal(bool(0)) for _ in range(4)]
    a_n = Signal(intbv(0)[16:])
    a_tag = Signal(intbv(0)[len(i_tag):])
    a_sym = Signal(intbv(0)[32:])
    sh = Signal(modbv(0)[64:])
    b_valid, b_hdr, b_ovr, b_first = [Signal(bool(0)) for _ in range(4)]
    b_n = Signal(intbv(0)[16:])
    b_tag = Signal(intbv(0)[len(i_tag):])
    b_sym = Signal(intbv(0)[32:])
    c_valid, c_hdr, c_ovr, c_first = [Signal(bool(0)) for _ in range(4)]
    c_n = Signal(intbv(0)[16:])
    c_tag = Signal(intbv(0)[len(i_tag):])
    c_sym = Signal(intbv(0)[32:])
    c_q = Signal(intbv(0)[len(lut1_q):])
    tot = Signal(intbv(0)[6:])

    @always_comb
    def al_shift():
        sh.next = concat(i_w, i_wn) << i_ptr

    if i_st is None:
        @always_comb
        def al_addr():
            lut1_addr.next = a_sym[32:32 - L]
        st_regs = ()
    else:
        a_st = Signal(bool(0))

        @always_comb
        def al_addr():
            lut1_addr.next = concat(a_st, a_sym[32:32 - L])

        @always_seq(clk.posedge, reset=rst)
        def al_st():
            a_st.next = i_st

        st_regs = (al_st,)

    @always_comb
    def al_tot():
        tot.next = c_q[6:0]

    if SYNC:
        @always(clk.posedge)
        def al_lut1():
            # the block RAM registers the address (the prefix in a_sym) and its read data arrive a cycle later,
            # where the asynchronous read's b_q would be; c_q (no reset) becomes the RAM's output register on
            # ECP5 (:mod:`lutzip.hdl.flows.bram_outreg`)
            c_q.next = lut1_q
    else:
        b_q = Signal(intbv(0)[len(lut1_q):])   # the asynchronous read, registered in step (b)

        @always(clk.posedge)
        def al_lut1():
            b_q.next = lut1_q
            c_q.next = b_q

    @always_seq(clk.posedge, reset=rst)
    def al_regs():
        a_valid.next = i_valid
        a_hdr.next = i_hdr
        a_ovr.next = i_ovr
        a_first.next = i_first
        a_n.next = i_n
        a_tag.next = i_tag
        a_sym.next = sh[64:32]
        b_valid.next = a_valid
        b_hdr.next = a_hdr
        b_ovr.next = a_ovr
        b_first.next = a_first
        b_n.next = a_n
        b_tag.next = a_tag
        b_sym.next = a_sym
        c_valid.next = b_valid
        c_hdr.next = b_hdr
        c_ovr.next = b_ovr
        c_first.next = b_first
        c_n.next = b_n
        c_tag.next = b_tag
        c_sym.next = b_sym
        o_valid.next = c_valid
        o_hdr.next = c_hdr
        o_first.next = c_first
        o_n.next = c_n
        o_tag.next = c_tag
        o_sym.next = c_sym
        o_cls.next = c_q[14:10]
        o_c.next = c_q[10:6]
        if c_hdr:
            o_ferr.next = 1
            o_cls.next = 0
            o_c.next = 0
        elif not c_q[14] or tot > 32:
            o_ferr.next = 3
        elif c_ovr:
            o_ferr.next = 4
        else:
            o_ferr.next = 0

    return (al_shift, al_addr, al_tot, al_lut1, al_regs) + st_regs
