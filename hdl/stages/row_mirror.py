"""Row mirror: the output stage that expands MIRROR / NEG_MIRROR rows (docs/CORE.md, "Row mirror stage").

A tensor is seen as rows of ``N`` words. A MIRROR row has ``row[n] = row[N - n]`` for ``n = N/2+1 .. N-1``, a
NEG_MIRROR row ``row[n] = -row[N - n]``; only ``row[0 .. N/2]`` is decoded. This stage takes the decoded words
and one descriptor per row and outputs every row whole: ``row[0 .. N/2]`` as they come, then
``row[N/2-1 .. 1]`` from a row buffer, read backwards (negated for NEG_MIRROR), while its input waits. Negation
(:func:`lutzip.codec.symmetry.negate`): two's complement in 8 / 16 bits for int8 / int16 words, the sign bit
flipped for float16 / bfloat16 words unless the other 15 bits are 0.

Interface
---------
clk, rst                    clock, synchronous active-high reset (the row buffer is not reset)
s_data[W], s_valid, s_ready decoded words in (AXI-Stream); ``s_ready`` comes from flip-flops only
s_last, s_user              the word ends a stripe / is an error marker (as the core's ``m_axis_tlast`` / ``tuser``)
d_mode[2], d_neg[2], d_n[NB] one row's descriptor: mode 0 PLAIN, 1 MIRROR, 2 NEG_MIRROR (3 is bad); word type
                            0 int8, 1 int16, 2 float16 / bfloat16, 3 unsigned (cannot be negated); ``N`` the
                            row's length in words (``NB = len(d_n)`` bits)
d_valid, d_ready            descriptor handshake (a two-entry skid register: ``d_ready`` a flip-flop)
m_data[W], m_valid, m_ready full rows out (AXI-Stream); ``m_valid`` a flip-flop
m_last, m_user              stripe end / error marker, as on the input (see "tlast" below)
err_valid, err_code[4]      one-cycle pulse and ``ERR`` when a descriptor is bad (registered)
busy                        a row is in progress or words are on their way out (registered)
MAX_N                       the longest mirrored row, a power of two >= 4: the row buffer holds ``MAX_N / 2``
                            words (one block RAM up to 1024 x 16 on ECP5 / iCE40 when ``MAX_N <= 2048``)
ERR                         the code of the stage's own error marker (1 .. 15)

Rows
----
The descriptor of a row is taken with the row's first word; a word at a row start waits for one (``s_ready``
low). The row's coded words are ``N`` (PLAIN) or ``N/2 + 1`` (mirrors); the word after them starts the next
row. A descriptor is *bad* (mode 3; a mirror with ``N`` odd, ``N < 2`` or ``N > MAX_N``; NEG_MIRROR of
unsigned words, or of 16-bit word types when ``W = 8``; PLAIN with ``N = 0``): then instead of the row's first
word the stage outputs a marker word (``m_user = 1``, ``m_last = 1``, data ``ERR``), pulses ``err_valid``, drops
the bad descriptor and discards the input through the next word with ``s_last`` (that word too), as the core
does with a bad stripe. An error marker on the input (``s_user``) passes through at once; it ends the row in
progress (no replay) and, at a row start, takes no descriptor. No state waits on anything but input words,
descriptors at row starts and output space.

tlast: ``s_last`` stays on its word, except on a mirrored row's last coded word (``row[N/2]``, ``N >= 4``),
where it moves to the row's last word (``row[1]`` of the replay). So stripes that end on row boundaries end
on the same rows at the output; a stripe may also end inside a row (the row continues in the next one).

Timing
------
One word per cycle out while ``m_ready`` is high and the input has words: the replay issues one buffer read per
cycle, the cycle after the replay's last read takes the next input word. Issue (input take or buffer read),
X1 (the block RAM's registered read; word or RAM data selected and negated), X2 (register) and an 8-entry
output FIFO with credits counted from registers (:mod:`lutzip.hdl.stages.sync_fifo`, as the core's output):
``m_ready`` reaches neither ``s_ready`` nor ``d_ready`` in the same cycle. Latency: 3 cycles from an input
word's handshake to its ``m_valid``.
"""
from myhdl import Signal, always, always_comb, always_seq, block, concat, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.lanes.lane_skid import lane_skid
from lutzip.hdl.stages.sync_fifo import sync_fifo

PLAIN, MIRROR, NEG_MIRROR = 0, 1, 2
NEG_INT8, NEG_INT16, NEG_FLOAT, NEG_NONE = 0, 1, 2, 3
OUT_DEPTH = 8          # output FIFO entries: issue -> X1 -> X2 -> FIFO -> m_valid keeps 3 words in flight
PASS, REPLAY, DROP = 0, 1, 2


def check_row_mirror(W, NB, MAX_N, ERR):
    """Raise :class:`UnsupportedError` (one line, naming the parameter) unless the stage can be built."""
    if W not in (8, 16):
        raise UnsupportedError(f"row_mirror: W = {W}: words of 8 or 16 bits")
    if isinstance(MAX_N, bool) or not isinstance(MAX_N, int) or MAX_N < 4 or MAX_N & (MAX_N - 1):
        raise UnsupportedError(f"row_mirror: MAX_N = {MAX_N!r}: a power of two >= 4")
    if NB < MAX_N.bit_length():
        raise UnsupportedError(f"row_mirror: d_n has {NB} bits, MAX_N = {MAX_N} needs {MAX_N.bit_length()}")
    if isinstance(ERR, bool) or not isinstance(ERR, int) or not 1 <= ERR <= 15:
        raise UnsupportedError(f"row_mirror: ERR = {ERR!r}: an error code 1 .. 15")


@block
def row_mirror(clk, rst, s_data, s_valid, s_ready, s_last, s_user,
               d_mode, d_neg, d_n, d_valid, d_ready,
               m_data, m_valid, m_ready, m_last, m_user,
               err_valid, err_code, busy, MAX_N=512, ERR=10):
    W = len(s_data)
    NB = len(d_n)
    check_row_mirror(W, NB, MAX_N, ERR)
    if len(d_mode) != 2 or len(d_neg) != 2 or len(m_data) != W or len(err_code) != 4:
        raise UnsupportedError("row_mirror: d_mode and d_neg have 2 bits, m_data as s_data, err_code 4")
    depth = MAX_N // 2
    abits = (depth - 1).bit_length()
    bad_neg = (NEG_NONE,) if W == 16 else (NEG_INT16, NEG_FLOAT, NEG_NONE)
    neg_none = NEG_NONE
    bad_w8 = 1 if W == 8 else 0

    # ------------------------------------------------------------------ descriptors: checked, then a skid register
    # packed: bad | neg | tail | kind[2] | coded - 1 [NB]
    DW = NB + 5
    d_pack = Signal(intbv(0)[DW:])
    dh = Signal(intbv(0)[DW:])
    dh_valid = Signal(bool(0))
    d_pop = Signal(bool(0))
    d_take = Signal(bool(0))
    d_bad = Signal(bool(0))
    d_dl = Signal(intbv(0)[NB:])
    d_tail = Signal(bool(0))
    d_isneg = Signal(bool(0))

    @always_comb
    def desc_check():
        if d_mode == PLAIN:
            d_bad.next = d_n == 0
        elif d_mode == MIRROR or d_mode == NEG_MIRROR:
            d_bad.next = d_n[0] or d_n < 2 or d_n > MAX_N or (
                d_mode == NEG_MIRROR and (d_neg == neg_none or (bad_w8 == 1 and d_neg != NEG_INT8)))
        else:
            d_bad.next = 1
        if d_mode == PLAIN:
            if d_n != 0:
                d_dl.next = d_n - 1
            else:
                d_dl.next = 0
            d_tail.next = 0
        else:
            d_dl.next = d_n >> 1                # N/2 + 1 coded words: N/2 more after the first
            d_tail.next = d_n[NB:2] != 0       # N >= 4: a replay of N/2 - 1 words
        d_isneg.next = d_mode == NEG_MIRROR

    @always_comb
    def desc_pack():
        d_pack.next = concat(d_bad, d_isneg, d_tail, d_neg, d_dl)

    skid = lane_skid(clk, rst, d_pack, d_valid, d_ready, d_take, dh, dh_valid, d_pop)

    h_bad = Signal(bool(0))
    h_isneg = Signal(bool(0))
    h_tail = Signal(bool(0))
    h_neg = Signal(intbv(0)[2:])
    h_dl = Signal(intbv(0)[NB:])

    @always_comb
    def desc_head():
        h_bad.next = dh[NB + 4]
        h_isneg.next = dh[NB + 3]
        h_tail.next = dh[NB + 2]
        h_neg.next = dh[NB + 2:NB]
        h_dl.next = dh[NB:0]

    # ------------------------------------------------------------------ issue: take an input word or read the buffer
    st = Signal(intbv(0, min=0, max=3))
    rs = Signal(bool(1))                   # the next input word starts a row
    left = Signal(intbv(0)[NB:])            # coded words of the row still to come (mid-row), the current one included
    k = Signal(modbv(0)[abits:])           # the next word's index in its row (row buffer address; wraps harmlessly)
    rp = Signal(modbv(0)[abits:])          # replay read address
    c_tail = Signal(bool(0))
    c_isneg = Signal(bool(0))
    c_neg = Signal(intbv(0)[2:])
    hold_last = Signal(bool(0))
    used = Signal(intbv(0, min=0, max=OUT_DEPTH + 1))
    credit = Signal(bool(0))
    take = Signal(bool(0))
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

    @always_comb
    def issue_ready():
        credit.next = used < OUT_DEPTH - 1
        if st == PASS:
            ready.next = credit and (not rs or dh_valid)
        elif st == DROP:
            ready.next = credit
        else:
            ready.next = 0

    @always_comb
    def issue_take():
        s_ready.next = ready and not rst
        take.next = ready and s_valid
        we.next = ready and s_valid and st == PASS
        d_pop.next = ready and s_valid and st == PASS and rs and not s_user

    @always(clk.posedge)
    def buf_write():
        if we:
            mem[k].next = s_data

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
        if st == PASS:
            if take:
                i_valid.next = 1
                if s_user:
                    # an error marker from upstream: passed on, the row ends here
                    i_user.next = 1
                    rs.next = 1
                elif rs:
                    k.next = 1
                    if h_bad:
                        # a bad descriptor: a marker instead of the word, the rest of the stripe discarded
                        i_user.next = 1
                        i_last.next = 1
                        i_data.next = ERR
                        err_p.next = 1
                        if not s_last:
                            st.next = DROP
                    else:
                        c_tail.next = h_tail
                        c_isneg.next = h_isneg
                        c_neg.next = h_neg
                        left.next = h_dl
                        if h_dl != 0:
                            rs.next = 0
                else:
                    k.next = k + 1
                    left.next = left - 1
                    if left == 1:
                        if c_tail:
                            st.next = REPLAY
                            rp.next = k - 1
                            hold_last.next = s_last
                            i_last.next = 0
                        else:
                            rs.next = 1
        elif st == REPLAY:
            if credit:
                i_valid.next = 1
                i_ram.next = 1
                i_neg.next = c_isneg
                i_last.next = hold_last and rp == 1
                rp.next = rp - 1
                if rp == 1:
                    st.next = PASS
                    rs.next = 1
        else:
            if take:
                if s_user:
                    i_valid.next = 1
                    i_user.next = 1
                if s_last:
                    st.next = PASS

    # ------------------------------------------------------------------ X1: select, negate; X2: register, push
    x_val = Signal(intbv(0)[W:])
    x_out = Signal(intbv(0)[W:])
    n8 = Signal(modbv(0)[8:])
    x2_valid = Signal(bool(0))
    x2_data = Signal(intbv(0)[W + 2:])

    @always_comb
    def x1_select():
        if i_ram:
            x_val.next = q
        else:
            x_val.next = i_data

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
            if not i_neg:
                x_out.next = x_val
            elif i_kind == NEG_INT8:
                x_out.next = concat(intbv(0)[8:], n8)
            elif i_kind == NEG_INT16:
                x_out.next = n16
            elif x_val[15:0] != 0:
                x_out.next = x_val ^ 0x8000
            else:
                x_out.next = x_val

        negs = (x1_neg16, x1_negate)
    else:
        @always_comb
        def x1_negate():
            if i_neg:
                x_out.next = n8
            else:
                x_out.next = x_val

        negs = (x1_negate,)

    @always_seq(clk.posedge, reset=rst)
    def x2_reg():
        x2_valid.next = i_valid

    @always(clk.posedge)
    def x2_data_reg():
        x2_data.next = concat(i_user, i_last, x_out)

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
        busy.next = (not rs) or st != PASS or used != 0 or i_valid

    @always_comb
    def err_out():
        err_valid.next = err_p
        err_code.next = ERR

    return (desc_check, desc_pack, skid, desc_head, issue_ready, issue_take, buf_write, buf_read, issue,
            x1_select, x1_neg8, *negs, x2_reg, x2_data_reg, out_fifo, out_valid, out_side, out_credits, flags,
            err_out)
