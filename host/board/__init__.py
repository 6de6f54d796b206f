"""Boards the host streams to, behind one interface (:class:`lutzip.board.base.BoardBase`).

* :mod:`lutzip.board.base` -- the interface, result types and errors (imports no backend);
* :mod:`lutzip.board.uart` -- a board over a serial link (real UART or the virtual board's pty);
* ``lutzip.board.pynq`` -- a Zynq board through AXI DMA (PYNQ), when installed;
* :mod:`lutzip.board.verify` -- stream a container through any board, check it, report;
* :func:`open_board` -- the chooser.
"""
from __future__ import annotations

from lutzip.board.base import BoardError

#: Transports :func:`open_board` knows: name -> module (each provides ``open_board(*, sim, timeout, **options)``
#: except ``uart``, which is built in).
TRANSPORTS = {"uart": "lutzip.board.uart", "pynq": "lutzip.board.pynq"}


def open_board(port=None, *, transport="uart", sim=False, baud=3_000_000, timeout=5.0, hdl="verilog",
               mode="fast", core=None, quiet=True, sim_params=None, **options):
    """Open a board: the one place that maps a choice of transport to its implementation.

    Parameters
    ----------
    port : str, optional
        Serial port of a UART board (``/dev/ttyUSB0``, ``/dev/pts/N``); not with ``sim``.
    transport : {"uart", "pynq"}
        How the host reaches the core.
    sim : bool
        Start a simulation of the board for this session (stopped when the board is closed): the virtual
        board (``hdl``, ``mode``, ``core``) for ``uart``, the simulated PYNQ device for ``pynq``.
    baud : int
        UART line rate.
    timeout : float
        Seconds without progress before a wait fails (at least 60 s for the GHDL virtual board).
    hdl, mode, core, quiet
        Virtual board options (:func:`lutzip.vboard.VirtualBoard`).
    sim_params : dict, optional
        Virtual board top parameters over its defaults (``{"STATES": 1}``: a core of one code table).
    **options
        Passed to the transport (e.g. ``overlay=`` for PYNQ, ``rto=`` for the UART).

    Returns
    -------
    BoardBase
        The open board (use it as a context manager).
    """
    if transport not in TRANSPORTS:
        raise BoardError(f"unknown board transport {transport!r} ({', '.join(TRANSPORTS)})")
    if transport != "uart":
        import importlib
        try:
            backend = importlib.import_module(TRANSPORTS[transport])
        except ImportError as e:
            raise BoardError(f"the {transport.upper() if transport == 'pynq' else transport} board driver is not "
                             f"installed/available: {e}") from None
        return backend.open_board(sim=sim, timeout=timeout, **options)
    from lutzip.board.uart import UartBoard
    if not sim:
        if not port:
            raise BoardError("give --port PORT (e.g. /dev/ttyUSB0 or the port `lutzip board --sim` printed) or --sim")
        return UartBoard(port, baud=baud, timeout=timeout, **options)
    if port:
        raise BoardError("give either a port or sim, not both")
    vb = start_virtual_board(hdl=hdl, mode=mode, core=core, quiet=quiet, params=sim_params)
    try:
        if hdl == "vhdl":
            timeout = max(timeout, 60.0)     # GHDL simulates some 10^4..10^5 cycles per second
        board = UartBoard(vb.port, baud=baud, timeout=timeout, simulated=True, **options)
    except BaseException:
        vb.stop()
        raise
    board.attach(vb)
    return board


def start_virtual_board(hdl="verilog", mode="fast", core=None, quiet=True, params=None):
    """Start a virtual board (the converted board top in a simulator behind a pty); ``.port`` is its device."""
    from lutzip.vboard import VirtualBoard
    return VirtualBoard(hdl=hdl, mode=mode, core=core, quiet=quiet, params=params).start()
