"""One bit of the vector front's loop: bit ``sel ^ INV`` of the 64-bit vector ``n:c``, as a mux tree.

The front keeps several copies of its pointer, each stored XOR a constant so that synthesis does not merge
them (:mod:`lutzip.hdl.fronts.vector.loop_vector`); ``INV`` undoes that constant here, where it costs nothing: it only
swaps the data inputs of the multiplexers whose select bit is inverted.

Written as three levels -- 4:1 on ``s[1:0]``, 8:1 on ``s[4:2]``, 2:1 on ``s[5]`` (``s = sel ^ INV``). On
ECP5, ``lutzip hdl synth`` replaces this generic code in the converted Verilog by the same tree built from
the slice's LUT4s and wide-function multiplexers (PFUMX, L6MUX21: two 8:1 levels, i.e. two routing hops;
:mod:`lutzip.hdl.flows.ecp5_select`), because yosys' LUT mapping spreads it over four or five LUT levels. Block
and instance names (``s64_four``, ``s64_inv``, ``s64_two``) are what that pass looks for.

Interface
---------
c[32], n[32]             the current word's and the next word's bits of one next-position vector
sel[6]                   the position XOR ``INV``: bit ``sel ^ INV`` of ``n:c`` (``n`` when it is >= 32)
q                        (out) the selected bit
INV                      constant, 0..63
"""
from myhdl import Signal, always_comb, block, intbv


@block
def select64(c, n, sel, q, INV=0):
    if not 0 <= INV < 64:
        raise ValueError(f"INV = {INV}: 0..63")
    si = Signal(intbv(0)[6:])
    mc = Signal(intbv(0)[8:])
    mn = Signal(intbv(0)[8:])
    qc = Signal(bool(0))
    qn = Signal(bool(0))

    @always_comb
    def s64_inv():
        si.next = sel ^ INV

    @always_comb
    def s64_four():
        for j in range(8):
            if si[2:0] == 0:
                mc.next[j] = c[4 * j]
                mn.next[j] = n[4 * j]
            elif si[2:0] == 1:
                mc.next[j] = c[4 * j + 1]
                mn.next[j] = n[4 * j + 1]
            elif si[2:0] == 2:
                mc.next[j] = c[4 * j + 2]
                mn.next[j] = n[4 * j + 2]
            else:
                mc.next[j] = c[4 * j + 3]
                mn.next[j] = n[4 * j + 3]

    @always_comb
    def s64_eight():
        qc.next = mc[si[5:2]]
        qn.next = mn[si[5:2]]

    @always_comb
    def s64_two():
        if si[5]:
            q.next = qn
        else:
            q.next = qc

    return s64_inv, s64_four, s64_eight, s64_two
