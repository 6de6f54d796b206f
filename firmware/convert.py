"""Convert the board tops to Verilog / VHDL (the files the virtual board simulates and boards synthesise)."""
from lutzip.errors import UnsupportedError
from lutzip.firmware.engine import proto_engine as _engine
from lutzip.firmware.engine import proto_engine_cdc as _engine_cdc
from lutzip.firmware.engine.proto_engine import get_core
from lutzip.firmware.uart import uart_top as _uart
from lutzip.hdl.flows.convert import convert_block

#: The convertible tops: name -> (block, port-signal factory).
TOPS = {"proto_engine": (_engine.proto_engine, _engine.ports), "uart_top": (_uart.uart_top, _uart.ports),
        "proto_engine_cdc": (_engine_cdc.proto_engine_cdc, _engine_cdc.ports)}


def convert(top="proto_engine", hdl="verilog", path=".", name=None, core=None, **params):
    """Convert one top (with the decoder core inside) through :func:`lutzip.hdl.flows.convert.convert_block`.

    Parameters
    ----------
    top : {"proto_engine", "uart_top", "proto_engine_cdc"}
        The byte-stream engine (virtual board, fast mode), the UART top (boards, pin mode) or the byte-stream
        engine in two clock domains (``CORE_CLK_HZ``: the virtual board with a core clock of its own).
    hdl : {"verilog", "vhdl"}
        Output language; VHDL ports are ``std_logic`` / ``std_logic_vector``.
    path : str or Path
        Output folder (created); ``<name>.v`` or ``<name>.vhd`` plus MyHDL's VHDL package go there.
    name : str, optional
        Module / entity name and file stem (default ``top``).
    core : {"real", "stub"} or callable, optional
        The decoder core (see :func:`lutzip.firmware.engine.proto_engine.get_core`).
    **params
        Parameters of the top (L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, CLK_HZ, BAUD, FAST_CRC).

    Returns
    -------
    str
        Path of the converted file.
    """
    if top not in TOPS:
        raise UnsupportedError(f"unknown top {top!r}: choose from {', '.join(TOPS)}")
    block, ports = TOPS[top]
    core = get_core(core) if (core is None or isinstance(core, str)) else core
    inst = block(**ports(), core=core, **params)
    extra = {"std_logic_ports": True} if str(hdl).lower() == "vhdl" else {}
    return str(convert_block(inst, path, name or top, hdl, **extra))
