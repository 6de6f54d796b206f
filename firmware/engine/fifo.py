"""First-word-fall-through FIFO on a synchronous-read RAM (block RAM on FPGAs)."""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def fifo(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, m_axis_tdata, m_axis_tvalid, m_axis_tready,
         DEPTH=512, FULL_REG=False, PIPE=False):
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
    PIPE : bool
        The RAM read goes through one more flip-flop that only registers it (the board flow makes it the block
        RAM's output register: no logic sees the RAM's slow clock-to-out), then into a 4-entry FIFO of
        flip-flops, as ``cmd_ring``'s ``PIPE``: a read is issued while fewer than 4 entries are read and not yet
        taken, one per cycle (full rate; a word reaches the output 2 cycles later than without). The full flag
        counts the RAM (entries in the small FIFO have left it), so the FIFO holds up to ``DEPTH + 4`` words.
        No top builds it so at present: with the decoded-word FIFO so under ``proto_engine``'s ``RESULT_REG``
        (2026-12-07 evening; its read was the two-domain ULX3S build's critical path at seed 2) seed 2 rose from
        92.56 to 99.6 MHz but seed 1 fell from 101.15 to 98.1 MHz (docs/log/2026-12-boards.md), so it was turned
        off again; the option stays, tested, for the next attempt. The RAM is called ``mem_p`` (the board flow marks it
        ``no_rw_check``: it is never read at the address written in the same cycle, since a write needs room
        and a read needs an entry). False converts to the HDL of before.
    """
    AW = max(1, (DEPTH - 1).bit_length())
    assert 1 << AW == DEPTH, "DEPTH must be a power of two"
    W = len(s_axis_tdata)
    if PIPE:
        PF = 4
        mem_p = [Signal(intbv(0)[W:]) for _ in range(DEPTH)]
        wp = Signal(modbv(0)[AW + 1:])
        rp = Signal(modbv(0)[AW + 1:])
        full = Signal(bool(0))
        wa = Signal(intbv(0)[AW:])
        ra = Signal(intbv(0)[AW:])
        rq, oq = Signal(intbv(0)[W:]), Signal(intbv(0)[W:])
        v1, v2 = Signal(bool(0)), Signal(bool(0))
        cnt = Signal(intbv(0, min=0, max=PF + 1))      # read and not yet taken
        fq = [Signal(intbv(0)[W:]) for _ in range(PF)]
        fw, fr = Signal(modbv(0)[3:]), Signal(modbv(0)[3:])
        iss, take, we = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))

        @always_comb
        def addr_p():
            wa.next = wp[AW:]
            ra.next = rp[AW:]

        @always_comb
        def c_iss():
            we.next = s_axis_tvalid and not full
            iss.next = wp != rp and cnt < PF
            take.next = fw != fr and m_axis_tready

        @always(clk.posedge)
        def write_p():
            if we:
                mem_p[wa].next = s_axis_tdata

        @always(clk.posedge)
        def c_rd():
            if iss:
                rq.next = mem_p[ra]

        @always(clk.posedge)
        def c_oq():
            oq.next = rq

        @always(clk.posedge)
        def c_pipe():
            if rst:
                wp.next = 0
                rp.next = 0
                v1.next = 0
                v2.next = 0
                cnt.next = 0
                fw.next = 0
                fr.next = 0
            else:
                if we:
                    wp.next = wp + 1
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
        def c_out_p():
            m_axis_tdata.next = fq[fr[2:0]]
            m_axis_tvalid.next = fw != fr
            s_axis_tready.next = not full

        if FULL_REG:
            wn = Signal(modbv(0)[AW:])     # the write address after this one
            one_left = Signal(bool(0))     # DEPTH - 1 entries in the RAM (a write and no read fills it)

            @always_comb
            def c_wn_p():
                wn.next = wa + 1

            @always_comb
            def c_left_p():
                one_left.next = wn == ra

            @always(clk.posedge)
            def c_full_p():
                if rst:
                    full.next = 0
                elif iss:
                    full.next = 0
                elif we and one_left:
                    full.next = 1

            return addr_p, c_iss, write_p, c_rd, c_oq, c_pipe, c_out_p, c_wn_p, c_left_p, c_full_p

        @always_comb
        def c_full_p():
            full.next = (wp[AW] != rp[AW]) and (wp[AW:] == rp[AW:])

        return addr_p, c_iss, write_p, c_rd, c_oq, c_pipe, c_out_p, c_full_p

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
