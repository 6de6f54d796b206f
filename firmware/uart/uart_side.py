"""The UART half of the board tops: receiver, transmitter and the ``idle`` glue around the engine's byte streams
(:func:`lutzip.firmware.uart.uart_top.uart_top`, :func:`lutzip.firmware.uart.uart_top_cdc.uart_top_cdc`)."""
from myhdl import Signal, always_comb, block

from lutzip.firmware.uart.uart_rx import uart_rx as uart_rx_block
from lutzip.firmware.uart.uart_tx import uart_tx as uart_tx_block


@block
def uart_side(clk, rst, uart_rx, uart_tx, m_axis_tdata, m_axis_tvalid, m_axis_tready,
              s_axis_tdata, s_axis_tvalid, s_axis_tready, e_idle, idle, CLK_HZ=100_000_000, BAUD=3_000_000):
    """A UART (8N1) as two byte streams.

    Parameters
    ----------
    clk, rst : Signal
        The UART's clock and synchronous reset.
    uart_rx, uart_tx : Signal
        The board's receive line (host -> board) and transmit line.
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        Bytes received (to the engine).
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        Bytes to send (from the engine).
    e_idle : Signal
        The engine is idle.
    idle : Signal
        ``e_idle`` and neither UART half busy nor a received byte waiting.
    CLK_HZ, BAUD : int
        Clock and baud rate.
    """
    rx_busy, tx_busy = Signal(bool(0)), Signal(bool(0))

    @always_comb
    def glue():
        idle.next = e_idle and not rx_busy and not tx_busy and not m_axis_tvalid

    u_rx = uart_rx_block(clk, rst, uart_rx, m_axis_tdata, m_axis_tvalid, m_axis_tready, rx_busy,
                         CLK_HZ=CLK_HZ, BAUD=BAUD)
    u_tx = uart_tx_block(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, uart_tx, tx_busy,
                         CLK_HZ=CLK_HZ, BAUD=BAUD)
    return glue, u_rx, u_tx
