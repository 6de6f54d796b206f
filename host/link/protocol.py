"""Framing of the board link (docs/PROTOCOL.md): pure functions and a resynchronising stream parser.

Nothing here touches a serial port: :mod:`lutzip.link.session` does the I/O and :mod:`lutzip.board.uart` the
commands.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

from lutzip.errors import LutzError

SYNC = 0xA5
HEADER_LEN = 7
CRC_LEN = 4
OVERHEAD = HEADER_LEN + CRC_LEN
MAX_FRAME_PAYLOAD = 4096  # hard limit of the format (the board advertises its own MAX_PAYLOAD)
BOARD_MAX_PAYLOAD = 1024  # longest frame a board sends

# host -> board
IDENTIFY, RESET, PING, TABLE, STREAM, BARRIER = 0x01, 0x02, 0x03, 0x10, 0x11, 0x12
REPLAY_LOAD, REPLAY_RUN = 0x13, 0x14          # protocol version 2: boards with a replay buffer
SEQUENCED = (TABLE, STREAM, BARRIER, REPLAY_LOAD, REPLAY_RUN)
# board -> host
ACK, NACK, IDENT, RESULT, DATA, COUNTERS = 0x80, 0x81, 0x82, 0x83, 0x84, 0x85
REPLAY_DONE = 0x86

FLAG_TLAST = 0x01
MODE_WORDS = 0x01

NACK_CRC, NACK_SEQUENCE, NACK_NO_ROOM, NACK_MALFORMED = 1, 2, 3, 4
NACK_REASONS = {NACK_CRC: "CRC error", NACK_SEQUENCE: "sequence error", NACK_NO_ROOM: "no room in the ring",
                NACK_MALFORMED: "malformed frame"}
TYPE_NAMES = {IDENTIFY: "IDENTIFY", RESET: "RESET", PING: "PING", TABLE: "TABLE", STREAM: "STREAM",
              BARRIER: "BARRIER", ACK: "ACK", NACK: "NACK", IDENT: "IDENT", RESULT: "RESULT", DATA: "DATA",
              COUNTERS: "COUNTERS", REPLAY_LOAD: "REPLAY_LOAD", REPLAY_RUN: "REPLAY_RUN",
              REPLAY_DONE: "REPLAY_DONE"}
COUNTER_NAMES = ("cycles", "busy", "stall_in", "stall_out", "words", "stripes", "link_errors", "decode_errors",
                 "rx_bytes", "tx_bytes")

PROTOCOL_VERSION = 1
#: The version a board with a replay buffer reports (version 1 plus REPLAY_LOAD / REPLAY_RUN / REPLAY_DONE).
REPLAY_PROTOCOL_VERSION = 2
#: Versions this host speaks.
PROTOCOL_VERSIONS = (PROTOCOL_VERSION, REPLAY_PROTOCOL_VERSION)

#: The values of a REPLAY_DONE frame (u64 each, in this order; docs/PROTOCOL.md section 6).
REPLAY_NAMES = ("cycles", "busy", "stall_in", "words", "stripes", "decode_errors", "passes", "bad_passes",
                "crc_first", "crc_last", "first_error")
#: IDENT frames: the header's FLAGS bits that carry the core's ``STATES - 1`` (docs/PROTOCOL.md, section 3).
IDENT_STATES_MASK = 0x03
#: IDENT frames: the FLAGS bit of a core that decodes row streams (``MIRROR=1``) and the bits of its
#: ``log2(MAX_N) - IDENT_MAX_N_BASE`` (docs/PROTOCOL.md, section 3): a board's MAX_N is 32 .. 4096.
IDENT_MIRROR_BIT = 0x04
IDENT_MAX_N_SHIFT, IDENT_MAX_N_MASK, IDENT_MAX_N_BASE = 3, 0x07, 5
#: IDENT header FLAGS bits 7..6: log2 of the replay unit's lanes (docs/PROTOCOL.md, section 6.1; 0 on every board
#: before the field: one lane).
IDENT_LANES_SHIFT = 6

#: The IDENT field ``replay`` counts the buffer in units of this many 32-bit words.
REPLAY_UNIT = 256


class ProtocolError(LutzError):
    """A frame breaks docs/PROTOCOL.md (wrong length or content for its type)."""


def crc8_table() -> bytes:
    """The 256-entry CRC-8 table (poly 0x07, not reflected); the firmware's table ROM uses it too."""
    table = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        table.append(c)
    return bytes(table)


_CRC8 = crc8_table()


def crc8(data: bytes, crc: int = 0) -> int:
    """CRC-8 (poly 0x07, init 0, not reflected) of ``data``."""
    for b in data:
        crc = _CRC8[crc ^ b]
    return crc


@dataclass(frozen=True)
class Frame:
    """One decoded frame."""

    type: int
    seq: int
    flags: int
    payload: bytes


def encode_frame(ftype: int, seq: int = 0, payload: bytes = b"", flags: int = 0) -> bytes:
    """The bytes of one frame (header, payload, CRC32)."""
    n = len(payload)
    if n > MAX_FRAME_PAYLOAD:
        raise ProtocolError(f"frame payload of {n} bytes exceeds {MAX_FRAME_PAYLOAD}")
    hdr = bytes((ftype & 0xFF, seq & 0xFF, flags & 0xFF, n & 0xFF, n >> 8))
    body = hdr + bytes((_crc8_fast(hdr),)) + bytes(payload)
    return bytes((SYNC,)) + body + struct.pack("<I", zlib.crc32(body))


def _crc8_fast(hdr: bytes) -> int:
    c = 0
    t = _CRC8
    for b in hdr:
        c = t[c ^ b]
    return c


def decode_frame(data: bytes, max_payload: int = MAX_FRAME_PAYLOAD) -> Frame:
    """Decode exactly one frame; raise :class:`ProtocolError` saying what is wrong."""
    data = bytes(data)
    if len(data) < OVERHEAD:
        raise ProtocolError(f"{len(data)} bytes are too short for a frame ({OVERHEAD} at least)")
    if data[0] != SYNC:
        raise ProtocolError(f"first byte {data[0]:#04x} is not the sync byte {SYNC:#04x}")
    if crc8(data[1:6]) != data[6]:
        raise ProtocolError("header CRC-8 mismatch")
    n = data[4] | data[5] << 8
    if n > max_payload:
        raise ProtocolError(f"payload length {n} exceeds {max_payload}")
    if len(data) != OVERHEAD + n:
        raise ProtocolError(f"frame of {len(data)} bytes, header says {OVERHEAD + n}")
    if zlib.crc32(data[1:HEADER_LEN + n]) != struct.unpack_from("<I", data, HEADER_LEN + n)[0]:
        raise ProtocolError("frame CRC32 mismatch")
    return Frame(data[1], data[2], data[3], data[HEADER_LEN:HEADER_LEN + n])


class FrameParser:
    """Incremental parser: feed it bytes as they arrive, get whole frames back.

    Garbage, corrupted headers and frames with a bad CRC are skipped; the hunt for the next SYNC restarts one
    byte after the rejected SYNC, so no good frame is lost behind a bad one.

    Attributes
    ----------
    bad_header, bad_crc, skipped : int
        Headers rejected, frames rejected by their CRC32, bytes discarded while hunting.
    """

    def __init__(self, max_payload: int = MAX_FRAME_PAYLOAD):
        self.max_payload = max_payload
        self.buf = bytearray()
        self.bad_header = 0
        self.bad_crc = 0
        self.skipped = 0

    @property
    def errors(self) -> int:
        return self.bad_header + self.bad_crc

    def pending(self) -> int:
        """Bytes held back waiting for the rest of a frame."""
        return len(self.buf)

    def feed(self, data: bytes) -> list:
        """Add bytes; return the complete, valid frames they finish (in order)."""
        buf = self.buf
        buf += data
        out = []
        pos = 0
        n_buf = len(buf)
        while True:
            i = buf.find(SYNC, pos)
            if i < 0:
                self.skipped += n_buf - pos
                pos = n_buf
                break
            self.skipped += i - pos
            pos = i
            if n_buf - pos < HEADER_LEN:
                break
            n = buf[pos + 4] | buf[pos + 5] << 8
            if n > self.max_payload or _crc8_fast(buf[pos + 1:pos + 6]) != buf[pos + 6]:
                self.bad_header += 1
                self.skipped += 1
                pos += 1
                continue
            end = pos + OVERHEAD + n
            if n_buf < end:
                break
            body = buf[pos + 1:pos + HEADER_LEN + n]
            crc = buf[end - 4] | buf[end - 3] << 8 | buf[end - 2] << 16 | buf[end - 1] << 24
            if zlib.crc32(body) != crc:
                self.bad_crc += 1
                self.skipped += 1
                pos += 1
                continue
            out.append(Frame(buf[pos + 1], buf[pos + 2], buf[pos + 3], bytes(body[HEADER_LEN - 1:])))
            pos = end
        del buf[:pos]
        return out


# ------------------------------------------------------------------------------------------ payloads
@dataclass(frozen=True)
class Ident:
    """What a board says about itself (IDENT frame)."""

    version: int
    L: int
    W: int
    lut3_depth: int
    ring_depth: int
    max_payload: int
    clk_hz: int
    baud: int
    replay_words: int = 0   # replay buffer (32-bit words; 0: none), protocol version 2
    link_clk_hz: int = 0    # the byte link's clock when the core has its own (24-byte IDENT); 0: clk_hz
    states: int = 1         # the core's code tables (STATES, 1 or 2): the IDENT header's FLAGS bits 1..0, plus 1
    max_n: int = 0          # MIRROR=1: the core's row buffer MAX_N (rows of <= MAX_N + 1 words), FLAGS bit 2 and
    #                         2 ** (5 + bits 5..3); 0: no row stripes (MIRROR=0, or a board before the field)
    lanes: int = 1          # the replay unit's lanes (1, 2, 4, 8): 2 ** the IDENT header's FLAGS bits 7..6

    @property
    def mirror(self) -> int:
        """1 when the core decodes row streams (format version 6; ``MIRROR=1``), else 0."""
        return int(self.max_n > 0)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


IDENT_STRUCT = struct.Struct("<HBBHHHHII")
ACK_STRUCT = struct.Struct("<BBH")
RESULT_STRUCT = struct.Struct("<IIB3xI")
COUNTERS_STRUCT = struct.Struct(f"<{len(COUNTER_NAMES)}Q")
REPLAY_STRUCT = struct.Struct(f"<{len(REPLAY_NAMES)}Q")
RUN_STRUCT = struct.Struct("<II")


def _need(frame: Frame, size: int, what: str):
    if len(frame.payload) != size:
        raise ProtocolError(f"{what} frame with {len(frame.payload)} payload bytes, expected {size}")


def encode_ident(ident: Ident) -> bytes:
    p = IDENT_STRUCT.pack(ident.version, ident.L, ident.W, ident.lut3_depth, ident.ring_depth,
                          ident.max_payload, ident.replay_words // REPLAY_UNIT, ident.clk_hz, ident.baud)
    return p + struct.pack("<I", ident.link_clk_hz) if ident.link_clk_hz else p


def ident_flags(ident: Ident) -> int:
    """The FLAGS byte of an IDENT frame's header: the core's ``STATES - 1`` in bits 1..0; with ``MIRROR=1``
    (``max_n`` > 0) bit 2 and ``log2(MAX_N) - 5`` in bits 5..3; ``log2(lanes)`` of the replay unit in bits 7..6
    (docs/PROTOCOL.md, sections 3 and 6.1)."""
    f = (int(ident.states) - 1) & IDENT_STATES_MASK
    if ident.max_n:
        k = int(ident.max_n).bit_length() - 1 - IDENT_MAX_N_BASE
        f |= IDENT_MIRROR_BIT | (k & IDENT_MAX_N_MASK) << IDENT_MAX_N_SHIFT
    return f | ((int(ident.lanes).bit_length() - 1) & 0x3) << IDENT_LANES_SHIFT


def ident_max_n(flags: int) -> int:
    """The row buffer ``MAX_N`` from an IDENT header's FLAGS (0: bit 2 clear, a core without row stripes)."""
    if not flags & IDENT_MIRROR_BIT:
        return 0
    return 1 << (((flags >> IDENT_MAX_N_SHIFT) & IDENT_MAX_N_MASK) + IDENT_MAX_N_BASE)


def parse_ident(frame: Frame) -> Ident:
    """An IDENT frame: its payload of 20 bytes, or 24 with the link clock of a two-domain board, and the core's
    ``STATES`` from its header's FLAGS bits 1..0 (0 from every board before that field: one code table) and its row
    buffer ``MAX_N`` from bits 6..2 (:func:`ident_max_n`; 0 from a board without row stripes; docs/PROTOCOL.md,
    sections 3 and 7)."""
    if len(frame.payload) != IDENT_STRUCT.size + 4:
        _need(frame, IDENT_STRUCT.size, "IDENT")
    v, L, W, d3, rd, mp, rp, clk, baud = IDENT_STRUCT.unpack(frame.payload[:IDENT_STRUCT.size])
    link_hz = struct.unpack("<I", frame.payload[IDENT_STRUCT.size:])[0] if len(frame.payload) > 20 else 0
    return Ident(v, L, W, d3, rd, mp, clk, baud, rp * REPLAY_UNIT if v >= REPLAY_PROTOCOL_VERSION else 0,
                 link_hz, (frame.flags & IDENT_STATES_MASK) + 1, ident_max_n(frame.flags),
                 1 << (frame.flags >> IDENT_LANES_SHIFT & 3))


def parse_ack(frame: Frame):
    """``(next_seq, reason, credit)`` of an ACK or NACK frame."""
    _need(frame, ACK_STRUCT.size, "ACK/NACK")
    return ACK_STRUCT.unpack(frame.payload)


def encode_ack(next_seq: int, reason: int, credit: int) -> bytes:
    return ACK_STRUCT.pack(next_seq & 0xFF, reason, credit)


def parse_result(frame: Frame):
    """``(stripe, n_words, err, crc32)`` of a RESULT frame."""
    _need(frame, RESULT_STRUCT.size, "RESULT")
    return RESULT_STRUCT.unpack(frame.payload)


def encode_result(stripe: int, n_words: int, err: int, crc: int) -> bytes:
    return RESULT_STRUCT.pack(stripe, n_words, err, crc)


def parse_counters(frame: Frame) -> dict:
    _need(frame, COUNTERS_STRUCT.size, "COUNTERS")
    return dict(zip(COUNTER_NAMES, COUNTERS_STRUCT.unpack(frame.payload)))


def encode_counters(values: dict) -> bytes:
    return COUNTERS_STRUCT.pack(*(int(values.get(k, 0)) for k in COUNTER_NAMES))


def parse_replay(frame: Frame) -> dict:
    """The values of a REPLAY_DONE frame by :data:`REPLAY_NAMES`."""
    _need(frame, REPLAY_STRUCT.size, "REPLAY_DONE")
    return dict(zip(REPLAY_NAMES, REPLAY_STRUCT.unpack(frame.payload)))


def encode_replay(values: dict) -> bytes:
    return REPLAY_STRUCT.pack(*(int(values.get(k, 0)) for k in REPLAY_NAMES))


def replay_load_payloads(stripes, offset: int, max_payload: int):
    """REPLAY_LOAD ``(payload, flags)`` pieces that write ``stripes`` (uint32 arrays) into the replay buffer
    from word ``offset`` on, back to back: each payload is ``u32 offset`` and the words; a piece never holds
    words of two stripes, and the piece with a stripe's last word has FLAGS bit 0 (tlast)."""
    step = max(4, (max_payload - 4) // 4 * 4)
    out = []
    pos = int(offset)
    for st in stripes:
        raw = np.asarray(st, "<u4").tobytes()
        if not raw:
            raise ProtocolError("empty stripe")
        for i in range(0, len(raw), step):
            piece = raw[i:i + step]
            out.append((struct.pack("<I", pos) + piece, FLAG_TLAST if i + step >= len(raw) else 0))
            pos += len(piece) // 4
    return out


def run_payload(n_words: int, passes: int) -> bytes:
    """REPLAY_RUN payload: decode buffer words ``0 .. n_words - 1``, ``passes`` times."""
    if not (n_words >= 1 and 1 <= passes < (1 << 32)):
        raise ProtocolError(f"replay run of {n_words} words x {passes} passes")
    return RUN_STRUCT.pack(n_words, passes)


def reset_payload(words: bool) -> bytes:
    return bytes((MODE_WORDS if words else 0, 0, 0, 0))


def ring_entries(ftype: int, payload_len: int) -> int:
    """Ring entries a sequenced frame takes on the board."""
    return max(1, payload_len // 4) if ftype in SEQUENCED else 0


def table_payloads(ops, max_payload: int):
    """Group ``(sel, addr, data)`` table-write operations into TABLE payloads of consecutive addresses."""
    per = max(1, (max_payload - 4) // 4)
    out = []
    run_sel = run_addr = None
    run = []

    def flush():
        if run:
            out.append(struct.pack("<BxH", run_sel, run_addr) + np.asarray(run, "<u4").tobytes())

    for sel, addr, data in ops:
        if not (0 <= sel <= 3 and 0 <= addr < 4096 and 0 <= data < (1 << 32)):
            raise ProtocolError(f"table op (sel {sel}, addr {addr}, data {data}) out of range")
        if run and sel == run_sel and addr == run_addr + len(run) and len(run) < per:
            run.append(data)
            continue
        flush()
        run_sel, run_addr, run = sel, addr, [data]
    flush()
    return out


def parse_table_payload(payload: bytes):
    """Inverse of :func:`table_payloads` for one payload: the ``(sel, addr, data)`` operations."""
    if len(payload) < 8 or len(payload) % 4:
        raise ProtocolError(f"TABLE payload of {len(payload)} bytes (needs 4 + 4n, n >= 1)")
    sel, addr = struct.unpack_from("<BxH", payload)
    data = np.frombuffer(payload, "<u4", offset=4)
    return [(sel, addr + i, int(d)) for i, d in enumerate(data)]


def stripe_payloads(words: np.ndarray, max_payload: int):
    """Cut one stripe (uint32 words) into STREAM ``(payload, flags)`` pieces; tlast on the last one."""
    raw = np.asarray(words, "<u4").tobytes()
    if not raw:
        raise ProtocolError("empty stripe")
    step = max(4, max_payload // 4 * 4)
    out = [(raw[i:i + step], 0) for i in range(0, len(raw), step)]
    out[-1] = (out[-1][0], FLAG_TLAST)
    return out


def words_crc(words: np.ndarray, W: int) -> int:
    """CRC32 the board computes over a stripe's decoded words (``W/8`` little-endian bytes each)."""
    return zlib.crc32(np.asarray(words).astype("<u2" if W == 16 else "u1").tobytes())


def seq_diff(a: int, b: int) -> int:
    """``(a - b) mod 256`` as a signed number in -128..127."""
    d = (a - b) & 0xFF
    return d - 256 if d >= 128 else d
