"""Run the decoder core in four simulators on one stimulus and compare the outputs bit for bit and cycle for cycle.

Levels (``SIMULATORS``):

``myhdl``
    the MyHDL description, simulated in pure Python;
``ghdl``
    the core converted to VHDL (:func:`lutzip.hdl.flows.convert.convert_core`), run by GHDL (``--std=08``)
    under the hand-written VHDL test bench ``tb/tb_lutzip_core.vhd``;
``icarus``
    the core converted to Verilog, run by Icarus Verilog and driven from Python through MyHDL's
    cosimulation VPI module (``tb/cosim_lutzip_core.v``);
``verilator``
    the converted Verilog compiled by Verilator (``-O2``) with the C++ harness ``tb/tb_lutzip_core.cpp``.

All four read the same *stimulus file* and write the same *output file*; every test bench implements the
cycle protocol below, so the outputs of two simulators must agree to the clock cycle, and the decoded words
must agree with the reference model :mod:`lutzip.hdl.flows.model` (vectors: :mod:`lutzip.hdl.flows.vectors`).
:func:`make_stimulus` is the one stimulus driver: reset, table writes, then the stripe words with random
source pauses (``in_gap``: the probability that ``s_axis_tvalid`` is held low in a cycle) and sink
backpressure (``out_stall``: the probability that ``m_axis_tready`` is low in a cycle).

Stimulus file (text, one item a line, ``#`` starts a comment line)::

    C <max_cycles> <drain>     header: give up after max_cycles; stop after drain quiet cycles at the end
    Y <hex8>                   sink tready pattern, 32 cycles a line (MSB = earliest cycle), repeated
    R <n>                      n cycles with rst = 1
    I <n>                      n idle cycles (source tvalid = 0: a gap)
    T <sel> <addr> <hex8>      one table write cycle (tbl_we = 1)
    S <hex8> <last>            one stripe word: tvalid = 1 until the core takes it (tvalid & tready)

Cycle protocol: at each rising edge ``k`` (k = 0, 1, ...) the test bench samples the core's outputs (the values
before the edge), writes ``O <data> <last> <user> <k>`` when ``m_axis_tvalid`` and its own ``m_axis_tready``
were 1 and ``E <code> <k>`` when ``err_valid`` was 1, finishes the current command (``S`` when ``tready``
was 1, ``R``/``I`` after n cycles, ``T`` after one) and drives the next command's values plus
``m_axis_tready = Y[(k+1) mod len(Y)]`` for cycle k+1. Once the commands are used up it stops after
``drain`` consecutive edges with ``m_axis_tvalid = 0`` and ``busy = 0`` (``Z <k>``), or at ``max_cycles``
(``X <k>``: timeout). All numbers in the output file are decimal.

:func:`run` is the one runner of the four simulators; what it runs is a *bench* (:class:`CoreBench`, the core;
:class:`lutzip.hdl.flows.lanes_sim.LanesBench`, the N-lane decoder): the converted design, its test benches and
its file formats. The Verilator harnesses share ``tb/tb_lutzip_common.h``, the VHDL benches ``tb/tb_lutzip_pkg.vhd``.

Converted HDL and simulator builds are kept in the build cache :func:`lutzip.cache.cache_dir` ``("hdl")``,
keyed by :func:`lutzip.cache.sources_hash` (every source of ``lutzip.hdl`` and ``lutzip.firmware``), the core
parameters and the tool versions.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lutzip import cache
from lutzip.errors import LutzError
from lutzip.hdl.core.ports import PORTS, CoreParams, core_signals
from lutzip.hdl.flows.convert import convert_core, core_kwargs
from lutzip.hdl.flows.vectors import Vectors

from lutzip.hdl.flows import SIMULATORS  # noqa: E402  (defined once, beside the package)
TB_DIR = Path(__file__).resolve().parent.parent / "tb"
MAX_READY_BITS = 4096
CLOCK_HALF = 5


class SimulationError(LutzError):
    """A simulator failed to build or run, reported an error, or the core did not give the expected words."""


# ==================================================================================================== stimulus
@dataclass
class Stimulus:
    """A stimulus: commands ``(kind, args...)``, the sink-ready pattern and the stop rules."""

    commands: list
    ready: list
    max_cycles: int
    drain: int = 16

    def stream_start(self) -> int:
        """The cycle in which the first stripe word is presented (reset, table writes and idle cycles before)."""
        k = 0
        for c in self.commands:
            if c[0] == "S":
                break
            k += c[1] if c[0] in ("R", "I") else 1
        return k

    def text(self) -> str:
        """The stimulus file's text."""
        out = ["# lutzip decoder-core stimulus v1", f"C {self.max_cycles} {self.drain}"] + ready_lines(self.ready)
        for cmd in self.commands:
            out.append("S %08x %d" % (cmd[1], cmd[2]) if cmd[0] == "S" else prefix_line(cmd))
        return "\n".join(out) + "\n"

    def write(self, path) -> Path:
        """Write the stimulus file to ``path``."""
        path = Path(path)
        path.write_text(self.text())
        return path

    @classmethod
    def read(cls, path) -> "Stimulus":
        """Parse a stimulus file, naming the line of any error."""
        cmds, ready, max_cycles, drain = [], [], None, 16
        for no, line in enumerate(Path(path).read_text().splitlines(), 1):
            f = line.split()
            if not f or f[0].startswith("#"):
                continue
            try:
                k = f[0]
                if k == "C":
                    max_cycles, drain = int(f[1]), int(f[2])
                elif parse_prefix_line(f, cmds, ready):
                    pass
                elif k == "S":
                    cmds.append(("S", int(f[1], 16), int(f[2])))
                else:
                    raise ValueError(f"unknown command {k!r}")
            except (IndexError, ValueError) as e:
                raise SimulationError(f"{path}, line {no}: bad stimulus line {line!r} ({e})") from None
        if max_cycles is None:
            raise SimulationError(f"{path}: no 'C' header line")
        return cls(cmds, ready or [1] * 32, max_cycles, drain)


def ready_lines(bits) -> list:
    """The ``Y`` lines of a stimulus file for the sink-ready pattern ``bits`` (32 cycles a line)."""
    bits = list(bits)
    return ["Y %08x" % int("".join(str(int(b)) for b in bits[i:i + 32]), 2) for i in range(0, len(bits), 32)]


def prefix_line(cmd) -> str:
    """A stimulus file's line for one ``R`` / ``I`` / ``T`` command."""
    return f"{cmd[0]} {cmd[1]}" if cmd[0] in ("R", "I") else "T %d %d %08x" % (cmd[1], cmd[2], cmd[3])


def parse_prefix_line(f, cmds: list, ready: list) -> bool:
    """Parse the fields ``f`` of a ``Y`` / ``R`` / ``I`` / ``T`` line into ``ready`` / ``cmds``; False for any
    other line (``ValueError`` / ``IndexError`` for a malformed one)."""
    k = f[0]
    if k == "Y":
        ready += [int(b) for b in format(int(f[1], 16), "032b")]
    elif k in ("R", "I"):
        n = int(f[1])
        if n < 1:
            raise ValueError("count must be >= 1")
        cmds.append((k, n))
    elif k == "T":
        cmds.append(("T", int(f[1]), int(f[2]), int(f[3], 16)))
    else:
        return False
    return True


def _probability(name, v):
    if not 0.0 <= float(v) < 1.0:
        raise SimulationError(f"{name}={v!r}: a probability in [0, 1)")
    return float(v)


def ready_pattern(rng, out_stall: float, ready_len: int = 1024) -> list:
    """The sink-ready pattern: all ready, or ``ready_len`` (rounded up to 32, at most :data:`MAX_READY_BITS`)
    seeded random cycles, each not ready with probability ``out_stall``, at least one ready."""
    out_stall = _probability("out_stall", out_stall)
    if out_stall <= 0.0:
        return [1] * 32
    ready_len = max(32, min(MAX_READY_BITS, -(-ready_len // 32) * 32))
    ready = [int(b) for b in (rng.random(ready_len) >= out_stall)]
    if not any(ready):
        ready[0] = 1
    return ready


def table_prefix(table_ops, reset_cycles: int = 4, table_gap: int = 2) -> list:
    """The commands before the stream: ``reset_cycles`` of reset, one ``T`` per table write, ``table_gap`` idle
    cycles."""
    cmds = [("R", reset_cycles)] + [("T", s, a, d) for s, a, d in table_ops]
    if table_gap:
        cmds.append(("I", table_gap))
    return cmds


def make_stimulus(vec: Vectors, *, in_gap: float = 0.0, out_stall: float = 0.0, ready_len: int = 1024,
                  seed: int = 0, reset_cycles: int = 4, drain: int = 16, table_gap: int = 2,
                  reset_after_tables: int = 0) -> Stimulus:
    """The stimulus for ``vec``: reset, table writes, then the stripe words.

    Parameters
    ----------
    vec : Vectors
        Table writes and packets.
    in_gap : float
        Probability that ``s_axis_tvalid`` is held low in a cycle in which the source could present a word
        (so a pause before a word lasts ``g`` cycles with probability ``in_gap**g * (1 - in_gap)``).
    out_stall : float
        Probability that ``m_axis_tready`` is low in a cycle (a seeded random pattern of ``ready_len``
        cycles, repeated).
    seed : int
        Seed of both random patterns.
    reset_cycles, table_gap : int
        Cycles of ``rst`` at the start; idle cycles after the table writes.
    drain : int
        The run ends after this many quiet cycles once every command is done.
    reset_after_tables : int
        If > 0: ``rst`` for that many cycles between the table writes and the stream (tables survive).
    """
    in_gap = _probability("in_gap", in_gap)
    rng = np.random.default_rng(seed)
    ready = ready_pattern(rng, out_stall, ready_len)
    cmds = table_prefix(vec.table_ops, reset_cycles, table_gap)
    if reset_after_tables:
        cmds.append(("R", reset_after_tables))
    n_in = vec.n_in
    pauses = (rng.geometric(1.0 - in_gap, n_in) - 1) if in_gap > 0 else np.zeros(n_in, np.int64)
    j = 0
    for s in vec.stripes:
        for i, w in enumerate(s):
            g = int(pauses[j])
            j += 1
            if g:
                cmds.append(("I", g))
            cmds.append(("S", int(w), int(i == len(s) - 1)))
    slow = len(ready) / sum(ready)
    work = reset_cycles + len(vec.table_ops) + table_gap + reset_after_tables + int(pauses.sum()) + n_in \
        + len(vec.expected)
    max_cycles = int(4 * work * slow) + 64 * len(vec.stripes) + 2000
    return Stimulus(cmds, ready, max_cycles, drain)


# ===================================================================================================== outputs
@dataclass
class Outputs:
    """One simulation's output: ``words`` rows ``(data, last, user, cycle)``, ``errors`` rows ``(code, cycle)``."""

    words: np.ndarray
    errors: np.ndarray
    end_cycle: int
    timed_out: bool
    sim: str = ""
    seconds: float = 0.0
    notes: list = field(default_factory=list)   # simulator warnings worth a look (e.g. GHDL metavalues)

    @property
    def rows(self) -> list:
        """The output words as ``(data, last, user)`` tuples of ints."""
        return [tuple(int(x) for x in r) for r in self.words[:, :3]]

    @property
    def out_cycles(self) -> np.ndarray:
        """The cycle of each output word."""
        return self.words[:, 3]

    @property
    def error_codes(self) -> list:
        """The code of each ``err_valid`` pulse."""
        return [int(c) for c in self.errors[:, 0]]

    @property
    def cycles_per_second(self) -> float:
        return self.end_cycle / self.seconds if self.seconds > 0 else float("nan")

    @classmethod
    def read(cls, path, sim="") -> "Outputs":
        """Parse an output file of simulator ``sim``."""
        words, errors, end, timed_out = read_output_file(path, sim, lambda f: [int(x) for x in f[1:5]],
                                                         lambda f: [int(x) for x in f[1:3]])
        return cls(np.array(words, np.int64).reshape(-1, 4), np.array(errors, np.int64).reshape(-1, 2), end,
                   timed_out, sim)


def read_output_file(path, sim: str, word, error) -> tuple:
    """The rows of an output file: ``(words, errors, end_cycle, timed_out)``, ``word(fields)`` / ``error(fields)``
    parsing an ``O`` / ``E`` line; a :class:`SimulationError` names a missing file, a bad line or a missing end."""
    words, errors, end, timed_out = [], [], None, False
    path = Path(path)
    if not path.exists():
        raise SimulationError(f"{sim}: no output file {path}")
    for no, line in enumerate(path.read_text().splitlines(), 1):
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "O":
                words.append(word(f))
            elif f[0] == "E":
                errors.append(error(f))
            elif f[0] in "ZX":
                end, timed_out = int(f[1]), f[0] == "X"
            else:
                raise ValueError(f[0])
        except (ValueError, IndexError):
            raise SimulationError(f"{sim}: {path}, line {no}: bad output line {line!r}") from None
    if end is None:
        raise SimulationError(f"{sim}: output file {path} has no end line: the simulation did not finish")
    return words, errors, end, timed_out


def first_difference(outputs: Outputs, expected: np.ndarray) -> str | None:
    """``None`` if the outputs carry exactly the expected words; else a description of the first difference.

    Compares ``(data, last, user)`` of every word, the word count, and that every marker word (user = 1) came
    with an ``err_valid`` pulse of the same code.
    """
    got = outputs.words[:, :3]
    exp = np.asarray(expected, np.int64).reshape(-1, 3)
    tag = outputs.sim or "simulation"
    if outputs.timed_out:
        prefix = f"{tag}: timed out at cycle {outputs.end_cycle} after {len(got)} of {len(exp)} words; "
    else:
        prefix = f"{tag}: "
    n = min(len(got), len(exp))
    bad = np.nonzero(np.any(got[:n] != exp[:n], axis=1))[0]
    if len(bad):
        i = int(bad[0])
        return (prefix + f"word {i} (cycle {int(outputs.words[i, 3])}): got data={got[i, 0]:#x} last={got[i, 1]} "
                f"user={got[i, 2]}, expected data={exp[i, 0]:#x} last={exp[i, 1]} user={exp[i, 2]}")
    if len(got) != len(exp):
        what = f"extra word {got[n].tolist()}" if len(got) > n else f"missing word {exp[n].tolist()}"
        return prefix + f"{len(got)} words out, {len(exp)} expected (first {what} at index {n})"
    markers = got[got[:, 2] == 1, 0]
    if len(markers) != len(outputs.errors) or np.any(markers != outputs.errors[:, 0]):
        return prefix + (f"error markers {markers.tolist()[:8]} but err_valid pulses "
                         f"{outputs.errors[:, 0].tolist()[:8]}")
    if outputs.timed_out:
        return prefix + "all words out but the core stayed busy"
    return None


def assert_matches(outputs: Outputs, expected: np.ndarray):
    """Raise :class:`SimulationError` (naming the first difference) unless the outputs are ``expected``."""
    msg = first_difference(outputs, expected)
    if msg:
        raise SimulationError(msg)


def first_cycle_difference(a: Outputs, b: Outputs) -> str | None:
    """``None`` if two simulations produced the same words and error pulses in the same cycles."""
    for what, x, y in (("word", a.words, b.words), ("error pulse", a.errors, b.errors)):
        n = min(len(x), len(y))
        bad = np.nonzero(np.any(x[:n] != y[:n], axis=1))[0]
        if len(bad):
            i = int(bad[0])
            return f"{what} {i}: {a.sim} {x[i].tolist()} vs {b.sim} {y[i].tolist()}"
        if len(x) != len(y):
            return f"{len(x)} {what}s from {a.sim}, {len(y)} from {b.sim}"
    if a.end_cycle != b.end_cycle:
        return f"end cycle {a.end_cycle} ({a.sim}) vs {b.end_cycle} ({b.sim})"
    return None


# ============================================================================================ build cache
_SOURCES = {}


def _sources_key() -> str:
    """:func:`lutzip.cache.sources_hash` of the sources, checked against its value at the first conversion.

    MyHDL re-reads the source files when it converts, so sources edited since this process imported them
    would give a mix of old and new code: that is reported as an error instead.
    """
    h = cache.sources_hash()
    first = _SOURCES.setdefault("first", h)
    if h != first:
        raise SimulationError("the HDL sources changed on disk since this process first converted them; "
                              "run again in a new process")
    return h


def _core_id(core) -> tuple:
    """What identifies ``core`` beyond the package sources: ``()`` for the decoder core; for another block
    (a test's stand-in) its name, bound keywords and a hash of its source file."""
    if core is None:
        return ()
    kw = {}
    base = core
    while isinstance(base, functools.partial):
        kw = {**base.keywords, **kw}
        base = base.func
    src = getattr(core, "srcfile", None) or getattr(base, "srcfile", None) or inspect.getsourcefile(
        inspect.unwrap(getattr(base, "func", base)))
    digest = hashlib.sha256(Path(src).read_bytes()).hexdigest()[:16]
    return (getattr(base, "__name__", getattr(base, "name", "?")), sorted(kw.items()), Path(src).name, digest)


def build_key(what: str, params: CoreParams, core=None, *extra) -> str:
    """The cache key of one build (``what``: ``"vhdl"``, ``"verilog"``, ``"verilator"`` ...) of the core."""
    _sources_key()
    return cache.sources_hash(what, params.tag(), _core_id(core), *extra)


def convert(hdl: str, params=None, core=None, build_dir=None) -> Path:
    """The core converted to ``hdl`` (``"vhdl"`` / ``"verilog"``), cached; returns the directory holding it.

    Parameters
    ----------
    hdl : str
        ``"vhdl"`` or ``"verilog"``.
    params : dict or CoreParams, optional
        Core parameters (default: the core's defaults).
    core : myhdl block, optional
        A stand-in with the core's ports (default: the decoder core).
    build_dir : str or Path, optional
        Cache folder (default ``lutzip.cache.cache_dir("hdl")``).
    """
    h = hdl.lower()
    p = CoreParams.make(params)
    root = Path(build_dir) if build_dir else cache.cache_dir("hdl")
    key = f"{h}-{build_key(h, p, core)}"

    def build(tmp):
        try:
            convert_core(tmp, h, core=core, **p.as_dict())
        except LutzError:
            raise
        except Exception as e:
            raise SimulationError(f"MyHDL conversion to {hdl} failed: {type(e).__name__}: {e}") from e

    return cache.atomic_dir(root / key, build)


def _run_cmd(cmd, log: Path, timeout: float, cwd=None, what=""):
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
    except FileNotFoundError:
        raise SimulationError(f"{what}: {cmd[0]} is not installed") from None
    except subprocess.TimeoutExpired as e:
        log.write_text((e.stdout or "") if isinstance(e.stdout, str) else "")
        raise SimulationError(f"{what}: {' '.join(map(str, cmd[:3]))} ... did not finish in {timeout:.0f} s "
                              f"(log {log})") from None
    with open(log, "a") as f:
        f.write(f"$ {' '.join(map(str, cmd))}\n{r.stdout}\n")
    if r.returncode != 0:
        tail = "\n".join(r.stdout.splitlines()[-25:])
        raise SimulationError(f"{what}: {Path(str(cmd[0])).name} exited with {r.returncode} (log {log}):\n{tail}")
    return r.stdout, time.perf_counter() - t0


def available(sim: str) -> str | None:
    """``None`` if ``sim`` can run here, else the reason it cannot."""
    need = {"myhdl": [], "ghdl": ["ghdl"], "icarus": ["iverilog", "vvp", "iverilog-vpi"],
            "verilator": ["verilator", "make", "g++"]}[sim]
    missing = [t for t in need if shutil.which(t) is None]
    return f"{', '.join(missing)} not found on PATH" if missing else None


# ============================================================================================== the runners
def _build_vpi(root: Path) -> Path:
    """``myhdl.vpi`` built with iverilog-vpi from the sources MyHDL ships (cached)."""
    import myhdl
    cands = [Path(sys.prefix) / "share/myhdl/cosimulation/icarus",
             Path(myhdl.__file__).resolve().parents[4] / "share/myhdl/cosimulation/icarus"]
    try:
        from importlib.metadata import files
        for f in files("myhdl") or []:
            if str(f).endswith("cosimulation/icarus/myhdl.c"):
                cands.insert(0, Path(f.locate()).resolve().parent)
    except Exception:  # pragma: no cover - metadata missing
        pass
    src = next((c for c in cands if (c / "myhdl.c").exists() and (c / "myhdl_table.c").exists()), None)
    if src is None:
        raise SimulationError("MyHDL's Icarus cosimulation sources (share/myhdl/cosimulation/icarus/myhdl.c) "
                              "are not installed")
    h = hashlib.sha256((src / "myhdl.c").read_bytes() + (src / "myhdl_table.c").read_bytes()).hexdigest()[:12]

    def build(tmp):
        _run_cmd(["iverilog-vpi", str(src / "myhdl.c"), str(src / "myhdl_table.c")], tmp / "build.log", 300,
                 cwd=tmp, what="icarus vpi")
        if not (tmp / "myhdl.vpi").exists():
            raise SimulationError("iverilog-vpi did not produce myhdl.vpi")

    return cache.atomic_dir(root / f"vpi-{h}", build) / "myhdl.vpi"


VERILATOR_FLAGS = ("-O2", "--x-assign", "fast", "--x-initial", "fast", "-Wno-fatal", "--no-timing")


class CoreBench:
    """The design a simulator runs and its test benches: here the decoder core (the default of :func:`run`).

    :func:`run` needs, besides the simulator: the converted design (``top``.v / .vhd, cached), the hand-written
    benches ``tb/tb_lutzip_<name>.vhd`` and ``tb/tb_lutzip_<name>.cpp``, the Icarus wrapper (module
    ``cosim_lutzip_<name>``), the Python bench (MyHDL and Icarus runs) and the output file's reader. A bench for
    another design (:class:`lutzip.hdl.flows.lanes_sim.LanesBench`, the N-lane decoder) provides the same.

    Parameters
    ----------
    params : CoreParams
        The core parameters.
    core : myhdl block, optional
        A stand-in with the core's ports (default: the decoder core).
    """

    name = "core"            # tb_lutzip_<name>, cosim_lutzip_<name>
    top = "decoder_core"     # the converted design's module / entity and file stem
    cache_prefix = ""        # of the simulator builds' cache folders
    outputs = Outputs        # the output file's reader

    def __init__(self, params: CoreParams, core=None):
        self.params, self.core = params, core

    def convert(self, hdl: str, root: Path) -> Path:
        """The folder holding the converted design (cached)."""
        return convert(hdl, self.params, self.core, root)

    def key(self, what: str, *extra) -> str:
        """The cache key of one build."""
        return build_key(what, self.params, self.core, *extra)

    def vhdl_bench(self, workdir: Path) -> Path:
        """The VHDL test bench file."""
        return TB_DIR / "tb_lutzip_core.vhd"

    def ghdl_generics(self) -> list:
        """GHDL ``-g`` options besides ``STIM`` and ``OUTF``."""
        return [f"-gW={self.params.W}"]

    def cosim_wrapper(self, workdir: Path) -> tuple:
        """The Icarus wrapper file and the iverilog options it needs."""
        return TB_DIR / "cosim_lutzip_core.v", [f"-Pcosim_lutzip_core.W={self.params.W}"]

    def cflags(self) -> str:
        """The C++ compiler flags of the Verilator harness."""
        return "-O2"

    def python_bench(self, cosim_cmd, stim_path: Path, out_path: Path):
        """Simulate the MyHDL core (``cosim_cmd`` None) or the cosimulation ``cosim_cmd`` under the Python bench."""
        core = self.core
        if cosim_cmd is None and core is None:
            from lutzip.hdl.core.decoder_core import decoder_core as core
        kw = core_kwargs(self.params, core) if cosim_cmd is None else {}
        stim = Stimulus.read(stim_path)
        run_python_bench(core, kw, lambda: core_signals(self.params.W), _SAMPLED, lambda out: _Driver(stim, out),
                         cosim_cmd, out_path)


def _verilator_build(vdir: Path, root: Path, bench) -> Path:
    """The Verilator executable of the converted design in ``vdir`` with the bench's C++ harness (cached)."""
    top = bench.top
    cpp = TB_DIR / f"tb_lutzip_{bench.name}.cpp"
    try:
        ver = subprocess.run(["verilator", "--version"], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        raise SimulationError("verilator is not installed") from None
    flags = [*VERILATOR_FLAGS, "-CFLAGS", bench.cflags(), "-j", "2"]
    key = bench.key("verilator", ver, flags)

    def build(tmp):
        shutil.copy(vdir / f"{top}.v", tmp / f"{top}.v")
        shutil.copy(cpp, tmp / cpp.name)
        shutil.copy(TB_DIR / "tb_lutzip_common.h", tmp / "tb_lutzip_common.h")   # what both harnesses share
        _run_cmd(["verilator", "--cc", "--exe", "--build", *flags, "--top-module", top,
                  "-Mdir", "obj", "-o", "Vtb", f"{top}.v", cpp.name],
                 tmp / "build.log", 1800, cwd=tmp, what="verilator build")
        if not (tmp / "obj" / "Vtb").exists():
            raise SimulationError(f"verilator build produced no executable (log {tmp / 'build.log'})")

    return cache.atomic_dir(root / f"{bench.cache_prefix}verilator-{key}", build) / "obj" / "Vtb"


_GHDL_BAD = re.compile(r"(?i)(error|failure|bound check|overflow|\bfatal\b)")


def run(sim: str, stimulus, workdir, params=None, core=None, build_dir=None, timeout: float = 3600,
        bench=None):
    """Run ``stimulus`` through the core (or ``bench``'s design) in ``sim``.

    Parameters
    ----------
    sim : str
        One of :data:`SIMULATORS`.
    stimulus : Stimulus or path
        The stimulus (or a stimulus file; any object with ``write(path)``: the bench's stimulus).
    workdir : str or Path
        Receives the stimulus, output and log files.
    params : dict or CoreParams, optional
        Core parameters (e.g. ``vec.params``, or ``{**vec.params, "FRONT": "vector"}``); not used with ``bench``.
    core : myhdl block, optional
        A stand-in with the core's ports (default: the decoder core); not used with ``bench``.
    build_dir : str or Path, optional
        Where converted HDL and builds are cached (default ``lutzip.cache.cache_dir("hdl")``).
    timeout : float
        Seconds a simulator may run.
    bench : CoreBench-like, optional
        The design and its test benches (default ``CoreBench(params, core)``).

    Returns
    -------
    Outputs
        The parsed output file (``bench.outputs``); :class:`SimulationError` if the simulator fails or reports
        an error.
    """
    if sim not in SIMULATORS:
        raise SimulationError(f"unknown simulator {sim!r}: one of {', '.join(SIMULATORS)}")
    why = available(sim)
    if why:
        raise SimulationError(f"{sim}: {why}")
    if bench is None:
        bench = CoreBench(CoreParams.make(params), core)
    notes = []
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    root = Path(build_dir) if build_dir else cache.cache_dir("hdl")
    if hasattr(stimulus, "write"):
        stim_path = stimulus.write(workdir / "stimulus.txt")
    else:
        stim_path = Path(stimulus).resolve()
    out_path = workdir / f"out_{sim}.txt"
    log = workdir / f"{sim}.log"
    log.write_text("")
    if out_path.exists():
        out_path.unlink()

    if sim == "myhdl":
        t0 = time.perf_counter()
        bench.python_bench(None, stim_path, out_path)
        dt = time.perf_counter() - t0

    elif sim == "ghdl":
        vdir = bench.convert("vhdl", root)
        gdir = workdir / "ghdl-work"
        gdir.mkdir(exist_ok=True)
        srcs = sorted(vdir.glob("pck_myhdl_*.vhd")) + [vdir / f"{bench.top}.vhd", TB_DIR / "tb_lutzip_pkg.vhd",
                                                        bench.vhdl_bench(workdir)]   # the benches share the package
        _run_cmd(["ghdl", "-a", "--std=08", f"--workdir={gdir}", *map(str, srcs)], log, 600, what="ghdl analyse")
        text, dt = _run_cmd(["ghdl", "--elab-run", "--std=08", f"--workdir={gdir}", f"tb_lutzip_{bench.name}",
                             f"-gSTIM={stim_path}", f"-gOUTF={out_path}", *bench.ghdl_generics(),
                             "--assert-level=error", "--ieee-asserts=disable-at-0"],
                            log, timeout, what="ghdl run")
        bad = [ln for ln in text.splitlines() if _GHDL_BAD.search(ln)]
        if bad:
            raise SimulationError(f"ghdl reported: {bad[0]} (log {log})")
        notes = [ln for ln in text.splitlines() if "warning" in ln]

    elif sim == "icarus":
        vdir = bench.convert("verilog", root)
        vpi = _build_vpi(root)
        vvp = workdir / "cosim.vvp"
        wrapper, opts = bench.cosim_wrapper(workdir)
        _run_cmd(["iverilog", "-g2005", "-o", str(vvp), "-s", f"cosim_lutzip_{bench.name}", *opts,
                  str(vdir / f"{bench.top}.v"), str(wrapper)], log, 600, what="iverilog")
        xlog = workdir / "icarus_x.log"
        if xlog.exists():
            xlog.unlink()
        t0 = time.perf_counter()
        bench.python_bench(f"vvp -n -m {vpi.with_suffix('')} {vvp} +xlog={xlog}", stim_path, out_path)
        dt = time.perf_counter() - t0
        xs = xlog.read_text().splitlines() if xlog.exists() else ["no x/z check log: the wrapper did not run"]
        if xs:
            raise SimulationError(f"icarus: {xs[0]} ({len(xs)} x/z reports, {xlog})")

    else:
        vdir = bench.convert("verilog", root)
        exe = _verilator_build(vdir, root, bench)
        _, dt = _run_cmd([str(exe), str(stim_path), str(out_path)], log, timeout, what="verilator run")

    res = bench.outputs.read(out_path, sim)
    res.seconds = dt
    res.notes = notes
    return res


def run_all(vec: Vectors, stimulus: Stimulus, workdir, sims=SIMULATORS, core=None, build_dir=None) -> dict:
    """Run one stimulus in several simulators; returns ``{sim: Outputs}``."""
    return {s: run(s, stimulus, Path(workdir) / s, vec.params, core, build_dir) for s in sims}



def check(vec: Vectors, sim: str = "myhdl", *, params=None, core=None, workdir=None, build_dir=None,
          **stimulus) -> Outputs:
    """Run ``vec`` in ``sim`` under :func:`make_stimulus` ``(vec, **stimulus)`` and compare with the model.

    Parameters
    ----------
    vec : Vectors
        The vectors; ``vec.params`` are the core parameters, updated by ``params``.
    sim : str
        One of :data:`SIMULATORS`.
    workdir : str or Path, optional
        Keep the run files here (default: a temporary directory, removed afterwards).
    **stimulus
        :func:`make_stimulus` options (``in_gap``, ``out_stall``, ``seed``, ``reset_after_tables`` ...).

    Returns
    -------
    Outputs
        The outputs; :class:`SimulationError` naming the first difference if they are not the expected ones.
    """
    stim = make_stimulus(vec, **stimulus)
    p = {**vec.params, **(params or {})}
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="lutzip-sim-") as tmp:
            out = run(sim, stim, tmp, p, core, build_dir)
    else:
        out = run(sim, stim, workdir, p, core, build_dir)
    assert_matches(out, vec.expected)
    return out


# ========================================================================================== python test bench
class _Driver:
    """The cycle protocol of the module docstring, in Python (MyHDL and Icarus cosimulation runs)."""

    def __init__(self, stim: Stimulus, out):
        self.cmds, self.ready, self.stim, self.out = stim.commands, stim.ready, stim, out
        self.i, self.cur, self.left, self.ended, self.quiet, self.k = 0, None, 0, False, 0, 0
        self.drv = dict(rst=0, tbl_we=0, tbl_sel=0, tbl_addr=0, tbl_wdata=0, s_axis_tvalid=0, s_axis_tdata=0,
                        s_axis_tlast=0, m_axis_tready=self.ready[0])
        self._load()

    def _load(self):
        d = self.drv
        d.update(rst=0, tbl_we=0, tbl_sel=0, tbl_addr=0, tbl_wdata=0, s_axis_tvalid=0, s_axis_tdata=0,
                 s_axis_tlast=0)
        if self.i >= len(self.cmds):
            self.cur, self.ended = None, True
            return
        c = self.cur = self.cmds[self.i]
        self.i += 1
        if c[0] in ("R", "I"):
            self.left = c[1]
            d["rst"] = int(c[0] == "R")
        elif c[0] == "T":
            d.update(tbl_we=1, tbl_sel=c[1], tbl_addr=c[2], tbl_wdata=c[3])
        else:
            d.update(s_axis_tvalid=1, s_axis_tdata=c[1], s_axis_tlast=c[2])

    def edge(self, s) -> bool:
        """One rising edge with sampled outputs ``s``; returns True when the run is over."""
        k = self.k
        if s["m_axis_tvalid"] and self.drv["m_axis_tready"]:
            self.out.write(f"O {s['m_axis_tdata']} {s['m_axis_tlast']} {s['m_axis_tuser']} {k}\n")
        if s["err_valid"]:
            self.out.write(f"E {s['err_code']} {k}\n")
        was_ended = self.ended
        c = self.cur
        if c is not None:
            if c[0] == "S":
                done = bool(s["s_axis_tready"])
            elif c[0] in ("R", "I"):
                self.left -= 1
                done = self.left == 0
            else:
                done = True
            if done:
                self._load()
        if was_ended:
            self.quiet = 0 if (s["m_axis_tvalid"] or s["busy"]) else self.quiet + 1
            if self.quiet >= self.stim.drain:
                self.out.write(f"Z {k}\n")
                return True
        if k + 1 >= self.stim.max_cycles:
            self.out.write(f"X {k}\n")
            return True
        self.drv["m_axis_tready"] = self.ready[(k + 1) % len(self.ready)]
        self.k = k + 1
        return False


_SAMPLED = tuple(p.name for p in PORTS if p.direction == "out")   # what the bench samples at each edge


def run_python_bench(dut, kw: dict, make_signals, sampled, make_driver, cosim_cmd, out_path: Path):
    """Simulate ``dut(**sig, **kw)`` (``cosim_cmd`` None) or the cosimulation ``cosim_cmd`` on the port signals
    ``sig = make_signals()`` under a Python bench: a clock of period ``2 * CLOCK_HALF`` and, at every rising edge,
    the driver ``make_driver(out)`` (its ``drv`` dict: the inputs to drive; ``edge(sampled outputs) -> done``)
    writing the output file ``out_path``."""
    from myhdl import Cosimulation, Simulation, StopSimulation, _simulator, block, delay, instance

    n_signals = len(_simulator._signals)  # MyHDL keeps every Signal ever made in a global list
    sig = make_signals()

    @block
    def tb():
        # the DUT must be created here, inside the block (MyHDL checks the call context)
        dut_inst = Cosimulation(cosim_cmd, **sig) if cosim_cmd else dut(**sig, **kw)
        clk = sig["clk"]

        @instance
        def clkgen():
            while True:
                yield delay(CLOCK_HALF)
                clk.next = not clk

        @instance
        def driver():
            with open(out_path, "w") as out:
                d = make_driver(out)
                for n, v in d.drv.items():
                    sig[n].next = v
                while True:
                    yield clk.posedge
                    if d.edge({n: int(sig[n].val) for n in sampled}):
                        break
                    for n, v in d.drv.items():
                        sig[n].next = v
            raise StopSimulation()

        return dut_inst, clkgen, driver

    sim = Simulation(tb())
    try:
        sim.run(quiet=1)
    finally:
        if not getattr(sim, "_finished", False):  # run() finalizes itself when it ends or fails
            sim.quit()
        del _simulator._signals[n_signals:]  # ours only: they die with this call (no leak across runs)
