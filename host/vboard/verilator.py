"""The virtual board: the converted board top running in a simulator behind a pseudo-terminal.

The host driver opens its port exactly as it opens ``/dev/ttyUSB0``. Back ends:

* ``verilog`` (default): Verilator builds the converted Verilog with the C++ harness in
  ``lutzip/firmware/csrc``; builds are cached by a hash of every source that goes into them.
* ``vhdl``: GHDL runs the converted VHDL (the text synthesised for boards) with a textio test bench that
  exchanges bytes with a Python bridge through named pipes (slow: for checking the VHDL, not for speed).

Modes: ``fast`` feeds ``proto_engine`` bytes directly (one byte per clock); ``pin`` simulates ``uart_top`` with
every UART bit (``CLK_HZ / BAUD`` clocks per bit).
"""
from __future__ import annotations

import hashlib
import os
import pty
import shutil
import subprocess
import sys
import tty
from pathlib import Path

from lutzip.errors import LutzError

#: Parameters of the virtual board per mode (the UART clock ratio keeps pin mode affordable).
DEFAULT_PARAMS = {
    "fast": dict(L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=4096, MAX_PAYLOAD=1024, CLK_HZ=100_000_000, BAUD=0,
                 FAST_CRC=True),
    "pin": dict(L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=1024, MAX_PAYLOAD=1024, CLK_HZ=48_000_000,
                BAUD=3_000_000),
}


class VBoardError(LutzError):
    """The virtual board could not be built or started (missing simulator, build failure, ...)."""


def cache_dir() -> Path:
    root = os.environ.get("LUTZIP_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "lutzip")
    return Path(root) / "vboard"


def _firmware_path() -> Path:
    import lutzip.firmware as fw
    return Path(fw.__file__).resolve().parent


def _sources_hash(extra: str) -> str:
    import lutzip.firmware as fw
    import lutzip.hdl as hdl
    h = hashlib.sha256(extra.encode())
    for pkg in (fw, hdl):
        base = Path(pkg.__file__).resolve().parent
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.suffix in (".py", ".cpp", ".h", ".vhd") and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(base)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _tool_version(cmd) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _convert(top, hdl, path, params, core):
    from lutzip.firmware.convert import convert
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return convert(top=top, hdl=hdl, path=str(path), name=top, core=core, **params)


def _log(msg, quiet):
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def build_verilator(mode="fast", params=None, core=None, quiet=True) -> Path:
    """Convert and compile the virtual board with Verilator (cached); return the executable."""
    if shutil.which("verilator") is None:
        raise VBoardError("verilator is not installed (apt-get install verilator, or use --hdl vhdl)")
    params = dict(DEFAULT_PARAMS[mode], **(params or {}))
    from lutzip.firmware.engine.proto_engine import get_core
    core_fn = get_core(core)
    cflags = "-O3 -march=native"
    key = (f"verilator|{mode}|{sorted(params.items())}|{core_fn.__name__}|{cflags}|"
           f"{_tool_version(['verilator', '--version'])}")
    d = cache_dir() / _sources_hash(key)
    exe = d / "vboard"
    if exe.exists():
        return exe
    _log(f"lutzip: building the virtual board ({mode} mode, Verilator) in {d} ...", quiet)
    tmp = d.with_name(d.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    top = "proto_engine" if mode == "fast" else "uart_top"
    vfile = _convert(top, "verilog", tmp, params, core_fn)
    if mode == "pin":
        cflags += f" -DPIN_MODE -DCLKS_PER_BIT={params['CLK_HZ'] // params['BAUD']}"
    cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast", "--x-initial", "fast",
           "--noassert", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--prefix", "Vtop", "--top-module", top,
           vfile, str(_firmware_path() / "csrc" / "vboard_main.cpp"), "-CFLAGS", cflags,
           "--Mdir", str(tmp / "obj"), "-o", str(tmp / "vboard")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode or not (tmp / "vboard").exists():
        raise VBoardError(f"Verilator build failed ({' '.join(cmd[:3])} ...):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    shutil.rmtree(tmp / "obj", ignore_errors=True)
    if d.exists():
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, d)
    return exe


class VirtualBoard:
    """A simulated board behind a pseudo-terminal.

    Parameters
    ----------
    hdl : {"verilog", "vhdl"}
        Simulator back end: Verilator on the converted Verilog, or GHDL on the converted VHDL.
    mode : {"fast", "pin"}
        ``fast`` skips the UART serialisation; ``pin`` simulates every UART bit.
    params : dict, optional
        Board top parameters overriding :data:`DEFAULT_PARAMS`.
    core : {"real", "stub"}, optional
        Which decoder core to build in (default: see ``lutzip.firmware.engine.proto_engine.get_core``).

    Attributes
    ----------
    port : str
        Device name of the pseudo-terminal to open with pyserial.
    """

    def __init__(self, hdl="verilog", mode="fast", params=None, core=None, quiet=True):
        if hdl not in ("verilog", "vhdl"):
            raise VBoardError(f"unknown --hdl {hdl!r} (verilog or vhdl)")
        if mode not in ("fast", "pin"):
            raise VBoardError(f"unknown --mode {mode!r} (fast or pin)")
        self.hdl, self.mode, self.core, self.quiet = hdl, mode, core, quiet
        base = dict(DEFAULT_PARAMS[mode])
        if hdl == "vhdl":
            base["FAST_CRC"] = False       # GHDL runs the VHDL exactly as boards get it
            if mode == "pin":
                base.update(CLK_HZ=12_000_000, BAUD=3_000_000)   # 4 clocks per bit: GHDL is slow
        self.params = dict(base, **(params or {}))
        self.proc = None
        self.port = None
        self._fds = []
        self._bridge = None

    def start(self) -> "VirtualBoard":
        master, slave = pty.openpty()
        tty.setraw(slave)
        tty.setraw(master)
        self._fds = [master, slave]
        self.port = os.ttyname(slave)
        if self.hdl == "verilog":
            exe = build_verilator(self.mode, self.params, self.core, self.quiet)
            self.proc = subprocess.Popen([str(exe), str(master)], stdin=subprocess.PIPE, pass_fds=(master,))
        else:
            from lutzip.vboard.ghdl import GhdlBoard
            self._bridge = GhdlBoard(self.mode, self.params, self.core, master, self.quiet).start()
            self.proc = self._bridge.proc
        return self

    def stop(self):
        """Stop the simulator and close the pseudo-terminal."""
        if self._bridge is not None:
            self._bridge.stop()
            self._bridge = None
        elif self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
