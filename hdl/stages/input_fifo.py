"""The input FIFO of the window front: 4 words, popped 0..3 at once, the three oldest entries visible.

Popping several words lets the window loop take a header and both window words in one cycle at a stripe
start (:mod:`lutzip.hdl.fronts.window.loop_window_ctrl`). One datapath per file, the same behaviour at the ports:

* :mod:`~lutzip.hdl.stages.input_fifo_shift` (adder step, block-RAM LUT1): a shift register; ``h0``, ``h1``,
  ``h2`` come straight from flip-flops.
* :mod:`~lutzip.hdl.stages.input_fifo_ring` (adder step, distributed LUT1): a circular buffer read at ``rp``,
  ``rp + 1``, ``rp + 2``; a pop only moves the read pointer.
* :mod:`~lutzip.hdl.stages.input_fifo_defer` (one-hot step): the shift register with a late pop ``pop_x``
  deferred by a cycle and stripe-start pops decided by the FIFO's own head flags (``take_start``).

They share the fill level (:mod:`~lutzip.hdl.stages.input_fifo_level`) and, for the two shift registers, each
slot's candidate per pop count (:mod:`~lutzip.hdl.stages.input_fifo_slots`).

Common interface
----------------
clk, rst                 clock, synchronous reset (storage is not reset)
wr, wdata[N]             push (caller checks ``count < DEPTH``, i.e. ``s_axis_tready``); any width N
pop[2]                   number of entries to pop this cycle (<= count)
h0, h1, h2 [N]           the oldest, second and third entry (valid when count > 0, 1, 2)
count                    registered number of entries, 0..DEPTH
count_gt                 (optional, out) the same as a registered thermometer code: bit i = count > i
"""
from lutzip.errors import UnsupportedError

DEPTH = 4


def check_ports(name, wdata, h0, h1, h2, count, count_gt=None, after=None):
    """Check the ports every input FIFO has; raises :class:`~lutzip.errors.UnsupportedError` naming the port.

    Parameters
    ----------
    name : str
        The FIFO block's name (for the message).
    wdata, h0, h1, h2 : Signal
        Push data and the three visible heads: one width.
    count : Signal
        Fill level, 0..DEPTH.
    count_gt : Signal, optional
        Fill level as a thermometer code (DEPTH bits).
    after : sequence of Signal, optional
        What ``h0`` becomes for a pop of 0..3 (four signals of the data width).
    """
    n = len(wdata)
    for pname, s in (("h0", h0), ("h1", h1), ("h2", h2)):
        if len(s) != n:
            raise UnsupportedError(f"{name}: {pname} has {len(s)} bits, wdata {n}")
    if count.max is None or count.max < DEPTH + 1:
        raise UnsupportedError(f"{name}: count must hold 0..{DEPTH}")
    if count_gt is not None and len(count_gt) != DEPTH:
        raise UnsupportedError(f"{name}: count_gt has {len(count_gt)} bits, needs {DEPTH}")
    if after is not None and (len(after) != 4 or any(len(s) != n for s in after)):
        raise UnsupportedError(f"{name}: 'after' must be four signals of {n} bits")
