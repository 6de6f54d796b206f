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
w_valid, w_data, w_pop              ``ASSIGN="load"`` (``None`` with ``"rr"``): the oldest recorded header weight
                                    (:func:`stripe_weight`, 17 bits), its valid flag, and the pop that takes it
                                    (:mod:`lutzip.hdl.lanes.lane_sched`)
busy                                the core is busy or the buffer holds rows
LANE, LANES, ROWS                   this lane's number, the number of lanes, the buffer's rows (power of two)
ASSIGN                              ``"rr"`` (stripe i on lane i mod LANES) or ``"load"`` (least-loaded lane)
**core                              the core's parameters (docs/CORE.md section 1)

Packing: the core's words are gathered into rows of ``LANES`` words (:mod:`lutzip.hdl.stages.lane_slot`); a row
is closed by its ``LANES``-th word or by a word with ``tlast`` (a stripe's last word or its error marker), so a
row never holds words of two stripes and ``keep`` (1 .. LANES) counts its words; the words above them are 0.
The core's ``m_axis_tready`` is the buffer's credit: at most ``ROWS - 1`` rows held (registered level; with two or
more lanes a flip-flop from the level of the cycle before, at most ``ROWS - 2`` rows then).

``ASSIGN="load"``: the weight of every header word the lane takes goes into a 16-entry FIFO (a header waits while
it held 14 or more in the cycle before); the scheduler takes them in stream order.

The buffer: with one lane :mod:`lutzip.hdl.stages.row_fifo` (the RAM's read register is the head), with more
:mod:`lutzip.hdl.lanes.lane_buffer` (the RAM's pins see flip-flops only; the head is a fabric register and the
output select does not start at the RAM's clock-to-out).
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv

from lutzip.hdl.core.decoder_core import decoder_core
from lutzip.hdl.lanes.lane_buffer import lane_buffer
from lutzip.hdl.stages.lane_slot import lane_slot
from lutzip.hdl.stages.row_fifo import row_fifo
from lutzip.hdl.stages.sync_fifo import sync_fifo

STRIPE_BITS = 32   #: width of the reported stripe index
HF_DEPTH = 16      #: header weights a lane records (ASSIGN="load"): stripes taken, not yet counted by lane_sched
MARKER = 0x4C5A
ROW_MARKER = 0x4C5B   #: a row stripe's header marker (docs/FORMAT.md section 3.1; counted with MIRROR=1)


def stripe_weight(header: int, mirror: int = 0) -> int:
    """The weight of a stripe for ``ASSIGN="load"``: ``n`` (header bits 15..0, plus 1) for a header with the marker
    (``0x4C5A``; with ``mirror`` -- a decoder built with ``MIRROR=1`` -- also a row stripe's ``0x4C5B``: its coded
    words plus 1), else 1."""
    h = int(header) & 0xFFFFFFFF
    return (h & 0xFFFF) + 1 if h >> 16 == MARKER or (mirror and h >> 16 == ROW_MARKER) else 1


def keep_bits(lanes: int) -> int:
    """Bits of the ``keep`` count (1 .. ``lanes``)."""
    return int(lanes).bit_length()


def row_bits(lanes: int, W: int) -> int:
    """Bits of one buffered row: ``LANES`` words, ``keep``, ``last``, ``user``."""
    return lanes * W + keep_bits(lanes) + 2


@block
def decoder_lane(clk, rst, s_tdata, s_tvalid, s_tready, s_tlast, tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                 pop, head, hvalid, w_valid, w_data, w_pop, busy,
                 LANE=0, LANES=1, ROWS=16, L=8, W=16, LUT3_DEPTH=4096, LUT1_RAM="block", FRONT="window",
                 STEP="adder", ASSIGN="rr", STATES=1, MIRROR=0, MAX_N=512):
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
    # ------------------------------------------------------------------ header weights (ASSIGN="load")
    hf_insts = []
    if ASSIGN == "load":
        at_hdr = Signal(bool(1))
        hf_full = Signal(bool(0))
        k_valid, k_ready = Signal(bool(0)), Signal(bool(0))
        hf_wr = Signal(bool(0))
        hf_w = Signal(intbv(0)[17:])
        hf_count = Signal(intbv(0, min=0, max=HF_DEPTH + 1))
        hf_insts.append(sync_fifo(clk, rst, hf_wr, hf_w, w_pop, w_data, hf_count, DEPTH=HF_DEPTH))

        if not MIRROR:
            @always_comb
            def hf_gate():
                k_valid.next = l_valid and not (at_hdr and hf_full)
                s_tready.next = k_ready and not (at_hdr and hf_full)
                hf_wr.next = l_valid and k_ready and at_hdr and not hf_full
                if l_data[32:16] == MARKER:
                    hf_w.next = l_data[16:0] + 1
                else:
                    hf_w.next = 1
                w_valid.next = hf_count != 0
        else:
            # row stripes (MIRROR=1): a header with the row marker weighs n + 1 too (stripe_weight(h, mirror=1))
            @always_comb
            def hf_gate():
                k_valid.next = l_valid and not (at_hdr and hf_full)
                s_tready.next = k_ready and not (at_hdr and hf_full)
                hf_wr.next = l_valid and k_ready and at_hdr and not hf_full
                if l_data[32:16] == MARKER or l_data[32:16] == ROW_MARKER:
                    hf_w.next = l_data[16:0] + 1
                else:
                    hf_w.next = 1
                w_valid.next = hf_count != 0

        @always_seq(clk.posedge, reset=rst)
        def hf_track():
            if l_valid and k_ready and not (at_hdr and hf_full):
                at_hdr.next = l_last
            # registered, so the core's input valid is one gate after flip-flops: the count of the cycle before
            # (at most 13 then: at most 14 now, 15 after a write)
            hf_full.next = hf_count >= HF_DEPTH - 2

        hf_insts += [hf_gate, hf_track]
        core_valid, core_ready = k_valid, k_ready
    else:
        core_valid, core_ready = l_valid, s_tready
    # ------------------------------------------------------------------ the single-lane core
    c_data = Signal(intbv(0)[W:])
    c_valid, c_ready, c_last, c_user = [Signal(bool(0)) for _ in range(4)]
    c_err_valid, c_busy = Signal(bool(0)), Signal(bool(0))
    c_err_code = Signal(intbv(0)[4:])
    core = decoder_core(clk, rst, l_data, core_valid, core_ready, l_last,
                        c_data, c_valid, c_ready, c_last, c_user,
                        tbl_we, tbl_sel, tbl_addr, tbl_wdata, c_err_valid, c_err_code, c_busy,
                        L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT, STEP=STEP,
                        STATES=STATES, MIRROR=MIRROR, MAX_N=MAX_N)

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

    if LANES == 1:
        @always_comb
        def pack_ctl():
            c_ready.next = level < ROWS - 1
            xfer.next = c_valid and level < ROWS - 1
            push.next = c_valid and level < ROWS - 1 and (c_last or cnt == kmax)
            keep.next = cnt + 1

        pack_room = None
    else:
        # the credit as a flip-flop: the level of the cycle before, one row lower (at most ROWS - 2 now)
        room = Signal(bool(1))

        @always_comb
        def pack_ctl():
            c_ready.next = room
            xfer.next = c_valid and room
            push.next = c_valid and room and (c_last or cnt == kmax)
            keep.next = cnt + 1

        @always_seq(clk.posedge, reset=rst)
        def pack_room():
            room.next = level < ROWS - 2

    @always_seq(clk.posedge, reset=rst)
    def pack_cnt():
        if xfer:
            if c_last or cnt == kmax:
                cnt.next = 0
            else:
                cnt.next = cnt + 1

    if LANES == 1:
        buf = row_fifo(clk, rst, push, row, pop, head, hvalid, level, DEPTH=ROWS)
    else:
        buf = lane_buffer(clk, rst, push, row, pop, head, hvalid, level, DEPTH=ROWS)

    @always_comb
    def lane_busy():
        busy.next = c_busy or level != 0 or cnt != 0

    return ([x for x in (lane_in, pack_room) if x is not None], hf_insts, core, slots, pack_ctl, pack_cnt, buf,
            lane_busy)
