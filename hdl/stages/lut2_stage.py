"""Stage S2: LUT2 lookup by class and removal of the class code from the symbol bits.

(``[T]``: the stripe tag width, ``TAG_BITS`` of :mod:`lutzip.hdl.core.decoder_core`.)

Interface
---------
clk, rst                 clock, synchronous reset
we, waddr[4], wdata[23]  LUT2 write port (kind[22:21] | k[20:16] | param[15:0]); contents survive reset
i_valid, i_hdr, i_ferr[4], i_sym[32], i_cls[4], i_c[4], i_first, i_n[16], i_tag[T]
                         token from the front (:mod:`lutzip.hdl.fronts.window.loop_window_ctrl` or :mod:`lutzip.hdl.fronts.vector.align_stage`)
o_valid, o_hdr, o_ferr[4], o_first, o_n[16], o_tag[T]   token fields passed on (registered)
o_sh[32]                 ``i_sym << i_c``: the index is now the top ``k`` bits
o_kind[2], o_k[5], o_param[16]   LUT2 fields of the token's class

LUT2 (16 entries) is small distributed RAM read asynchronously from the registered class.
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv


@block
def lut2_stage(clk, rst, we, waddr, wdata, i_valid, i_hdr, i_ferr, i_sym, i_cls, i_c, i_first, i_n, i_tag,
               o_valid, o_hdr, o_ferr, o_sh, o_kind, o_k, o_param, o_first, o_n, o_tag):
    mem = [Signal(intbv(0)[23:]) for _ in range(16)]
    rd = Signal(intbv(0)[23:])

    @always(clk.posedge)
    def lut2_write():
        if we:
            mem[waddr].next = wdata

    @always_comb
    def lut2_read():
        rd.next = mem[i_cls]

    @always_seq(clk.posedge, reset=rst)
    def s2_regs():
        o_valid.next = i_valid
        o_hdr.next = i_hdr
        o_ferr.next = i_ferr
        o_first.next = i_first
        o_n.next = i_n
        o_tag.next = i_tag
        o_sh.next = i_sym << i_c
        o_kind.next = rd[23:21]
        o_k.next = rd[21:16]
        o_param.next = rd[16:0]

    return lut2_write, lut2_read, s2_regs
