"""Board tops convert to VHDL that GHDL (--std=08) analyses and to Verilog that Verilator lints; W = 8 works."""
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.link import protocol as link
from lutzip.board.driver import Board
from lutzip.firmware.convert import convert
from lutzip.firmware.engine.sim_engine import EngineSim, SimSerial


@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
@pytest.mark.parametrize("top,W,R", [("uart_top", 16, 0), ("uart_top", 8, 0), ("proto_engine", 16, 0),
                                     ("uart_top", 8, 512)])
def test_vhdl_analyses_in_ghdl(tmp_path, top, W, R):
    """R: the replay build (``REPLAY_WORDS``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = convert(top=top, hdl="vhdl", path=str(tmp_path), W=W, LUT3_DEPTH=1024, CLK_HZ=12_000_000,
                    BAUD=1_000_000, REPLAY_WORDS=R)
    pkg = sorted(str(p) for p in tmp_path.glob("pck_myhdl_*.vhd"))
    r = subprocess.run(["ghdl", "-a", "--std=08", f"--workdir={tmp_path}", *pkg, f], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.parametrize("R", [0, 512])
def test_verilog_lints_in_verilator(tmp_path, R):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = convert(top="uart_top", hdl="verilog", path=str(tmp_path), W=8, CLK_HZ=12_000_000, BAUD=1_000_000,
                    REPLAY_WORDS=R)
    r = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "-Wno-WIDTH", "-Wno-CASEINCOMPLETE",
                        "-Wno-UNUSED", "-Wno-DECLFILENAME", f], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "%Error" not in r.stderr


def test_w8_engine_decodes_int8():
    rng = np.random.default_rng(8)
    a = np.rint(rng.laplace(0, 5, 900)).clip(-128, 127).astype(np.int8)
    c = codec.compress({"a": a}, stripe_len=450)
    t = c.tensors[0]
    s = EngineSim(W=8, RING_DEPTH=128, LUT3_DEPTH=512)
    try:
        b = Board(serial=SimSerial(s), timeout=60, rto=10)
        assert b.identify().W == 8
        r = b.stream([("a", c.tables[t.table], list(c.stripes(t)))], words=True)
    finally:
        s.close()
    got = np.concatenate([x.words for x in r.stripes])
    assert np.array_equal(got, a.view(np.uint8))
    assert r.stripes[1].crc == link.words_crc(a.view(np.uint8)[450:], 8)


@pytest.mark.parametrize("which", ["crc32", "crc8"])
def test_crc_rom_and_bitwise_agree(which):
    """The table-ROM CRC (virtual board) and the shift/XOR CRC (boards) are the same function."""
    import random
    import zlib

    from myhdl import Signal, block, delay, instance, intbv
    from lutzip.firmware.engine.crc32_byte import crc32_byte
    from lutzip.firmware.engine.crc8_byte import crc8_byte

    width = 32 if which == "crc32" else 8
    fn = crc32_byte if which == "crc32" else crc8_byte
    rnd = random.Random(1)
    cases = [(rnd.getrandbits(width), b) for b in range(256)] + [(0, 0), ((1 << width) - 1, 255)]
    crc_in, byte = Signal(intbv(0)[width:]), Signal(intbv(0)[8:])
    o_rom, o_bit = Signal(intbv(0)[width:]), Signal(intbv(0)[width:])
    got = []

    @block
    def tb():
        a = fn(crc_in, byte, o_rom, ROM=True)
        b = fn(crc_in, byte, o_bit, ROM=False)

        @instance
        def drive():
            for c, d in cases:
                crc_in.next, byte.next = c, d
                yield delay(1)
                got.append((int(o_rom), int(o_bit)))

        return a, b, drive

    t = tb()
    try:
        t.run_sim(quiet=1)
    finally:
        t.quit_sim()
    assert all(r == b for r, b in got) and len(got) == len(cases)
    if which == "crc32":   # and it is zlib's CRC32 step
        for (c, d), (r, _) in zip(cases[:5], got[:5]):
            ref = c
            for _ in range(1):
                x = (ref ^ d) & 0xFF
                for _ in range(8):
                    x = (x >> 1) ^ 0xEDB88320 if x & 1 else x >> 1
                ref = (ref >> 8) ^ x
            assert r == ref
    else:
        from lutzip.link.protocol import crc8
        for (c, d), (r, _) in zip(cases, got):
            assert r == crc8(bytes([d]), c)
