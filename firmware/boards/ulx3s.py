"""ULX3S top (LFE5U-85F CABGA381, 25 MHz): the UART board design on the FT231X USB-UART.

Pins (constraints/ulx3s.lpf): clk_25mhz, btn_pwr_n (btn[0], reset), ftdi_txd (in) / ftdi_rxd (out),
led[7:0] (led[0] heartbeat, led[1] reset), wifi_gpio0 held high so the ESP32 leaves the board alone.
No PLL: the design runs at 25 MHz (an EHXPLLL would give more, but the UART limits throughput anyway).
"""
from myhdl import ResetSignal, Signal, always_comb, block, concat, intbv

from lutzip.firmware.boards.glue import board_glue

CLK_HZ = 25_000_000


def ports():
    """Fresh signals for the top-level ports, named as in the LPF."""
    return dict(clk_25mhz=Signal(bool(0)), btn_pwr_n=Signal(bool(1)), ftdi_txd=Signal(bool(1)),
                ftdi_rxd=Signal(bool(1)), led=Signal(intbv(0)[8:]), wifi_gpio0=Signal(bool(1)))


@block
def board_ulx3s(clk_25mhz, btn_pwr_n, ftdi_txd, ftdi_rxd, led, wifi_gpio0, BAUD=1_000_000, L=8, W=16,
                LUT3_DEPTH=4096, top=None, **params):
    """The board design: :func:`lutzip.firmware.uart.uart_top.uart_top` behind the board's clock and pins.

    Parameters
    ----------
    clk_25mhz, btn_pwr_n, ftdi_txd, ftdi_rxd, led, wifi_gpio0 : Signal
        The pins of ``constraints/ulx3s.lpf`` (see the module docstring).
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
    glue = board_glue(clk_25mhz, btn_pwr_n, rst, hb, BTN_ACTIVE_LOW=True, HB_BITS=25)
    core = top(clk_25mhz, rst, ftdi_txd, ftdi_rxd, CLK_HZ=CLK_HZ, BAUD=BAUD, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, **params)

    @always_comb
    def leds():
        led.next = concat(intbv(0)[6:], rst, hb)
        wifi_gpio0.next = 1

    return glue, core, leds
