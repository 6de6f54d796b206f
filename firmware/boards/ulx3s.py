"""ULX3S top (LFE5U-85F CABGA381, 25 MHz): the UART board design on the FT231X USB-UART.

Pins (constraints/ulx3s.lpf): clk_25mhz, btn_pwr_n (btn[0], reset), ftdi_txd (in) / ftdi_rxd (out),
led[7:0] (led[0] heartbeat, led[1] reset), wifi_gpio0 held high so the ESP32 leaves the board alone.
Clocks: by default no PLL, one domain at 25 MHz (the HDL of the single-domain build). ``CORE_CLK_HZ`` (a keyword
of :func:`board_ulx3s`, ``lutzip board build --core-mhz``) adds an EHXPLLL
(:func:`lutzip.firmware.boards.pll_ecp5.pll_ecp5`) and runs the protocol engine and decoder core at its output,
the UART at 25 MHz (:func:`lutzip.firmware.uart.uart_top_cdc.uart_top_cdc`; docs/PROTOCOL.md, section 7), with the
decoder core's vector front (:func:`lutzip.firmware.engine.core_vector.core_vector`: the window front's LUT1
loop places at about 45 MHz).
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
                LUT3_DEPTH=4096, top=None, CORE_CLK_HZ=None, **params):
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
    # CORE_CLK_HZ: see the module docstring (MyHDL copies this docstring into the HDL, which must not change)
    rst = ResetSignal(1, active=1, isasync=False)  # synchronous, active high
    hb = Signal(bool(0))
    glue = board_glue(clk_25mhz, btn_pwr_n, rst, hb, BTN_ACTIVE_LOW=True, HB_BITS=25)
    if CORE_CLK_HZ and CORE_CLK_HZ != CLK_HZ:
        from lutzip.firmware.boards.pll import ecp5_pll
        from lutzip.firmware.boards.pll_ecp5 import pll_ecp5
        if top is None:
            from lutzip.firmware.engine.core_vector import core_vector
            from lutzip.firmware.uart.uart_top_cdc import uart_top_cdc as top
            params.setdefault("core", core_vector)     # the front that places at >= 100 MHz
            params.setdefault("CORE_IN_REG", True)     # the replay buffer's read ends in flip-flops
            params.setdefault("RING_REG", True)        # the command ring's read ends in flip-flops
            params.setdefault("REPLAY_PIPE", True)     # the replay buffer in banks, its multiplexer registered
            params.setdefault("TABLE_REG", True)       # the table write port registered
            params.setdefault("RESULT_REG", True)      # the decoded-word FIFO's read ends in flip-flops
            params.setdefault("RST_REG", True)         # each block's reset from a flip-flop of its own
            params.setdefault("RING_PIPE", True)       # the command ring read through the RAM's output register
            params.setdefault("CORE_RST_REG", True)    # the core domain's reset from a flip-flop among its loads
        core_clk, locked, unlocked = Signal(bool(0)), Signal(bool(0)), Signal(bool(1))
        u_pll = pll_ecp5(clk_25mhz, core_clk, locked, F_IN=CLK_HZ, F_OUT=CORE_CLK_HZ)

        @always_comb
        def c_lock():
            unlocked.next = not locked

        core = top(clk_25mhz, rst, core_clk, ftdi_txd, ftdi_rxd, core_arst=unlocked, CLK_HZ=CLK_HZ,
                   CORE_CLK_HZ=int(round(ecp5_pll(CLK_HZ, CORE_CLK_HZ).f_out)), BAUD=BAUD, L=L, W=W,
                   LUT3_DEPTH=LUT3_DEPTH, **params)
    else:
        if top is None:
            from lutzip.firmware.uart.uart_top import uart_top as top
        core = top(clk_25mhz, rst, ftdi_txd, ftdi_rxd, CLK_HZ=CLK_HZ, BAUD=BAUD, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH,
                   **params)

    @always_comb
    def leds():
        led.next = concat(intbv(0)[6:], rst, hb)
        wifi_gpio0.next = 1

    if CORE_CLK_HZ and CORE_CLK_HZ != CLK_HZ:
        return glue, u_pll, c_lock, core, leds
    return glue, core, leds
