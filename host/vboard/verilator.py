"""Verilator back end of the virtual board: the converted Verilog with the C++ harness
``lutzip/firmware/csrc/vboard_main.cpp``, compiled once per set of sources and parameters (cached in
``lutzip.cache.cache_dir("vboard")``), fed from the pseudo-terminal master by the executable itself."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from lutzip.cache import atomic_dir
from lutzip.vboard.base import DEFAULT_PARAMS, SimBoard, VBoardError, board_params, build_dir, check_mode, \
    clock_ps, convert_top, firmware_path, log, tool_version, two_domains

#: C++ compiler flags of the harness and the Verilated model.
CFLAGS = "-O3 -march=native"


def build_verilator(mode="fast", params=None, core=None, quiet=True) -> Path:
    """Convert and compile the virtual board with Verilator (cached); return the executable.

    Parameters
    ----------
    mode : {"fast", "pin"}
        ``fast`` builds ``proto_engine`` (bytes straight in), ``pin`` builds ``uart_top`` (every UART bit).
    params : dict, optional
        Board top parameters overriding :data:`lutzip.vboard.base.DEFAULT_PARAMS`.
    core : {"real", "stub"}, optional
        The decoder core to build in.
    quiet : bool
        Do not print the "building ..." line.

    Returns
    -------
    pathlib.Path
        The executable; it serves the pseudo-terminal whose master file descriptor is its argument.
    """
    check_mode(mode)
    if shutil.which("verilator") is None:
        raise VBoardError("verilator is not installed (apt-get install verilator, or use --hdl vhdl)")
    params = board_params(DEFAULT_PARAMS[mode], params, core)
    from lutzip.firmware.engine.proto_engine import get_core
    core_fn = get_core(core)
    cflags = CFLAGS
    if mode == "pin":
        cflags += f" -DPIN_MODE -DCLKS_PER_BIT={params['CLK_HZ'] // params['BAUD']}"
    two = two_domains(mode, params)
    if two:
        cflags += f" -DLINK_PS={clock_ps(params['CLK_HZ'])} -DCORE_PS={clock_ps(params['CORE_CLK_HZ'])}"
    d = build_dir("verilator", mode, params, core_fn, cflags, tool_version(["verilator", "--version"]))
    exe = d / "vboard"
    if exe.exists():
        return exe
    log(f"lutzip: building the virtual board ({mode} mode, Verilator) in {d} ...", quiet)
    top = ("proto_engine_cdc" if two else "proto_engine") if mode == "fast" else "uart_top"

    def build(tmp: Path):
        conv = params if two else {k: v for k, v in params.items()
                                   if k not in ("CORE_CLK_HZ", "CORE_RST_REG")}   # one domain
        vfile = convert_top(top, "verilog", tmp, conv, core_fn)
        cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast", "--x-initial",
               "fast", "--noassert", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--prefix", "Vtop", "--top-module",
               top, vfile, str(firmware_path() / "csrc" / "vboard_main.cpp"), "-CFLAGS", cflags,
               "--Mdir", str(tmp / "obj"), "-o", str(tmp / "vboard")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode or not (tmp / "vboard").exists():
            raise VBoardError(f"Verilator build failed ({' '.join(cmd[:3])} ...):\n"
                              f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
        shutil.rmtree(tmp / "obj", ignore_errors=True)

    atomic_dir(d, build)
    return exe


class VerilatorBoard(SimBoard):
    """The virtual board in Verilator (see :class:`lutzip.vboard.base.SimBoard` for the parameters)."""

    hdl = "verilog"

    def _launch(self, fd):
        exe = build_verilator(self.mode, self.params, self.core, self.quiet)
        return subprocess.Popen([str(exe), str(fd)], stdin=subprocess.PIPE, pass_fds=(fd,))

    def _shutdown(self):
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def __getattr__(name):
    # one-release shim: ``lutzip.vboard.verilator.VirtualBoard`` was the chooser before lutzip.vboard had one
    if name == "VirtualBoard":
        from lutzip.vboard import VirtualBoard
        return VirtualBoard
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
