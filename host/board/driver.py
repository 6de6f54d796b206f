"""Host driver of a lutzip board (real or virtual) over a serial link (docs/PROTOCOL.md).

Example
-------
>>> from lutzip.board.driver import Board
>>> with Board("/dev/ttyUSB0", baud=3_000_000) as b:          # doctest: +SKIP
...     print(b.identify())
...     res = b.stream([("w", tableset, stripes)])
"""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field

import numpy as np

from lutzip.link import protocol as link
from lutzip.errors import LutzError
from lutzip.codec.tables import expand_hw


class BoardError(LutzError):
    """Base class of the errors raised by :class:`Board`."""


class LinkError(BoardError):
    """The link failed: no answer within the timeout, too many retransmissions, or board frames were lost."""


class BoardProtocolError(BoardError):
    """The board answered something the protocol does not allow (wrong type, size or content)."""


@dataclass
class StripeResult:
    """What the board reported for one stripe."""

    tensor: str
    index: int
    n_words: int
    err: int
    crc: int
    words: np.ndarray | None = None


@dataclass
class StreamResult:
    """Result of :meth:`Board.stream`."""

    stripes: list
    counters: dict
    elapsed: float
    wire_bytes: int          # bytes the host wrote (frames, retransmissions included)
    payload_bytes: int       # stripe bytes streamed (compressed data)
    retransmissions: int
    attempts: int = 1
    stats: dict = field(default_factory=dict)


class _Session:
    """One go-back-N exchange of sequenced frames with a board."""

    def __init__(self, board, frames, on_frame):
        self.b = board
        self.frames = frames          # list of (type, payload, flags)
        self.on_frame = on_frame
        self.base = 0                 # index of the oldest unacknowledged frame
        self.nxt = 0                  # index of the next frame to (re)send
        self.enc = {}                 # index -> encoded bytes (cached while outstanding)
        self.entries = [link.ring_entries(t, len(p)) for t, p, _ in frames]
        self.credit = board.credit
        self.sent_at = {}             # index -> time of its first transmission (RTT samples, Karn's rule)

    def seq_of(self, i):
        return (self.b.seq0 + i) & 0xFF

    def run(self, done):
        b = self.b
        ser = b.ser
        last_progress = time.monotonic()
        last_send = last_progress
        last_ping = 0.0
        n = len(self.frames)
        inflight = 0
        last_barrier = last_progress
        while self.base < n or not done():
            now = time.monotonic()
            if self.base >= n and self.frames and self.frames[-1][0] == link.BARRIER and \
                    now - max(last_progress, last_barrier) > 2 * b.rto_eff:
                # everything acknowledged but the COUNTERS answer is missing (lost?): ask again
                b.retries_left -= 1
                if b.retries_left < 0:
                    raise LinkError("no COUNTERS answer from the board after repeated BARRIERs")
                self.frames.append((link.BARRIER, b"", 0))
                self.entries.append(1)
                n += 1
                last_barrier = now
            # send what the window and the credit allow
            out = []
            while self.nxt < n and self.nxt - self.base < b.window and \
                    inflight + self.entries[self.nxt] <= self.credit:
                i = self.nxt
                fb = self.enc.get(i)
                if fb is None:
                    t, p, f = self.frames[i]
                    fb = self.enc[i] = link.encode_frame(t, self.seq_of(i), p, f)
                out.append(fb)
                inflight += self.entries[i]
                self.sent_at[i] = None if i in self.sent_at else now
                self.nxt += 1
            if out:
                data = b"".join(out)
                b._write(data)
                b.wire_bytes += len(data)
                last_send = now
            elif self.nxt < n and self.nxt == self.base and now - last_ping > b.rto_eff / 4:
                # nothing in flight and no credit: ask for the current credit
                b._write(b.ping_frame)
                b.wire_bytes += len(b.ping_frame)
                last_ping = now
            # receive
            got = b._read_frames()
            for fr in got:
                if fr.type in (link.ACK, link.NACK):
                    nseq, reason, credit = link.parse_ack(fr)
                    k = link.seq_diff(nseq, self.seq_of(self.base))
                    if k < 0 or self.base + k > self.nxt:
                        continue          # stale answer from before a rewind or a duplicate
                    if k > 0:
                        for i in range(self.base, self.base + k):
                            self.enc.pop(i, None)
                            t_sent = self.sent_at.pop(i, None)
                            if t_sent is not None:
                                b._rtt_sample(now - t_sent)
                        self.base += k
                        last_progress = now
                        b.retries_left = b.max_retries
                    self.credit = credit
                    inflight = sum(self.entries[self.base:self.nxt])
                    if fr.type == link.NACK:
                        b.nacks += 1
                        if self.nxt > self.base:
                            b.retransmissions += self.nxt - self.base
                            self.nxt = self.base
                            inflight = 0
                else:
                    self.on_frame(fr)
                    last_progress = now
            if got:
                continue
            now = time.monotonic()
            if self.nxt > self.base and now - last_send > b.rto_eff:
                # no answer: go back and resend everything outstanding
                b.retries_left -= 1
                if b.retries_left < 0:
                    raise LinkError(f"no acknowledgement for frame {self.seq_of(self.base)} after "
                                    f"{b.max_retries} retransmissions")
                b.retransmissions += self.nxt - self.base
                self.nxt = self.base
                inflight = 0
                last_send = now
            if now - last_progress > b.timeout:
                what = "acknowledgement" if self.base < n else "results"
                raise LinkError(f"board silent for {b.timeout:.1f} s while waiting for {what}")
        b.seq0 = self.seq_of(n)
        b.credit = self.credit


class Board:
    """A lutzip board behind a serial port (a real UART or the virtual board's pseudo-terminal).

    Parameters
    ----------
    port : str or None
        Anything :func:`serial.serial_for_url` opens (``/dev/ttyUSB0``, ``/dev/pts/5``, ``loop://``).
    baud : int
        Line rate of a real UART (ignored by pseudo-terminals).
    timeout : float
        Seconds without any progress after which an operation fails with :class:`LinkError`.
    serial : object, optional
        An already open serial-like object (``read``, ``write``, ``in_waiting``) instead of ``port``.
    rto : float
        Retransmission timeout in seconds.
    window : int
        Most sequenced frames in flight (at most 64).
    max_retries : int
        Retransmission rounds without progress before giving up.
    max_payload : int
        Largest frame payload the host sends (further limited by the board's MAX_PAYLOAD).
    """

    def __init__(self, port=None, baud=3_000_000, timeout=5.0, *, serial=None, rto=0.25, window=32,
                 max_retries=8, max_payload=1024):
        if serial is None:
            if port is None:
                raise BoardError("no port given")
            import serial as pyserial
            try:
                serial = pyserial.serial_for_url(port, baudrate=baud, timeout=0.002, write_timeout=timeout)
            except (pyserial.SerialException, ValueError) as e:
                raise LinkError(f"cannot open {port}: {e}") from e
            try:   # USB-UARTs (FTDI) batch their input for up to 16 ms by default: ACKs would come late
                serial.set_low_latency_mode(True)
            except (AttributeError, NotImplementedError, ValueError, OSError):
                pass
        self.ser = serial
        self.port = port
        self.baud = baud
        self.timeout = float(timeout)
        self.rto = float(rto)
        self.rto_eff = self.rto       # adapted to the measured round trip (slow simulators)
        self.srtt = None
        self.window = max(1, min(64, int(window)))
        self.max_retries = int(max_retries)
        self.retries_left = self.max_retries
        self.max_payload = int(max_payload)
        self.parser = link.FrameParser(link.BOARD_MAX_PAYLOAD)
        self.ident = None
        self.seq0 = 0
        self.credit = 0
        self.rx_seq = None
        self.rx_gap = False
        self.strict = False
        self._last_counters = {}
        self.wire_bytes = 0
        self.retransmissions = 0
        self.nacks = 0
        self.ping_frame = link.encode_frame(link.PING)

    # ------------------------------------------------------------------------------------- plumbing
    def close(self):
        """Close the serial port."""
        try:
            self.ser.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rtt_sample(self, rtt):
        self.srtt = rtt if self.srtt is None else 0.875 * self.srtt + 0.125 * rtt
        self.rto_eff = min(max(self.rto, 3 * self.srtt), max(self.rto, self.timeout / 2))

    def _write(self, data):
        """Write to the port; a write that times out is left to the retransmission logic."""
        try:
            self.ser.write(data)
        except Exception as e:        # serial.SerialTimeoutException (pyserial) and alike
            if type(e).__name__ != "SerialTimeoutException":
                raise

    def _read_frames(self):
        ser = self.ser
        n = ser.in_waiting
        data = ser.read(n if n else 1)
        if not data:
            return []
        frames = self.parser.feed(data)
        out = []
        for fr in frames:
            if self.rx_seq is not None and fr.seq != self.rx_seq:
                self.rx_gap = True
                if self.strict:
                    raise LinkError(f"board frames were lost on the way to the host (frame {fr.seq}, "
                                    f"expected {self.rx_seq})")
            self.rx_seq = (fr.seq + 1) & 0xFF
            out.append(fr)
        return out

    def _await(self, request: bytes, want, what: str, attempts=None):
        """Send ``request`` (again after each ``rto``) until ``want(frame)`` is true for a received frame."""
        attempts = attempts or self.max_retries
        deadline = time.monotonic() + self.timeout
        for _ in range(attempts + 1):
            self._write(request)
            self.wire_bytes += len(request)
            t_end = min(deadline, time.monotonic() + max(self.rto_eff, 0.05))
            while time.monotonic() < t_end:
                for fr in self._read_frames():
                    if want(fr):
                        return fr
            if time.monotonic() >= deadline:
                break
        raise LinkError(f"no {what} from the board within {self.timeout:.1f} s")

    # ------------------------------------------------------------------------------------- commands
    def identify(self) -> link.Ident:
        """Ask the board what it is (protocol version, core parameters L, W, LUT3 depth, clock)."""
        fr = self._await(link.encode_frame(link.IDENTIFY), lambda f: f.type == link.IDENT, "IDENT")
        ident = link.parse_ident(fr)
        if ident.version != link.PROTOCOL_VERSION:
            raise BoardProtocolError(f"board speaks protocol version {ident.version}, "
                                     f"this host {link.PROTOCOL_VERSION}")
        if ident.W not in (8, 16) or not 1 <= ident.L <= 12:
            raise BoardProtocolError(f"board reports an impossible core (L={ident.L}, W={ident.W})")
        self.ident = ident
        return ident

    def reset(self, words: bool = False):
        """Reset the board's ring, core, result path and counters; ``words`` selects words mode."""
        if self.ident is None:
            self.identify()
        r = (self.seq0 + 97) & 0xFF
        req = link.encode_frame(link.RESET, r, link.reset_payload(words))

        def want(f):
            return f.type == link.ACK and f.seq == 0 and link.parse_ack(f)[0] == (r + 1) & 0xFF

        fr = self._await(req, want, "RESET acknowledgement")
        self.credit = link.parse_ack(fr)[2]
        self.seq0 = (r + 1) & 0xFF
        self.rx_seq = 1
        self.rx_gap = False
        self.retries_left = self.max_retries

    def _payload_limit(self):
        # a frame must fit the board's ring (half of it, so two frames can be in flight)
        return max(8, min(self.max_payload, self.ident.max_payload, self.ident.ring_depth * 2) // 4 * 4)

    def table_frames(self, tables) -> list:
        """Sequenced frames that load a table set (table-write ops + config ``n_lut3``)."""
        ops = expand_hw(tables, self.ident.L)
        if len(tables.lut3) > self.ident.lut3_depth:
            raise BoardError(f"table set has {len(tables.lut3)} LUT3 entries, the board holds "
                             f"{self.ident.lut3_depth}")
        if tables.word_bits > self.ident.W:
            raise BoardError(f"{tables.word_bits}-bit tables on a {self.ident.W}-bit core")
        ops.append((3, 0, len(tables.lut3)))
        return [(link.TABLE, p, 0) for p in link.table_payloads(ops, self._payload_limit())]

    def _exchange(self, frames, on_frame=None, done=lambda: True):
        if self.ident is None:
            self.identify()
        self.strict = True
        try:
            _Session(self, frames, on_frame or self._unexpected).run(done)
        finally:
            self.strict = False

    def _unexpected(self, fr):
        raise BoardProtocolError(f"unexpected frame type {fr.type:#04x} from the board")

    def load_tables(self, tables):
        """Write a :class:`~lutzip.codec.tables.TableSet` into the decoder (acknowledged frame by frame)."""
        self._exchange(self.table_frames(tables))

    def read_counters(self) -> dict:
        """Wait until all earlier work is done, then return the board's counters (docs/PROTOCOL.md)."""
        box = {}

        def on_frame(fr):
            if fr.type == link.COUNTERS:
                box["c"] = link.parse_counters(fr)
            else:
                self._unexpected(fr)

        self._exchange([(link.BARRIER, b"", 0)], on_frame, lambda: "c" in box)
        return box["c"]

    def stream(self, tensors, words=False, progress=None, retries=None) -> StreamResult:
        """Decode tensors on the board.

        Parameters
        ----------
        tensors : list of (name, TableSet, list of numpy.ndarray)
            Each tensor's table set and stripes (uint32 words, header first).
        words : bool
            Return every decoded word (words mode) instead of only a CRC32 per stripe.
        progress : callable(int), optional
            Called with the number of stripes finished since the last call.
        retries : int, optional
            Restarts allowed without progress after a :class:`LinkError` (default ``max_retries``). After a
            failure the board is reset and streaming resumes at the first stripe without a result (stripes
            are independent), so the counters are the sums over all attempts.

        Returns
        -------
        StreamResult
            One :class:`StripeResult` per stripe, in order, and the board's counters.
        """
        items = []
        for name, tables, stripes in tensors:
            for i, s in enumerate(stripes):
                items.append((name, tables, i, s))
        retries = self.max_retries if retries is None else retries
        results, counters = [], {}
        w0, r0, pay = self.wire_bytes, self.retransmissions, 0
        t0 = time.perf_counter()
        attempts = fails = 0
        while True:
            attempts += 1
            done_before = len(results)
            try:
                cn, pb = self._stream_once(items[len(results):], words, progress, results)
                pay += pb
                break
            except LinkError:
                fails = 0 if len(results) > done_before else fails + 1
                if fails > retries:
                    raise
                self.parser = link.FrameParser(link.BOARD_MAX_PAYLOAD)
                self._drain()
            finally:
                for k, v in self._last_counters.items():
                    counters[k] = counters.get(k, 0) + v
        elapsed = time.perf_counter() - t0
        return StreamResult(results, counters, elapsed, self.wire_bytes - w0, sum(len(it[3]) * 4 for it in items),
                            self.retransmissions - r0, attempts,
                            stats={"nacks": self.nacks, "rx_bad_header": self.parser.bad_header,
                                   "rx_bad_crc": self.parser.bad_crc})

    def _drain(self):
        t_end = time.monotonic() + min(self.rto, 0.2)
        while time.monotonic() < t_end:
            self._read_frames()

    def _stream_once(self, items, words, progress, results):
        """Stream ``items`` after a reset, appending a StripeResult per stripe to ``results``."""
        self._last_counters = {}
        self.reset(words)
        W = self.ident.W
        limit = self._payload_limit()
        frames = []
        payload_bytes = 0
        prev = None
        for name, tables, i, s in items:
            if tables is not prev:
                frames += self.table_frames(tables)
                prev = tables
            for p, f in link.stripe_payloads(s, limit):
                frames.append((link.STREAM, p, f))
                payload_bytes += len(p)
        frames.append((link.BARRIER, b"", 0))
        k0 = len(results)
        cur = []
        box = {}
        dt = np.dtype("<u2" if W == 16 else "u1")

        def on_frame(fr):
            if fr.type == link.DATA:
                if not words:
                    raise BoardProtocolError("DATA frame in CRC mode")
                cur.append(np.frombuffer(fr.payload, dt))
            elif fr.type == link.RESULT:
                sn, n, err, crc = link.parse_result(fr)
                k = len(results) - k0
                if sn != k or k >= len(items):
                    raise LinkError(f"RESULT for stripe {sn}, expected stripe {k}")
                ws = np.concatenate(cur) if cur else np.zeros(0, dt)
                cur.clear()
                if words and err == 0 and len(ws) != n:
                    raise LinkError(f"stripe {k}: {len(ws)} decoded words arrived, the board sent {n}")
                name, _, idx, _ = items[k]
                results.append(StripeResult(name, idx, n, err, crc, ws if words else None))
                if progress:
                    progress(1)
            elif fr.type == link.COUNTERS:
                box["c"] = link.parse_counters(fr)
                self._last_counters = box["c"]
            else:
                self._unexpected(fr)

        self._exchange(frames, on_frame, lambda: "c" in box)
        if len(results) - k0 != len(items):
            raise LinkError(f"{len(results) - k0} stripe results for {len(items)} stripes")
        return box["c"], payload_bytes
