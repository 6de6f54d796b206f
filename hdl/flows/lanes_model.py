"""The reference model of the N-lane decoder (docs/CORE.md section 6), and the host side: the lanes' input streams.

* :func:`lane_packets` -- stripe ``i`` of a stream goes to lane ``i mod LANES`` (the buffer layout the host
  builds: one packet list per lane).
* :func:`container_lanes` -- the same for a container's tensor or stream (:class:`lutzip.codec.container.Container`).
* :func:`expected_beats` -- the beats ``(tdata, keep, last, user)`` and the error reports
  ``(lane, code, stripe)`` the N-lane decoder gives for a stream of stripes after table writes: the single core's
  rows (:func:`lutzip.hdl.flows.model.expected_outputs`) cut into beats of at most ``LANES`` words, a stripe's
  last beat short, word 0 in the low bits, unused words 0.
* :func:`beats_words` -- the words of a beat list, in order (what a single core outputs).
* :func:`rate_model` -- the cycles from the first to the last beat of a stream of stripes (decoded words per
  stripe), every lane decoding one word per cycle and the output one beat per cycle (:func:`stripe_cost`: a
  stripe's output words and load weight, row stripes too); :func:`host_stripe_len` -- the stripe length the host
  cuts for ``LANES`` lanes (why: :func:`rate_model`'s docstring), :func:`host_compress_kw` -- the encoder's keywords
  for such a file.
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


def stripe_cost(stripe, mirror: int = 1):
    """``(output words, load weight)`` of a good stripe (header first): a plain stripe's ``n`` twice; a row stripe's
    ``R x N`` output words (its descriptor word) and its weight, its coded words (``stripe_weight`` with
    ``mirror``): what :func:`rate_model` takes as ``stripe_words`` and ``weights``."""
    from lutzip.hdl.lanes.decoder_lane import stripe_weight
    h = int(stripe[0])
    if h >> 16 == 0x4C5B and len(stripe) > 1:
        d = int(stripe[1])
        return ((d >> 16 & 15) + 1) * ((d & 0xFFFF) + 1), stripe_weight(h, mirror)
    return (h & 0xFFFF) + 1, (h & 0xFFFF) + 1


#: the stripe length (words) the host cuts for an N-lane decoder (:func:`host_stripe_len`)
HOST_STRIPE = {1: 4096, 2: 4096, 4: 2048, 8: 1024}
#: the shortest stream the host's cut keeps at 0.99 words per cycle per lane (issue 16: >= 1 M weights)
HOST_MIN_WORDS = 1_000_000


def host_stripe_len(lanes: int) -> int:
    """The stripe length the host cuts a stream into for ``lanes`` lanes: 4096 words for 1 and 2 lanes, 2048 for 4,
    1024 for 8 (``lutzip hdl bench --lanes N``; files: :func:`host_compress_kw`): the longest power of two ``S``
    <= 4096 whose one-time wait ``(N - 1) / N x S`` (below) costs at most 1 % of the ``M / N`` cycles of a stream
    of ``M`` = :data:`HOST_MIN_WORDS` words, ``(N - 1) S <= M / 100`` (4096 on 4 lanes: 1.2 % at 1 M words; the
    row streams of ``lutzip hdl bench --lanes 4 --mirror``, 1.06 M words, gave 0.98852 per lane, 0.99423 at 2048).

    Why (:func:`rate_model`): the output drains a stripe at ``N`` words per cycle while its lane decodes one, so
    when the output reaches a stripe of ``S`` words its lane must be ``(N - 1) / N`` of it ahead. The lanes build
    that lead only while the output waits, and it stays built (every lane decodes all the time), so a stream pays
    about ``(N - 1) / N x S`` cycles once when the lanes start in step: about ``(N - 1) S / M`` of the ``M / N``
    cycles of ``M`` words (at least half of it whatever the stripes' phases; uneven first stripes only move the
    wait to the first long stripe). 8 lanes at 4096 words: 3584 cycles, 2.4 % of a 1.17 M-word stream; at 1024:
    896 cycles, 0.6 %.
    """
    return HOST_STRIPE[check_lanes(lanes)]


def host_compress_kw(lanes: int) -> dict:
    """The :func:`lutzip.codec.arrays.compress` keywords of a file cut for ``lanes`` lanes: ``stripe_len`` =
    :func:`host_stripe_len` and, with two or more lanes, ``min_stripes=0`` -- every stream in stripes of that many
    words. (By default the encoder gives a stream of 8-bit words of its own stripes of twice ``stripe_len`` words,
    ``arrays.stream_stripe_len``: an int8 row stream cut at 2048 words came out in 4096-word stripes and kept the
    4096-word wait, 0.98852 per lane on 4 lanes.) One lane: the encoder's defaults."""
    n = check_lanes(lanes)
    return {} if n == 1 else {"stripe_len": host_stripe_len(n), "min_stripes": 0}


def rate_model(stripe_words, lanes: int, rows: int = 0, assign: str = "load", latency: int = 6, weights=None):
    """Cycles of the N-lane decoder's output for stripes of ``stripe_words`` decoded words each, in stream order.

    ``stripe_words`` are the words each lane outputs for the stripe: ``n`` of a plain stripe, ``R x N`` of a row
    stripe (its replays included, docs/CORE.md 6.8). ``weights``: what ``ASSIGN="load"`` counts for each stripe
    (:func:`lutzip.hdl.lanes.decoder_lane.stripe_weight` of its header word; :func:`stripe_cost` gives both);
    default ``stripe_words`` (plain stripes: the same). A row stripe weighs its coded words (header bits 15..0
    plus 1), not its output words.

    The model: each lane decodes one word per cycle from cycle 0 (input always valid), packs rows of ``lanes``
    words (a stripe's last row short) into its buffer of ``rows`` rows (it stalls while ``rows - 2`` are held:
    the credit of :mod:`lutzip.hdl.lanes.decoder_lane`), a row can leave ``latency`` cycles after it is packed,
    and the output takes one row per cycle, the rows of each stripe from its lane (:func:`assign_lanes`) in stream
    order. The scheduler's cycles per stripe (``1 + log2(LANES)``) are not modelled (they matter only for runs of
    stripes of fewer beats).

    Returns ``{"cycles", "words", "last_beat", "per_lane", "wait"}``: ``cycles`` from the first beat to the last,
    ``per_lane`` = ``(words - words of the last beat) / cycles / lanes`` (the bench figure,
    :mod:`lutzip.hdl.flows.lanes_bench`), ``wait`` = ``{stripe index: cycles the output waited on it}``.
    On ppocr-rec (1 168 484 words, 4096-word stripes, ``ROWS`` default) it gives Verilator's 295 066 cycles on 4
    lanes and 149 463 on 8 (docs/log/2026-12-lanes.md, 2026-12-07 late night).
    """
    from collections import deque
    n = check_lanes(lanes)
    rows = rows or (16 if n == 1 else {2: 2048, 4: 2048, 8: 1024}[n])
    ns = [int(x) for x in stripe_words]
    if not ns or min(ns) < 1:
        raise LutzError("rate_model: stripes of at least one word")
    if weights is None:
        lane_of = assign_lanes([[0x4C5A0000 | (k - 1)] for k in ns], n, assign)[0]
    else:
        ws = [int(x) for x in weights]
        if len(ws) != len(ns) or min(ws) < 1 or max(ws) > 65536:
            raise LutzError("rate_model: one weight of 1 .. 65536 per stripe")
        lane_of = assign_lanes([[0x4C5A0000 | (k - 1)] for k in ws], n, assign)[0]
    todo = [deque() for _ in range(n)]
    for i, j in enumerate(lane_of):
        todo[j].append(i)
    cur, done, cnt = [None] * n, [0] * n, [0] * n
    buf = [deque() for _ in range(n)]
    wait = {}
    t, out, first, last, words, last_k = 0, 0, None, None, 0, 0
    while out < len(ns):
        j = lane_of[out]
        if buf[j] and buf[j][0][0] <= t:
            _, is_last, k = buf[j].popleft()
            first = t if first is None else first
            last, words, last_k = t, words + k, k
            out += is_last
        elif first is not None:
            wait[out] = wait.get(out, 0) + 1
        for l in range(n):
            if cur[l] is None:
                if not todo[l]:
                    continue
                cur[l], done[l], cnt[l] = todo[l].popleft(), 0, 0
            if len(buf[l]) >= rows - 2:
                continue
            done[l] += 1
            cnt[l] += 1
            end = done[l] == ns[cur[l]]
            if end or cnt[l] == n:
                buf[l].append((t + latency, end, cnt[l]))
                cnt[l] = 0
            if end:
                cur[l] = None
        t += 1
    span = last - first
    return {"cycles": span, "words": words, "last_beat": last_k,
            "per_lane": (words - last_k) / span / n if span else float("nan"), "wait": wait}
