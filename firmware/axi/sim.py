"""Cycle-accurate simulator of the converted ``lutzip_axi`` for the host side: Verilator + a C++ harness
(``firmware/axi/csrc/axisim_main.cpp``) in a subprocess, driven through a pipe.

The harness is an AXI4-Lite master (real handshakes, cycles counted), an MM2S source and an S2MM sink
(random ``tvalid`` / ``tready`` per cycle if asked). Builds are cached in ``lutzip.cache.cache_dir("axisim")``
under a key over every build source, the parameters and the Verilator version.

Example
-------
>>> from lutzip.firmware.axi.sim import AxiSim
>>> with AxiSim(W=16) as sim:                                      # doctest: +SKIP
...     sim.load_tables(ops)
...     out, tlast, cycles = sim.transfer(words, capacity)
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from lutzip.errors import LutzError
from lutzip.firmware.axi import regs as R

#: Parameters of ``lutzip_axi`` with their defaults (docs/AXI.md).
DEFAULTS = dict(L=8, W=16, LUT3_DEPTH=4096, FRONT="window", STEP="adder", LUT1_RAM="block", LANES=1,
                OUT_BYTES=4, CLK_HZ=100_000_000, STATES=1, MIRROR=0)
CFLAGS = "-O2"


class AxiSimError(LutzError):
    """The AXI top's simulator could not be built, started, or answered out of protocol."""


class AxiApi:
    """What every ``lutzip_axi`` back end offers on top of ``write_reg`` / ``read_reg`` / ``transfer``."""

    def load_tables(self, ops):
        """Table writes ``(sel, addr, data)`` (``lutzip.hdl.flows.model.table_ops``) through TBL_ADDR /
        TBL_DATA (:func:`lutzip.firmware.axi.regs.table_writes`). Returns the register writes made."""
        writes = R.table_writes(ops)
        for off, val in writes:
            self.write_reg(off, val)
        return len(writes)

    def soft_reset(self, no_discard=False):
        """CONTROL SOFT_RESET (with NO_DISCARD: do not drop the rest of an open input transfer)."""
        self.write_reg(R.CONTROL, R.CTRL_SOFT_RESET | (R.CTRL_NO_DISCARD if no_discard else 0))

    def clear(self, counters=True, error=True):
        """CONTROL CLEAR_COUNTERS / CLEAR_ERROR."""
        self.write_reg(R.CONTROL, (R.CTRL_CLEAR_COUNTERS if counters else 0) | (R.CTRL_CLEAR_ERROR if error else 0))

    def status(self) -> dict:
        """STATUS decoded (:func:`lutzip.firmware.axi.regs.decode_status`)."""
        return R.decode_status(self.read_reg(R.STATUS))

    def counters(self) -> dict:
        """All counter and error registers by name."""
        names = ("CYC_TOTAL", "CYC_BUSY", "CYC_STARVED", "CYC_BLOCKED", "WORDS_OUT", "STRIPES", "ERR_STRIPE",
                 "ERR_COUNT", "OUT_CRC")
        return {k: self.read_reg(R.REGISTERS[k][0]) for k in names}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _verilator_version() -> str:
    try:
        return subprocess.run(["verilator", "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def convert_top(out_dir, hdl="verilog", **params):
    """Convert ``lutzip_axi``.

    Parameters
    ----------
    out_dir : str or Path
        Destination folder (created).
    hdl : str
        ``"verilog"`` or ``"vhdl"`` (VHDL with std_logic ports).
    **params
        ``lutzip_axi`` parameters over :data:`DEFAULTS`.

    Returns
    -------
    Path
        ``out_dir/lutzip_axi.v`` or ``.vhd``.
    """
    import warnings
    from lutzip.firmware.axi.lutzip_axi import lutzip_axi, top_signals
    from lutzip.hdl.flows.convert import convert_block
    p = dict(DEFAULTS, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MyHDL's "driven but not read" notes
        inst = lutzip_axi(**top_signals(p["OUT_BYTES"]), **p)
        kw = {"std_logic_ports": True} if hdl == "vhdl" else {}
        return convert_block(inst, out_dir, R.TOP_NAME, hdl, **kw)


def build(quiet=True, **params) -> Path:
    """Convert the top and compile the harness with Verilator (cached in ``lutzip.cache``).

    Parameters
    ----------
    quiet : bool
        Do not announce a build on stdout.
    **params
        ``lutzip_axi`` parameters over :data:`DEFAULTS`.

    Returns
    -------
    Path
        The harness executable.

    Raises
    ------
    AxiSimError
        Verilator missing or the build failed.
    """
    from lutzip.cache import atomic_dir, cache_dir, sources_hash
    if shutil.which("verilator") is None:
        raise AxiSimError("verilator is not installed (apt-get install verilator)")
    p = dict(DEFAULTS, **params)
    key = sources_hash("axisim", sorted(p.items()), CFLAGS, _verilator_version())
    final = cache_dir("axisim") / key
    harness = Path(__file__).resolve().parent / "csrc" / "axisim_main.cpp"

    def _build(tmp):
        v = convert_top(tmp, "verilog", **p)
        cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast", "--x-initial",
               "fast", "--noassert", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--prefix", "Vtop", "--top-module",
               R.TOP_NAME, str(v), str(harness), "-CFLAGS", f"{CFLAGS} -DOUT_BYTES={p['OUT_BYTES']}",
               "--Mdir", str(tmp / "obj"), "-o", str(tmp / "axisim")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode or not (tmp / "axisim").exists():
            raise AxiSimError(f"Verilator build of {R.TOP_NAME} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        shutil.rmtree(tmp / "obj", ignore_errors=True)

    if not quiet and not final.exists():
        print(f"lutzip: building the AXI top simulator (Verilator) in {final} ...", flush=True)
    return atomic_dir(final, _build) / "axisim"


class AxiSim(AxiApi):
    """The converted ``lutzip_axi`` in Verilator, cycle-accurate, behind a pipe.

    Parameters
    ----------
    **params
        ``lutzip_axi`` parameters (:data:`DEFAULTS`).

    Attributes
    ----------
    cycles : int
        Clock cycles simulated by the commands so far (after the reset).
    words_sent : int
        Input words accepted by the last :meth:`transfer`.
    """

    def __init__(self, quiet=True, **params):
        self.params = dict(DEFAULTS, **params)
        self.W, self.OUT_BYTES = self.params["W"], self.params["OUT_BYTES"]
        exe = build(quiet=quiet, **self.params)
        self.proc = subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.cycles = 0
        self.words_sent = 0

    def _cmd(self, line: str, payload: bytes = b"") -> list:
        if self.proc is None or self.proc.poll() is not None:
            raise AxiSimError("the AXI top simulator is not running")
        try:
            self.proc.stdin.write(line.encode() + b"\n" + payload)
            self.proc.stdin.flush()
            ans = self.proc.stdout.readline().decode().split()
        except (BrokenPipeError, OSError) as e:
            raise AxiSimError(f"the AXI top simulator died ({e})") from None
        if not ans or ans[0] == "E":
            raise AxiSimError(f"simulator answered {' '.join(ans) or 'nothing'} to {line.split()[0]}")
        return ans

    def write_reg(self, off: int, val: int, wstrb: int = 0xF) -> int:
        """AXI4-Lite write of ``val`` at byte offset ``off``; returns the cycles it took."""
        a = self._cmd(f"S {int(off)} {int(val) & 0xFFFFFFFF} {int(wstrb) & 0xF}")
        self.cycles += int(a[1])
        return int(a[1])

    def read_reg(self, off: int) -> int:
        """AXI4-Lite read at byte offset ``off``."""
        a = self._cmd(f"R {int(off)}")
        self.cycles += int(a[2])
        return int(a[1])

    def run_idle(self, n: int):
        """``n`` cycles without handshakes."""
        self._cmd(f"I {int(n)}")
        self.cycles += int(n)

    def transfer(self, in_words, out_bytes_capacity: int, ready_prob=1.0, valid_prob=1.0, seed=0,
                 max_idle=10_000, stop_after_words=None):
        """One MM2S transfer (``tlast`` on the last word) into the top, its S2MM output back.

        Parameters
        ----------
        in_words : numpy.ndarray of uint32
            The MM2S buffer (:func:`lutzip.firmware.axi.buffer.mm2s_words`).
        out_bytes_capacity : int
            S2MM buffer size: ``m_axis_tready`` stays low once this many bytes arrived.
        ready_prob, valid_prob : float
            Per-cycle probability of ``m_axis_tready`` / ``s_axis_tvalid`` (backpressure, source pauses).
        seed : int
            Seed of those random choices.
        max_idle : int
            Stop after this many cycles without a handshake (never hangs).
        stop_after_words : int, optional
            Feed only this many words (an MM2S channel stopped mid-buffer).

        Returns
        -------
        (bytes, bool, int)
            The output bytes (``tkeep`` applied), whether ``m_axis_tlast`` was seen, the cycles taken.
        """
        w = np.ascontiguousarray(np.asarray(in_words).astype(np.uint64) & 0xFFFFFFFF, dtype="<u4")
        stop = -1 if stop_after_words is None else int(stop_after_words)
        a = self._cmd(f"T {w.size} {int(out_bytes_capacity)} {float(ready_prob)!r} {float(valid_prob)!r} "
                      f"{int(seed) & (2**64 - 1)} {int(max_idle)} {stop}", w.tobytes())
        if a[0] != "X":
            raise AxiSimError(f"simulator answered {' '.join(a)} to a transfer")
        nb, last, cyc, sent = int(a[1]), a[2] == "1", int(a[3]), int(a[4])
        data = self.proc.stdout.read(nb) if nb else b""
        if len(data) != nb:
            raise AxiSimError("the AXI top simulator died during a transfer")
        self.cycles += cyc
        self.words_sent = sent
        return data, last, cyc

    def close(self):
        """Stop the simulator."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.write(b"Q\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc = None
