"""Row mirror: the stage after the decoder core's symbol pipeline that outputs row stripes whole (docs/FORMAT.md
section 3.1, docs/CORE.md section 7).

A row stripe holds rows of ``N`` words; a MIRROR row has ``row[m] = row[N - m]`` for ``m = h .. N-1``
(``h = N//2 + 1``), a NEG_MIRROR row ``row[m] = neg(row[N - m])``; only ``row[0 .. h-1]`` is decoded. This stage
takes the decoded words and one descriptor per packet (stripe) and outputs every row whole: a mirrored row's
``h`` coded words as they come, then ``row[N-h] .. row[1]`` from a row buffer, read backwards (negated for
NEG_MIRROR), while its input waits. Negation (:func:`lutzip.codec.symmetry.negate`): two's complement in 8 or
16 bits, or the sign bit flipped (float16 / bfloat16) unless bits 14..0 are 0.

Interface
---------
clk, rst                    clock, synchronous active-high reset (the row buffer is not reset)
s_data[W], s_valid, s_ready decoded words in (AXI-Stream); ``s_ready`` comes from flip-flops only
s_last, s_user              the word ends a packet / is an error marker (the core's ``m_axis_tlast`` / ``tuser``)
d_err[4], d_rows, d_neg[2], one packet's descriptor: ``d_err`` non-zero: the packet is replaced by one marker
d_nm1[NB], d_modes[32]      word of that code (the words from the core up to its ``s_last`` are dropped);
                            ``d_rows`` 0: a plain packet, passed through; 1: a row stripe of rows of
                            ``N = d_nm1 + 1`` words, row ``r``'s mode in ``d_modes`` bits ``2r+1 .. 2r``
                            (0 PLAIN, 1 MIRROR, 2 NEG_MIRROR); word type ``d_neg``: 0 int8, 1 int16,
                            2 float16 / bfloat16 (``W = 8``: always 8-bit two's complement)
d_valid, d_ready            descriptor handshake (a two-entry skid register: ``d_ready`` a flip-flop)
m_data[W], m_valid, m_ready whole rows out (AXI-Stream); ``m_valid`` a flip-flop
m_last, m_user              packet end / error marker
err_valid, err_code[4]      a one-cycle pulse with the code for every marker word the stage issues (its own and
                            the ones it passes on), in stream order; registered
busy                        a packet is in progress or words are on their way out (registered)
MAX_N                       row buffer: ``MAX_N / 2`` words (a power of two >= 2 words), for rows of
                            ``N <= MAX_N + 1`` words (``h <= MAX_N / 2 + 1``, FORMAT.md's ``N_max // 2 + 1``: the
                            buffer holds ``row[1 .. N-h]``, the words read back); the descriptor's check is the
                            caller's (:mod:`lutzip.hdl.stages.row_header`)

Packets
-------
The descriptor of a packet is taken with the packet's first word; a packet's first word waits for one
(``s_ready`` low). A row's coded words are ``N`` (PLAIN) or ``h`` (mirrors); the word after them starts the next
row, with the next mode. ``s_last`` ends the packet: on a mirrored row's last coded word (``N >= 3``) it moves to
the row's last word (the replay's ``row[1]``). An error marker on the input (``s_user``) passes through and ends
the packet. No state waits on anything but input words, a descriptor at a packet start and output space.

Timing
------
One word per cycle out while ``m_ready`` is high and the input has words: the replay reads one buffer word per
cycle and the cycle after its last read takes the next input word. Issue (input take or buffer read), X1 (the
block RAM's registered read), Y (a register after it: the block RAM's output register on ECP5; the word beside
it), X (select, negate) into X2 (register), and an 8-entry output FIFO with credits counted from registers (as the
core's output FIFO): ``m_ready`` reaches neither ``s_ready`` nor ``d_ready`` in the same cycle. Latency: 4 cycles
from an input word's handshake to its ``m_valid``.
"""
from myhdl import Signal, always, always_comb, always_seq, block, concat, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.lanes.lane_skid import lane_skid
from lutzip.hdl.stages.sync_fifo import sync_fifo

PLAIN, MIRROR, NEG_MIRROR = 0, 1, 2
NEG_INT8, NEG_INT16, NEG_FLOAT = 0, 1, 2
OUT_DEPTH = 8          # output FIFO entries: issue -> X1 -> X2 -> FIFO -> m_valid keeps 3 words in flight
PASS, REPLAY, DROP, PKT = 0, 1, 2, 3


def check_row_mirror(W, NB, MAX_N):
    """Raise :class:`UnsupportedError` (one line, naming the parameter) unless the stage can be built."""
    if W not in (8, 16):
        raise UnsupportedError(f"row_mirror: W = {W}: words of 8 or 16 bits")
    if isinstance(MAX_N, bool) or not isinstance(MAX_N, int) or MAX_N < 4 or MAX_N & (MAX_N - 1):
        raise UnsupportedError(f"row_mirror: MAX_N = {MAX_N!r}: a power of two >= 4")
    if NB < MAX_N.bit_length():
        raise UnsupportedError(f"row_mirror: d_nm1 has {NB} bits, MAX_N = {MAX_N} needs {MAX_N.bit_length()}")


@block
def row_mirror(clk, rst, s_data, s_valid, s_ready, s_last, s_user,
               d_err, d_rows, d_neg, d_nm1, d_modes, d_valid, d_ready,
               m_data, m_valid, m_ready, m_last, m_user,
               err_valid, err_code, busy, MAX_N=512):
    W = len(s_data)
    NB = len(d_nm1)
    check_row_mirror(W, NB, MAX_N)
    if len(d_err) != 4 or len(d_neg) != 2 or len(d_modes) != 32 or len(m_data) != W or len(err_code) != 4:
        raise UnsupportedError("row_mirror: d_err 4 bits, d_neg 2, d_modes 32, m_data as s_data, err_code 4")
    depth = MAX_N // 2
    abits = (depth - 1).bit_length()

    # ------------------------------------------------------------------ descriptors: a skid register
    # packed: err[4] | rows | neg[2] | tail | modes[32] | h-1 [NB] | N-1 [NB] | first replay address [abits]
    DW = 4 + 1 + 2 + 1 + 32 + 2 * NB + abits
    d_pack = Signal(intbv(0)[DW:])
    dh = Signal(intbv(0)[DW:])
    dh_valid = Signal(bool(0))
    d_pop = Signal(bool(0))
    d_take = Signal(bool(0))
    d_hm1 = Signal(intbv(0)[NB:])
    d_tail = Signal(bool(0))
    d_rp0 = Signal(modbv(0)[abits:])

    @always_comb
    def desc_prep():
        d_hm1.next = (d_nm1 >> 1) + d_nm1[0]   # h - 1 = N // 2: the coded words after a mirrored row's first
        d_tail.next = d_nm1 >= 2                # N >= 3: a mirrored row has a replay of N - h = (N-1) // 2 words
        d_rp0.next = (d_nm1 >> 1) - 1           # its first read: row[N - h] at address N - h - 1

    @always_comb
    def desc_pack():
        d_pack.next = concat(d_err, d_rows, d_neg, d_tail, d_modes, d_hm1, d_nm1, d_rp0)

    skid = lane_skid(clk, rst, d_pack, d_valid, d_ready, d_take, dh, dh_valid, d_pop)

    h_err = Signal(intbv(0)[4:])
    h_rows = Signal(bool(0))
    h_neg = Signal(intbv(0)[2:])
    h_tail = Signal(bool(0))
    h_modes = Signal(intbv(0)[32:])
    h_hm1 = Signal(intbv(0)[NB:])
    h_nm1 = Signal(intbv(0)[NB:])
    h_rp0 = Signal(intbv(0)[abits:])
    o1 = abits
    o2 = o1 + NB
    o3 = o2 + NB
    o4 = o3 + 32

    @always_comb
    def desc_head():
        h_err.next = dh[DW:DW - 4]
        h_rows.next = dh[DW - 5]
        h_neg.next = dh[DW - 5:DW - 7]
        h_tail.next = dh[o4]
        h_modes.next = dh[o4:o3]
        h_hm1.next = dh[o3:o2]
        h_nm1.next = dh[o2:o1]
        h_rp0.next = dh[o1:0]

    # ------------------------------------------------------------------ issue: take an input word or read the buffer
    st = Signal(intbv(0, min=0, max=4))
    ss = Signal(bool(1))                   # the next input word starts a packet
    rs = Signal(bool(1))                   # the next input word starts a row (of a row stripe)
    left = Signal(modbv(0)[NB:])           # the row's coded words still to come, the current one included (mid-row)
    wa = Signal(modbv(0)[abits:])          # row buffer write address: row[k] at k - 1
    rp = Signal(modbv(0)[abits:])          # replay read address
    # the stripe's parameters (from its descriptor) and the current row's
    c_modes = Signal(intbv(0)[32:])
    c_neg = Signal(intbv(0)[2:])
    c_tailn = Signal(bool(0))
    c_hm1 = Signal(intbv(0)[NB:])
    c_nm1 = Signal(intbv(0)[NB:])
    c_rp0 = Signal(intbv(0)[abits:])
    row_tail = Signal(bool(0))
    row_neg = Signal(bool(0))
    hold_last = Signal(bool(0))
    # the next row's mode and parameters: from the descriptor at a packet start, else from the stripe's registers
    r_mode = Signal(intbv(0)[2:])
    r_modes = Signal(intbv(0)[32:])
    r_cm1 = Signal(intbv(0)[NB:])
    r_tail = Signal(bool(0))
    used = Signal(intbv(0, min=0, max=OUT_DEPTH + 1))
    credit = Signal(bool(0))
    ready = Signal(bool(0))
    pop = Signal(bool(0))
    mem = [Signal(intbv(0)[W:]) for _ in range(depth)]
    we = Signal(bool(0))
    q = Signal(intbv(0)[W:])
    # issue -> X1 registers
    i_valid, i_ram, i_last, i_user, i_neg = [Signal(bool(0)) for _ in range(5)]
    i_data = Signal(intbv(0)[W:])
    i_kind = Signal(intbv(0)[2:])
    err_p = Signal(bool(0))
    err_c = Signal(intbv(0)[4:])

    @always_comb
    def issue_ready():
        credit.next = used < OUT_DEPTH - 1
        if st == PASS:
            ready.next = credit and (not ss or dh_valid)
        elif st == REPLAY:
            ready.next = 0
        else:
            ready.next = credit

    @always_comb
    def issue_take():
        s_ready.next = ready and not rst
        we.next = ready and s_valid and st == PASS and not rs
        d_pop.next = ready and s_valid and st == PASS and ss

    @always_comb
    def row_next():
        if ss:
            r_modes.next = h_modes
            r_mode.next = h_modes[2:0]
            r_tail.next = h_tail and h_modes[2:0] != PLAIN
            if h_modes[2:0] == PLAIN:
                r_cm1.next = h_nm1
            else:
                r_cm1.next = h_hm1
        else:
            r_modes.next = c_modes
            r_mode.next = c_modes[2:0]
            r_tail.next = c_tailn and c_modes[2:0] != PLAIN
            if c_modes[2:0] == PLAIN:
                r_cm1.next = c_nm1
            else:
                r_cm1.next = c_hm1

    @always(clk.posedge)
    def buf_write():
        if we:
            mem[wa].next = s_data

    @always(clk.posedge)
    def buf_read():
        q.next = mem[rp]

    @always_seq(clk.posedge, reset=rst)
    def issue():
        i_valid.next = 0
        i_ram.next = 0
        i_user.next = 0
        i_neg.next = 0
        i_last.next = s_last
        i_data.next = s_data
        i_kind.next = c_neg
        err_p.next = 0
        err_c.next = s_data[4:0]
        if st == PASS:
            if s_valid and ready:
                i_valid.next = 1
                if ss and h_err != 0:
                    # the packet's descriptor is bad (row_header): one marker of its code for the whole packet
                    i_user.next = 1
                    i_last.next = 1
                    i_data.next = h_err
                    err_p.next = 1
                    err_c.next = h_err
                    if not s_last:
                        st.next = DROP
                elif s_user:
                    # an error marker from the core: passed on, the packet ends here
                    i_user.next = 1
                    err_p.next = 1
                    ss.next = 1
                    rs.next = 1
                elif ss and not h_rows:
                    if not s_last:
                        st.next = PKT
                elif rs:
                    # a row's first word (the stripe's first at a packet start)
                    ss.next = 0
                    rs.next = 0
                    wa.next = 0
                    left.next = r_cm1
                    c_modes.next = r_modes >> 2
                    row_tail.next = r_tail
                    row_neg.next = r_mode == NEG_MIRROR
                    if ss:
                        c_neg.next = h_neg
                        c_tailn.next = h_tail
                        c_hm1.next = h_hm1
                        c_nm1.next = h_nm1
                        c_rp0.next = h_rp0
                    if s_last:
                        ss.next = 1
                        rs.next = 1
                else:
                    wa.next = wa + 1
                    left.next = left - 1
                    if left == 1:
                        if row_tail:
                            st.next = REPLAY
                            rp.next = c_rp0
                            hold_last.next = s_last
                            i_last.next = 0
                        else:
                            rs.next = 1
                            ss.next = s_last
                    elif s_last:
                        ss.next = 1
                        rs.next = 1
        elif st == REPLAY:
            if credit:
                i_valid.next = 1
                i_ram.next = 1
                i_neg.next = row_neg
                i_last.next = hold_last and rp == 0
                rp.next = rp - 1
                if rp == 0:
                    st.next = PASS
                    rs.next = 1
                    ss.next = hold_last
        else:
            # PKT: a plain packet passed through; DROP: a bad packet's words dropped (markers passed on)
            if s_valid and ready:
                if s_user or st == PKT:
                    i_valid.next = 1
                    i_user.next = s_user
                    err_p.next = s_user
                if s_last:
                    st.next = PASS
                    ss.next = 1
                    rs.next = 1

    # ------------------------------------------------------------------ Y: the RAM's read registered (the block RAM's
    # output register on ECP5), the word beside it; X: select, negate; X2: register, push
    y_valid, y_ram, y_last, y_user, y_neg = [Signal(bool(0)) for _ in range(5)]
    y_data = Signal(intbv(0)[W:])
    y_q = Signal(intbv(0)[W:])
    y_kind = Signal(intbv(0)[2:])

    @always_seq(clk.posedge, reset=rst)
    def y_reg():
        y_valid.next = i_valid

    @always(clk.posedge)
    def y_data_reg():
        y_q.next = q
        y_ram.next = i_ram
        y_last.next = i_last
        y_user.next = i_user
        y_neg.next = i_neg
        y_data.next = i_data
        y_kind.next = i_kind

    x_val = Signal(intbv(0)[W:])
    x_out = Signal(intbv(0)[W:])
    n8 = Signal(modbv(0)[8:])
    x2_valid = Signal(bool(0))
    x2_data = Signal(intbv(0)[W + 2:])

    @always_comb
    def x1_select():
        if y_ram:
            x_val.next = y_q
        else:
            x_val.next = y_data

    @always_comb
    def x1_neg8():
        n8.next = ~x_val[8:0] + 1

    if W == 16:
        n16 = Signal(modbv(0)[16:])

        @always_comb
        def x1_neg16():
            n16.next = ~x_val + 1

        @always_comb
        def x1_negate():
            if not y_neg:
                x_out.next = x_val
            elif y_kind == NEG_INT8:
                x_out.next = concat(intbv(0)[8:], n8)
            elif y_kind == NEG_INT16:
                x_out.next = n16
            elif x_val[15:0] != 0:
                x_out.next = x_val ^ 0x8000
            else:
                x_out.next = x_val

        negs = (x1_neg16, x1_negate)
    else:
        @always_comb
        def x1_negate():
            if y_neg:
                x_out.next = n8
            else:
                x_out.next = x_val

        negs = (x1_negate,)

    @always_seq(clk.posedge, reset=rst)
    def x2_reg():
        x2_valid.next = y_valid

    @always(clk.posedge)
    def x2_data_reg():
        x2_data.next = concat(y_user, y_last, x_out)

    # ------------------------------------------------------------------ output FIFO and credits
    of_rdata = Signal(intbv(0)[W + 2:])
    of_count = Signal(intbv(0, min=0, max=OUT_DEPTH + 1))
    out_fifo = sync_fifo(clk, rst, x2_valid, x2_data, pop, of_rdata, of_count, DEPTH=OUT_DEPTH)
    mv = Signal(bool(0))

    @always_seq(clk.posedge, reset=rst)
    def out_valid():
        mv.next = x2_valid or of_count > 1 or (of_count == 1 and not pop)

    @always_comb
    def out_side():
        pop.next = mv and m_ready
        m_valid.next = mv and not rst
        m_data.next = of_rdata[W:0]
        m_last.next = of_rdata[W]
        m_user.next = of_rdata[W + 1]

    @always_seq(clk.posedge, reset=rst)
    def out_credits():
        # words issued (counted from the registered issue flag) minus words popped
        if i_valid and not pop:
            used.next = used + 1
        elif pop and not i_valid:
            used.next = used - 1

    @always_seq(clk.posedge, reset=rst)
    def flags():
        busy.next = (not ss) or st != PASS or used != 0 or i_valid or y_valid

    @always_comb
    def err_out():
        err_valid.next = err_p
        err_code.next = err_c

    return (desc_prep, desc_pack, skid, desc_head, issue_ready, issue_take, row_next, buf_write, buf_read, issue,
            y_reg, y_data_reg, x1_select, x1_neg8, *negs, x2_reg, x2_data_reg, out_fifo, out_valid, out_side,
            out_credits, flags,
            err_out)
