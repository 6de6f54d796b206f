"""The virtual board's structure and build cache, without building a simulator: the chooser, the back ends on
one base (no import cycle), one cache (``lutzip.cache``) keyed by every source and the parameters."""
import ast
import shutil
from pathlib import Path

import pytest

import lutzip.cache as cache
import lutzip.vboard as vboard
from lutzip.errors import LutzError
from lutzip.firmware.engine.proto_engine import get_core
from lutzip.vboard import base, ghdl, verilator

HOST = Path(vboard.__file__).resolve().parent


def _imports(path):
    """Every module a source file imports (``import x`` and ``from x import y``), anywhere in the file."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_base_imports_no_backend_and_backends_not_each_other():
    assert not {m for m in _imports(HOST / "base.py") if m.startswith("lutzip.vboard")}
    for mod, other in (("verilator", "ghdl"), ("ghdl", "verilator")):
        mine = {m for m in _imports(HOST / f"{mod}.py") if m.startswith("lutzip.vboard")}
        assert all(m.startswith("lutzip.vboard.base") for m in mine - {"lutzip.vboard", "lutzip.vboard.VirtualBoard"})
        assert not any(m.startswith(f"lutzip.vboard.{other}") for m in mine), mine


def test_chooser_picks_the_backend_and_checks_its_arguments():
    vb = vboard.VirtualBoard()
    assert isinstance(vb, verilator.VerilatorBoard) and vb.hdl == "verilog" and vb.mode == "fast"
    assert vb.params == base.DEFAULT_PARAMS["fast"] and vb.port is None and not vb.alive()
    vg = vboard.VirtualBoard(hdl="vhdl", mode="pin", params={"RING_DEPTH": 512})
    assert isinstance(vg, ghdl.GhdlBoard) and isinstance(vg, base.SimBoard)
    assert vg.params["FAST_CRC"] is False and vg.params["CLK_HZ"] // vg.params["BAUD"] == 4
    assert vg.params["RING_DEPTH"] == 512
    assert base.DEFAULT_PARAMS["pin"]["CLK_HZ"] == 48_000_000     # the back end's defaults are its own copy
    for kw, word in (({"hdl": "systemc"}, "--hdl 'systemc'"), ({"mode": "turbo"}, "--mode 'turbo'")):
        with pytest.raises(base.VBoardError, match=word) as e:
            vboard.VirtualBoard(**kw)
        assert isinstance(e.value, LutzError) and "\n" not in str(e.value)


def test_old_import_path_still_gives_the_chooser():
    from lutzip.vboard.verilator import VirtualBoard
    assert VirtualBoard is vboard.VirtualBoard
    with pytest.raises(AttributeError):
        verilator.NoSuchThing  # noqa: B018


def _key(mode="fast", params=None, core="real", extra=("v5",)):
    return base.build_dir("verilator", mode, dict(base.DEFAULT_PARAMS[mode], **(params or {})),
                          get_core(core), *extra)


def test_build_key_depends_on_parameters_and_is_stable():
    a = _key()
    assert a == _key() and a.name.startswith("verilator-")
    assert a.parent == cache.cache_dir("vboard")
    others = {_key(params={"RING_DEPTH": 1024}), _key(params={"FAST_CRC": False}), _key(mode="pin"),
              _key(core="stub"), _key(extra=("v6",))}
    assert len(others) == 5 and a not in others
    assert base.build_dir("ghdl", "fast", base.DEFAULT_PARAMS["fast"], get_core("real"), "v5").name != a.name


def test_every_harness_and_subfolder_source_feeds_the_key():
    rel = {(pkg, r) for pkg, r, _ in cache.source_files()}
    for need in (("lutzip.firmware", "csrc/vboard_main.cpp"), ("lutzip.firmware", "tb/vboard_tb.vhd"),
                 ("lutzip.firmware", "tb/vboard_pkg.vhd"), ("lutzip.hdl", "core/decoder_core.py")):
        assert need in rel, need


def test_edited_source_in_a_subfolder_gives_a_new_key(tmp_path, monkeypatch):
    files = []
    for pkg, r, p in cache.source_files():
        if r in ("csrc/vboard_main.cpp", "core/decoder_core.py", "tb/vboard_tb.vhd"):
            q = tmp_path / pkg / r
            q.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, q)
            files.append((pkg, r, q))
    assert len(files) == 3
    monkeypatch.setattr(cache, "source_files", lambda: list(files))
    before = _key()
    assert _key() == before
    q = next(q for _, r, q in files if r == "tb/vboard_tb.vhd")
    q.write_text(q.read_text() + "\n-- edited\n")
    assert _key() != before


def test_cache_location_follows_lutzip_cache_then_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv("LUTZIP_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _key().parent == tmp_path / "xdg" / "lutzip" / "vboard"
    monkeypatch.setenv("LUTZIP_CACHE", str(tmp_path / "mine"))
    assert _key().parent == tmp_path / "mine" / "vboard"
    monkeypatch.delenv("LUTZIP_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")      # ignored, as the XDG specification says
    assert cache.cache_root() == tmp_path / "home" / ".cache" / "lutzip"


def test_atomic_dir_keeps_no_half_build_and_reuses_a_finished_one(tmp_path):
    final = tmp_path / "b"
    calls = []

    def broken(tmp):
        (tmp / "half").write_text("x")
        raise RuntimeError("compiler crashed")

    with pytest.raises(RuntimeError):
        cache.atomic_dir(final, broken)
    assert not final.exists() and list(tmp_path.iterdir()) == []

    def good(tmp):
        calls.append(tmp)
        (tmp / "exe").write_text("ok")

    assert cache.atomic_dir(final, good) == final and (final / "exe").read_text() == "ok"
    cache.atomic_dir(final, good)
    assert len(calls) == 1


@pytest.fixture
def fake_tools(tmp_path, monkeypatch):
    """LUTZIP_CACHE in tmp_path, the simulators "installed", conversion and compilation recorded, not run."""
    monkeypatch.setenv("LUTZIP_CACHE", str(tmp_path / "cache"))
    log = []

    def fake_convert(top, hdl, path, params, core_fn):
        log.append(("convert", top, hdl, params.get("BAUD")))
        f = Path(path) / (top + (".v" if hdl == "verilog" else ".vhd"))
        f.write_text("-- converted\n")
        return str(f)

    class Done:
        returncode, stdout, stderr = 0, "", ""

    def fake_run(cmd, **kw):
        log.append(("run", cmd[0], cmd[1]))
        if "-o" in cmd:
            Path(cmd[cmd.index("-o") + 1]).write_text("exe")
        return Done()

    for mod in (verilator, ghdl):
        monkeypatch.setattr(mod, "convert_top", fake_convert)
        monkeypatch.setattr(mod.shutil, "which", lambda name: "/usr/bin/" + name)
        monkeypatch.setattr(mod.subprocess, "run", fake_run)
    monkeypatch.setattr(verilator, "tool_version", lambda cmd: "fake 1.0")
    monkeypatch.setattr(ghdl, "tool_version", lambda cmd: "fake 1.0")
    return tmp_path / "cache" / "vboard", log


def test_verilator_build_goes_to_the_one_cache_once(fake_tools):
    root, log = fake_tools
    exe = verilator.build_verilator("fast", core="real")
    assert exe.parent.parent == root and exe.parent.name.startswith("verilator-") and exe.read_text() == "exe"
    n = len(log)
    assert [e[0] for e in log] == ["convert", "run"]
    assert verilator.build_verilator("fast", core="real") == exe and len(log) == n     # cached
    pin = verilator.build_verilator("pin", core="real")
    assert pin != exe and len(log) == n + 2
    assert [p.name for p in root.iterdir() if "." in p.name] == []                       # no temporary left


def test_ghdl_build_goes_to_the_one_cache_once(fake_tools):
    root, log = fake_tools
    p = ghdl.GhdlBoard.default_params("fast")
    d = ghdl.build_ghdl("fast", p, core="real")
    assert d.name == "work" and d.parent.parent == root and d.parent.name.startswith("ghdl-")
    assert {f.name for f in (d.parent / "src").iterdir()} >= {"proto_engine.vhd", "uart_top.vhd", *ghdl.TB_FILES}
    assert [e[:2] for e in log] == [("convert", "proto_engine"), ("convert", "uart_top"), ("run", "ghdl"),
                                    ("run", "ghdl")]
    n = len(log)
    assert ghdl.build_ghdl("fast", p, core="real") == d and len(log) == n
    assert ghdl.build_ghdl("fast", dict(p, RING_DEPTH=1024), core="real") != d


def test_missing_simulator_is_a_one_line_error(monkeypatch):
    for mod, fn in ((verilator, lambda: verilator.build_verilator("fast")),
                    (ghdl, lambda: ghdl.build_ghdl("fast", ghdl.GhdlBoard.default_params("fast")))):
        monkeypatch.setattr(mod.shutil, "which", lambda name: None)
        with pytest.raises(base.VBoardError, match="not installed") as e:
            fn()
        assert "\n" not in str(e.value)
