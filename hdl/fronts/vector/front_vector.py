"""The vector front of the decoder core (assembly): next positions precomputed per input word, a select-only loop.

``FRONT="vector"`` of :mod:`lutzip.hdl.core.decoder_core` (the fast front; ECP5)::

    s_axis -> P pos_stage (TL x 32 reads: nx[j] = j + (c+k) at every bit j) -> entry_ring (16 entries)
           -> F loop_vector (current + next word in registers; loop: p2 -> nx[p2] -> p2)
           -> S1 align_stage (bits at ptr, LUT1)
           -> t1_* tokens, the same as the window front's

Interface
---------
clk, rst                 clock, synchronous reset
s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast   the core's input stream
lut1_we, lut1_wa, tbl_wdata   LUT1 writes (TL takes ``tbl_wdata[6:0]``, the ``c+k`` field, with them)
lut1_addr, lut1_q        LUT1 read port (:mod:`lutzip.hdl.stages.lut1_table`), used by S1
credit_ok, flush, flush_tag   flow control and stripe flush from the count stage
t1_*                     (out) token for S2 (:mod:`lutzip.hdl.stages.lut2_stage`)
idle                     (out) waiting for a header
tok_issued               (out) F's token register is valid (the symbol-FIFO credits count from there)
inflight                 (out) a token is in F's register or S1 (for ``busy``)
L, LUT1_SYNC             LUT1 address bits; LUT1 read registered (block RAM) or not
RING_DEPTH, RING_CAP     ring entries; input words accepted and not yet popped (s_axis_tready)
STATES                   code tables: 2 (docs/FORMAT.md section 2.1) doubles TL (a copy per state and bit:
                         ``lut1_wa`` = state << L | prefix, TL takes the next-state bit ``tbl_wdata[15]`` too),
                         the entries carry ``nx`` and the next state for both states, the loop carries the state
                         beside the pointer and S1 reads LUT1 at ``state << L | prefix``
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv, modbv

from lutzip.hdl.fronts.vector.align_stage import align_stage
from lutzip.hdl.fronts.vector.entry_ring import entry_ring
from lutzip.hdl.fronts.vector.pos_stage import META_BITS, pos_stage
from lutzip.hdl.fronts.vector.loop_vector import loop_vector


@block
def front_vector(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, lut1_we, lut1_wa, tbl_wdata,
                 lut1_addr, lut1_q, credit_ok, flush, flush_tag, t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c,
                 t1_first, t1_n, t1_tag, idle, tok_issued, inflight, L=8, LUT1_SYNC=True, RING_DEPTH=16,
                 RING_CAP=14, STATES=1):
    pbits = (RING_DEPTH - 1).bit_length() + 1
    two = STATES == 2
    vw = 32 * STATES
    tl_wd = Signal(intbv(0)[6 + STATES - 1:])
    pop = Signal(intbv(0)[2:])
    e_push = Signal(bool(0))
    e_meta = Signal(intbv(0)[META_BITS:])
    e_w, e_wn = [Signal(intbv(0)[32:]) for _ in range(2)]
    e_v0, e_v1, e_v2, e_v3, e_v4, e_v5 = [Signal(intbv(0)[vw:]) for _ in range(6)]
    rp = Signal(modbv(0)[pbits:])
    wp = Signal(modbv(0)[pbits:])
    r0_w, r0_wn = [Signal(intbv(0)[32:]) for _ in range(2)]
    r0_meta = Signal(intbv(0)[META_BITS:])
    r0_v0, r0_v1, r0_v2, r0_v3, r0_v4, r0_v5 = [Signal(intbv(0)[vw:]) for _ in range(6)]
    t0_valid, t0_hdr, t0_ovr, t0_first = [Signal(bool(0)) for _ in range(4)]
    t0_w, t0_wn = [Signal(intbv(0)[32:]) for _ in range(2)]
    t0_ptr = Signal(intbv(0)[5:])
    t0_n = Signal(intbv(0)[16:])
    t0_tag = Signal(intbv(0)[len(t1_tag):])
    t0_q, t0_q2, t0_q3 = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    r1_flags, e_flags = Signal(intbv(0)[3:]), Signal(intbv(0)[3:])
    e_start, e_last, e_n0 = [Signal(bool(0)) for _ in range(3)]

    if two:
        e_vs, r0_vs = [Signal(intbv(0)[vw:]) for _ in range(2)]
        t0_st = Signal(bool(0))

        @always_comb
        def fv_tl():
            tl_wd.next = concat(tbl_wdata[15], tbl_wdata[6:0])
            # the pushed entry's flags (kept beside the ring for the front's head-of-ring flip-flops)
            e_start.next = e_meta[3] or (e_meta[2] and e_meta[1])
            e_last.next = e_meta[0]
            e_n0.next = e_meta[META_BITS:4] == 0
    else:
        e_vs = r0_vs = t0_st = None

        @always_comb
        def fv_tl():
            tl_wd.next = tbl_wdata[6:0]
            # the pushed entry's flags (kept beside the ring for the front's head-of-ring flip-flops)
            e_start.next = e_meta[3] or (e_meta[2] and e_meta[1])
            e_last.next = e_meta[0]
            e_n0.next = e_meta[META_BITS:4] == 0

    @always_comb
    def fv_flags3():
        # concat of signals (MyHDL's VHDL for concat over boolean expressions does not analyse in GHDL)
        e_flags.next = concat(e_n0, e_last, e_start)

    pos = pos_stage(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, lut1_we, lut1_wa, tl_wd,
                    pop, e_push, e_w, e_wn, e_meta, e_v0, e_v1, e_v2, e_v3, e_v4, e_v5, L=L, CAP=RING_CAP,
                    **({"o_vs": e_vs, "STATES": 2} if two else {}))
    rd = (r0_w, r0_wn, r0_meta, r0_v0, r0_v1, r0_v2, r0_v3, r0_v4, r0_v5)
    ring = entry_ring(clk, rst, e_push, e_w, e_wn, e_meta, e_v0, e_v1, e_v2, e_v3, e_v4, e_v5, e_flags, rp, wp, *rd,
                      r1_flags, DEPTH=RING_DEPTH, **({"vs": e_vs, "r0_vs": r0_vs} if two else {}))
    front = loop_vector(clk, rst, rp, pop, e_push, e_flags, *rd, r1_flags, credit_ok, flush, flush_tag,
                        t0_valid, t0_hdr, t0_ovr, t0_w, t0_wn, t0_ptr, t0_first, t0_n, t0_tag, idle,
                        **({"r0_vs": r0_vs, "t_st": t0_st, "STATES": 2} if two else {}))
    s1 = align_stage(clk, rst, lut1_addr, lut1_q, t0_valid, t0_hdr, t0_ovr, t0_w, t0_wn, t0_ptr, t0_first, t0_n,
                     t0_tag, t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n, t1_tag, L=L,
                     SYNC=LUT1_SYNC, **({"i_st": t0_st} if two else {}))

    @always_seq(clk.posedge, reset=rst)
    def fv_track():
        t0_q.next = t0_valid
        t0_q2.next = t0_q
        t0_q3.next = t0_q2

    @always_comb
    def fv_flags():
        tok_issued.next = t0_valid
        inflight.next = t0_valid or t0_q or t0_q2 or t0_q3

    return fv_tl, fv_flags3, pos, ring, front, s1, fv_track, fv_flags
