"""Malformed frames against the converted RTL (issue 14, item 4): the Verilator virtual board, raw frames over its
pseudo-terminal. The same cases as tests/test_firmware_faults.py runs on the MyHDL engine -- a TABLE with
sel > 3 (sel 0x10 was answered with COUNTERS, as if it were a BARRIER), a bad reserved byte or address, frames
whose LEN does not fit their TYPE, a TABLE or BARRIER inside an open stripe (it stalled the board until RESET)
-- each answered with NACK 4 and never executed, and (``-m slow``) random frame sequences that never leave the
board deaf.
"""
import random
import shutil
import time

import numpy as np
import pytest

from lutzip.link import protocol as link
from test_firmware_faults import BAD_OTHERS, BAD_TABLES, _container, _random_frame, _table_ops, table

pytestmark = [pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed"),
              pytest.mark.timeout(600)]

QUIET = 0.1      # seconds without a frame after which the board is taken to have answered (a late frame fails the
                 # next check: each one expects exact frame types)


@pytest.fixture(scope="module")
def port():
    import serial
    from lutzip.vboard import VirtualBoard
    vb = VirtualBoard(mode="fast").start()
    ser = serial.serial_for_url(vb.port, timeout=0.01)
    yield ser
    ser.close()
    vb.stop()


def answers(ser, data: bytes, n: int, timeout: float = 10.0, quiet: float = QUIET) -> list:
    """Write ``data``; the board's frames until ``n`` came and then ``quiet`` seconds passed without one."""
    fp = link.FrameParser()
    ser.write(data)
    got = []
    end = time.monotonic() + timeout
    quiet_from = None
    while time.monotonic() < end:
        new = fp.feed(ser.read(4096))
        got += new
        if new:
            quiet_from = None
        if len(got) >= n:
            quiet_from = quiet_from or time.monotonic()
            if time.monotonic() - quiet_from > quiet:
                break
    return got


def types(frames):
    return [f.type for f in frames]


def reset(ser, seq=0):
    fr = answers(ser, link.encode_frame(link.RESET, seq, link.reset_payload(False)), 1)
    assert types(fr) == [link.ACK] and link.parse_ack(fr[0])[0] == (seq + 1) & 0xFF, fr


def test_malformed_frames_are_nacked_never_executed_on_the_rtl(port):
    for i, payload in enumerate(BAD_TABLES):
        reset(port)
        fr = answers(port, link.encode_frame(link.TABLE, 1, payload), 1)
        assert types(fr) == [link.NACK] and link.parse_ack(fr[0])[:2] == (1, link.NACK_MALFORMED), (i, fr)
        fr = answers(port, link.encode_frame(link.TABLE, 1, table(1, 0, [0])), 1)      # a good frame: ACK
        assert types(fr) == [link.ACK], (i, fr)
    for ftype, payload in BAD_OTHERS:
        reset(port)
        fr = answers(port, link.encode_frame(ftype, 1, payload), 1)
        assert types(fr) == [link.NACK] and link.parse_ack(fr[0])[:2] == (1, link.NACK_MALFORMED), \
            (ftype, payload, fr)
        assert types(answers(port, link.encode_frame(link.IDENTIFY), 1)) == [link.IDENT]
    # sel 0x10 then a BARRIER with the same SEQ: NACK, then the BARRIER is executed once (not the TABLE)
    reset(port)
    fr = answers(port, link.encode_frame(link.TABLE, 1, table(0x10, 0, [1])) + link.encode_frame(link.BARRIER, 1), 3)
    assert types(fr) == [link.NACK, link.ACK, link.COUNTERS], fr
    assert link.parse_counters(fr[2])["link_errors"] == 1


def test_table_or_barrier_inside_an_open_stripe_is_nacked_on_the_rtl(port):
    c, a = _container(n=300)
    reset(port)
    seq = 1
    for p in link.table_payloads(_table_ops(c), 128):
        assert types(answers(port, link.encode_frame(link.TABLE, seq, p), 1)) == [link.ACK]
        seq += 1
    words = np.asarray(list(c.stripes(c.tensors[0]))[0], "<u4")
    head, tail = words[:2].tobytes(), words[2:].tobytes()
    assert types(answers(port, link.encode_frame(link.STREAM, seq, head), 1)) == [link.ACK]   # the stripe is open
    fr = answers(port, link.encode_frame(link.TABLE, seq + 1, table(2, 0, [7])), 1)
    assert types(fr) == [link.NACK] and link.parse_ack(fr[0])[:2] == (seq + 1, link.NACK_MALFORMED), fr
    assert answers(port, link.encode_frame(link.BARRIER, seq + 1), 0, quiet=0.5) == []   # one NACK per next_seq
    # the rest of the stripe completes it; TABLE and BARRIER are accepted again afterwards
    parts = [tail[i:i + 128] for i in range(0, len(tail), 128)]
    data = b"".join(link.encode_frame(link.STREAM, seq + 1 + i, t, flags=int(i == len(parts) - 1))
                    for i, t in enumerate(parts))
    s = seq + 1 + len(parts)
    data += link.encode_frame(link.TABLE, s, table(1, 0, [0])) + link.encode_frame(link.BARRIER, s + 1)
    got = answers(port, data, len(parts) + 4)
    assert types(got).count(link.ACK) == len(parts) + 2 and types(got)[-1] == link.COUNTERS, types(got)
    res = [link.parse_result(f) for f in got if f.type == link.RESULT]
    assert len(res) == 1 and res[0][2] == 0 and res[0][3] == link.words_crc(a.view(np.uint16)[:300], 16)


@pytest.mark.slow        # the MyHDL engine runs the same sequences by default (tests/test_firmware_faults.py)
def test_random_frame_sequences_never_leave_the_rtl_deaf(port):
    from lutzip.board.driver import Board
    from lutzip.board.verify import stream_container
    rnd = random.Random(1)
    seq = 0
    seen = set()
    for _ in range(40):
        for f in answers(port, _random_frame(rnd, seq), 0, timeout=0.5):
            seen.add(f.type if f.type != link.NACK else (f.type, link.parse_ack(f)[1]))
            if f.type in (link.ACK, link.NACK):
                seq = link.parse_ack(f)[0]
    time.sleep(1.0)          # a partial frame times out (2**18 .. 2**19 idle cycles in fast mode)
    assert types(answers(port, link.encode_frame(link.IDENTIFY), 1)) == [link.IDENT]
    assert link.ACK in seen and (link.NACK, link.NACK_MALFORMED) in seen, seen
    c, _ = _container(n=4000, stripe=1000)
    with Board(port.port, timeout=10) as b:
        b.identify()
        r = stream_container(b, c, "crc", progress=False)
    assert r["ok"], r
