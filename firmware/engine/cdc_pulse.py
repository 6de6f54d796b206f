"""Pulse synchroniser: one-cycle events from one clock domain to another (toggle, synchronise, edge)."""
from myhdl import Signal, always, always_comb, block, concat, intbv


@block
def cdc_pulse(sclk, srst, s_pulse, dclk, drst, d_pulse, s_busy=None):
    """Each one-cycle ``s_pulse`` (``sclk``) becomes one one-cycle ``d_pulse`` (``dclk``).

    Parameters
    ----------
    sclk, srst : Signal
        Source clock and its synchronous reset.
    s_pulse : Signal
        The event (high for one ``sclk`` cycle per event).
    dclk, drst : Signal
        Destination clock and its synchronous reset.
    d_pulse : Signal
        The event in the ``dclk`` domain, three cycles of ``dclk`` after the toggle.
    s_busy : Signal, optional
        Source side: high while an event is still on its way (toggle not yet returned through the
        acknowledgement synchroniser); pulses closer than that may merge. Events at least
        ``3 * T_dclk + 3 * T_sclk`` apart never do.

    Notes
    -----
    A toggle flip-flop in the source domain changes state per event; the destination synchronises it
    through two flip-flops and a third gives the edge. The destination's toggle comes back through two
    source flip-flops (``s_busy``).
    """
    tg = Signal(bool(0))
    dq = Signal(intbv(0)[3:])
    aq = Signal(intbv(0)[2:])
    if s_busy is None:
        s_busy = Signal(bool(0))

    @always(sclk.posedge)
    def c_src():
        if srst:
            tg.next = 0
            aq.next = 0
        else:
            aq.next = concat(aq[0], dq[1])
            if s_pulse:
                tg.next = not tg

    @always(dclk.posedge)
    def c_dst():
        if drst:
            dq.next = 0
        else:
            dq.next = concat(dq[2:0], tg)

    @always_comb
    def c_out():
        d_pulse.next = dq[2] != dq[1]
        s_busy.next = tg != aq[1]

    return c_src, c_dst, c_out
