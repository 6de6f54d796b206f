"""The N-lane decoder (docs/CORE.md section 6): ``LANES`` single-lane cores side by side, ``LANES`` words per beat
on one AXI-Stream, in the original word order.

Structure (each box a file of :mod:`lutzip.hdl`)::

    s_axis lane j (32 bits) -> decoder_lane j: decoder_core -> row packer (lane_slot x LANES) -> row_fifo
    row_fifo heads -> lane_tap chain (AND-OR select of lane ``cur``) -> output register -> m_axis (LANES x W)

* Stripe ``i`` of the stream is decoded by lane ``i mod LANES`` (the host hands each lane its stripes); the
  output takes lane ``cur``'s rows until the row with ``tlast`` (the stripe's last word or its error marker),
  then moves on to lane ``cur + 1 mod LANES``: the words come out in the order a single core gives them.
* A beat carries up to ``LANES`` consecutive words of one stripe, word 0 in the low bits; ``m_axis_tkeep`` counts
  them (1 .. LANES). Only a stripe's last beat can be short.
* Each lane buffers ``ROWS`` beats (block RAM); while the output drains one lane at ``LANES`` words per cycle
  the other lanes decode into their buffers, so in steady state every lane decodes one word per cycle when
  ``ROWS`` holds about ``(LANES - 1) / LANES`` of a stripe's beats.
* Tables: each lane's core has its own LUT1, LUT2, LUT3 and config (each reads its tables every cycle); the
  table-write port reaches every lane in the same cycle.
* Errors: a lane that meets an error outputs its marker (tuser = 1 on the stripe's last beat) and resynchronises
  at its next stripe, like the single core; ``err_valid[j]`` pulses with ``err_code[j]`` and the stripe's index
  ``err_stripe[j]`` (counted from 0 since reset over the whole stream).
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.lanes.decoder_lane import STRIPE_BITS, decoder_lane, keep_bits, row_bits
from lutzip.hdl.stages.lane_tap import lane_tap

LANE_CHOICES = (1, 2, 4, 8)


def default_rows(lanes: int) -> int:
    """The default buffer rows per lane: 16 for one lane, else ``4096 // lanes`` (4096-word stripes)."""
    return 16 if lanes == 1 else 4096 // lanes


@block
def decoder_lanes(clk, rst,
                  s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                  m_axis_tdata, m_axis_tkeep, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                  tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                  err_valid, err_code, err_stripe, busy,
                  LANES=2, ROWS=0, L=8, W=16, LUT3_DEPTH=4096, LUT1_RAM="block", FRONT="window", STEP="adder"):
    if isinstance(LANES, bool) or LANES not in LANE_CHOICES:
        raise UnsupportedError(f"LANES = {LANES!r}: choose from {', '.join(map(str, LANE_CHOICES))}")
    rows = ROWS or default_rows(LANES)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 4 or rows & (rows - 1) or rows > 65536:
        raise UnsupportedError(f"ROWS = {ROWS!r}: a power of two, 4 .. 65536")
    N = LANES
    kb = keep_bits(N)
    E = row_bits(N, W)
    lw = N * W
    core_kw = dict(L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT, STEP=STEP)

    cur = Signal(intbv(0, min=0, max=N))
    take = Signal(bool(0))
    readys = [Signal(bool(0)) for _ in range(N)]
    pops = [Signal(bool(0)) for _ in range(N)]
    heads = [Signal(intbv(0)[E:]) for _ in range(N)]
    hvalids = [Signal(bool(0)) for _ in range(N)]
    evs = [Signal(bool(0)) for _ in range(N)]
    ecs = [Signal(intbv(0)[4:]) for _ in range(N)]
    ess = [Signal(intbv(0)[STRIPE_BITS:]) for _ in range(N)]
    busys = [Signal(bool(0)) for _ in range(N)]
    accs = [Signal(intbv(0)[E:]) for _ in range(N + 1)]
    vaccs = [Signal(bool(0)) for _ in range(N + 1)]
    lanes, taps = [], []
    for j in range(N):
        # the bundled input ports go to every lane, which takes its own bits (decoder_lane)
        lanes.append(decoder_lane(clk, rst, s_axis_tdata, s_axis_tvalid, readys[j], s_axis_tlast, tbl_we, tbl_sel,
                                  tbl_addr,
                                  tbl_wdata, pops[j], heads[j], hvalids[j], evs[j], ecs[j], ess[j], busys[j],
                                  LANE=j, LANES=N, ROWS=rows, **core_kw))
        taps.append(lane_tap(cur, heads[j], hvalids[j], accs[j] if j else None, vaccs[j] if j else None,
                             accs[j + 1], vaccs[j + 1], take, pops[j], LANE=j))
    sel, sel_valid = accs[N], vaccs[N]
    if N > 1:
        ready_cat, ev_cat, ec_cat, es_cat, busy_cat = (ConcatSignal(*reversed(x))
                                                       for x in (readys, evs, ecs, ess, busys))
    else:
        ready_cat, ev_cat, ec_cat, es_cat, busy_cat = readys[0], evs[0], ecs[0], ess[0], busys[0]

    ov = Signal(bool(0))
    od = Signal(intbv(0)[E:])
    last_lane = N - 1
    last_bit = lw + kb
    user_bit = lw + kb + 1

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

    @always_comb
    def lane_ports():
        s_axis_tready.next = ready_cat
        err_valid.next = ev_cat
        err_code.next = ec_cat
        err_stripe.next = es_cat
        busy.next = busy_cat != 0 or ov

    return lanes, taps, out_take, out_reg, out_data, out_side, out_keep, lane_ports
