"""The virtual board: the converted board top running in a simulator behind a pseudo-terminal.

The host driver opens its port exactly as it opens ``/dev/ttyUSB0``. Back ends (one module each, all on
:mod:`lutzip.vboard.base`, which never imports a back end):

* ``verilog`` (default, :mod:`lutzip.vboard.verilator`): Verilator builds the converted Verilog with the C++
  harness in ``lutzip/firmware/csrc``.
* ``vhdl`` (:mod:`lutzip.vboard.ghdl`): GHDL runs the converted VHDL (the text synthesised for boards) with a
  textio test bench that exchanges bytes with a Python bridge through named pipes (slow: for checking the
  VHDL, not for speed).

Builds live in ``lutzip.cache.cache_dir("vboard")`` (``$LUTZIP_CACHE``, else ``$XDG_CACHE_HOME/lutzip``, else
``~/.cache/lutzip``), keyed by :func:`lutzip.cache.sources_hash` over every build source and the parameters.

Modes: ``fast`` feeds ``proto_engine`` bytes directly (one byte per clock); ``pin`` simulates ``uart_top`` with
every UART bit (``CLK_HZ / BAUD`` clocks per bit).

Example
-------
>>> from lutzip.vboard import VirtualBoard
>>> with VirtualBoard(hdl="verilog", mode="fast") as vb:   # doctest: +SKIP
...     print(vb.port)                                      # e.g. /dev/pts/3
"""
from __future__ import annotations

from lutzip.vboard.base import DEFAULT_PARAMS, MODES, SimBoard, VBoardError
from lutzip.vboard.ghdl import GhdlBoard
from lutzip.vboard.verilator import VerilatorBoard

#: Back end per ``hdl`` choice.
BACKENDS = {"verilog": VerilatorBoard, "vhdl": GhdlBoard}

__all__ = ["VirtualBoard", "SimBoard", "VerilatorBoard", "GhdlBoard", "VBoardError", "DEFAULT_PARAMS", "MODES",
           "BACKENDS"]


def VirtualBoard(hdl="verilog", mode="fast", params=None, core=None, quiet=True) -> SimBoard:  # noqa: N802
    """A virtual board of the chosen back end (not started: call ``.start()`` or use it in a ``with``).

    Parameters
    ----------
    hdl : {"verilog", "vhdl"}
        Simulator back end: Verilator on the converted Verilog, or GHDL on the converted VHDL.
    mode : {"fast", "pin"}
        ``fast`` skips the UART serialisation; ``pin`` simulates every UART bit.
    params : dict, optional
        Board top parameters overriding the back end's defaults (:data:`DEFAULT_PARAMS`; GHDL runs without
        ``FAST_CRC`` and, in pin mode, at 4 clocks per UART bit).
    core : {"real", "stub"}, optional
        Which decoder core to build in (default: see ``lutzip.firmware.engine.proto_engine.get_core``).
    quiet : bool
        Do not print the "building ..." line of a first build.

    Returns
    -------
    SimBoard
        A :class:`VerilatorBoard` or :class:`GhdlBoard`; its ``port`` is set once started.

    Raises
    ------
    VBoardError
        Unknown ``hdl`` or ``mode`` (and, on start, a missing simulator or a failed build).
    """
    try:
        backend = BACKENDS[hdl]
    except (KeyError, TypeError):
        raise VBoardError(f"unknown --hdl {hdl!r} (verilog or vhdl)") from None
    return backend(mode=mode, params=params, core=core, quiet=quiet)
