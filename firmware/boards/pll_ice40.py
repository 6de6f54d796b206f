"""iCE40 SB_PLL40_2_PAD as a MyHDL block with user-defined Verilog (board builds only): port A passes the pad's
reference clock on (the link clock), port B is the PLL output (the core clock)."""
from myhdl import always, block, instance, delay

from lutzip.firmware.boards.pll import ice40_pll


@block
def pll_ice40(pad, clk_ref, clk_out, locked, F_IN=12_000_000, F_OUT=48_000_000, SIM_HALF=1):
    """``clk_out`` at ``F_OUT`` from the clock pin ``pad`` (dividers: :func:`lutzip.firmware.boards.pll.ice40_pll`).

    Parameters
    ----------
    pad : Signal
        The reference clock pin (a PLL-capable global-buffer pad: pin 35 on the iCEBreaker).
    clk_ref : Signal
        The reference clock on a global net (PLLOUTGLOBALA: the pad drives the PLL and nothing else).
    clk_out, locked : Signal
        The PLL output (PLLOUTGLOBALB) and LOCK.
    F_IN, F_OUT : int
        Reference and output frequency (Hz).
    SIM_HALF : int
        MyHDL model only: half period of ``clk_out`` in simulator time units.
    """
    p = ice40_pll(F_IN, F_OUT)
    DIVR, DIVF, DIVQ, FILTER_RANGE = p.DIVR, p.DIVF, p.DIVQ, p.FILTER_RANGE
    clk_ref.driven = "wire"
    clk_out.driven = "wire"
    locked.driven = "wire"

    @instance
    def model():
        clk_out.next = 0
        yield delay(SIM_HALF)
        while True:
            clk_out.next = not clk_out
            yield delay(SIM_HALF)

    @always(pad)
    def model_ref():
        clk_ref.next = pad
        locked.next = 1

    return model, model_ref


pll_ice40.verilog_code = """
SB_PLL40_2_PAD #(
    .FEEDBACK_PATH("SIMPLE"), .PLLOUT_SELECT_PORTB("GENCLK"),
    .DIVR($DIVR), .DIVF($DIVF), .DIVQ($DIVQ), .FILTER_RANGE($FILTER_RANGE)
) pll_ice40_i (
    .PACKAGEPIN($pad), .PLLOUTGLOBALA($clk_ref), .PLLOUTGLOBALB($clk_out), .LOCK($locked),
    .RESETB(1'b1), .BYPASS(1'b0)
);
"""
