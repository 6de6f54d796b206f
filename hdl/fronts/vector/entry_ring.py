"""The vector front's entry ring: input words with their next-position vectors, read in order.

Entries come from :mod:`lutzip.hdl.fronts.vector.pos_stage` in stream order; the front (:mod:`lutzip.hdl.fronts.vector.loop_vector`)
owns the read pointer ``rp`` and pops by moving it; it copies the entry it decodes into its own registers,
so the one-cycle loop never reads the ring. Storage is LUT RAM on ECP5 (one write port, reads
asynchronous).

Interface
---------
clk                      clock (storage is not reset; occupancy is ``wp - rp``)
push, w[32], wn[32], meta, v0 .. v5[32]
                         entry to store at ``wp`` (see :mod:`lutzip.hdl.fronts.vector.pos_stage`)
flags[3]                 that entry's flags as ``r1_flags`` below (computed by the caller from ``meta``)
rp[PB]                   read pointer (modulo 2 * DEPTH, kept by the front)
wp[PB]                   (out, registered) write pointer, reset to 0
r0_*                     (out) the entry at ``rp``: ``w``, ``wn``, ``meta``,
                         ``v0`` .. ``v5``
r1_flags[3]              (out) flags of the entry at ``rp + 1``: [0] starts a stripe (meta ``first``, or ``hdr``
                         and ``mk``), [1] ``last``, [2] ``n`` = 0; lets the front keep the head's flags in
                         flip-flops
DEPTH                    entries, a power of two; pointers have one more bit to tell full from empty
vs, r0_vs                (optional; two code tables) the entry's next-state vector, stored and read as ``v0``
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv, modbv


@block
def entry_ring(clk, rst, push, w, wn, meta, v0, v1, v2, v3, v4, v5, flags, rp, wp,
               r0_w, r0_wn, r0_meta, r0_v0, r0_v1, r0_v2, r0_v3, r0_v4, r0_v5, r1_flags, DEPTH=16, vs=None, r0_vs=None):
    ab = (DEPTH - 1).bit_length()
    if 1 << ab != DEPTH:
        raise ValueError(f"DEPTH = {DEPTH}: a power of two")
    m_w = [Signal(intbv(0)[32:]) for _ in range(DEPTH)]
    m_wn = [Signal(intbv(0)[32:]) for _ in range(DEPTH)]
    m_f = [Signal(intbv(0)[len(meta):]) for _ in range(DEPTH)]
    vw = len(v0)
    m_v0, m_v1, m_v2, m_v3, m_v4, m_v5 = [[Signal(intbv(0)[vw:]) for _ in range(DEPTH)] for _ in range(6)]
    m_s = [Signal(intbv(0)[len(flags):]) for _ in range(DEPTH)]
    wa = Signal(intbv(0)[ab:])
    ra0 = Signal(intbv(0)[ab:])
    ra1 = Signal(modbv(0)[ab:])

    @always(clk.posedge)
    def ring_store():
        if push:
            m_w[wa].next = w
            m_wn[wa].next = wn
            m_f[wa].next = meta
            m_s[wa].next = flags
            m_v0[wa].next = v0
            m_v1[wa].next = v1
            m_v2[wa].next = v2
            m_v3[wa].next = v3
            m_v4[wa].next = v4
            m_v5[wa].next = v5

    @always_seq(clk.posedge, reset=rst)
    def ring_wp():
        if push:
            wp.next = wp + 1

    @always_comb
    def ring_addr():
        wa.next = wp[ab:]
        ra0.next = rp[ab:]
        ra1.next = rp[ab:] + 1

    @always_comb
    def ring_read():
        r0_w.next = m_w[ra0]
        r0_wn.next = m_wn[ra0]
        r0_meta.next = m_f[ra0]
        r0_v0.next = m_v0[ra0]
        r0_v1.next = m_v1[ra0]
        r0_v2.next = m_v2[ra0]
        r0_v3.next = m_v3[ra0]
        r0_v4.next = m_v4[ra0]
        r0_v5.next = m_v5[ra0]
        r1_flags.next = m_s[ra1]

    if vs is None:
        return ring_store, ring_wp, ring_addr, ring_read
    m_vs = [Signal(intbv(0)[len(vs):]) for _ in range(DEPTH)]

    @always(clk.posedge)
    def ring_store_s():
        if push:
            m_vs[wa].next = vs

    @always_comb
    def ring_read_s():
        r0_vs.next = m_vs[ra0]

    return ring_store, ring_wp, ring_addr, ring_read, ring_store_s, ring_read_s
