"""Performance counters of the protocol engine (docs/PROTOCOL.md, COUNTERS) and their read port.

The counters, their order and their names are :data:`lutzip.link.protocol.COUNTER_NAMES` (the host parses
COUNTERS frames with the same list). This file is the one place that defines what each counter counts: to add
one, add its name to ``COUNTER_NAMES``, its register and increment below, and its line in ``read``; the
response framer sends ``len(COUNTER_NAMES)`` counters through :class:`CounterPort` without naming any.
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv

from lutzip.link.protocol import COUNTER_NAMES

#: Width of a counter in a COUNTERS frame (little-endian, 8 bytes each).
WIRE_BITS = 64


class CounterPort:
    """Read port of the counter bank, as one MyHDL interface object (the bank drives ``first``/``nxt``).

    Attributes
    ----------
    idx : Signal
        Driven by the reader: the counter it is sending, 0 .. ``len(COUNTER_NAMES) - 1``.
    first : Signal
        Counter 0 (``WIRE_BITS`` wide), loaded when a COUNTERS frame starts.
    nxt : Signal
        The counter after ``idx`` (the last counter for ``idx >= len(COUNTER_NAMES) - 2``).
    """

    def __init__(self):
        self.idx = Signal(intbv(0)[len(COUNTER_NAMES).bit_length():])
        self.first = Signal(intbv(0)[WIRE_BITS:])
        self.nxt = Signal(intbv(0)[WIRE_BITS:])


@block
def perf_counters(clk, rst, core_busy, core_s_axis_tvalid, core_s_axis_tready, core_m_axis_tvalid,
                  core_m_axis_tready, core_m_axis_tlast, core_m_axis_tuser, link_err, rx_hs, tx_hs, rd, BITS=40,
                  EVENT_BITS=32, EVENT_REG=False):
    """Counters of the decoder core's streams and of the link, cleared by ``rst``.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset (clears every counter).
    core_busy : Signal
        The decoder core's ``busy``.
    core_s_axis_tvalid, core_s_axis_tready : Signal
        Taps on the core's input stream (input stalls: the core waits for a word while busy).
    core_m_axis_tvalid, core_m_axis_tready, core_m_axis_tlast, core_m_axis_tuser : Signal
        Taps on the core's output stream (words, stripes, decode errors, output stalls).
    link_err, rx_hs, tx_hs : Signal
        One-cycle pulses: a link error, a byte received, a byte sent.
    rd : CounterPort
        The read port (COUNTERS frames).
    BITS : int
        Counter width inside (40: 3 hours at 100 MHz); ``WIRE_BITS`` on the wire.
    EVENT_BITS : int
        Width of the counters of rare events (``stripes``, ``link_errors``, ``decode_errors``: 4 * 10**9
        before they wrap; saves logic on the small iCE40).
    EVENT_REG : bool
        The decoder core's taps (busy, input stall, output stall, word, stripe, decode error) pass through a
        flip-flop each before they count: every core counter counts one cycle later, the same totals once the
        core is idle -- which it is whenever a COUNTERS frame reads them (the barrier waits for it), so the
        frames carry the same values. The link's taps (``rx_hs``, ``tx_hs``, ``link_err``; bytes move while a
        COUNTERS frame is read) count as without. So the core's stream handshakes do not fan out to the
        counters' enables in their own cycle (``proto_engine``'s ``RESULT_REG``: the two-domain ULX3S build at
        100 MHz). False converts to the HDL of before.
    """
    assert len(COUNTER_NAMES) == 10, "perf_counters defines 10 counters; COUNTER_NAMES lists " \
        f"{len(COUNTER_NAMES)}: add the new counter's register, increment and read line here"
    k_cycles, k_busy, k_sin, k_sout, k_words, k_rx, k_tx = [Signal(modbv(0)[BITS:]) for _ in range(7)]
    k_stripes, k_lerr, k_derr = [Signal(modbv(0)[EVENT_BITS:]) for _ in range(3)]
    c_busy, c_stall_in, c_stall_out, c_words, c_stripes, c_link_err, c_dec_err, c_rx, c_tx = \
        [Signal(intbv(0)[WIRE_BITS:]) for _ in range(9)]
    c_cycles = rd.first
    idx, nxt = rd.idx, rd.nxt

    @always_comb
    def outs():
        c_cycles.next = k_cycles
        c_busy.next = k_busy
        c_stall_in.next = k_sin
        c_stall_out.next = k_sout
        c_words.next = k_words
        c_stripes.next = k_stripes
        c_link_err.next = k_lerr
        c_dec_err.next = k_derr
        c_rx.next = k_rx
        c_tx.next = k_tx

    @always_comb
    def read():
        """The read port's ``nxt``, in COUNTER_NAMES order (``first`` is ``c_cycles``)."""
        if idx == 0:
            nxt.next = c_busy
        elif idx == 1:
            nxt.next = c_stall_in
        elif idx == 2:
            nxt.next = c_stall_out
        elif idx == 3:
            nxt.next = c_words
        elif idx == 4:
            nxt.next = c_stripes
        elif idx == 5:
            nxt.next = c_link_err
        elif idx == 6:
            nxt.next = c_dec_err
        elif idx == 7:
            nxt.next = c_rx
        else:
            nxt.next = c_tx

    if EVENT_REG:
        e_busy, e_sin, e_sout, e_words, e_stripes, e_derr = [Signal(bool(0)) for _ in range(6)]

        @always(clk.posedge)
        def c_events():
            if rst:
                e_busy.next = 0
                e_sin.next = 0
                e_sout.next = 0
                e_words.next = 0
                e_stripes.next = 0
                e_derr.next = 0
            else:
                e_busy.next = core_busy
                e_sin.next = core_busy and core_s_axis_tready and not core_s_axis_tvalid
                e_sout.next = core_m_axis_tvalid and not core_m_axis_tready
                e_words.next = core_m_axis_tvalid and core_m_axis_tready and not core_m_axis_tuser
                e_stripes.next = core_m_axis_tvalid and core_m_axis_tready and core_m_axis_tlast
                e_derr.next = core_m_axis_tvalid and core_m_axis_tready and core_m_axis_tuser

        @always(clk.posedge)
        def count_r():
            if rst:
                k_cycles.next = 0
                k_busy.next = 0
                k_sin.next = 0
                k_sout.next = 0
                k_words.next = 0
                k_stripes.next = 0
                k_lerr.next = 0
                k_derr.next = 0
                k_rx.next = 0
                k_tx.next = 0
            else:
                k_cycles.next = k_cycles + 1
                if e_busy:
                    k_busy.next = k_busy + 1
                if e_sin:
                    k_sin.next = k_sin + 1
                if e_sout:
                    k_sout.next = k_sout + 1
                if e_words:
                    k_words.next = k_words + 1
                if e_stripes:
                    k_stripes.next = k_stripes + 1
                if e_derr:
                    k_derr.next = k_derr + 1
                if link_err:
                    k_lerr.next = k_lerr + 1
                if rx_hs:
                    k_rx.next = k_rx + 1
                if tx_hs:
                    k_tx.next = k_tx + 1

        return outs, read, c_events, count_r

    @always(clk.posedge)
    def count():
        if rst:
            k_cycles.next = 0
            k_busy.next = 0
            k_sin.next = 0
            k_sout.next = 0
            k_words.next = 0
            k_stripes.next = 0
            k_lerr.next = 0
            k_derr.next = 0
            k_rx.next = 0
            k_tx.next = 0
        else:
            k_cycles.next = k_cycles + 1
            if core_busy:
                k_busy.next = k_busy + 1
                if core_s_axis_tready and not core_s_axis_tvalid:
                    k_sin.next = k_sin + 1
            if core_m_axis_tvalid and not core_m_axis_tready:
                k_sout.next = k_sout + 1
            if core_m_axis_tvalid and core_m_axis_tready:
                if core_m_axis_tuser:
                    k_derr.next = k_derr + 1
                else:
                    k_words.next = k_words + 1
                if core_m_axis_tlast:
                    k_stripes.next = k_stripes + 1
            if link_err:
                k_lerr.next = k_lerr + 1
            if rx_hs:
                k_rx.next = k_rx + 1
            if tx_hs:
                k_tx.next = k_tx + 1

    return outs, read, count
