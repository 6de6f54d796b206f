"""One byte of CRC32 (reflected, zlib polynomial 0xEDB88320) per cycle through a 256 x 32 table ROM."""
from myhdl import Signal, always_comb, block, intbv


def _table():
    out = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        out.append(c)
    return tuple(out)


CRC32_TABLE = _table()


@block
def crc32_byte(crc_in, byte, crc_out, ROM=False):
    """One byte into a running CRC32 (combinational; no pre/post inversion).

    ``ROM=False``: eight XOR/shift steps, which synthesis reduces to a small XOR network (boards).
    ``ROM=True``: ``(crc_in >> 8) ^ T[(crc_in ^ byte) & 0xFF]`` through a 256 x 32 table: the same function,
    a few operations in a simulator (the Verilator virtual board), but large in FPGA logic.
    """
    if not ROM:
        @always_comb
        def bitwise():
            k = intbv(0)[32:]
            k[:] = crc_in
            for i in range(8):
                if k[0] ^ byte[i]:
                    k[:] = (k >> 1) ^ 0xEDB88320
                else:
                    k[:] = k >> 1
            crc_out.next = k

        return bitwise

    a = Signal(intbv(0)[8:])
    t = Signal(intbv(0)[32:])

    @always_comb
    def c_a():
        a.next = crc_in[8:0] ^ byte

    @always_comb
    def rom():
        t.next = CRC32_TABLE[int(a)]

    @always_comb
    def c_out():
        crc_out.next = (crc_in >> 8) ^ t

    return c_a, rom, c_out
