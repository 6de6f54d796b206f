"""Run the decoder core on the same vectors in four simulators and compare them bit for bit.

Levels (``SIMULATORS``):

``myhdl``
    the MyHDL description, simulated in pure Python;
``ghdl``
    the core converted with ``toVHDL``, run by GHDL (``--std=08``) under the hand-written VHDL test bench
    ``tb/tb_lutzip_core.vhd``;
``icarus``
    the core converted with ``toVerilog``, run by Icarus Verilog and driven from Python through MyHDL's
    cosimulation VPI module (``tb/cosim_lutzip_core.v``);
``verilator``
    the converted Verilog compiled by Verilator (``-O2``) with the C++ harness ``tb/tb_lutzip_core.cpp``.

All four read the same *stimulus file* and write the same *output file*; every test bench implements the
cycle protocol below, so the outputs of two simulators must agree to the clock cycle, and the decoded words
must agree with the reference decoder :mod:`lutzip.codec.bitstream`.

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
"""
from __future__ import annotations

import argparse
import hashlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lutzip.codec import bitstream as bs
from lutzip.errors import LutzError
from lutzip.codec.tables import TableSet, expand_hw

SIMULATORS = ("myhdl", "ghdl", "icarus", "verilator")
TB_DIR = Path(__file__).resolve().parent.parent / "tb"
SEL_CONFIG = 3
DEFAULT_PARAMS = {"L": 8, "W": 16, "LUT3_DEPTH": 4096}
MAX_READY_BITS = 4096
CLOCK_HALF = 5


class SimulationError(LutzError):
    """A simulator failed to build or run, reported an error, or the core did not finish."""


# ===================================================================================================== vectors
@dataclass
class Vectors:
    """What goes into the core and what must come out.

    ``expected`` is an ``(n, 3)`` array of ``(data, last, user)`` rows: the reference decoder's words, with
    ``last`` on each stripe's final word, and for a stripe that the core must reject the words decoded before
    the error followed by one marker row ``(code, 1, 1)``.
    """

    table_ops: list
    stripes: list
    expected: np.ndarray
    params: dict = field(default_factory=lambda: dict(DEFAULT_PARAMS))

    @property
    def n_in(self) -> int:
        return sum(len(s) for s in self.stripes)


def table_ops(ts: TableSet, L: int = 8, n_lut3: int | None = None) -> list:
    """The core's table writes for ``ts``: LUT1, LUT2, LUT3, then the config word (number of LUT3 entries)."""
    ops = expand_hw(ts, L)
    ops.append((SEL_CONFIG, 0, len(ts.lut3) if n_lut3 is None else int(n_lut3)))
    return ops


def split_stripes(payload: np.ndarray, stripe_words: np.ndarray) -> list:
    """Cut a payload into its stripes (one ``uint32`` array each)."""
    ends = np.cumsum(np.asarray(stripe_words, np.int64))
    return [np.asarray(s, np.uint32) for s in np.split(np.asarray(payload, np.uint32), ends[:-1])] if len(ends) else []


def hw_stripe_reference(stripe: np.ndarray, ts: TableSet, n_lut3: int | None = None):
    """What the core outputs for one stripe (one AXI-Stream packet).

    Returns ``(words, code)``: the decoded words, and the error code the core reports (0 = none). The
    decoding is the reference decoder's; the errors only the software checks (word count, leftover words,
    padding bits) are not errors for the core, which discards the rest of the packet.
    """
    stripe = np.asarray(stripe, np.uint32)
    if len(stripe) == 0:
        raise ValueError("empty stripe: a stripe has at least a header word")
    hdr = int(stripe[0])
    if hdr >> 16 != bs.STRIPE_MARKER >> 16:
        return np.zeros(0, np.uint16), bs.ERR_BAD_HEADER
    n = (hdr & 0xFFFF) + 1
    lut3 = ts.lut3 if n_lut3 is None else ts.lut3[:n_lut3]
    L = ts.max_code_len
    out = np.zeros(n, np.uint16)
    err = np.zeros(3, np.int64)
    rc = bs._decode_kernel(stripe, np.zeros(1, np.int64), np.array([len(stripe)], np.int64), n, n,
                           ts.lut1(L).astype(np.int64), L,
                           np.array([c.kind for c in ts.classes], np.int64),
                           np.array([c.k for c in ts.classes], np.int64),
                           np.array([c.param for c in ts.classes], np.int64),
                           np.ascontiguousarray(lut3, np.uint16), out, err)
    if rc in (bs.ERR_OK, bs.ERR_LEFTOVER, bs.ERR_PADDING):
        return out, 0
    return out[:int(err[2])], int(rc)


def expected_outputs(stripes: list, ts: TableSet, n_lut3: int | None = None) -> np.ndarray:
    """``(n, 3)`` rows ``(data, last, user)`` the core must produce for ``stripes``, in order."""
    rows = []
    for s in stripes:
        words, code = hw_stripe_reference(s, ts, n_lut3)
        r = np.zeros((len(words) + (1 if code else 0), 3), np.int64)
        r[:len(words), 0] = words
        if code:
            r[-1] = (code, 1, 1)
        elif len(r):
            r[-1, 1] = 1
        rows.append(r)
    return np.concatenate(rows) if rows else np.zeros((0, 3), np.int64)


def make_vectors(ts: TableSet, words: np.ndarray, stripe_len: int, L: int = 8, lut3_depth: int = 4096,
                 corrupt=None, n_lut3: int | None = None) -> Vectors:
    """Encode ``words`` with ``ts`` and build the vectors.

    ``corrupt``: optional ``callable(stripes) -> stripes`` applied to the encoded stripes (error injection);
    the expected outputs follow whatever it returns. ``n_lut3`` overrides the config write (to provoke
    ``ERR_LUT3_RANGE``).
    """
    words = np.asarray(words).reshape(-1)
    if words.size == 0:
        raise ValueError("no words to encode")
    payload, sw = bs.encode_stripes(words, ts, stripe_len)
    stripes = split_stripes(payload, sw)
    ref = bs.decode_stripes(payload, sw, words.size, stripe_len, ts)
    if not np.array_equal(ref, words.astype(np.uint16)):
        raise SimulationError("reference codec does not round-trip the vectors")
    if corrupt is not None:
        stripes = [np.asarray(s, np.uint32) for s in corrupt([s.copy() for s in stripes])]
    return Vectors(table_ops(ts, L, n_lut3), stripes, expected_outputs(stripes, ts, n_lut3),
                   {"L": L, "W": ts.word_bits, "LUT3_DEPTH": lut3_depth})


# ==================================================================================================== stimulus
@dataclass
class Stimulus:
    """A stimulus: commands ``(kind, args...)``, the sink-ready pattern and the stop rules."""

    commands: list
    ready: list
    max_cycles: int
    drain: int = 16

    def text(self) -> str:
        out = ["# lutzip decoder-core stimulus v1", f"C {self.max_cycles} {self.drain}"]
        bits = list(self.ready)
        for i in range(0, len(bits), 32):
            chunk = bits[i:i + 32]
            out.append("Y %08x" % int("".join(str(int(b)) for b in chunk), 2))
        for cmd in self.commands:
            k = cmd[0]
            if k in ("R", "I"):
                out.append(f"{k} {cmd[1]}")
            elif k == "T":
                out.append("T %d %d %08x" % (cmd[1], cmd[2], cmd[3]))
            else:
                out.append("S %08x %d" % (cmd[1], cmd[2]))
        return "\n".join(out) + "\n"

    def write(self, path) -> Path:
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
                elif k == "Y":
                    ready += [int(b) for b in format(int(f[1], 16), "032b")]
                elif k in ("R", "I"):
                    n = int(f[1])
                    if n < 1:
                        raise ValueError("count must be >= 1")
                    cmds.append((k, n))
                elif k == "T":
                    cmds.append(("T", int(f[1]), int(f[2]), int(f[3], 16)))
                elif k == "S":
                    cmds.append(("S", int(f[1], 16), int(f[2])))
                else:
                    raise ValueError(f"unknown command {k!r}")
            except (IndexError, ValueError) as e:
                raise SimulationError(f"{path}, line {no}: bad stimulus line {line!r} ({e})") from None
        if max_cycles is None:
            raise SimulationError(f"{path}: no 'C' header line")
        return cls(cmds, ready or [1] * 32, max_cycles, drain)


def make_stimulus(vec: Vectors, *, gap_prob: float = 0.0, gap_max: int = 4, ready_prob: float = 1.0,
                  ready_len: int = 1024, seed: int = 0, reset_cycles: int = 4, drain: int = 16,
                  table_gap: int = 2) -> Stimulus:
    """Stimulus for ``vec``: reset, table writes, then the stripe words.

    ``gap_prob``: chance of an idle gap of 1..``gap_max`` cycles before each stripe word (source stalls).
    ``ready_prob``: share of cycles the sink is ready, as a seeded random pattern of ``ready_len`` cycles.
    """
    rng = np.random.default_rng(seed)
    if ready_prob >= 1.0:
        ready = [1] * 32
    else:
        ready_len = max(32, min(MAX_READY_BITS, -(-ready_len // 32) * 32))
        ready = [int(b) for b in (rng.random(ready_len) < ready_prob)]
        if not any(ready):
            ready[0] = 1
    cmds = [("R", reset_cycles)]
    cmds += [("T", s, a, d) for s, a, d in vec.table_ops]
    if table_gap:
        cmds.append(("I", table_gap))
    gaps = 0
    for s in vec.stripes:
        for i, w in enumerate(s):
            if gap_prob > 0 and rng.random() < gap_prob:
                g = int(rng.integers(1, gap_max + 1))
                gaps += g
                cmds.append(("I", g))
            cmds.append(("S", int(w), int(i == len(s) - 1)))
    slow = len(ready) / sum(ready)
    work = reset_cycles + len(vec.table_ops) + table_gap + gaps + vec.n_in + len(vec.expected)
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
    def cycles_per_second(self) -> float:
        return self.end_cycle / self.seconds if self.seconds > 0 else float("nan")

    @classmethod
    def read(cls, path, sim="") -> "Outputs":
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
                    words.append([int(x) for x in f[1:5]])
                elif f[0] == "E":
                    errors.append([int(x) for x in f[1:3]])
                elif f[0] in "ZX":
                    end, timed_out = int(f[1]), f[0] == "X"
                else:
                    raise ValueError(f[0])
            except (ValueError, IndexError):
                raise SimulationError(f"{sim}: {path}, line {no}: bad output line {line!r}") from None
        if end is None:
            raise SimulationError(f"{sim}: output file {path} has no end line: the simulation did not finish")
        return cls(np.array(words, np.int64).reshape(-1, 4), np.array(errors, np.int64).reshape(-1, 2), end,
                   timed_out, sim)


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
    msg = first_difference(outputs, expected)
    if msg:
        raise AssertionError(msg)


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


def throughput(outputs: Outputs) -> float:
    """Words out per cycle from the first output word to the last."""
    if len(outputs.words) < 2:
        return float("nan")
    c = outputs.words[:, 3]
    return len(c) / float(c[-1] - c[0] + 1)


# ======================================================================================== build & conversion
def cache_root() -> Path:
    """Where converted HDL and simulator builds are kept (``$LUTZIP_HDL_CACHE``, else ``~/.cache``)."""
    d = os.environ.get("LUTZIP_HDL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "lutzip", "hdl")
    p = Path(d)
    p.mkdir(parents=True, exist_ok=True)
    return p


def default_core():
    """The decoder core (imported lazily, so this module loads before the core exists)."""
    from lutzip.hdl.core.decoder_core import decoder_core
    return decoder_core


_FIRST_HASH = {}


def _core_hash(core) -> str:
    """Hash of the sources the core is built from: its file and the modules next to it that were loaded when
    it was first converted in this process (the core's own imports).

    MyHDL re-reads the source files when it converts, so sources edited since they were imported would give
    a mix of old and new code: that is reported as an error instead.
    """
    import myhdl
    if id(core) not in _FIRST_HASH:
        src = Path(getattr(core, "srcfile", None) or inspect.getsourcefile(inspect.unwrap(core))).resolve()
        files = {src}
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if f and f.endswith(".py") and Path(f).resolve().parent == src.parent:
                files.add(Path(f).resolve())
        files.discard(Path(__file__).resolve())
        tag = f"{myhdl.__version__}|{getattr(core, '__name__', '')}|{getattr(core, 'keywords', '')}|{src.name}"
        _FIRST_HASH[id(core)] = (core, tag, sorted(files), None)
    core_, tag, files, first = _FIRST_HASH[id(core)]
    h = hashlib.sha256(tag.encode())
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    h = h.hexdigest()[:16]
    if first is None:
        _FIRST_HASH[id(core)] = (core_, tag, files, h)
    elif h != first:
        raise SimulationError("the core's source files changed on disk since this process imported them; "
                              "run again in a new process")
    return h


def _params(params) -> dict:
    p = dict(DEFAULT_PARAMS)
    p.update(params or {})
    unknown = set(p) - set(DEFAULT_PARAMS)
    if unknown:
        raise ValueError(f"unknown core parameters {sorted(unknown)}")
    if p["W"] not in (8, 16):
        raise ValueError(f"W = {p['W']}: the core outputs 8- or 16-bit words")
    return p


def _signals(W: int) -> dict:
    from myhdl import ResetSignal, Signal, intbv
    b = lambda: Signal(bool(0))  # noqa: E731
    v = lambda n: Signal(intbv(0)[n:])  # noqa: E731
    # rst: a synchronous active-high ResetSignal, usable by always_seq(reset=rst) and as a plain bool
    return dict(clk=b(), rst=ResetSignal(0, active=1, isasync=False),
                s_axis_tdata=v(32), s_axis_tvalid=b(), s_axis_tready=b(), s_axis_tlast=b(),
                m_axis_tdata=v(W), m_axis_tvalid=b(), m_axis_tready=b(), m_axis_tlast=b(), m_axis_tuser=b(),
                tbl_we=b(), tbl_sel=v(2), tbl_addr=v(12), tbl_wdata=v(32),
                err_valid=b(), err_code=v(4), busy=b())


def _atomic_dir(final: Path, build):
    """Run ``build(tmpdir)`` and move the result to ``final`` (so an interrupted build is never reused)."""
    if final.exists():
        return final
    tmp = Path(tempfile.mkdtemp(prefix=final.name + ".", dir=final.parent))
    try:
        build(tmp)
        try:
            tmp.rename(final)
        except OSError:  # someone else finished first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def convert(hdl: str, params=None, core=None, build_dir=None) -> Path:
    """Convert the core to ``hdl`` ('VHDL' or 'Verilog'); returns the directory holding ``decoder_core.*``.

    Cached by a hash of the core's sources and the parameters.
    """
    core = core or default_core()
    p = _params(params)
    key = f"{hdl.lower()}-{_core_hash(core)}-L{p['L']}W{p['W']}D{p['LUT3_DEPTH']}"
    root = Path(build_dir) if build_dir else cache_root()
    root.mkdir(parents=True, exist_ok=True)

    def build(tmp):
        sig = _signals(p["W"])
        inst = core(**sig, **p)
        kw = dict(path=str(tmp), name="decoder_core")
        if hdl == "Verilog":
            kw["testbench"] = False
        try:
            inst.convert(hdl=hdl, **kw)
        except Exception as e:
            raise SimulationError(f"MyHDL conversion to {hdl} failed: {type(e).__name__}: {e}") from e

    return _atomic_dir(root / key, build)


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


_SAMPLED = ("m_axis_tvalid", "m_axis_tdata", "m_axis_tlast", "m_axis_tuser", "s_axis_tready", "err_valid",
            "err_code", "busy")


def _run_python_tb(core, params: dict, cosim_cmd, stim_path: Path, out_path: Path):
    """Simulate the MyHDL ``core`` (``cosim_cmd`` None) or the cosimulation ``cosim_cmd`` under the Python bench."""
    from myhdl import Cosimulation, Simulation, StopSimulation, block, delay, instance

    stim = Stimulus.read(stim_path)
    sig = _signals(params["W"])

    @block
    def tb():
        # the DUT must be created here, inside the block (MyHDL checks the call context)
        dut = Cosimulation(cosim_cmd, **sig) if cosim_cmd else core(**sig, **params)
        clk = sig["clk"]

        @instance
        def clkgen():
            while True:
                yield delay(CLOCK_HALF)
                clk.next = not clk

        @instance
        def driver():
            with open(out_path, "w") as out:
                d = _Driver(stim, out)
                for n, v in d.drv.items():
                    sig[n].next = v
                while True:
                    yield clk.posedge
                    if d.edge({n: int(sig[n].val) for n in _SAMPLED}):
                        break
                    for n, v in d.drv.items():
                        sig[n].next = v
            raise StopSimulation()

        return dut, clkgen, driver

    sim = Simulation(tb())
    try:
        sim.run(quiet=1)
    finally:
        if not getattr(sim, "_finished", False):  # run() finalizes itself when it ends or fails
            sim.quit()


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

    return _atomic_dir(root / f"vpi-{h}", build) / "myhdl.vpi"


def _files_hash(*paths, extra="") -> str:
    """Hash of file contents, ignoring MyHDL's ``Date:`` header line (so a re-conversion is not a change)."""
    h = hashlib.sha256(extra.encode())
    for p in paths:
        text = Path(p).read_bytes()
        text = re.sub(rb"(?m)^(//|--) Date: .*$", b"", text)
        h.update(Path(p).name.encode() + b"\0" + text)
    return h.hexdigest()[:16]


def _verilator_build(vdir: Path, root: Path) -> Path:
    vsrc = vdir / "decoder_core.v"
    cpp = TB_DIR / "tb_lutzip_core.cpp"
    try:
        ver = subprocess.run(["verilator", "--version"], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        raise SimulationError("verilator is not installed") from None
    flags = ["-O2", "--x-assign", "fast", "--x-initial", "fast", "-Wno-fatal", "--no-timing",
             "-CFLAGS", "-O2", "-j", "2"]
    key = _files_hash(vsrc, cpp, extra=ver + " ".join(flags))

    def build(tmp):
        shutil.copy(vsrc, tmp / "decoder_core.v")
        shutil.copy(cpp, tmp / "tb_lutzip_core.cpp")
        _run_cmd(["verilator", "--cc", "--exe", "--build", *flags, "--top-module", "decoder_core",
                  "-Mdir", "obj", "-o", "Vtb", "decoder_core.v", "tb_lutzip_core.cpp"],
                 tmp / "build.log", 1800, cwd=tmp, what="verilator build")
        if not (tmp / "obj" / "Vtb").exists():
            raise SimulationError(f"verilator build produced no executable (log {tmp / 'build.log'})")

    return _atomic_dir(root / f"verilator-{key}", build) / "obj" / "Vtb"


_GHDL_BAD = re.compile(r"(?i)(error|failure|bound check|overflow|\bfatal\b)")


def run(sim: str, stimulus, workdir, params=None, core=None, build_dir=None, timeout: float = 3600) -> Outputs:
    """Run ``stimulus`` (a :class:`Stimulus` or a stimulus file) through the core in ``sim``.

    ``workdir`` receives the stimulus/output/log files; converted HDL and builds go to ``build_dir`` (default:
    :func:`cache_root`). Returns the parsed :class:`Outputs`; raises :class:`SimulationError` if the simulator
    fails or reports an error.
    """
    if sim not in SIMULATORS:
        raise ValueError(f"unknown simulator {sim!r}: one of {', '.join(SIMULATORS)}")
    why = available(sim)
    if why:
        raise SimulationError(f"{sim}: {why}")
    p = _params(params)
    notes = []
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    root = Path(build_dir) if build_dir else cache_root()
    if isinstance(stimulus, Stimulus):
        stim_path = stimulus.write(workdir / "stimulus.txt")
    else:
        stim_path = Path(stimulus).resolve()
    out_path = workdir / f"out_{sim}.txt"
    log = workdir / f"{sim}.log"
    log.write_text("")
    if out_path.exists():
        out_path.unlink()
    core = core or default_core()

    if sim == "myhdl":
        t0 = time.perf_counter()
        _run_python_tb(core, p, None, stim_path, out_path)
        dt = time.perf_counter() - t0

    elif sim == "ghdl":
        vdir = convert("VHDL", p, core, root)
        gdir = workdir / "ghdl-work"
        gdir.mkdir(exist_ok=True)
        srcs = sorted(vdir.glob("pck_myhdl_*.vhd")) + [vdir / "decoder_core.vhd", TB_DIR / "tb_lutzip_core.vhd"]
        _run_cmd(["ghdl", "-a", "--std=08", f"--workdir={gdir}", *map(str, srcs)], log, 600, what="ghdl analyse")
        text, dt = _run_cmd(["ghdl", "--elab-run", "--std=08", f"--workdir={gdir}", "tb_lutzip_core",
                             f"-gSTIM={stim_path}", f"-gOUTF={out_path}", f"-gW={p['W']}",
                             "--assert-level=error", "--ieee-asserts=disable-at-0"],
                            log, timeout, what="ghdl run")
        bad = [ln for ln in text.splitlines() if _GHDL_BAD.search(ln)]
        if bad:
            raise SimulationError(f"ghdl reported: {bad[0]} (log {log})")
        notes = [ln for ln in text.splitlines() if "warning" in ln]

    elif sim == "icarus":
        vdir = convert("Verilog", p, core, root)
        vpi = _build_vpi(root)
        vvp = workdir / "cosim.vvp"
        _run_cmd(["iverilog", "-g2005", "-o", str(vvp), "-s", "cosim_lutzip_core", f"-Pcosim_lutzip_core.W={p['W']}",
                  str(vdir / "decoder_core.v"), str(TB_DIR / "cosim_lutzip_core.v")], log, 600, what="iverilog")
        xlog = workdir / "icarus_x.log"
        if xlog.exists():
            xlog.unlink()
        cmd = f"vvp -n -m {vpi.with_suffix('')} {vvp} +xlog={xlog}"
        t0 = time.perf_counter()
        _run_python_tb(None, p, cmd, stim_path, out_path)
        dt = time.perf_counter() - t0
        xs = xlog.read_text().splitlines() if xlog.exists() else ["no x/z check log: the wrapper did not run"]
        if xs:
            raise SimulationError(f"icarus: {xs[0]} ({len(xs)} x/z reports, {xlog})")

    else:
        vdir = convert("Verilog", p, core, root)
        exe = _verilator_build(vdir, root)
        _, dt = _run_cmd([str(exe), str(stim_path), str(out_path)], log, timeout, what="verilator run")

    res = Outputs.read(out_path, sim)
    res.seconds = dt
    res.notes = notes
    return res


def run_all(vec: Vectors, stimulus: Stimulus, workdir, sims=SIMULATORS, core=None, build_dir=None) -> dict:
    """Run one stimulus in several simulators; returns ``{sim: Outputs}``."""
    return {s: run(s, stimulus, Path(workdir) / s, vec.params, core, build_dir) for s in sims}


# ================================================================================================ benchmark
def stream_cases(n: int = 120_000, seed: int = 0) -> dict:
    """Benchmark streams ``{name: (TableSet, words)}``: LUT-heavy int8, zero-run-heavy, residual-heavy int16."""
    from lutzip.codec.encoder import greedy_tableset
    from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec

    rng = np.random.default_rng(seed)
    cases = {}
    w8 = np.clip(np.round(rng.laplace(0, 6, n)), -128, 127).astype(np.int8).view(np.uint8)
    cases["lut_int8"] = (greedy_tableset(w8, 8), w8)
    z = rng.integers(-3, 4, n).astype(np.int16)
    z[rng.random(n) < 0.9] = 0
    z = z.view(np.uint16)
    cases["zero_run_int16"] = (TableSet(16, [ClassSpec(1, ZRUN, 5, 0), ClassSpec(2, LUT, 3, 0),
                                             ClassSpec(2, RANGE, 16, 0)],
                                        np.array([0, 1, 0xFFFF, 2, 0xFFFE, 3, 0xFFFD, 4], np.uint16)), z)
    r = rng.integers(0, 1 << 16, n).astype(np.uint16)
    cases["residual_int16"] = (greedy_tableset(r, 16), r)
    return cases


def bench(n: int = 120_000, stripe_len: int = 4096, workdir=None, core=None) -> dict:
    """Verilator throughput (words out per cycle, first to last output) with an always-valid source and an
    always-ready sink, per stream type. Returns ``{name: dict}``."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="lutzip-bench-"))
    res = {}
    for name, (ts, words) in stream_cases(n).items():
        vec = make_vectors(ts, words, stripe_len)
        stim = make_stimulus(vec, drain=8)
        out = run("verilator", stim, workdir / name, vec.params, core)
        msg = first_difference(out, vec.expected)
        res[name] = {"words": len(out.words), "in_words": vec.n_in, "weights_per_cycle": throughput(out),
                     "cycles": out.end_cycle, "sim_seconds": out.seconds,
                     "bits_per_weight": 32.0 * vec.n_in / len(words), "matches_reference": msg is None,
                     "mismatch": msg}
    return res


def sim_speeds(n: int = 4000, workdir=None, core=None, sims=SIMULATORS) -> dict:
    """Cycles per second of each simulator on the same small LUT-heavy vector (builds excluded)."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="lutzip-speed-"))
    ts, words = stream_cases(n)["lut_int8"]
    vec = make_vectors(ts, words, 1024)
    stim = make_stimulus(vec, gap_prob=0.1, ready_prob=0.8, seed=1)
    out = {}
    for s in sims:
        run(s, stim, workdir / f"warm-{s}", vec.params, core)  # builds/converts once
        o = run(s, stim, workdir / s, vec.params, core)
        out[s] = {"cycles": o.end_cycle, "seconds": o.seconds, "cycles_per_second": o.cycles_per_second,
                  "matches_reference": first_difference(o, vec.expected) is None, "warnings": len(o.notes)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lutzip.hdl.flows.simulate",
                                 description="Decoder-core simulations: throughput bench and simulator speeds")
    ap.add_argument("--bench", action="store_true", help="Verilator throughput per stream type")
    ap.add_argument("--speeds", action="store_true", help="cycles/s of each simulator on one small vector")
    ap.add_argument("-n", type=int, default=120_000, help="weights per bench stream (default 120000)")
    ap.add_argument("--stripe", default="4096", help="stripe length(s), comma-separated (default 4096)")
    ap.add_argument("--workdir", help="keep the run files here (default: a temporary directory)")
    a = ap.parse_args(argv)
    if not (a.bench or a.speeds):
        a.bench = True
    for sl in (int(x) for x in a.stripe.split(",") if a.bench):
        print(f"Verilator throughput, {a.n} weights per stream, stripes of {sl} words:")
        for name, r in bench(a.n, sl, a.workdir and Path(a.workdir) / f"bench{sl}").items():
            ok = "bit-exact" if r["matches_reference"] else f"MISMATCH: {r['mismatch']}"
            print(f"  {name:16s} {r['weights_per_cycle']:.4f} weights/cycle  {r['bits_per_weight']:.2f} bits/weight"
                  f"  {r['cycles']} cycles in {r['sim_seconds']:.2f} s  ({ok})")
    if a.speeds:
        print("Simulation speed (same vector, build/conversion excluded):")
        for s, r in sim_speeds(workdir=a.workdir and Path(a.workdir) / "speeds").items():
            print(f"  {s:10s} {r['cycles_per_second']:12.0f} cycles/s  ({r['cycles']} cycles, {r['seconds']:.2f} s)"
                  f"{'' if r['matches_reference'] else '  MISMATCH'}"
                  f"{'  (%d simulator warnings)' % r['warnings'] if r['warnings'] else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
