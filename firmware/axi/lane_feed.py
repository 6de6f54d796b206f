"""Lane feed of ``lutzip_axi`` with ``LANES > 1`` (docs/AXI.md): the framer's one packet stream -> one input
stream per lane of the N-lane decoder (docs/CORE.md section 6), each through a block-RAM FIFO.

Interface
---------
clk, rst                        clock, synchronous active-high reset (hard or soft)
c_tdata/tvalid/tready/tlast     the framer's packets (one per stripe, ``c_tlast`` on its last word)
l_tdata, l_tvalid, l_tready, l_tlast    the decoder's bundled inputs: lane j in bits ``32j+31 .. 32j`` / bit j
LANES                           lanes (2, 4, 8)
IN_ROWS                         words each lane's FIFO holds (a power of two >= 4)

Packet ``i`` (counted from 0 since reset; packets, not descriptors: a descriptor that carried the input's
``tlast`` makes no packet) goes to lane ``i mod LANES``, the decoder's ``ASSIGN="rr"`` rule, so its output comes
back in stream order. The FIFOs let the one MM2S stream (one word per cycle) run ahead of a lane that decodes:
with a FIFO as deep as a stripe's compressed words every lane decodes while the others take their input. Each
FIFO's head reaches its lane through a register slice (:mod:`axis_skid`: the RAM's read path ends in flip-flops).
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, concat, intbv

from lutzip.firmware.axi.axis_skid import axis_skid
from lutzip.hdl.stages.row_fifo import row_fifo


@block
def lane_in(sel, c_tdata, c_tvalid, c_tlast, push, space, wrow, level, rvalid, pop, k_ready, k_data, k_valid,
            k_out_ready, l_tready, l_data, l_valid, l_last, LANE=0, IN_ROWS=2048):
    """One lane's end of :func:`lane_feed`: the FIFO's write side, its head into the lane's register slice, the
    slice's output as the lane's stream."""

    @always_comb
    def li_in():
        space.next = level < IN_ROWS
        push.next = c_tvalid and sel == LANE and level < IN_ROWS
        wrow.next = concat(c_tlast, c_tdata)

    @always_comb
    def li_pop():
        pop.next = rvalid and k_ready

    @always_comb
    def li_out():
        l_data.next = k_data[32:0]
        l_last.next = k_data[32]
        l_valid.next = k_valid
        k_out_ready.next = l_tready[LANE]

    return li_in, li_pop, li_out


@block
def lane_feed(clk, rst, c_tdata, c_tvalid, c_tready, c_tlast, l_tdata, l_tvalid, l_tready, l_tlast,
              LANES=2, IN_ROWS=2048):
    N = LANES
    cur = Signal(intbv(0, min=0, max=N))
    pushes = [Signal(bool(0)) for _ in range(N)]
    spaces = [Signal(bool(0)) for _ in range(N)]
    wrows = [Signal(intbv(0)[33:]) for _ in range(N)]
    levels = [Signal(intbv(0, min=0, max=IN_ROWS + 2)) for _ in range(N)]
    rdatas = [Signal(intbv(0)[33:]) for _ in range(N)]
    rvalids = [Signal(bool(0)) for _ in range(N)]
    popss = [Signal(bool(0)) for _ in range(N)]
    k_readys = [Signal(bool(0)) for _ in range(N)]
    k_datas = [Signal(intbv(0)[33:]) for _ in range(N)]
    k_valids = [Signal(bool(0)) for _ in range(N)]
    k_out_readys = [Signal(bool(0)) for _ in range(N)]
    datas = [Signal(intbv(0)[32:]) for _ in range(N)]
    valids = [Signal(bool(0)) for _ in range(N)]
    lasts = [Signal(bool(0)) for _ in range(N)]
    insts = []
    for j in range(N):
        insts.append(lane_in(cur, c_tdata, c_tvalid, c_tlast, pushes[j], spaces[j], wrows[j], levels[j],
                             rvalids[j], popss[j], k_readys[j], k_datas[j], k_valids[j], k_out_readys[j],
                             l_tready, datas[j], valids[j], lasts[j], LANE=j, IN_ROWS=IN_ROWS))
        insts.append(row_fifo(clk, rst, pushes[j], wrows[j], popss[j], rdatas[j], rvalids[j], levels[j],
                              DEPTH=IN_ROWS))
        # the FIFO's head is the block RAM's read register (several cascaded RAMs with IN_ROWS = 2048): a register
        # slice keeps the RAM's clock-to-out and output select off the core's input path
        insts.append(axis_skid(clk, rst, rdatas[j], rvalids[j], k_readys[j], k_datas[j], k_valids[j],
                               k_out_readys[j]))
    space_cat = ConcatSignal(*reversed(spaces))
    data_cat = ConcatSignal(*reversed(datas))
    valid_cat = ConcatSignal(*reversed(valids))
    last_cat = ConcatSignal(*reversed(lasts))
    last_lane = N - 1

    @always_comb
    def lf_ready():
        c_tready.next = space_cat[cur]

    @always_comb
    def lf_out():
        l_tdata.next = data_cat
        l_tvalid.next = valid_cat
        l_tlast.next = last_cat

    @always_seq(clk.posedge, reset=rst)
    def lf_cur():
        if c_tvalid and space_cat[cur] and c_tlast:
            if cur == last_lane:
                cur.next = 0
            else:
                cur.next = cur + 1

    return insts, lf_ready, lf_out, lf_cur
