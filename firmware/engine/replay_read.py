"""The read port of a replay run's values (REPLAY_DONE, :data:`lutzip.link.protocol.REPLAY_NAMES` order): one block
shared by :func:`lutzip.firmware.engine.replay.replay_unit` and
:func:`lutzip.firmware.engine.replay_lanes.replay_lanes`, which count the same eleven values."""
from myhdl import Signal, always_comb, block, intbv


@block
def replay_read(rd, k_cycles, k_busy, k_sin, k_words, k_stripes, k_derr, k_passes, k_bad, crc_first, crc_last,
                first_err):
    """``rd.first`` is ``cycles``, ``rd.nxt`` the value after ``rd.idx``.

    Parameters
    ----------
    rd : lutzip.firmware.engine.perf_counters.CounterPort
        The read port.
    k_cycles, k_busy, k_sin, k_words, k_stripes, k_derr, k_passes, k_bad, crc_first, crc_last, first_err : Signal
        The run's values (:data:`lutzip.link.protocol.REPLAY_NAMES`).
    """
    v1, v2, v3, v4, v5, v6, v7, v8, v9, v10 = [Signal(intbv(0)[64:]) for _ in range(10)]
    idx, nxt = rd.idx, rd.nxt

    @always_comb
    def c_vals():
        rd.first.next = k_cycles
        v1.next = k_busy
        v2.next = k_sin
        v3.next = k_words
        v4.next = k_stripes
        v5.next = k_derr
        v6.next = k_passes
        v7.next = k_bad
        v8.next = crc_first
        v9.next = crc_last
        v10.next = first_err

    @always_comb
    def c_read():
        """``nxt``: the value after ``idx`` (REPLAY_NAMES order; ``first`` is ``cycles``)."""
        if idx == 0:
            nxt.next = v1
        elif idx == 1:
            nxt.next = v2
        elif idx == 2:
            nxt.next = v3
        elif idx == 3:
            nxt.next = v4
        elif idx == 4:
            nxt.next = v5
        elif idx == 5:
            nxt.next = v6
        elif idx == 6:
            nxt.next = v7
        elif idx == 7:
            nxt.next = v8
        elif idx == 8:
            nxt.next = v9
        else:
            nxt.next = v10

    return c_vals, c_read
