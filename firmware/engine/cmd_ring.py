"""Command ring: the frame parser writes entries speculatively, commits them when the frame's CRC is good and
rolls them back otherwise; the table loader reads committed entries (first-word-fall-through)."""
from myhdl import Signal, always, always_comb, block, intbv, modbv

#: With ``PIPE``, rings of more than 2 ** SPLIT_BITS entries are split into two RAMs (see ``cmd_ring``).
SPLIT_BITS = 11


@block
def cmd_ring(clk, rst, we, wdata, commit, rollback, m_axis_tdata, m_axis_tvalid, m_axis_tready, free, empty,
             DEPTH=4096, PIPE=False):
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
    PIPE : bool
        The RAM read goes through one more flip-flop that only registers it (the board flow makes it the block
        RAM's output register, so no logic sees the RAM's slow clock-to-out), then into a 4-entry FIFO; reads
        are issued while fewer than 4 entries are read and not yet taken (one entry per cycle; an entry
        reaches the output 3 cycles after its commit instead of 1). ``free`` counts the RAM (entries in the
        FIFO have left it), ``empty`` the FIFO too. False converts to the HDL of before. A ring of more than
        ``2 ** SPLIT_BITS`` entries is two RAMs (the address's top bit selects), each read into its own output
        register, the choice between them made on the FIFO's write: no multiplexer between
        a RAM and its output register (the ECP5's DP16KD holds 2048 entries of 9 bits); that ring's ``free`` is
        a register too, loaded with the value the others compute from the pointers in the next cycle (the
        same value in every cycle; the parser's room check no longer starts with two subtractions, 2026-12-07).
    """
    AW = max(1, (DEPTH - 1).bit_length())
    assert 1 << AW == DEPTH, "DEPTH must be a power of two"
    mem = [] if PIPE and AW > SPLIT_BITS else [Signal(intbv(0)[len(wdata):]) for _ in range(DEPTH)]
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

    if PIPE and AW > SPLIT_BITS:
        # the RAM in two halves (``mem0``: the address's top bit 0, ``mem1``: 1). Both are read at an issue, at
        # the address's low bits, into their read registers, then copied into ``oq0`` / ``oq1`` in every cycle
        # (the RAMs' output registers); the top bit travels beside them (``s1`` taken at the issue, ``s2``) and
        # picks the half on the FIFO's write. Cycle for cycle the one-RAM ``PIPE`` below.
        PF = 4
        N = len(wdata)
        H = DEPTH // 2
        mem0 = [Signal(intbv(0)[N:]) for _ in range(H)]
        mem1 = [Signal(intbv(0)[N:]) for _ in range(H)]
        rq0, rq1 = Signal(intbv(0)[N:]), Signal(intbv(0)[N:])
        oq0, oq1 = Signal(intbv(0)[N:]), Signal(intbv(0)[N:])
        s1, s2 = Signal(bool(0)), Signal(bool(0))
        v1, v2 = Signal(bool(0)), Signal(bool(0))
        cnt = Signal(intbv(0, min=0, max=PF + 1))      # read and not yet taken
        fq = [Signal(intbv(0)[N:]) for _ in range(PF)]
        fw, fr = Signal(modbv(0)[3:]), Signal(modbv(0)[3:])
        iss, take = Signal(bool(0)), Signal(bool(0))

        @always(clk.posedge)
        def write0():
            if we and not wa[AW - 1]:
                mem0[wa[AW - 1:]].next = wdata

        @always(clk.posedge)
        def write1():
            if we and wa[AW - 1]:
                mem1[wa[AW - 1:]].next = wdata

        @always_comb
        def c_iss():
            iss.next = wp != rp and cnt < PF
            take.next = fw != fr and m_axis_tready

        @always(clk.posedge)
        def c_rd0():
            if iss:
                rq0.next = mem0[ra[AW - 1:]]

        @always(clk.posedge)
        def c_rd1():
            if iss:
                rq1.next = mem1[ra[AW - 1:]]

        @always(clk.posedge)
        def c_oq():
            oq0.next = rq0
            oq1.next = rq1
            if iss:
                s1.next = ra[AW - 1]
            s2.next = s1

        @always(clk.posedge)
        def c_pipe():
            if rst:
                wp.next = 0
                ws.next = 0
                rp.next = 0
                v1.next = 0
                v2.next = 0
                cnt.next = 0
                fw.next = 0
                fr.next = 0
                free.next = DEPTH
            else:
                # free from flip-flops: DEPTH - (ws - rp) of the pointers' next values, as the other rings' free
                # one cycle later (the parser's room check and ACK credit then start from flip-flops)
                wsn = modbv(0)[AW + 1:]
                wsn[:] = ws
                if rollback:
                    ws.next = wp
                    wsn[:] = wp
                elif we:
                    ws.next = ws + 1
                    wsn[:] = ws + 1
                if commit:
                    wp.next = ws
                rpn = modbv(0)[AW + 1:]
                rpn[:] = rp
                if iss:
                    rpn[:] = rp + 1
                dn = modbv(0)[AW + 1:]
                dn[:] = wsn - rpn
                free.next = DEPTH - dn
                v1.next = iss
                v2.next = v1
                if iss:
                    rp.next = rp + 1
                if v2:
                    if s2:
                        fq[fw[2:0]].next = oq1
                    else:
                        fq[fw[2:0]].next = oq0
                    fw.next = fw + 1
                if take:
                    fr.next = fr + 1
                if iss and not take:
                    cnt.next = cnt + 1
                elif take and not iss:
                    cnt.next = cnt - 1

        @always_comb
        def c_flags_p():
            m_axis_tdata.next = fq[fr[2:0]]
            m_axis_tvalid.next = fw != fr
            empty.next = wp == rp and cnt == 0

        return addr, write0, write1, c_iss, c_rd0, c_rd1, c_oq, c_pipe, c_flags_p

    if PIPE:
        PF = 4
        rq, oq = Signal(intbv(0)[len(wdata):]), Signal(intbv(0)[len(wdata):])
        v1, v2 = Signal(bool(0)), Signal(bool(0))
        cnt = Signal(intbv(0, min=0, max=PF + 1))      # read and not yet taken
        fq = [Signal(intbv(0)[len(wdata):]) for _ in range(PF)]
        fw, fr = Signal(modbv(0)[3:]), Signal(modbv(0)[3:])
        iss, take = Signal(bool(0)), Signal(bool(0))

        @always_comb
        def c_iss():
            iss.next = wp != rp and cnt < PF
            take.next = fw != fr and m_axis_tready

        @always(clk.posedge)
        def c_rd():
            if iss:
                rq.next = mem[ra]

        @always(clk.posedge)
        def c_oq():
            oq.next = rq

        @always(clk.posedge)
        def c_pipe():
            if rst:
                wp.next = 0
                ws.next = 0
                rp.next = 0
                v1.next = 0
                v2.next = 0
                cnt.next = 0
                fw.next = 0
                fr.next = 0
            else:
                if rollback:
                    ws.next = wp
                elif we:
                    ws.next = ws + 1
                if commit:
                    wp.next = ws
                v1.next = iss
                v2.next = v1
                if iss:
                    rp.next = rp + 1
                if v2:
                    fq[fw[2:0]].next = oq
                    fw.next = fw + 1
                if take:
                    fr.next = fr + 1
                if iss and not take:
                    cnt.next = cnt + 1
                elif take and not iss:
                    cnt.next = cnt - 1

        @always_comb
        def c_flags_p():
            d = modbv(0)[AW + 1:]
            d[:] = ws - rp
            free.next = DEPTH - d
            m_axis_tdata.next = fq[fr[2:0]]
            m_axis_tvalid.next = fw != fr
            empty.next = wp == rp and cnt == 0

        return addr, write, c_iss, c_rd, c_oq, c_pipe, c_flags_p

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

