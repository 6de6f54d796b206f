"""The hardware flows' single definitions: the core's ports and parameters (lutzip.hdl.core.ports), the one
conversion entry point, the build-cache key, the reference model and the bench CLI."""
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lutzip import cache
from lutzip.errors import UnsupportedError
from lutzip.hdl.core.ports import PORTS, CoreParams, core_signals
from lutzip.hdl.flows import model as M
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.convert import convert_core
from lutzip.hdl.flows.vectors import Vectors

TB = Path(S.TB_DIR)


# ------------------------------------------------------------------------------------------------- ports
def test_ports_are_the_core_signature():
    """A port added to (or renamed in) the core but not in ports.py fails here; so does a parameter."""
    from lutzip.hdl.core.decoder_core import decoder_core
    sig = inspect.signature(decoder_core)
    ports = [n for n, p in sig.parameters.items() if p.default is inspect.Parameter.empty]
    assert ports == [p.name for p in PORTS]
    params = {n: p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
    assert params == CoreParams().as_dict()


def test_core_signals_widths():
    for W in (8, 16):
        sig = core_signals(W)
        assert list(sig) == [p.name for p in PORTS]
        assert [len(s) for s in sig.values()] == [p.bits(W) for p in PORTS]
    assert len(core_signals(8)["m_axis_tdata"]) == 8 and core_signals()["rst"].active == 1


def _width(text):
    """Bits of a declared width: ``31 downto 0`` / ``[31:0]`` / ``W - 1`` forms; ``"W"`` for the word width."""
    if text is None:
        return 1
    hi = text.replace(" ", "")
    if hi in ("W-1",):
        return "W"
    return int(hi) + 1


def test_vhdl_test_bench_declares_the_ports():
    text = (TB / "tb_lutzip_core.vhd").read_text()
    decl = {m.group(1): _width(m.group(3)) for m in re.finditer(
        r"signal (\w+)\s*: (std_logic|unsigned\((.+?) downto 0\))", text)}
    assert {n: w for n, w in decl.items() if n != "done"} == {p.name: p.width for p in PORTS}
    pm = text[text.index("port map"):text.index(");", text.index("port map"))]
    assert re.findall(r"(\w+) =>", pm) == [p.name for p in PORTS]


def test_cosim_wrapper_declares_the_ports():
    text = (TB / "cosim_lutzip_core.v").read_text()
    decl = {}
    for m in re.finditer(r"^\s*(reg|wire)\s*(?:\[(.+?):0\])?\s*([\w, ]+);", text, re.M):
        for n in m.group(3).split(","):
            decl[n.strip()] = _width(m.group(2))
    assert {n: decl[n] for n in decl if n in {p.name for p in PORTS}} == {p.name: p.width for p in PORTS}
    fm = re.search(r"\$from_myhdl\(([^)]*)\)", text).group(1)
    tm = re.search(r"\$to_myhdl\(([^)]*)\)", text).group(1)
    assert [n.strip() for n in fm.split(",")] == [p.name for p in PORTS if p.direction == "in"]
    assert [n.strip() for n in tm.split(",")] == [p.name for p in PORTS if p.direction == "out"]


def test_verilator_harness_uses_every_port():
    text = (TB / "tb_lutzip_core.cpp").read_text() + (TB / "tb_lutzip_common.h").read_text()
    used = set(re.findall(r"top->(\w+)", text)) - {"eval", "final"}
    assert used == {p.name for p in PORTS}


def test_core_params_checked_in_one_place():
    assert CoreParams.make({"L": 6}, STEP="onehot").as_dict()["STEP"] == "onehot"
    for bad, what in ((dict(L=13), "L=13"), (dict(L=0), "L=0"), (dict(W=12), "W=12"), (dict(LUT3_DEPTH=5000),
                      "LUT3_DEPTH=5000"), (dict(FRONT="wide"), "FRONT='wide'"), (dict(LUT1_RAM="ff"), "LUT1_RAM"),
                      (dict(STEP=1), "STEP=1"), (dict(LANES=4), "LANES")):
        with pytest.raises(UnsupportedError, match=re.escape(what)):
            CoreParams.make(**bad)


# ----------------------------------------------------------------------------------------- build cache
def test_cache_key_follows_every_source_file(monkeypatch, tmp_path):
    """Editing a file in a sub-folder of the hdl package (here: a copy of it) changes the build key."""
    import lutzip.hdl as hdl
    src = Path(hdl.__file__).resolve().parent
    files = [("lutzip.hdl", p.relative_to(src).as_posix(), tmp_path / p.relative_to(src))
             for p in sorted(src.rglob("*.py")) if "__pycache__" not in p.parts]
    for _, _, dst in files:
        dst.parent.mkdir(parents=True, exist_ok=True)
    for (_, rel, dst) in files:
        dst.write_bytes((src / rel).read_bytes())
    monkeypatch.setattr(cache, "source_files", lambda: files)
    S._SOURCES.clear()
    p = CoreParams()
    k0 = S.build_key("verilog", p)
    assert S.build_key("verilog", p) == k0
    assert S.build_key("verilog", CoreParams(STEP="onehot")) != k0
    deep = next(dst for _, rel, dst in files if rel.count("/") >= 2)   # e.g. fronts/window/bit_window.py
    deep.write_text(deep.read_text() + "\n# edited\n")
    with pytest.raises(S.SimulationError, match="changed on disk"):
        S.build_key("verilog", p)        # sources edited since the first conversion of this process
    S._SOURCES.clear()
    assert S.build_key("verilog", p) != k0
    S._SOURCES.clear()


# ------------------------------------------------------------------------------------------------ model
def test_model_follows_the_table_writes():
    """Writes beyond the tables are ignored, the LUT3 size is clipped, a short LUT3 gives ERR_LUT3_RANGE."""
    from lutzip.codec import bitstream as bs
    from lutzip.codec.tables import LUT, ClassSpec, TableSet
    ts = TableSet(16, [ClassSpec(1, LUT, 1, 0), ClassSpec(1, LUT, 1, 2)], np.array([5, 6, 7, 8], np.uint16))
    w = np.array([5, 6, 7, 8] * 10, np.uint16)
    pay, sw = bs.encode_stripes(w, ts, 20)
    st = M.split_stripes(pay, sw)
    ops = M.table_ops(ts)
    assert M.expected_outputs(st, ops)[:, 0].tolist() == w.tolist()
    noise = ops + [(0, 4095, 0), (1, 99, 0), (2, 4095, 0)]
    assert np.array_equal(M.expected_outputs(st, noise), M.expected_outputs(st, ops))
    short = M.expected_outputs(st, M.table_ops(ts, n_lut3=2))
    assert short[short[:, 2] == 1, 0].tolist() == [bs.ERR_LUT3_RANGE] * 2
    assert M.expected_outputs(st, ops[:-1] + [(M.SEL_CONFIG, 0, 9000)], LUT3_DEPTH=4)[:, 0].tolist() == w.tolist()
    bad = [np.array([0x12345678, 1], np.uint32)] + st
    assert M.expected_outputs(bad, ops)[0].tolist() == [bs.ERR_BAD_HEADER, 1, 1]


def test_stimulus_knobs():
    rng = np.random.default_rng(0)
    pk = [[0x4C5A0000 | 99] + [int(x) for x in rng.integers(0, 2**32, 60, dtype=np.uint64)]]
    vec = Vectors.from_packets(pk * 20, [])
    st = S.make_stimulus(vec, in_gap=0.5, out_stall=0.25, seed=1)
    gaps = sum(c[1] for c in st.commands if c[0] == "I") - 2   # minus the idle cycles after the tables
    assert 0.8 * vec.n_in < gaps < 1.2 * vec.n_in             # mean in_gap / (1 - in_gap) idle cycles per word
    assert 0.2 < 1 - sum(st.ready) / len(st.ready) < 0.3       # m_axis_tready low in out_stall of the cycles
    calm = S.make_stimulus(vec)
    assert not all(st.ready) and all(calm.ready)
    assert calm.stream_start() == 4 + 2 and sum(1 for c in calm.commands if c[0] == "I") == 1
    with pytest.raises(S.SimulationError, match="out_stall"):
        S.make_stimulus(vec, out_stall=1.0)


# ---------------------------------------------------------------------------------------------- the CLI
def _fresh(code, *args):
    """Run ``code`` in a new Python process (PYTHONHASHSEED=0: MyHDL's converted text is then reproducible;
    in one process it depends on what was elaborated before)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, capture_output=True, timeout=600)


_CLI = "import sys; from lutzip.cli import main; sys.exit(main(sys.argv[1:]))"


def _text(path):
    return re.sub(r"(?m)^// (Date|File):.*$", "", Path(path).read_text())


def test_cli_convert_builds_the_synth_cores(tmp_path, capsys):
    """`lutzip hdl convert --step onehot` and `--target ice40-hx8k` give exactly the core that `lutzip hdl synth
    --target ice40-hx8k` builds (text-identical Verilog); without them, another core."""
    from lutzip.cli import main
    from lutzip.hdl.flows.synth import core_params
    _fresh("import sys; from lutzip.hdl.flows.convert import convert_core; "
           "from lutzip.hdl.flows.synth import core_params; "
           "convert_core(sys.argv[1], 'verilog', **core_params('ice40-hx8k').as_dict())", str(tmp_path / "ref"))
    for d, extra in (("a", ["--step", "onehot"]), ("b", ["--target", "ice40-hx8k"]), ("c", [])):
        _fresh(_CLI, "hdl", "convert", "--out", str(tmp_path / d), "--hdl", "verilog", *extra)
    ref = _text(tmp_path / "ref" / "decoder_core.v")
    assert _text(tmp_path / "a" / "decoder_core.v") == ref
    assert _text(tmp_path / "b" / "decoder_core.v") == ref
    assert _text(tmp_path / "c" / "decoder_core.v") != ref        # the adder step
    assert core_params("ecp5-85k").FRONT == "vector" and core_params("ice40-up5k").STEP == "adder"
    assert main(["hdl", "convert", "--out", str(tmp_path / "d"), "--hdl", "verilog", "--L", "5", "--W", "8"]) == 0
    assert str(tmp_path / "d" / "decoder_core.v") in capsys.readouterr().out
    assert "output [7:0] m_axis_tdata" in (tmp_path / "d" / "decoder_core.v").read_text()
    with pytest.raises(SystemExit):
        main(["hdl", "convert", "--out", str(tmp_path / "e"), "--step", "sideways"])


def test_cli_bench_json(capsys):
    """`lutzip hdl bench --sim myhdl` on small streams: bit-exact, about one weight per cycle, JSON keys."""
    from lutzip.cli import main
    assert main(["hdl", "bench", "--sim", "myhdl", "--n", "600", "--stripe", "200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["streams"]) == {"residual_int16", "zero_run_int16", "lut_int8"}
    for name, r in doc["streams"].items():
        assert r["bit_exact"] and r["weights"] == 600, (name, r)
        assert r["weights_per_cycle"] > 0.95, (name, r)
    with pytest.raises(SystemExit):
        main(["hdl", "bench", "--n", "1"])
