"""One lane of the N-lane decoder (:mod:`lutzip.hdl.core.decoder_lanes`): the single-lane core, a row packer and
the lane's output buffer.

Interface
---------
clk, rst                            clock, synchronous active-high reset
s_tdata, s_tvalid, s_tlast          the decoder's bundled input ports (all lanes'; one lane: the core's)
s_tready                            the lane's ``s_axis_tready`` (its core's)
tbl_we, tbl_sel, tbl_addr, tbl_wdata    the table-write port, shared by every lane (each lane's core holds
                                    its own copy of LUT1, LUT2, LUT3 and the config)
pop, head, hvalid                   the head row of the lane's output buffer: ``head`` =
                                    ``{user, last, keep, word[LANES-1] .. word[0]}`` (word 0 in the low bits),
                                    ``pop`` takes it
err_valid, err_code, err_stripe     one-cycle report when an error marker leaves the lane's core: the code and
                                    the stripe's index in the stream (``LANE + LANES * i`` for the lane's i-th
                                    stripe since reset)
busy                                the core is busy or the buffer holds rows
LANE, LANES, ROWS                   this lane's number, the number of lanes, the buffer's rows (power of two)
**core                              the core's parameters (docs/CORE.md section 1)

Packing: the core's words are gathered into rows of ``LANES`` words (:mod:`lutzip.hdl.stages.lane_slot`); a row
is closed by its ``LANES``-th word or by a word with ``tlast`` (a stripe's last word or its error marker), so a
row never holds words of two stripes and ``keep`` (1 .. LANES) counts its words; the words above them are 0.
The core's ``m_axis_tready`` is the buffer's credit: at most ``ROWS - 1`` rows held (registered level).
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv, modbv

from lutzip.hdl.core.decoder_core import decoder_core
from lutzip.hdl.stages.lane_slot import lane_slot
from lutzip.hdl.stages.row_fifo import row_fifo

STRIPE_BITS = 32   #: width of the reported stripe index


def keep_bits(lanes: int) -> int:
    """Bits of the ``keep`` count (1 .. ``lanes``)."""
    return int(lanes).bit_length()


def row_bits(lanes: int, W: int) -> int:
    """Bits of one buffered row: ``LANES`` words, ``keep``, ``last``, ``user``."""
    return lanes * W + keep_bits(lanes) + 2


@block
def decoder_lane(clk, rst, s_tdata, s_tvalid, s_tready, s_tlast, tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                 pop, head, hvalid, err_valid, err_code, err_stripe, busy,
                 LANE=0, LANES=1, ROWS=16, L=8, W=16, LUT3_DEPTH=4096, LUT1_RAM="block", FRONT="window",
                 STEP="adder"):
    kb = keep_bits(LANES)
    # ------------------------------------------------------------------ this lane's input bits
    # (plain signals, not shadow slices: MyHDL's VHDL would slice a slice with the outer indices)
    if LANES > 1:
        l_data = Signal(intbv(0)[32:])
        l_valid, l_last = Signal(bool(0)), Signal(bool(0))
        lo, hi = 32 * LANE, 32 * LANE + 32

        @always_comb
        def lane_in():
            l_data.next = s_tdata[hi:lo]
            l_valid.next = s_tvalid[LANE]
            l_last.next = s_tlast[LANE]
    else:
        l_data, l_valid, l_last, lane_in = s_tdata, s_tvalid, s_tlast, None
    # ------------------------------------------------------------------ the single-lane core
    c_data = Signal(intbv(0)[W:])
    c_valid, c_ready, c_last, c_user = [Signal(bool(0)) for _ in range(4)]
    c_err_valid, c_busy = Signal(bool(0)), Signal(bool(0))
    c_err_code = Signal(intbv(0)[4:])
    core = decoder_core(clk, rst, l_data, l_valid, s_tready, l_last,
                        c_data, c_valid, c_ready, c_last, c_user,
                        tbl_we, tbl_sel, tbl_addr, tbl_wdata, c_err_valid, c_err_code, c_busy,
                        L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT, STEP=STEP)

    # ------------------------------------------------------------------ row packer
    xfer = Signal(bool(0))
    cnt = Signal(intbv(0, min=0, max=LANES))
    slots_q = [Signal(intbv(0)[W:]) for _ in range(LANES)]
    slots = [lane_slot(clk, xfer, cnt, c_data, slots_q[i], SLOT=i) for i in range(LANES)]
    push = Signal(bool(0))
    keep = Signal(intbv(0)[kb:])
    row = ConcatSignal(c_user, c_last, keep, *reversed(slots_q))
    level = Signal(intbv(0, min=0, max=ROWS + 2))
    kmax = LANES - 1

    @always_comb
    def pack_ctl():
        c_ready.next = level < ROWS - 1
        xfer.next = c_valid and level < ROWS - 1
        push.next = c_valid and level < ROWS - 1 and (c_last or cnt == kmax)
        keep.next = cnt + 1

    @always_seq(clk.posedge, reset=rst)
    def pack_cnt():
        if xfer:
            if c_last or cnt == kmax:
                cnt.next = 0
            else:
                cnt.next = cnt + 1

    buf = row_fifo(clk, rst, push, row, pop, head, hvalid, level, DEPTH=ROWS)

    # ------------------------------------------------------------------ error reports
    sidx = Signal(modbv(LANE)[STRIPE_BITS:])
    step = LANES

    @always_seq(clk.posedge, reset=rst)
    def errors():
        err_valid.next = xfer and c_user
        if xfer and c_user:
            err_code.next = c_data[4:0]
            err_stripe.next = sidx
        if xfer and c_last:
            sidx.next = sidx + step

    @always_comb
    def lane_busy():
        busy.next = c_busy or level != 0 or cnt != 0

    return [x for x in (lane_in,) if x is not None], core, slots, pack_ctl, pack_cnt, buf, errors, lane_busy
