"""The command ring (:func:`lutzip.firmware.engine.cmd_ring.cmd_ring`) alone: a ring of 4096 entries built three
ways -- plain, ``PIPE`` in one RAM (``SPLIT_BITS`` raised for this test) and ``PIPE`` in two halves (the ULX3S
build's ring) -- fed the same speculative writes, commits and rollbacks in one MyHDL simulation, read with random
backpressure (the plain ring its own, the two ``PIPE`` rings the same). Every ring must give exactly the committed
entries in order (a Python model), over several wraps of the ring, and the two ``PIPE`` rings the same output,
``free`` and ``empty`` in every cycle."""
import random

from myhdl import Signal, StopSimulation, always, block, delay, instance, intbv

import lutzip.firmware.engine.cmd_ring as cr

DEPTH = 4096
CYCLES = 40_000


@block
def bench(result):
    clk, rst = Signal(bool(0)), Signal(bool(1))
    we, commit, rollback = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    wdata = Signal(intbv(0)[34:])
    n = 3
    tdata = [Signal(intbv(0)[34:]) for _ in range(n)]
    tvalid = [Signal(bool(0)) for _ in range(n)]
    tready = [Signal(bool(0)) for _ in range(n)]
    free = [Signal(intbv(0, min=0, max=DEPTH + 1)) for _ in range(n)]
    empty = [Signal(bool(0)) for _ in range(n)]
    rings = []
    for i, pipe in enumerate((False, True, True)):
        if i == 1:
            cr.SPLIT_BITS, keep = 99, cr.SPLIT_BITS     # the one-RAM PIPE
        rings.append(cr.cmd_ring(clk, rst, we, wdata, commit, rollback, tdata[i], tvalid[i], tready[i], free[i],
                                 empty[i], DEPTH=DEPTH, PIPE=pipe))
        if i == 1:
            cr.SPLIT_BITS = keep
    rnd = random.Random(11)
    committed = []
    got = [[] for _ in range(n)]
    mismatch = []

    @always(delay(5))
    def clkgen():
        clk.next = not clk

    @instance
    def writer():
        yield clk.posedge
        yield clk.posedge
        rst.next = 0
        frame = []
        for _ in range(CYCLES):
            yield clk.negedge
            if (free[1] != free[2] or empty[1] != empty[2] or tvalid[1] != tvalid[2]
                    or (tvalid[1] and tdata[1] != tdata[2])):
                mismatch.append((int(free[1]), int(free[2]), bool(empty[1]), bool(empty[2])))
            we.next, commit.next, rollback.next = 0, 0, 0
            room = min(int(f) for f in free)
            if frame and (len(frame) > rnd.randrange(1, 400) or room < 2):
                if rnd.random() < 0.8:
                    commit.next = 1
                    committed.extend(frame)
                else:
                    rollback.next = 1
                frame = []
            elif room > 2 and rnd.random() < 0.7:
                v = rnd.getrandbits(34)
                we.next = 1
                wdata.next = v
                frame.append(v)
        result.update(committed=committed, got=got, mismatch=mismatch)
        raise StopSimulation

    @always(clk.posedge)
    def readers():
        for i in range(n):
            if tvalid[i] and tready[i]:
                got[i].append(int(tdata[i]))
        r = [rnd.random() < 0.85 for _ in range(2)]
        tready[0].next = r[0]
        tready[1].next = r[1]       # the two PIPE rings see the same backpressure
        tready[2].next = r[1]

    return rings, clkgen, writer, readers


def test_split_pipelined_ring_reads_what_was_committed():
    result = {}
    b = bench(result)
    b.run_sim(quiet=1)
    committed, got = result["committed"], result["got"]
    assert len(committed) > 3 * DEPTH                           # several wraps
    for i, g in enumerate(got):
        assert len(g) > len(committed) - 64, (i, len(g), len(committed))
        assert g == committed[:len(g)], i
    assert result["mismatch"] == []
