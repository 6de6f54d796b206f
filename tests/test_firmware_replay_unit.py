"""The replay unit alone (:func:`lutzip.firmware.engine.replay.replay_unit`), plain and pipelined feed, in one
MyHDL simulation, around a stand-in core written here: runs with passes whose output differs (``bad_passes``,
``crc_first`` / ``crc_last``), one-word stripes (pass ends in consecutive cycles), random input stalls and
output gaps; every value of the run is read back and checked against a Python model of the passes, and
``crc_last`` / ``bad_passes`` are checked again in the cycle ``done_req`` is seen (the response framer reads
them from the cycle after). The engine-level replay tests cannot make a pass differ: the real core decodes
every pass alike."""
import random

import numpy as np
from myhdl import Signal, StopSimulation, always, block, delay, instance, intbv

from lutzip.firmware.engine.perf_counters import CounterPort
from lutzip.firmware.engine.replay import replay_unit
from lutzip.link.protocol import REPLAY_NAMES, words_crc

WORDS = 256
RUNS = [
    # (stripe lengths in the buffer, passes, {pass index: word index of that pass to corrupt})
    ([5, 1, 7, 3], 4, {2: 3}),          # pass 3 differs: 1 bad
    ([1], 6, {0: 0}),                   # one-word stripe, pass 1 differs from all others: 5 bad
    ([1, 1], 5, {}),                    # two one-word stripes, all alike
    ([9, 2, 14], 3, {1: 0, 2: 24}),     # passes 2 and 3 differ: 2 bad
    ([4, 4], 1, {}),                    # a single pass
]


def _core_word(w):
    return (w ^ (w >> 16) ^ 0x5A5A) & 0xFFFF


def _expect(lens, k, bad):
    """The run's values (REPLAY_NAMES order, cycles / busy / stall_in left out) from the stand-in core."""
    n = sum(lens)
    words = _buffer(lens)[:n]
    crcs = []
    for p in range(k):
        out = np.array([_core_word(w & 0xFFFFFFFF) ^ (1 if bad.get(p) == i else 0) for i, w in enumerate(words)])
        crcs.append(words_crc(out, 16))
    return {"words": n * k, "stripes": len(lens) * k, "decode_errors": 0, "passes": k,
            "bad_passes": sum(c != crcs[0] for c in crcs[1:]), "crc_first": crcs[0], "crc_last": crcs[-1],
            "first_error": 0}


def _buffer(lens):
    """Buffer words (bit 32: stripe end) for stripes of ``lens`` words."""
    rnd = random.Random(sum(lens) * 131 + len(lens))
    out = []
    for n in lens:
        for i in range(n):
            out.append(rnd.getrandbits(32) | ((1 << 32) if i == n - 1 else 0))
    return out


@block
def bench(results, fin, PIPE):
    clk = Signal(bool(0))
    rst = Signal(bool(1))
    r_tdata = Signal(intbv(0)[35:])
    r_tvalid, r_tready = Signal(bool(0)), Signal(bool(0))
    l_tdata = Signal(intbv(0)[34:])
    l_tvalid, l_tready = Signal(bool(0)), Signal(bool(1))
    ld_tdata = Signal(intbv(0)[32:])
    ld_tvalid, ld_tready, ld_tlast = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    c_tdata = Signal(intbv(0)[32:])
    c_tvalid, c_tready, c_tlast = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    o_tdata = Signal(intbv(0)[16:])
    o_tvalid, o_tready, o_tlast, o_tuser = [Signal(bool(0)) for _ in range(4)]
    res_tvalid, res_tready = Signal(bool(0)), Signal(bool(1))
    busy = Signal(bool(0))
    stripes_done = Signal(intbv(0)[16:])
    results_idle = Signal(bool(1))
    active, done = Signal(bool(0)), Signal(bool(0))
    rd = CounterPort()
    dut = replay_unit(clk, rst, r_tdata, r_tvalid, r_tready, l_tdata, l_tvalid, l_tready,
                      ld_tdata, ld_tvalid, ld_tready, ld_tlast, c_tdata, c_tvalid, c_tready, c_tlast,
                      o_tdata, o_tvalid, o_tready, o_tlast, o_tuser, res_tvalid, res_tready, busy, stripes_done,
                      results_idle, active, done, rd, REPLAY_WORDS=WORDS, W=16, BITS=40, PIPE=PIPE)
    rnd = random.Random(7 + PIPE)
    core = {"q": [], "pkt": 0, "word": 0, "bad": {}, "npk": 1, "leak": 0}

    @always(delay(5))
    def c_clk():
        clk.next = not clk

    @always(clk.posedge)
    def c_core():
        """Stand-in core: one output word per input word (its packet ends with the input's), a word of a pass
        flipped where the run says; input stalls and output gaps at random."""
        q = core["q"]
        if o_tvalid and o_tready:
            q.pop(0)
        if c_tvalid and c_tready:
            p = core["pkt"] // core["npk"]
            w = _core_word(int(c_tdata)) ^ (1 if core["bad"].get(p) == core["word"] else 0)
            q.append((w, bool(c_tlast)))
            core["word"] += 1
            if c_tlast:
                core["pkt"] += 1
                if core["pkt"] % core["npk"] == 0:
                    core["word"] = 0
        c_tready.next = rnd.random() < 0.7
        show = bool(q) and rnd.random() < 0.8
        o_tvalid.next = show
        if show:
            o_tdata.next = q[0][0]
            o_tlast.next = q[0][1]
        busy.next = bool(q) or (c_tvalid and c_tready)

    @instance
    def c_drive():
        def entry(tag, data):
            r_tdata.next = (1 << 34) | (tag << 32) | data
            r_tvalid.next = 1
            while True:
                yield clk.posedge
                if r_tready:
                    break
            r_tvalid.next = 0

        for _ in range(4):
            yield clk.posedge
        rst.next = 0
        for lens, k, bad in RUNS:
            words = _buffer(lens)
            yield entry(2, 0)
            for w in words:
                yield entry((w >> 32) & 1, w & 0xFFFFFFFF)
            core.update(pkt=0, word=0, bad=bad, npk=len(lens))
            rd.idx.next = 8                      # nxt: crc_last, checked in the cycle done_req is seen
            yield entry(3, sum(lens))
            yield entry(3, k)
            # a ring entry for the table loader right behind the run entry: neither taken nor passed on until the
            # run is over (PIPE: the run starts a cycle after its entry is taken; the ring waits then too)
            r_tdata.next = (1 << 32) | 0x1234
            r_tvalid.next = 1
            seen = None
            for _ in range(20000):
                yield clk.posedge
                if not done and (r_tready or l_tvalid):
                    core["leak"] += 1
                if done:
                    r_tvalid.next = 0            # taken in the done cycle
                    seen = int(rd.nxt)
                    rd.idx.next = 6              # then bad_passes, set in the same cycle as crc_last
                    yield clk.posedge
                    seen = (seen, int(rd.nxt))
                    break
            got = {REPLAY_NAMES[0]: int(rd.first)}
            for i in range(1, len(REPLAY_NAMES)):
                rd.idx.next = i - 1
                yield clk.posedge
                yield clk.posedge
                got[REPLAY_NAMES[i]] = int(rd.nxt)
            results.append((lens, k, bad, seen, got, core["leak"]))
            for _ in range(5):
                yield clk.posedge
        fin.append(PIPE)
        while len(fin) < 2:                      # the other bench may still run
            yield clk.posedge
        raise StopSimulation

    return dut, c_clk, c_core, c_drive


@block
def both(res_plain, res_pipe):
    fin = []
    return bench(res_plain, fin, False), bench(res_pipe, fin, True)


def test_replay_unit_counts_bad_passes_and_keeps_pass_one_crc():
    res = {False: [], True: []}
    tb = both(res[False], res[True])
    tb.run_sim(quiet=1)
    for pipe, runs in res.items():
        assert len(runs) == len(RUNS), (pipe, len(runs))
        for lens, k, bad, seen, got, leak in runs:
            assert leak == 0, (pipe, lens, leak)
            want = _expect(lens, k, bad)
            assert {n: got[n] for n in want} == want, (pipe, lens, k, bad)
            # crc_last (idx 8) in the done_req cycle; bad_passes the cycle after, before the framer reads it
            assert seen == (want["crc_last"], want["bad_passes"]), (pipe, lens, seen)
            assert got["stall_in"] <= got["busy"] <= got["cycles"] and got["cycles"] >= sum(lens) * k
    # the runs really differ from pass to pass
    assert sorted({g["bad_passes"] for *_, g, _ in res[True]}) == [0, 1, 2, 5]
