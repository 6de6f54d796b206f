"""The back of the pipelined replay feed (``replay_unit``'s ``PIPE``, each lane's
:func:`lutzip.firmware.engine.replay_feed.replay_feed`): the banks' read data through two registered OR stages into
a small FIFO, the word at its head out, with the counted prefetch that issues the read addresses. One block shared by
:func:`lutzip.firmware.engine.replay.replay_unit` and :func:`lutzip.firmware.engine.replay_feed.replay_feed` (each
keeps its banks and its use of the FIFO's head)."""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv


@block
def replay_pipe(clk, rst, start, active, n_m1, k_pass, raddr, rq, reading, cnt, fo, ov, m_axis_core_tready,
                DEPTH=8, GROUP=8):
    """Issue a read address whenever fewer than ``DEPTH`` words are read and not yet taken; six stages from the
    address to the FIFO: the issue (``pv0`` / ``pl0``: a read, of its pass's last word) beside the banks' read
    registers, output registers and bank flip-flops (``rq``), then an OR per group of banks, then an OR of the
    groups, then the FIFO.

    Parameters
    ----------
    clk, rst : Signal
        Clock, synchronous reset (stops the reads, empties the FIFO).
    start, active : Signal
        The run starts (the reads start from word 0), the run is in progress.
    n_m1, k_pass : Signal
        Words per pass - 1 (the last word's address), passes.
    raddr : Signal
        Out: the banks' read address (a flip-flop).
    rq : list of Signal
        The banks' outputs (33 bits: a stripe-end bit and 32 data bits; 0 unless the bank was addressed).
    reading : Signal
        Out: words of the run are still to be read.
    cnt : Signal
        Out: words read and not yet taken (0 .. ``DEPTH``).
    fo : Signal
        Out: the word at the FIFO's head (34 bits: a pass's last word above the 33 of the word).
    ov, m_axis_core_tready : Signal
        Out: the FIFO is not empty; in: its head is taken.
    DEPTH, GROUP : int
        The FIFO's entries (:data:`lutzip.firmware.engine.replay.PIPE_FIFO`), banks per OR group (``len(rq)`` a
        multiple of it).
    """
    PIPE_FIFO = DEPTH
    NG = len(rq) // GROUP
    FB = (DEPTH - 1).bit_length()
    AW = len(n_m1)
    ra = Signal(intbv(0)[AW:])
    p_read = Signal(intbv(0)[32:])          # passes read from the buffer
    rp = Signal(modbv(0)[FB + 1:])
    g3 = [Signal(intbv(0)[33:]) for _ in range(NG)]
    m4 = Signal(intbv(0)[33:])
    pv0, pv1, pv2, pv3, pv4, pv5 = [Signal(bool(0)) for _ in range(6)]
    pl0, pl1, pl2, pl3, pl4, pl5 = [Signal(bool(0)) for _ in range(6)]
    fq = [Signal(intbv(0)[34:]) for _ in range(DEPTH)]
    wp = Signal(modbv(0)[FB + 1:])

    @always_comb
    def c_fifo_out():
        fo.next = fq[rp[FB:0]]
        ov.next = wp != rp

    @always(clk.posedge)
    def c_feed():
        """Issue: a read address whenever fewer than PIPE_FIFO words are read and not yet taken."""
        pv0.next = 0
        if rst:
            reading.next = 0
            cnt.next = 0
            rp.next = 0
        elif start:
            reading.next = 1
            ra.next = 0
            p_read.next = 0
        elif active:
            iss = bool(reading and cnt < PIPE_FIFO)
            take = bool(ov and m_axis_core_tready)
            if iss:
                raddr.next = ra
                pv0.next = 1
                pl0.next = ra == n_m1
                if ra == n_m1:
                    ra.next = 0
                    p_read.next = p_read + 1
                    if p_read + 1 == k_pass:
                        reading.next = 0
                else:
                    ra.next = ra + 1
            if take:
                rp.next = rp + 1
            if iss and not take:
                cnt.next = cnt + 1
            elif take and not iss:
                cnt.next = cnt - 1

    @always(clk.posedge)
    def c_pipe():
        """Address -> RAM read register -> RAM output register -> bank flip-flop (0 unless addressed) -> OR of
        8 banks per group -> OR of the groups (c_mux2) -> FIFO."""
        pv1.next = pv0
        pv2.next = pv1
        pv3.next = pv2
        pv4.next = pv3
        pv5.next = pv4
        pl1.next = pl0
        pl2.next = pl1
        pl3.next = pl2
        pl4.next = pl3
        pl5.next = pl4
        for j in range(NG):
            x = intbv(0)[33:]
            for k in range(GROUP):
                x[:] = x | rq[j * GROUP + k]
            g3[j].next = x
        if rst:
            pv1.next = 0
            pv2.next = 0
            pv3.next = 0
            pv4.next = 0
            pv5.next = 0
            wp.next = 0
        elif pv5:
            fq[wp[FB:0]].next = concat(pl5, m4)
            wp.next = wp + 1

    @always(clk.posedge)
    def c_mux2():
        y = intbv(0)[33:]
        for j in range(NG):
            y[:] = y | g3[j]
        m4.next = y

    return c_fifo_out, c_feed, c_pipe, c_mux2
