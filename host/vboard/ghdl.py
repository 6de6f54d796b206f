"""GHDL back end of the virtual board: the converted VHDL (the text synthesised for boards) in GHDL, with a
textio test bench (``lutzip/firmware/tb/vboard_tb.vhd``) that exchanges bytes with a Python bridge through
named pipes, in lock step. Much slower than Verilator; it exists to run the very VHDL a board gets."""
from __future__ import annotations

import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from lutzip.cache import atomic_dir
from lutzip.vboard.base import SimBoard, VBoardError, build_dir, check_mode, convert_top, firmware_path, log, \
    tool_version, two_domains, clock_ps

GHDL_FLAGS = ["--std=08", "-frelaxed", "-Wno-hide", "-Wno-shared"]

#: Test bench sources (in ``lutzip/firmware/tb``), copied into each build.
TB_FILES = ("vboard_pkg.vhd", "vboard_tb.vhd")


def build_ghdl(mode, params, core=None, quiet=True) -> Path:
    """Convert both tops to VHDL and analyse them with the test bench (cached); return the work directory.

    Parameters
    ----------
    mode : {"fast", "pin"}
        Which top the test bench drives (``proto_engine`` or ``uart_top``; both are analysed).
    params : dict
        Board top parameters (complete: see :meth:`GhdlBoard.default_params`).
    core : {"real", "stub"}, optional
        The decoder core to build in.
    quiet : bool
        Do not print the "converting ..." line.

    Returns
    -------
    pathlib.Path
        The GHDL work directory (``<build>/work``, beside the sources in ``<build>/src``); run
        ``vboard_tb`` there.
    """
    check_mode(mode)
    two = two_domains(mode, params)
    if shutil.which("ghdl") is None:
        raise VBoardError("ghdl is not installed (apt-get install ghdl, or use --hdl verilog)")
    from lutzip.firmware.engine.proto_engine import get_core
    core_fn = get_core(core)
    d = build_dir("ghdl", mode, params, core_fn, GHDL_FLAGS, tool_version(["ghdl", "--version"]))
    work = d / "work"
    if work.exists():
        return work
    log(f"lutzip: converting and analysing the virtual board VHDL ({mode} mode, GHDL) in {d} ...", quiet)

    one = {k: v for k, v in params.items() if k != "CORE_CLK_HZ"}   # the single-domain tops' parameters

    def convert(tmp: Path):
        eng = {k: v for k, v in one.items() if k not in ("BAUD", "CORE_RST_REG")}   # (proto_engine_cdc's own)
        eng["BAUD"] = one["BAUD"] if mode == "pin" else 0
        convert_top("proto_engine", "vhdl", tmp, dict(eng, BAUD=0) if mode == "pin" else eng, core_fn)
        # fast mode analyses uart_top too (the bench names both), without the fast board's engine options
        convert_top("uart_top", "vhdl", tmp, one if mode == "pin" else
                    {**{k: v for k, v in one.items() if k not in ("CORE_IN_REG", "RING_REG", "REPLAY_PIPE",
                                                                 "TABLE_REG", "RESULT_REG", "RST_REG",
                                                                 "RING_PIPE", "CORE_RST_REG")},
                     "CLK_HZ": 16_000_000, "BAUD": 1_000_000}, core_fn)
        if two:
            convert_top("proto_engine_cdc", "vhdl", tmp, dict(eng, CORE_CLK_HZ=params["CORE_CLK_HZ"],
                                                               **({"CORE_RST_REG": True} if one.get("CORE_RST_REG")
                                                                  else {})), core_fn)
        for f in TB_FILES:
            shutil.copyfile(firmware_path() / "tb" / f, tmp / f)

    # GHDL (mcode) records each source by its absolute path and re-reads it at run time: the sources get
    # their final place first, then the library is analysed elsewhere and moved beside them when complete
    src = atomic_dir(d / "src", convert)
    srcs = [str(p) for p in sorted(src.glob("pck_myhdl_*.vhd"))] + \
        [str(src / f) for f in ("proto_engine.vhd", "uart_top.vhd", *(("proto_engine_cdc.vhd",) if two else ()),
                                *TB_FILES)]

    def analyse(tmp: Path):
        for cmd in (["ghdl", "-a", *GHDL_FLAGS, "--workdir=.", *srcs],
                    ["ghdl", "-e", *GHDL_FLAGS, "--workdir=.", "vboard_tb"]):
            r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
            if r.returncode:
                raise VBoardError(f"GHDL failed ({' '.join(cmd[:2])}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")

    return atomic_dir(work, analyse)


class GhdlBoard(SimBoard):
    """The virtual board in GHDL, bridged to the pseudo-terminal by a thread (see
    :class:`lutzip.vboard.base.SimBoard` for the parameters)."""

    hdl = "vhdl"

    def __init__(self, mode="fast", params=None, core=None, quiet=True):
        super().__init__(mode, params, core, quiet)
        self.chunk = 32 if mode == "pin" else 4096
        self._stop = threading.Event()
        self._thread = None
        self._dir = None
        self._win = self._rout = None

    @classmethod
    def default_params(cls, mode):
        p = super().default_params(mode)
        p["FAST_CRC"] = False       # GHDL runs the VHDL exactly as boards get it
        p.pop("CORE_CLK_HZ", None)  # one domain by default (GHDL is slow); CORE_CLK_HZ in params: two
        if p.get("REPLAY_WORDS"):
            p["REPLAY_WORDS"] = min(p["REPLAY_WORDS"], 4096)   # a small replay buffer: GHDL is slow
        if mode == "pin":
            p.update(CLK_HZ=12_000_000, BAUD=3_000_000)   # 4 clocks per bit: GHDL is slow
        return p

    def _launch(self, fd):
        self.fd = fd
        work = build_ghdl(self.mode, self.params, self.core, self.quiet)
        self._stop.clear()
        self._dir = tempfile.mkdtemp(prefix="lutzip-ghdl-")
        fin, fout = os.path.join(self._dir, "in.fifo"), os.path.join(self._dir, "out.fifo")
        os.mkfifo(fin)
        os.mkfifo(fout)
        gens = [f"-gFIN={fin}", f"-gFOUT={fout}", f"-gPIN={'true' if self.mode == 'pin' else 'false'}"]
        if two_domains(self.mode, self.params):
            # the bench's link clock is 10 ns (100 MHz); the core clock's half period follows the ratio
            half = clock_ps(self.params["CORE_CLK_HZ"] * 100_000_000 // self.params["CLK_HZ"]) // 2
            gens += ["-gCDC=true", f"-gCORE_HALF_PS={half}"]
        if self.mode == "pin":
            gens.append(f"-gCPB={self.params['CLK_HZ'] // self.params['BAUD']}")
        self.proc = subprocess.Popen(["ghdl", "-r", *GHDL_FLAGS, "--workdir=.", "vboard_tb", *gens,
                                      "--ieee-asserts=disable"], cwd=work, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._win = open(self._open_fifo(fin, os.O_WRONLY), "w", buffering=1)
        self._rout = open(self._open_fifo(fout, os.O_RDONLY), "r")
        self._thread = threading.Thread(target=self._bridge, daemon=True)
        self._thread.start()
        return self.proc

    def _open_fifo(self, path, flags):
        """Open a named pipe without blocking forever if GHDL dies before opening its end."""
        t_end = time.monotonic() + 60
        while True:
            try:
                if flags == os.O_RDONLY:
                    # GHDL opens this end right after the input pipe (whose opening succeeded)
                    return os.open(path, flags)
                fd = os.open(path, flags | os.O_NONBLOCK)   # ENXIO until GHDL opened its reading end
                os.set_blocking(fd, True)
                return fd
            except OSError:
                pass
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                raise VBoardError(f"GHDL stopped before the virtual board came up:\n{err}")
            if time.monotonic() > t_end:
                raise VBoardError("GHDL did not open its pipes within 60 s")
            time.sleep(0.02)

    def _bridge(self):
        idle = True
        try:
            while not self._stop.is_set():
                r, _, _ = select.select([self.fd], [], [], 0.05 if idle else 0)
                data = os.read(self.fd, self.chunk) if r else b""
                if not data and idle:
                    continue
                self._win.write("D" + data.hex() + "\n")
                resp = self._rout.readline()
                if not resp:
                    break
                resp = resp.strip()
                idle = resp[:1] == "1"
                out = bytes.fromhex(resp[1:])
                while out:
                    n = os.write(self.fd, out)
                    out = out[n:]
        except (OSError, ValueError):
            pass

    def _shutdown(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)
            self._thread = None
        try:
            if self._win is not None:
                self._win.write("Q\n")
                self._win.close()
        except (OSError, ValueError):
            pass
        self._win = None
        if self.proc:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:
            if self._rout is not None:
                self._rout.close()
        except OSError:
            pass
        self._rout = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
