"""Stage X / X1 / X2 / X3: zero-run expansion, LUT3 read and output select (one output word per cycle).

X pops entries of the symbol FIFO (written by :mod:`lutzip.hdl.stages.count_stage`) and issues one word per cycle
while the output FIFO has credit: a LUT / RANGE / error entry is one word, a ZRUN entry of count ``m`` is
``m`` zero words (the entry stays at the FIFO head until its last zero; the entry's ``one`` flag and a
registered "one left" flag end it without a comparison). X1 holds the registered LUT3 address (block RAM
read), X2 registers ``LUT3 q``, X3 selects it (LUT), the value (RANGE), 0 (ZRUN) or the error code, and
pushes ``user | last | data`` into the output FIFO.

Interface
---------
clk, rst                 clock, synchronous reset
sf_data[38], sf_nonempty (in) symbol FIFO head and registered non-empty flag
sf_pop                   (out, comb) pop the head
credit_ok                (in, registered) the output FIFO has room for one more word
lut3_raddr, lut3_q       (out, registered) LUT3 read address, (in) LUT3 data one cycle later
o_push, o_data[W+2]      (out, registered) output FIFO write: user[W+1] | last[W] | data[W-1:0]
x1_valid                 (out) a word was issued last cycle (counted into the output credit)
W                        output word width
"""
from myhdl import Signal, always, always_comb, always_seq, block, concat, intbv


@block
def expand_stage(clk, rst, sf_data, sf_nonempty, sf_pop, credit_ok, lut3_raddr, lut3_q,
                 o_push, o_data, x1_valid, W=16):
    abits = len(lut3_raddr)
    xrun = Signal(bool(0))           # in the middle of a multi-word (zero-run) entry
    xrem = Signal(intbv(0)[17:])     # words of that entry still to issue
    xr1 = Signal(bool(0))            # xrem == 1 (registered)
    h_one = Signal(bool(0))
    x3_valid, x3_lut, x3_last, x3_user = [Signal(bool(0)) for _ in range(4)]
    x3_val = Signal(intbv(0)[W:])
    x3_q = Signal(intbv(0)[W:])
    h_kind = Signal(intbv(0)[2:])
    h_last = Signal(bool(0))
    h_err = Signal(bool(0))
    h_cnt = Signal(intbv(0)[17:])
    h_val = Signal(intbv(0)[16:])
    issue = Signal(bool(0))
    fin = Signal(bool(0))
    x1_lut = Signal(bool(0))
    x1_val = Signal(intbv(0)[W:])
    x1_last = Signal(bool(0))
    x1_user = Signal(bool(0))
    x2_valid = Signal(bool(0))
    x2_lut = Signal(bool(0))
    x2_val = Signal(intbv(0)[W:])
    x2_last = Signal(bool(0))
    x2_user = Signal(bool(0))

    @always_comb
    def x_fields():
        h_one.next = sf_data[37]
        h_kind.next = sf_data[37:35]
        h_last.next = sf_data[34]
        h_err.next = sf_data[33]
        h_cnt.next = sf_data[33:16]
        h_val.next = sf_data[16:0]

    @always_comb
    def x_issue():
        issue.next = sf_nonempty and credit_ok
        # last word of the head entry: no adder before the comparison (a down-counter of what is left)
        if xrun:
            fin.next = xr1
        else:
            fin.next = h_one

    @always_comb
    def x_pop():
        sf_pop.next = issue and fin

    @always_seq(clk.posedge, reset=rst)
    def x_regs():
        x1_valid.next = issue
        if issue:
            if fin:
                xrun.next = 0
            else:
                xrun.next = 1
                if xrun:
                    xrem.next = xrem - 1
                    xr1.next = xrem == 2
                else:
                    xrem.next = h_cnt - 1
                    xr1.next = h_cnt == 2
            x1_lut.next = h_kind == 0 and not h_err
            x1_last.next = h_last and fin
            x1_user.next = h_err
            if h_kind[1] and not h_err:
                x1_val.next = 0
            else:
                x1_val.next = h_val[W:0]
            if h_kind == 0 and not h_err:
                lut3_raddr.next = h_val[abits:0]
            else:
                lut3_raddr.next = 0
        x2_valid.next = x1_valid
        x2_lut.next = x1_lut
        x2_val.next = x1_val
        x2_last.next = x1_last
        x2_user.next = x1_user

    @always_seq(clk.posedge, reset=rst)
    def x_out_regs():
        # LUT3's output registered before the select (a block RAM's clock-to-output meets no logic)
        x3_valid.next = x2_valid
        x3_lut.next = x2_lut
        x3_val.next = x2_val
        x3_last.next = x2_last
        x3_user.next = x2_user

    @always(clk.posedge)
    def x_lut3_reg():
        # no reset, always enabled: on ECP5 this is the block RAM's own output register (hdl/bram_outreg.py)
        x3_q.next = lut3_q

    @always_comb
    def x_select():
        o_push.next = x3_valid
        if x3_lut:
            o_data.next = concat(x3_user, x3_last, x3_q)
        else:
            o_data.next = concat(x3_user, x3_last, x3_val)

    return x_fields, x_issue, x_pop, x_regs, x_out_regs, x_lut3_reg, x_select
