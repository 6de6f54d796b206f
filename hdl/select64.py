"""One bit of the vector front's loop: bit ``sel`` of the 64-bit vector ``n:c``, as an explicit mux tree.

Written as three levels -- 4:1 on ``sel[2:0]``, 8:1 on ``sel[5:2]``, 2:1 on ``sel[5]`` -- so that synthesis
maps it onto the FPGA's wide-function multiplexers (ECP5: two LUT4s and a PFUMX make a 4:1, two of those and
an L6MUX21 an 8:1) instead of a five-stage shifter. On ECP5 this raised a test circuit of the loop from
109-153 MHz (mean 127) to 140-151 MHz (mean 146) over the same six placement seeds.

Interface
---------
c[32], n[32]             the current word's and the next word's bits of one next-position vector
sel[6]                   the position: bit ``sel[5:0]`` of ``n:c`` (``n`` when ``sel >= 32``)
q                        (out) the selected bit
"""
from myhdl import Signal, always_comb, block, intbv


@block
def select64(c, n, sel, q):
    mc = Signal(intbv(0)[8:])
    mn = Signal(intbv(0)[8:])
    qc = Signal(bool(0))
    qn = Signal(bool(0))

    @always_comb
    def s64_four():
        for j in range(8):
            if sel[2:0] == 0:
                mc.next[j] = c[4 * j]
                mn.next[j] = n[4 * j]
            elif sel[2:0] == 1:
                mc.next[j] = c[4 * j + 1]
                mn.next[j] = n[4 * j + 1]
            elif sel[2:0] == 2:
                mc.next[j] = c[4 * j + 2]
                mn.next[j] = n[4 * j + 2]
            else:
                mc.next[j] = c[4 * j + 3]
                mn.next[j] = n[4 * j + 3]

    @always_comb
    def s64_eight():
        qc.next = mc[sel[5:2]]
        qn.next = mn[sel[5:2]]

    @always_comb
    def s64_two():
        if sel[5]:
            q.next = qn
        else:
            q.next = qc

    return s64_four, s64_eight, s64_two
