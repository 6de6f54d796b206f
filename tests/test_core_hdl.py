"""The converted decoder core: lutzip.hdl.flows.convert output compiles, has the docs/CORE.md ports, and the
converted VHDL / Verilog simulate bit-exactly in GHDL and Icarus on a short stream (random table set with
errors), using the shared simulation harness (lutzip.hdl.flows.simulate)."""
import re
import shutil
import subprocess

import numpy as np
import pytest

from lutzip.errors import UnsupportedError
from lutzip.hdl.flows import model as M
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.convert import convert_core
from lutzip.hdl.flows.vectors import Vectors, random_stripe, random_tableset

# docs/CORE.md's port list, written out here on purpose (lutzip.hdl.core.ports must agree with the document)
PORTS = ["clk", "rst", "s_axis_tdata", "s_axis_tvalid", "s_axis_tready", "s_axis_tlast", "m_axis_tdata",
         "m_axis_tvalid", "m_axis_tready", "m_axis_tlast", "m_axis_tuser", "tbl_we", "tbl_sel", "tbl_addr",
         "tbl_wdata", "err_valid", "err_code", "busy"]


def test_convert_writes_both_hdls_with_the_documented_ports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "hdl"
    params = dict(L=9, W=8, LUT3_DEPTH=1024, LUT1_RAM="distributed")
    assert convert_core(out, "verilog", **params) == out / "decoder_core.v"
    assert convert_core(out, "VHDL", **params) == out / "decoder_core.vhd"
    names = sorted(p.name for p in out.iterdir())
    assert "decoder_core.v" in names and "decoder_core.vhd" in names
    assert any(n.startswith("pck_myhdl") for n in names)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hdl"]  # nothing written to the cwd
    vlog = (out / "decoder_core.v").read_text()
    header = vlog[vlog.index("module decoder_core"):vlog.index(");")]
    assert re.findall(r"\b\w+\b", header)[2:] == PORTS
    assert re.search(r"output \[7:0\] m_axis_tdata", vlog)
    vhd = (out / "decoder_core.vhd").read_text()
    ent = vhd[vhd.index("entity decoder_core is"):vhd.index("end entity decoder_core")]
    assert re.findall(r"^\s+(\w+): (?:in|out)", ent, re.M) == PORTS
    with pytest.raises(UnsupportedError, match="systemc"):
        convert_core(out, hdl="systemc")
    with pytest.raises(UnsupportedError, match="STEP='onehat'"):
        convert_core(out, STEP="onehat")
    with pytest.raises(UnsupportedError, match="LANES"):
        convert_core(out, LANES=2)


@pytest.mark.skipif(not shutil.which("ghdl") or not shutil.which("iverilog"), reason="ghdl / iverilog missing")
def test_converted_sources_compile(tmp_path):
    convert_core(tmp_path, "vhdl")
    convert_core(tmp_path, "verilog")
    vhd = sorted(str(f) for f in tmp_path.glob("pck_myhdl*.vhd")) + [str(tmp_path / "decoder_core.vhd")]
    subprocess.run(["ghdl", "-a", "--std=08", f"--workdir={tmp_path}", *vhd], check=True, capture_output=True)
    subprocess.run(["iverilog", "-g2005", "-o", str(tmp_path / "a.out"), str(tmp_path / "decoder_core.v")],
                   check=True, capture_output=True)


def _vectors(L=8, W=16, depth=4096):
    rng = np.random.default_rng(12)
    ts = random_tableset(rng, W=W, L=L, complete=False)
    while len(ts.lut3) > depth:
        ts = random_tableset(rng, W=W, L=L, complete=False)
    pk = [random_stripe(rng, ts, int(rng.integers(1, 60)))[0] for _ in range(8)]
    pk[2][1] ^= 0x80000000                       # flipped bit
    pk[4] = [0x4C5B0000] + pk[4][1:]             # bad header marker
    pk[5] = pk[5][:1]                            # truncated stripe
    return Vectors.from_packets(pk, M.table_ops(ts, L), L=L, W=W, LUT3_DEPTH=depth)


@pytest.mark.parametrize("sim,L,W,depth,ram", [("ghdl", 8, 16, 4096, "block"), ("icarus", 8, 16, 4096, "block"),
                                               ("ghdl", 10, 8, 256, "block"), ("ghdl", 8, 16, 4096, "distributed")])
def test_converted_core_simulates_bit_exact(sim, L, W, depth, ram, tmp_path, hdl_cache):
    why = S.available(sim)
    if why:
        pytest.skip(why)
    vec = _vectors(L, W, depth)
    assert vec.expected[:, 2].sum() >= 2  # the vectors do contain error markers
    stim = S.make_stimulus(vec, in_gap=0.2, out_stall=0.3, seed=3)
    params = {**vec.params, "LUT1_RAM": ram}
    out = S.run(sim, stim, tmp_path, params, build_dir=hdl_cache)
    assert S.first_difference(out, vec.expected) is None
    ref = S.run("myhdl", stim, tmp_path / "myhdl", params, build_dir=hdl_cache)
    assert S.first_cycle_difference(out, ref) is None  # same words on the same cycles as the MyHDL core


def test_cli_hdl_convert(tmp_path, capsys):
    from lutzip.cli import main
    assert main(["hdl", "convert", "--out", str(tmp_path), "--hdl", "verilog", "--L", "6", "--W", "8",
                 "--lut1-ram", "distributed"]) == 0
    assert (tmp_path / "decoder_core.v").exists() and not (tmp_path / "decoder_core.vhd").exists()
    assert "decoder_core.v" in capsys.readouterr().out
    assert main(["hdl", "convert", "--out", str(tmp_path / "v"), "--hdl", "verilog", "--front", "vector"]) == 0
    assert "tl_read" in (tmp_path / "v" / "decoder_core.v").read_text()
    with pytest.raises(SystemExit):
        main(["hdl", "convert", "--out", str(tmp_path), "--L", "13"])
