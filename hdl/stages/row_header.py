"""Row header: the stage in front of the decoder core's front end that takes a row stripe's two extra words off the
input (docs/FORMAT.md section 3.1, docs/CORE.md section 7).

Every packet (stripe) on the input gets one descriptor for :mod:`lutzip.hdl.stages.row_mirror`, in packet order:

* header marker ``0x4C5B`` (a row stripe): words 1 (row descriptor) and 2 (row modes) are taken off, checked,
  and the front gets the header as a plain stripe's, ``0x4C5A0000 | (n - 1)``, then words 3 .. of the packet (the
  symbols' words). The descriptor: ``rows`` = 1, ``N - 1``, the word type (``NEG`` = 1: float; else 8-bit when
  ``W = 8`` or ``w8``, 16-bit otherwise), the 32 mode bits.
* any other header (a plain stripe, or garbage: the core reports code 1): the packet is passed on as it is, the
  descriptor says ``rows`` = 0.
* a bad row stripe: the front gets one word, ``0x00000000`` with ``tlast`` (a bad header: the core outputs a
  marker for it, which ``row_mirror`` replaces), the rest of the packet is dropped here; the descriptor's ``err``
  is the code: 4 (``ERR_OVERRUN``) when the packet ends before word 3, else 10 (``ERR_ROW``) when the
  descriptor's reserved bits 31..21 are set, ``N < 2``, ``NEG`` = 1 with 8-bit words, a row's mode is 3, a mode
  bit is set at or above bit ``2R``, the header's ``n`` is not the rows' coded words (``R N - m (N-1)//2`` with
  ``m`` mirrored rows), or ``N > MAX_N + 1`` (``N//2 + 1`` above the row buffer's ``MAX_N/2 + 1`` words).

Interface
---------
clk, rst                        clock, synchronous active-high reset
s_data[32], s_valid, s_ready,   the core's input stream; ``s_ready`` from flip-flops only
s_last
o_data[32], o_valid, o_ready,   to the core's front end, through a two-entry skid register (``o_valid`` and the
o_last                          data flip-flops)
d_err[4], d_rows, d_neg[2],     descriptors out of a 16-entry FIFO (``d_valid``: it is not empty; ``d_ready``
d_nm1[16], d_modes[32],         pops the head)
d_valid, d_ready
w8                              the table set has 8-bit words (config; ignored when ``W = 8``)
busy                            a packet is in progress here, or descriptors are waiting (registered)
W, MAX_N                        the core's word width and ``row_mirror``'s row buffer

A plain stripe's header passes in one cycle (the skid adds one cycle of latency); a row stripe's three header
words take eight cycles (three to read them, five to check: the mirrored rows counted in two steps, the products
``R N`` and ``m (N-1)//2`` each from registers, then the sum). While the
descriptor FIFO is full the input waits (each of its entries is a packet between here and ``row_mirror``).
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.lanes.lane_skid import lane_skid
from lutzip.hdl.stages.sync_fifo import sync_fifo

ROW_MARKER = 0x4C5B
PLAIN_MARKER = 0x4C5A
ERR_OVERRUN = 4
ERR_ROW = 10
D_DEPTH = 16
POP4 = tuple(bin(v).count("1") for v in range(16))
HDR, W1, W2, CK1, CK2, CK3, CK4, CK5, EMIT, FWD, DROP = range(11)


@block
def row_header(clk, rst, s_data, s_valid, s_ready, s_last, o_data, o_valid, o_ready, o_last,
               d_err, d_rows, d_neg, d_nm1, d_modes, d_valid, d_ready, w8, busy, W=16, MAX_N=512):
    if W not in (8, 16):
        raise UnsupportedError(f"row_header: W = {W}: words of 8 or 16 bits")
    if isinstance(MAX_N, bool) or not isinstance(MAX_N, int) or MAX_N < 4 or MAX_N & (MAX_N - 1) or MAX_N > 32768:
        raise UnsupportedError(f"row_header: MAX_N = {MAX_N!r}: a power of two 4 .. 32768")
    if len(s_data) != 32 or len(o_data) != 32 or len(d_nm1) != 16 or len(d_modes) != 32:
        raise UnsupportedError("row_header: s_data, o_data 32 bits, d_nm1 16, d_modes 32")
    w_is8 = 1 if W == 8 else 0

    st = Signal(intbv(0, min=0, max=11))
    n_m1 = Signal(intbv(0)[16:])         # the header's n - 1
    n_c = Signal(intbv(0)[17:])          # n
    w1 = Signal(intbv(0)[32:])           # row descriptor word
    modes = Signal(intbv(0)[32:])
    rn = Signal(intbv(0)[21:])           # R * N
    r_r = Signal(intbv(0)[5:])           # R
    n_n = Signal(intbv(0)[17:])          # N
    rmask = Signal(intbv(0)[16:])        # rows 0 .. R-1
    act = Signal(intbv(0)[16:])          # mirrored rows
    p0, p1, p2, p3 = [Signal(intbv(0)[3:]) for _ in range(4)]   # mirrored rows in each group of four rows
    q0, q1, q2, q3 = [Signal(intbv(0)[3:]) for _ in range(4)]
    m = Signal(intbv(0)[5:])             # mirrored rows
    mt = Signal(intbv(0)[20:])           # m * (N - 1) // 2
    bad_a = Signal(bool(0))              # the checks that need no product
    e_word = Signal(intbv(0)[32:])       # the word EMIT sends to the front
    e_last = Signal(bool(0))
    e_next = Signal(intbv(0, min=0, max=11))
    e_err = Signal(intbv(0)[4:])
    e_rows = Signal(bool(0))
    dv = Signal(intbv(0)[55:])           # descriptor pushed: err | rows | neg | nm1 | modes
    d_push = Signal(bool(0))
    d_head = Signal(intbv(0)[55:])
    d_count = Signal(intbv(0, min=0, max=D_DEPTH + 1))
    d_space = Signal(bool(0))
    k_data = Signal(intbv(0)[33:])
    k_valid = Signal(bool(0))
    k_ready = Signal(bool(0))
    k_take = Signal(bool(0))
    k_out = Signal(intbv(0)[33:])
    ready = Signal(bool(0))
    is_row = Signal(bool(0))
    neg_kind = Signal(intbv(0)[2:])

    @always_comb
    def hdr_comb():
        is_row.next = s_data[32:16] == ROW_MARKER
        d_space.next = d_count < D_DEPTH
        if w1[20]:
            neg_kind.next = 2
        elif w_is8 == 1 or w8:
            neg_kind.next = 0
        else:
            neg_kind.next = 1

    @always_comb
    def in_ready():
        if st == HDR:
            ready.next = k_ready and d_space
        elif st == W1 or st == W2 or st == DROP:
            ready.next = 1
        elif st == FWD:
            ready.next = k_ready
        else:
            ready.next = 0

    @always_comb
    def out_mux():
        s_ready.next = ready and not rst
        if st == EMIT:
            k_valid.next = d_space
            k_data.next = concat(e_last, e_word)
        elif st == FWD or (st == HDR and not is_row):
            k_valid.next = s_valid and ready
            k_data.next = concat(s_last, s_data)
        else:
            k_valid.next = 0
            k_data.next = concat(s_last, s_data)

    @always_comb
    def desc_push():
        if st == EMIT:
            d_push.next = k_ready and d_space
            dv.next = concat(e_err, e_rows, neg_kind, w1[16:0], modes)
        else:
            d_push.next = st == HDR and s_valid and ready and not is_row
            dv.next = 0

    @always_seq(clk.posedge, reset=rst)
    def fsm():
        if st == HDR:
            if s_valid and ready:
                if is_row:
                    n_m1.next = s_data[16:0]
                    n_c.next = s_data[16:0] + 1
                    if s_last:
                        st.next = EMIT
                        e_err.next = ERR_OVERRUN
                        e_word.next = 0
                        e_last.next = 1
                        e_rows.next = 0
                        e_next.next = HDR
                    else:
                        st.next = W1
                elif not s_last:
                    st.next = FWD
        elif st == W1:
            if s_valid:
                w1.next = s_data
                r_r.next = s_data[20:16] + 1
                n_n.next = s_data[16:0] + 1
                for r in range(16):
                    rmask.next[r] = r <= s_data[20:16]
                if s_last:
                    st.next = EMIT
                    e_err.next = ERR_OVERRUN
                    e_word.next = 0
                    e_last.next = 1
                    e_rows.next = 0
                    e_next.next = HDR
                else:
                    st.next = W2
        elif st == W2:
            if s_valid:
                modes.next = s_data
                rn.next = r_r * n_n
                if s_last:
                    st.next = EMIT
                    e_err.next = ERR_OVERRUN
                    e_word.next = 0
                    e_last.next = 1
                    e_rows.next = 0
                    e_next.next = HDR
                else:
                    st.next = CK1
        elif st == CK1:
            # mirrored rows, modes 3 and mode bits above row R - 1; the checks of word 1
            bad = bool(0)
            for r in range(16):
                act.next[r] = rmask[r] and (modes[2 * r + 1] or modes[2 * r])
                if rmask[r] and modes[2 * r + 1] and modes[2 * r]:
                    bad = bool(1)
                if not rmask[r] and (modes[2 * r + 1] or modes[2 * r]):
                    bad = bool(1)
            bad_a.next = bad or w1[32:21] != 0 or w1[16:0] == 0 or (w1[20] and (w_is8 == 1 or w8)) or \
                w1[16:0] > MAX_N
            st.next = CK2
        elif st == CK2:
            q0.next = p0
            q1.next = p1
            q2.next = p2
            q3.next = p3
            st.next = CK3
        elif st == CK3:
            m.next = q0 + q1 + q2 + q3
            st.next = CK4
        elif st == CK4:
            mt.next = m * w1[16:1]
            st.next = CK5
        elif st == CK5:
            st.next = EMIT
            e_next.next = DROP
            e_word.next = 0
            e_last.next = 1
            e_rows.next = 0
            e_err.next = ERR_ROW
            if not bad_a and rn == mt + n_c:
                e_next.next = FWD
                e_word.next = concat(intbv(PLAIN_MARKER)[16:], n_m1)
                e_last.next = 0
                e_rows.next = 1
                e_err.next = 0
        elif st == EMIT:
            if k_ready and d_space:
                st.next = e_next
        elif st == FWD or st == DROP:
            if s_valid and ready and s_last:
                st.next = HDR

    @always_comb
    def pop_0():
        p0.next = POP4[act[4:0]]

    @always_comb
    def pop_1():
        p1.next = POP4[act[8:4]]

    @always_comb
    def pop_2():
        p2.next = POP4[act[12:8]]

    @always_comb
    def pop_3():
        p3.next = POP4[act[16:12]]

    skid = lane_skid(clk, rst, k_data, k_valid, k_ready, k_take, k_out, o_valid, o_ready)
    d_pop = Signal(bool(0))

    @always_comb
    def desc_pop():
        d_pop.next = d_ready and d_count != 0

    dfifo = sync_fifo(clk, rst, d_push, dv, d_pop, d_head, d_count, DEPTH=D_DEPTH)

    @always_comb
    def outs():
        o_data.next = k_out[32:0]
        o_last.next = k_out[32]
        d_err.next = d_head[55:51]
        d_rows.next = d_head[50]
        d_neg.next = d_head[50:48]
        d_nm1.next = d_head[48:32]
        d_modes.next = d_head[32:0]
        d_valid.next = d_count != 0

    @always_seq(clk.posedge, reset=rst)
    def flags():
        busy.next = st != HDR or d_count != 0

    return hdr_comb, in_ready, out_mux, desc_push, fsm, pop_0, pop_1, pop_2, pop_3, skid, desc_pop, dfifo, outs, flags
