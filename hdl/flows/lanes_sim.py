"""The N-lane decoder in four simulators: its stimulus, outputs and benches; :class:`LanesBench` lets
:func:`lutzip.hdl.flows.simulate.run` (the one runner) build and run it.

Levels: ``myhdl`` (the MyHDL description), ``ghdl`` (converted VHDL, ``--std=08``, under ``tb/tb_lutzip_lanes.vhd``),
``icarus`` (converted Verilog, MyHDL cosimulation through a wrapper generated from
:func:`lutzip.hdl.core.ports.lanes_ports`), ``verilator`` (converted Verilog, ``tb/tb_lutzip_lanes.cpp``). All
read the same stimulus file and write the same output file.

Stimulus file (text, one item a line, ``#`` starts a comment line)::

    C <max_cycles> <drain> <lanes>   header
    Y <hex8>                         sink tready pattern, 32 cycles a line (MSB = earliest cycle), repeated
    R <n> / I <n> / T <sel> <addr> <hex8>    the prefix, in order, as the single core's stimulus
    L <lane> <hex8> <last> <gap>     the lane's next input word, presented after <gap> cycles with tvalid = 0

Cycle protocol: at each rising edge ``k`` the bench samples the outputs; it writes
``O <tdata hex> <keep> <last> <user> <k>`` when ``m_axis_tvalid`` and its ``m_axis_tready`` were 1 and
``E <lane> <code> <stripe hex8> <k>`` for each lane whose ``err_valid`` bit was 1. While the prefix lasts it runs
it command by command; once the prefix is done every lane runs its own word queue at once: a lane's word is
taken at an edge with its ``tvalid`` and ``tready`` bits 1, then its next word waits its gap. When all queues
are empty it stops after ``drain`` edges in a row with ``m_axis_tvalid = 0`` and ``busy = 0`` (``Z <k>``), or at
``max_cycles`` (``X <k>``). ``m_axis_tready`` for cycle k+1 is ``Y[(k+1) mod len(Y)]``.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lutzip import cache
from lutzip.hdl.core.ports import CoreParams, lanes_ports, lanes_signals
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.lanes_model import check_lanes, expected_beats, lane_packets

SIMULATORS = S.SIMULATORS
SimulationError = S.SimulationError


# ================================================================================================= vectors
@dataclass
class LaneVectors:
    """Table writes, the stream's stripes (in order) and what the N-lane decoder must give for them."""

    table_ops: list
    stripes: list
    lanes: int
    beats: np.ndarray
    errors: np.ndarray
    params: dict = field(default_factory=lambda: CoreParams().as_dict())
    rows: int = 0
    assign: str = "load"

    @classmethod
    def make(cls, stripes, ops, lanes, rows=0, assign="load", core_rows=None, **params) -> "LaneVectors":
        """``core_rows``: the single core's output rows for ``stripes`` (needed for row stripes, ``MIRROR=1``)."""
        p = CoreParams.make(params)
        stripes = [np.asarray(s, np.uint32) for s in stripes]
        beats, errors = expected_beats(stripes, ops, lanes, p.L, p.LUT3_DEPTH, p.W, assign, p.STATES, p.MIRROR,
                                       core_rows)
        return cls(list(ops), stripes, check_lanes(lanes), beats, errors, p.as_dict(), rows, assign)

    @classmethod
    def from_vectors(cls, vec, lanes, rows=0, assign="load") -> "LaneVectors":
        """From single-core :class:`lutzip.hdl.flows.vectors.Vectors`."""
        return cls.make(vec.stripes, vec.table_ops, lanes, rows, assign, **vec.params)

    @property
    def n_words(self) -> int:
        return int(sum(int(b[1]) for b in self.beats))


# ================================================================================================ stimulus
@dataclass
class LaneStimulus:
    prefix: list
    lanes: list          # per lane: list of (word, last, gap)
    ready: list
    max_cycles: int
    drain: int = 16

    def text(self) -> str:
        out = ["# lutzip N-lane decoder stimulus v1", f"C {self.max_cycles} {self.drain} {len(self.lanes)}"]
        out += S.ready_lines(self.ready) + [S.prefix_line(c) for c in self.prefix]
        for j, q in enumerate(self.lanes):
            out += ["L %d %08x %d %d" % (j, w, last, g) for w, last, g in q]
        return "\n".join(out) + "\n"

    def write(self, path) -> Path:
        path = Path(path)
        path.write_text(self.text())
        return path

    @classmethod
    def read(cls, path) -> "LaneStimulus":
        prefix, lanes, ready, hdr = [], None, [], None
        for no, line in enumerate(Path(path).read_text().splitlines(), 1):
            f = line.split()
            if not f or f[0].startswith("#"):
                continue
            try:
                k = f[0]
                if k == "C":
                    hdr = (int(f[1]), int(f[2]))
                    lanes = [[] for _ in range(check_lanes(int(f[3])))]
                elif S.parse_prefix_line(f, prefix, ready):
                    pass
                elif k == "L":
                    lanes[int(f[1])].append((int(f[2], 16), int(f[3]), int(f[4])))
                else:
                    raise ValueError(f"unknown command {k!r}")
            except (IndexError, ValueError, TypeError) as e:
                raise SimulationError(f"{path}, line {no}: bad stimulus line {line!r} ({e})") from None
        if hdr is None:
            raise SimulationError(f"{path}: no 'C' header line")
        return cls(prefix, lanes, ready or [1] * 32, hdr[0], hdr[1])


def make_lane_stimulus(vec: LaneVectors, *, in_gap: float = 0.0, out_stall: float = 0.0, ready_len: int = 1024,
                       seed: int = 0, reset_cycles: int = 4, drain: int = 16, table_gap: int = 2,
                       first: int = 0) -> LaneStimulus:
    """The stimulus for ``vec``: reset, table writes, then each lane's packets (:func:`lane_packets`) with random
    source pauses per lane (``in_gap``, as :func:`lutzip.hdl.flows.simulate.make_stimulus`) and sink
    backpressure (``out_stall``)."""
    in_gap = S._probability("in_gap", in_gap)
    rng = np.random.default_rng(seed)
    ready = S.ready_pattern(rng, out_stall, ready_len)
    prefix = S.table_prefix(vec.table_ops, reset_cycles, table_gap)
    queues, gaps = [], 0
    for pk in lane_packets(vec.stripes, vec.lanes, first, vec.assign, mirror=vec.params.get("MIRROR", 0)):
        n = sum(len(p) for p in pk)
        g = (rng.geometric(1.0 - in_gap, n) - 1) if in_gap > 0 else np.zeros(n, np.int64)
        gaps += int(g.sum())
        q, j = [], 0
        for p in pk:
            for i, w in enumerate(p):
                q.append((int(w), int(i == len(p) - 1), int(g[j])))
                j += 1
        queues.append(q)
    slow = len(ready) / sum(ready)
    n_in = sum(len(s) for s in vec.stripes)
    work = reset_cycles + len(vec.table_ops) + table_gap + gaps + n_in + len(vec.beats) + vec.n_words
    max_cycles = int(4 * work * slow) + 64 * len(vec.stripes) + 2000
    return LaneStimulus(prefix, queues, ready, max_cycles, drain)


# ================================================================================================= outputs
@dataclass
class LaneOutputs:
    """One run's output: ``beats`` rows ``(tdata, keep, last, user, cycle)`` (objects: tdata may be wide) and
    ``errors`` rows ``(lane, code, stripe, cycle)``."""

    beats: np.ndarray
    errors: np.ndarray
    end_cycle: int
    timed_out: bool
    sim: str = ""
    seconds: float = 0.0
    notes: list = field(default_factory=list)   # simulator warnings worth a look

    @property
    def out_cycles(self) -> np.ndarray:
        return np.array([int(c) for c in self.beats[:, 4]], np.int64)

    @classmethod
    def read(cls, path, sim="") -> "LaneOutputs":
        beats, errors, end, timed_out = S.read_output_file(
            path, sim, lambda f: [int(f[1], 16)] + [int(x) for x in f[2:6]],
            lambda f: [int(f[1]), int(f[2]), int(f[3], 16), int(f[4])])
        return cls(np.array(beats, dtype=object).reshape(-1, 5), np.array(errors, np.int64).reshape(-1, 4), end,
                   timed_out, sim)


def first_difference(out: LaneOutputs, vec: LaneVectors) -> str | None:
    """``None`` if ``out`` holds exactly the expected beats and error reports, else the first difference."""
    tag = out.sim or "simulation"
    pre = f"{tag}: timed out at cycle {out.end_cycle}; " if out.timed_out else f"{tag}: "
    got = [tuple(int(x) for x in r[:4]) for r in out.beats]
    exp = [tuple(int(x) for x in r) for r in vec.beats]
    for i, (g, e) in enumerate(zip(got, exp)):
        if g != e:
            return (pre + f"beat {i} (cycle {int(out.beats[i, 4])}): got tdata={g[0]:#x} keep={g[1]} last={g[2]} "
                    f"user={g[3]}, expected tdata={e[0]:#x} keep={e[1]} last={e[2]} user={e[3]}")
    if len(got) != len(exp):
        return pre + f"{len(got)} beats out, {len(exp)} expected"
    ge = sorted(tuple(int(x) for x in r[:3]) for r in out.errors)
    ee = sorted(tuple(int(x) for x in r) for r in vec.errors)
    if ge != ee:
        return pre + f"error reports (lane, code, stripe) {ge[:6]}, expected {ee[:6]}"
    if out.timed_out:
        return pre + "all beats out but the decoder stayed busy"
    return None


def first_cycle_difference(a: LaneOutputs, b: LaneOutputs) -> str | None:
    """``None`` if two runs gave the same beats and error reports in the same cycles."""
    for what, x, y in (("beat", a.beats, b.beats), ("error report", a.errors, b.errors)):
        xs = [tuple(int(v) for v in r) for r in x]
        ys = [tuple(int(v) for v in r) for r in y]
        if xs != ys:
            i = next((i for i, (p, q) in enumerate(zip(xs, ys)) if p != q), min(len(xs), len(ys)))
            return f"{what} {i}: {a.sim} {xs[i:i + 1]} vs {b.sim} {ys[i:i + 1]} ({len(xs)} / {len(ys)})"
    if a.end_cycle != b.end_cycle:
        return f"end cycle {a.end_cycle} ({a.sim}) vs {b.end_cycle} ({b.sim})"
    return None


# ============================================================================================ python bench
class _LaneDriver:
    """The cycle protocol of the module docstring (MyHDL and Icarus cosimulation runs)."""

    def __init__(self, stim: LaneStimulus, out, W: int):
        self.stim, self.out, self.W = stim, out, W
        self.n = len(stim.lanes)
        self.digits = self.n * W // 4
        self.i, self.left, self.cur, self.stream, self.quiet, self.k = 0, 0, None, False, 0, 0
        self.idx = [0] * self.n
        self.wait = [0] * self.n
        self.drv = dict(rst=0, tbl_we=0, tbl_sel=0, tbl_addr=0, tbl_wdata=0, s_axis_tvalid=0, s_axis_tdata=0,
                        s_axis_tlast=0, m_axis_tready=stim.ready[0])
        self._load()

    def _lanes_drive(self):
        v = d = last = 0
        for j, q in enumerate(self.stim.lanes):
            if self.idx[j] < len(q) and self.wait[j] == 0:
                w, lst, _ = q[self.idx[j]]
                v |= 1 << j
                d |= w << (32 * j)
                last |= lst << j
        self.drv.update(s_axis_tvalid=v, s_axis_tdata=d, s_axis_tlast=last)

    def _load(self):
        d = self.drv
        d.update(rst=0, tbl_we=0, tbl_sel=0, tbl_addr=0, tbl_wdata=0)
        if self.i >= len(self.stim.prefix):
            self.cur, self.stream = None, True
            self.wait = [q[0][2] if q else 0 for q in self.stim.lanes]
            self._lanes_drive()
            return
        c = self.cur = self.stim.prefix[self.i]
        self.i += 1
        if c[0] in ("R", "I"):
            self.left = c[1]
            d["rst"] = int(c[0] == "R")
        else:
            d.update(tbl_we=1, tbl_sel=c[1], tbl_addr=c[2], tbl_wdata=c[3])

    def edge(self, s) -> bool:
        k = self.k
        if s["m_axis_tvalid"] and self.drv["m_axis_tready"]:
            self.out.write(f"O {s['m_axis_tdata']:0{self.digits}x} {s['m_axis_tkeep']} {s['m_axis_tlast']} "
                           f"{s['m_axis_tuser']} {k}\n")
        for j in range(self.n):
            if (s["err_valid"] >> j) & 1:
                self.out.write(f"E {j} {(s['err_code'] >> (4 * j)) & 15} "
                               f"{(s['err_stripe'] >> (32 * j)) & 0xFFFFFFFF:08x} {k}\n")
        if not self.stream:
            c = self.cur
            if c[0] in ("R", "I"):
                self.left -= 1
                done = self.left == 0
            else:
                done = True
            if done:
                self._load()
        else:
            ended = all(self.idx[j] >= len(q) for j, q in enumerate(self.stim.lanes))
            for j, q in enumerate(self.stim.lanes):
                if (self.drv["s_axis_tvalid"] >> j) & 1 and (s["s_axis_tready"] >> j) & 1:
                    self.idx[j] += 1
                    self.wait[j] = q[self.idx[j]][2] if self.idx[j] < len(q) else 0
                elif self.wait[j] > 0:
                    self.wait[j] -= 1
            self._lanes_drive()
            if ended:
                self.quiet = 0 if (s["m_axis_tvalid"] or s["busy"]) else self.quiet + 1
                if self.quiet >= self.stim.drain:
                    self.out.write(f"Z {k}\n")
                    return True
        if k + 1 >= self.stim.max_cycles:
            self.out.write(f"X {k}\n")
            return True
        self.drv["m_axis_tready"] = self.stim.ready[(k + 1) % len(self.stim.ready)]
        self.k = k + 1
        return False


# ================================================================================================= builds
def _key(what, lanes, rows, p: CoreParams, *extra) -> str:
    S._sources_key()
    return cache.sources_hash("lanes", what, lanes, rows, p.tag(), *extra)


def convert(hdl: str, lanes: int, rows: int, params=None, build_dir=None, assign="load") -> Path:
    """The N-lane decoder converted to ``hdl``, cached; returns the directory holding ``decoder_lanes.v/.vhd``."""
    from lutzip.hdl.flows.convert import convert_lanes
    p = CoreParams.make(params)
    root = Path(build_dir) if build_dir else cache.cache_dir("hdl")

    def build(tmp):
        convert_lanes(tmp, hdl, lanes=lanes, rows=rows, assign=assign, **p.as_dict())

    return cache.atomic_dir(root / f"lanes-{hdl}-{_key(hdl, lanes, rows, p, assign)}", build)


def cosim_wrapper(lanes: int, W: int) -> str:
    """The Icarus wrapper of the converted N-lane decoder for MyHDL cosimulation, from :func:`lanes_ports`, with
    the x/z check of the single core's wrapper on every output after the first reset."""
    ports = lanes_ports(lanes, W)
    decl, ins, outs = [], [], []
    for p in ports:
        rng = f"[{p.width - 1}:0] " if p.width > 1 else ""
        decl.append(f"  {'reg' if p.direction == 'in' else 'wire'} {rng}{p.name};")
        (ins if p.direction == "in" else outs).append(p.name)
    outs_x = [n for n in outs if n not in ("m_axis_tdata", "m_axis_tkeep", "m_axis_tlast", "m_axis_tuser",
                                           "err_code", "err_stripe")]
    conn = ", ".join(f".{p.name}({p.name})" for p in ports)
    return "\n".join([
        "`timescale 1ns/1ps", "module cosim_lutzip_lanes;", *decl,
        "  initial begin",
        f"    $from_myhdl({', '.join(ins)});",
        f"    $to_myhdl({', '.join(outs)});",
        "  end",
        "  reg armed = 1'b0;", "  integer xlog = 0;", "  reg [1023:0] xlog_name;",
        '  initial if ($value$plusargs("xlog=%s", xlog_name)) xlog = $fopen(xlog_name, "w");',
        "  always @(posedge clk) begin",
        "    if (rst) armed <= 1'b1;",
        "    else if (armed && xlog != 0) begin",
        f"      if (^{{{', '.join(outs_x)}}} === 1'bx) $fdisplay(xlog, \"x/z on a control output at %0t\", $time);",
        "      if (m_axis_tvalid === 1'b1 && ^{m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tuser} === 1'bx)",
        "        $fdisplay(xlog, \"x/z on m_axis at %0t\", $time);",
        "      if (|err_valid === 1'b1 && ^{err_code, err_stripe} === 1'bx)",
        "        $fdisplay(xlog, \"x/z on err_code/err_stripe at %0t\", $time);",
        "      $fflush(xlog);", "    end", "  end",
        f"  decoder_lanes dut ({conn});", "endmodule", ""])


def vhdl_bench(lanes: int, W: int) -> str:
    """``tb/tb_lutzip_lanes.vhd`` with its port map for ``lanes`` (one-bit ports of one lane are bits)."""
    text = (S.TB_DIR / "tb_lutzip_lanes.vhd").read_text()
    m = []
    for p in lanes_ports(lanes, W):
        actual = p.name
        if lanes == 1 and p.name in ("s_axis_tvalid", "s_axis_tready", "s_axis_tlast", "err_valid") or \
                p.name == "m_axis_tkeep" and p.width == 1:
            actual = f"{p.name}(0)"
        m.append(f"      {p.name} => {actual}")
    return text.replace("      -- @PORTMAP@", ",\n".join(m))


class LanesBench:
    """The N-lane decoder and its test benches, for :func:`lutzip.hdl.flows.simulate.run` (as
    :class:`lutzip.hdl.flows.simulate.CoreBench` is the single core's).

    Parameters
    ----------
    lanes, rows : int
        ``LANES`` and the buffer rows per lane (0: the default).
    params : CoreParams
        The single core's parameters.
    assign : str
        ``ASSIGN``: ``"rr"`` or ``"load"``.
    """

    name = "lanes"
    top = "decoder_lanes"
    cache_prefix = "lanes-"
    outputs = LaneOutputs

    def __init__(self, lanes: int, rows: int, params: CoreParams, assign: str = "load"):
        self.lanes, self.rows, self.params, self.assign = check_lanes(lanes), rows, params, assign

    def convert(self, hdl: str, root: Path) -> Path:
        return convert(hdl, self.lanes, self.rows, self.params, root, self.assign)

    def key(self, what: str, *extra) -> str:
        return _key(what, self.lanes, self.rows, self.params, *extra, self.assign)

    def vhdl_bench(self, workdir: Path) -> Path:
        tb = workdir / "tb_lutzip_lanes.vhd"
        tb.write_text(vhdl_bench(self.lanes, self.params.W))
        return tb

    def ghdl_generics(self) -> list:
        return [f"-gW={self.params.W}", f"-gN={self.lanes}", f"-gKB={self.lanes.bit_length()}"]

    def cosim_wrapper(self, workdir: Path) -> tuple:
        wrap = workdir / "cosim_lutzip_lanes.v"
        wrap.write_text(cosim_wrapper(self.lanes, self.params.W))
        return wrap, []

    def cflags(self) -> str:
        return f"-O2 -DLANES={self.lanes} -DWORD_BITS={self.params.W}"

    def python_bench(self, cosim_cmd, stim_path: Path, out_path: Path):
        from lutzip.hdl.core.decoder_lanes import decoder_lanes
        stim = LaneStimulus.read(stim_path)
        W = self.params.W
        kw = dict(LANES=self.lanes, ROWS=self.rows, ASSIGN=self.assign, **self.params.as_dict())
        sampled = [p.name for p in lanes_ports(self.lanes, W) if p.direction == "out"]
        S.run_python_bench(decoder_lanes, kw, lambda: lanes_signals(self.lanes, W), sampled,
                           lambda out: _LaneDriver(stim, out, W), cosim_cmd, out_path)


def run(sim: str, stimulus, workdir, lanes: int, params=None, rows: int = 0, build_dir=None,
        timeout: float = 3600, assign: str = "load") -> LaneOutputs:
    """Run ``stimulus`` (:class:`LaneStimulus` or its file) through the N-lane decoder in ``sim`` (one of
    :data:`SIMULATORS`; :func:`lutzip.hdl.flows.simulate.run` with :class:`LanesBench`); returns the outputs."""
    if sim not in SIMULATORS:
        raise SimulationError(f"unknown simulator {sim!r}: one of {', '.join(SIMULATORS)}")
    bench = LanesBench(lanes, rows, CoreParams.make(params), assign)
    return S.run(sim, stimulus, workdir, build_dir=build_dir, timeout=timeout, bench=bench)


def check(vec: LaneVectors, sim: str = "myhdl", *, workdir=None, build_dir=None, **stimulus) -> LaneOutputs:
    """Run ``vec`` in ``sim`` under :func:`make_lane_stimulus` and compare with the model (a
    :class:`SimulationError` names the first difference)."""
    stim = make_lane_stimulus(vec, **stimulus)

    def go(d):
        out = run(sim, stim, d, vec.lanes, vec.params, vec.rows, build_dir, assign=vec.assign)
        msg = first_difference(out, vec)
        if msg:
            raise SimulationError(msg)
        return out

    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="lutzip-lanes-") as tmp:
            return go(tmp)
    return go(workdir)
