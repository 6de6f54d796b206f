"""Stage C: the stripe word counter; accepts, drops or turns tokens into error markers.

Token order is stream order, so a token is *in the stripe* iff the words counted so far are fewer than the
header's ``n``. This stage keeps ``rem`` (words still to come) and:

* a stripe's first symbol token carries ``n`` (and the stripe tag): it opens the stripe (``rem = n``);
* header token (only for a bad marker): error marker (code 1);
* symbol token while not active (speculative tokens decoded past the stripe end): dropped;
* symbol token with a front-end error (3 invalid prefix, 4 overrun), LUT3 range error (5) or a zero run
  longer than ``rem`` (6): error marker, not active, ``flush``;
* otherwise pushed with its word count; the token that brings ``rem`` to 0 is marked ``last`` and ``flush``
  is raised.

Interface
---------
clk, rst                 clock, synchronous reset
i_valid, i_hdr, i_ferr[4], i_kind[2], i_cnt[17], i_val[17], i_l3err, i_first, i_n[17], i_tag[T]
                         token from S3
o_push, o_data[38]       (registered, two cycles after the token) entry for the symbol FIFO: one[37] | kind[36:35] | last[34] | err[33] |
                         cnt[32:16] | val[15:0] (error markers: err = 1, last = 1, cnt = 1, val = code)
o_drop                   (registered) a token was consumed without an entry (returns its credit)
flush, flush_tag[T]      (registered) one-cycle pulse: the stripe is finished (last word or error); its tag
err_valid, err_code[4]   (registered, with o_push) one-cycle pulse and code of each error marker (code holds)
active                   (out) a stripe is open
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv, modbv

SF_WIDTH = 38


@block
def count_stage(clk, rst, i_valid, i_hdr, i_ferr, i_kind, i_cnt, i_val, i_l3err, i_first, i_n, i_tag,
                o_push, o_data, o_drop, flush, flush_tag, err_valid, err_code, active):
    act = Signal(bool(0))
    rem = Signal(modbv(0)[17:])     # wraps after an error (the stripe is closed, rem unused)
    remx = Signal(intbv(0)[17:])
    actx = Signal(bool(0))
    tagx = Signal(intbv(0)[len(i_tag):])
    code = Signal(intbv(0)[4:])
    last = Signal(bool(0))
    eq_n, eq_r, gt_n, gt_r = [Signal(bool(0)) for _ in range(4)]
    cnt1 = Signal(bool(0))   # the entry stands for one word (stored so X needs no comparison)
    ctag = Signal(intbv(0)[len(i_tag):])
    # the decision, registered: the symbol-FIFO entry's fields
    p_push, p_err, p_last, p_cnt1 = [Signal(bool(0)) for _ in range(4)]
    p_kind = Signal(intbv(0)[2:])
    p_cnt = Signal(intbv(0)[17:])
    p_val = Signal(intbv(0)[16:])
    p_code = Signal(intbv(0)[4:])

    @always_comb
    def c_open():
        # a stripe's first symbol token opens it: n and tag come with it
        if i_first:
            remx.next = i_n
            actx.next = 1
            tagx.next = i_tag
        else:
            remx.next = rem
            actx.next = act
            tagx.next = ctag

    @always_comb
    def c_cmp():
        # the word count against both candidates for the stripe's remaining words (the token's n when it
        # opens the stripe, else rem), selected afterwards: no multiplexer in front of the comparators
        eq_n.next = i_cnt == i_n
        eq_r.next = i_cnt == rem
        gt_n.next = i_cnt > i_n
        gt_r.next = i_cnt > rem

    @always_comb
    def c_check():
        cnt1.next = i_cnt == 1
        if i_first:
            last.next = eq_n
        else:
            last.next = eq_r
        if i_ferr != 0:
            code.next = i_ferr
        elif i_kind == 0 and i_l3err:
            code.next = 5
        elif i_kind[1] and ((i_first and gt_n) or (not i_first and gt_r)):
            code.next = 6
        else:
            code.next = 0

    @always_comb
    def c_active():
        active.next = act

    @always_seq(clk.posedge, reset=rst)
    def c_regs():
        # decision: drop, error marker or entry; the stripe's state (rem, act, tag) and flush. The token's
        # fields are registered as they are; the comparison's result goes to a few flip-flops only
        o_drop.next = 0
        flush.next = 0
        p_push.next = i_valid and (i_hdr or actx)
        p_err.next = i_hdr or code != 0
        p_last.next = last
        p_kind.next = i_kind
        p_cnt1.next = cnt1
        p_cnt.next = i_cnt
        p_val.next = i_val[16:0]
        if i_hdr:
            p_code.next = i_ferr
        else:
            p_code.next = code
        if i_valid:
            if i_hdr:
                # bad header marker (good headers make no token of their own)
                act.next = 0
            elif not actx:
                o_drop.next = 1
            else:
                ctag.next = tagx
                flush_tag.next = tagx
                # rem is left as it is after an error (the stripe is closed)
                if i_kind[1]:
                    rem.next = remx - i_cnt
                else:
                    rem.next = remx - 1
                if code != 0:
                    act.next = 0
                    flush.next = 1
                else:
                    act.next = not last
                    if last:
                        flush.next = 1

    @always_seq(clk.posedge, reset=rst)
    def c_out():
        # the entry (or error marker) a cycle after the decision
        o_push.next = p_push
        err_valid.next = p_push and p_err
        if p_err:
            o_data.next = concat(True, intbv(0)[2:], True, True, intbv(1)[17:], intbv(0)[12:], p_code)
            if p_push:
                err_code.next = p_code
        elif p_kind[1]:
            o_data.next = concat(p_cnt1, p_kind, p_last, False, p_cnt, p_val)
        else:
            o_data.next = concat(True, p_kind, p_last, False, intbv(1)[17:], p_val)

    return c_open, c_cmp, c_check, c_active, c_regs, c_out
