"""The board top in two clock domains: the UART at the board clock (``CLK_HZ``), the protocol engine and the
decoder core at the core clock (``CORE_CLK_HZ``, a PLL output), crossing at the byte streams
(:func:`lutzip.firmware.engine.proto_engine_cdc.proto_engine_cdc`; docs/PROTOCOL.md, section 7)."""
from myhdl import Signal, block, intbv

from lutzip.firmware.engine.proto_engine_cdc import proto_engine_cdc
from lutzip.firmware.uart.uart_side import uart_side


def ports():
    """Fresh signals for the ports of :func:`uart_top_cdc`, in order."""
    return dict(clk=Signal(bool(0)), rst=Signal(bool(0)), core_clk=Signal(bool(0)), uart_rx=Signal(bool(1)),
                uart_tx=Signal(bool(1)), idle=Signal(bool(0)))


@block
def uart_top_cdc(clk, rst, core_clk, uart_rx, uart_tx, idle=None, core_arst=None, CLK_HZ=25_000_000,
                 CORE_CLK_HZ=100_000_000, BAUD=1_000_000, **params):
    """:func:`lutzip.firmware.uart.uart_top.uart_top` with the engine at ``core_clk``.

    Parameters
    ----------
    clk, rst : Signal
        Board clock and its synchronous reset.
    core_clk : Signal
        Core clock.
    uart_rx, uart_tx : Signal
        The UART lines.
    idle : Signal, optional
        Nothing in progress (link domain).
    core_arst : Signal, optional
        Extra asynchronous reset of the core domain (``not pll_locked``).
    CLK_HZ, CORE_CLK_HZ, BAUD : int
        Board clock, core clock, baud rate.
    **params
        :func:`lutzip.firmware.engine.proto_engine.proto_engine` parameters.
    """
    rx_tdata, tx_tdata = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    rx_tvalid, rx_tready = Signal(bool(0)), Signal(bool(0))
    tx_tvalid, tx_tready = Signal(bool(0)), Signal(bool(0))
    e_idle = Signal(bool(0))
    if idle is None:
        idle = Signal(bool(0))
    u_uart = uart_side(clk, rst, uart_rx, uart_tx, rx_tdata, rx_tvalid, rx_tready, tx_tdata, tx_tvalid, tx_tready,
                       e_idle, idle, CLK_HZ=CLK_HZ, BAUD=BAUD)
    u_eng = proto_engine_cdc(clk, rst, core_clk, rx_tdata, rx_tvalid, rx_tready, tx_tdata, tx_tvalid, tx_tready,
                             e_idle, core_arst=core_arst, CLK_HZ=CLK_HZ, CORE_CLK_HZ=CORE_CLK_HZ, BAUD=BAUD,
                             **params)
    return u_uart, u_eng
