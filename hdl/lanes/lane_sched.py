"""The lane order of the N-lane decoder with ``ASSIGN="load"`` (docs/CORE.md 6.3): which lane holds the next
stripe, worked out ahead of the output.

Interface
---------
clk, rst            clock, synchronous active-high reset
w_valid, w_data     per lane (lists): the lane's oldest recorded header weight (17 bits,
                    :func:`lutzip.hdl.lanes.decoder_lane.stripe_weight`) and its valid flag
w_pop               per lane (list, out): takes that weight
cur, cur_valid      the lane of the stripe the output is on (the head of a queue of lanes, stream order)
cur_pop             the output has taken that stripe's last beat: the queue moves on
LANES               lanes (2, 4, 8)

The rule: stripe ``i`` goes to the lane with the least load, the lowest such lane on a tie; its weight is then
added to that lane's load. After reset every load is 0 and stripe 0 is lane 0's. For each stripe in stream order
the scheduler waits for the weight at the head of its lane's record (the lane records every header it takes, so
the weight of stripe ``i`` is the oldest one there once the stripes before it are accounted), adds it to that
lane's load, finds the least-loaded lane (a tree of comparisons, one register level between tree levels) and
appends it to the queue of ``QDEPTH`` lanes: ``1 + log2(LANES)`` cycles per stripe, ahead of the output, which
therefore changes lanes without an idle cycle (stripes of fewer than ``1 + log2(LANES)`` beats in a row can make
it wait).

Loads: ``LOAD_BITS`` = 18 bits, compared modulo 2^18 (``a <= b`` when ``(b - a) mod 2^18 < 2^17``). Exact for
streams of any length: the rule never lets two loads drift apart by more than one stripe's weight (at most 65536),
because it only ever adds to a smallest load.
"""
from myhdl import ConcatSignal, Signal, always, always_comb, always_seq, block, intbv, modbv

LOAD_BITS = 18
QDEPTH = 4


@block
def load_min(clk, av, ai, bv, bi, ov, oi, IA=0, IB=1, REG=True):
    """The smaller of two loads (modulo compare) and its lane, ``a`` on a tie; registered if ``REG``. ``ai`` /
    ``bi`` ``None``: the constants ``IA`` / ``IB`` (the tree's leaves)."""
    B = len(av)
    d = Signal(modbv(0)[B:])
    leaf = ai is None
    if leaf:
        ai, bi = IA, IB

    @always_comb
    def min_diff():
        d.next = bv - av

    def pick():
        if not d[B - 1]:
            ov.next = av
            oi.next = ai
        else:
            ov.next = bv
            oi.next = bi

    pick.__name__ = ("min_leaf" if leaf else "min_node") + ("_reg" if REG else "")
    return min_diff, (always(clk.posedge)(pick) if REG else always_comb(pick))


@block
def lane_load(clk, rst, p0, sl, w_valid, w_data, w_pop, load, LANE=0):
    """One lane's load: takes the lane's weight when the scheduler waits for it (``p0``, ``sl == LANE``)."""

    @always_comb
    def load_pop():
        w_pop.next = p0 and sl == LANE and w_valid

    @always_seq(clk.posedge, reset=rst)
    def load_add():
        if p0 and sl == LANE and w_valid:
            load.next = load + w_data

    return load_pop, load_add


@block
def lane_sched(clk, rst, w_valid, w_data, w_pop, cur, cur_valid, cur_pop, LANES=2):
    N = LANES
    if N < 2 or N & (N - 1):
        raise ValueError(f"lane_sched LANES {N} is not a power of two >= 2")
    D = (N - 1).bit_length()   # tree levels
    loads = [Signal(modbv(0)[LOAD_BITS:]) for _ in range(N)]
    sl = Signal(intbv(0, min=0, max=N))      # the lane whose weight is awaited
    p = Signal(intbv(1, min=0, max=D + 1))  # 0: await the weight; 1 .. D - 1: tree levels; D: append
    p0 = Signal(bool(0))
    insts = [lane_load(clk, rst, p0, sl, w_valid[j], w_data[j], w_pop[j], loads[j], LANE=j) for j in range(N)]
    level = [(loads[j], None, j) for j in range(N)]
    depth = 0
    while len(level) > 1:
        depth += 1
        nxt = []
        for a, b in zip(level[0::2], level[1::2]):
            v = Signal(modbv(0)[LOAD_BITS:])
            i = Signal(intbv(0, min=0, max=N))
            insts.append(load_min(clk, a[0], a[1], b[0], b[1], v, i, IA=a[2], IB=b[2], REG=depth < D))
            nxt.append((v, i, None))
        level = nxt
    amin = level[0][1]
    wv = ConcatSignal(*reversed(w_valid))

    # the queue of lanes (stream order): t0 is the output's lane. cur_pop (from the output's take, the latest
    # signal here) only selects between two next states worked out from flip-flops: ``a`` (no pop) and ``b``
    # (pop), so it reaches every queue flip-flop through one LUT; cur_valid is a flip-flop
    t0, t1, t2, t3 = [Signal(intbv(0, min=0, max=N)) for _ in range(QDEPTH)]
    a0, a1, a2, a3, b0, b1, b2 = [Signal(intbv(0, min=0, max=N)) for _ in range(2 * QDEPTH - 1)]
    n_t = Signal(intbv(0, min=0, max=QDEPTH + 1))
    n_a = Signal(intbv(0, min=0, max=QDEPTH + 2))   # n_t + 1 while push settles (delta cycles)
    n_b = Signal(intbv(0, min=0, max=QDEPTH + 1))
    ok_a = Signal(bool(0))
    ok_b = Signal(bool(0))
    ok_r = Signal(bool(0))
    push = Signal(bool(0))
    pop = Signal(bool(0))

    @always_comb
    def sched_ctl():
        p0.next = p == 0
        pop.next = cur_pop and ok_r
        push.next = p == D and n_t < QDEPTH

    @always_comb
    def sched_next():
        # no pop: a pushed lane goes to slot n_t
        if push and n_t == 0:
            a0.next = amin
        else:
            a0.next = t0
        if push and n_t == 1:
            a1.next = amin
        else:
            a1.next = t1
        if push and n_t == 2:
            a2.next = amin
        else:
            a2.next = t2
        if push and n_t == 3:
            a3.next = amin
        else:
            a3.next = t3
        # pop: the slots shift by one, a pushed lane goes to slot n_t - 1
        if push and n_t == 1:
            b0.next = amin
        else:
            b0.next = t1
        if push and n_t == 2:
            b1.next = amin
        else:
            b1.next = t2
        if push and n_t == 3:
            b2.next = amin
        else:
            b2.next = t3
        if push:
            n_a.next = n_t + 1
            n_b.next = n_t
            ok_a.next = 1
            ok_b.next = n_t != 0
        else:
            n_a.next = n_t
            if n_t != 0:
                n_b.next = n_t - 1
            else:
                n_b.next = 0
            ok_a.next = n_t != 0
            ok_b.next = n_t > 1

    @always_seq(clk.posedge, reset=rst)
    def sched_step():
        if p == 0:
            if wv[sl]:
                p.next = 1
        elif p < D:
            p.next = p + 1
        elif push:
            sl.next = amin
            p.next = 0
        if pop:
            n_t.next = n_b
            ok_r.next = ok_b
        else:
            n_t.next = n_a
            ok_r.next = ok_a

    @always(clk.posedge)
    def sched_queue():
        if pop:
            t0.next = b0
            t1.next = b1
            t2.next = b2
        else:
            t0.next = a0
            t1.next = a1
            t2.next = a2
        t3.next = a3

    @always_comb
    def sched_out():
        cur.next = t0
        cur_valid.next = ok_r

    return insts, sched_ctl, sched_next, sched_step, sched_queue, sched_out
