"""Performance counters of the protocol engine (docs/PROTOCOL.md, COUNTERS)."""
from myhdl import Signal, always, block, modbv


@block
def perf_counters(clk, rst, core_busy, s_tvalid, s_tready, m_tvalid, m_tready, m_tlast, m_tuser,
                  link_err, rx_hs, tx_hs,
                  c_cycles, c_busy, c_stall_in, c_stall_out, c_words, c_stripes, c_link_err, c_dec_err,
                  c_rx, c_tx):
    """64-bit counters, cleared by ``rst``."""

    @always(clk.posedge)
    def count():
        if rst:
            c_cycles.next = 0
            c_busy.next = 0
            c_stall_in.next = 0
            c_stall_out.next = 0
            c_words.next = 0
            c_stripes.next = 0
            c_link_err.next = 0
            c_dec_err.next = 0
            c_rx.next = 0
            c_tx.next = 0
        else:
            c_cycles.next = c_cycles + 1
            if core_busy:
                c_busy.next = c_busy + 1
                if s_tready and not s_tvalid:
                    c_stall_in.next = c_stall_in + 1
            if m_tvalid and not m_tready:
                c_stall_out.next = c_stall_out + 1
            if m_tvalid and m_tready:
                if m_tuser:
                    c_dec_err.next = c_dec_err + 1
                else:
                    c_words.next = c_words + 1
                if m_tlast:
                    c_stripes.next = c_stripes + 1
            if link_err:
                c_link_err.next = c_link_err + 1
            if rx_hs:
                c_rx.next = c_rx + 1
            if tx_hs:
                c_tx.next = c_tx + 1

    return count
