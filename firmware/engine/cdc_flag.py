"""Level synchroniser: a flag from another clock domain through a chain of flip-flops."""
from myhdl import Signal, always, always_comb, block, concat, intbv


@block
def cdc_flag(clk, d, q, STAGES=2, INIT=0):
    """``q`` follows the level ``d`` (any clock domain) ``STAGES`` cycles of ``clk`` late.

    Parameters
    ----------
    clk : Signal
        Destination clock.
    d : Signal
        The flag, driven by a flip-flop of its own domain (never by logic: a glitch could be caught).
    q : Signal
        The flag in the ``clk`` domain.
    STAGES : int
        Synchroniser flip-flops, >= 2.
    INIT : int
        Power-up value of the chain.

    Notes
    -----
    For a slow level (a mode, a status that holds for several destination cycles); a one-cycle pulse may be
    missed: use :func:`lutzip.firmware.engine.cdc_pulse.cdc_pulse`. A multi-bit value must not go through
    several of these (its bits may arrive in different cycles): use a handshake or
    :func:`lutzip.firmware.engine.cdc_fifo.cdc_fifo`.
    """
    assert STAGES >= 2
    sh = Signal(intbv((1 << STAGES) - 1 if INIT else 0)[STAGES:])

    @always(clk.posedge)
    def c_sh():
        sh.next = concat(sh[STAGES - 1:0], d)

    @always_comb
    def c_q():
        q.next = sh[STAGES - 1]

    return c_sh, c_q
