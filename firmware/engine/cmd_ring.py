"""Command ring: the frame parser writes entries speculatively, commits them when the frame's CRC is good and
rolls them back otherwise; the table loader reads committed entries (first-word-fall-through)."""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def cmd_ring(clk, rst, we, wdata, commit, rollback, m_axis_tdata, m_axis_tvalid, m_axis_tready, free, empty,
             DEPTH=4096):
    """A ring of ``DEPTH`` 34-bit entries: ``tag[33:32] | data[31:0]`` (tag 0 stream word, 1 stream word + tlast,
    2 control, 3 table data).

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset (empties the ring).
    we, wdata : Signal
        Speculative write (the writer checks ``free`` first; there is no back pressure).
    commit, rollback : Signal
        Make the speculative entries readable / drop them.
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        Committed entries, first word fall through.
    free : Signal
        RAM entries not yet written (speculative writes count as used).
    empty : Signal
        Nothing committed is left to read.
    DEPTH : int
        Entries, a power of two.
    """
    AW = max(1, (DEPTH - 1).bit_length())
    assert 1 << AW == DEPTH, "DEPTH must be a power of two"
    mem = [Signal(intbv(0)[len(wdata):]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[AW + 1:])   # committed write pointer
    ws = Signal(modbv(0)[AW + 1:])   # speculative write pointer
    rp = Signal(modbv(0)[AW + 1:])
    ov = Signal(bool(0))
    wa = Signal(intbv(0)[AW:])
    ra = Signal(intbv(0)[AW:])

    @always_comb
    def addr():
        wa.next = ws[AW:]
        ra.next = rp[AW:]

    @always(clk.posedge)
    def write():
        if we:
            mem[wa].next = wdata

    @always(clk.posedge)
    def ptrs():
        if rst:
            wp.next = 0
            ws.next = 0
            rp.next = 0
            ov.next = 0
        else:
            if rollback:
                ws.next = wp
            elif we:
                ws.next = ws + 1
            if commit:
                wp.next = ws
            if (not ov or m_axis_tready) and wp != rp:
                m_axis_tdata.next = mem[ra]
                ov.next = 1
                rp.next = rp + 1
            elif m_axis_tready:
                ov.next = 0

    @always_comb
    def flags():
        d = modbv(0)[AW + 1:]
        d[:] = ws - rp
        free.next = DEPTH - d
        m_axis_tvalid.next = ov
        empty.next = (wp == rp) and not ov

    return addr, write, ptrs, flags
