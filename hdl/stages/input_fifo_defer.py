"""The deferred-pop shift-register input FIFO (the window front's one-hot step).

The shift register of :mod:`lutzip.hdl.stages.input_fifo_shift` with two more ways to pop:

* ``take_start``: a stripe start pops the header and the window words present, 3, 2 or 1 entries as the
  FIFO's own head flags say (bit 33 of an entry = good header, bit 32 = tlast: header + two payload words /
  + the last payload word / otherwise the header alone); ``pop`` is 0 then.
* ``pop_x``: one more entry, decided late in the cycle (the one-hot step's refill, from LUT1's ``c+k``); it
  comes alone (``pop`` = 0, no ``take_start``). It does not reach the storage in its cycle: it sets one
  flip-flop, ``pend``; the storage drops that entry a cycle later together with that cycle's early pops, and
  meanwhile ``h0``, ``h1``, ``h2`` skip it (a 2:1 per data bit selected by ``pend``; the flag bits above bit 31
  and ``count_gt`` are kept exact in flip-flops, so ``pop_x`` drives about ten flip-flops instead of every
  slot's multiplexers).

Behaviour at the ports is that of a FIFO popping ``pop + pop_x`` (or the stripe start's count): ``count``,
``count_gt`` and the heads count the entry as gone in the cycle after ``pop_x``, and the storage never holds
more than ``DEPTH`` entries (a push needs ``count < DEPTH``, which counts the pending entry as gone; the storage
drops it in the same cycle). ``h0``, ``h1``, ``h2`` are combinational.

Interface
---------
The common one of :mod:`lutzip.hdl.stages.input_fifo` (clk, rst, wr, wdata, pop, h0, h1, h2, count, count_gt;
here ``count_gt`` is required and ``wdata`` must have flag bits above bit 31), and

pop_x                    the late pop, alone (above)
take_start               a stripe start (above)
after                    (optional, out) four signals: what ``h0`` becomes for a pop of 0..3 (the entry, or
                         the word pushed now where the entry does not exist yet)
"""
from myhdl import Signal, always, always_comb, always_seq, block, concat, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.stages.input_fifo import check_ports
from lutzip.hdl.stages.input_fifo_level import input_fifo_level
from lutzip.hdl.stages.input_fifo_slots import input_fifo_slots


@block
def input_fifo_defer(clk, rst, wr, wdata, pop, pop_x, take_start, h0, h1, h2, count, count_gt, after=None):
    check_ports("input_fifo_defer", wdata, h0, h1, h2, count, count_gt, after)
    n = len(wdata)
    if n <= 33:
        raise UnsupportedError(f"input_fifo_defer: wdata has {n} bits; needs the flag bits 32 (tlast) and 33 "
                               "(good header) above the word")
    # a stripe start pops the header and the window words present: 3 with two payload words, 2 with a
    # one-word payload, else 1 (bit 33 of an entry: good header, bit 32: tlast)
    bpop = Signal(intbv(0)[2:])
    pstart = Signal(intbv(0)[2:])

    @always_comb
    def ififo_pstart():
        if count_gt[2] and h0[33] and not h0[32] and not h1[32]:
            pstart.next = 3
        elif count_gt[1] and h0[33] and not h0[32] and h1[32]:
            pstart.next = 2
        else:
            pstart.next = 1

    @always_comb
    def ififo_bpop():
        if take_start:
            bpop.next = pstart
        else:
            bpop.next = pop

    level = input_fifo_level(clk, rst, wr, bpop, pop_x, count, count_gt)

    s3 = Signal(modbv(0)[n:])
    a0, a1, a2, a3 = a = list(after) if after is not None else [Signal(modbv(0)[n:]) for _ in range(4)]
    b0, b1, b2 = b = [Signal(modbv(0)[n:]) for _ in range(3)]
    c0, c1 = c = [Signal(modbv(0)[n:]) for _ in range(2)]
    e0, e1, e2, e3 = e = [Signal(modbv(0)[n:]) for _ in range(4)]
    slots = input_fifo_slots(wdata, pop, count_gt, h0, h1, h2, s3, a, b, c, e)
    m0, m1, m2, m3 = [Signal(modbv(0)[n:]) for _ in range(4)]

    @always_comb
    def ififo_sel_s():
        # a stripe start's candidates (by the FIFO's own flags) or the other pops' (e*, by pop)
        if not take_start:
            m0.next = e0
            m1.next = e1
            m2.next = e2
            m3.next = e3
        elif pstart == 3:
            m0.next = a3
            m1.next = wdata
            m2.next = wdata
            m3.next = wdata
        elif pstart == 2:
            m0.next = a2
            m1.next = b2
            m2.next = wdata
            m3.next = wdata
        else:
            m0.next = a1
            m1.next = b1
            m2.next = c1
            m3.next = wdata

    # the storage st0, st1, st2, s3 drops the early pops and the entry popped late in the last cycle (pend);
    # the visible heads skip that entry by a 2:1 per bit (from flip-flops), their flag bits (above bit 31) are
    # kept visible-exact in flip-flops (k*), so pop_x drives only pend and those. pop_x comes with pop = 0 and
    # no stripe start: its candidates are those for one pop (a1, b1, c1)
    st0, st1, st2 = [Signal(modbv(0)[n:]) for _ in range(3)]
    k0, k1, k2 = [Signal(modbv(0)[n - 32:]) for _ in range(3)]
    pend = Signal(bool(0))

    @always(clk.posedge)
    def ififo_shift():
        st0.next = m0
        st1.next = m1
        st2.next = m2
        s3.next = m3
        if pop_x:
            k0.next = a1[n:32]
            k1.next = b1[n:32]
            k2.next = c1[n:32]
        else:
            k0.next = m0[n:32]
            k1.next = m1[n:32]
            k2.next = m2[n:32]

    @always_seq(clk.posedge, reset=rst)
    def ififo_pend():
        pend.next = pop_x

    @always_comb
    def ififo_vis():
        if pend:
            h0.next = concat(k0, st1[32:0])
            h1.next = concat(k1, st2[32:0])
            h2.next = concat(k2, s3[32:0])
        else:
            h0.next = concat(k0, st0[32:0])
            h1.next = concat(k1, st1[32:0])
            h2.next = concat(k2, st2[32:0])

    return ififo_pstart, ififo_bpop, level, slots, ififo_sel_s, ififo_shift, ififo_pend, ififo_vis
