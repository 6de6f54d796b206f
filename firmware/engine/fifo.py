"""First-word-fall-through FIFO on a synchronous-read RAM (block RAM on FPGAs)."""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def fifo(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, m_axis_tdata, m_axis_tvalid, m_axis_tready,
         DEPTH=512, FULL_REG=False):
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
    FULL_REG : bool
        The full flag (``s_axis_tready``) is a flip-flop, set and cleared from the pointers' update of the
        cycle before (exactly the flag of before, cycle for cycle), so that no pointer compare stands between
        the RAM's read pointer and the write side's handshake (``proto_engine``'s ``RESULT_REG``: the
        decoded-word FIFO's write enable, the two-domain ULX3S build at 100 MHz). False converts to the HDL of
        before.
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

    if FULL_REG:
        wn = Signal(modbv(0)[AW:])     # the write address after this one
        one_left = Signal(bool(0))     # DEPTH - 1 entries in the RAM (a write and no read fills it)
        we, re = Signal(bool(0)), Signal(bool(0))

        @always_comb
        def c_wn():
            wn.next = wa + 1

        @always_comb
        def flags_r():
            one_left.next = wn == ra
            we.next = s_axis_tvalid and not full
            re.next = (not ov or m_axis_tready) and wp != rp
            s_axis_tready.next = not full
            m_axis_tvalid.next = ov

        @always(clk.posedge)
        def c_full():
            if rst:
                full.next = 0
            elif re:
                full.next = 0
            elif we and one_left:
                full.next = 1

        return addr, write, ptrs, c_wn, flags_r, c_full

    @always_comb
    def flags():
        full.next = (wp[AW] != rp[AW]) and (wp[AW:] == rp[AW:])
        s_axis_tready.next = not full
        m_axis_tvalid.next = ov

    return addr, write, ptrs, flags
