"""Reset synchroniser: asynchronous assertion, synchronous release, one per clock domain."""
from myhdl import Signal, always, always_comb, block, concat, intbv


@block
def cdc_reset(clk, arst, rst, STAGES=3):
    """``rst`` rises with ``arst`` at once (no clock needed) and falls ``STAGES`` edges of ``clk`` after it.

    Parameters
    ----------
    clk : Signal
        The domain's clock (may still be starting, e.g. a PLL before lock).
    arst : Signal
        Reset source, active high, from any domain or a pin (e.g. the board reset or ``not pll_locked``).
    rst : Signal
        The domain's reset, active high, synchronous to ``clk`` on release: the blocks of the domain use it as
        their synchronous reset.
    STAGES : int
        Release flip-flops, >= 2.
    """
    assert STAGES >= 2
    ONES = (1 << STAGES) - 1
    sh = Signal(intbv(ONES)[STAGES:])
    zero = Signal(bool(0))

    @always(clk.posedge, arst.posedge)
    def c_sh():
        if arst:
            sh.next = ONES
        else:
            sh.next = concat(sh[STAGES - 1:0], zero)

    @always_comb
    def c_rst():
        rst.next = sh[STAGES - 1]

    return c_sh, c_rst
