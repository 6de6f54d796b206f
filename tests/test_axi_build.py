"""The Zynq build of lutzip_axi (lutzip.firmware.axi.build): the converted top's ports, the Vivado Tcl checked
as far as possible without Vivado (every file parses as Tcl; a dry run in tclsh with a stub for each Vivado
command the scripts use -- any other command fails -- checks VLNV, part, DMA settings, interface and port
names against the converted top), the Makefile, and the yosys synth_xilinx figures (slow)."""
import re
import shutil
import subprocess

import pytest

from lutzip.firmware.axi import regs as R
from lutzip.firmware.axi.build import VIVADO_DIR, ZYNQ_BOARDS, build_zynq, format_zynq, zynq_board

TCLSH = shutil.which("tclsh")
needs_tclsh = pytest.mark.skipif(TCLSH is None, reason="tclsh not installed (apt-get install tcl)")

#: The Vivado commands the scripts may use (all documented in UG835); the dry run stubs exactly these.
VIVADO_COMMANDS = """create_project add_files set_property get_property update_compile_order current_fileset
current_project close_project update_ip_catalog ipx::package_project ipx::current_core ipx::get_bus_interfaces
ipx::associate_bus_interfaces ipx::get_bus_parameters ipx::add_bus_parameter ipx::get_memory_maps
ipx::get_address_blocks ipx::add_address_block ipx::create_xgui_files ipx::update_checksums ipx::check_integrity
ipx::save_core create_bd_design create_bd_cell apply_bd_automation get_bd_intf_pins connect_bd_intf_net
get_bd_cells get_bd_pins connect_bd_net assign_bd_address validate_bd_design save_bd_design get_files
make_wrapper generate_target launch_runs wait_on_run get_runs open_run report_utilization
report_timing_summary""".split()

STUBS = r"""
set ::calls {}
proc unknown {args} { error "not a Vivado command the dry run knows: [lindex $args 0]" }
namespace eval ipx {}
foreach c $::vivado_commands {
    proc $c {args} [format {lappend ::calls [list %s {*}$args]; return [stub_result %s $args]} $c $c]
}
proc stub_result {cmd argl} {
    switch -- $cmd {
        ipx::current_core { return core0 }
        ipx::get_bus_interfaces {
            set n [lindex $argl 0]
            if {$n in $::ip_interfaces || $n in {aclk aresetn}} { return $n } else { return {} }
        }
        ipx::get_memory_maps { return mm0 }
        ipx::get_address_blocks { return reg0 }
        ipx::get_bus_parameters { return POLARITY }
        get_property { return 100% }
        get_bd_cells { return rst_ps_100M }
        get_bd_intf_pins - get_bd_pins {
            set p [lindex $argl 0]
            if {[string match lutzip_axi_0/* $p]} {
                set n [string range $p 13 end]
                if {!($n in $::ip_interfaces || $n in $::ip_ports)} { error "lutzip_axi_0 has no pin $n" }
            }
            return $p
        }
        create_bd_cell { return [lindex $argl end] }
        get_files { return [lindex $argl 0] }
        default { return {} }
    }
}
rename glob _glob
proc glob {args} { lappend ::calls [list glob {*}$args]; return [list [lindex $args end]] }
rename file _file
proc file {sub args} {
    if {$sub eq "copy"} { lappend ::calls [list file copy {*}$args]; return }
    return [_file $sub {*}$args]
}
rename cd _cd
proc cd {d} { lappend ::calls [list cd $d] }
"""


def _verilog_ports(v_text):
    """name -> (direction, width) of the converted module's ports."""
    out = {}
    for d, w, name in re.findall(r"^\s*(input|output)\s*(?:reg\s*|wire\s*)?(\[\d+:0\])?\s*(\w+);", v_text, re.M):
        out[name] = ("in" if d == "input" else "out", int(w[1:].split(":")[0]) + 1 if w else 1)
    return out


def _dry_run(out_dir, interfaces, ports):
    prelude = (f"set ::vivado_commands {{{' '.join(VIVADO_COMMANDS)}}}\n"
               f"set ::ip_interfaces {{{' '.join(interfaces)}}}\nset ::ip_ports {{{' '.join(ports)}}}\n" + STUBS)
    script = prelude + f"source {{{out_dir / 'run.tcl'}}}\nforeach c $::calls {{ puts $c }}\n"
    (out_dir / "dry_run.tcl").write_text(script)          # a script file: any error ends tclsh with status 1
    r = subprocess.run([TCLSH, str(out_dir / "dry_run.tcl")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [ln for ln in r.stdout.splitlines() if ln.strip()]


_BUILDS = {}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``built(board) -> (dir, result)``: build_zynq without yosys and Vivado, once per board and module (the
    conversion of the top is the slow part; tests that change files work on a copy)."""
    def get(board):
        if board not in _BUILDS:
            d = tmp_path_factory.mktemp(board)
            _BUILDS[board] = d, build_zynq(board, out=d, yosys=False, vivado=False)
        return _BUILDS[board]
    yield get
    _BUILDS.clear()


def test_ports_match_the_register_map(built):
    """regs.ports() (what H6b's .hwh and the Tcl rely on) is exactly the converted top's port list."""
    from lutzip.firmware.axi.sim import convert_top
    import tempfile
    from pathlib import Path
    for ob in (4, 8):
        if ob == 4:                 # the PYNQ-Z2 build's top has 32-bit output beats
            d, r = built("pynq-z2")
            assert r["params"]["OUT_BYTES"] == 4
            v = (d / "lutzip_axi.v").read_text()
        else:
            with tempfile.TemporaryDirectory() as d:
                v = convert_top(Path(d), "verilog", OUT_BYTES=ob).read_text()
        got = _verilog_ports(v)
        assert got == {n: (d_, w) for n, d_, w in R.ports(ob)}
        for name, (_vlnv, _mode, prefix) in R.INTERFACES.items():
            assert any(p.startswith(prefix) for p in got), name


@pytest.mark.parametrize("board", [b if b == "pynq-z2" else pytest.param(b, marks=pytest.mark.slow)
                                   for b in sorted(ZYNQ_BOARDS)])   # default-run budget: one Zynq board
def test_build_writes_files_and_tcl_parses(board, built):
    tmp_path, r = built(board)
    b = zynq_board(board)
    for f in ["lutzip_axi.v", "run.tcl", "Makefile", *r["files"]["tcl"]]:
        assert (tmp_path / f).is_file(), f
    assert r["bitstream"] is None and "vivado -mode batch" in r["next_step"] and str(tmp_path) in r["next_step"]
    mk = (tmp_path / "Makefile").read_text()
    assert "$(VIVADO) -mode batch" in mk and "run.tcl" in mk and b["bd"] in mk
    assert r["next_step"] in format_zynq(r)
    assert r["params"]["FRONT"] == "vector" and r["params"]["OUT_BYTES"] == b["OUT_BYTES"]
    v = (tmp_path / "lutzip_axi.v").read_text()
    ports = _verilog_ports(v)
    assert ports["m_axis_tdata"] == ("out", 8 * b["OUT_BYTES"])
    if TCLSH is None:
        pytest.skip("tclsh not installed: structural check only")
    for f in r["files"]["tcl"]:
        text = (tmp_path / f).read_text()
        chk = tmp_path / "complete.tcl"
        chk.write_text("set f [open [lindex $argv 0]]\nputs [info complete [read $f]]\n")
        ok = subprocess.run([TCLSH, str(chk), str(tmp_path / f)], capture_output=True, text=True)
        assert ok.stdout.strip() == "1", f"{f}: braces / quotes do not balance"
    ifs = [n for n, (_v, _m, prefix) in R.INTERFACES.items() if any(p.startswith(prefix) for p in ports)]
    assert ifs == list(R.INTERFACES)
    calls = _dry_run(tmp_path, ifs, [p for p in ports if not p.startswith(("s_axi", "m_axis"))])
    text = "\n".join(calls)
    assert f"create_project -force lutzip_ip ./ip_proj -part {b['part']}" in text
    assert f"-vendor {R.VENDOR} -library {R.LIBRARY}" in text
    assert f"set_property name {R.NAME} core0" in text and f"set_property version {R.IP_VERSION} core0" in text
    assert f"create_bd_cell -type ip -vlnv {R.VLNV} lutzip_axi_0" in text
    assert f"set_property board_part {b['board_part']}" in text
    for busif in R.INTERFACES:
        assert f"ipx::associate_bus_interfaces -busif {busif} -clock {R.CLOCK} core0" in text
    assert f"ipx::associate_bus_interfaces -clock {R.CLOCK} -reset {R.RESET} core0" in text
    assert "set_property value ACTIVE_LOW POLARITY" in text
    assert f"set_property range {R.ADDR_RANGE} reg0" in text
    dma = next(c for c in calls if "CONFIG.c_include_sg" in c)
    assert "CONFIG.c_include_sg 0" in dma and "CONFIG.c_sg_length_width 26" in dma
    assert f"CONFIG.c_s_axis_s2mm_tdata_width {8 * b['OUT_BYTES']}" in dma
    assert "axi_dma:7.1" in text
    assert "file copy -force ./proj/lutzip.runs/impl_1/*.bit ./lutzip.bit" in text
    assert re.search(r"file copy -force \S+hw_handoff/lutzip\.hwh ./lutzip\.hwh", text)
    assert "launch_runs impl_1 -to_step write_bitstream" in text


@needs_tclsh
def test_dry_run_fails_on_a_wrong_pin(tmp_path, built):
    """The dry run can fail: a pin the converted top does not have is an error."""
    d, _ = built("pynq-z2")
    shutil.copytree(d, tmp_path, dirs_exist_ok=True)
    bd = tmp_path / "bd_pynq_z2.tcl"
    bd.write_text(bd.read_text().replace("lutzip_axi_0/s_axis]", "lutzip_axi_0/s_axis_in]"))
    with pytest.raises(AssertionError, match="no pin s_axis_in"):
        _dry_run(tmp_path, ["s_axis", "m_axis", "s_axi_ctrl"], ["aclk", "aresetn"])


def test_cli_board_build_offers_the_zynq_boards():
    import argparse
    from lutzip.firmware.boards import build as fb
    p = argparse.ArgumentParser()
    fb.register(p.add_subparsers(dest="command").add_parser("board").add_subparsers(dest="board_command"))
    for name in ZYNQ_BOARDS:
        a = p.parse_args(["board", "build", "--board", name, "--out", "x"])
        assert a.func is fb._cmd_build and a.board == name


def test_unknown_board_is_a_one_line_error():
    from lutzip.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="unknown Zynq board 'zedboard'"):
        zynq_board("zedboard")


@pytest.mark.slow
def test_build_yosys_figures(tmp_path):
    """yosys synth_xilinx on the AXI top for the xc7z020: LUT / FF / BRAM printed (about a minute)."""
    r = build_zynq("pynq-z2", out=tmp_path, vivado=False)
    k = r["resources"]
    assert 500 < k["lut"] < 53_200 and 300 < k["ff"] < 106_400 and 1 <= k["bram"] <= 140
    assert f"LUT={k['lut']} FF={k['ff']} BRAM={k['bram']}" in format_zynq(r)


def test_vivado_files_are_the_package_data():
    assert sorted(p.name for p in VIVADO_DIR.glob("*.tcl")) == sorted(
        {"package_ip.tcl", "build.tcl"} | {b["bd"] for b in ZYNQ_BOARDS.values()})
