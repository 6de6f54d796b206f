"""A lane's output buffer for two or more lanes: a first-word-fall-through FIFO in one simple-dual-port block RAM
whose ports see flip-flops only: the write port a register stage, the read port a registered address, the read
data the RAM's own output register before a head queue.

Interface
---------
clk, rst        clock, synchronous active-high reset (the RAM and the data registers are not reset)
wr, wdata       write strobe and row; the caller never writes when ``level`` is ``DEPTH`` (credits upstream)
rd              pops the head (only when ``rvalid``)
rdata, rvalid   the head row (a fabric register) and its valid flag
level           registered number of rows held (write stage, RAM, read pipeline and head queue), 0 .. DEPTH
DEPTH           RAM rows, a power of two >= 2

Write: ``wr`` / ``wdata`` are registered (``w1`` / ``wd1``) and written into the RAM one cycle later at ``wp``.
Read: the RAM is read in every cycle at the address register ``ra`` (no read enable: its clock enable is a
constant) into its read register ``r1``; ``q1`` copies ``r1`` in every cycle (no enable, no reset:
:mod:`lutzip.hdl.flows.bram_outreg` makes it the DP16KD's output register). ``fetch`` takes the row at ``ra``
(``ra`` moves on); that row shows in ``q1`` exactly two cycles later, and is then written into the head queue of
``P = 4`` fabric registers, whose first register is ``rdata``. ``fetch`` needs a row in the RAM (``ram_nz``, a
flip-flop) and a sure place for the row in the queue without any pop (queue rows + rows in flight <= P - 1), so
it depends on registered state only; neither ``fetch`` nor ``wr`` nor ``rd`` reaches a pin of the RAM, whose
rows can be spread over the die. A row written in cycle t can be the head from cycle t + 5; one row in and one
row out per cycle.

The RAM is never read at an address being written while the read matters: a fetched row was written in an
earlier cycle, and the caller's credit keeps the RAM from filling (a read of the row being written happens only
at an empty RAM, and its data is never used), so the ECP5 synthesis flow marks it ``no_rw_check``
(:func:`lutzip.hdl.flows.synth.mark_lane_buffers`): no read-during-write multiplexer between the RAM and ``q1``.
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv, modbv

P = 4   #: head queue rows


@block
def lane_buffer(clk, rst, wr, wdata, rd, rdata, rvalid, level, DEPTH=16):
    abits = max(1, (DEPTH - 1).bit_length())
    if DEPTH < 2 or (1 << abits) != DEPTH:
        raise ValueError(f"lane_buffer DEPTH {DEPTH} is not a power of two >= 2")
    E = len(wdata)
    mem = [Signal(intbv(0)[E:]) for _ in range(DEPTH)]
    w1 = Signal(bool(0))
    wd1 = Signal(intbv(0)[E:])
    wp = Signal(modbv(0)[abits:])
    ra = Signal(modbv(0)[abits:])
    n_ram = Signal(intbv(0, min=0, max=DEPTH + 1))
    n_ram_next = Signal(modbv(0)[abits + 1:])   # (modular: no bound error while the inputs settle)
    ram_nz = Signal(bool(0))
    r1 = Signal(intbv(0)[E:])
    q1 = Signal(intbv(0)[E:])
    fetch = Signal(bool(0))
    f1 = Signal(bool(0))     # fetched in the previous cycle (the row is in r1)
    f2 = Signal(bool(0))     # fetched two cycles ago (the row is in q1: it goes into the head queue now)
    h0, h1, h2, h3 = [Signal(intbv(0)[E:]) for _ in range(P)]
    n_q = Signal(intbv(0, min=0, max=P + 1))
    n_next = Signal(intbv(0, min=0, max=P + 1))

    @always_comb
    def buf_fetch():
        # the rows in flight (f1, f2) and this one must find a place in the queue without a pop
        if not ram_nz:
            fetch.next = 0
        elif f1 and f2:
            fetch.next = n_q <= P - 3
        elif f1 or f2:
            fetch.next = n_q <= P - 2
        else:
            fetch.next = n_q <= P - 1

    @always(clk.posedge)
    def buf_wstage():
        wd1.next = wdata

    @always(clk.posedge)
    def buf_write():
        if w1:
            mem[wp].next = wd1

    @always(clk.posedge)
    def buf_read():
        r1.next = mem[ra]

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
        # rows in the RAM after this cycle's write and fetch
        if w1 and not fetch:
            n_ram_next.next = n_ram + 1
        elif fetch and not w1:
            n_ram_next.next = n_ram - 1
        else:
            n_ram_next.next = n_ram

    @always(clk.posedge)
    def buf_queue():
        # a pop moves every row one place down; q1's row (f2) goes into the first free place
        if f2 and n_next == 0:
            h0.next = q1
        elif rd:
            h0.next = h1
        if f2 and n_next == 1:
            h1.next = q1
        elif rd:
            h1.next = h2
        if f2 and n_next == 2:
            h2.next = q1
        elif rd:
            h2.next = h3
        if f2 and n_next == 3:
            h3.next = q1

    @always_seq(clk.posedge, reset=rst)
    def buf_ctl():
        w1.next = wr
        if w1:
            wp.next = wp + 1
        if fetch:
            ra.next = ra + 1
        n_ram.next = n_ram_next
        ram_nz.next = n_ram_next != 0
        f1.next = fetch
        f2.next = f1
        if f2:
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

    return (buf_fetch, buf_wstage, buf_write, buf_read, buf_outreg, buf_count, buf_queue, buf_ctl, buf_head)
