"""Per-stripe output bookkeeping of ``lutzip_axi`` with ``LANES > 1`` (docs/AXI.md): the N-lane decoder's beats
(up to ``LANES`` words each) -> exactly n words per stripe, up to ``LANES`` words per cycle to the packer.

Interface
---------
clk, rst                       clock, synchronous active-high reset (hard or soft)
job_ok, job_nocore, job_n      head of the job FIFO (one per descriptor): present, no core packet, n - 1
job_pop                        the head becomes the current stripe
end_ok, end_last, end_trunc    head of the stripe-end FIFO (same order; the current stripe's)
end_pop                        the current stripe is complete (its end entry is consumed)
c_tdata/tkeep/tvalid/tready/tlast/tuser  the decoder's beats (docs/CORE.md section 6: ``tkeep`` = valid words
                               1 .. LANES, word 0 in the low bits; ``tuser``: the last valid word is the error
                               marker, code in its bits 3..0; ``tlast``: the stripe's last beat), from flip-flops
w_valid, w_ready, w_data, w_count, w_end   a group of ``w_count`` (1 .. LANES) words to the packer, word 0 in the
                               low bits, zeros above them; ``w_end``: the group holds the stripe's n-th word
res_valid, res_last            as :mod:`stripe_out`
done, done_code                as :mod:`stripe_out` (same failure codes and precedence)

The rules are :mod:`stripe_out`'s, per beat instead of per word: the words of a beat beyond the stripe's n are
dropped (ERR_MISMATCH), a packet that ends short is padded with zero words, ``LANES`` per cycle (ERR_MISMATCH),
the marker is never output (its code is the stripe's failure code). A beat is taken when the packer takes its
words, or at once when none of its words are output.
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv

from lutzip.firmware.axi.stripe_end import stripe_end


@block
def word_pick(d, cnt, pad, q, J=0, W=16):
    """Word ``J`` of a group: word ``J`` of ``d`` if ``J < cnt`` and not ``pad``, else 0."""
    lo, hi = J * W, J * W + W

    @always_comb
    def wp_out():
        if cnt > J and not pad:
            q.next = d[hi:lo]
        else:
            q.next = 0

    return wp_out


@block
def stripe_out_n(clk, rst, job_ok, job_nocore, job_n, job_pop, end_ok, end_last, end_trunc, end_pop,
                 c_tdata, c_tkeep, c_tvalid, c_tready, c_tlast, c_tuser,
                 w_valid, w_ready, w_data, w_count, w_end, res_valid, res_last, done, done_code,
                 LANES=2, W=16, ERR_MISMATCH=14, ERR_TRUNCATED=15):
    N = LANES
    NW = N * W
    jv = Signal(bool(0))             # a current stripe
    rem = Signal(intbv(0)[17:])      # its words still to send
    cd = Signal(bool(0))             # the core's packet for it has ended (or there is none)
    cerr = Signal(intbv(0)[4:])      # the core's error code (0: none)
    mism = Signal(bool(0))           # the core's word count differs from n
    r_zero = Signal(bool(0))
    kd = Signal(intbv(0, min=0, max=N + 1))   # data words of the beat (the marker excluded)
    ek = Signal(intbv(0, min=0, max=N + 1))   # min(kd, rem)
    ep = Signal(intbv(0, min=0, max=N + 1))   # min(N, rem)
    cnt = Signal(intbv(0, min=0, max=N + 1))
    pad = Signal(bool(0))
    take, emit, fin, load, cd_n, mism_n, wend = [Signal(bool(0)) for _ in range(7)]
    cerr_n = Signal(intbv(0)[4:])
    m_sh = Signal(intbv(0)[NW:])
    m_code = Signal(intbv(0)[4:])
    qs = [Signal(intbv(0)[W:]) for _ in range(N)]
    picks = [word_pick(c_tdata, cnt, pad, qs[j], J=j, W=W) for j in range(N)]
    q_cat = ConcatSignal(*reversed(qs))

    @always_comb
    def so_counts():
        r_zero.next = rem == 0
        if c_tuser and c_tkeep != 0:
            kd.next = c_tkeep - 1
        else:
            kd.next = c_tkeep
        if rem < N:
            ep.next = rem
        else:
            ep.next = N

    @always_comb
    def so_min():
        if rem < kd:
            ek.next = rem
        else:
            ek.next = kd

    @always_comb
    def so_marker():
        v = intbv(0)[NW:]
        v[:] = c_tdata
        m_sh.next = 0
        for j in range(N):   # the marker is the beat's last valid word (constant shifts only, for VHDL)
            if c_tkeep == j + 1:
                m_sh.next = v >> (j * W)

    @always_comb
    def so_code():
        m_code.next = m_sh[4:0]

    @always_comb
    def so_route():
        w_valid.next = 0
        cnt.next = 0
        pad.next = 0
        c_tready.next = 0
        if jv:
            if not cd:
                if c_tvalid:
                    if kd == 0 or r_zero:
                        c_tready.next = 1
                    else:
                        w_valid.next = 1
                        cnt.next = ek
                        c_tready.next = w_ready
            elif not r_zero:
                w_valid.next = 1
                cnt.next = ep
                pad.next = 1

    @always_comb
    def so_group():
        w_data.next = q_cat
        w_count.next = cnt
        wend.next = cnt == rem
        w_end.next = cnt == rem

    @always_comb
    def so_hs():
        take.next = c_tvalid and c_tready
        emit.next = w_valid and w_ready

    @always_comb
    def so_next():
        cd_n.next = cd or (take and (c_tlast or c_tuser))
        if take and c_tuser:
            cerr_n.next = m_code
        else:
            cerr_n.next = cerr
        mism_n.next = mism or (take and not c_tuser and (kd > rem or (c_tlast and kd < rem)))

    @always_comb
    def so_fin():
        fin.next = jv and end_ok and cd_n and (r_zero or (emit and wend))

    end_ = stripe_end(job_ok, jv, fin, load, job_pop, end_pop, end_last, end_trunc, cerr_n, mism_n, done, done_code,
                      res_valid, res_last, ERR_MISMATCH=ERR_MISMATCH, ERR_TRUNCATED=ERR_TRUNCATED)

    @always(clk.posedge)
    def so_seq():
        if rst:
            jv.next = 0
            rem.next = 0
            cd.next = 0
            cerr.next = 0
            mism.next = 0
        elif load:
            jv.next = 1
            rem.next = job_n + 1
            cd.next = job_nocore
            cerr.next = 0
            mism.next = 0
        elif fin:
            jv.next = 0
        else:
            if emit:
                rem.next = rem - cnt
            cd.next = cd_n
            cerr.next = cerr_n
            mism.next = mism_n

    return picks, so_counts, so_min, so_marker, so_code, so_route, so_group, so_hs, so_next, so_fin, end_, \
        so_seq
