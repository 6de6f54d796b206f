"""Each slot's next value per pop count for the shift-register input FIFOs (plain and deferred-pop).

Slot ``i`` takes entry ``i + pop`` while that is kept, else the word pushed now (slots past the end are
unused). What each slot takes for each pop count is prepared from ``count_gt`` (registers) alone; the pop
count, late in the cycle (it comes from the window loop), only drives a 4:1 multiplexer per bit.

Interface
---------
wdata[N]                 the word pushed this cycle
pop[2]                   entries popped this cycle
count_gt[4]              registered fill level, thermometer code
h0, h1, h2, s3 [N]       the slots' current entries (oldest first)
a[4]                     (out) what slot 0 takes for a pop of 0..3 (= what ``h0`` becomes)
b[3], c[2]               (out) what slot 1 takes for a pop of 0..2, slot 2 for a pop of 0..1
e[4]                     (out) what slots 0..3 take for this cycle's ``pop``
"""
from myhdl import Signal, always_comb, block, modbv


@block
def input_fifo_slots(wdata, pop, count_gt, h0, h1, h2, s3, a, b, c, e):
    n = len(wdata)
    a0, a1, a2, a3 = a
    b0, b1, b2 = b
    c0, c1 = c
    e0, e1, e2, e3 = e
    g0, g1, g2, g3 = [Signal(bool(0)) for _ in range(4)]
    d0 = Signal(modbv(0)[n:])

    @always_comb
    def ififo_kept():
        g0.next = count_gt[0]
        g1.next = count_gt[1]
        g2.next = count_gt[2]
        g3.next = count_gt[3]

    @always_comb
    def ififo_cand():
        # slot i takes entry i + pop while that is kept, else the pushed word (slots past the end unused)
        a0.next = h0 if g0 else wdata
        a1.next = h1 if g1 else wdata
        a2.next = h2 if g2 else wdata
        a3.next = s3 if g3 else wdata
        b0.next = h1 if g1 else wdata
        b1.next = h2 if g2 else wdata
        b2.next = s3 if g3 else wdata
        c0.next = h2 if g2 else wdata
        c1.next = s3 if g3 else wdata
        d0.next = s3 if g3 else wdata

    @always_comb
    def ififo_sel():
        # each slot's value for pop: a 4:1 multiplexer by the pop count
        if pop == 0:
            e0.next = a0
            e1.next = b0
            e2.next = c0
            e3.next = d0
        elif pop == 1:
            e0.next = a1
            e1.next = b1
            e2.next = c1
            e3.next = wdata
        elif pop == 2:
            e0.next = a2
            e1.next = b2
            e2.next = wdata
            e3.next = wdata
        else:
            e0.next = a3
            e1.next = wdata
            e2.next = wdata
            e3.next = wdata

    return ififo_kept, ififo_cand, ififo_sel
