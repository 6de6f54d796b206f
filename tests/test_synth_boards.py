"""Board registry, constraints and bitstream builds (firmware/boards/registry.py, firmware/boards/build.py,
constraints/)."""
import argparse
import re

import pytest

from lutzip.errors import UnsupportedError
from lutzip.firmware.boards import registry as bd
from lutzip.firmware.boards import build as fb
from lutzip.hdl.flows import synth as sy
from test_synth_standins import standin_uart_top


def _have(*tools):
    return all(sy.find_tool(t, required=False) for t in tools)


FLOW_TOOLS = {"ice40": ("yosys", "nextpnr-ice40", "icepack"), "ecp5": ("yosys", "nextpnr-ecp5", "ecppack"),
              "xilinx": ("yosys",)}


def _constrained_ports(path):
    text = path.read_text()
    if path.suffix == ".pcf":
        return set(re.findall(r"^set_io\s+(?:-\S+\s+)*(\S+)\s+\S+", text, re.M))
    if path.suffix == ".lpf":
        return set(re.findall(r'^LOCATE COMP "([^"]+)"', text, re.M))
    return set(re.findall(r"PACKAGE_PIN\s+\S+.*get_ports\s*\{\s*(\S+)\s*\}", text))


def _port_names(ports):
    names = set()
    for n, s in ports.items():
        names |= {n} if len(s) == 1 else {f"{n}[{i}]" for i in range(len(s))}
    return names


@pytest.mark.parametrize("name", sorted(bd.BOARDS))
def test_constraints_match_wrapper_ports(name):
    b = bd.BOARDS[name]
    text = b.constraints_path.read_text()
    part_core = b.part.split("-")[0][:9].upper()           # e.g. ICE40UP5K, LFE5U, XC7A35TIC
    assert part_core in text.upper(), f"{b.constraints} must name the part {b.part}"
    assert _constrained_ports(b.constraints_path) == _port_names(b.module().ports())


def test_registry_and_baud_checks():
    assert {"icebreaker", "ulx3s", "arty_a7"} <= set(bd.BOARDS)
    assert bd.BOARDS["ulx3s"].clk_hz == 25_000_000 and bd.BOARDS["arty_a7"].part == "XC7A35TICSG324-1L"
    with pytest.raises(UnsupportedError, match="unknown board"):
        bd.get_board("de10-nano")
    with pytest.raises(UnsupportedError, match="too fast"):
        bd.check_baud(12_000_000, 3_000_000)
    with pytest.raises(UnsupportedError, match="off by"):
        bd.check_baud(12_000_000, 1_400_000)               # 8.57 clocks per bit -> divider 9: 4.8 % off
    assert bd.check_baud(100_000_000, 3_000_000) < 0.02
    assert bd.check_baud(12_000_000, 921_600) < 0.002


def test_cli_parser_joins_board_group():
    """``register`` adds ``build`` to the ``board`` group that lutzip.cli creates."""
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command")
    fb.register(sub.add_parser("board").add_subparsers(dest="board_command"))
    a = p.parse_args(["board", "build", "--board", "ulx3s", "--out", "x", "--seed", "5"])
    assert a.func is fb._cmd_build and a.board == "ulx3s" and a.seed == 5
    with pytest.raises(SystemExit):
        p.parse_args(["board", "build", "--board", "nope"])


@pytest.mark.parametrize("name", [n if n != "arty_a7" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(bd.BOARDS)])   # default-run budget: one board per open flow
def test_build_standin(name, tmp_path):
    """Full board flow on a stand-in UART top: Verilog, constraints, PnR at the board clock, bitstream."""
    b = bd.BOARDS[name]
    if not _have(*FLOW_TOOLS[b.family]):
        pytest.skip(f"{FLOW_TOOLS[b.family]} not installed (.ci/install.sh)")
    r = fb.build(name, out=tmp_path, top=standin_uart_top, L=6, LUT3_DEPTH=1024)
    v = (tmp_path / r["files"]["verilog"]).read_text()
    assert f"module board_{name}" in v
    assert r["resources"]["bram"] >= 1 and r["resources"]["lut"] > 50
    if b.family == "xilinx":
        assert r["bitstream"] is None and (tmp_path / "arty_a7.tcl").is_file()
        assert "xc7a35ticsg324-1L" in (tmp_path / "arty_a7.tcl").read_text()
        return
    assert r["meets_clock"], r["pnr"]
    bit = (tmp_path / r["bitstream"]).read_bytes()
    if b.family == "ice40":
        assert bit[:4] == b"\xff\x00\x00\xff"              # iCE40 bitstream preamble
    else:
        assert b"\xff\xff\xbd\xb3" in bit[:64]             # ECP5 preamble
    assert "bitstream" in fb.format_build(r)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(bd.BOARDS))
def test_build_real(name, tmp_path):
    b = bd.BOARDS[name]
    if not _have(*FLOW_TOOLS[b.family]):
        pytest.skip(f"{FLOW_TOOLS[b.family]} not installed")
    r = fb.build(name, out=tmp_path)
    assert r["resources"]["bram"] >= 1
    if b.family != "xilinx":
        assert r["meets_clock"], r["pnr"]
        assert r["bitstream_bytes"] > 1000
