"""One word slot of a lane's row packer (:mod:`lutzip.hdl.lanes.decoder_lane`).

Interface
---------
clk             clock
we              a word is taken by the packer this cycle
cnt             the packer's word position in the current row, 0 .. LANES-1
d               the word taken (W bits)
q               the row's word at position ``SLOT`` (combinational): ``d`` if ``cnt == SLOT``, the held word if
                ``SLOT < cnt``, else 0 -- so a row pushed with ``cnt + 1`` words has zeros above them
SLOT            this slot's position in the row

The held word is a plain register (no reset): it is only shown once written in the current row.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def lane_slot(clk, we, cnt, d, q, SLOT=0):
    held = Signal(intbv(0)[len(d):])

    @always(clk.posedge)
    def slot_reg():
        if we and cnt == SLOT:
            held.next = d

    @always_comb
    def slot_out():
        if cnt == SLOT:
            q.next = d
        elif cnt > SLOT:
            q.next = held
        else:
            q.next = 0

    return slot_reg, slot_out
