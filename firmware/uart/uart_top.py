"""The portable board top: a UART (``CLK_HZ``, ``BAUD``) in front of the protocol engine and decoder core.
Thin board tops (lutzip.firmware.boards.*) wrap this with their clock and pin names.

``STATES`` (default 1; not in the function's docstring, which MyHDL copies into the HDL): the decoder core's code
tables, :func:`lutzip.firmware.engine.proto_engine.proto_engine`'s keyword; ``MIRROR`` (default 0) and ``MAX_N``
(default 512) its row stripes, the same keywords; ``LANES`` (default 1) and ``LANES_ROWS`` likewise: the replay
unit's lanes (docs/PROTOCOL.md, section 6.1)."""
from myhdl import Signal, block, intbv

from lutzip.firmware.engine.proto_engine import proto_engine
from lutzip.firmware.uart.uart_side import uart_side


def ports():
    """Fresh signals for the ports of :func:`uart_top`, in order."""
    return dict(clk=Signal(bool(0)), rst=Signal(bool(0)), uart_rx=Signal(bool(1)), uart_tx=Signal(bool(1)),
                idle=Signal(bool(0)))


@block
def uart_top(clk, rst, uart_rx, uart_tx, idle=None,
             CLK_HZ=100_000_000, BAUD=3_000_000, L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=512, MAX_PAYLOAD=1024,
             core=None, FAST_CRC=False, COUNTER_BITS=40, REPLAY_WORDS=0, STATES=1, MIRROR=0, MAX_N=512, LANES=1,
             LANES_ROWS=0):
    """The protocol engine behind a UART.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    uart_rx, uart_tx : Signal
        The board's receive line (host -> board) and transmit line.
    idle : Signal, optional
        High when nothing is in progress (for simulators and power management).
    CLK_HZ, BAUD : int
        Clock and baud rate of the UART.
    L, W, LUT3_DEPTH, RING_DEPTH, MAX_PAYLOAD, core, FAST_CRC
        See :func:`lutzip.firmware.engine.proto_engine.proto_engine`.
    """
    rx_tdata = Signal(intbv(0)[8:])
    rx_tvalid, rx_tready = Signal(bool(0)), Signal(bool(0))
    tx_tdata = Signal(intbv(0)[8:])
    tx_tvalid, tx_tready = Signal(bool(0)), Signal(bool(0))
    e_idle = Signal(bool(0))
    if idle is None:
        idle = Signal(bool(0))
    u_uart = uart_side(clk, rst, uart_rx, uart_tx, rx_tdata, rx_tvalid, rx_tready, tx_tdata, tx_tvalid, tx_tready,
                       e_idle, idle, CLK_HZ=CLK_HZ, BAUD=BAUD)
    u_eng = proto_engine(clk, rst, rx_tdata, rx_tvalid, rx_tready, tx_tdata, tx_tvalid, tx_tready, e_idle,
                         L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, RING_DEPTH=RING_DEPTH, MAX_PAYLOAD=MAX_PAYLOAD,
                         CLK_HZ=CLK_HZ, BAUD=BAUD, core=core, FAST_CRC=FAST_CRC,
                         COUNTER_BITS=COUNTER_BITS, REPLAY_WORDS=REPLAY_WORDS,
                         **({"STATES": STATES} if STATES != 1 else {}),
                         **({"MIRROR": MIRROR, "MAX_N": MAX_N} if MIRROR else {}),
                         **({"LANES": LANES, "LANES_ROWS": LANES_ROWS} if LANES != 1 else {}))
    return u_uart, u_eng
