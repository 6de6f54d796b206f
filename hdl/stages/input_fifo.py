"""The input FIFO: 4 words, popped 0..3 at once, the three oldest entries visible.

Popping several words lets the bit window take a header and both window words in one cycle at a stripe
start (see :mod:`lutzip.hdl.fronts.window.bit_window`). Two implementations, same behaviour:

* ``SHIFT=True`` (used with the block-RAM LUT1): the entries are kept in place as a shift register, they move
  towards ``h0`` by the number popped and a pushed word lands behind the last entry kept, so ``h0``, ``h1``,
  ``h2`` come straight from flip-flops (no read multiplexer in the bit window's paths; iCE40 needs flip-flops
  for this FIFO anyway). What each slot takes for each pop count is prepared from ``count`` alone; the pop
  count (late: it comes from the bit window's loop) only selects among those.
* ``SHIFT=False`` (used with the distributed LUT1): a circular buffer (LUT RAM on ECP5) read at ``rp``,
  ``rp + 1``, ``rp + 2``; ``pop`` only moves the read pointer, so the loop's refill decision drives 2
  pointer bits instead of the 4 x N storage multiplexers.

Interface
---------
clk, rst                 clock, synchronous reset (storage is not reset)
wr, wdata[N]             push (caller checks ``count < 4``, i.e. ``s_axis_tready``); any width N
pop[2]                   number of entries to pop this cycle (<= count)
after                    (optional, ``SHIFT`` only; out) four signals: what ``h0`` becomes for a pop of 0..3
                         (the entry, or the word pushed now where the entry does not exist yet)
take_start               (optional, ``SHIFT`` only) a stripe start: pop 3, 2 or 1 entries as the heads say
                         (header + two payload words / + the last payload word / otherwise the header alone:
                         the FIFO's own flags, bit 33 = good header, bit 32 = tlast); ``pop`` is 0 then, and
                         with ``take_start`` given ``pop_x`` may only come alone (``pop`` = 0, no start)
pop_x                    (optional) pop one more entry (pop + pop_x <= count): for a pop decided late in the
                         cycle; with ``SHIFT`` each slot selects between its candidates for ``pop`` and
                         ``pop + 1`` (prepared from ``count`` and ``pop``) by ``pop_x`` alone, with ``DEFER``
                         it only sets a flip-flop (below)
h0, h1, h2 [N]           the oldest, second and third entry (valid when count > 0, 1, 2); with ``DEFER`` these
                         are combinational (see below)
count                    registered number of entries, 0..4
count_gt                 (optional, out) the same as a registered thermometer code: bit i = count > i

``DEFER=True`` (``SHIFT`` with ``pop_x``; the one-hot decode step): the late ``pop_x`` does not reach the storage
in its cycle. It sets one flip-flop, ``pend``; the storage drops that entry a cycle later together with that
cycle's early pops, and meanwhile ``h0``, ``h1``, ``h2`` skip it (a 2:1 per data bit selected by ``pend``; the
flag bits above bit 31 and ``count_gt`` are kept exact in flip-flops, so ``pop_x`` drives about ten flip-flops
instead of every slot's multiplexers). Behaviour at the ports is the same as without it: ``count``, ``count_gt``
and the heads count the entry as gone in the cycle after ``pop_x``, and the storage never holds more than
``DEPTH`` entries (a push needs ``count < DEPTH``, which counts the pending entry as gone; the storage drops
it in the same cycle).
"""
from myhdl import Signal, always, always_comb, always_seq, block, concat, intbv, modbv

DEPTH = 4


@block
def input_fifo(clk, rst, wr, wdata, pop, h0, h1, h2, count, pop_x=None, after=None, count_gt=None, take_start=None,
               SHIFT=True, DEFER=False):
    if DEFER and (pop_x is None or not SHIFT):
        raise ValueError("input_fifo: DEFER needs SHIFT=True and a pop_x")
    if pop_x is None:
        pop_x = Signal(bool(0))
    if take_start is not None and not SHIFT:
        raise ValueError("input_fifo: 'take_start' needs SHIFT=True")
    bpop = pop
    if take_start is not None:
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

    if count_gt is None:
        count_gt = Signal(intbv(0)[DEPTH:])
    dec = Signal(intbv(0)[3:])   # entries leaving minus the one arriving, + 1 (0..5 for -1..4)

    @always_comb
    def ififo_cnt_next():
        if wr and not pop_x:
            dec.next = bpop
        elif wr or not pop_x:
            dec.next = bpop + 1
        else:
            dec.next = bpop + 2

    gt0 = Signal(intbv(0)[DEPTH:])   # the thermometer code after the push and pop (pop_x not yet)

    @always_comb
    def ififo_gt():
        u = intbv(0)[DEPTH + 1:]
        if wr:
            u[:] = concat(count_gt, True)
        else:
            u[DEPTH:] = count_gt
        if bpop == 0:
            gt0.next = u[DEPTH:]
        elif bpop == 1:
            gt0.next = u[DEPTH + 1:1]
        elif bpop == 2:
            gt0.next = concat(False, u[DEPTH + 1:2])
        else:
            gt0.next = concat(False, False, u[DEPTH + 1:3])

    @always_seq(clk.posedge, reset=rst)
    def ififo_count():
        count.next = count + 1 - dec
        # the thermometer code shifted by the late pop_x only at the end
        if pop_x:
            count_gt.next = concat(False, gt0[DEPTH:1])
        else:
            count_gt.next = gt0

    if SHIFT:
        n = len(wdata)
        s3 = Signal(modbv(0)[n:])
        g0, g1, g2, g3 = [Signal(bool(0)) for _ in range(4)]
        # what each slot takes for pop = 0, 1, 2, 3, from registers only (the pop count comes late in the
        # cycle: it only drives a 4:1 multiplexer per bit, and pop_x, later still, one 2:1)
        a0, a1, a2, a3 = [Signal(modbv(0)[n:]) for _ in range(4)]
        b0, b1, b2 = [Signal(modbv(0)[n:]) for _ in range(3)]
        c0, c1 = [Signal(modbv(0)[n:]) for _ in range(2)]
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

        # each slot's value for pop (e*) and for pop + 1 (f*): 4:1 multiplexers by the early pop count
        e0, e1, e2, e3 = [Signal(modbv(0)[n:]) for _ in range(4)]
        f0, f1, f2, f3 = [Signal(modbv(0)[n:]) for _ in range(4)]

        @always_comb
        def ififo_sel():
            if pop == 0:
                e0.next = a0
                e1.next = b0
                e2.next = c0
                e3.next = d0
                f0.next = a1
                f1.next = b1
                f2.next = c1
                f3.next = wdata
            elif pop == 1:
                e0.next = a1
                e1.next = b1
                e2.next = c1
                e3.next = wdata
                f0.next = a2
                f1.next = b2
                f2.next = wdata
                f3.next = wdata
            elif pop == 2:
                e0.next = a2
                e1.next = b2
                e2.next = wdata
                e3.next = wdata
                f0.next = a3
                f1.next = wdata
                f2.next = wdata
                f3.next = wdata
            else:
                e0.next = a3
                e1.next = wdata
                e2.next = wdata
                e3.next = wdata
                f0.next = a3
                f1.next = wdata
                f2.next = wdata
                f3.next = wdata

        if take_start is not None:
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

            # pop_x (late) comes with pop = 0 and no stripe start: the candidates for one pop (a1, b1, c1)
            p0, p1, p2, p3 = m0, m1, m2, m3
            x0, x1, x2, x3 = a1, b1, c1, wdata
            sel = (ififo_sel_s, ififo_pstart, ififo_bpop)
        else:
            p0, p1, p2, p3 = e0, e1, e2, e3
            x0, x1, x2, x3 = f0, f1, f2, f3
            sel = ()

        if DEFER:
            # the storage st0, st1, st2, s3 drops the early pops and the entry popped late in the last cycle
            # (pend); the visible heads skip that entry by a 2:1 per bit (from flip-flops), their flag bits
            # (above bit 31) are kept visible-exact in flip-flops (k*), so pop_x drives only pend and those
            if n <= 32:
                raise ValueError("input_fifo: DEFER needs flag bits above bit 31")
            st0, st1, st2 = [Signal(modbv(0)[n:]) for _ in range(3)]
            k0, k1, k2 = [Signal(modbv(0)[n - 32:]) for _ in range(3)]
            pend = Signal(bool(0))

            @always(clk.posedge)
            def ififo_shift():
                st0.next = p0
                st1.next = p1
                st2.next = p2
                s3.next = p3
                if pop_x:
                    k0.next = x0[n:32]
                    k1.next = x1[n:32]
                    k2.next = x2[n:32]
                else:
                    k0.next = p0[n:32]
                    k1.next = p1[n:32]
                    k2.next = p2[n:32]

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

            regs = (ififo_shift, ififo_pend, ififo_vis)
        else:
            @always(clk.posedge)
            def ififo_shift():
                # the candidates for pop + pop_x
                if pop_x:
                    h0.next = x0
                    h1.next = x1
                    h2.next = x2
                    s3.next = x3
                else:
                    h0.next = p0
                    h1.next = p1
                    h2.next = p2
                    s3.next = p3

            regs = (ififo_shift,)

        gens = (ififo_cnt_next, ififo_gt, ififo_count, ififo_kept, ififo_cand, ififo_sel) + sel + regs
        if after is None:
            return gens
        n0, n1, n2, n3 = after

        @always_comb
        def ififo_after():
            n0.next = a0
            n1.next = a1
            n2.next = a2
            n3.next = a3

        return gens + (ififo_after,)

    if after is not None:
        raise ValueError("input_fifo: 'after' needs SHIFT=True")
    mem = [Signal(modbv(0)[len(wdata):]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[2:])
    rp = Signal(modbv(0)[2:])
    rp1 = Signal(modbv(0)[2:])
    rp2 = Signal(modbv(0)[2:])

    @always(clk.posedge)
    def ififo_store():
        if wr:
            mem[wp].next = wdata

    @always_seq(clk.posedge, reset=rst)
    def ififo_ptrs():
        if wr:
            wp.next = wp + 1
        if pop_x:
            rp.next = rp + pop + 1
        else:
            rp.next = rp + pop

    @always_comb
    def ififo_idx():
        rp1.next = rp + 1
        rp2.next = rp + 2

    @always_comb
    def ififo_heads():
        h0.next = mem[rp]
        h1.next = mem[rp1]
        h2.next = mem[rp2]

    return ififo_cnt_next, ififo_gt, ififo_count, ififo_store, ififo_ptrs, ififo_idx, ififo_heads
