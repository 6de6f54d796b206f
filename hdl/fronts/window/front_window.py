"""The window front of the decoder core: input FIFO + bit window (LUT1 inside the one-cycle loop).

``FRONT="window"`` of :mod:`lutzip.hdl.core.decoder_core` (the smaller front; iCE40 boards). It turns the input
stream into symbol tokens for S2 (see :mod:`lutzip.hdl.fronts.window.bit_window` for the loop and the token).

Interface
---------
clk, rst                 clock, synchronous reset
s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast   the core's input stream
lut1_addr, lut1_q        LUT1 read port (:mod:`lutzip.hdl.stages.lut1_table`)
lut1_oh, lut1_re         LUT1's one-hot ``c+k`` and (out) read enable (optional; :mod:`lutzip.hdl.fronts.window.bit_window`, "One-hot step")
credit_ok, flush, flush_tag   flow control and stripe flush from the count stage
t1_*                     (out) token for S2 (:mod:`lutzip.hdl.stages.lut2_stage`)
idle                     (out) waiting for a header
tok_issued               (out) a token was issued (= t1_valid), for the symbol-FIFO credits
inflight                 (out) tokens between F and S2 that t1_valid does not show (none here)
"""
from myhdl import Signal, always_comb, block, concat, intbv

from lutzip.hdl.fronts.window.bit_window import MARKER, bit_window
from lutzip.hdl.stages.input_fifo import DEPTH as IN_DEPTH
from lutzip.hdl.stages.input_fifo import input_fifo


@block
def front_window(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, lut1_addr, lut1_q,
                 credit_ok, flush, flush_tag, t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n,
                 t1_tag, idle, tok_issued, inflight, lut1_oh=None, lut1_re=None, lut1_t2=None, L=8,
                 LUT1_SYNC=True):
    in_push = Signal(bool(0))
    in_wdata = Signal(intbv(0)[34:])  # marker_ok | tlast | tdata (marker_ok: the word is a good header)
    in_pop = Signal(intbv(0)[2:])
    in_pop_x = Signal(bool(0))
    in_take_s = Signal(bool(0))   # one-hot step: a stripe start, the FIFO pops what its heads say
    # the FIFO's head after popping 0..3 (the one-hot step prepares the word after its window from these)
    in_after = [Signal(intbv(0)[34:]) for _ in range(4)] if lut1_oh is not None else None
    h0, h1, h2 = [Signal(intbv(0)[34:]) for _ in range(3)]
    in_count = Signal(intbv(0, min=0, max=IN_DEPTH + 1))
    in_gt = Signal(intbv(0)[IN_DEPTH:])   # in_count as a thermometer code (registered)
    in_ready = Signal(bool(0))
    in_mk = Signal(bool(0))

    @always_comb
    def in_side():
        in_ready.next = not in_gt[IN_DEPTH - 1]
        in_push.next = s_axis_tvalid and not in_gt[IN_DEPTH - 1] and not rst
        in_mk.next = s_axis_tdata[32:16] == MARKER

    @always_comb
    def in_word():
        in_wdata.next = concat(in_mk, s_axis_tlast, s_axis_tdata)

    @always_comb
    def in_ready_out():
        s_axis_tready.next = in_ready and not rst

    in_fifo = input_fifo(clk, rst, in_push, in_wdata, in_pop, h0, h1, h2, in_count, pop_x=in_pop_x,
                         after=in_after, count_gt=in_gt,
                         take_start=in_take_s if lut1_oh is not None else None,
                         SHIFT=LUT1_SYNC, DEFER=lut1_oh is not None)

    front = bit_window(clk, rst, h0, h1, h2, in_gt, in_pop, in_pop_x, in_take_s, lut1_addr, lut1_q, credit_ok, flush, flush_tag,
                       t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n, t1_tag, idle,
                       lut1_oh=lut1_oh, lut1_re=lut1_re, lut1_t2=lut1_t2, in_after=in_after, L=L,
                       LUT1_SYNC=LUT1_SYNC)

    @always_comb
    def wf_issued():
        tok_issued.next = t1_valid
        inflight.next = 0

    return in_side, in_word, in_ready_out, in_fifo, front, wf_issued
