"""The host end of the framed board link (docs/PROTOCOL.md): a byte stream, its frame parser, go-back-N.

:class:`Session` owns every piece of link state -- the next sequence number, the board's credit, the window,
the adaptive retransmission timeout, the receive-side sequence check and the statistics. It knows frames,
not boards: :mod:`lutzip.board.uart` builds the frames of each command and interprets the answers.

Every wait is bounded: a request is sent at most ``max_retries + 1`` times within ``timeout``; an exchange fails after
``timeout`` seconds without *progress* (a frame of the work acknowledged for the first time, or an answer
the caller accepts), and after ``max_retries`` retransmission rounds without progress (a NACK that
acknowledges nothing new is such a round). Acknowledgements of repeated BARRIERs are not progress, so a board
that acknowledges but never answers cannot keep the host waiting, and the progress clock is checked however
many frames arrive, so neither can a board that floods the host with NACKs or repeated ACKs. The work bounds
the number of progress events (each frame acknowledged once, each expected answer once), so an exchange ends
within ``(frames + answers + 1) x timeout`` at the very worst, in a LinkError that says what never came.
"""
from __future__ import annotations

import time

from lutzip.link import protocol as link


class Session:
    """Sequenced frame exchange with one board over a serial-like object.

    Parameters
    ----------
    ser : object
        ``read(n)``, ``write(data)``, ``in_waiting`` (a pyserial port or a stand-in).
    timeout : float
        Seconds without progress after which a wait fails.
    rto : float
        Initial (and smallest) retransmission timeout in seconds; adapted to the measured round trip.
    window : int
        Most sequenced frames in flight (1..64).
    max_retries : int
        Requests or retransmission rounds without progress before giving up.
    error : type
        Exception raised when the link fails (the board layer's ``LinkError``).

    Attributes
    ----------
    seq : int
        Sequence number of the next sequenced frame.
    credit : int
        Ring entries the board last said it had free.
    wire_bytes, retransmissions, nacks : int
        Bytes written, frames sent again, NACKs received (since the session began).
    """

    def __init__(self, ser, *, timeout=5.0, rto=0.25, window=32, max_retries=8, error=RuntimeError):
        self.ser = ser
        self.timeout = float(timeout)
        self.rto = float(rto)
        self.rto_eff = self.rto
        self.srtt = None
        self.window = max(1, min(64, int(window)))
        self.max_retries = int(max_retries)
        self.error = error
        self.parser = link.FrameParser(link.BOARD_MAX_PAYLOAD)
        self.seq = 0
        self.credit = 0
        self.rx_seq = None            # the board's next frame number (None: not known yet)
        self.rx_gap = False
        self.wire_bytes = 0
        self.retransmissions = 0
        self.nacks = 0
        self._ping = link.encode_frame(link.PING)

    # ------------------------------------------------------------------------------------------ bytes
    def write(self, data: bytes):
        """Write to the port; a write that times out is left to the retransmission logic."""
        self.wire_bytes += len(data)
        try:
            self.ser.write(data)
        except Exception as e:        # serial.SerialTimeoutException (pyserial) and alike
            if type(e).__name__ != "SerialTimeoutException":
                raise

    def read_frames(self, strict: bool = False) -> list:
        """The whole frames that arrived; ``strict``: a gap in the board's numbering is a link error."""
        n = self.ser.in_waiting
        data = self.ser.read(n if n else 1)
        if not data:
            return []
        out = []
        for fr in self.parser.feed(data):
            if self.rx_seq is not None and fr.seq != self.rx_seq:
                self.rx_gap = True
                if strict:
                    raise self.error(f"board frames were lost on the way to the host (frame {fr.seq}, "
                                     f"expected {self.rx_seq})")
            self.rx_seq = (fr.seq + 1) & 0xFF
            out.append(fr)
        return out

    def drain(self, seconds: float):
        """Start the parser afresh and read (and drop) what arrives for ``seconds``."""
        self.parser = link.FrameParser(link.BOARD_MAX_PAYLOAD)
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end:
            self.read_frames()

    def stats(self) -> dict:
        """NACKs received and board frames the parser rejected."""
        return {"nacks": self.nacks, "rx_bad_header": self.parser.bad_header, "rx_bad_crc": self.parser.bad_crc}

    def _rtt_sample(self, rtt):
        self.srtt = rtt if self.srtt is None else 0.875 * self.srtt + 0.125 * rtt
        self.rto_eff = min(max(self.rto, 3 * self.srtt), self._rto_cap())

    def _rto_cap(self):
        return max(self.rto, self.timeout / 2)

    def _backoff(self):
        """A retransmission timeout expired: wait twice as long next time (a slow board is not flooded)."""
        self.rto_eff = min(2 * self.rto_eff, self._rto_cap())

    # ------------------------------------------------------------------------------------------ requests
    def request(self, frames, want, what: str, attempts: int | None = None, flush: bytes = b""):
        """Send ``frames`` (bytes) until a received frame satisfies ``want``; return that frame.

        The request is sent at most ``attempts + 1`` times (default ``max_retries``), spread over ``timeout``
        seconds (at least one retransmission timeout apart), so a slow board gets the whole timeout and a
        dead one costs exactly that. ``flush`` is written once, before the second request: bytes that
        complete a partial frame the board may be stuck in.
        """
        attempts = self.max_retries if attempts is None else attempts
        t0 = time.monotonic()
        deadline = t0 + self.timeout
        step = max(self.rto_eff, 0.05, self.timeout / (attempts + 1))
        sent = 0
        while sent <= attempts:
            self.write((flush if sent == 1 else b"") + frames)
            sent += 1
            t_end = min(deadline, time.monotonic() + step)
            while time.monotonic() < t_end:
                for fr in self.read_frames():
                    if want(fr):
                        return fr
            if time.monotonic() >= deadline:
                break
        raise self.error(f"no {what} from the board: {sent} request(s) in {time.monotonic() - t0:.1f} s "
                         f"(timeout {self.timeout:g} s)")

    def restart(self, seq: int, credit: int):
        """After the board acknowledged a RESET: its next expected SEQ, its credit, its frame numbering."""
        self.seq = seq & 0xFF
        self.credit = credit
        self.rx_seq = 1
        self.rx_gap = False

    # ------------------------------------------------------------------------------------------ go-back-N
    def exchange(self, frames, on_frame, done=lambda: True, missing=None):
        """Send sequenced ``frames`` [(type, payload, flags)] reliably and hand every other frame to ``on_frame``.

        Returns when every frame is acknowledged and ``done()`` is true. ``on_frame(frame)`` returns True
        when the frame was progress (an answer the caller expected); it may raise. If the last frame is a
        BARRIER and the answer ``done`` waits for does not come, the BARRIER is sent again (``2 x rto``
        apart, at most ``max_retries`` times). ``missing()``, if given, says in the error what never came
        once every frame is acknowledged (e.g. ``"COUNTERS (3 of 5 stripe results came)"``).
        """
        frames = list(frames)
        n_work = n = len(frames)
        entries = [link.ring_entries(t, len(p)) for t, p, _ in frames]
        seq0 = self.seq
        base = nxt = inflight = 0        # oldest unacknowledged frame, next frame to (re)send, ring entries out
        enc, sent_at = {}, {}            # cached encodings; first-transmission times (RTT samples, Karn's rule)
        credit = self.credit
        retries = self.max_retries
        barrier_again = bool(frames) and frames[-1][0] == link.BARRIER
        last_progress = last_send = last_barrier = time.monotonic()
        last_ping = 0.0
        idle_frames = 0                  # frames received since the last progress (none of them progress)
        last_nack = None                 # reason of the last NACK since the last progress
        while base < n or not done():
            now = time.monotonic()
            if base >= n and barrier_again and now - max(last_progress, last_barrier) > 2 * self.rto_eff:
                # everything acknowledged but the answer is missing (lost?): ask again
                retries -= 1
                if retries < 0:
                    raise self.error(f"no answer to BARRIER from the board after {self.max_retries} repetitions "
                                     f"(every frame acknowledged)" + (f": no {missing()}" if missing else ""))
                frames.append((link.BARRIER, b"", 0))
                entries.append(1)
                n += 1
                last_barrier = now
            out = []
            while nxt < n and nxt - base < self.window and inflight + entries[nxt] <= credit:
                fb = enc.get(nxt)
                if fb is None:
                    t, p, f = frames[nxt]
                    fb = enc[nxt] = link.encode_frame(t, (seq0 + nxt) & 0xFF, p, f)
                out.append(fb)
                inflight += entries[nxt]
                sent_at[nxt] = None if nxt in sent_at else now
                nxt += 1
            if out:
                self.write(b"".join(out))
                last_send = now
            elif nxt < n and nxt == base and now - last_ping > self.rto_eff / 4:
                self.write(self._ping)     # nothing in flight and no credit: ask for the current credit
                last_ping = now
            got = self.read_frames(strict=True)
            for fr in got:
                idle_frames += 1
                if fr.type in (link.ACK, link.NACK):
                    nseq, reason, c = link.parse_ack(fr)
                    k = link.seq_diff(nseq, (seq0 + base) & 0xFF)
                    if k < 0 or base + k > nxt:
                        continue          # stale answer from before a rewind, or a duplicate
                    if k > 0:
                        for i in range(base, base + k):
                            enc.pop(i, None)
                            t_sent = sent_at.pop(i, None)
                            if t_sent is not None:
                                self._rtt_sample(now - t_sent)
                        if base < n_work:     # acknowledgements of repeated BARRIERs are not progress
                            last_progress = now
                            retries = self.max_retries
                            idle_frames, last_nack = 0, None
                        base += k
                    credit = c
                    inflight = sum(entries[base:nxt])
                    if fr.type == link.NACK:
                        self.nacks += 1
                        if reason == link.NACK_MALFORMED and base < n:
                            # a frame with good CRCs the board will not execute: sending it again cannot help
                            t = frames[base][0]
                            raise self.error(f"the board refused frame {(seq0 + base) & 0xFF} "
                                             f"({link.TYPE_NAMES.get(t, hex(t))}, {len(frames[base][1])}-byte "
                                             f"payload) as malformed (NACK 4): docs/PROTOCOL.md, malformed frames")
                        if k == 0:            # refused without accepting anything: a round without progress
                            last_nack = reason
                            retries -= 1
                            if retries < 0:
                                raise self.error(
                                    f"the board answered frame {(seq0 + base) & 0xFF} with NACK {reason} "
                                    f"({link.NACK_REASONS.get(reason, 'unknown reason')}) {self.max_retries + 1} "
                                    f"times without accepting it")
                        if nxt > base:
                            self.retransmissions += nxt - base
                            nxt = base
                            inflight = 0
                elif on_frame(fr):
                    last_progress = now
                    idle_frames, last_nack = 0, None
            now = time.monotonic()
            if now - last_progress > self.timeout:      # checked however many frames arrive
                what = (f"acknowledgement of frame {(seq0 + base) & 0xFF} "
                        f"({link.TYPE_NAMES.get(frames[base][0], hex(frames[base][0]))})" if base < n
                        else missing() if missing else "results")
                raise self.error(self._no_progress(what, idle_frames, last_nack))
            if got:
                continue
            if nxt > base and now - last_send > self.rto_eff:
                retries -= 1          # no answer: go back and resend everything outstanding
                if retries < 0:
                    raise self.error(f"no acknowledgement for frame {(seq0 + base) & 0xFF} after "
                                     f"{self.max_retries} retransmissions")
                self.retransmissions += nxt - base
                nxt = base
                inflight = 0
                last_send = now
                self._backoff()
        self.seq = (seq0 + n) & 0xFF
        self.credit = credit

    def _no_progress(self, what: str, frames: int, nack) -> str:
        """The message of an exchange that made no progress for ``timeout`` seconds: ``what`` it waited for and
        what came instead (nothing, ``frames`` frames that were no progress, the last NACK's reason)."""
        if frames <= 0:
            return f"board silent for {self.timeout:.1f} s while waiting for {what}"
        why = f"; last NACK reason {nack}: {link.NACK_REASONS.get(nack, 'unknown')}" if nack is not None else ""
        return (f"no progress for {self.timeout:.1f} s while waiting for {what}: the board sent {frames} frame(s), "
                f"none of them new acknowledgements or expected answers{why}")
