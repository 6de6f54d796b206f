"""The window front of the decoder core (assembly): input FIFO + the window loop (stage F, LUT1 inside it).

``FRONT="window"`` of :mod:`lutzip.hdl.core.decoder_core` (the smaller front; iCE40 boards). It turns the input
stream into symbol tokens for S2. Files: ``front_window.py`` assembles the front; the loop stage F is one block
per decode step, ``loop_window_adder.py`` and ``loop_window_onehot.py``, on the stripe control both share,
``loop_window_ctrl.py`` (as :mod:`lutzip.hdl.fronts.vector.front_vector` assembles ``loop_vector.py``).

Decode step (``STEP``, :func:`window_step`)
--------------------------------------------
``"adder"``   :mod:`~lutzip.hdl.fronts.window.loop_window_adder` steps by ``ptr + (c+k)`` and a shifter (small),
              with :mod:`~lutzip.hdl.stages.input_fifo_shift` (block-RAM LUT1) or
              :mod:`~lutzip.hdl.stages.input_fifo_ring` (distributed LUT1).
``"onehot"``  :mod:`~lutzip.hdl.fronts.window.loop_window_onehot` steps by AND-OR selects with LUT1's one-hot
              ``c+k`` (faster, ~1500 LUT4 more), with :mod:`~lutzip.hdl.stages.input_fifo_defer`. It applies
              with the block-RAM LUT1 and L <= 11; **where it does not apply (distributed LUT1, L = 12) the
              adder step is built** (ports, words, errors and latency are the same). With two code tables
              (``STATES=2``) the adder step is built too.

Interface
---------
clk, rst                 clock, synchronous reset
s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast   the core's input stream
lut1_addr, lut1_q        LUT1 read port (:mod:`lutzip.hdl.stages.lut1_table`)
lut1_oh, lut1_re, lut1_t2   LUT1's one-hot ``c+k``, (out) read enable and second ``c+k`` copy: given exactly
                         when the one-hot step is built (``window_step(STEP, LUT1_SYNC, L) == "onehot"``)
credit_ok, flush, flush_tag   flow control and stripe flush from the count stage
t1_*                     (out) token for S2 (:mod:`lutzip.hdl.stages.lut2_stage`)
idle                     (out) waiting for a header
tok_issued               (out) a token was issued (= t1_valid), for the symbol-FIFO credits
inflight                 (out) tokens between F and S2 that t1_valid does not show (none here)
L, LUT1_SYNC, STEP       LUT1 address bits; LUT1 read registered (block RAM) or not; decode step (above)
STATES                   code tables: 1, or 2 (``lut1_addr`` then has L + 1 bits, ``state << L | prefix``, and
                         ``lut1_q`` 16, bit 15 the next state; :mod:`~lutzip.hdl.fronts.window.loop_window_adder`)
"""
from myhdl import Signal, always_comb, block, concat, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.fronts.header import MARKER
from lutzip.hdl.fronts.window.loop_window_adder import loop_window_adder
from lutzip.hdl.fronts.window.loop_window_onehot import loop_window_onehot, onehot_width
from lutzip.hdl.stages.input_fifo import DEPTH as IN_DEPTH
from lutzip.hdl.stages.input_fifo_defer import input_fifo_defer
from lutzip.hdl.stages.input_fifo_ring import input_fifo_ring
from lutzip.hdl.stages.input_fifo_shift import input_fifo_shift

STEPS = ("adder", "onehot")


def window_step(STEP, LUT1_SYNC, L, STATES=1):
    """The decode step the window front builds for these parameters.

    Parameters
    ----------
    STEP : str
        ``"adder"`` or ``"onehot"``.
    LUT1_SYNC : bool
        LUT1 read registered (block RAM) or not (distributed RAM).
    L : int
        LUT1 address bits.
    STATES : int
        Code tables (1, or 2: format version 5; the one-hot step reads one table only).

    Returns
    -------
    str
        ``"onehot"`` where it was asked for and applies (block-RAM LUT1, ``onehot_width(L)`` > 0, one code
        table), else ``"adder"``.

    Raises
    ------
    UnsupportedError
        ``STEP`` is neither of the two.
    """
    if STEP not in STEPS:
        raise UnsupportedError(f"STEP = {STEP!r}: 'adder' or 'onehot'")
    return "onehot" if STEP == "onehot" and LUT1_SYNC and onehot_width(L) > 0 and STATES == 1 else "adder"


@block
def front_window(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, lut1_addr, lut1_q,
                 credit_ok, flush, flush_tag, t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n,
                 t1_tag, idle, tok_issued, inflight, lut1_oh=None, lut1_re=None, lut1_t2=None, L=8,
                 LUT1_SYNC=True, STEP="adder", STATES=1):
    onehot = window_step(STEP, LUT1_SYNC, L, STATES) == "onehot"
    oh_ports = (lut1_oh, lut1_re, lut1_t2)
    if onehot and any(p is None for p in oh_ports):
        raise UnsupportedError("front_window: the one-hot step needs lut1_oh, lut1_re and lut1_t2")
    if not onehot and any(p is not None for p in oh_ports):
        raise UnsupportedError("front_window: lut1_oh / lut1_re / lut1_t2 given, but the adder step is built "
                               f"(STEP = {STEP!r}, LUT1_SYNC = {LUT1_SYNC}, L = {L})")
    in_push = Signal(bool(0))
    in_wdata = Signal(intbv(0)[34:])  # marker_ok | tlast | tdata (marker_ok: the word is a good header)
    in_pop = Signal(intbv(0)[2:])
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

    tok = (t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n, t1_tag, idle)
    if onehot:
        in_pop_x = Signal(bool(0))    # the refill's pop (late)
        in_take_s = Signal(bool(0))   # a stripe start: the FIFO pops what its heads say
        # the FIFO's head after popping 0..3 (the one-hot step prepares the word after its window from these)
        in_after = [Signal(intbv(0)[34:]) for _ in range(4)]
        in_fifo = input_fifo_defer(clk, rst, in_push, in_wdata, in_pop, in_pop_x, in_take_s, h0, h1, h2, in_count,
                                   in_gt, after=in_after)
        front = loop_window_onehot(clk, rst, h0, h1, h2, in_gt, in_pop, in_pop_x, in_take_s, in_after, lut1_addr,
                                   lut1_q, lut1_oh, lut1_re, lut1_t2, credit_ok, flush, flush_tag, *tok, L=L)
    else:
        fifo = input_fifo_shift if LUT1_SYNC else input_fifo_ring
        in_fifo = fifo(clk, rst, in_push, in_wdata, in_pop, h0, h1, h2, in_count, count_gt=in_gt)
        front = loop_window_adder(clk, rst, h0, h1, h2, in_gt, in_pop, lut1_addr, lut1_q, credit_ok, flush,
                                  flush_tag, *tok, L=L, LUT1_SYNC=LUT1_SYNC, STATES=STATES)

    @always_comb
    def wf_issued():
        tok_issued.next = t1_valid
        inflight.next = 0

    return in_side, in_word, in_ready_out, in_fifo, front, wf_issued
