"""A lutzip board behind a serial link (a real UART, or the virtual board's pseudo-terminal): docs/PROTOCOL.md.

Example
-------
>>> from lutzip.board.uart import UartBoard
>>> with UartBoard("/dev/ttyUSB0", baud=3_000_000) as b:          # doctest: +SKIP
...     print(b.identify())
...     res = b.stream([("w", tableset, stripes)])
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from lutzip.board.base import BoardBase, BoardError, BoardInfo, BoardProtocolError, LinkError, StreamResult, \
    StripeResult, check_states
from lutzip.link import protocol as link
from lutzip.link.session import Session

#: Host names of the protocol's COUNTERS fields (docs/PROTOCOL.md names them on the wire).
_COUNTER_RENAME = {"stall_in": "starved", "stall_out": "blocked"}

#: Longest stripe the container format allows, in words (a DATA stream beyond it is not progress).
_MAX_STRIPE_WORDS = 1 << 20


def host_counters(wire: dict) -> dict:
    """The board's COUNTERS frame under the host's names (:data:`lutzip.board.base.COUNTERS` and the link's)."""
    return {_COUNTER_RENAME.get(k, k): v for k, v in wire.items()}


@dataclass(frozen=True)
class UartInfo(BoardInfo):
    """:class:`~lutzip.board.base.BoardInfo` and what the IDENT frame adds (docs/PROTOCOL.md).

    Attributes
    ----------
    version : int
        Protocol version.
    ring_depth : int
        Command ring entries (32-bit words) on the board.
    max_payload : int
        Longest frame payload the board accepts.
    baud : int
        Line rate of the board's UART (0: a byte-level link, one byte per clock).
    replay_words : int
        Words of the board's replay buffer (0: none; docs/PROTOCOL.md, section 6).
    link_clk_hz : int
        The link's clock when the core runs in a clock domain of its own (0: one domain, ``clk_hz``;
        docs/PROTOCOL.md, section 7).
    lanes : int
        (:class:`BoardInfo`'s) the replay unit's lanes (1, 2, 4, 8; docs/PROTOCOL.md, section 6.1, IDENT FLAGS
        bits 7..6): the replay buffer's layout. The streaming path of a UART board is single-lane.
    """

    version: int = link.PROTOCOL_VERSION
    ring_depth: int = 0
    max_payload: int = 0
    baud: int = 0
    replay_words: int = 0
    link_clk_hz: int = 0

    def link_text(self) -> str:
        line = f"UART {self.baud} baud" if self.baud else "byte-level link"
        if self.link_clk_hz:
            line += f" at {self.link_clk_hz / 1e6:g} MHz, core at {self.clk_hz / 1e6:g} MHz"
        return line + (" (virtual board)" if self.simulated else "")


class UartBoard(BoardBase):
    """A lutzip board behind a serial port (a real UART or the virtual board's pseudo-terminal).

    Parameters
    ----------
    port : str or None
        Anything :func:`serial.serial_for_url` opens (``/dev/ttyUSB0``, ``/dev/pts/5``, ``loop://``); opened
        exclusively where the platform allows, so a second program gets a clear error.
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
    simulated : bool
        The port leads to a simulation (the virtual board): ``kind`` is ``"uart-sim"``.
    """

    kind = "uart"

    def __init__(self, port=None, baud=3_000_000, timeout=5.0, *, serial=None, rto=0.25, window=32,
                 max_retries=8, max_payload=1024, simulated=False):
        super().__init__()
        if serial is None:
            serial = _open_serial(port, baud, timeout)
        self.ser = serial
        self.port = port
        self.baud = baud
        self.kind = "uart-sim" if simulated else "uart"
        self.max_payload = int(max_payload)
        self.session = Session(serial, timeout=timeout, rto=rto, window=window, max_retries=max_retries,
                               error=LinkError)
        self._last_counters = {}
        self._last_result_at = 0.0

    @property
    def timeout(self) -> float:
        return self.session.timeout

    @property
    def ident(self):
        """The last IDENT answer (:class:`UartInfo`), or None (old name of ``info``)."""
        return self.info

    def _close(self):
        try:
            self.ser.close()
        except Exception:
            pass

    # ------------------------------------------------------------------------------------------ commands
    def identify(self) -> UartInfo:
        """Ask the board what it is (protocol version, core parameters L, W, LUT3 depth, STATES, clock, line rate)."""
        # after the first unanswered IDENTIFY, bytes that complete any partial frame the board is parsing
        flush = bytes(link.BOARD_MAX_PAYLOAD + link.OVERHEAD)
        fr = self.session.request(link.encode_frame(link.IDENTIFY), lambda f: f.type == link.IDENT, "IDENT",
                                  flush=flush)
        idn = link.parse_ident(fr)
        if idn.version not in link.PROTOCOL_VERSIONS:
            raise BoardProtocolError(f"board speaks protocol version {idn.version}, "
                                     f"this host {' and '.join(map(str, link.PROTOCOL_VERSIONS))}")
        if idn.W not in (8, 16) or not 1 <= idn.L <= 12 or idn.states not in (1, 2) \
                or (idn.states == 2 and idn.L > 11) or idn.max_n not in (0, *(1 << k for k in range(5, 13))):
            raise BoardProtocolError(f"board reports an impossible core (L={idn.L}, W={idn.W}, STATES={idn.states}, "
                                     f"MAX_N={idn.max_n})")
        self.info = UartInfo(self.kind, idn.L, idn.W, idn.lut3_depth, idn.clk_hz, idn.lanes, idn.states, idn.mirror,
                             idn.max_n,
                             version=idn.version, ring_depth=idn.ring_depth, max_payload=idn.max_payload,
                             baud=idn.baud, replay_words=idn.replay_words, link_clk_hz=idn.link_clk_hz)
        return self.info

    def _info(self) -> UartInfo:
        return self.info or self.identify()

    def reset(self, words: bool = False):
        """Reset the board's ring, core, result path and counters; ``words`` selects words mode."""
        self._info()
        s = self.session
        r = (s.seq + 97) & 0xFF
        req = link.encode_frame(link.RESET, r, link.reset_payload(words))

        def want(f):
            return f.type == link.ACK and f.seq == 0 and link.parse_ack(f)[0] == (r + 1) & 0xFF

        fr = s.request(req, want, "RESET acknowledgement")
        s.restart(r + 1, link.parse_ack(fr)[2])

    def _payload_limit(self):
        # a frame must fit the board's ring (half of it, so two frames can be in flight)
        info = self._info()
        return max(8, min(self.max_payload, info.max_payload, info.ring_depth * 2) // 4 * 4)

    def table_frames(self, tables) -> list:
        """Sequenced frames that load a table set (table-write ops + config ``n_lut3``, and with ``MIRROR=1`` config
        word 1)."""
        info = self._info()
        if len(tables.lut3) > info.lut3_depth:
            raise BoardError(f"table set has {len(tables.lut3)} LUT3 entries, the board holds {info.lut3_depth}")
        if tables.word_bits > info.W:
            raise BoardError(f"{tables.word_bits}-bit tables on a {info.W}-bit core")
        check_states(tables, info)
        from lutzip.hdl.flows.model import table_ops
        # with MIRROR=1 (IDENT FLAGS bit 2) also config word 1, the table set's word width (docs/PROTOCOL.md, 2)
        ops = table_ops(tables, info.L, states=info.states, mirror=info.mirror)
        return [(link.TABLE, p, 0) for p in link.table_payloads(ops, self._payload_limit())]

    def _unexpected(self, fr):
        raise BoardProtocolError(f"unexpected frame type {fr.type:#04x} from the board")

    def load_tables(self, tables):
        """Write a :class:`~lutzip.codec.tables.TableSet` into the decoder (acknowledged frame by frame)."""
        frames = self.table_frames(tables)
        self.session.exchange(frames, self._unexpected)

    def read_counters(self) -> dict:
        """Wait until all earlier work is done, then return the board's counters since its last reset."""
        self._info()
        box = {}

        def on_frame(fr):
            if fr.type != link.COUNTERS:
                self._unexpected(fr)
            box["c"] = host_counters(link.parse_counters(fr))
            return True

        self.session.exchange([(link.BARRIER, b"", 0)], on_frame, lambda: "c" in box,
                              missing=lambda: "COUNTERS (the answer to BARRIER)")
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
            are independent), so the counters are the sums over all attempts. No restart follows a failure
            that comes more than ``timeout`` seconds after the last stripe result (or the start): a board
            that stopped answering fails within about ``2 x timeout``, not ``retries`` times that.

        Returns
        -------
        StreamResult
            One :class:`StripeResult` per stripe, in order, and the board's counters.
        """
        s = self.session
        items = [(name, tables, i, st) for name, tables, stripes in tensors for i, st in enumerate(stripes)]
        retries = s.max_retries if retries is None else retries
        results, counters = [], {}
        w0, r0 = s.wire_bytes, s.retransmissions
        t0 = time.perf_counter()
        self._last_result_at = time.monotonic()
        attempts = fails = 0
        while True:
            attempts += 1
            done_before = len(results)
            try:
                self._stream_once(items[len(results):], words, progress, results)
                break
            except LinkError:
                fails = 0 if len(results) > done_before else fails + 1
                if fails > retries or time.monotonic() - self._last_result_at > s.timeout:
                    raise
                s.drain(min(s.rto, 0.2))
            finally:
                for k, v in self._last_counters.items():
                    counters[k] = counters.get(k, 0) + v
        return StreamResult(results, counters, time.perf_counter() - t0, s.wire_bytes - w0,
                            sum(len(it[3]) * 4 for it in items), s.retransmissions - r0, attempts, stats=s.stats())

    def _stream_once(self, items, words, progress, results):
        """Stream ``items`` after a reset, appending a StripeResult per stripe to ``results``."""
        self._last_counters = {}
        self.reset(words)
        W = self.info.W
        limit = self._payload_limit()
        frames = []
        prev = None
        for name, tables, i, st in items:
            if tables is not prev:
                frames += self.table_frames(tables)
                prev = tables
            frames += [(link.STREAM, p, f) for p, f in link.stripe_payloads(st, limit)]
        frames.append((link.BARRIER, b"", 0))
        k0 = len(results)
        cur = []
        n_cur = [0]
        box = {}
        dt = np.dtype("<u2" if W == 16 else "u1")

        def on_frame(fr):
            if fr.type == link.DATA:
                if not words:
                    raise BoardProtocolError("DATA frame in CRC mode")
                cur.append(np.frombuffer(fr.payload, dt))
                n_cur[0] += len(cur[-1])
                return n_cur[0] <= _MAX_STRIPE_WORDS      # an endless DATA stream is no progress
            if fr.type == link.RESULT:
                sn, n, err, crc = link.parse_result(fr)
                k = len(results) - k0
                if sn != k or k >= len(items):
                    raise LinkError(f"RESULT for stripe {sn}, expected stripe {k}")
                ws = np.concatenate(cur) if cur else np.zeros(0, dt)
                cur.clear()
                n_cur[0] = 0
                if words and err == 0 and len(ws) != n:
                    raise LinkError(f"stripe {k}: {len(ws)} decoded words arrived, the board sent {n}")
                name, _, idx, _ = items[k]
                results.append(StripeResult(name, idx, n, err, crc, ws if words else None))
                self._last_result_at = time.monotonic()
                if progress:
                    progress(1)
                return True
            if fr.type == link.COUNTERS:
                box["c"] = self._last_counters = host_counters(link.parse_counters(fr))
                return True
            self._unexpected(fr)

        def missing():
            got = len(results)
            if got < k0 + len(items):
                return f"RESULT of stripe {got} ({got} of {k0 + len(items)} stripe results came; no COUNTERS either)"
            return "COUNTERS (the answer to the closing BARRIER; every stripe result came)"

        self.session.exchange(frames, on_frame, lambda: "c" in box, missing=missing)
        if len(results) - k0 != len(items):
            raise LinkError(f"{len(results) - k0} stripe results for {len(items)} stripes")
        return box["c"]

    # ------------------------------------------------------------------------------------------ replay
    def replay_piece(self, tables, stripes, passes: int, weights: int = 0, retries: int = 1) -> dict:
        """Decode ``stripes`` ``passes`` times back to back from the board's replay buffer (docs/PROTOCOL.md, 6).

        The board is reset, the tables and the stripes are loaded (the stripes into the buffer from word 0),
        then one REPLAY_RUN frame decodes them at the core clock with the output going to a CRC32 on the chip.

        Parameters
        ----------
        tables : TableSet
            The stripes' table set.
        stripes : list of numpy.ndarray
            uint32 words per stripe (header first), at most ``replay_words`` in all. On a board whose replay
            unit has ``lanes`` > 1 (docs/PROTOCOL.md, section 6.1) their number must be a multiple of ``lanes``:
            stripe ``i`` goes to lane ``i mod lanes``, whose region (``replay_words / lanes`` words from
            ``j * replay_words / lanes``) must hold that lane's stripes.
        passes : int
            Passes (>= 1).
        weights : int
            Decoded words per pass, if known: bounds the wait for the run (at least the link timeout).
        retries : int
            Whole attempts (reset, load, run) repeated after a :class:`LinkError`.

        Returns
        -------
        dict
            The REPLAY_DONE values (:data:`lutzip.link.protocol.REPLAY_NAMES`).

        Raises
        ------
        BoardError
            The board has no replay buffer, or the stripes do not fit it.
        """
        info = self._info()
        cap = getattr(info, "replay_words", 0)
        if not cap:
            raise BoardError("this board has no replay buffer (IDENT replay 0): build it with REPLAY_WORDS > 0 "
                             "(docs/PROTOCOL.md, section 6)")
        n = int(sum(len(st) for st in stripes))
        if not 1 <= n <= cap:
            raise BoardError(f"{n} stripe words do not fit the board's {cap}-word replay buffer")
        limit = self._payload_limit()
        frames = self.table_frames(tables)
        lanes = int(getattr(info, "lanes", 1) or 1)
        if lanes == 1:
            frames += [(link.REPLAY_LOAD, p, f) for p, f in link.replay_load_payloads(stripes, 0, limit)]
        else:
            if len(stripes) % lanes:
                raise BoardError(f"{len(stripes)} stripes: a replay on {lanes} lanes needs a multiple of {lanes}")
            region = cap // lanes
            for j in range(lanes):
                mine = stripes[j::lanes]
                m = int(sum(len(st) for st in mine))
                if m > region:
                    raise BoardError(f"lane {j}'s {m} stripe words do not fit its {region}-word region")
                frames += [(link.REPLAY_LOAD, p, f) for p, f in link.replay_load_payloads(mine, j * region, limit)]
        frames.append((link.REPLAY_RUN, link.run_payload(n, int(passes)), 0))
        # the run takes about passes * weights cycles (a simulation: count 10**6 cycles per second)
        rate = 1e6 if info.simulated else max(info.clk_hz, 1)
        run_s = 2.0 * int(passes) * max(int(weights), 32 * n) / rate
        s = self.session
        for attempt in range(int(retries) + 1):
            box = {}

            def on_frame(fr):
                if fr.type != link.REPLAY_DONE:
                    self._unexpected(fr)
                box["r"] = link.parse_replay(fr)
                return True

            self.reset(False)
            t_old = s.timeout
            s.timeout = t_old + run_s
            try:
                s.exchange(frames, on_frame, lambda: "r" in box,
                           missing=lambda: f"REPLAY_DONE (a run of {n} words x {passes} passes)")
                return box["r"]
            except LinkError:
                if attempt >= retries:
                    raise
                s.drain(min(s.rto, 0.2))
            finally:
                s.timeout = t_old

    # ------------------------------------------------------------------------------------------ report
    def link_report(self, result: StreamResult) -> dict:
        """How busy the board's receive line was (from its counters; on a real UART also by the wall clock)."""
        info, cn = self._info(), result.counters
        cyc_per_byte = 10.0 * info.clk_hz / info.baud if info.baud else 1.0
        out = {"link_utilisation_board": min(1.0, cn.get("rx_bytes", 0) * cyc_per_byte / max(cn["cycles"], 1))}
        if self.baud and not info.simulated and not _is_pty(self.port) and result.elapsed:
            out["link_utilisation_wall"] = result.wire_bytes * 10.0 / (result.elapsed * self.baud)
        return out


def _is_pty(port) -> bool:
    return bool(port) and str(port).startswith("/dev/pts/")


def _open_serial(port, baud, timeout):
    """Open ``port`` with pyserial (exclusively where supported); a clear error if that fails."""
    if port is None:
        raise BoardError("no port given")
    import serial as pyserial
    kw = dict(baudrate=baud, timeout=0.002, write_timeout=timeout)
    try:
        try:
            ser = pyserial.serial_for_url(port, exclusive=True, **kw)
        except ValueError as e:       # a back end without exclusive access
            if "exclusive" not in str(e):
                raise
            ser = pyserial.serial_for_url(port, **kw)
    except (pyserial.SerialException, ValueError) as e:
        if "lock" in str(e).lower() or "resource temporarily unavailable" in str(e).lower():
            raise LinkError(f"{port} is in use by another program (it is opened exclusively): {e}") from e
        raise LinkError(f"cannot open {port}: {e}") from e
    try:   # USB-UARTs (FTDI) batch their input for up to 16 ms by default: ACKs would come late
        ser.set_low_latency_mode(True)
    except (AttributeError, NotImplementedError, ValueError, OSError):
        pass
    return ser
