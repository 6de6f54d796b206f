"""One copy of TL (the ``c+k`` field of LUT1) with its read port: the next symbol start at bit J of a word.

:mod:`lutzip.hdl.fronts.vector.pos_stage` needs 32 reads of TL per word; each bit position has its own copy (written by
the shared write port), so synthesis maps every copy to a one-write one-read memory (a block RAM on ECP5).

Interface
---------
clk                      clock
we, wa[L], wd[6]         write port (the ``c+k`` field of each LUT1 write); contents survive reset
pa[32], pb[32]           the word and the following word of its packet, as they are registered this clock
q[6]                     (out, registered) ``TL[bits J .. J+L-1 of pa:pb]`` one clock later (block RAM; not
                         read in a cycle it is written, so synthesis adds no bypass logic after the RAM)
J, L                     bit position 0..31, LUT1 address bits
HALF                     two code tables (``STATES=2``): the state whose half of LUT1 this copy holds (0: A,
                         1: B); ``wa`` then has L + 1 bits (``state << L | prefix``) and only writes of that half
                         are taken; ``wd`` / ``q`` carry the next-state bit above ``c+k`` (7 bits)
"""
from myhdl import ConcatSignal, Signal, always, block, intbv


@block
def tl_read(clk, we, wa, wd, pa, pb, q, J=0, L=8, HALF=None):
    tl = [Signal(intbv(0)[len(wd):]) for _ in range(1 << L)]
    if J + L <= 32:
        addr = pa(32 - J, 32 - J - L)
    else:
        # one-bit parts as bits, not slices (MyHDL's VHDL for a one-bit slice in a ConcatSignal is out of range)
        hi = pa(0) if J == 31 else pa(32 - J, 0)
        lo = pb(31) if J + L == 33 else pb(32, 64 - J - L)
        addr = ConcatSignal(hi, lo)

    if HALF is not None:
        wlo = wa(L, 0)
        whi = wa(L)
        half = bool(HALF)

        @always(clk.posedge)
        def tl_port():
            if we:
                if whi == half:
                    tl[wlo].next = wd
            else:
                q.next = tl[addr]

        return tl_port

    @always(clk.posedge)
    def tl_port():
        if we:
            tl[wa].next = wd
        else:
            q.next = tl[addr]

    return tl_port
