"""Stage S3: index extraction and the LUT3 address / RANGE value / run length of each symbol.

Interface
---------
clk, rst                 clock, synchronous reset
n_lut3[13]               configured number of valid LUT3 entries (<= LUT3_DEPTH)
i_valid, i_hdr, i_ferr[4], i_sh[32], i_kind[2], i_k[5], i_param[16], i_first, i_n[16], i_tag[3]
                         token from S2
o_valid, o_hdr, o_ferr[4], o_kind[2], o_first, o_n[16], o_tag[3]   token fields passed on (registered)
o_cnt[17]                words the symbol stands for: ZRUN -> index + 1, LUT / RANGE -> 1
o_val[17]                ``param + index``: the LUT3 address (LUT) or the output word (RANGE)
o_l3err                  LUT class and ``param + index >= n_lut3``

index = top ``k`` bits of ``i_sh`` (``i_sh >> (32 - k)``; k = 0 gives 0), truncated to 16 bits.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv


@block
def index_stage(clk, rst, n_lut3, i_valid, i_hdr, i_ferr, i_sh, i_kind, i_k, i_param, i_first, i_n, i_tag,
                o_valid, o_hdr, o_ferr, o_kind, o_cnt, o_val, o_l3err, o_first, o_n, o_tag):
    sa = Signal(intbv(0)[6:])
    idx = Signal(intbv(0)[32:])
    val = Signal(intbv(0)[17:])

    @always_comb
    def s3_amount():
        sa.next = 32 - i_k

    @always_comb
    def s3_index():
        idx.next = i_sh >> sa

    @always_comb
    def s3_value():
        val.next = i_param + idx[16:0]

    @always_seq(clk.posedge, reset=rst)
    def s3_regs():
        o_valid.next = i_valid
        o_hdr.next = i_hdr
        o_ferr.next = i_ferr
        o_kind.next = i_kind
        o_val.next = val
        o_first.next = i_first
        o_n.next = i_n
        o_tag.next = i_tag
        o_l3err.next = i_kind == 0 and val >= n_lut3
        if i_kind[1]:
            o_cnt.next = idx[16:0] + 1
        else:
            o_cnt.next = 1

    return s3_amount, s3_index, s3_value, s3_regs
