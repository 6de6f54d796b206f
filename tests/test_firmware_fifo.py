"""The engine's FIFO (:func:`lutzip.firmware.engine.fifo.fifo`) with its full flag from a flip-flop (``FULL_REG``,
``proto_engine``'s ``RESULT_REG``) against the plain one, and the same with the pipelined read (``PIPE``: the RAM
read through its output register into a 4-entry FIFO): pairs of FIFOs of 2, 4, 32 and 256 entries (plain and
``FULL_REG``; ``PIPE`` and ``PIPE`` + ``FULL_REG``), each pair fed the same random stream with the same random
backpressure (runs of a stalled reader, so each fills up and drains many times) and a hard reset now and then, in
one MyHDL simulation. The two of a pair must show the same ``s_axis_tready``, ``m_axis_tvalid`` and
``m_axis_tdata`` in every cycle, and each must give exactly the words it took (a Python model), holding at most
``DEPTH + 1`` (``PIPE``: ``DEPTH + 4``) of them. The last cycles stream with the writer always valid and the
reader always ready: every FIFO must then give a word in every cycle."""
import random

from myhdl import Signal, StopSimulation, always, block, delay, instance, intbv

from lutzip.firmware.engine.fifo import fifo

DEPTHS = (2, 4, 32, 256)
#: per pair: the FIFO keywords of its two members and the words it may hold beyond DEPTH
GROUPS = [(d, {}, {"FULL_REG": True}, 1) for d in DEPTHS] + \
         [(d, {"PIPE": True}, {"PIPE": True, "FULL_REG": True}, 4) for d in DEPTHS]
CYCLES = 12_000
STREAM = 400        # the last cycles: no reset, no stall, a word offered in every cycle


@block
def bench(result):
    clk, rst = Signal(bool(0)), Signal(bool(1))
    n = len(GROUPS)
    sd = [Signal(intbv(0)[12:]) for _ in range(n)]
    sv = [Signal(bool(0)) for _ in range(n)]
    sr = [[Signal(bool(0)) for _ in range(2)] for _ in range(n)]
    md = [[Signal(intbv(0)[12:]) for _ in range(2)] for _ in range(n)]
    mv = [[Signal(bool(0)) for _ in range(2)] for _ in range(n)]
    mr = [Signal(bool(0)) for _ in range(n)]
    insts = []
    for i, (d, kw0, kw1, _) in enumerate(GROUPS):
        for k, kw in enumerate((kw0, kw1)):
            insts.append(fifo(clk, rst, sd[i], sv[i], sr[i][k], md[i][k], mv[i][k], mr[i], DEPTH=d, **kw))
    rnd = random.Random(5)
    sent = [[] for _ in range(n)]
    got = [[[] for _ in range(2)] for _ in range(n)]
    mismatch = []
    stats = {"full": [0] * n, "resets": 0, "streamed": [0] * n}

    @always(delay(5))
    def clkgen():
        clk.next = not clk

    @instance
    def drive():
        yield clk.posedge
        yield clk.posedge
        rst.next = 0
        stall = [0] * n
        for cyc in range(CYCLES):
            yield clk.negedge
            for i in range(n):
                if (sr[i][0] != sr[i][1] or mv[i][0] != mv[i][1] or (mv[i][0] and md[i][0] != md[i][1])):
                    mismatch.append((cyc, GROUPS[i][:3], bool(sr[i][0]), bool(sr[i][1]), bool(mv[i][0]),
                                     bool(mv[i][1])))
                if not sr[i][0]:
                    stats["full"][i] += 1
            if rst:
                rst.next = 0
                for i in range(n):
                    sv[i].next = 0
                    mr[i].next = 0
                continue
            if cyc >= CYCLES - STREAM - 50:     # streaming: the writer always offers, the reader always takes
                for i in range(n):
                    sv[i].next = 1
                    if not sv[i] or sr[i][0]:
                        sd[i].next = rnd.getrandbits(12)
                    mr[i].next = 1
                    if cyc >= CYCLES - STREAM and mv[i][0]:
                        stats["streamed"][i] += 1
                continue
            if rnd.random() < 0.0015:       # a hard reset: both FIFOs of every pair empty
                rst.next = 1
                stats["resets"] += 1
                for i in range(n):
                    sent[i].clear()
                    got[i][0].clear()
                    got[i][1].clear()
                    sv[i].next = 0
                    mr[i].next = 0
                continue
            for i in range(n):
                if not sv[i] or sr[i][0]:       # a word is offered until it is taken
                    if rnd.random() < 0.7:
                        sv[i].next = 1
                        sd[i].next = rnd.getrandbits(12)
                    else:
                        sv[i].next = 0
                if stall[i]:
                    stall[i] -= 1
                    mr[i].next = 0
                else:
                    if rnd.random() < 0.01:
                        stall[i] = rnd.randrange(1, 3 * GROUPS[i][0] + 4)
                    mr[i].next = rnd.random() < 0.6
        result.update(sent=sent, got=got, mismatch=mismatch, stats=stats)
        raise StopSimulation

    @always(clk.posedge)
    def watch():
        if not rst:
            for i in range(n):
                if sv[i] and sr[i][0]:
                    sent[i].append(int(sd[i]))
                for k in range(2):
                    if mv[i][k] and mr[i]:
                        got[i][k].append(int(md[i][k]))

    return insts, clkgen, drive, watch


def test_fifo_full_reg_and_pipe():
    result = {}
    b = bench(result)
    b.run_sim(quiet=True)
    b.quit_sim()
    assert result["mismatch"] == [], result["mismatch"][:5]
    assert result["stats"]["resets"] >= 5, result["stats"]
    for i, (d, kw0, kw1, extra) in enumerate(GROUPS):
        assert result["stats"]["full"][i] > 100, (d, kw0, result["stats"])     # every FIFO was full many times
        assert result["stats"]["streamed"][i] == STREAM, (d, kw0, result["stats"]["streamed"])   # full rate
        for k in range(2):
            got, sent = result["got"][i][k], result["sent"][i]
            assert got == sent[:len(got)] and len(sent) - len(got) <= d + extra, (d, kw0, k, len(got), len(sent))
