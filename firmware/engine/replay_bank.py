"""One bank of the pipelined replay buffer (``replay_unit`` with ``PIPE``): two block RAMs of ``DEPTH`` words, the
word's low 18 bits in one and the rest in the other (on the ECP5 each is a DP16KD of 1024 x 18: a read port of 18
bits whose output register is the port's own; the 36-bit mode would put a word's halves on both ports' data pins).
Both are read in every cycle at the read address's low bits into their read registers (``qa``, ``qb``), which
``ra2`` / ``rb2`` copy in every cycle (no enable, no reset: the board flow's pass, :mod:`lutzip.hdl.flows.bram_outreg`,
makes them the DP16KD's output register, ``REGMODE_B = OUTREG``). The bank select (the read address's high bits
are ``BANK``) travels beside the data in two flip-flops; ``rq`` takes the word when it was selected, else 0 (the
flip-flops' synchronous reset), so the multiplexer behind the banks is an OR of their outputs, with no select
lines. The RAMs are written only between runs (``replay_unit`` loads them while no run is active), so a read that
matters never meets a write (the board flow marks them ``no_rw_check``: no read-during-write multiplexer between a
RAM and its output register)."""
from myhdl import Signal, always, block, concat, intbv

LO = 18     #: bits of a word in the first RAM


@block
def replay_bank(clk, we, wa, wd, ra, rq, BANK=0, DEPTH=1024):
    """Write ``wd`` at ``wa`` when ``we`` and ``wa``'s high bits are ``BANK``; read at ``ra`` every cycle.

    Parameters
    ----------
    clk : Signal
        Clock.
    we, wa, wd : Signal
        Write enable, buffer address (all the buffer's bits; the low ones address the bank), data (more than
        :data:`LO` bits).
    ra : Signal
        Read address (as ``wa``: the low bits address the bank, the high ones must be ``BANK``).
    rq : Signal
        The word at ``ra`` three clock edges later (the RAMs' read registers, their output registers, then
        flip-flops), or 0 if the high bits of ``ra`` were not ``BANK``.
    BANK, DEPTH : int
        This bank's number, its words (a power of two).
    """
    BW = (DEPTH - 1).bit_length()
    AW = len(wa)
    N = len(wd)
    assert 1 << BW == DEPTH and AW > BW and N > LO
    mem_lo = [Signal(intbv(0)[LO:]) for _ in range(DEPTH)]
    mem_hi = [Signal(intbv(0)[N - LO:]) for _ in range(DEPTH)]
    qa, ra2 = Signal(intbv(0)[LO:]), Signal(intbv(0)[LO:])
    qb, rb2 = Signal(intbv(0)[N - LO:]), Signal(intbv(0)[N - LO:])
    s1, s2 = Signal(bool(0)), Signal(bool(0))

    @always(clk.posedge)
    def c_write_lo():
        if we and wa[AW:BW] == BANK:
            mem_lo[wa[BW:0]].next = wd[LO:0]

    @always(clk.posedge)
    def c_write_hi():
        if we and wa[AW:BW] == BANK:
            mem_hi[wa[BW:0]].next = wd[N:LO]

    @always(clk.posedge)
    def c_read_lo():
        qa.next = mem_lo[ra[BW:0]]

    @always(clk.posedge)
    def c_read_hi():
        qb.next = mem_hi[ra[BW:0]]

    @always(clk.posedge)
    def c_outreg():
        ra2.next = qa
        rb2.next = qb

    @always(clk.posedge)
    def c_sel():
        s1.next = ra[AW:BW] == BANK
        s2.next = s1

    @always(clk.posedge)
    def c_out():
        if s2:
            rq.next = concat(rb2, ra2)
        else:
            rq.next = 0

    return c_write_lo, c_write_hi, c_read_lo, c_read_hi, c_outreg, c_sel, c_out
