"""The ring side of a replay unit: the handshake of the command ring's entries (the replay entries taken here, the
others passed to the table loader) and the load entries (docs/PROTOCOL.md, section 6): one block shared by
:func:`lutzip.firmware.engine.replay.replay_unit` and :func:`lutzip.firmware.engine.replay_lanes.replay_lanes`."""
from myhdl import always, always_comb, block


@block
def replay_load(clk, rst, s_axis_ring_tdata, s_axis_ring_tvalid, s_axis_ring_tready, m_axis_ring_tvalid,
                m_axis_ring_tready, tag, rp_entry, idle, hold, start_c, phase, we, wa, wd, n_m1, k_pass, sent, active,
                s_axis_ld_tvalid, m_axis_core_tready, s_axis_ld_tlast):
    """The ring's handshake, the run's entry, the buffer's write port and the run's parameters.

    Parameters
    ----------
    clk, rst : Signal
        Clock, synchronous reset.
    s_axis_ring_tdata, s_axis_ring_tvalid, s_axis_ring_tready : Signal
        Ring entries (``replay[34] | tag[33:32] | data``).
    m_axis_ring_tvalid, m_axis_ring_tready : Signal
        The other entries' valid and ready (the table loader's side).
    tag, rp_entry : Signal
        The entry's tag and replay bit.
    idle : Signal
        The decoder is idle (a run may start).
    hold : Signal
        The ring waits for a run (a run is active, or about to start).
    start_c : Signal
        Out: the run entry is taken in this cycle.
    phase : Signal
        The run's word count has been read (the next run entry is its passes).
    we, wa, wd : Signal
        The buffer's write port (``wa``'s width is the buffer's address bits).
    n_m1, k_pass : Signal
        The run's words per pass - 1, its passes.
    sent : Signal
        Stripes the table loader gave the core outside runs (with the result path's count: the decoder is idle).
    active : Signal
        A run is in progress.
    s_axis_ld_tvalid, m_axis_core_tready, s_axis_ld_tlast : Signal
        The table loader's stream to the core.
    """
    AW = len(wa)

    @always_comb
    def c_ring_hs():
        m_axis_ring_tvalid.next = s_axis_ring_tvalid and not rp_entry and not hold
        if hold:
            s_axis_ring_tready.next = 0
        elif not rp_entry:
            s_axis_ring_tready.next = m_axis_ring_tready
        elif tag == 3 and phase:
            s_axis_ring_tready.next = idle
        else:
            s_axis_ring_tready.next = 1
        start_c.next = s_axis_ring_tvalid and rp_entry and tag == 3 and phase and idle and not hold

    @always(clk.posedge)
    def c_load():
        """Load entries: the address, then words (the RAM write is one cycle later, from we/wd)."""
        we.next = 0
        if rst:
            wa.next = 0
            phase.next = 0
            sent.next = 0
        else:
            if we:
                wa.next = wa + 1
            if s_axis_ring_tvalid and rp_entry and not hold:
                if tag == 2:
                    wa.next = s_axis_ring_tdata[AW:0]
                    phase.next = 0
                elif tag[1] == 0:
                    we.next = 1
                    wd.next[32] = tag[0]
                    wd.next[32:0] = s_axis_ring_tdata[32:0]
                elif not phase:
                    n_m1.next = s_axis_ring_tdata[AW:0] - 1
                    phase.next = 1
                elif idle:
                    k_pass.next = s_axis_ring_tdata[32:0]
                    phase.next = 0
            if not active and s_axis_ld_tvalid and m_axis_core_tready and s_axis_ld_tlast:
                sent.next = sent + 1

    return c_ring_hs, c_load
