"""iCEBreaker top (iCE40UP5K-SG48, 12 MHz): the UART board design on the FT2232H USB-UART.

Pins (constraints/icebreaker.pcf): CLK 12 MHz, BTN_N user button (reset), RX/TX USB-UART,
LEDR_N red LED (on while in reset), LEDG_N green LED (heartbeat). By default no PLL: one domain at 12 MHz
(the UP5K is full). ``CORE_CLK_HZ`` (a keyword of :func:`board_icebreaker`) adds an SB_PLL40_2_PAD
(:func:`lutzip.firmware.boards.pll_ice40.pll_ice40`; the pad's 12 MHz on port A for the UART, the PLL on port B
for the engine and core: :func:`lutzip.firmware.uart.uart_top_cdc.uart_top_cdc`, docs/PROTOCOL.md section 7).
With the keyword ``PLL_ONE_DOMAIN`` as well (2026-12-07 evening), the whole design -- UART, engine and core, the
single-domain :func:`lutzip.firmware.uart.uart_top.uart_top` -- runs at the PLL's port B: one clock domain, no
crossing, the board's reset also held while the PLL is not locked (the two-domain design needs more than the
UP5K's 5280 logic cells, docs/SYNTH.md).
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
                     top=None, CORE_CLK_HZ=None, **params):
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
    # CORE_CLK_HZ: see the module docstring (MyHDL copies this docstring into the HDL, which must not change)
    rst = ResetSignal(1, active=1, isasync=False)  # synchronous, active high
    hb = Signal(bool(0))
    one_domain = params.pop("PLL_ONE_DOMAIN", False)
    if CORE_CLK_HZ and CORE_CLK_HZ != CLK_HZ and one_domain:
        # everything (UART too) at the PLL's port B: no crossing (see the module docstring)
        from lutzip.firmware.boards.pll import ice40_pll
        from lutzip.firmware.boards.pll_ice40 import pll_ice40
        if top is None:
            from lutzip.firmware.uart.uart_top import uart_top as top
        clk_ref, core_clk, locked, btn_l = Signal(bool(0)), Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
        u_pll = pll_ice40(CLK, clk_ref, core_clk, locked, F_IN=CLK_HZ, F_OUT=CORE_CLK_HZ)

        @always_comb
        def c_lock():
            btn_l.next = BTN_N and locked

        glue = board_glue(core_clk, btn_l, rst, hb, BTN_ACTIVE_LOW=True, HB_BITS=24)
        core = top(core_clk, rst, RX, TX, CLK_HZ=int(round(ice40_pll(CLK_HZ, CORE_CLK_HZ).f_out)), BAUD=BAUD, L=L,
                   W=W, LUT3_DEPTH=LUT3_DEPTH, **params)
    elif CORE_CLK_HZ and CORE_CLK_HZ != CLK_HZ:
        from lutzip.firmware.boards.pll import ice40_pll
        from lutzip.firmware.boards.pll_ice40 import pll_ice40
        if top is None:
            from lutzip.firmware.uart.uart_top_cdc import uart_top_cdc as top
        clk_ref, core_clk, locked, unlocked = Signal(bool(0)), Signal(bool(0)), Signal(bool(0)), Signal(bool(1))
        u_pll = pll_ice40(CLK, clk_ref, core_clk, locked, F_IN=CLK_HZ, F_OUT=CORE_CLK_HZ)

        @always_comb
        def c_lock():
            unlocked.next = not locked

        glue = board_glue(clk_ref, BTN_N, rst, hb, BTN_ACTIVE_LOW=True, HB_BITS=24)
        core = top(clk_ref, rst, core_clk, RX, TX, core_arst=unlocked, CLK_HZ=CLK_HZ,
                   CORE_CLK_HZ=int(round(ice40_pll(CLK_HZ, CORE_CLK_HZ).f_out)), BAUD=BAUD, L=L, W=W,
                   LUT3_DEPTH=LUT3_DEPTH, **params)
    else:
        if top is None:
            from lutzip.firmware.uart.uart_top import uart_top as top
        glue = board_glue(CLK, BTN_N, rst, hb, BTN_ACTIVE_LOW=True, HB_BITS=24)
        core = top(CLK, rst, RX, TX, CLK_HZ=CLK_HZ, BAUD=BAUD, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, **params)

    @always_comb
    def leds():
        LEDR_N.next = not rst
        LEDG_N.next = not hb

    if CORE_CLK_HZ and CORE_CLK_HZ != CLK_HZ:
        return glue, u_pll, c_lock, core, leds
    return glue, core, leds
