"""Board tops convert to VHDL that GHDL (--std=08) analyses and to Verilog that Verilator lints; W = 8 works."""
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from lutzip import codec, link
from lutzip.driver import Board
from lutzip.firmware.convert import convert
from lutzip.firmware.sim_engine import EngineSim, SimSerial


@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
@pytest.mark.parametrize("top,W", [("uart_top", 16), ("uart_top", 8), ("proto_engine", 16)])
def test_vhdl_analyses_in_ghdl(tmp_path, top, W):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = convert(top=top, hdl="vhdl", path=str(tmp_path), W=W, LUT3_DEPTH=1024, CLK_HZ=12_000_000,
                    BAUD=1_000_000)
    pkg = sorted(str(p) for p in tmp_path.glob("pck_myhdl_*.vhd"))
    r = subprocess.run(["ghdl", "-a", "--std=08", f"--workdir={tmp_path}", *pkg, f], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
def test_verilog_lints_in_verilator(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = convert(top="uart_top", hdl="verilog", path=str(tmp_path), W=8, CLK_HZ=12_000_000, BAUD=1_000_000)
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
