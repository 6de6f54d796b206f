"""Per-stripe output bookkeeping of ``lutzip_axi`` (docs/AXI.md): exactly n words per stripe, whatever the core does.

Interface
---------
clk, rst                       clock, synchronous active-high reset (hard or soft)
job_ok, job_nocore, job_n      head of the job FIFO (one per descriptor): present, no core packet, n - 1
end_ok, end_last, end_trunc    head of the stripe-end FIFO (same order): present, transfer's last stripe,
                               input ended inside the stripe
pop                            both heads are consumed (the stripe is complete)
c_tdata/tvalid/tready/tlast/tuser  the core's output (``tuser``: error marker, code in ``tdata``)
w_valid, w_ready, w_data, w_end    words to the packer; ``w_end`` on the stripe's n-th word
res_valid, res_last            the stripe whose n-th word went to the packer is complete (this cycle or
                               earlier): ``res_last`` = it ended the transfer
done, done_code                one-cycle pulse per completed stripe; failure code (0 = good; core code
                               1..6, 14 = word count differs from n, 15 = input ended inside the stripe)

Words of the core beyond n are dropped, missing ones (after the core's ``tlast`` or error marker) are
zero words; the stripe completes when n words went out, the core's packet has ended and its end entry is
there. The core's words are taken only while the packer takes them (``c_tready`` = ``w_ready``), except
dropped words and markers, which are always taken.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def stripe_out(clk, rst, job_ok, job_nocore, job_n, end_ok, end_last, end_trunc, pop,
               c_tdata, c_tvalid, c_tready, c_tlast, c_tuser,
               w_valid, w_ready, w_data, w_end, res_valid, res_last, done, done_code,
               ERR_MISMATCH=14, ERR_TRUNCATED=15):
    cnt = Signal(intbv(0)[17:])      # words of this stripe sent to the packer
    cdone = Signal(bool(0))          # the core's packet for this stripe has ended
    cerr = Signal(intbv(0)[4:])      # the core's error code (0: none)
    mism = Signal(bool(0))           # the core's word count differs from n
    cnt_n = Signal(intbv(0)[17:])
    cdone_n = Signal(bool(0))
    cerr_n = Signal(intbv(0)[4:])
    mism_n = Signal(bool(0))
    fin = Signal(bool(0))
    n17 = Signal(intbv(0)[17:])
    take = Signal(bool(0))
    emit = Signal(bool(0))
    cd = Signal(bool(0))
    need = Signal(bool(0))

    @always_comb
    def so_need():
        n17.next = job_n + 1
        cd.next = cdone or (job_ok and job_nocore)
        need.next = cnt <= job_n

    @always_comb
    def so_route():
        w_valid.next = 0
        w_data.next = 0
        w_end.next = cnt == job_n
        c_tready.next = 0
        if job_ok:
            if not cd:
                if c_tvalid:
                    if c_tuser or not need:
                        c_tready.next = 1
                    else:
                        w_valid.next = 1
                        w_data.next = c_tdata
                        c_tready.next = w_ready
            elif need:
                w_valid.next = 1

    @always_comb
    def so_hs():
        take.next = c_tvalid and c_tready
        emit.next = w_valid and w_ready

    @always_comb
    def so_next():
        cnt_n.next = cnt + emit
        cdone_n.next = cd or (take and (c_tlast or c_tuser))
        if take and c_tuser:
            cerr_n.next = c_tdata[4:0]
        else:
            cerr_n.next = cerr
        mism_n.next = mism or (take and not c_tuser and (not need or (c_tlast and cnt + emit != n17)))

    @always_comb
    def so_done():
        fin.next = job_ok and end_ok and cdone_n and cnt_n == n17
        if end_trunc:
            done_code.next = ERR_TRUNCATED
        elif cerr_n != 0:
            done_code.next = cerr_n
        elif mism_n:
            done_code.next = ERR_MISMATCH
        else:
            done_code.next = 0

    @always_comb
    def so_outs():
        pop.next = fin
        done.next = fin
        res_valid.next = fin
        res_last.next = end_last

    @always(clk.posedge)
    def so_seq():
        if rst or fin:
            cnt.next = 0
            cdone.next = 0
            cerr.next = 0
            mism.next = 0
        else:
            cnt.next = cnt_n
            cdone.next = cdone_n
            cerr.next = cerr_n
            mism.next = mism_n

    return so_need, so_route, so_hs, so_next, so_done, so_outs, so_seq
