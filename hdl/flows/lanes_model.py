"""The reference model of the N-lane decoder (docs/CORE.md section 6), and the host side: the lanes' input streams.

* :func:`lane_packets` -- stripe ``i`` of a stream goes to lane ``i mod LANES`` (the buffer layout the host
  builds: one packet list per lane).
* :func:`container_lanes` -- the same for a container's tensor or stream (:class:`lutzip.codec.container.Container`).
* :func:`expected_beats` -- the beats ``(tdata, keep, last, user)`` and the error reports
  ``(lane, code, stripe)`` the N-lane decoder gives for a stream of stripes after table writes: the single core's
  rows (:func:`lutzip.hdl.flows.model.expected_outputs`) cut into beats of at most ``LANES`` words, a stripe's
  last beat short, word 0 in the low bits, unused words 0.
* :func:`beats_words` -- the words of a beat list, in order (what a single core outputs).
"""
from __future__ import annotations

import numpy as np

from lutzip.errors import LutzError, UnsupportedError
from lutzip.hdl.core.ports import LANE_CHOICES
from lutzip.hdl.flows.model import stripe_output, tables_from_ops


def check_lanes(lanes) -> int:
    """``lanes`` as an int, or an :class:`UnsupportedError` naming it."""
    if isinstance(lanes, bool) or lanes not in LANE_CHOICES:
        raise UnsupportedError(f"LANES={lanes!r}: choose from {', '.join(map(str, LANE_CHOICES))}")
    return int(lanes)


def assign_lanes(stripes, lanes: int, assign: str = "load", first: int = 0, loads=None, mirror: int = 0):
    """The lane of each stripe: ``(lane list, loads after them)``.

    ``assign="rr"``: stripe ``i`` goes to lane ``(first + i) mod lanes``. ``assign="load"``: each stripe goes to the
    lane with the least load (``loads``: the lanes' loads so far, default all 0 = after reset), the lowest such lane
    on a tie, and adds its weight (:func:`lutzip.hdl.lanes.decoder_lane.stripe_weight` of its header word) to that
    lane's load -- the rule the decoder's output follows (docs/CORE.md section 6). ``mirror``: the decoder's
    ``MIRROR`` (1: a row stripe's header weighs its ``n + 1`` too).
    """
    from lutzip.hdl.lanes.decoder_lane import stripe_weight
    n = check_lanes(lanes)
    if assign == "rr":
        return [(first + i) % n for i in range(len(stripes))], None
    if assign != "load":
        raise UnsupportedError(f"assign={assign!r}: choose from rr, load")
    w = list(loads) if loads is not None else [0] * n
    out = []
    for s in stripes:
        j = min(range(n), key=lambda k: (w[k], k))
        out.append(j)
        w[j] += stripe_weight(int(s[0]) if len(s) else 0, mirror)
    return out, w


def lane_packets(stripes, lanes: int, first: int = 0, assign: str = "load", loads=None, mirror: int = 0) -> list:
    """The packets of each lane: stripe ``i`` of ``stripes`` goes to lane ``(first + i) mod lanes``
    (``assign="rr"``) or as :func:`assign_lanes` says (``assign="load"``, from ``loads``).

    Parameters
    ----------
    stripes : list of sequences of int
        The stream's packets in order (one stripe each, header first).
    lanes : int
        The number of lanes.
    first : int
        The lane of the first stripe (the stream's stripe count so far, for a stream that continues another).

    Returns
    -------
    list of list of numpy.ndarray
        ``lanes`` lists of ``uint32`` packets.
    """
    n = check_lanes(lanes)
    out = [[] for _ in range(n)]
    for s, j in zip(stripes, assign_lanes(stripes, n, assign, first, loads, mirror)[0]):
        out[j].append(np.asarray(s, np.uint32))
    return out


def container_lanes(container, entry, lanes: int, first: int = 0, assign: str = "load", loads=None,
                    mirror: int = 0) -> list:
    """The lanes' packets for a container's tensor or stream ``entry`` (:meth:`Container.stripes` split by
    :func:`lane_packets`)."""
    return lane_packets(list(container.stripes(entry)), lanes, first, assign, loads, mirror)


def expected_beats(stripes, ops, lanes: int, L: int = 8, LUT3_DEPTH: int = 4096, W: int = 16, assign: str = "load",
                   STATES: int = 1, MIRROR: int = 0, core_rows=None):
    """What the N-lane decoder outputs for ``stripes`` (the stream, in order) after the table writes ``ops``.

    ``core_rows``: the single core's output rows ``(data, last, user)`` for the stream (one ``last`` per stripe),
    given instead of the plain-stripe model (``MIRROR=1`` streams: the row stages' model or the software decoder's
    words); they are cut into beats the same way.

    Returns
    -------
    beats : numpy.ndarray
        ``(n, 4)`` object rows ``(tdata, keep, last, user)``: ``tdata`` the ``lanes * W``-bit beat as a Python
        int (word 0 in the low bits, words from ``keep`` up 0), ``last`` on a stripe's final beat, ``user``
        when that beat ends with an error marker.
    errors : numpy.ndarray
        ``(m, 3)`` rows ``(lane, code, stripe)``: each error marker's lane, code and stripe index.
    """
    n = check_lanes(lanes)
    if not stripes:
        raise LutzError("no stripes")
    lane_of = assign_lanes(stripes, n, assign, mirror=MIRROR)[0]
    if core_rows is None:
        if MIRROR and any(len(s) and int(s[0]) >> 16 == 0x4C5B for s in stripes):
            raise LutzError("row stripes: give the single core's rows (core_rows)")
        tables = tables_from_ops(ops, L, LUT3_DEPTH, W, STATES)
        outs = [stripe_output(s, tables) for s in stripes]
    else:
        outs = _split_rows(core_rows, len(stripes))
    beats, errors = [], []
    for i, s in enumerate(stripes):
        words, code = outs[i]
        seq = [int(w) for w in words] + ([code] if code else [])
        if code:
            errors.append((lane_of[i], code, i))
        for b in range(0, len(seq), n):
            chunk = seq[b:b + n]
            d = 0
            for j, w in enumerate(chunk):
                d |= w << (W * j)
            end = b + n >= len(seq)
            beats.append((d, len(chunk), int(end), int(end and bool(code))))
    return (np.array(beats, dtype=object).reshape(-1, 4),
            np.array(errors, np.int64).reshape(-1, 3))


def _split_rows(rows, n_stripes: int) -> list:
    """Single-core rows ``(data, last, user)`` as one ``(words, error code or 0)`` per stripe."""
    out, cur = [], []
    for r in rows:
        d, last, user = (int(x) for x in r[:3])
        if user:
            out.append((cur, d & 15))
            cur = []
            continue
        cur.append(d)
        if last:
            out.append((cur, 0))
            cur = []
    if cur or len(out) != n_stripes:
        raise LutzError(f"core_rows: {len(out)} stripes ended by last, {n_stripes} stripes given")
    return out


def beats_words(beats, lanes: int, W: int = 16) -> np.ndarray:
    """The words of ``beats`` (rows ``(tdata, keep, ...)``) in stream order."""
    mask = (1 << W) - 1
    out = []
    for r in beats:
        d, k = int(r[0]), int(r[1])
        out += [(d >> (W * j)) & mask for j in range(k)]
    return np.array(out, np.int64)
