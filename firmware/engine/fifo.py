"""First-word-fall-through FIFO on a synchronous-read RAM (block RAM on FPGAs)."""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def fifo(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, m_axis_tdata, m_axis_tvalid, m_axis_tready,
         DEPTH=512):
    """A stream in, the same stream out, ``DEPTH`` entries of RAM plus the output register.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset (empties the FIFO).
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        Write side; ``s_axis_tready`` is low while the RAM is full (the output register holds one more entry).
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        Read side, first word fall through.
    DEPTH : int
        RAM entries, a power of two.
    """
    AW = max(1, (DEPTH - 1).bit_length())
    assert 1 << AW == DEPTH, "DEPTH must be a power of two"
    W = len(s_axis_tdata)
    mem = [Signal(intbv(0)[W:]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[AW + 1:])
    rp = Signal(modbv(0)[AW + 1:])
    ov = Signal(bool(0))
    full = Signal(bool(0))
    wa = Signal(intbv(0)[AW:])
    ra = Signal(intbv(0)[AW:])

    @always_comb
    def addr():
        wa.next = wp[AW:]
        ra.next = rp[AW:]

    @always(clk.posedge)
    def write():
        if s_axis_tvalid and not full:
            mem[wa].next = s_axis_tdata

    @always(clk.posedge)
    def ptrs():
        if rst:
            wp.next = 0
            rp.next = 0
            ov.next = 0
        else:
            if s_axis_tvalid and not full:
                wp.next = wp + 1
            if (not ov or m_axis_tready) and wp != rp:
                m_axis_tdata.next = mem[ra]
                ov.next = 1
                rp.next = rp + 1
            elif m_axis_tready:
                ov.next = 0

    @always_comb
    def flags():
        full.next = (wp[AW] != rp[AW]) and (wp[AW:] == rp[AW:])
        s_axis_tready.next = not full
        m_axis_tvalid.next = ov

    return addr, write, ptrs, flags
