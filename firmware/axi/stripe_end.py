"""The end of a stripe in ``lutzip_axi``'s output bookkeeping (docs/AXI.md), shared by :mod:`stripe_out` (one word
per cycle) and :mod:`stripe_out_n` (``LANES`` words per cycle): when the next job is loaded, the FIFO pops, the
result and its failure code.

Interface
---------
job_ok, jv, fin                the job FIFO has a head; a current stripe; the current stripe completes this cycle
load                           the head becomes the current stripe (no current one, or it completes now)
job_pop, end_pop               pop the job FIFO (``load``) and the stripe-end FIFO (``fin``)
end_last, end_trunc            the stripe-end FIFO's head: the transfer's last stripe, input ended inside the stripe
cerr_n, mism_n                 the core's error code (0: none) and "word count differs from n", this cycle's values
done, done_code                one-cycle pulse per completed stripe (``fin``) and its failure code, in this order
                               of precedence: ERR_TRUNCATED, the core's code, ERR_MISMATCH, 0 (good)
res_valid, res_last            the completed stripe to the packer (``fin``) and ``end_last``
"""
from myhdl import always_comb, block


@block
def stripe_end(job_ok, jv, fin, load, job_pop, end_pop, end_last, end_trunc, cerr_n, mism_n, done, done_code,
               res_valid, res_last, ERR_MISMATCH=14, ERR_TRUNCATED=15):
    @always_comb
    def so_load():
        load.next = job_ok and (not jv or fin)

    @always_comb
    def so_outs():
        job_pop.next = load
        end_pop.next = fin
        done.next = fin
        res_valid.next = fin
        res_last.next = end_last
        if end_trunc:
            done_code.next = ERR_TRUNCATED
        elif cerr_n != 0:
            done_code.next = cerr_n
        elif mism_n:
            done_code.next = ERR_MISMATCH
        else:
            done_code.next = 0

    return so_load, so_outs
