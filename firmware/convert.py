"""Convert the board tops to Verilog / VHDL (the files the virtual board simulates and boards synthesise)."""
import os

from myhdl import ResetSignal, Signal, intbv

from lutzip.firmware.engine.proto_engine import get_core, proto_engine


def engine_ports():
    """Fresh signals for the ports of :func:`proto_engine`, in order."""
    return dict(clk=Signal(bool(0)), rst=Signal(bool(0)), in_tdata=Signal(intbv(0)[8:]), in_tvalid=Signal(bool(0)),
                in_tready=Signal(bool(0)), out_tdata=Signal(intbv(0)[8:]), out_tvalid=Signal(bool(0)),
                out_tready=Signal(bool(0)), idle=Signal(bool(0)))


def uart_ports():
    """Fresh signals for the ports of :func:`lutzip.firmware.uart.uart_top.uart_top`, in order."""
    return dict(clk=Signal(bool(0)), rst=Signal(bool(0)), uart_rx=Signal(bool(1)), uart_tx=Signal(bool(1)),
                idle=Signal(bool(0)))


def convert(top="proto_engine", hdl="verilog", path=".", name=None, core=None, **params):
    """Write ``<name>.v`` or ``<name>.vhd`` (plus MyHDL's VHDL package) into ``path``; return the file path.

    ``params`` go to the top (L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, CLK_HZ, BAUD).
    """
    os.makedirs(path, exist_ok=True)
    name = name or top
    core = get_core(core) if (core is None or isinstance(core, str)) else core
    if top == "proto_engine":
        inst = proto_engine(*engine_ports().values(), core=core, **params)
    elif top == "uart_top":
        from lutzip.firmware.uart.uart_top import uart_top
        inst = uart_top(*uart_ports().values(), core=core, **params)
    else:
        raise ValueError(f"unknown top {top!r}")
    lang = "Verilog" if hdl.lower() == "verilog" else "VHDL"
    extra = {"testbench": False} if lang == "Verilog" else {"std_logic_ports": True}
    inst.convert(hdl=lang, path=path, name=name, **extra)
    return os.path.join(path, name + (".v" if lang == "Verilog" else ".vhd"))
