"""The N-lane decoder (docs/CORE.md section 6): ``LANES`` single-lane cores side by side, ``LANES`` words per beat
on one AXI-Stream, in the original word order.

Structure (each box a file of :mod:`lutzip.hdl`)::

    s_axis lane j (32 bits) -> decoder_lane j: decoder_core -> row packer (lane_slot x LANES) -> lane buffer
    lane buffer heads -> lane_skid j -> lane_tap chain (AND-OR select of lane ``cur``) -> output lane_skid -> m_axis

  (one lane: ``row_fifo`` -> ``lane_tap`` -> an output register, no skids.) With two or more lanes every lane's head
  row passes a two-row skid register (:mod:`lutzip.hdl.lanes.lane_skid`) whose ready is a flip-flop, and the output
  register is such a skid too: the take (select of lane ``cur``, its valid, the output's room) sees only
  flip-flops beside the output, the lane buffers' pops see only the skids' ready flip-flops, and ``m_axis_tready``
  pops the output skid alone, so no path runs from one lane's buffer through the select back to a lane or to the
  scheduler (docs/log/2026-12-lanes.md, 2026-12-07).

* ``ASSIGN="rr"``: stripe ``i`` of the stream is decoded by lane ``i mod LANES`` (the host hands each lane its
  stripes); the output takes lane ``cur``'s rows until the row with ``tlast`` (the stripe's last word or its error
  marker), then moves on to lane ``cur + 1 mod LANES``: the words come out in the order a single core gives them.
* ``ASSIGN="load"`` (the default): stripe ``i`` goes to the lane with the least load, the sum of the weights
  (:func:`lutzip.hdl.lanes.decoder_lane.stripe_weight`, from the header word) of the stripes given to it so far,
  the lowest such lane on a tie. The host computes the rule from the header words it sends; the decoder computes
  it again from the weights the lanes recorded as they took the headers (:mod:`lutzip.hdl.lanes.lane_sched`, ahead
  of the output: no idle cycle between stripes). Uneven stripes (a tensor's short last stripe, one-stripe tensors)
  spread over the lanes.
* A beat carries up to ``LANES`` consecutive words of one stripe, word 0 in the low bits; ``m_axis_tkeep`` counts
  them (1 .. LANES). Only a stripe's last beat can be short.
* Each lane buffers ``ROWS`` beats (block RAM; :mod:`lutzip.hdl.lanes.lane_buffer` with two or more lanes: a
  write register, a registered read address, the RAM's output register and a head queue); while the output
  drains one lane at ``LANES`` words per cycle the other lanes decode into their buffers, so in steady state
  every lane decodes one word per cycle when ``ROWS`` holds about ``(LANES - 1) / LANES`` of a stripe's beats
  plus the lag the output builds up at the start of a stream (:func:`default_rows`).
* Tables: each lane's core has its own LUT1, LUT2, LUT3 and config (each reads its tables every cycle); the
  table-write port reaches every lane in the same cycle.
* Errors: a lane that meets an error outputs its marker (tuser = 1 on the stripe's last beat) and resynchronises
  at its next stripe, like the single core; when that beat enters the output register ``err_valid[j]`` (j: the
  lane) pulses with ``err_code[j]`` and the stripe's index ``err_stripe[j]`` (counted from 0 since reset over the
  whole stream), so errors are reported in stream order.
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.core.ports import check_mirror
from lutzip.hdl.lanes.decoder_lane import STRIPE_BITS, decoder_lane, keep_bits, row_bits
from lutzip.hdl.lanes.lane_sched import lane_sched
from lutzip.hdl.lanes.lane_skid import lane_skid
from lutzip.hdl.stages.lane_tap import lane_tap

LANE_CHOICES = (1, 2, 4, 8)
ASSIGN_CHOICES = ("rr", "load")


DEFAULT_ASSIGN = "load"
_DEFAULT_ROWS = {1: 16, 2: 2048, 4: 2048, 8: 1024}


def default_rows(lanes: int) -> int:
    """The default buffer rows per lane: 16 for one lane, 2048 for 2 and 4 lanes, 1024 for 8 (docs/CORE.md 6.1)."""
    return _DEFAULT_ROWS[lanes]


@block
def decoder_lanes(clk, rst,
                  s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                  m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                  tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                  err_valid, err_code, err_stripe, busy,
                  LANES=2, ROWS=0, ASSIGN=DEFAULT_ASSIGN, L=8, W=16, LUT3_DEPTH=4096, LUT1_RAM="block", FRONT="window",
                  STEP="adder", STATES=1, MIRROR=0, MAX_N=512, TBL_REG=0):
    if TBL_REG:
        raise UnsupportedError("TBL_REG=1: the N-lane decoder builds its cores with the table writes unregistered")
    # MIRROR=1: every lane's core takes row stripes (a row stripe holds whole rows: docs/CORE.md section 6.8)
    check_mirror(MIRROR, MAX_N)
    if isinstance(LANES, bool) or LANES not in LANE_CHOICES:
        raise UnsupportedError(f"LANES = {LANES!r}: choose from {', '.join(map(str, LANE_CHOICES))}")
    rows = ROWS or default_rows(LANES)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 4 or rows & (rows - 1) or rows > 65536:
        raise UnsupportedError(f"ROWS = {ROWS!r}: a power of two, 4 .. 65536")
    if ASSIGN not in ASSIGN_CHOICES:
        raise UnsupportedError(f"ASSIGN = {ASSIGN!r}: choose from {', '.join(ASSIGN_CHOICES)}")
    N = LANES
    load_mode = ASSIGN == "load" and N > 1
    kb = keep_bits(N)
    E = row_bits(N, W)
    lw = N * W
    core_kw = dict(L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT, STEP=STEP, STATES=STATES,
                   MIRROR=MIRROR, MAX_N=MAX_N)

    cur = Signal(intbv(0, min=0, max=N))
    take = Signal(bool(0))
    readys = [Signal(bool(0)) for _ in range(N)]
    pops = [Signal(bool(0)) for _ in range(N)]
    heads = [Signal(intbv(0)[E:]) for _ in range(N)]
    hvalids = [Signal(bool(0)) for _ in range(N)]
    w_valids = [Signal(bool(0)) if load_mode else None for _ in range(N)]
    w_datas = [Signal(intbv(0)[17:]) if load_mode else None for _ in range(N)]
    w_pops = [Signal(bool(0)) if load_mode else None for _ in range(N)]
    busys = [Signal(bool(0)) for _ in range(N)]
    accs = [Signal(intbv(0)[E:]) for _ in range(N + 1)]
    vaccs = [Signal(bool(0)) for _ in range(N + 1)]
    lanes, taps = [], []
    if N > 1:
        # each lane's head row passes a skid register (lane_skid) beside the output select: the lane buffer's pop
        # is its head valid and the skid's ready (a flip-flop), the select and the take see only the skids
        st_heads = [Signal(intbv(0)[E:]) for _ in range(N)]
        st_valids = [Signal(bool(0)) for _ in range(N)]
        st_readys = [Signal(bool(0)) for _ in range(N)]
        st_pops = [Signal(bool(0)) for _ in range(N)]
        go = Signal(bool(0))   # the output can take lane cur's head if it has one (flip-flops only)
        skids = []
    for j in range(N):
        # the bundled input ports go to every lane, which takes its own bits (decoder_lane)
        lanes.append(decoder_lane(clk, rst, s_axis_tdata, s_axis_tvalid, readys[j], s_axis_tlast, tbl_we, tbl_sel,
                                  tbl_addr, tbl_wdata, pops[j], heads[j], hvalids[j], w_valids[j], w_datas[j],
                                  w_pops[j], busys[j],
                                  LANE=j, LANES=N, ROWS=rows, ASSIGN="load" if load_mode else "rr", **core_kw))
        if N > 1:
            skids.append(lane_skid(clk, rst, heads[j], hvalids[j], st_readys[j], pops[j], st_heads[j], st_valids[j],
                                   st_pops[j]))
            # the tap's pop is `go` for lane cur; the skid ANDs it with its own valid: the pops see flip-flops
            # and one LUT level, not the select (equal to take for lane cur, whose valid is the select's)
            taps.append(lane_tap(cur, st_heads[j], st_valids[j], accs[j] if j else None, vaccs[j] if j else None,
                                 accs[j + 1], vaccs[j + 1], go, st_pops[j], LANE=j))
        else:
            taps.append(lane_tap(cur, heads[j], hvalids[j], accs[j] if j else None, vaccs[j] if j else None,
                                 accs[j + 1], vaccs[j + 1], take, pops[j], LANE=j))
    sel, sel_valid = accs[N], vaccs[N]
    if N > 1:
        ready_cat, busy_cat = ConcatSignal(*reversed(readys)), ConcatSignal(*reversed(busys))
        stv_cat = ConcatSignal(*reversed(st_valids))
    else:
        ready_cat, busy_cat = readys[0], busys[0]

    ov = Signal(bool(0))
    od = Signal(intbv(0)[E:])
    last_lane = N - 1
    last_bit = lw + kb
    user_bit = lw + kb + 1

    # ------------------------------------------------------------------ which lane is next
    if N > 1:
        # the output register is a skid too (lane_skid): its ready is a flip-flop, m_axis_tready pops it alone
        o_valid = Signal(bool(0))
        o_ready = Signal(bool(0))
        out_skid = lane_skid(clk, rst, sel, o_valid, o_ready, take, od, ov, m_axis_tready)
        if load_mode:
            # the least-loaded lane of each stripe, in stream order, ahead of the output (lane_sched drives cur)
            cur_ok = Signal(bool(0))
            cur_pop = Signal(bool(0))
            sched = [lane_sched(clk, rst, w_valids, w_datas, w_pops, cur, cur_ok, cur_pop, LANES=N)]

            @always_comb
            def out_take():
                o_valid.next = sel_valid and cur_ok
                go.next = cur_ok and o_ready
                cur_pop.next = take and sel[last_bit]

            out_reg = None
        else:
            sched = []

            @always_comb
            def out_take():
                o_valid.next = sel_valid
                go.next = o_ready

            @always_seq(clk.posedge, reset=rst)
            def out_reg():
                if take and sel[last_bit]:
                    if cur == last_lane:
                        cur.next = 0
                    else:
                        cur.next = cur + 1
    else:
        # one lane: the output register takes the lane's head when it is empty or m_axis_tready empties it
        sched = []
        out_skid = None

        @always_comb
        def out_take():
            take.next = sel_valid and (not ov or m_axis_tready)

        @always_seq(clk.posedge, reset=rst)
        def out_reg():
            if take:
                ov.next = 1
                if sel[last_bit]:
                    if cur == last_lane:
                        cur.next = 0
                    else:
                        cur.next = cur + 1
            elif m_axis_tready:
                ov.next = 0

        @always_seq(clk.posedge, reset=None)
        def out_data():
            if take:
                od.next = sel

    @always_comb
    def out_side():
        m_axis_tvalid.next = ov and not rst
        m_axis_tdata.next = od[lw:0]
        m_axis_tlast.next = od[last_bit]
        m_axis_tuser.next = od[user_bit]

    # one lane: m_axis_tkeep is one bit (both branches of a constant `if` would be converted)
    if kb == 1:
        @always_comb
        def out_keep():
            m_axis_tkeep.next = od[lw]
    else:
        @always_comb
        def out_keep():
            m_axis_tkeep.next = od[lw + kb:lw]

    # ------------------------------------------------------------------ error reports (stream order)
    e_valid = Signal(intbv(0)[N:]) if N > 1 else Signal(bool(0))
    e_code = Signal(intbv(0)[4:])
    e_stripe = Signal(modbv(0)[STRIPE_BITS:])
    o_stripe = Signal(modbv(0)[STRIPE_BITS:])
    m_code = Signal(intbv(0)[4:])
    if N > 1:
        m_pos = Signal(modbv(0)[(N - 1).bit_length():])   # keep - 1 (keep is 1 .. N when it matters)

        m_keep = Signal(intbv(0)[kb:])

        @always_comb
        def err_keep():
            m_keep.next = sel[lw + kb:lw]

        @always_comb
        def err_pos():
            m_pos.next = m_keep - 1

        # bit offset of that word: m_pos * W as a concatenation (MyHDL's VHDL sizes a product by its operands)
        m_sh = ConcatSignal(m_pos, intbv(0)[(W - 1).bit_length():])
        m_shifted = Signal(intbv(0)[E:])

        @always_comb
        def err_shift():
            m_shifted.next = sel >> m_sh

        @always_comb
        def err_word():
            # the marker is the beat's last valid word
            m_code.next = m_shifted[4:0]

        # the stripe index counts a cycle after the take of a stripe's last beat (o_end, a flip-flop): the index of
        # the stripe at the output is o_stripe + o_end (no enable from take)
        o_end = Signal(bool(0))

        @always_seq(clk.posedge, reset=rst)
        def err_reg():
            for j in range(N):
                e_valid.next[j] = take and sel[user_bit] and cur == j
            # the code and the index count only with err_valid: loaded in every cycle (no enable from take)
            e_code.next = m_code
            if o_end:
                e_stripe.next = o_stripe + 1
                o_stripe.next = o_stripe + 1
            else:
                e_stripe.next = o_stripe
            o_end.next = take and sel[last_bit]

        ec_cat = ConcatSignal(*([e_code] * N))
        es_cat = ConcatSignal(*([e_stripe] * N))
        err_insts = [err_keep, err_pos, err_shift, err_word, err_reg]
    else:
        @always_comb
        def err_word():
            m_code.next = sel[4:0]

        @always_seq(clk.posedge, reset=rst)
        def err_reg():
            e_valid.next = take and sel[user_bit]
            if take and sel[user_bit]:
                e_code.next = m_code
                e_stripe.next = o_stripe
            if take and sel[last_bit]:
                o_stripe.next = o_stripe + 1

        ec_cat, es_cat = e_code, e_stripe
        err_insts = [err_word, err_reg]

    if N == 1:
        @always_comb
        def lane_ports():
            s_axis_tready.next = ready_cat
            err_valid.next = e_valid
            err_code.next = ec_cat
            err_stripe.next = es_cat
            busy.next = busy_cat != 0 or ov

        return lanes, taps, sched, out_take, out_reg, out_data, out_side, out_keep, err_insts, lane_ports

    @always_comb
    def lane_ports():
        s_axis_tready.next = ready_cat
        err_valid.next = e_valid
        err_code.next = ec_cat
        err_stripe.next = es_cat
        busy.next = busy_cat != 0 or stv_cat != 0 or ov

    return (lanes, skids, taps, sched, out_skid, out_take, [out_reg] if out_reg is not None else [], out_side,
            out_keep, err_insts, lane_ports)
