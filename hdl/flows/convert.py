"""Conversion of MyHDL designs to VHDL / Verilog: the one place lutzip calls MyHDL's converter.

* :func:`convert_block` converts any elaborated top-level block (the core, a board top, a test top);
  firmware/ uses it for its tops.
* :func:`convert_core` elaborates the decoder core (or a stand-in with its ports) for one set of
  :class:`lutzip.hdl.core.ports.CoreParams` and converts it; ``lutzip hdl convert``, the simulators
  (:mod:`lutzip.hdl.flows.simulate`) and synthesis (:mod:`lutzip.hdl.flows.synth`) all go through it.

Nothing is written to the current directory.
"""
from __future__ import annotations

import inspect
import os
import warnings
from pathlib import Path

from lutzip.errors import UnsupportedError
from lutzip.hdl.core.ports import CoreParams, core_signals

HDLS = ("vhdl", "verilog")
SUFFIX = {"vhdl": ".vhd", "verilog": ".v"}


def check_hdl(hdl) -> str:
    """``hdl`` in lower case, or an :class:`UnsupportedError` naming it."""
    h = str(hdl).lower()
    if h not in HDLS:
        raise UnsupportedError(f"unknown HDL {hdl!r}: choose from {', '.join(HDLS)}")
    return h


def convert_block(inst, out_dir, name, hdl="verilog", **options):
    """Convert one elaborated top-level ``@block`` instance; the one place lutzip calls MyHDL's converter.

    Parameters
    ----------
    inst : myhdl block instance
        The elaborated top (core, board top, test top ...).
    out_dir : str or Path
        Destination directory (created); nothing is written anywhere else (MyHDL's helper files included).
    name : str
        Module / entity name and file stem.
    hdl : str
        ``"verilog"`` or ``"vhdl"`` (case-insensitive).
    **options
        Passed to ``inst.convert`` (e.g. ``std_logic_ports=True`` for VHDL). Verilog never gets a test bench.

    Returns
    -------
    Path
        ``out_dir/<name>.v`` or ``out_dir/<name>.vhd``.
    """
    h = check_hdl(hdl)
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    kw = dict(options)
    if h == "verilog":
        kw.setdefault("testbench", False)
    cwd = os.getcwd()
    os.chdir(out)  # some MyHDL versions write helper files into the cwd
    try:
        inst.convert(hdl="Verilog" if h == "verilog" else "VHDL", path=str(out), name=name, **kw)
    finally:
        os.chdir(cwd)
    return out / (name + SUFFIX[h])


def core_kwargs(params: CoreParams, core=None) -> dict:
    """The keyword parameters to elaborate ``core`` with (``None``: the decoder core gets every parameter).

    A stand-in with the core's ports (tests) gets the parameters its signature declares.
    """
    p = params.as_dict()
    if core is None:
        return p
    try:
        sig = inspect.signature(getattr(core, "func", core))
    except (TypeError, ValueError):
        return p
    if any(v.kind is inspect.Parameter.VAR_KEYWORD for v in sig.parameters.values()):
        return p
    return {k: v for k, v in p.items() if k in sig.parameters}


def elaborate_core(params=None, core=None, **more):
    """The decoder core (or ``core``) elaborated on fresh port signals, for :class:`CoreParams` ``params``."""
    p = CoreParams.make(params, **more)
    if core is None:
        from lutzip.hdl.core.decoder_core import decoder_core as core_fn
        return core_fn(**core_signals(p.W), **core_kwargs(p))
    return core(**core_signals(p.W), **core_kwargs(p, core))


def convert_core(out_dir, hdl="verilog", *, core=None, name="decoder_core", **params):
    """Convert the decoder core with the given parameters into ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Destination directory (created).
    hdl : str
        ``"verilog"`` or ``"vhdl"``; VHDL also writes MyHDL's ``pck_myhdl_*.vhd`` package.
    core : myhdl block, optional
        A block with the core's ports (a stand-in); default :func:`lutzip.hdl.core.decoder_core.decoder_core`.
    name : str
        Module / entity name and file stem.
    **params
        Every core parameter (``L``, ``W``, ``LUT3_DEPTH``, ``LUT1_RAM``, ``FRONT``, ``STEP``; see
        :class:`lutzip.hdl.core.ports.CoreParams`), checked before anything is elaborated.

    Returns
    -------
    Path
        ``out_dir/<name>.v`` or ``out_dir/<name>.vhd``.
    """
    h = check_hdl(hdl)
    p = CoreParams.make(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "driven but not read" notes on interface signals
        inst = elaborate_core(p, core)
        return convert_block(inst, out_dir, name, h)


def elaborate_lanes(lanes: int, params=None, rows: int = 0, assign: str = "load", **more):
    """The N-lane decoder (:func:`lutzip.hdl.core.decoder_lanes.decoder_lanes`) elaborated on fresh port signals.

    Parameters
    ----------
    lanes : int
        ``LANES`` (1, 2, 4, 8).
    params : dict or CoreParams, optional
        The single core's parameters (checked by :class:`CoreParams`).
    rows : int
        Buffer rows per lane (0: :func:`lutzip.hdl.core.decoder_lanes.default_rows`).
    assign : str
        ``ASSIGN``: ``"rr"`` (round robin) or ``"load"`` (least-loaded lane).
    """
    from lutzip.hdl.core.decoder_lanes import decoder_lanes
    from lutzip.hdl.core.ports import lanes_signals
    p = CoreParams.make(params, **more)
    return decoder_lanes(**lanes_signals(lanes, p.W), LANES=lanes, ROWS=rows, ASSIGN=assign, **p.as_dict())


def convert_lanes(out_dir, hdl="verilog", *, lanes: int = 2, rows: int = 0, assign: str = "load", name="decoder_lanes",
                  **params):
    """Convert the N-lane decoder into ``out_dir`` (as :func:`convert_core`; ``lanes`` and ``rows`` as
    :func:`elaborate_lanes`). Returns ``out_dir/<name>.v`` or ``out_dir/<name>.vhd``."""
    h = check_hdl(hdl)
    p = CoreParams.make(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inst = elaborate_lanes(lanes, p, rows, assign)
        return convert_block(inst, out_dir, name, h)
