"""Per-stripe output bookkeeping of ``lutzip_axi`` (docs/AXI.md): exactly n words per stripe, whatever the core does.

Interface
---------
clk, rst                       clock, synchronous active-high reset (hard or soft)
job_ok, job_nocore, job_n      head of the job FIFO (one per descriptor): present, no core packet, n - 1
job_pop                        the head becomes the current stripe (loaded into registers)
end_ok, end_last, end_trunc    head of the stripe-end FIFO (same order; the current stripe's): present,
                               transfer's last stripe, input ended inside the stripe
end_pop                        the current stripe is complete (its end entry is consumed)
c_tdata/tvalid/tready/tlast/tuser  the core's output (``tuser``: error marker, code in ``tdata``), from
                               flip-flops (:mod:`axis_skid`)
w_valid, w_ready, w_data, w_end    words to the packer; ``w_end`` on the stripe's n-th word
res_valid, res_last            the stripe whose n-th word went to the packer is complete (this cycle or
                               earlier): ``res_last`` = it ended the transfer
done, done_code                one-cycle pulse per completed stripe; failure code (0 = good; core code
                               1..6, ERR_MISMATCH = word count differs from n, ERR_TRUNCATED = input ended
                               inside the stripe)

The current stripe lives in registers: a down counter of the words still to send with registered flags
"one left" / "none left", so no adder or comparator sits between the handshakes and the completion.
Words of the core beyond n are dropped, missing ones (after the core's ``tlast`` or error marker) are
zero words; the stripe completes when n words went out, the core's packet has ended and its end entry is
there, and the next job is loaded in the same cycle (the load, the pops and the failure code are
:mod:`stripe_end`'s). The core's words are taken only while the packer takes them (``c_tready`` =
``w_ready``), except dropped words and markers, which are always taken.
"""
from myhdl import Signal, always, always_comb, block, intbv

from lutzip.firmware.axi.stripe_end import stripe_end


@block
def stripe_out(clk, rst, job_ok, job_nocore, job_n, job_pop, end_ok, end_last, end_trunc, end_pop,
               c_tdata, c_tvalid, c_tready, c_tlast, c_tuser,
               w_valid, w_ready, w_data, w_end, res_valid, res_last, done, done_code,
               ERR_MISMATCH=14, ERR_TRUNCATED=15):
    jv = Signal(bool(0))             # a current stripe
    rem = Signal(intbv(0)[17:])      # its words still to send
    r_one = Signal(bool(0))          # rem == 1
    r_zero = Signal(bool(0))         # rem == 0
    cd = Signal(bool(0))             # the core's packet for it has ended (or there is none)
    cerr = Signal(intbv(0)[4:])      # the core's error code (0: none)
    mism = Signal(bool(0))           # the core's word count differs from n
    take, emit, fin, load, cd_n, mism_n = [Signal(bool(0)) for _ in range(6)]
    cerr_n = Signal(intbv(0)[4:])

    @always_comb
    def so_route():
        w_valid.next = 0
        w_data.next = 0
        w_end.next = r_one
        c_tready.next = 0
        if jv:
            if not cd:
                if c_tvalid:
                    if c_tuser or r_zero:
                        c_tready.next = 1
                    else:
                        w_valid.next = 1
                        w_data.next = c_tdata
                        c_tready.next = w_ready
            elif not r_zero:
                w_valid.next = 1

    @always_comb
    def so_hs():
        take.next = c_tvalid and c_tready
        emit.next = w_valid and w_ready

    @always_comb
    def so_next():
        cd_n.next = cd or (take and (c_tlast or c_tuser))
        if take and c_tuser:
            cerr_n.next = c_tdata[4:0]
        else:
            cerr_n.next = cerr
        mism_n.next = mism or (take and not c_tuser and (r_zero or (c_tlast and not r_one)))

    @always_comb
    def so_fin():
        fin.next = jv and end_ok and cd_n and (r_zero or (emit and r_one))

    end_ = stripe_end(job_ok, jv, fin, load, job_pop, end_pop, end_last, end_trunc, cerr_n, mism_n, done, done_code,
                      res_valid, res_last, ERR_MISMATCH=ERR_MISMATCH, ERR_TRUNCATED=ERR_TRUNCATED)

    @always(clk.posedge)
    def so_seq():
        if rst:
            jv.next = 0
            rem.next = 0
            r_one.next = 0
            r_zero.next = 0
            cd.next = 0
            cerr.next = 0
            mism.next = 0
        elif load:
            jv.next = 1
            rem.next = job_n + 1
            r_one.next = job_n == 0
            r_zero.next = 0
            cd.next = job_nocore
            cerr.next = 0
            mism.next = 0
        elif fin:
            jv.next = 0
        else:
            if emit:
                rem.next = rem - 1
                r_one.next = rem == 2
                r_zero.next = r_one
            cd.next = cd_n
            cerr.next = cerr_n
            mism.next = mism_n

    return so_route, so_hs, so_next, so_fin, end_, so_seq
