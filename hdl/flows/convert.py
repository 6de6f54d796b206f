"""Convert :func:`lutzip.hdl.core.decoder_core.decoder_core` to VHDL and/or Verilog.

``convert(out_dir)`` writes ``decoder_core.vhd`` (+ ``pck_myhdl_*.vhd``) and ``decoder_core.v`` into
``out_dir`` (created if needed); nothing is written to the current directory.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from myhdl import ResetSignal, Signal, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.core.decoder_core import decoder_core

HDLS = ("vhdl", "verilog")


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
    h = str(hdl).lower()
    if h not in HDLS:
        raise UnsupportedError(f"unknown HDL {hdl!r}: choose from {', '.join(HDLS)}")
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
    return out / (name + (".v" if h == "verilog" else ".vhd"))


def core_signals(W=16):
    """Fresh signals for every port of the core, in signature order."""
    return dict(
        clk=Signal(bool(0)), rst=ResetSignal(0, active=1, isasync=False),
        s_axis_tdata=Signal(intbv(0)[32:]), s_axis_tvalid=Signal(bool(0)), s_axis_tready=Signal(bool(0)),
        s_axis_tlast=Signal(bool(0)),
        m_axis_tdata=Signal(intbv(0)[W:]), m_axis_tvalid=Signal(bool(0)), m_axis_tready=Signal(bool(0)),
        m_axis_tlast=Signal(bool(0)), m_axis_tuser=Signal(bool(0)),
        tbl_we=Signal(bool(0)), tbl_sel=Signal(intbv(0)[2:]), tbl_addr=Signal(intbv(0)[12:]),
        tbl_wdata=Signal(intbv(0)[32:]),
        err_valid=Signal(bool(0)), err_code=Signal(intbv(0)[4:]), busy=Signal(bool(0)))


def convert(out_dir, hdl=HDLS, L=8, W=16, LUT3_DEPTH=4096, LUT1_RAM="block", FRONT="window"):
    """Write the converted core into ``out_dir``; returns the list of files written.

    Parameters
    ----------
    out_dir : str or Path
        Destination directory (created).
    hdl : str or sequence of str
        ``"vhdl"`` and/or ``"verilog"``.
    L, W, LUT3_DEPTH : int
        Core parameters (docs/CORE.md).
    LUT1_RAM : str
        ``"block"`` (registered LUT1 read: block RAM, needed on iCE40) or ``"distributed"`` (asynchronous read
        from a registered prefix: LUT RAM, faster on ECP5 / Xilinx).
    FRONT : str
        ``"window"`` (LUT1 in the one-cycle loop; small, for iCE40) or ``"vector"`` (next positions
        precomputed per word: the fast front, 32 TL block RAMs; docs/CORE.md).
    """
    if isinstance(hdl, str):
        hdl = (hdl,)
    hdl = tuple(h.lower() for h in hdl)
    for h in hdl:
        if h not in HDLS:
            raise UnsupportedError(f"unknown HDL {h!r}: choose from {', '.join(HDLS)}")
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    cwd = os.getcwd()
    os.chdir(out)  # belt and braces: some MyHDL versions write helper files into the cwd
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "driven but not read" notes on interface signals
            for h in hdl:
                inst = decoder_core(**core_signals(W), L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM,
                                    FRONT=FRONT)
                kw = dict(hdl="VHDL") if h == "vhdl" else dict(hdl="Verilog", testbench=False)
                inst.convert(path=str(out), name="decoder_core", **kw)
    finally:
        os.chdir(cwd)
    files = sorted(p for p in out.iterdir() if p not in before or p.name.startswith("decoder_core"))
    return [str(p) for p in files]
