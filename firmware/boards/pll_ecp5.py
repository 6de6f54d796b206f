"""ECP5 EHXPLLL as a MyHDL block with user-defined Verilog (board builds only; the simulators drive the core
clock themselves)."""
from myhdl import always, block, instance, delay

from lutzip.firmware.boards.pll import ecp5_pll


@block
def pll_ecp5(clk_in, clk_out, locked, F_IN=25_000_000, F_OUT=100_000_000, SIM_HALF=1):
    """``clk_out`` at ``F_OUT`` from ``clk_in`` at ``F_IN`` (dividers: :func:`lutzip.firmware.boards.pll.ecp5_pll`).

    Parameters
    ----------
    clk_in : Signal
        Reference clock (a pin with a FREQUENCY constraint).
    clk_out, locked : Signal
        The PLL's CLKOP (also its feedback) and LOCK.
    F_IN, F_OUT : int
        Reference and output frequency (Hz).
    SIM_HALF : int
        MyHDL model only: half period of ``clk_out`` in simulator time units.
    """
    p = ecp5_pll(F_IN, F_OUT)
    CLKI_DIV, CLKFB_DIV, CLKOP_DIV, CLKOP_CPHASE = p.CLKI_DIV, p.CLKFB_DIV, p.CLKOP_DIV, p.CLKOP_CPHASE
    MHZ_IN, MHZ_OUT = f"{F_IN / 1e6:g}", f"{p.f_out / 1e6:g}"
    clk_out.driven = "wire"
    locked.driven = "wire"

    @instance
    def model():
        clk_out.next = 0
        yield delay(SIM_HALF)
        while True:
            clk_out.next = not clk_out
            yield delay(SIM_HALF)

    @always(clk_in.posedge)
    def model_lock():
        locked.next = 1

    return model, model_lock


pll_ecp5.verilog_code = """
(* FREQUENCY_PIN_CLKI="$MHZ_IN" *)
(* FREQUENCY_PIN_CLKOP="$MHZ_OUT" *)
(* ICP_CURRENT="12" *) (* LPF_RESISTOR="8" *) (* MFG_ENABLE_FILTEROPAMP="1" *) (* MFG_GMCREF_SEL="2" *)
EHXPLLL #(
    .PLLRST_ENA("DISABLED"), .INTFB_WAKE("DISABLED"), .STDBY_ENABLE("DISABLED"), .DPHASE_SOURCE("DISABLED"),
    .OUTDIVIDER_MUXA("DIVA"), .OUTDIVIDER_MUXB("DIVB"), .OUTDIVIDER_MUXC("DIVC"), .OUTDIVIDER_MUXD("DIVD"),
    .CLKI_DIV($CLKI_DIV), .CLKOP_ENABLE("ENABLED"), .CLKOP_DIV($CLKOP_DIV), .CLKOP_CPHASE($CLKOP_CPHASE),
    .CLKOP_FPHASE(0), .FEEDBK_PATH("CLKOP"), .CLKFB_DIV($CLKFB_DIV)
) pll_ecp5_i (
    .RST(1'b0), .STDBY(1'b0), .CLKI($clk_in), .CLKOP($clk_out), .CLKFB($clk_out), .CLKINTFB(),
    .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1), .PHASESTEP(1'b1), .PHASELOADREG(1'b1),
    .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK($locked)
);
"""
