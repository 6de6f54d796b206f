"""Arty A7-35 top (XC7A35TICSG324-1L, 100 MHz): the UART board design on the FT2232HQ USB-UART.

Pins (constraints/arty_a7.xdc): CLK100MHZ, ck_rst (RESET button, active low), uart_txd_in (in) /
uart_rxd_out (out), led[3:0] (led[0] heartbeat, led[1] reset). No MMCM: the design runs at 100 MHz.
Bitstream: Vivado (constraints/arty_a7.tcl); no open Xilinx bitstream flow is installed here.
"""
from myhdl import ResetSignal, Signal, always_comb, block, concat, intbv

from lutzip.firmware.boards.glue import board_glue

CLK_HZ = 100_000_000


def ports():
    """Fresh signals for the top-level ports, named as in the XDC."""
    return dict(CLK100MHZ=Signal(bool(0)), ck_rst=Signal(bool(1)), uart_txd_in=Signal(bool(1)),
                uart_rxd_out=Signal(bool(1)), led=Signal(intbv(0)[4:]))


@block
def board_arty_a7(CLK100MHZ, ck_rst, uart_txd_in, uart_rxd_out, led, BAUD=3_000_000, L=8, W=16,
                  LUT3_DEPTH=4096, top=None, **params):
    """The board design: :func:`lutzip.firmware.uart.uart_top.uart_top` behind the board's clock and pins.

    Parameters
    ----------
    CLK100MHZ, ck_rst, uart_txd_in, uart_rxd_out, led : Signal
        The pins of ``constraints/arty_a7.xdc`` (see the module docstring).
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
    glue = board_glue(CLK100MHZ, ck_rst, rst, hb, BTN_ACTIVE_LOW=True, HB_BITS=27)
    core = top(CLK100MHZ, rst, uart_txd_in, uart_rxd_out, CLK_HZ=CLK_HZ, BAUD=BAUD, L=L, W=W,
               LUT3_DEPTH=LUT3_DEPTH, **params)

    @always_comb
    def leds():
        led.next = concat(intbv(0)[2:], rst, hb)

    return glue, core, leds
