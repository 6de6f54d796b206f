"""Link faults on the board side (docs/PROTOCOL.md): partial frames, malformed frames, frame orders that could
leave the board deaf. The MyHDL engine (small inter-byte timeout) and the Verilator virtual board."""
import random
import shutil
import struct
import time

import numpy as np
import pytest

from lutzip.board.driver import Board
from lutzip.firmware.engine.frame_rx import FAST_GAP_LOG2, RX_GAP_MIN_S, rx_gap_log2
from lutzip.firmware.engine.sim_engine import EngineSim, SimSerial
from lutzip.link import protocol as link
from lutzip.codec import arrays as codec
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet

GAP = 8     # partial frames dropped after 256 .. 512 idle cycles
PARAMS = dict(RING_DEPTH=64, LUT3_DEPTH=256, MAX_PAYLOAD=128, CLK_HZ=50_000_000, RX_GAP_LOG2=GAP)


@pytest.fixture
def sim():
    s = EngineSim(**PARAMS)
    yield s
    s.close()


def frames(sim, data, cycles=4000):
    return link.FrameParser().feed(sim.run(data, max_cycles=cycles))


def answer(sim, data, ftype, cycles=4000):
    fr = frames(sim, data, cycles)
    assert [f.type for f in fr] == [ftype], fr
    return fr[0]


def reset(sim, seq=0):
    fr = answer(sim, link.encode_frame(link.RESET, seq, link.reset_payload(False)), link.ACK)
    assert link.parse_ack(fr)[0] == (seq + 1) & 0xFF


def table(sel, addr, data, reserved=0):
    return struct.pack("<BBH", sel, reserved, addr) + np.asarray(data, "<u4").tobytes()


def _tables():
    return TableSet(16, [ClassSpec(1, ZRUN, 4, 0), ClassSpec(2, LUT, 2, 0), ClassSpec(3, RANGE, 16, 0),
                         ClassSpec(3, RANGE, 4, 0xFFF0)], np.array([1, 2, 3, 0xFFFF], np.uint16))


def _container(n=600, stripe=300, seed=5):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, size=n).astype(np.int16)
    a[rng.random(n) < 0.5] = 0
    ts = _tables()
    return codec.compress({"a": a}, tableset_fn=lambda w, b: ts, stripe_len=stripe), a


def _stream_ok(sim, max_payload=128):
    """A real run through the host driver; True when every stripe decoded bit-exact."""
    c, a = _container()
    b = Board(serial=SimSerial(sim), timeout=60, rto=10, max_payload=max_payload)
    r = b.stream([("a", c.tables[0], list(c.stripes(c.tensors[0])))])
    exp = a.view(np.uint16)
    return all(s.err == 0 and s.crc == link.words_crc(exp[s.index * 300:(s.index + 1) * 300], 16)
               for s in r.stripes) and len(r.stripes) == 2


def test_gap_bit_from_clock_and_baud():
    # at least RX_GAP_MIN_S and two byte times (10 bits a byte), less than twice the larger; a fixed bound on
    # the byte-level link
    for clk, baud in [(12_000_000, 1_000_000), (48_000_000, 3_000_000), (100_000_000, 3_000_000),
                      (25_000_000, 115_200), (12_000_000, 9_600), (1_000_000, 300)]:
        k = rx_gap_log2(clk, baud)
        need = max(2 * 10 * clk / baud, clk * RX_GAP_MIN_S)
        assert need <= 2 ** k < 2 * need, (clk, baud, k)
    assert rx_gap_log2(12_000_000, 1_000_000) == 18          # iCEBreaker: 21.8 .. 43.7 ms
    assert rx_gap_log2(100_000_000, 0) == FAST_GAP_LOG2


CUTS = [(link.STREAM, 17), (link.STREAM, 3), (link.STREAM, 7 + 128 + 2), (link.TABLE, 30), (link.RESET, 9)]


def test_partial_frame_is_dropped_after_a_gap(sim):
    for i, (ftype, cut) in enumerate(CUTS):
        reset(sim)
        payload = {link.TABLE: table(2, 0, range(31)), link.RESET: link.reset_payload(True)}.get(ftype, bytes(128))
        assert sim.run(link.encode_frame(ftype, 1, payload)[:cut], max_cycles=3000) == b"", i
        # one IDENTIFY, no filler: answered at once
        answer(sim, link.encode_frame(link.IDENTIFY), link.IDENT)
        # nothing of the partial frame stayed in the ring: full credit, SEQ 1 still expected
        fr = answer(sim, link.encode_frame(link.PING), link.ACK)
        assert link.parse_ack(fr) == (1, 0, 64), i
        fr = frames(sim, link.encode_frame(link.BARRIER, 1))
        assert [f.type for f in fr] == [link.ACK, link.COUNTERS], i
        cn = link.parse_counters(fr[1])
        assert cn["link_errors"] == 1 and cn["stripes"] == 0, i


def test_slow_bytes_within_the_timeout_are_not_dropped():
    # a byte every 200 cycles (< 2**GAP): frames still go through
    with EngineSim(rx_gap=200, **PARAMS) as sim:
        reset(sim)
        fr = answer(sim, link.encode_frame(link.TABLE, 1, table(2, 0, [1, 2])), link.ACK, cycles=20000)
        assert link.parse_ack(fr)[:2] == (2, 0)


BAD_TABLES = [
    table(4, 0, [1]), table(0x10, 0, [1]), table(0xFF, 0, [1]),       # sel > 3 (0x10 was taken as a BARRIER)
    table(2, 0, [1], reserved=1),                                      # reserved byte
    table(2, 4096, [1]), table(0, 0xFFFF, [1]),                        # address beyond the 12-bit port
    table(2, 0, [])[:4], table(2, 0, [1])[:7], table(2, 0, [1]) + b"\0",   # length
]
BAD_OTHERS = [
    (link.RESET, b"\0\0\0"), (link.RESET, bytes(8)),
    (link.IDENTIFY, b"\0\0\0\0"), (link.PING, b"\0"), (link.BARRIER, bytes(4)), (link.STREAM, b""),
    (link.STREAM, bytes(6)), (0x13, b""), (0x80, bytes(4)),
]


def test_malformed_frames_are_nacked_never_executed(sim):
    # each: NACK malformed (reason 4) for the expected SEQ; nothing executed, no COUNTERS, no ACK
    reset(sim)
    for i, payload in enumerate(BAD_TABLES):
        fr = answer(sim, link.encode_frame(link.TABLE, 1, payload), link.NACK)
        assert link.parse_ack(fr)[:2] == (1, 4), i
        # the board NACKs once per next_seq: a PING in between is answered, a good frame re-arms the NACK
        answer(sim, link.encode_frame(link.TABLE, 1, table(1, 0, [0])), link.ACK)
        reset(sim)
    for ftype, payload in BAD_OTHERS:
        fr = answer(sim, link.encode_frame(ftype, 1, payload), link.NACK)
        assert link.parse_ack(fr)[:2] == (1, 4), (ftype, payload)
        answer(sim, link.encode_frame(link.IDENTIFY), link.IDENT)
        reset(sim)
    fr = frames(sim, link.encode_frame(link.TABLE, 1, table(0x10, 0, [1])) + link.encode_frame(link.BARRIER, 1))
    assert [f.type for f in fr] == [link.NACK, link.ACK, link.COUNTERS]
    assert link.parse_counters(fr[2])["link_errors"] == 1


def test_table_or_barrier_inside_an_open_stripe_is_nacked_and_the_stripe_completes(sim):
    c, a = _container(n=300)
    ops = link.table_payloads(_table_ops(c), 128)
    reset(sim)
    seq = 1
    for p in ops:
        answer(sim, link.encode_frame(link.TABLE, seq, p), link.ACK)
        seq += 1
    words = np.asarray(list(c.stripes(c.tensors[0]))[0], "<u4")
    head, tail = words[:2].tobytes(), words[2:].tobytes()
    # the core is busy from here on (never idle): bounded runs
    answer(sim, link.encode_frame(link.STREAM, seq, head), link.ACK, 1000)   # no last flag: the stripe is open
    fr = answer(sim, link.encode_frame(link.TABLE, seq + 1, table(2, 0, [7])), link.NACK, 1000)
    assert link.parse_ack(fr)[:2] == (seq + 1, 4)
    assert sim.run(link.encode_frame(link.BARRIER, seq + 1), max_cycles=1000) == b""   # one NACK per next_seq
    # the rest of the stripe: ACK, then RESULT ok; afterwards TABLE and BARRIER are accepted again
    tail_frames = [tail[i:i + 128] for i in range(0, len(tail), 128)]
    s = seq + 1
    got = []
    for i, t in enumerate(tail_frames):
        got += frames(sim, link.encode_frame(link.STREAM, s, t, flags=int(i == len(tail_frames) - 1)))
        s += 1
    got += frames(sim, link.encode_frame(link.TABLE, s, table(1, 0, [0])))
    got += frames(sim, link.encode_frame(link.BARRIER, s + 1))
    types = [f.type for f in got]
    assert types.count(link.ACK) == len(tail_frames) + 2 and types[-1] == link.COUNTERS, types
    res = [link.parse_result(f) for f in got if f.type == link.RESULT]
    assert len(res) == 1 and res[0][2] == 0 and res[0][3] == link.words_crc(a.view(np.uint16)[:300], 16)


def _table_ops(c):
    from lutzip.hdl.flows.model import table_ops
    return table_ops(c.tables[0], 8)


def _random_frame(rnd, seq):
    kind = rnd.choice(["table", "table_bad", "stream", "stream_last", "barrier", "ping", "identify", "reset",
                       "junk_type", "half", "noise"])
    s = seq if rnd.random() < 0.7 else rnd.randrange(256)
    if kind == "table":
        p = table(rnd.randrange(4), rnd.randrange(4096), [rnd.getrandbits(32) for _ in range(rnd.randrange(1, 8))])
        return link.encode_frame(link.TABLE, s, p)
    if kind == "table_bad":
        p = table(rnd.randrange(256), rnd.randrange(65536), [rnd.getrandbits(32) for _ in range(rnd.randrange(4))],
                  reserved=rnd.randrange(2))
        return link.encode_frame(link.TABLE, s, p)
    if kind in ("stream", "stream_last"):
        p = bytes(rnd.getrandbits(8) for _ in range(4 * rnd.randrange(1, 32)))
        return link.encode_frame(link.STREAM, s, p, flags=rnd.choice([0, 1, 0xFF]) if kind == "stream_last"
                                 else rnd.choice([0, 2]))
    if kind == "barrier":
        return link.encode_frame(link.BARRIER, s)
    if kind == "ping":
        return link.encode_frame(link.PING, s)
    if kind == "identify":
        return link.encode_frame(link.IDENTIFY, s)
    if kind == "reset":
        return link.encode_frame(link.RESET, s, bytes([rnd.randrange(4), 0, 0, rnd.choice([0, 0, 1])]))
    if kind == "junk_type":
        return link.encode_frame(rnd.randrange(256), s, bytes(4 * rnd.randrange(3)))
    if kind == "half":
        f = link.encode_frame(link.STREAM, s, bytes(rnd.getrandbits(8) for _ in range(64)))
        return f[:rnd.randrange(1, len(f))]
    return bytes([link.SYNC]) + bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 12)))


@pytest.mark.parametrize("seeds", [(1,), pytest.param((2, 3), marks=pytest.mark.slow)])
def test_random_frame_sequences_never_leave_the_board_deaf(sim, seeds):
    seen = []
    for seed in seeds:
        rnd = random.Random(seed)
        seq = 0
        for _ in range(40):
            out = frames(sim, _random_frame(rnd, seq), cycles=1200)
            for f in out:
                seen.append(f.type if f.type != link.NACK else (f.type, link.parse_ack(f)[1]))
                if f.type in (link.ACK, link.NACK):
                    seq = link.parse_ack(f)[0]
        sim.run(b"", max_cycles=1200)      # let a partial frame time out (2**GAP .. 2**(GAP+1) cycles)
        answer(sim, link.encode_frame(link.IDENTIFY), link.IDENT, cycles=20000)
    # the sequences reached accepted frames, malformed ones and answers of every kind
    assert link.ACK in seen and (link.NACK, 4) in seen and link.IDENT in seen, seen
    assert _stream_ok(sim)


# ----------------------------------------------------------------------------------------------------------
# the virtual board (Verilator, fast mode: 2**18 .. 2**19 idle cycles)

def _read_frames(ser, want, timeout):
    fp = link.FrameParser()
    got = []
    end = time.monotonic() + timeout
    while time.monotonic() < end and not any(f.type == want for f in got):
        got += fp.feed(ser.read(4096))
    return got


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.timeout(600)
def _wait_sim_idle(vb, quiet=0.5, wall=60.0):
    """Wait until the virtual board's simulator has dropped what it was working on: it simulates flat out while
    a frame is pending and sleeps in ``poll`` once the board is idle, so its CPU time stops growing. Done when
    the CPU time has not grown for ``quiet`` seconds (at most ``wall`` seconds); independent of the machine's
    load, unlike a fixed sleep."""
    import os
    stat = f"/proc/{vb.proc.pid}/stat"
    if not os.path.exists(stat):          # no procfs: the wall clock, generously
        time.sleep(10 * quiet)
        return
    tick = os.sysconf("SC_CLK_TCK")

    def cpu():
        with open(stat) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])      # utime + stime, in ticks

    t_end = time.monotonic() + wall
    last, since = cpu(), time.monotonic()
    while time.monotonic() - since < quiet:
        assert vb.alive(), "the virtual board's simulator stopped"
        assert time.monotonic() < t_end, f"the virtual board was still busy after {wall:g} s"
        time.sleep(0.05)
        now = cpu()
        if now != last:
            last, since = now, time.monotonic()


def test_virtual_board_drops_half_a_frame():
    import serial
    from lutzip.board.verify import stream_container
    from lutzip.vboard import VirtualBoard
    c, _ = _container(n=4000, stripe=1000)
    vb = VirtualBoard(mode="fast").start()
    try:
        ser = serial.serial_for_url(vb.port, timeout=0.05)
        try:
            ser.write(link.encode_frame(link.STREAM, 3, bytes(1024))[:17])
            ser.flush()
            # the board drops the partial frame after 2**18 .. 2**19 core cycles: ~0.3 s of simulation on an idle
            # machine for the two-domain virtual board (core and link clocks both simulated). The simulator
            # runs flat out while a frame is pending and goes quiet once it dropped it (a fixed sleep was too short
            # on a loaded machine)
            _wait_sim_idle(vb)
            # a single IDENTIFY, no filler bytes: answered on the first try
            ser.write(link.encode_frame(link.IDENTIFY))
            got = _read_frames(ser, link.IDENT, 5.0)
            assert [f.type for f in got] == [link.IDENT], got
            # a frame cut in its payload after a RESET, then the host's normal run
            ser.write(link.encode_frame(link.RESET, 0, link.reset_payload(False)))
            ser.write(link.encode_frame(link.TABLE, 1, table(3, 0, [5] * 100))[:300])
            ser.flush()
            _wait_sim_idle(vb)
        finally:
            ser.close()
        with Board(vb.port, timeout=10) as b:
            b.identify()
            r = stream_container(b, c, "crc", progress=False)
        assert r["ok"], r
    finally:
        vb.stop()
