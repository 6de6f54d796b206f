"""The portable board top: a UART (``CLK_HZ``, ``BAUD``) in front of the protocol engine and decoder core.
Thin board tops (lutzip.firmware.boards.*) wrap this with their clock and pin names."""
from myhdl import Signal, always_comb, block, intbv

from lutzip.firmware.engine.proto_engine import proto_engine
from lutzip.firmware.uart.uart_rx import uart_rx as uart_rx_block
from lutzip.firmware.uart.uart_tx import uart_tx as uart_tx_block


@block
def uart_top(clk, rst, uart_rx, uart_tx, idle=None,
             CLK_HZ=100_000_000, BAUD=3_000_000, L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=512, MAX_PAYLOAD=1024,
             core=None, FAST_CRC=False):
    """``uart_rx`` is the board's receive line (host -> board), ``uart_tx`` its transmit line; ``idle`` is high
    when nothing is in progress (for simulators and power management)."""
    rx_d = Signal(intbv(0)[8:])
    rx_v, rx_r, rx_busy = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    tx_d = Signal(intbv(0)[8:])
    tx_v, tx_r, tx_busy = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    e_idle = Signal(bool(0))
    if idle is None:
        idle = Signal(bool(0))

    @always_comb
    def glue():
        idle.next = e_idle and not rx_busy and not tx_busy and not rx_v

    u_rx = uart_rx_block(clk, rst, uart_rx, rx_d, rx_v, rx_r, rx_busy, CLK_HZ=CLK_HZ, BAUD=BAUD)
    u_tx = uart_tx_block(clk, rst, tx_d, tx_v, tx_r, uart_tx, tx_busy, CLK_HZ=CLK_HZ, BAUD=BAUD)
    u_eng = proto_engine(clk, rst, rx_d, rx_v, rx_r, tx_d, tx_v, tx_r, e_idle, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH,
                         RING_DEPTH=RING_DEPTH, MAX_PAYLOAD=MAX_PAYLOAD, CLK_HZ=CLK_HZ, BAUD=BAUD, core=core,
                         FAST_CRC=FAST_CRC)
    return glue, u_rx, u_tx, u_eng
