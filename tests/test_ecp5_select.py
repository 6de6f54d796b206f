"""The ECP5 primitive build of the vector front's loop selects (hdl/flows/ecp5_select.py) is the generic code.

Proved with yosys: the SAT solver on one select64 for several INV constants, and equivalence checking
(``equiv_make`` / ``equiv_simple``) of the whole core, generic against mapped, with the ECP5 cell models
(``+/ecp5/cells_sim.v``). Each proof is also run on a deliberately wrong mapping, to show it can fail.
"""
import re
import subprocess

import pytest
from myhdl import Signal, intbv

from lutzip.hdl.flows import synth as sy
from lutzip.hdl.flows.convert import convert_block, convert_core
from lutzip.hdl.flows.ecp5_select import MODULE_NAME, map_select64
from lutzip.hdl.fronts.vector.select64 import select64

YOSYS = sy.find_tool("yosys", required=False)
need_yosys = pytest.mark.skipif(YOSYS is None, reason="yosys not installed (.ci/install.sh)")


def _yosys(script, cwd, timeout=600):
    (cwd / "check.ys").write_text(script)
    r = subprocess.run(YOSYS + ["-q", "check.ys"], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=sy._tool_env())
    return r.returncode, r.stdout + r.stderr


def _select_verilog(tmp_path, inv):
    c, n = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    s, q = Signal(intbv(0)[6:]), Signal(bool(0))
    return convert_block(select64(c, n, s, q, INV=inv), tmp_path, "sel_generic").read_text()


def _wrong_inv(text, inv):
    bad = text.replace(f"#(.INV({inv}))", f"#(.INV({inv ^ 4}))")
    assert bad != text
    return bad


def _read(gold, gate):
    """yosys commands: both designs and the ECP5 cell models (what nextpnr implements), flattened."""
    return (f"read_verilog {gold}\nread_verilog {gate}\nread_verilog -D NO_INCLUDES +/ecp5/cells_sim.v\n"
            "hierarchy -check\nproc\nflatten\n")


SAT = _read("sel_generic.v", "sel_mapped.v") + """miter -equiv -flatten -make_assert sel_generic sel_mapped miter
sat -verify -prove-asserts miter
"""


@need_yosys
@pytest.mark.parametrize("inv", [0, 0x15, 0x2a, 0x3f])
def test_select_tree_is_the_generic_select(tmp_path, inv):
    generic = _select_verilog(tmp_path, inv)
    mapped, k = map_select64(generic)
    assert k == 1 and "s64_four" not in mapped and f"{MODULE_NAME} #(.INV({inv}))" in mapped
    # three levels per 8:1, two 8:1 levels, each written for both polarities of its select bit
    assert mapped.count("L6MUX21 u") == 4 and mapped.count("PFUMX u") == 4 and mapped.count("LUT4 #") == 4
    (tmp_path / "sel_mapped.v").write_text(mapped.replace("module sel_generic", "module sel_mapped"))
    rc, log = _yosys(SAT, tmp_path)
    assert rc == 0, log[-2000:]
    # the proof fails on a mapping with one select bit inverted the wrong way
    (tmp_path / "sel_mapped.v").write_text(_wrong_inv(mapped, inv).replace("module sel_generic", "module sel_mapped"))
    rc, log = _yosys(SAT, tmp_path)
    assert rc != 0 and "proof did fail" in log, log[-2000:]


EQUIV = _read("gold.v", "gate.v") + """opt_clean
memory -nomap
equiv_make gold gate equiv
hierarchy -top equiv
equiv_simple
tee -o status.txt equiv_status -assert
"""


@need_yosys
@pytest.mark.slow   # default-run budget: yosys equivalence of the whole core, ~65 s (STATES=2: > 600 s at load 17)
@pytest.mark.timeout(7200)
@pytest.mark.parametrize("states,selects", [(1, 6), (2, 14)])
def test_core_with_mapped_selects_is_equivalent(tmp_path, states, selects):
    """The vector-front core (small tables, the same front) with its loop selects replaced (six; with two code
    tables six per vector half and two for the next state) is the same circuit: every register's next state and
    every output proven equal."""
    v = convert_core(tmp_path / "conv", "verilog", L=4, W=8, LUT3_DEPTH=16, LUT1_RAM="block", FRONT="vector",
                     STATES=states)
    generic = v.read_text()
    mapped, k = map_select64(generic)
    assert k == selects
    (tmp_path / "gold.v").write_text(generic.replace("module decoder_core", "module gold"))
    (tmp_path / "gate.v").write_text(mapped.replace("module decoder_core", "module gate"))
    rc, log = _yosys(EQUIV, tmp_path, timeout=3000 * states)
    status = (tmp_path / "status.txt").read_text() if (tmp_path / "status.txt").exists() else ""
    assert rc == 0 and "Equivalence successfully proven" in status, (log + status)[-3000:]
    (tmp_path / "gate.v").write_text(_wrong_inv(mapped, 0x15).replace("module decoder_core", "module gate"))
    rc, log = _yosys(EQUIV, tmp_path, timeout=3000 * states)
    assert rc != 0 and "unproven" in log, log[-2000:]


def test_window_front_has_no_selects(tmp_path):
    v = convert_core(tmp_path, "verilog", L=4, W=8, LUT3_DEPTH=16, FRONT="window")
    text = v.read_text()
    assert map_select64(text) == (text, 0)


def test_unexpected_shape_is_an_error(tmp_path):
    """A select whose converted code is not in the expected shape is refused, not half replaced."""
    text = _select_verilog(tmp_path, 0x15)
    broken = text.replace("assign si = (sel ^ 21);", "assign si = sel;")
    assert broken != text
    with pytest.raises(ValueError, match="si"):
        map_select64(broken)


@pytest.mark.parametrize("states,selects,kept", [(1, 6, 0), (2, 14, 1)])
def test_board_flow_maps_the_selects(tmp_path, states, selects, kept):
    """The board flow (firmware/boards/build.py) maps the loop selects as `lutzip hdl synth` does, keeping the
    generic file beside it, and with two code tables marks the loop's pointer copies ``(* keep *)`` (``c_keep_q``:
    yosys would merge their equal bits, and one flip-flop would drive eight select trees)."""
    from lutzip.firmware.boards.build import keep_reset_copies, map_select64_file
    v = convert_core(tmp_path, "verilog", L=4, W=8, LUT3_DEPTH=16, FRONT="vector", STATES=states)
    generic = v.read_text()
    assert keep_reset_copies(v) == kept
    if kept:
        m = re.findall(r"\(\* keep \*\)\nalways @\(posedge clk\) begin: (\w+)\n(.*?)\nend\n", v.read_text(), re.S)
        assert len(m) == 1 and m[0][0].endswith("_c_keep_q"), m
        assert re.search(r"_q5 <= \(\w+_p2_d \^ 30\);", m[0][1]), m
    marked = v.read_text()
    assert map_select64_file(v) == selects
    assert v.with_suffix(".generic.v").read_text() == marked
    text = v.read_text()
    assert "s64_four" not in text and text.count(f"{MODULE_NAME} #(.INV(") == selects
    assert map_select64_file(v) == 0 and v.read_text() == text      # nothing left to map: unchanged
