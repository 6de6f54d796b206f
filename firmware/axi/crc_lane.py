"""One byte lane of :mod:`out_crc`.

Interface
---------
c_in, c_out     CRC before / after byte ``I`` of the beat (no pre/post inversion; always stepped, so the
                lanes form one XOR network)
beat, keep      the output beat and its ``tkeep`` (valid bytes are the lowest ones)
o_in, o_out     the beat's result so far: ``o_out = o_in | c_out`` if byte ``I`` is the beat's last valid
                byte (``keep[I]`` and not ``keep[I + 1]``), else ``o_in``; an AND-OR select after the XORs
                instead of a multiplexer after every byte
I, LAST         byte index; ``LAST``: the beat's highest byte
"""
from myhdl import Signal, always_comb, block, intbv

from lutzip.firmware.engine.crc32_byte import crc32_byte


@block
def crc_lane(c_in, beat, keep, c_out, o_in, o_out, I=0, LAST=False):
    lo, hi = 8 * I, 8 * I + 8
    nxt = I if LAST else I + 1
    byte = Signal(intbv(0)[8:])
    step = crc32_byte(c_in, byte, c_out)

    @always_comb
    def cl_byte():
        byte.next = beat[hi:lo]

    @always_comb
    def cl_pick():
        if keep[I] and (LAST or not keep[nxt]):
            o_out.next = o_in | c_out
        else:
            o_out.next = o_in

    return step, cl_byte, cl_pick
