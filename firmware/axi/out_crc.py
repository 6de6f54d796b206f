"""CRC32 (zlib) of the output bytes of a transfer (``lutzip_axi`` register OUT_CRC, docs/AXI.md).

Interface
---------
clk, rst            clock; ``rst`` (hard or soft reset) restarts the running CRC (the result is kept)
beat, keep          the output beat and its ``tkeep`` (valid bytes are the lowest ones)
fire, last          a beat is accepted in this cycle / it is the transfer's last
crc_out             ``zlib.crc32`` of the bytes with ``tkeep`` of the last completed transfer (0 before)
rst_hard            clears ``crc_out`` as well (``aresetn``)

One :mod:`crc_lane` (:func:`lutzip.firmware.engine.crc32_byte.crc32_byte`) per byte of the beat, chained
without selects (one XOR network); the CRC after the beat's last valid byte is picked by an AND-OR select
at the end.
"""
from myhdl import Signal, always, always_comb, block, intbv

from lutzip.firmware.axi.crc_lane import crc_lane


@block
def out_crc(clk, rst, rst_hard, beat, keep, fire, last, crc_out, OUT_BYTES=4):
    run = Signal(intbv(0xFFFFFFFF)[32:])
    res = Signal(intbv(0)[32:])
    chain = [Signal(intbv(0)[32:]) for _ in range(OUT_BYTES + 1)]
    picks = [Signal(intbv(0)[32:]) for _ in range(OUT_BYTES + 1)]
    lanes = [crc_lane(chain[i], beat, keep, chain[i + 1], picks[i], picks[i + 1], I=i, LAST=i == OUT_BYTES - 1)
             for i in range(OUT_BYTES)]

    c_first, p_first, c_final = chain[0], picks[0], picks[OUT_BYTES]

    @always_comb
    def oc_head():
        c_first.next = run
        if keep[0]:
            p_first.next = 0
        else:
            p_first.next = run

    @always_comb
    def oc_out():
        crc_out.next = res

    @always(clk.posedge)
    def oc_seq():
        if rst_hard:
            res.next = 0
        if rst or rst_hard:
            run.next = 0xFFFFFFFF
        elif fire:
            if last:
                res.next = c_final ^ 0xFFFFFFFF
                run.next = 0xFFFFFFFF
            else:
                run.next = c_final

    return lanes, oc_head, oc_out, oc_seq

