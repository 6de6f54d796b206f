"""One copy of the engine's registered block reset (``proto_engine``'s ``RST_REG``)."""
from myhdl import always, block


@block
def reset_reg(clk, rst, soft_rst, q):
    """``q`` is ``rst or soft_rst`` one cycle later.

    ``proto_engine`` with ``RST_REG`` gives each block its own copy, so the reset reaches each block from a
    flip-flop placed beside it instead of one gate fanned out across the die. Synthesis merges identical
    flip-flops: the board flow (:func:`lutzip.firmware.boards.build.keep_reset_copies`) marks the process
    ``c_keep`` with ``(* keep *)`` so that the copies stay copies; without that they are one flip-flop, the same
    logic.

    Parameters
    ----------
    clk : Signal
        Clock.
    rst, soft_rst : Signal
        The domain's reset and the engine's soft reset (RESET frame).
    q : Signal
        The registered reset.
    """
    @always(clk.posedge)
    def c_keep():
        q.next = rst or soft_rst

    return c_keep
