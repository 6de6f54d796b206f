"""Next symbol start at bit J: ``J + TL`` from the registered TL read (two pipeline registers, then the add).

Interface
---------
clk                      clock
q[6]                     TL read at bit J (:mod:`lutzip.hdl.fronts.vector.tl_read`)
q2[6]                    (out, registered) ``q`` one clock later (the block RAM's output register on ECP5)
q3[6]                    (out, registered) ``q2`` one clock later (fabric: the RAM's clock-to-output meets no logic)
nx[6]                    (out) ``J + q3`` modulo 64
J                        bit position 0..31
ns                       (out, optional: two code tables) the next-state bit ``q3[6]`` (``q`` 7 bits)
"""
from myhdl import always, always_comb, block


@block
def tl_next(clk, q, q2, q3, nx, J=0, ns=None):
    @always(clk.posedge)
    def tn_reg():
        q2.next = q
        q3.next = q2

    if ns is not None:
        @always_comb
        def tn_add():
            nx.next = J + q3[6:0]
            ns.next = q3[6]

        return tn_reg, tn_add

    @always_comb
    def tn_add():
        nx.next = J + q3

    return tn_reg, tn_add
