"""One bank of the pipelined replay buffer (``replay_unit`` with ``PIPE``): a block RAM of ``DEPTH`` words whose
read data passes one more flip-flop before it meets the bank multiplexer (yosys does not use the ECP5
DP16KD's own output register, so this flip-flop stands in for it, placed beside the RAM). The read gives 0
unless the read address is this bank's (the read register's synchronous reset, which yosys maps to the RAM's
own), so the multiplexer behind the banks is an OR of their outputs, with no select lines."""
from myhdl import Signal, always, block, intbv


@block
def replay_bank(clk, we, wa, wd, ra, rq, BANK=0, DEPTH=512):
    """Write ``wd`` at ``wa`` when ``we`` and ``wa``'s high bits are ``BANK``; read at ``ra`` every cycle.

    Parameters
    ----------
    clk : Signal
        Clock.
    we, wa, wd : Signal
        Write enable, buffer address (all the buffer's bits; the low ones address the bank), data.
    ra : Signal
        Read address (as ``wa``: the low bits address the bank, the high ones must be ``BANK``).
    rq : Signal
        The word at ``ra`` two clock edges later (the RAM's read register, then a flip-flop), or 0 if the high
        bits of ``ra`` were not ``BANK``.
    BANK, DEPTH : int
        This bank's number, its words (a power of two).
    """
    BW = (DEPTH - 1).bit_length()
    AW = len(wa)
    assert 1 << BW == DEPTH and AW > BW
    mem = [Signal(intbv(0)[len(wd):]) for _ in range(DEPTH)]
    q = Signal(intbv(0)[len(wd):])

    @always(clk.posedge)
    def c_write():
        if we and wa[AW:BW] == BANK:
            mem[wa[BW:0]].next = wd

    @always(clk.posedge)
    def c_read():
        """The read register's synchronous reset (the RAM's own: DP16KD RSTB) zeroes the other banks."""
        if ra[AW:BW] == BANK:
            q.next = mem[ra[BW:0]]
        else:
            q.next = 0

    @always(clk.posedge)
    def c_out():
        rq.next = q

    return c_write, c_read, c_out
