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

Input register (two or more lanes): the lane's words pass a two-row skid (:mod:`lutzip.hdl.lanes.lane_skid`)
before the core, so ``s_tready`` is a flip-flop gated by the header-weight FIFO's flip-flops, and the core's input
valid, word and tlast are flip-flops: the core's input accept (its ready, the header and tlast checks, the enables
of its first word registers) starts and ends at flip-flops beside it. With ``ASSIGN="load"`` the header weights
are recorded as the words enter the skid. One cycle more from a lane's input to its core, one word per cycle.

The buffer: with one lane :mod:`lutzip.hdl.stages.row_fifo` (the RAM's read register is the head), with more
:mod:`lutzip.hdl.lanes.lane_buffer` (the RAM's pins see flip-flops only; the head is a fabric register and the
output select does not start at the RAM's clock-to-out).
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv

from lutzip.hdl.core.decoder_core import decoder_core
from lutzip.hdl.lanes.lane_buffer import lane_buffer
from lutzip.hdl.lanes.lane_skid import lane_skid
from lutzip.hdl.stages.lane_slot import lane_slot
from lutzip.hdl.stages.row_fifo import row_fifo
from lutzip.hdl.stages.sync_fifo import sync_fifo

STRIPE_BITS = 32   #: width of the reported stripe index
HF_DEPTH = 16      #: header weights a lane records (ASSIGN="load"): stripes taken, not yet counted by lane_sched
MARKER = 0x4C5A


def stripe_weight(header: int) -> int:
    """The weight of a stripe for ``ASSIGN="load"``: ``n`` (header bits 15..0, plus 1) for a header with the marker,
    else 1."""
    h = int(header) & 0xFFFFFFFF
    return (h & 0xFFFF) + 1 if h >> 16 == MARKER else 1


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
                 STEP="adder", ASSIGN="rr", STATES=1):
    kb = keep_bits(LANES)
    # ------------------------------------------------------------------ this lane's input bits
    # (plain signals, not shadow slices: MyHDL's VHDL would slice a slice with the outer indices)
    in_insts = []
    if LANES > 1:
        l_data = Signal(intbv(0)[32:])
        l_valid, l_last = Signal(bool(0)), Signal(bool(0))
        lo, hi = 32 * LANE, 32 * LANE + 32

        @always_comb
        def lane_in():
            l_data.next = s_tdata[hi:lo]
            l_valid.next = s_tvalid[LANE]
            l_last.next = s_tlast[LANE]

        # the input register: a skid (lane_skid) between the lane's input bits and its core, so the lane's
        # s_tready is a flip-flop (and the header-weight gate of the cycle before) and the core's input valid,
        # word and tlast are flip-flops: nothing runs from the core's ready (its input stage's accept) to a pin
        k_in = ConcatSignal(l_last, l_data)
        k_row = Signal(intbv(0)[33:])
        k_in_valid, k_in_ready, k_in_take = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
        k_out_valid, k_out_ready = Signal(bool(0)), Signal(bool(0))
        k_data = Signal(intbv(0)[32:])
        k_last = Signal(bool(0))
        in_insts.append(lane_skid(clk, rst, k_in, k_in_valid, k_in_ready, k_in_take, k_row, k_out_valid,
                                  k_out_ready))

        @always_comb
        def lane_in_row():
            k_data.next = k_row[32:0]
            k_last.next = k_row[32]

        in_insts += [lane_in, lane_in_row]
    else:
        l_data, l_valid, l_last = s_tdata, s_tvalid, s_tlast
    # ------------------------------------------------------------------ header weights (ASSIGN="load")
    hf_insts = []
    if ASSIGN == "load":
        at_hdr = Signal(bool(1))
        hf_full = Signal(bool(0))
        if LANES == 1:
            k_valid, k_ready = Signal(bool(0)), Signal(bool(0))
        hf_wr = Signal(bool(0))
        hf_w = Signal(intbv(0)[17:])
        hf_count = Signal(intbv(0, min=0, max=HF_DEPTH + 1))
        hf_insts.append(sync_fifo(clk, rst, hf_wr, hf_w, w_pop, w_data, hf_count, DEPTH=HF_DEPTH))

        if LANES > 1:
            # the header weights are recorded as the words enter the input skid
            @always_comb
            def hf_gate():
                k_in_valid.next = l_valid and not (at_hdr and hf_full)
                s_tready.next = k_in_ready and not (at_hdr and hf_full)
                hf_wr.next = l_valid and k_in_ready and at_hdr and not hf_full
                if l_data[32:16] == MARKER:
                    hf_w.next = l_data[16:0] + 1
                else:
                    hf_w.next = 1
                w_valid.next = hf_count != 0

            @always_seq(clk.posedge, reset=rst)
            def hf_track():
                if l_valid and k_in_ready and not (at_hdr and hf_full):
                    at_hdr.next = l_last
                # registered: the count of the cycle before (at most 13 then: at most 14 now, 15 after a write)
                hf_full.next = hf_count >= HF_DEPTH - 2
        else:
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

            @always_seq(clk.posedge, reset=rst)
            def hf_track():
                if l_valid and k_ready and not (at_hdr and hf_full):
                    at_hdr.next = l_last
                # registered, so the core's input valid is one gate after flip-flops: the count of the cycle before
                # (at most 13 then: at most 14 now, 15 after a write)
                hf_full.next = hf_count >= HF_DEPTH - 2

        hf_insts += [hf_gate, hf_track]
    if LANES > 1:
        if ASSIGN != "load":
            @always_comb
            def rr_gate():
                k_in_valid.next = l_valid
                s_tready.next = k_in_ready

            hf_insts.append(rr_gate)
        core_data, core_valid, core_ready, core_last = k_data, k_out_valid, k_out_ready, k_last
    elif ASSIGN == "load":
        core_data, core_valid, core_ready, core_last = l_data, k_valid, k_ready, l_last
    else:
        core_data, core_valid, core_ready, core_last = l_data, l_valid, s_tready, l_last
    # ------------------------------------------------------------------ the single-lane core
    c_data = Signal(intbv(0)[W:])
    c_valid, c_ready, c_last, c_user = [Signal(bool(0)) for _ in range(4)]
    c_err_valid, c_busy = Signal(bool(0)), Signal(bool(0))
    c_err_code = Signal(intbv(0)[4:])
    core = decoder_core(clk, rst, core_data, core_valid, core_ready, core_last,
                        c_data, c_valid, c_ready, c_last, c_user,
                        tbl_we, tbl_sel, tbl_addr, tbl_wdata, c_err_valid, c_err_code, c_busy,
                        L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT, STEP=STEP,
                        STATES=STATES)

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

    if LANES == 1:
        @always_comb
        def lane_busy():
            busy.next = c_busy or level != 0 or cnt != 0
    else:
        @always_comb
        def lane_busy():
            busy.next = c_busy or level != 0 or cnt != 0 or k_out_valid

    return ([x for x in (pack_room,) if x is not None], in_insts, hf_insts, core, slots, pack_ctl, pack_cnt, buf,
            lane_busy)
