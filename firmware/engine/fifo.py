"""First-word-fall-through FIFO on a synchronous-read RAM (block RAM on FPGAs)."""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def fifo(clk, rst, din, wr, dout, dvalid, dready, full, DEPTH=512):
    """``wr`` pushes ``din`` (ignored when ``full``); ``dout``/``dvalid``/``dready`` is the AXI-like read side.

    ``full`` counts only the RAM (the output register holds one more entry).
    """
    AW = max(1, (DEPTH - 1).bit_length())
    assert 1 << AW == DEPTH, "DEPTH must be a power of two"
    W = len(din)
    mem = [Signal(intbv(0)[W:]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[AW + 1:])
    rp = Signal(modbv(0)[AW + 1:])
    ov = Signal(bool(0))
    wa = Signal(intbv(0)[AW:])
    ra = Signal(intbv(0)[AW:])

    @always_comb
    def addr():
        wa.next = wp[AW:]
        ra.next = rp[AW:]

    @always(clk.posedge)
    def write():
        if wr and not full:
            mem[wa].next = din

    @always(clk.posedge)
    def ptrs():
        if rst:
            wp.next = 0
            rp.next = 0
            ov.next = 0
        else:
            if wr and not full:
                wp.next = wp + 1
            if (not ov or dready) and wp != rp:
                dout.next = mem[ra]
                ov.next = 1
                rp.next = rp + 1
            elif dready:
                ov.next = 0

    @always_comb
    def flags():
        full.next = (wp[AW] != rp[AW]) and (wp[AW:] == rp[AW:])
        dvalid.next = ov

    return addr, write, ptrs, flags
