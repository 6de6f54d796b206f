"""Stage P (vector front): input words -> ring entries carrying the next-symbol position of every bit.

Headers: the first word after reset or tlast is a header. A good header with payload makes no entry: its
``n`` rides on the stripe's first payload entry, so the front starts the next stripe by taking one entry.
A bad header or a header-only packet is an entry of its own (flag ``hdr``).

For the vector front (:mod:`lutzip.hdl.fronts.vector.loop_vector`) the one-cycle loop must not contain the prefix
select, the LUT1 read or an adder. This stage does that work ahead of time, once per input word: for the
word ``w`` and the word after it in the same packet ``wn`` (zero after ``tlast``) it reads the total symbol
length ``c+k`` at each of the 32 bit positions ``j`` of ``w`` (the L-bit prefix at ``j`` of ``w:wn``) and
stores ``nx[j] = j + (c+k)``: where the next symbol would start if one started at ``j`` (>= 32: in a later
word). The loop then only selects ``nx[ptr]``.

The lengths come from TL, copies of LUT1's ``c+k`` field (written with LUT1), one per bit position
(:mod:`lutzip.hdl.fronts.vector.tl_read`, LUT RAM).
``nx`` is stored bit-sliced: ``v<b>[j]`` is bit ``b`` of ``nx[j]`` (six 32-bit vectors), so the loop's
select is six 32:1 multiplexers addressed by the pointer.

Pipeline: ``a`` holds the newest word until the word after it arrives (or it has ``tlast``); the pair
``a:next`` is registered in P while the 32 TL block RAMs read its prefixes; Q and R register the RAM
outputs twice (the RAM's output register, then fabric) and R pushes the entry (``nx[j] = j + TL``) into the
ring.

Interface
---------
clk, rst                 clock, synchronous reset (TL survives reset)
s_axis_tdata[32], s_axis_tvalid, s_axis_tready, s_axis_tlast
                         input stream (``s_axis_tready`` registered: entry words accepted minus entries
                         popped < ``CAP``, popped entries counted one cycle late, so the count never
                         under-states)
tl_we, tl_wa[L], tl_wd[6]  TL write port (the ``c+k`` field of each LUT1 write)
pop[2]                   entries the front pops from the ring this cycle
o_push                   (out) an entry is ready (the ring stores it at this clock edge)
o_w[32], o_wn[32]        the word and the following word of its packet (0 after tlast)
o_meta[20]               entry flags ``n[19:4] | first[3] | hdr[2] | mk[1] | last[0]``: the word has tlast;
                         its upper 16 bits are the stripe marker; it is a header that makes an entry of its
                         own (bad marker, or a header-only packet); it is the first payload word of a stripe,
                         whose header (absorbed, no entry) gave ``n - 1``
o_v0 .. o_v5 [32]        bit b of ``nx[j]`` at bit j of ``o_v<b>`` (``nx`` modulo 64: only invalid entries
                         with ``c+k > 32`` wrap, and those are reported as invalid prefixes later)
L                        LUT1 address bits
CAP                      words accepted and not yet popped (at most the ring depth)
STATES                   code tables (docs/FORMAT.md section 2.1). With 2, TL has two copies per bit position,
                         one per state (``tl_wa`` = state << L | prefix, ``tl_wd`` = next state | ``c+k``);
                         ``o_v<b>`` are 64 bits (bits 31..0: ``nx`` in state A, 63..32: in state B) and ``o_vs``
                         (64 bits, the same halves) holds the next state after a symbol at each bit
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, concat, intbv, modbv

from lutzip.hdl.fronts.header import MARKER
from lutzip.hdl.fronts.vector.tl_next import tl_next
from lutzip.hdl.fronts.vector.tl_read import tl_read

META_BITS = 20   # entry flags: n[19:4] | first[3] | hdr[2] | mk[1] | last[0]


@block
def pos_stage(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast, tl_we, tl_wa, tl_wd, pop,
              o_push, o_w, o_wn, o_meta, o_v0, o_v1, o_v2, o_v3, o_v4, o_v5, o_vs=None, L=8, CAP=14, STATES=1):
    rdy = Signal(bool(0))
    acc = Signal(bool(0))
    # entries accepted and not yet given back (the occupancy) as a thermometer code: th[k] = occupancy > k
    # (no adder or comparator between rdy and rdy: the next rdy is one bit of a shifted th)
    th = Signal(intbv(0)[CAP + 4:])
    th_r = Signal(intbv(0)[CAP + 4:])
    th_n = Signal(modbv(0)[CAP + 4:])
    pop_q = Signal(intbv(0)[2:])
    absorb_q = Signal(bool(0))
    a_v = Signal(bool(0))
    a_w = Signal(intbv(0)[32:])
    a_last = Signal(bool(0))
    a_meta = Signal(intbv(0)[META_BITS:])
    hp = Signal(bool(1))                # the next word is a header (first word after reset or tlast)
    ph = Signal(bool(0))                # a good header is waiting for its first payload word
    ph_n = Signal(intbv(0)[16:])
    x_mk = Signal(bool(0))
    x_meta = Signal(intbv(0)[META_BITS:])
    absorb = Signal(bool(0))
    load = Signal(bool(0))
    ca = Signal(intbv(0)[32:])          # the pair P takes at this clock (loaded every cycle; p_v tells)
    cb = Signal(intbv(0)[32:])
    p_v, q_v, r_v = [Signal(bool(0)) for _ in range(3)]
    p_meta, q_meta, r_meta = [Signal(intbv(0)[META_BITS:]) for _ in range(3)]
    pa, pb = [Signal(intbv(0)[32:]) for _ in range(2)]
    qa, qb = [Signal(intbv(0)[32:]) for _ in range(2)]
    ra, rb = [Signal(intbv(0)[32:]) for _ in range(2)]
    produce = Signal(bool(0))

    @always_comb
    def p_accept():
        acc.next = s_axis_tvalid and rdy and not rst
        s_axis_tready.next = rdy and not rst
        x_mk.next = s_axis_tdata[32:16] == MARKER

    @always_comb
    def p_load():
        # a good header followed by payload is absorbed: its n rides on the first payload word's entry
        absorb.next = acc and hp and x_mk and not s_axis_tlast
        load.next = acc and not (hp and x_mk and not s_axis_tlast)
        produce.next = a_v and (a_last or (acc and not (hp and x_mk and not s_axis_tlast)))

    @always_comb
    def p_entry():
        # entry flags of the word being loaded: a header entry (bad marker, or header-only) or a payload word
        # (the first of its stripe carries the header's n - 1)
        if hp:
            x_meta.next = concat(s_axis_tdata[16:0], False, True, x_mk, s_axis_tlast)
        else:
            x_meta.next = concat(ph_n, ph, False, x_mk, s_axis_tlast)

    @always_comb
    def p_cand():
        ca.next = a_w
        if a_last:
            cb.next = 0
        else:
            cb.next = s_axis_tdata

    @always_comb
    def p_occ():
        # absorbed headers make no entry: counted when accepted and given back a cycle later (no path from the
        # header check into tready)
        # = occupancy + acc - pop_q - absorb_q
        th_r.next = th >> (pop_q + absorb_q)

    @always_comb
    def p_occ_acc():
        if acc:
            th_n.next = (th_r << 1) | 1
        else:
            th_n.next = th_r

    @always_seq(clk.posedge, reset=rst)
    def p_flow():
        pop_q.next = pop
        absorb_q.next = absorb
        th.next = th_n
        rdy.next = not th_n[CAP - 1]

    @always_seq(clk.posedge, reset=rst)
    def p_pipe():
        p_v.next = produce
        pa.next = ca
        pb.next = cb
        p_meta.next = a_meta
        q_v.next = p_v
        qa.next = pa
        qb.next = pb
        q_meta.next = p_meta
        r_v.next = q_v
        ra.next = qa
        rb.next = qb
        r_meta.next = q_meta
        if acc:
            hp.next = s_axis_tlast
        if absorb:
            ph.next = 1
            ph_n.next = s_axis_tdata[16:0]
        if load:
            a_v.next = 1
            a_w.next = s_axis_tdata
            a_last.next = s_axis_tlast
            a_meta.next = x_meta
            if not hp:
                ph.next = 0
        elif produce:
            a_v.next = 0

    # one TL copy per bit position j, read (block RAM) at the prefix at j of the pair P takes; the RAM output
    # is registered once more (Q), then nx[j] = j + TL
    if STATES == 2:
        # per bit position a TL copy of each state's half; bit 32 * state + j of v<b> = bit b of nx[j] in that state
        tq = [Signal(intbv(0)[7:]) for _ in range(64)]
        tq2 = [Signal(intbv(0)[7:]) for _ in range(64)]
        tq3 = [Signal(intbv(0)[7:]) for _ in range(64)]
        nxs = [Signal(modbv(0)[6:]) for _ in range(64)]
        nss = [Signal(bool(0)) for _ in range(64)]
        readers = [tl_read(clk, tl_we, tl_wa, tl_wd, ca, cb, tq[i], J=i % 32, L=L, HALF=i // 32) for i in range(64)]
        adders = [tl_next(clk, tq[i], tq2[i], tq3[i], nxs[i], J=i % 32, ns=nss[i]) for i in range(64)]
        vb0, vb1, vb2, vb3, vb4, vb5 = [ConcatSignal(*[nxs[i](b) for i in reversed(range(64))]) for b in range(6)]
        vbs = ConcatSignal(*[nss[i] for i in reversed(range(64))])

        @always_comb
        def p_out_s():
            o_vs.next = vbs

        adders = adders + [p_out_s]
    else:
        tq = [Signal(intbv(0)[6:]) for _ in range(32)]
        tq2 = [Signal(intbv(0)[6:]) for _ in range(32)]
        tq3 = [Signal(intbv(0)[6:]) for _ in range(32)]
        nxs = [Signal(modbv(0)[6:]) for _ in range(32)]
        readers = [tl_read(clk, tl_we, tl_wa, tl_wd, ca, cb, tq[j], J=j, L=L) for j in range(32)]
        adders = [tl_next(clk, tq[j], tq2[j], tq3[j], nxs[j], J=j) for j in range(32)]
        # bit-sliced vectors: bit j of v<b> = bit b of nx[j]
        vb0, vb1, vb2, vb3, vb4, vb5 = [ConcatSignal(*[nxs[j](b) for j in reversed(range(32))]) for b in range(6)]

    @always_comb
    def p_out():
        o_push.next = r_v
        o_w.next = ra
        o_wn.next = rb
        o_meta.next = r_meta
        o_v0.next = vb0
        o_v1.next = vb1
        o_v2.next = vb2
        o_v3.next = vb3
        o_v4.next = vb4
        o_v5.next = vb5

    return p_accept, p_load, p_entry, p_cand, p_occ, p_occ_acc, p_flow, p_pipe, readers, adders, p_out
