"""Performance counters of the protocol engine (docs/PROTOCOL.md, COUNTERS)."""
from myhdl import Signal, always, always_comb, block, modbv


@block
def perf_counters(clk, rst, core_busy, s_tvalid, s_tready, m_tvalid, m_tready, m_tlast, m_tuser,
                  link_err, rx_hs, tx_hs,
                  c_cycles, c_busy, c_stall_in, c_stall_out, c_words, c_stripes, c_link_err, c_dec_err,
                  c_rx, c_tx, BITS=40):
    """Counters, cleared by ``rst``; ``BITS`` wide inside (40: 3 hours at 100 MHz), 64 on the wire."""

    k_cycles, k_busy, k_sin, k_sout, k_words, k_stripes, k_lerr, k_derr, k_rx, k_tx = \
        [Signal(modbv(0)[BITS:]) for _ in range(10)]

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
                if s_tready and not s_tvalid:
                    k_sin.next = k_sin + 1
            if m_tvalid and not m_tready:
                k_sout.next = k_sout + 1
            if m_tvalid and m_tready:
                if m_tuser:
                    k_derr.next = k_derr + 1
                else:
                    k_words.next = k_words + 1
                if m_tlast:
                    k_stripes.next = k_stripes + 1
            if link_err:
                k_lerr.next = k_lerr + 1
            if rx_hs:
                k_rx.next = k_rx + 1
            if tx_hs:
                k_tx.next = k_tx + 1

    return outs, count
