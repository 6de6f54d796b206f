"""A lane's output buffer for two or more lanes: a first-word-fall-through FIFO in one simple-dual-port block RAM
whose read data passes the RAM's own output register before the head register.

Interface
---------
clk, rst        clock, synchronous active-high reset (the RAM and the data registers are not reset)
wr, wdata       write strobe and row; the caller never writes when ``level`` is ``DEPTH`` (credits upstream)
rd              pops the head (only when ``rvalid``)
rdata, rvalid   the head row (a fabric register) and its valid flag
level           registered number of rows held (RAM, read pipeline and head queue), 0 .. DEPTH
DEPTH           RAM rows, a power of two >= 2

Read path: the RAM is read with an enable (``fetch``) into its read register ``r1``; ``q1`` copies ``r1`` in every
cycle (no enable, no reset: :mod:`lutzip.hdl.flows.bram_outreg` makes it the DP16KD's output register, so the RAM's
clock-to-out ends inside the RAM); a head queue of ``P = 3`` fabric registers takes rows from ``q1``, its first
register is ``rdata``. ``fetch`` depends on registered state only (rows in the RAM, rows in the head queue, and
two flags for rows still in ``r1`` / ``q1``), so no path runs from ``rd`` into the RAM. ``q1`` cannot be stopped:
a row shows in ``q1`` from two cycles after its fetch until one cycle after the next fetch, and a fetch is
allowed only when the rows that would leave ``q1`` then are sure of a place in the head queue without any pop
(``queue + rows in flight <= P``). A row written in cycle t can be the head from cycle t + 4 (two more than
:mod:`lutzip.hdl.stages.row_fifo`); one row in and one row out per cycle.

The RAM is never read at the address written in the same cycle (``fetch`` takes rows written in earlier cycles;
the caller's credit keeps the RAM from filling), so the ECP5 synthesis flow marks it ``no_rw_check``
(:func:`lutzip.hdl.flows.synth.mark_lane_buffers`): no read-during-write multiplexer between the RAM and ``q1``.
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv, modbv

P = 3   #: head queue rows


@block
def lane_buffer(clk, rst, wr, wdata, rd, rdata, rvalid, level, DEPTH=16):
    abits = max(1, (DEPTH - 1).bit_length())
    if DEPTH < 2 or (1 << abits) != DEPTH:
        raise ValueError(f"lane_buffer DEPTH {DEPTH} is not a power of two >= 2")
    E = len(wdata)
    mem = [Signal(intbv(0)[E:]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[abits:])
    rp = Signal(modbv(0)[abits:])
    n_ram = Signal(intbv(0, min=0, max=DEPTH + 1))
    r1 = Signal(intbv(0)[E:])
    q1 = Signal(intbv(0)[E:])
    fetch = Signal(bool(0))
    f1 = Signal(bool(0))     # fetched in the previous cycle: q1 shows r1's previous row
    pend = Signal(bool(0))   # r1 holds a row not yet in the head queue
    old = Signal(bool(0))    # q1 holds r1's previous row, not yet in the head queue (taken in this cycle)
    cap = Signal(bool(0))    # q1's row goes into the head queue in this cycle
    h0, h1, h2 = [Signal(intbv(0)[E:]) for _ in range(P)]
    n_q = Signal(intbv(0, min=0, max=P + 1))
    n_next = Signal(intbv(0, min=0, max=P + 1))

    @always_comb
    def buf_fetch():
        # the rows that would leave r1 / q1 (old, pend) must find a place in the queue without a pop
        if n_ram == 0:
            fetch.next = 0
        elif old and pend:
            fetch.next = n_q <= P - 2
        elif old or pend:
            fetch.next = n_q <= P - 1
        else:
            fetch.next = 1

    @always_comb
    def buf_cap():
        # q1 shows r1's previous row after a fetch, else r1's row (a row of `old` is sure of its place)
        if f1:
            cap.next = old and (n_q < P or rd)
        else:
            cap.next = pend and (n_q < P or rd)

    @always(clk.posedge)
    def buf_write():
        if wr:
            mem[wp].next = wdata

    @always(clk.posedge)
    def buf_read():
        if fetch:
            r1.next = mem[rp]

    @always(clk.posedge)
    def buf_outreg():
        q1.next = r1

    @always_comb
    def buf_count():
        # rows in the head queue after this cycle's pop, before this cycle's capture
        if rd and n_q != 0:
            n_next.next = n_q - 1
        else:
            n_next.next = n_q

    @always(clk.posedge)
    def buf_queue():
        # a pop moves every row one place down; a capture puts q1 in the first free place
        if cap and n_next == 0:
            h0.next = q1
        elif rd:
            h0.next = h1
        if cap and n_next == 1:
            h1.next = q1
        elif rd:
            h1.next = h2
        if cap and n_next == 2:
            h2.next = q1

    @always_seq(clk.posedge, reset=rst)
    def buf_ctl():
        if wr:
            wp.next = wp + 1
        if fetch:
            rp.next = rp + 1
        if wr and not fetch:
            n_ram.next = n_ram + 1
        elif fetch and not wr:
            n_ram.next = n_ram - 1
        f1.next = fetch
        if fetch:
            pend.next = 1
            old.next = pend and (f1 or not cap)
        else:
            if cap and not f1:
                pend.next = 0
            old.next = 0
        if cap:
            n_q.next = n_next + 1
        else:
            n_q.next = n_next
        if wr and not rd:
            level.next = level + 1
        elif rd and not wr:
            level.next = level - 1

    @always_comb
    def buf_head():
        rdata.next = h0
        rvalid.next = n_q != 0

    return buf_fetch, buf_cap, buf_write, buf_read, buf_outreg, buf_count, buf_queue, buf_ctl, buf_head
