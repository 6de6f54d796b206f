"""Synthesis / place-and-route flow of ``lutzip hdl synth`` (lutzip.hdl.flows.synth)."""
import json
import sys

import pytest

from lutzip.errors import UnsupportedError
from lutzip.hdl.flows import synth as sy
from test_synth_standins import standin_core

HAVE_ICE40 = sy.find_tool("yosys", required=False) and sy.find_tool("nextpnr-ice40", required=False)
HAVE_ECP5 = sy.find_tool("yosys", required=False) and sy.find_tool("nextpnr-ecp5", required=False)
need_ice40 = pytest.mark.skipif(not HAVE_ICE40, reason="yosys / nextpnr-ice40 not installed (.ci/install.sh)")
need_ecp5 = pytest.mark.skipif(not HAVE_ECP5, reason="yosys / nextpnr-ecp5 not installed (.ci/install.sh)")


def _sane(r, min_bram=1):
    res = r["resources"]
    assert res["lut"] > 50, res          # a decoder is more than a few gates ...
    assert res["ff"] > 20, res
    assert res["lut"] < 7680 and res["ff"] < 7680, res   # ... and fits an HX8K
    assert res["bram"] >= min_bram, f"LUT3 not in block RAM: {r['cells']}"


# ---------------------------------------------------------------------------------------------- unit
def test_classify_cells():
    cells = {"SB_LUT4": 10, "SB_DFFE": 3, "SB_DFFSR": 2, "SB_RAM40_4K": 4, "SB_CARRY": 5, "SB_IO": 9}
    assert sy.classify_cells(cells, "ice40") == {"lut": 10, "ff": 5, "bram": 4, "carry": 5, "spram": 0}
    ecp = sy.classify_cells({"LUT4": 7, "TRELLIS_FF": 6, "DP16KD": 2, "CCU2C": 1}, "ecp5")
    assert (ecp["lut"], ecp["ff"], ecp["bram"], ecp["carry"]) == (7, 6, 2, 1)


def test_fmax_log_regex():
    line = "Info: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 93.41 MHz (PASS at 80.00 MHz)"
    m = sy._FMAX_RE.search(line)
    assert m and m.group(1) == "clk$SB_IO_IN_$glb_clk" and float(m.group(2)) == 93.41


def test_bad_input_errors(tmp_path, monkeypatch):
    with pytest.raises(UnsupportedError, match="unknown target"):
        sy.synth("virtex-2", core=standin_core)
    with pytest.raises(UnsupportedError, match="L=40"):
        sy.synth("ice40-hx8k", L=40, core=standin_core, build_dir=tmp_path)
    assert not any(tmp_path.iterdir())      # checked before anything is converted
    with pytest.raises(UnsupportedError, match="STEP='diagonal'"):
        sy.synth("ice40-hx8k", step="diagonal", core=standin_core)
    monkeypatch.setenv("LUTZIP_YOSYS", str(tmp_path / "no-such-yosys"))
    with pytest.raises(sy.ToolError, match="no-such-yosys"):
        sy.synth("ice40-hx8k", L=4, W=8, LUT3_DEPTH=64, core=standin_core, pnr=False)


def test_cli_parser_registers():
    import argparse

    from lutzip.hdl.flows import cli
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command")
    hdl = sub.add_parser("hdl")             # lutzip.cli makes the group once ...
    hsub = hdl.add_subparsers(dest="hdl_command")
    cli.register(hsub)                      # ... and hands its sub-parsers to lutzip.hdl.flows.cli
    a = p.parse_args(["hdl", "synth", "--target", "ecp5-85k", "--seed", "3", "--seed", "0x4", "--json"])
    assert a.func is cli._cmd_synth and a.seed == [3, 4] and a.json and a.target == "ecp5-85k"
    assert {"synth", "convert", "bench"} <= set(hsub.choices)
    assert (a.front, a.step, a.lut1_ram) == (None, None, None)      # the target decides
    assert cli.core_params(a).as_dict() == sy.core_params("ecp5-85k").as_dict()
    for bad in (["--L", "13"], ["--lut3-depth", "0"], ["--seed", "x"]):
        with pytest.raises(SystemExit):
            p.parse_args(["hdl", "synth", *bad])


# ------------------------------------------------------------------------------------------ tool runs
@need_ice40
def test_standin_ice40_place_and_route(tmp_path):
    """The whole flow on the stand-in: yosys + nextpnr, report parsed, LUT3 in block RAM."""
    r = sy.synth("ice40-hx8k", L=6, W=16, LUT3_DEPTH=1024, core=standin_core, build_dir=tmp_path, seed=2,
                 more_seeds=(5,))
    _sane(r, min_bram=4)                    # 1024 x 16 bits needs 4 SB_RAM40_4K
    # a further seed places the same netlist again: same cells, its own nextpnr run and files
    (m,) = r["more"]
    assert m["pnr"]["seed"] == 5 and m["cells"] == r["cells"] and m["pnr"]["fits"]
    assert (tmp_path / "seed5" / "decoder_core.nextpnr.log").exists()
    p = r["pnr"]
    assert p["fits"] and p["utilization"]["ICESTORM_RAM"] == r["resources"]["bram"]
    assert p["utilization"]["ICESTORM_LC"] >= r["resources"]["lut"] * 0.8
    assert r["memories"] and all(v != "logic" for k, v in r["memories"].items() if k.startswith("lut3"))
    assert 5 < p["fmax_mhz"] < 500 and p["seed"] == 2
    assert p["critical_path"]["logic_levels"] >= 1
    assert "Fmax" in sy.format_result(r)
    json.dumps(r)


def test_seed_sweep_reports_every_seed_and_the_best():
    """The sweep summary lists every seed tried in order (an unplaced one too) and names the highest Fmax."""
    runs = [{"pnr": {"seed": s, "fmax_mhz": f}, "meets_goal": f is not None and f >= 125} for s, f in
            ((1, 123.35), (2, 126.5), (3, None), (4, 118.0))]
    sw = sy.seed_sweep(runs)
    assert [x["seed"] for x in sw["seeds"]] == [1, 2, 3, 4]
    assert [x["fmax_mhz"] for x in sw["seeds"]] == [123.35, 126.5, None, 118.0]
    assert (sw["best_seed"], sw["best_fmax_mhz"], sw["meets_goal"]) == (2, 126.5, True)
    runs[1]["pnr"]["fmax_mhz"], runs[1]["meets_goal"] = 100.0, False
    sw = sy.seed_sweep(runs)
    assert (sw["best_seed"], sw["best_fmax_mhz"], sw["meets_goal"]) == (1, 123.35, False)
    assert sy.seed_sweep([{"pnr": {"seed": 7, "fmax_mhz": None}}])["best_seed"] is None


def test_tool_timeout(tmp_path, monkeypatch):
    """The tools' time limit: 4 h by default, LUTZIP_TOOL_TIMEOUT overrides it (a bad value: one-line error), and
    a tool past it is stopped with a ToolError naming its log."""
    monkeypatch.delenv("LUTZIP_TOOL_TIMEOUT", raising=False)
    assert sy.tool_timeout() == 4 * 3600
    monkeypatch.setenv("LUTZIP_TOOL_TIMEOUT", "0.5")
    assert sy.tool_timeout() == 0.5
    with pytest.raises(sy.ToolError, match="timed out after 0.5 s"):
        sy.run_tool([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path, "slow.log")
    assert sy.run_tool([sys.executable, "-c", "pass"], tmp_path, "quick.log", timeout=60) >= 0
    for bad in ("x", "0", "-3"):
        monkeypatch.setenv("LUTZIP_TOOL_TIMEOUT", bad)
        with pytest.raises(sy.ToolError, match="LUTZIP_TOOL_TIMEOUT"):
            sy.tool_timeout()


@need_ice40
def test_standin_parallel_seeds(tmp_path):
    """jobs=2 places the seeds at the same time: each seed's own files and report, the same Fmax as one at a time,
    and the sweep summary over all of them."""
    kw = dict(L=6, W=16, LUT3_DEPTH=1024, core=standin_core, seed=2, more_seeds=(5,))
    r = sy.synth("ice40-hx8k", build_dir=tmp_path / "par", jobs=2, **kw)
    one = sy.synth("ice40-hx8k", build_dir=tmp_path / "seq", **kw)
    runs = [r] + r["more"]
    assert [x["pnr"]["seed"] for x in runs] == [2, 5]
    assert (tmp_path / "par" / "seed5" / "decoder_core.nextpnr.log").exists()
    assert [x["pnr"]["fmax_mhz"] for x in runs] == [one["pnr"]["fmax_mhz"], one["more"][0]["pnr"]["fmax_mhz"]]
    sw = r["sweep"]
    assert [x["seed"] for x in sw["seeds"]] == [2, 5]
    assert sw["best_fmax_mhz"] == max(x["pnr"]["fmax_mhz"] for x in runs)
    assert all(x["sweep"] == sw for x in runs)
    json.dumps(r)


def _lut3_in_bram(r):
    lut3 = {k: v for k, v in r["memories"].items() if "lut3" in k.lower()}
    assert lut3 and all(v != "logic" for v in lut3.values()), f"LUT3 not mapped to block RAM: {r['memories']}"


@pytest.mark.slow   # default-run budget: yosys on the real core, ~70 s (the stand-in flow runs by default)
@need_ice40
def test_core_ice40_synth():
    """Default-run check on the real core: yosys synth_ice40 runs, sane cell counts, LUT3 in BRAM."""
    r = sy.synth("ice40-hx8k", pnr=False)
    _sane(r, min_bram=16)                   # 4096 x 16 bits = 16 SB_RAM40_4K
    _lut3_in_bram(r)


@pytest.mark.slow
@need_ice40
def test_core_ice40_place_and_route_small_lut1():
    """Full iCE40 place and route of the real core with L=6 (L=8 does not fit an HX8K, see docs/SYNTH.md)."""
    r = sy.synth("ice40-hx8k", L=6, seed=1)
    _sane(r, min_bram=16)
    p = r["pnr"]
    assert p["fits"] and p["utilization"]["ICESTORM_RAM"] == r["resources"]["bram"]
    assert p["fmax_mhz"] > 20


@pytest.mark.slow   # default-run budget: yosys on the real vector core, ~100 s
@need_ecp5
def test_core_ecp5_vector_synth():
    """Default-run check of what ``hdl synth --target ecp5-85k`` builds (the vector front): yosys runs, LUT3,
    LUT1 and the 32 TL copies are block RAM, nothing of the front's tables is left in logic."""
    r = sy.synth("ecp5-85k", pnr=False)
    assert r["params"]["FRONT"] == "vector"
    _lut3_in_bram(r)
    tl = {k: v for k, v in r["memories"].items() if "tl_read" in k}
    assert len(tl) == 32 and all("DP16KD" in v for v in tl.values()), r["memories"]
    assert r["resources"]["bram"] >= 4 + 32 and r["resources"]["lut"] > 500
    # every block RAM's read register became that RAM's output register (hdl/flows/bram_outreg.py): the 32 TL
    # copies' first pipeline register, S1's LUT1 register, X's LUT3 register (four DP16KD of 4096 x 4)
    assert r["bram_outregs"] == 32 + 1 + 4 == r["resources"]["bram"], (r["bram_outregs"], r["resources"])
    # the loop's six 64:1 selects built from slice primitives (hdl/flows/ecp5_select.py): 9 L6MUX21 each
    assert r["select64_mapped"] == 6 and r["cells"].get("L6MUX21", 0) >= 6 * 9, (r["select64_mapped"], r["cells"])
    assert "slice primitives: 6; block RAM read ports with their output register: 37" in sy.format_result(r)


@pytest.mark.slow
@need_ecp5
def test_core_ecp5_place_and_route():
    r = sy.synth("ecp5-85k", seed=1)       # the default ECP5 build: vector front
    _sane(r, min_bram=4)                    # 4096 x 16 bits = 4 DP16KD
    _lut3_in_bram(r)
    assert r["pnr"]["fits"] and r["pnr"]["fmax_mhz"] > 30


@pytest.mark.slow
@need_ecp5
def test_core_meets_ecp5_goal():
    """The issue-3 goal on ECP5 at the default parameters: >= 125 MHz on an LFE5U-85F at nextpnr's default
    speed grade, what `lutzip hdl synth --target ecp5-85k` builds, on two placement seeds (one netlist)."""
    r = sy.synth("ecp5-85k", seed=1, more_seeds=(2,))
    for run in [r] + r["more"]:
        p = run["pnr"]
        assert p["fits"], p.get("error")
        assert run["meets_goal"], f"Fmax {p['fmax_mhz']} MHz < {run['goal_mhz']} MHz: {p['critical_path']}"


@pytest.mark.slow
@need_ice40
def test_core_meets_ice40_goal():
    """The issue-3 goal on iCE40 at the default parameters: fits and >= 80 MHz on an HX8K, what `lutzip hdl
    synth --target ice40-hx8k` builds (window front, one-hot step), on two placement seeds (one netlist)."""
    r = sy.synth("ice40-hx8k", seed=1, more_seeds=(2,))
    assert r["params"]["STEP"] == "onehot"
    for run in [r] + r["more"]:
        p = run["pnr"]
        assert p["fits"], p.get("error")
        assert run["meets_goal"], f"Fmax {p['fmax_mhz']} MHz < {run['goal_mhz']} MHz: {p['critical_path']}"


@pytest.mark.slow   # default-run budget: two yosys runs of the real core, ~120 s (the parser: test_cli_parser_registers)
@need_ice40
def test_cli_synth_no_pnr(capsys, tmp_path, monkeypatch):
    from lutzip.cli import main
    assert main(["hdl", "synth", "--target", "ice40-hx8k", "--no-pnr", "--json", "--L", "6", "--W", "8",
                 "--lut3-depth", "512"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["resources"]["bram"] >= 1
    assert r["params"] == {"L": 6, "W": 8, "LUT3_DEPTH": 512, "LUT1_RAM": "block", "FRONT": "window",
                           "STEP": "onehot"}
    # the one-hot step's copy of LUT1 (c+k one-hot) is block RAM beside LUT1
    assert "RAM4K" in r["memories"].get("lut1_table0_mem_oh", ""), r["memories"]
    assert main(["hdl", "synth", "--target", "ice40-hx8k", "--no-pnr", "--json", "--L", "6", "--W", "8",
                 "--lut3-depth", "512", "--step", "adder"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["params"]["STEP"] == "adder" and "lut1_table0_mem_oh" not in r["memories"], r["memories"]

