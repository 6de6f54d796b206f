"""Framing of the board link: encode/decode, resynchronisation, payload helpers."""
import random
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lutzip.link import protocol as link
from lutzip.link.protocol import FrameParser, ProtocolError, decode_frame, encode_frame


def test_crc8_check_value():
    # CRC-8/SMBUS check value (poly 0x07, init 0)
    assert link.crc8(b"123456789") == 0xF4


def test_frame_layout():
    f = encode_frame(link.STREAM, 7, b"\x01\x02\x03\x04", link.FLAG_TLAST)
    assert f[0] == link.SYNC and f[1] == link.STREAM and f[2] == 7 and f[3] == 1
    assert struct.unpack_from("<H", f, 4)[0] == 4
    assert f[6] == link.crc8(f[1:6])
    assert struct.unpack_from("<I", f, 11)[0] == zlib.crc32(f[1:11])
    assert len(f) == 4 + link.OVERHEAD


@given(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255), st.binary(max_size=600))
@settings(max_examples=200, deadline=None)
def test_roundtrip(t, seq, flags, payload):
    fr = decode_frame(encode_frame(t, seq, payload, flags))
    assert (fr.type, fr.seq, fr.flags, fr.payload) == (t, seq, flags, payload)


def test_decode_rejects_each_corruption():
    f = bytearray(encode_frame(link.ACK, 3, b"abcd"))
    for i in range(len(f)):
        g = bytearray(f)
        g[i] ^= 0x10
        with pytest.raises(ProtocolError):
            decode_frame(g)
    with pytest.raises(ProtocolError, match="too short"):
        decode_frame(f[:5])
    with pytest.raises(ProtocolError, match="header says"):
        decode_frame(f + b"x")


def test_parser_byte_by_byte_and_chunks():
    frames = [encode_frame(link.DATA, i, bytes(range(i * 3 % 200))) for i in range(20)]
    blob = b"".join(frames)
    p = FrameParser()
    got = []
    for b in blob:
        got += p.feed(bytes((b,)))
    assert [g.seq for g in got] == list(range(20))
    p2 = FrameParser()
    rng = random.Random(1)
    got2, i = [], 0
    while i < len(blob):
        n = rng.randint(1, 300)
        got2 += p2.feed(blob[i:i + n])
        i += n
    assert got2 == got and p2.pending() == 0 and p2.errors == 0


def test_parser_resyncs_after_garbage_and_damage():
    good = [encode_frame(link.RESULT, i, bytes([i]) * 16) for i in range(30)]
    rng = random.Random(5)
    stream = bytearray()
    damaged = set()
    for i, f in enumerate(good):
        f = bytearray(f)
        r = rng.random()
        if r < 0.15:          # flip a byte
            f[rng.randrange(len(f))] ^= 1 << rng.randrange(8)
            damaged.add(i)
        elif r < 0.25:        # drop a byte
            del f[rng.randrange(len(f))]
            damaged.add(i)
        elif r < 0.3:         # garbage containing sync bytes before the frame
            stream += bytes([link.SYNC, 0x33, link.SYNC, 0xFF, 0xFF])
        stream += f
    p = FrameParser()
    got = p.feed(bytes(stream))
    seqs = [g.seq for g in got]
    # every undamaged frame arrives, in order, exactly once; nothing damaged gets through
    assert seqs == [i for i in range(30) if i not in damaged]
    assert damaged and p.errors + p.skipped > 0


def test_parser_frame_swallowed_by_truncated_frame_is_found():
    a = encode_frame(link.DATA, 1, b"x" * 40)[:20]     # truncated: its LEN swallows the next frame
    b = encode_frame(link.ACK, 2, link.encode_ack(5, 0, 100))
    c = encode_frame(link.ACK, 3, link.encode_ack(6, 0, 100))
    p = FrameParser()
    got = p.feed(a + b + c + b"\x00" * 40)
    assert [g.seq for g in got] == [2, 3]


def test_parser_rejects_oversize_length():
    p = FrameParser(max_payload=64)
    f = encode_frame(link.DATA, 0, b"y" * 65)
    ok = encode_frame(link.DATA, 1, b"z")
    assert [g.seq for g in p.feed(f + ok)] == [1]
    assert p.bad_header >= 1


def test_payload_helpers_roundtrip():
    ident = link.Ident(1, 8, 16, 4096, 4096, 1024, 100_000_000, 0)
    assert link.parse_ident(link.Frame(link.IDENT, 0, 0, link.encode_ident(ident))) == ident
    assert link.parse_ack(link.Frame(link.ACK, 0, 0, link.encode_ack(300, 2, 999))) == (44, 2, 999)
    assert link.parse_result(link.Frame(link.RESULT, 0, 0, link.encode_result(5, 4096, 3, 0xDEADBEEF))) == \
        (5, 4096, 3, 0xDEADBEEF)
    vals = {k: i * 1000 + 1 for i, k in enumerate(link.COUNTER_NAMES)}
    assert link.parse_counters(link.Frame(link.COUNTERS, 0, 0, link.encode_counters(vals))) == vals
    with pytest.raises(ProtocolError, match="RESULT"):
        link.parse_result(link.Frame(link.RESULT, 0, 0, b"short"))


def test_table_payloads_group_consecutive_runs():
    ops = [(0, a, a * 3) for a in range(300)] + [(1, a, a) for a in range(16)] + [(2, 5, 1), (2, 9, 2), (3, 0, 2)]
    pls = link.table_payloads(ops, max_payload=256)
    back = [op for p in pls for op in link.parse_table_payload(p)]
    assert back == ops
    assert all(len(p) <= 256 and len(p) % 4 == 0 for p in pls)
    with pytest.raises(ProtocolError):
        link.table_payloads([(4, 0, 0)], 256)


def test_stripe_payloads_tlast_only_on_last():
    w = (np.arange(1000, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    pieces = link.stripe_payloads(w.astype(np.uint32), 1024)
    assert [f for _, f in pieces] == [0, 0, 0, link.FLAG_TLAST]
    assert np.array_equal(np.frombuffer(b"".join(p for p, _ in pieces), "<u4"), w)


def test_words_crc_and_seq_diff():
    w = np.array([1, 0x1234, 0xFFFF], np.uint16)
    assert link.words_crc(w, 16) == zlib.crc32(b"\x01\x00\x34\x12\xff\xff")
    assert link.words_crc(np.array([1, 2], np.uint16), 8) == zlib.crc32(b"\x01\x02")
    assert link.seq_diff(2, 250) == 8 and link.seq_diff(250, 2) == -8 and link.seq_diff(5, 5) == 0
