"""One byte of CRC-8 (polynomial 0x07, not reflected) per cycle through a 256-entry table ROM."""
from myhdl import Signal, always_comb, block, intbv, modbv

from lutzip.link.protocol import crc8_table

CRC8_TABLE = tuple(crc8_table())


@block
def crc8_byte(crc_in, byte, crc_out, ROM=False):
    """One byte into a running CRC-8 (combinational): shift/XOR steps, or ``T[crc_in ^ byte]`` with ``ROM``
    (see :func:`lutzip.firmware.engine.crc32_byte.crc32_byte`)."""
    if not ROM:
        @always_comb
        def bitwise():
            c = modbv(0)[8:]
            c[:] = crc_in ^ byte
            for i in range(8):
                if c[7]:
                    c[:] = (c << 1) ^ 0x07
                else:
                    c[:] = c << 1
            crc_out.next = c

        return bitwise

    a = Signal(intbv(0)[8:])

    @always_comb
    def c_a():
        a.next = crc_in ^ byte

    @always_comb
    def rom():
        crc_out.next = CRC8_TABLE[int(a)]

    return c_a, rom
