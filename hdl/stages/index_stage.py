"""Stage S3: index extraction and the LUT3 address / RANGE value / run length of each symbol (two steps).

Step a (registered): ``index`` = top ``k`` bits of ``i_sh`` (``(i_sh >> 1) >> (31 - k)``: no subtraction
before the shifter; k = 0 gives 0), truncated to 16 bits, and ``lim = n_lut3 - param`` (the LUT3 range
check as a comparison of the index alone). Step b (registered outputs): ``param + index``, the run length
and the range check, side by side.

Interface
---------
clk, rst                 clock, synchronous reset
n_lut3[13]               configured number of valid LUT3 entries (<= LUT3_DEPTH)
i_valid, i_hdr, i_ferr[4], i_sh[32], i_kind[2], i_k[5], i_param[16], i_first, i_n[16], i_tag
                         token from S2
o_valid, o_hdr, o_ferr[4], o_kind[2], o_first, o_tag   token fields passed on (two registers)
o_n[17]                  ``i_n + 1``: the stripe's word count ``n`` (the header carries ``n - 1``)
o_cnt[17]                words the symbol stands for: ZRUN -> index + 1, LUT / RANGE -> 1
o_val[17]                ``param + index``: the LUT3 address (LUT) or the output word (RANGE)
o_l3err                  LUT class and ``param + index >= n_lut3``
"""
from myhdl import Signal, always_comb, always_seq, block, intbv


@block
def index_stage(clk, rst, n_lut3, i_valid, i_hdr, i_ferr, i_sh, i_kind, i_k, i_param, i_first, i_n, i_tag,
                o_valid, o_hdr, o_ferr, o_kind, o_cnt, o_val, o_l3err, o_first, o_n, o_tag):
    nk = Signal(intbv(0)[5:])
    idx = Signal(intbv(0)[32:])
    lim = Signal(intbv(0, min=-(1 << 16), max=1 << 14))
    a_valid, a_hdr, a_first = [Signal(bool(0)) for _ in range(3)]
    a_ferr = Signal(intbv(0)[4:])
    a_kind = Signal(intbv(0)[2:])
    a_idx = Signal(intbv(0)[16:])
    a_param = Signal(intbv(0)[16:])
    a_lim = Signal(intbv(0, min=-(1 << 16), max=1 << 14))
    a_n = Signal(intbv(0)[16:])
    a_tag = Signal(intbv(0)[len(i_tag):])

    @always_comb
    def s3_amount():
        nk.next = ~i_k

    @always_comb
    def s3_index():
        idx.next = (i_sh >> 1) >> nk

    @always_comb
    def s3_limit():
        lim.next = n_lut3 - i_param

    @always_seq(clk.posedge, reset=rst)
    def s3_step_a():
        a_valid.next = i_valid
        a_hdr.next = i_hdr
        a_ferr.next = i_ferr
        a_kind.next = i_kind
        a_first.next = i_first
        a_n.next = i_n
        a_tag.next = i_tag
        a_idx.next = idx[16:0]
        a_param.next = i_param
        a_lim.next = lim

    @always_seq(clk.posedge, reset=rst)
    def s3_step_b():
        o_valid.next = a_valid
        o_hdr.next = a_hdr
        o_ferr.next = a_ferr
        o_kind.next = a_kind
        o_val.next = a_param + a_idx
        o_first.next = a_first
        o_n.next = a_n + 1
        o_tag.next = a_tag
        o_l3err.next = a_kind == 0 and (a_lim <= 0 or a_idx >= a_lim)
        if a_kind[1]:
            o_cnt.next = a_idx + 1
        else:
            o_cnt.next = 1

    return s3_amount, s3_index, s3_limit, s3_step_a, s3_step_b
