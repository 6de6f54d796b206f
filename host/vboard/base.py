"""What every virtual-board back end shares: the error type, the board parameters, the build cache key, the
conversion of a board top, and the pseudo-terminal plumbing (:class:`SimBoard`).

This module never imports a back end; the back ends (:mod:`lutzip.vboard.verilator`,
:mod:`lutzip.vboard.ghdl`) build on it, and :func:`lutzip.vboard.VirtualBoard` chooses one (pyserial's pattern).
"""
from __future__ import annotations

import os
import pty
import subprocess
import sys
import tty
import warnings
from pathlib import Path

from lutzip.errors import LutzError

#: Modes of the virtual board: ``fast`` feeds ``proto_engine`` one byte per clock, ``pin`` simulates
#: ``uart_top`` with every UART bit (``CLK_HZ / BAUD`` clocks per bit).
MODES = ("fast", "pin")

#: Parameters of the virtual board per mode (the UART clock ratio keeps pin mode affordable). Fast mode has a
#: 64 K-word replay buffer (docs/PROTOCOL.md, section 6; 256 KiB, a few seconds of MyHDL conversion and no
#: measurable simulation cost): ``lutzip stream --sim --replay K`` measures the core's own rate; pin mode
#: keeps the build without one (the iCEBreaker's).
#: Fast mode runs the two-domain top (docs/PROTOCOL.md, section 7): the byte link at ``CLK_HZ``, the engine and
#: core at ``CORE_CLK_HZ`` (the harness is the PLL's simulation model; 100 : 125 MHz, edges of both clocks in
#: time order); ``CORE_CLK_HZ`` equal to ``CLK_HZ`` (or absent) builds the single-domain ``proto_engine``.
#: ``CORE_IN_REG`` / ``RING_REG``: the register slices in front of the core and behind the command ring, and
#: ``REPLAY_PIPE`` (the banked, pipelined replay buffer read), ``TABLE_REG`` (the table port registered) and
#: ``RESULT_REG`` (the decoded-word FIFO's read registered), ``RST_REG`` (each block's reset registered) and
#: ``RING_PIPE`` (the command ring read through the RAM's output register), ``CORE_RST_REG`` (the core domain's
#: reset registered once more), as in the two-domain ULX3S build.
#: ``STATES``: the decoder core's code tables (docs/CORE.md): fast mode 2, as the board builds (it decodes ``lutzip
#: compress --states 2`` files, format version 5, and one-table files), pin mode 1, a board of one code table (a
#: board built before STATES, or with ``--states 1``: a v5 file is refused in one line after IDENT); ``lutzip board
#: --sim --sim-states N`` / ``lutzip stream --sim --sim-states N`` or ``params`` choose. The stub core
#: (``core="stub"``) builds STATES=1 unless asked.
#: ``MIRROR``: the core's row stripes (docs/CORE.md section 7): fast mode 1, as the ULX3S (it decodes row streams,
#: format version 6, the encoder's default for mirrored tensors), pin mode 0, as the iCEBreaker (a row stream is
#: refused in one line after IDENT); ``--sim-mirror M`` or ``params`` choose; the stub core builds 0 unless asked,
#: and so does a board with replay lanes (``LANES`` > 1) unless asked (``--sim-lanes N --sim-mirror 1``: the N-lane
#: replay decoder with row stripes, docs/CORE.md section 6.8).
DEFAULT_PARAMS = {
    "fast": dict(L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=4096, MAX_PAYLOAD=1024, CLK_HZ=100_000_000, BAUD=0,
                 FAST_CRC=True, REPLAY_WORDS=65536, CORE_CLK_HZ=125_000_000, CORE_IN_REG=True,
                 RING_REG=True, REPLAY_PIPE=True, TABLE_REG=True,
                 RESULT_REG=True, RST_REG=True, RING_PIPE=True, CORE_RST_REG=True, STATES=2, MIRROR=1),
    "pin": dict(L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=1024, MAX_PAYLOAD=1024, CLK_HZ=48_000_000,
                BAUD=3_000_000, STATES=1, MIRROR=0),
}


class VBoardError(LutzError):
    """The virtual board could not be built or started (missing simulator, build failure, ...)."""


def board_params(defaults: dict, params=None, core=None) -> dict:
    """A build's parameters: ``defaults`` with ``params`` over them; ``STATES`` 1 and ``MIRROR`` 0 for the stub
    core unless ``params`` ask (the stub decodes one code table and no row stripes); ``MIRROR`` 0 with replay lanes
    (``LANES`` > 1) unless ``params`` ask (the lane boards build as before; with ``MIRROR=1`` every lane takes row
    stripes, docs/CORE.md section 6.8)."""
    out = dict(defaults, **(params or {}))
    if out.get("LANES", 1) > 1 and "MIRROR" not in (params or {}):
        out["MIRROR"] = 0
    from lutzip.firmware.engine.proto_engine import get_core
    if get_core(core).__name__ == "core_stub":
        for k, v in (("STATES", 1), ("MIRROR", 0)):
            if k not in (params or {}):
                out[k] = v
    return out


def check_mode(mode: str) -> str:
    """Return ``mode`` if it is one of :data:`MODES`, else raise :class:`VBoardError`."""
    if mode not in MODES:
        raise VBoardError(f"unknown --mode {mode!r} (fast or pin)")
    return mode


def firmware_path() -> Path:
    """The folder of the ``lutzip.firmware`` package (C++ harness in ``csrc/``, test benches in ``tb/``)."""
    import lutzip.firmware as fw
    return Path(fw.__file__).resolve().parent


def tool_version(cmd) -> str:
    """The first output of ``cmd`` (e.g. ``["verilator", "--version"]``), or ``""`` if it cannot run."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def build_dir(backend: str, mode: str, params: dict, core_fn, *extra) -> Path:
    """The cache folder of one virtual-board build.

    Parameters
    ----------
    backend : str
        Name of the back end (``"verilator"``, ``"ghdl"``); also the folder name's prefix.
    mode : str
        ``"fast"`` or ``"pin"``.
    params : dict
        Board top parameters of the build.
    core_fn : callable
        The decoder core block built in (its name enters the key).
    *extra
        Anything else the build depends on (tool version, compiler flags).

    Returns
    -------
    pathlib.Path
        ``cache_dir("vboard") / "<backend>-<key>"``, the key being :func:`lutzip.cache.sources_hash` over
        every build source and all of the above.
    """
    from lutzip.cache import cache_dir, sources_hash
    key = sources_hash("vboard", backend, mode, sorted(params.items()), core_fn.__name__, *extra)
    return cache_dir("vboard") / f"{backend}-{key}"


def convert_top(top: str, hdl: str, path, params: dict, core_fn) -> str:
    """Convert the board top ``top`` to ``hdl`` into ``path`` (:func:`lutzip.firmware.convert.convert`);
    return the file written."""
    from lutzip.firmware.convert import convert
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return convert(top=top, hdl=hdl, path=str(path), name=top, core=core_fn, **params)


def two_domains(mode: str, params: dict) -> bool:
    """True if ``params`` ask for the two-domain top: a ``CORE_CLK_HZ`` other than ``CLK_HZ`` (fast mode
    only: the byte streams at ``CLK_HZ``, the engine at ``CORE_CLK_HZ``; docs/PROTOCOL.md, section 7)."""
    core = params.get("CORE_CLK_HZ")
    if not core or core == params["CLK_HZ"]:
        return False
    if mode != "fast":
        raise VBoardError("CORE_CLK_HZ (a second clock domain) is supported in fast mode only")
    return True


def clock_ps(hz: int) -> int:
    """The period of a ``hz`` clock in whole picoseconds (the harness's time unit; >= 2)."""
    ps = round(1e12 / hz)
    if ps < 2:
        raise VBoardError(f"clock {hz} Hz is too fast for the harness (period < 2 ps)")
    return ps


def log(msg: str, quiet: bool):
    """Print a progress line to stderr unless ``quiet``."""
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


class SimBoard:
    """A simulated board behind a pseudo-terminal; back ends implement :meth:`_launch` and :meth:`_shutdown`.

    Parameters
    ----------
    mode : {"fast", "pin"}
        ``fast`` skips the UART serialisation; ``pin`` simulates every UART bit.
    params : dict, optional
        Board top parameters overriding the back end's :meth:`default_params`.
    core : {"real", "stub"}, optional
        Which decoder core to build in (default: see ``lutzip.firmware.engine.proto_engine.get_core``).
    quiet : bool
        Do not print the "building ..." line.

    Attributes
    ----------
    hdl : str
        The language the back end simulates (``"verilog"`` or ``"vhdl"``).
    port : str or None
        Device name of the pseudo-terminal to open with pyserial (set by :meth:`start`).
    proc : subprocess.Popen or None
        The simulator process while the board runs.
    """

    hdl = ""

    def __init__(self, mode="fast", params=None, core=None, quiet=True):
        self.mode = check_mode(mode)
        self.core, self.quiet = core, quiet
        self.params = board_params(self.default_params(mode), params, core)
        self.proc = None
        self.port = None
        self._fds = []

    @classmethod
    def default_params(cls, mode: str) -> dict:
        """The board parameters of ``mode`` for this back end (a copy of :data:`DEFAULT_PARAMS`)."""
        return dict(DEFAULT_PARAMS[mode])

    def start(self) -> "SimBoard":
        """Build (cached) and start the simulator behind a new pseudo-terminal; return ``self``."""
        master, slave = pty.openpty()
        tty.setraw(slave)
        tty.setraw(master)
        self._fds = [master, slave]
        self.port = os.ttyname(slave)
        try:
            self.proc = self._launch(master)
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, fd: int) -> subprocess.Popen:
        """Start the simulator serving the pseudo-terminal master ``fd``; return its process."""
        raise NotImplementedError

    def _shutdown(self):
        """Stop the simulator process and release what :meth:`_launch` made (also after a partial start)."""
        raise NotImplementedError

    def stop(self):
        """Stop the simulator and close the pseudo-terminal."""
        self._shutdown()
        self.proc = None
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []

    def alive(self) -> bool:
        """True while the simulator runs."""
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
