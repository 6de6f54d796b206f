"""A two-row skid register of the N-lane decoder's output side (two or more lanes): the producer's ready is a
flip-flop, so neither the consumer's take nor anything after it reaches the producer in the same cycle.

Interface
---------
clk, rst            clock, synchronous active-high reset (the data registers are not reset)
s_data, s_valid     the producer's row and its valid flag
s_ready             ``not v1`` (a flip-flop): room for a row whatever the consumer does in this cycle
s_take              ``s_valid and s_ready``: the row is taken in this cycle
m_data, m_valid     the head row (``d0``, a flip-flop) and its valid flag (``v0``, a flip-flop)
m_ready             the consumer takes the head (``m_ready and m_valid``)

Two rows, ``d0`` (the head) and ``d1``: ``d1`` copies ``s_data`` in every cycle it is empty (its enable is the
flip-flop ``not v1``, nothing of the handshakes), ``d0`` loads when it is empty or popped, from ``d1`` if that
holds a row, else from ``s_data`` (the select a flip-flop). One row in and one row out per cycle: with a row in
``d0`` and ``d1`` empty, a take and a pop in the same cycle keep one row held. Rows leave in the order they came.
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv


@block
def lane_skid(clk, rst, s_data, s_valid, s_ready, s_take, m_data, m_valid, m_ready):
    E = len(s_data)
    d0 = Signal(intbv(0)[E:])
    d1 = Signal(intbv(0)[E:])
    v0 = Signal(bool(0))
    v1 = Signal(bool(0))
    push = Signal(bool(0))
    pop = Signal(bool(0))

    @always_comb
    def skid_hs():
        push.next = s_valid and not v1
        pop.next = m_ready and v0

    @always(clk.posedge)
    def skid_data():
        if not v1:
            d1.next = s_data
        if pop or not v0:
            if v1:
                d0.next = d1
            else:
                d0.next = s_data

    @always_seq(clk.posedge, reset=rst)
    def skid_ctl():
        v0.next = push or v1 or (v0 and not pop)
        v1.next = not pop and (v1 or (push and v0))

    @always_comb
    def skid_out():
        s_ready.next = not v1
        s_take.next = push
        m_data.next = d0
        m_valid.next = v0

    return skid_hs, skid_data, skid_ctl, skid_out
