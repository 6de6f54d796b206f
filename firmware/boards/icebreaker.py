"""iCEBreaker top (iCE40UP5K-SG48, 12 MHz): the UART board design on the FT2232H USB-UART.

Pins (constraints/icebreaker.pcf): CLK 12 MHz, BTN_N user button (reset), RX/TX USB-UART,
LEDR_N red LED (on while in reset), LEDG_N green LED (heartbeat). No PLL: the design runs at 12 MHz.
"""
from myhdl import ResetSignal, Signal, always_comb, block

from lutzip.firmware.boards.glue import board_glue

CLK_HZ = 12_000_000


def ports():
    """Fresh signals for the top-level ports, named as in the PCF."""
    return dict(CLK=Signal(bool(0)), BTN_N=Signal(bool(1)), RX=Signal(bool(1)), TX=Signal(bool(1)),
                LEDR_N=Signal(bool(1)), LEDG_N=Signal(bool(1)))


@block
def board_icebreaker(CLK, BTN_N, RX, TX, LEDR_N, LEDG_N, BAUD=1_000_000, L=8, W=16, LUT3_DEPTH=4096,
                     top=None, **params):
    """The board design: :func:`lutzip.firmware.uart.uart_top.uart_top` behind the board's clock and pins.

    Parameters
    ----------
    CLK, BTN_N, RX, TX, LEDR_N, LEDG_N : Signal
        The pins of ``constraints/icebreaker.pcf`` (see the module docstring).
    BAUD : int
        UART baud rate.
    L, W, LUT3_DEPTH : int
        Decoder core parameters.
    top : callable, optional
        Replaces ``uart_top`` (same signature), e.g. a stand-in for tests.
    **params
        Further ``uart_top`` parameters (RING_DEPTH, MAX_PAYLOAD, ...).
    """
    if top is None:
        from lutzip.firmware.uart.uart_top import uart_top as top
    rst = ResetSignal(1, active=1, isasync=False)  # synchronous, active high
    hb = Signal(bool(0))
    glue = board_glue(CLK, BTN_N, rst, hb, BTN_ACTIVE_LOW=True, HB_BITS=24)
    core = top(CLK, rst, RX, TX, CLK_HZ=CLK_HZ, BAUD=BAUD, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, **params)

    @always_comb
    def leds():
        LEDR_N.next = not rst
        LEDG_N.next = not hb

    return glue, core, leds
