"""One byte lane of :mod:`out_crc`: byte ``I`` of the beat into the running CRC32 if its ``tkeep`` bit is set.

Interface
---------
c_in, c_out     CRC before / after this byte (no pre/post inversion)
beat, keep      the output beat and its ``tkeep``
I               byte index (constant)
"""
from myhdl import Signal, always_comb, block, intbv

from lutzip.firmware.engine.crc32_byte import crc32_byte


@block
def crc_lane(c_in, beat, keep, c_out, I=0):
    lo, hi = 8 * I, 8 * I + 8
    byte = Signal(intbv(0)[8:])
    stepped = Signal(intbv(0)[32:])
    step = crc32_byte(c_in, byte, stepped)

    @always_comb
    def cl_byte():
        byte.next = beat[hi:lo]

    @always_comb
    def cl_sel():
        if keep[I]:
            c_out.next = stepped
        else:
            c_out.next = c_in

    return step, cl_byte, cl_sel
