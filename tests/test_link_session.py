"""The host's link session (lutzip.link.session) and the UART board driver against a scripted fake board:
every wait ends, within a bound, in a LinkError that says what never came (issue 14, link items).

The fake board runs in-process (a serial-like object) and, for the port path and the CLI, behind a
pseudo-terminal (:class:`PtyBoard`: pyserial opens it like a real UART, exclusively)."""
import os
import select
import signal
import subprocess
import sys
import threading
import time
import tty

import numpy as np
import pytest

from lutzip.board.base import LinkError
from lutzip.board.uart import UartBoard
from lutzip.codec import arrays as codec
from lutzip.link import protocol as link
from lutzip.link.session import Session

IDENT = link.Ident(1, 8, 16, 4096, 4096, 1024, 100_000_000, 0)


class ScriptedBoard:
    """A serial-like fake board: parses the host's frames, answers as told (in-process, no pty)."""

    def __init__(self, ident=True, counters=True, results=True, ack=True, stuck_in_frame=False, refuse=None,
                 nack=None, flood=False):
        self.ident, self.counters, self.results, self.ack = ident, counters, results, ack
        self.refuse = refuse   # a frame type the board refuses as malformed (NACK 4)
        self.nack = nack       # a NACK reason every sequenced frame after RESET is answered with (a NACK storm)
        self.flood = flood     # from the first frame after RESET on, repeated ACKs without end
        self.flooding = False
        self.nacked = 0
        self.parser = link.FrameParser(1024)
        self.out = bytearray()
        self.seq = 0           # board frame numbering
        self.next = 0          # next host SEQ expected
        self.stripe = 0
        self.words = 0
        self.barriers = 0
        self.on_barrier = None  # called (from the board's thread) at every BARRIER it takes
        self.written = 0
        if stuck_in_frame:     # the first 17 bytes of a 1024-byte STREAM frame (a sender that died)
            self.parser.feed(link.encode_frame(link.STREAM, 5, bytes(1024))[:17])

    # serial interface
    @property
    def in_waiting(self):
        return len(self.out)

    def tick(self):
        """What the board sends unasked (the flood of repeated ACKs)."""
        if self.flooding:
            for _ in range(4):
                self.send(link.ACK, link.encode_ack(self.next, 0, 4096))

    def read(self, n=1):
        self.tick()
        if not self.out:
            time.sleep(0.001)
        data = bytes(self.out[:n])
        del self.out[:n]
        return data

    def write(self, data):
        self.written += len(data)
        for fr in self.parser.feed(data):
            self.handle(fr)
        return len(data)

    def close(self):
        pass

    def send(self, ftype, payload=b""):
        self.out += link.encode_frame(ftype, self.seq, payload)
        self.seq = (self.seq + 1) & 0xFF

    def handle(self, fr):
        if fr.type == link.IDENTIFY and self.ident:
            self.send(link.IDENT, link.encode_ident(IDENT))
        elif fr.type == link.RESET:
            self.seq, self.next, self.stripe, self.words = 0, (fr.seq + 1) & 0xFF, 0, 0
            self.flooding = False
            self.send(link.ACK, link.encode_ack(self.next, 0, 4096))
        elif self.nack is not None and fr.type in link.SEQUENCED:
            self.nacked += 1
            self.send(link.NACK, link.encode_ack(self.next, self.nack, 4096))
        elif self.flood and fr.type in link.SEQUENCED:
            self.flooding = True       # the first frame of the work starts the flood; nothing is executed
        elif fr.type == link.PING:
            self.send(link.ACK, link.encode_ack(self.next, 0, 4096))
        elif fr.type == self.refuse and fr.seq == self.next:
            self.nacked += 1
            self.send(link.NACK, link.encode_ack(self.next, link.NACK_MALFORMED, 4096))
        elif fr.type in link.SEQUENCED and fr.seq == self.next:
            self.next = (self.next + 1) & 0xFF
            if self.ack:
                self.send(link.ACK, link.encode_ack(self.next, 0, 4096))
            if fr.type == link.STREAM and fr.flags & link.FLAG_TLAST and self.results:
                self.send(link.RESULT, link.encode_result(self.stripe, 0, 0, 0))
                self.stripe += 1
            if fr.type == link.BARRIER:
                self.barriers += 1
                if self.on_barrier is not None:
                    self.on_barrier()
                if self.counters:
                    self.send(link.COUNTERS, link.encode_counters({"cycles": 10, "busy": 5}))


def _stripes():
    c = codec.compress({"w": np.arange(3000, dtype=np.int16) % 50}, stripe_len=1000)
    t = c.tensors[0]
    return [("w", c.tables[t.table], list(c.stripes(t)))]


def test_scripted_board_streams():
    fake = ScriptedBoard()
    b = UartBoard(serial=fake, timeout=2, rto=0.05)
    info = b.identify()
    assert (info.kind, info.L, info.W, info.ring_depth, info.baud) == ("uart", 8, 16, 4096, 0)
    r = b.stream(_stripes())
    assert [s.index for s in r.stripes] == [0, 1, 2] and r.attempts == 1
    assert r.counters["busy"] == 5 and r.counters["starved"] == 0 and "stall_in" not in r.counters
    assert set(b.read_counters()) >= {"cycles", "busy", "starved", "blocked", "words", "stripes", "decode_errors"}


def test_no_ident_message_tells_the_truth():
    fake = ScriptedBoard(ident=False)
    b = UartBoard(serial=fake, timeout=1.5, rto=0.05, max_retries=3)
    t0 = time.monotonic()
    with pytest.raises(LinkError, match=r"no IDENT from the board: 4 request\(s\) in 1\.[45] s \(timeout 1.5 s\)"):
        b.identify()
    assert 1.4 < time.monotonic() - t0 < 2.5
    assert fake.written == 4 * link.OVERHEAD + link.BOARD_MAX_PAYLOAD + link.OVERHEAD   # one flush, four requests


@pytest.mark.parametrize("results", [False, True])
def test_acks_without_counters_end_in_bounded_time(results):
    # the board acknowledges every frame (results or not) but never answers the BARRIER with COUNTERS: the
    # acknowledgements of repeated BARRIERs are no progress, so this ends (it used to wait for ever)
    fake = ScriptedBoard(counters=False, results=results)
    b = UartBoard(serial=fake, timeout=1.0, rto=0.05, max_retries=3)
    t0 = time.monotonic()
    with pytest.raises(LinkError, match="BARRIER|silent"):
        b.stream(_stripes(), retries=1)
    assert time.monotonic() - t0 < 8
    assert fake.barriers >= 2


def test_read_counters_without_answer_is_bounded():
    b = UartBoard(serial=ScriptedBoard(counters=False), timeout=1.0, rto=0.05, max_retries=4)
    b.reset()
    t0 = time.monotonic()
    with pytest.raises(LinkError, match="no answer to BARRIER"):
        b.read_counters()
    assert time.monotonic() - t0 < 3


def test_no_acknowledgement_is_bounded():
    b = UartBoard(serial=ScriptedBoard(ack=False), timeout=5.0, rto=0.05, max_retries=3)
    b.reset()
    t0 = time.monotonic()
    with pytest.raises(LinkError, match="no acknowledgement for frame"):
        b.load_tables(_stripes()[0][1])
    assert time.monotonic() - t0 < 3
    # each expired retransmission timeout doubled the next one (a slow board is not flooded), up to timeout / 2
    assert b.session.rto_eff == pytest.approx(0.05 * 2 ** 3)
    for _ in range(3):
        b.session._backoff()
    assert b.session.rto_eff == 2.5


def test_malformed_nack_fails_at_once():
    """NACK 4 (good CRCs, refused content): no retransmissions, a LinkError naming the frame."""
    fake = ScriptedBoard(refuse=link.TABLE)
    b = UartBoard(serial=fake, timeout=5.0, rto=0.05, max_retries=8)
    b.reset()
    t0 = time.monotonic()
    with pytest.raises(LinkError, match=r"refused frame \d+ \(TABLE, \d+-byte payload\) as malformed \(NACK 4\)"):
        b.load_tables(_stripes()[0][1])
    assert time.monotonic() - t0 < 1.0 and fake.nacked == 1 and b.session.retransmissions == 0


def test_board_stuck_in_a_partial_frame_answers_within_one_identify():
    fake = ScriptedBoard(stuck_in_frame=True)
    b = UartBoard(serial=fake, timeout=5, rto=0.05, max_retries=3)
    assert b.identify().W == 16
    assert fake.written > 1024          # the flush completed the partial frame


def test_session_counts_and_restart():
    fake = ScriptedBoard()
    s = Session(fake, timeout=1, rto=0.05, error=LinkError)
    fr = s.request(link.encode_frame(link.RESET, 9, link.reset_payload(False)), lambda f: f.type == link.ACK,
                   "ACK")
    s.restart(10, link.parse_ack(fr)[2])
    got = []
    s.exchange([(link.BARRIER, b"", 0)], lambda f: got.append(f.type) or True, lambda: bool(got))
    assert got == [link.COUNTERS] and s.seq == 11 and s.credit == 4096 and s.retransmissions == 0
    assert s.wire_bytes == 2 * link.OVERHEAD + 4


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reason", [link.NACK_CRC, link.NACK_SEQUENCE, link.NACK_NO_ROOM])
def test_a_nack_storm_ends_in_bounded_time(reason):
    # every frame refused, at once and again: each NACK that accepts nothing is a round without progress (the
    # host used to rewind and resend for ever, the answers arriving too fast for the progress clock)
    fake = ScriptedBoard(nack=reason)
    b = UartBoard(serial=fake, timeout=2.0, rto=0.05, max_retries=3)
    t0 = time.monotonic()
    with pytest.raises(LinkError, match=rf"with NACK {reason} \({link.NACK_REASONS[reason]}\) 4 times"):
        b.stream(_stripes(), retries=1)
    assert time.monotonic() - t0 < 10
    assert fake.written < 200_000, fake.written


@pytest.mark.timeout(60)
def test_a_flood_of_repeated_acks_ends_in_bounded_time():
    # a board that keeps repeating the same ACK: frames arrive all the time, none of them is progress
    fake = ScriptedBoard(flood=True)
    b = UartBoard(serial=fake, timeout=1.0, rto=0.05, max_retries=3)
    t0 = time.monotonic()
    with pytest.raises(LinkError, match=r"no progress for 1\.0 s while waiting for acknowledgement of frame \d+ "
                                        r"\(TABLE\): the board sent \d+ frame\(s\), none of them"):
        b.stream(_stripes(), retries=0)
    assert time.monotonic() - t0 < 10


def test_the_silent_board_message_stays_silent():
    b = UartBoard(serial=ScriptedBoard(ack=False), timeout=0.5, rto=0.05, max_retries=50)
    b.reset()
    with pytest.raises(LinkError, match=r"board silent for 0\.5 s while waiting for acknowledgement of frame \d+ "
                                        r"\(TABLE\)$"):
        b.load_tables(_stripes()[0][1])


# ------------------------------------------------------------------------------ the fake board on a pty
class PtyBoard:
    """A :class:`ScriptedBoard` behind a pseudo-terminal, served by a thread: ``port`` opens like a UART."""

    def __init__(self, board: ScriptedBoard):
        self.board = board
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self):
        b = self.board
        while not self.stop.is_set():
            r, _, _ = select.select([self.master], [], [], 0.005)
            if r:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                if data:
                    b.written += len(data)
                    for fr in b.parser.feed(data):
                        b.handle(fr)
            b.tick()
            if b.out:
                try:
                    n = os.write(self.master, bytes(b.out[:4096]))
                except OSError:
                    n = 0
                del b.out[:n]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(5)
        os.close(self.master)
        os.close(self.slave)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["no_counters", "results_no_counters", "nack_storm", "ack_flood"])
def test_fake_board_on_a_pty_every_wait_ends(kind):
    board = {"no_counters": ScriptedBoard(counters=False, results=False),
             "results_no_counters": ScriptedBoard(counters=False),
             "nack_storm": ScriptedBoard(nack=link.NACK_CRC), "ack_flood": ScriptedBoard(flood=True)}[kind]
    with PtyBoard(board) as pb:
        # rto 0.2 s: the scripted board's thread must ack within it; 0.05 s failed at load 20 ("no acknowledgement")
        with UartBoard(pb.port, timeout=1.0, rto=0.2, max_retries=3) as b:
            assert b.identify().W == 16
            t0 = time.monotonic()
            with pytest.raises(LinkError, match="BARRIER|NACK|no progress|silent|COUNTERS|RESULT"):
                b.stream(_stripes(), retries=1)
            assert time.monotonic() - t0 < 15


@pytest.mark.timeout(60)
def test_fake_board_on_a_pty_streams_and_resyncs_from_half_a_frame():
    with PtyBoard(ScriptedBoard(stuck_in_frame=True)) as pb:
        with UartBoard(pb.port, timeout=5.0, rto=0.05, max_retries=3) as b:
            assert b.identify().W == 16                    # one run: the flush completes the partial frame
            r = b.stream(_stripes())
            assert [s.index for s in r.stripes] == [0, 1, 2] and r.attempts == 1


@pytest.mark.timeout(60)
def test_fake_board_on_a_pty_is_opened_exclusively():
    with PtyBoard(ScriptedBoard()) as pb:
        with UartBoard(pb.port, timeout=2.0, rto=0.05) as b:
            b.identify()
            with pytest.raises(LinkError, match="in use by another program"):
                UartBoard(pb.port, timeout=1.0)
            assert b.identify().W == 16                    # the first client is undisturbed


def _lutz(tmp_path):
    import lutzip
    f = tmp_path / "m.lutz"
    lutzip.save(f, {"w": (np.arange(3000, dtype=np.int16) % 50)}, states=1)      # the scripted board: STATES=1
    return f


def _cli(*argv, ctrl_c=False):
    """``lutzip *argv`` in a child process. ``ctrl_c``: with Ctrl-C's usual handler, as in a terminal (a child
    of a background job inherits SIGINT ignored, and Python then keeps it ignored)."""
    pre = ["-c", "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                 "from lutzip.cli import main; sys.exit(main())"] if ctrl_c else ["-m", "lutzip.cli"]
    return subprocess.Popen([sys.executable, *pre, *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(120)
def test_cli_stream_against_a_board_that_never_answers_the_barrier(tmp_path):
    with PtyBoard(ScriptedBoard(counters=False)) as pb:
        p = _cli("stream", "--port", pb.port, "--timeout", "1", "--json", _lutz(tmp_path))
        out, err = p.communicate(timeout=100)
    assert p.returncode == 2, (p.returncode, err)
    assert err.startswith("lutzip: error:") and err.count("\n") == 1, err
    assert "no COUNTERS (the answer to the closing BARRIER; every stripe result came)" in err or \
        "while waiting for COUNTERS (the answer to the closing BARRIER; every stripe result came)" in err, err


@pytest.mark.timeout(120)
def test_cli_stream_ctrl_c_says_interrupted(tmp_path):
    board = ScriptedBoard(counters=False)
    procs = []
    # Ctrl-C while the CLI waits for the COUNTERS: the board's thread sends it on the first BARRIER, so the
    # signal does not depend on how fast this process notices the BARRIER (the CLI gives up after 8 BARRIERs)
    board.on_barrier = lambda: procs and board.barriers == 1 and procs[0].send_signal(signal.SIGINT)
    with PtyBoard(board) as pb:
        p = _cli("stream", "--port", pb.port, "--timeout", "60", "--json", _lutz(tmp_path), ctrl_c=True)
        procs.append(p)
        out, err = p.communicate(timeout=60)
    assert board.barriers, (p.returncode, err)
    assert p.returncode == 130 and err == "lutzip: interrupted\n", (p.returncode, err)
