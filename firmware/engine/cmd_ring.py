"""Command ring: the frame parser writes entries speculatively, commits them when the frame's CRC is good and
rolls them back otherwise; the table loader reads committed entries (first-word-fall-through)."""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def cmd_ring(clk, rst, wr_en, wr_data, commit, rollback, rd_data, rd_valid, rd_ready, free, empty, DEPTH=4096):
    """Entries are 34 bits: ``tag[33:32] | data[31:0]`` (tag 0 stream word, 1 stream word + tlast,
    2 control, 3 table data). ``free`` = RAM entries not yet written (speculative writes count as used)."""
    AW = max(1, (DEPTH - 1).bit_length())
    assert 1 << AW == DEPTH, "DEPTH must be a power of two"
    mem = [Signal(intbv(0)[len(wr_data):]) for _ in range(DEPTH)]
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
        if wr_en:
            mem[wa].next = wr_data

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
            elif wr_en:
                ws.next = ws + 1
            if commit:
                wp.next = ws
            if (not ov or rd_ready) and wp != rp:
                rd_data.next = mem[ra]
                ov.next = 1
                rp.next = rp + 1
            elif rd_ready:
                ov.next = 0

    @always_comb
    def flags():
        d = modbv(0)[AW + 1:]
        d[:] = ws - rp
        free.next = DEPTH - d
        rd_valid.next = ov
        empty.next = (wp == rp) and not ov

    return addr, write, ptrs, flags
