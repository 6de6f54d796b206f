"""One lane's tap of the N-lane decoder's output select: an AND-OR chain over the lanes' head rows.

Interface
---------
cur             the lane whose stripe is next in stream order (0 .. LANES-1)
head, hvalid    this lane's head row and its valid flag (:mod:`lutzip.hdl.stages.row_fifo`)
acc_in, vin     the chain so far (lanes 0 .. LANE-1); ``None`` for the first tap (nothing before it)
acc_out, vout   ``acc_in | head`` and ``vin | hvalid`` if ``cur == LANE``, else ``acc_in`` / ``vin``
take            the output stage takes the selected head this cycle
pop             ``take`` and ``cur == LANE``: pops this lane's head
LANE            this lane's number

Exactly one lane matches ``cur``, so the chain's end is the selected lane's head (a one-hot AND-OR mux).
"""
from myhdl import always_comb, block


@block
def lane_tap(cur, head, hvalid, acc_in, vin, acc_out, vout, take, pop, LANE=0):
    if acc_in is None:
        @always_comb
        def tap_first():
            if cur == LANE:
                acc_out.next = head
                vout.next = hvalid
                pop.next = take
            else:
                acc_out.next = 0
                vout.next = 0
                pop.next = 0

        return tap_first

    @always_comb
    def tap():
        if cur == LANE:
            acc_out.next = acc_in | head
            vout.next = vin or hvalid
            pop.next = take
        else:
            acc_out.next = acc_in
            vout.next = vin
            pop.next = 0

    return tap
