"""The board's protocol engine simulated in MyHDL: frames in, frames out (docs/PROTOCOL.md)."""
import random

import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.link import protocol as link
from lutzip.codec.bitstream import ERR_BAD_HEADER
from lutzip.board.driver import Board
from lutzip.firmware.engine.sim_engine import EngineSim, SimSerial
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet

PARAMS = dict(RING_DEPTH=64, LUT3_DEPTH=256, MAX_PAYLOAD=128, CLK_HZ=50_000_000)


@pytest.fixture
def sim():
    s = EngineSim(**PARAMS)
    yield s
    s.close()


def frames_of(data):
    return link.FrameParser().feed(data)


def one(sim, data, ftype=None, cycles=None):
    fr = frames_of(sim.run(data, max_cycles=cycles, until_idle=False) if cycles else sim.run(data))
    assert len(fr) == 1, fr
    if ftype is not None:
        assert fr[0].type == ftype, fr
    return fr[0]


def test_identify_reports_parameters(sim):
    ident = link.parse_ident(one(sim, link.encode_frame(link.IDENTIFY), link.IDENT))
    assert (ident.version, ident.L, ident.W, ident.lut3_depth, ident.ring_depth, ident.max_payload,
            ident.clk_hz, ident.baud) == (1, 8, 16, 256, 64, 128, 50_000_000, 0)


def test_sequencing_nack_dup_and_malformed(sim):
    fr = one(sim, link.encode_frame(link.RESET, 40, link.reset_payload(False)), link.ACK)
    assert fr.seq == 0 and link.parse_ack(fr) == (41, 0, 64)
    # in-order TABLE frame: accepted
    tbl = struct_table(0, 0, [1, 2, 3])
    fr = one(sim, link.encode_frame(link.TABLE, 41, tbl), link.ACK)
    assert link.parse_ack(fr)[0] == 42 and fr.seq == 1
    # a duplicate is re-acknowledged, not executed twice
    fr = one(sim, link.encode_frame(link.TABLE, 41, tbl), link.ACK)
    assert link.parse_ack(fr)[0] == 42
    # a frame from the future: one NACK (reason 2), then silence for the same gap
    fr = one(sim, link.encode_frame(link.TABLE, 44, tbl), link.NACK)
    assert link.parse_ack(fr)[:2] == (42, 2)
    assert sim.run(link.encode_frame(link.TABLE, 45, tbl)) == b""
    # while a NACK is outstanding nothing else is NACKed; the right frame goes through and re-arms it
    assert sim.run(link.encode_frame(link.STREAM, 42, b"12345")) == b""
    bad = bytearray(link.encode_frame(link.TABLE, 42, tbl))
    bad[-1] ^= 0xFF
    assert sim.run(bytes(bad)) == b""
    fr = one(sim, link.encode_frame(link.TABLE, 42, tbl), link.ACK)
    assert link.parse_ack(fr)[0] == 43
    # a malformed STREAM (length not a multiple of 4) is refused with reason 4
    fr = one(sim, link.encode_frame(link.STREAM, 43, b"12345"), link.NACK)
    assert link.parse_ack(fr)[:2] == (43, 4)
    # the board numbered all its frames without gaps
    fr = frames_of(sim.run(link.encode_frame(link.BARRIER, 43)))
    assert [f.type for f in fr] == [link.ACK, link.COUNTERS] and [f.seq for f in fr] == [6, 7]
    cn = link.parse_counters(fr[1])
    assert cn["link_errors"] == 5   # two from the future, two malformed, one bad CRC


def test_nack_reasons_crc_and_room(sim):
    one(sim, link.encode_frame(link.RESET, 0, link.reset_payload(False)), link.ACK)
    bad = bytearray(link.encode_frame(link.TABLE, 1, struct_table(2, 0, [5])))
    bad[9] ^= 1
    fr = one(sim, bytes(bad), link.NACK)
    assert link.parse_ack(fr)[:2] == (1, 1)
    # a stripe header without its payload keeps the core busy; a TABLE frame then would wait for the rest of
    # the stripe, so it is refused as malformed (reason 4) instead of filling the ring
    hdr = np.array([0x4C5A0FFF], "<u4").tobytes()
    fr = one(sim, link.encode_frame(link.STREAM, 1, hdr), link.ACK, cycles=500)
    assert link.parse_ack(fr)[:2] == (2, 0) and link.parse_ack(fr)[2] in (63, 64)
    fr = one(sim, link.encode_frame(link.TABLE, 2, struct_table(2, 0, list(range(28)))), link.NACK, cycles=500)
    assert link.parse_ack(fr)[:2] == (2, 4)


def test_nack_no_room():
    # a frame larger than the free ring space: NACK reason 3 with the credit, nothing written
    with EngineSim(**dict(PARAMS, RING_DEPTH=16)) as sim:
        one(sim, link.encode_frame(link.RESET, 0, link.reset_payload(False)), link.ACK)
        fr = one(sim, link.encode_frame(link.TABLE, 1, struct_table(2, 0, list(range(28)))), link.NACK)
        assert link.parse_ack(fr) == (1, 3, 16)
        fr = one(sim, link.encode_frame(link.TABLE, 1, struct_table(2, 0, list(range(14)))), link.ACK)
        assert link.parse_ack(fr)[:2] == (2, 0)


def struct_table(sel, addr, data):
    return link.table_payloads([(sel, addr + i, d) for i, d in enumerate(data)], 1024)[0]


def _tables():
    return TableSet(16, [ClassSpec(1, ZRUN, 4, 0), ClassSpec(2, LUT, 2, 0), ClassSpec(3, RANGE, 16, 0),
                         ClassSpec(3, RANGE, 4, 0xFFF0)], np.array([1, 2, 3, 0xFFFF], np.uint16))


def _container(n=700, stripe=300, seed=3):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, size=n).astype(np.int16)
    a[rng.random(n) < 0.5] = 0
    ts = _tables()
    return codec.compress({"a": a}, tableset_fn=lambda w, b: ts, stripe_len=stripe), a


@pytest.mark.parametrize("words", [False, True])
def test_stream_through_engine_matches_reference(sim, words):
    c, a = _container()
    t = c.tensors[0]
    b = Board(serial=SimSerial(sim), timeout=60, rto=10, max_payload=128)
    r = b.stream([("a", c.tables[0], list(c.stripes(t)))], words=words)
    exp = a.view(np.uint16)
    assert [s.index for s in r.stripes] == [0, 1, 2]
    for s in r.stripes:
        e = exp[s.index * 300:(s.index + 1) * 300]
        assert s.err == 0 and s.n_words == len(e)
        assert s.crc == link.words_crc(e, 16)
        if words:
            assert np.array_equal(s.words, e)
    cn = r.counters
    assert cn["words"] == 700 and cn["stripes"] == 3 and cn["decode_errors"] == 0
    assert 0 < cn["busy"] <= cn["cycles"] and cn["rx_bytes"] > 0 and cn["tx_bytes"] > 0


def test_bad_stripe_reports_error_and_next_stripe_decodes(sim):
    c, a = _container(n=600)
    t = c.tensors[0]
    stripes = [s.copy() for s in c.stripes(t)]
    stripes[0][0] = 0x12340000 | (stripes[0][0] & 0xFFFF)      # broken header marker
    b = Board(serial=SimSerial(sim), timeout=60, rto=10, max_payload=128)
    r = b.stream([("a", c.tables[0], stripes)])
    assert r.stripes[0].err == ERR_BAD_HEADER
    assert r.stripes[1].err == 0 and r.stripes[1].crc == link.words_crc(a.view(np.uint16)[300:600], 16)
    assert r.counters["decode_errors"] == 1


def test_corrupted_host_bytes_are_retransmitted(sim):
    c, a = _container(n=600)
    t = c.tensors[0]
    rnd = random.Random(7)
    hits = []

    def mangle(data):
        data = bytearray(data)
        if len(data) > 20 and rnd.random() < 0.5:
            i = rnd.randrange(len(data))
            if rnd.random() < 0.5:
                data[i] ^= 0x40
            else:
                del data[i]
            hits.append(i)
        return bytes(data)

    b = Board(serial=SimSerial(sim, mangle=mangle), timeout=60, rto=0.5, max_payload=128, max_retries=30)
    r = b.stream([("a", c.tables[0], list(c.stripes(t)))], words=True)
    assert hits, "no fault was injected"
    assert r.retransmissions > 0 and r.counters["link_errors"] > 0
    exp = a.view(np.uint16)
    assert np.array_equal(np.concatenate([s.words for s in r.stripes]), exp)


def test_uart_top_loopback_identify():
    """uart_top in MyHDL: a host-side UART model sends IDENTIFY bit by bit and decodes the IDENT answer."""
    from myhdl import Signal, block, delay, instance
    from lutzip.firmware.uart.uart_top import uart_top

    CPB = 4
    clk, rst = Signal(bool(0)), Signal(bool(1))
    rx, tx, idle = Signal(bool(1)), Signal(bool(1)), Signal(bool(0))
    got = bytearray()
    req = link.encode_frame(link.IDENTIFY)

    @block
    def tb():
        dut = uart_top(clk, rst, rx, tx, idle, CLK_HZ=4 * 1000, BAUD=1000, RING_DEPTH=64, LUT3_DEPTH=64)

        @instance
        def clkgen():
            while True:
                yield delay(5)
                clk.next = not clk

        @instance
        def host_tx():
            for _ in range(4):
                yield clk.posedge
            rst.next = 0
            for byte in req:
                bits = [0] + [(byte >> i) & 1 for i in range(8)] + [1]
                for bit in bits:
                    rx.next = bit
                    for _ in range(CPB):
                        yield clk.posedge

        @instance
        def host_rx():
            while True:
                yield tx.negedge
                for _ in range(CPB // 2):
                    yield clk.posedge
                v = 0
                for i in range(8):
                    for _ in range(CPB):
                        yield clk.posedge
                    v |= int(tx) << i
                for _ in range(CPB):
                    yield clk.posedge
                got.append(v)

        return dut, clkgen, host_tx, host_rx

    t = tb()
    t.config_sim(trace=False)
    try:
        t.run_sim(duration=10 * (len(req) + 40) * 10 * CPB, quiet=1)
    finally:
        t.quit_sim()
    fr = frames_of(bytes(got))
    assert len(fr) == 1 and fr[0].type == link.IDENT
    ident = link.parse_ident(fr[0])
    assert ident.baud == 1000 and ident.clk_hz == 4000 and ident.ring_depth == 64
