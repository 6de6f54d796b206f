"""Verify and report: stream a container through any board, check every stripe against the software decoder.

The same checks and the same report for every transport (:class:`lutzip.board.base.BoardBase`): the
expected words come from the reference decoder; each stripe's error code, word count and CRC32 (and in
``full`` mode every decoded word) are compared; a tensor passes when all its stripes do; the first differing
word is named; the board's counters become weights per cycle and weights per second.

Example
-------
>>> from lutzip.board import open_board
>>> from lutzip.board.verify import stream_container, format_report
>>> with open_board(sim=True) as b:                                   # doctest: +SKIP
...     print(format_report(stream_container(b, container, "full")))
"""
from __future__ import annotations

import sys

import numpy as np

from lutzip.codec import container as ct
from lutzip.errors import LutzError
from lutzip.link.protocol import words_crc

VERIFY_MODES = ("crc", "full")


def expected_words(c: ct.Container, t: ct.TensorEntry) -> np.ndarray:
    """The tensor's decoded words from the software reference decoder (flat uint16).

    Parameters
    ----------
    c : Container
        The container holding ``t``.
    t : TensorEntry
        The tensor (for a tensor of a group stream, its own words only).

    Returns
    -------
    numpy.ndarray
        ``t.numel`` uint16 words (8-bit words zero-extended), stripe after stripe.
    """
    from lutzip.codec.arrays import decode_stream, row_args
    from lutzip.codec.bitstream import decode_stripes
    if t.grouped:
        a, b = t.stripe_range()
        lo = t.word_offset - a * int(t.stripe_len)
        return decode_stream(c, t, True, (a, b))[lo:lo + t.numel].astype(np.uint16)
    ct.check_stripe_crcs(c, t)
    # a row stream (format version 6) decodes to its rows' full words, as a MIRROR=1 core outputs them; 8-bit words
    # into uint8 (a negated 8-bit word stays 8 bits, as the core's with config word 1), then zero-extended
    ts = c.tables[t.table]
    out = np.empty(t.numel, np.uint8 if ts.word_bits == 8 else np.uint16)
    return decode_stripes(c.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, ts, t.name, out=out,
                          rows=row_args(c, t)).astype(np.uint16)


def check_verify_memory(tensors, streams, full: bool) -> int:
    """Raise :class:`~lutzip.errors.OutputLimitError` before anything is streamed if verifying would not fit.

    The host holds the reference words of one tensor (or group stream) at a time, 2 bytes a word, and in
    ``full`` mode also every word the board sends back: a small file declaring billions of words (zero runs)
    is refused here from its index, not by a MemoryError after the board has decoded them. Returns the bytes
    needed.
    """
    from lutzip.codec.arrays import available_memory
    from lutzip.errors import OutputLimitError
    one = max([2 * t.numel for t in tensors] + [2 * s.numel for s in streams if len(s.members) > 1] + [0])
    need = one + (2 * sum(s.numel for s in streams) if full else 0)
    limit = available_memory()
    if limit is not None and need > limit:
        raise OutputLimitError(f"verifying this file needs {need} bytes of decoded words on the host "
                               f"({'every word back from the board and ' if full else ''}the largest tensor's "
                               f"reference words), more than the memory available ({limit} bytes)")
    return need


def stream_words(c: ct.Container, s: ct.Stream) -> np.ndarray:
    """A stream's decoded words: its tensors' :func:`expected_words` one after the other (flat uint16)."""
    parts = [expected_words(c, c.tensors[i]) for i in s.members]
    return np.concatenate(parts).astype(np.uint16) if parts else np.zeros(0, np.uint16)


def _job_names(c: ct.Container, streams) -> dict:
    """The name each stream is streamed under: its tensor's name, or ``<group k: n tensors>`` (never a tensor's)."""
    taken = {t.name for t in c.tensors}
    out = {}
    for s in streams:
        if len(s.members) == 1:
            out[s.index] = c.tensors[s.members[0]].name
            continue
        n = f"<group {s.index}: {len(s.members)} tensors>"
        while n in taken:
            n += "'"
        out[s.index] = n
    return out


def _selection(c: ct.Container, names=None, info=None):
    """The tensors to check (non-empty; all, or those in ``names``), the streams that carry them in file order (a
    group stream once), and each stream's job name (:func:`_job_names`); refuses (one line) a stream the board
    (``info``: its :class:`~lutzip.board.base.BoardInfo`) cannot decode."""
    tensors = [t for t in c.tensors if t.numel and (names is None or t.name in names)]
    streams, seen = [], set()
    for t in tensors:
        s = c.stream_of(t)
        if s.index not in seen:
            seen.add(s.index)
            streams.append(s)
    check_hardware_decodable(c, streams, info)
    return tensors, streams, _job_names(c, streams)


def check_hardware_decodable(c: ct.Container, streams=None, info=None) -> None:
    """Raise :class:`~lutzip.errors.UnsupportedError` (one line) when a stream of ``c`` (of ``streams``) has a
    table set the board's core does not decode: two code tables (format version 5, ``--states 2``) on a core built
    with ``STATES=1`` (``info.states``; ``info`` None: any core built with ``STATES=1``), or is a row stream (format
    version 6) and the core has no row stripes (``info.mirror`` 0, ``MIRROR=0``; ``info`` None: any such core) or
    rows longer than its row buffer takes (``N > info.max_n + 1``)."""
    from lutzip.board.base import rows_refusal, states_refusal, two_tables
    mirror = getattr(info, "mirror", 0) if info is not None else 0
    max_n = getattr(info, "max_n", 0) if mirror else 0
    for s in c.streams if streams is None else streams:
        if getattr(s, "rows", False):
            # a core built with MIRROR=0 (docs/CORE.md section 7) answers a row stripe with error 1, one built with
            # MIRROR=1 a row longer than MAX_N + 1 words with error 10: refused before anything is sent
            from lutzip.errors import UnsupportedError
            t = c.tensors[s.members[0]]
            if not mirror:
                raise UnsupportedError(f"tensor {t.name!r} is a row stream (format version 6, mirrored rows), "
                                       f"{rows_refusal(info)}")
            n = row_length(c, s)
            if max_n and n > max_n + 1:
                raise UnsupportedError(f"tensor {t.name!r} is a row stream of {n}-word rows, longer than this "
                                       f"{info.kind} board's row buffer takes (MAX_N={max_n}: rows of at most "
                                       f"{max_n + 1} words); re-compress with --no-rows to stream it")
    if info is not None and getattr(info, "states", 1) >= 2:
        return
    for s in c.streams if streams is None else streams:
        if two_tables(c.tables[s.table]):
            from lutzip.errors import UnsupportedError
            t = c.tensors[s.members[0]]
            raise UnsupportedError(f"tensor {t.name!r}: its table set {s.table} has two code tables (format "
                                   f"version 5, --states 2), {states_refusal(info)}")


def row_length(c: ct.Container, s) -> int:
    """The row length ``N`` of the row stream ``s`` (docs/FORMAT.md section 4.1: the stored array's words after its
    first axis)."""
    from lutzip.codec.rows import row_shape
    return row_shape(c.tensors[s.members[0]].stored_shape)[1]


def check_stripe(sr, expected: np.ndarray, W: int, full: bool, tensor: str, offset: int):
    """Compare one board :class:`~lutzip.board.base.StripeResult` with the stripe's expected words.

    Parameters
    ----------
    sr : StripeResult
        What the board reported.
    expected : numpy.ndarray
        The stripe's words from the software decoder.
    W : int
        The core's word width (the CRC covers ``W / 8`` bytes per word).
    full : bool
        Compare every word (``sr.words``), not only the count and the CRC.
    tensor : str
        Tensor name (for the mismatch record).
    offset : int
        Index of the stripe's first word within the tensor.

    Returns
    -------
    (str or None, dict or None)
        What is wrong (None: the stripe passes), and for a word mismatch the first differing word
        ``{"tensor", "index", "expected", "got"}``.
    """
    from lutzip.codec.bitstream import ERROR_TEXT
    if sr.err:
        return f"stripe {sr.index}: board decode error {sr.err} ({ERROR_TEXT.get(sr.err, '?')})", None
    if sr.n_words != len(expected):
        return f"stripe {sr.index}: board decoded {sr.n_words} words, expected {len(expected)}", None
    if full:
        w = np.asarray(sr.words if sr.words is not None else np.zeros(0, np.uint16)).astype(np.uint16)
        if len(w) != len(expected) or not np.array_equal(w, expected):
            n = min(len(w), len(expected))
            diff = np.nonzero(w[:n] != expected[:n])[0]
            i = int(diff[0]) if len(diff) else n
            mm = {"tensor": tensor, "index": offset + i,
                  "expected": int(expected[i]) if i < len(expected) else None,
                  "got": int(w[i]) if i < len(w) else None}
            return f"word {mm['index']}: expected {mm['expected']}, got {mm['got']}", mm
    want = words_crc(expected, W)
    if sr.crc != want:
        return f"stripe {sr.index}: CRC32 {sr.crc:#010x}, expected {want:#010x}", None
    return None, None


def rates(counters: dict, clk_hz: int, elapsed: float) -> dict:
    """Weights per cycle (overall and while the core was busy) and per second (board clock and wall clock)."""
    words = counters["words"]
    return {"weights_per_cycle": words / max(counters["cycles"], 1),
            "weights_per_busy_cycle": words / max(counters["busy"], 1),
            "weights_per_s_board": words / max(counters["cycles"], 1) * clk_hz,
            "weights_per_s_wall": words / elapsed if elapsed else 0.0}


def stream_container(board, c: ct.Container, verify: str = "crc", progress=False, names=None) -> dict:
    """Stream the tensors of ``c`` through ``board`` and check each stripe against the software decoder.

    One board job per stream (docs/FORMAT.md, section 4): a tensor of its own is sent as before; a group
    stream of small tensors is sent once, with its table set and stripes, and what the board returns is split
    per tensor by the index, so that every tensor is checked and reported.

    Parameters
    ----------
    board : BoardBase
        Any board (:func:`lutzip.board.open_board`).
    c : Container
        The compressed model.
    verify : {"crc", "full"}
        ``crc``: the board returns a CRC32 per stripe (a tensor of a group stream passes when every stripe
        holding its words does); ``full``: every decoded word comes back and each tensor's words are compared.
    progress : bool or callable(int)
        A progress bar on stderr, or a function called with the number of stripes finished.
    names : collection of str, optional
        Only these tensors (and the streams holding them).

    Returns
    -------
    dict
        The report: ``ok``, ``tensors`` (``name``, ``status`` "pass"/"fail", ``detail``, ratio, ``stream``,
        ``grouped`` ...), ``streams`` (jobs sent), ``first_mismatch``, ``counters``, ``weights_per_cycle``,
        ``weights_per_busy_cycle``, ``weights_per_s_board``, ``weights_per_s_wall``, link figures;
        :func:`format_report` prints it.
    """
    if verify not in VERIFY_MODES:
        raise LutzError(f"unknown verify mode {verify!r} (crc or full)")
    full = verify == "full"
    info = board.info or board.identify()
    tensors, streams, job = _selection(c, names, info)
    check_verify_memory(tensors, streams, full)
    jobs = [(job[s.index], c.tables[s.table], list(c.stripes(s))) for s in streams]
    bar = None
    if callable(progress):
        tick = progress
    else:
        from tqdm import tqdm
        bar = tqdm(total=sum(len(j[2]) for j in jobs), unit="stripe", desc="stream", leave=False,
                   disable=not progress or None, file=sys.stderr)
        tick = bar.update
    try:
        res = board.stream(jobs, words=full, progress=tick)
    finally:
        if bar is not None:
            bar.close()
    by_job = {}
    for sr in res.stripes:
        by_job.setdefault(sr.tensor, []).append(sr)
    report = {"port": getattr(board, "port", None), "kind": info.kind, "simulated": info.simulated,
              "board": info.as_dict(), "link": info.link_text(), "verify": verify, "tensors": [],
              "streams": [{"stream": s.index, "job": job[s.index], "tensors": len(s.members),
                           "stripes": s.n_stripes, "words": s.numel, "bytes": s.n_bytes} for s in streams],
              "first_mismatch": None}
    results, exp_s = {}, {}
    for s in streams:
        if len(s.members) == 1:
            continue
        exp = exp_s[s.index] = stream_words(c, s)
        S = int(s.stripe_len)
        got = by_job.get(job[s.index], [])
        problems, words = {}, {}
        for sr in got:
            problems[sr.index] = check_stripe(sr, exp[sr.index * S:(sr.index + 1) * S], info.W, False, job[s.index],
                                              sr.index * S)[0]
            if full:
                words[sr.index] = np.asarray(sr.words if sr.words is not None else np.zeros(0), np.uint16)
        results[s.index] = (got, problems, words)
    raw = comp = 0
    for t in tensors:
        status, why, mm_t = "pass", "", None
        s = c.stream_of(t)
        if len(s.members) == 1:
            exp = expected_words(c, t)
            S = t.stripe_len
            got = by_job.get(t.name, [])
            n_st = len(t.stripe_words)
            if len(got) != n_st:
                status, why = "fail", f"{len(got)} stripe results for {n_st} stripes"
            for sr in got:
                problem, mm = check_stripe(sr, exp[sr.index * S:(sr.index + 1) * S], info.W, full, t.name, sr.index * S)
                if problem:
                    if status == "pass":
                        why = problem
                    status = "fail"
                    if report["first_mismatch"] is None:
                        report["first_mismatch"] = mm or {"tensor": t.name, "stripe": sr.index, "problem": problem}
        else:
            got, problems, words = results[s.index]
            a, b = t.stripe_range()
            n_st = b - a
            S = int(s.stripe_len)
            if len(got) != s.n_stripes:
                status, why = "fail", f"{len(got)} stripe results for the {s.n_stripes} stripes of its group stream"
            for i in range(a, b):
                problem = problems[i] if i in problems else f"stripe {i}: no board result"
                if full and problem and problem.startswith(f"stripe {i}: CRC32") and not np.array_equal(
                        words.get(i), exp_s[s.index][i * S:(i + 1) * S]):
                    problem = None      # wrong words somewhere in the stripe: the tensor's own words decide (below)
                if problem:
                    if status == "pass":
                        why = problem
                    status = "fail"
                    if report["first_mismatch"] is None:
                        report["first_mismatch"] = {"tensor": t.name, "stripe": i, "problem": problem}
            if full and status == "pass":
                w = np.concatenate([words.get(i, np.zeros(0, np.uint16)) for i in range(a, b)])
                lo = t.word_offset - a * S
                w = w[lo:lo + t.numel]
                exp = expected_words(c, t).astype(np.uint16)
                if len(w) != len(exp) or not np.array_equal(w, exp):
                    n = min(len(w), len(exp))
                    diff = np.nonzero(w[:n] != exp[:n])[0]
                    j = int(diff[0]) if len(diff) else n
                    mm_t = {"tensor": t.name, "index": j, "expected": int(exp[j]) if j < len(exp) else None,
                            "got": int(w[j]) if j < len(w) else None}
                    status, why = "fail", f"word {j}: expected {mm_t['expected']}, got {mm_t['got']}"
                    if report["first_mismatch"] is None:
                        report["first_mismatch"] = mm_t
        raw += t.raw_bytes
        comp += t.n_bytes
        report["tensors"].append({"name": t.name, "dtype": t.dtype, "numel": t.numel, "stripes": n_st,
                                  "bytes": t.n_bytes, "ratio": t.n_bytes / max(t.raw_bytes, 1), "status": status,
                                  "detail": why, "stream": s.index, "grouped": len(s.members) > 1})
    report.update({
        "ok": all(x["status"] == "pass" for x in report["tensors"]),
        "weights": int(sum(t.numel for t in tensors)),
        "raw_bytes": raw, "compressed_bytes": comp, "ratio": comp / max(raw, 1),
        "elapsed_s": res.elapsed,
        "wire_bytes": res.wire_bytes, "payload_bytes": res.payload_bytes,
        "protocol_efficiency": res.payload_bytes / max(res.wire_bytes, 1),
        "retransmissions": res.retransmissions, "attempts": res.attempts,
        "counters": res.counters,
    })
    report.update(rates(res.counters, info.clk_hz, res.elapsed))
    report.update(board.link_report(res))
    return report


def format_report(r: dict) -> str:
    """The human report of :func:`stream_container`'s dict (one line per tensor, then the figures)."""
    b = r["board"]
    lines = [f"board: {b['kind']}, core L={b['L']} W={b['W']} LUT3={b['lut3_depth']}"
             + (f" lanes={b['lanes']}" if b.get("lanes", 1) != 1 else "")
             + (f" STATES={b['states']}" if b.get("states", 1) != 1 else "")
             + (f" MIRROR=1 (MAX_N={b.get('max_n')})" if b.get("mirror") else "")
             + f", clock {b['clk_hz'] / 1e6:g} MHz, {r['link']}"
             + (f", protocol {b['version']}" if "version" in b else "")
             + (" -- SIMULATION" if r.get("simulated") else "")]
    for t in r["tensors"]:
        lines.append(f"  {t['status'].upper():4} {_printable(t['name']):<28} {t['numel']:>10} weights  "
                     f"{t['stripes']:>5} stripes  ratio {t['ratio']:.3f}"
                     + (f"  [group stream {t['stream']}]" if t.get("grouped") else "")
                     + (f"  ({t['detail']})" if t["detail"] else ""))
    groups = [s for s in r.get("streams", []) if s["tensors"] > 1]
    if groups:
        lines.append(f"streams: {len(r['streams'])} sent, {len(groups)} of them group streams holding "
                     f"{sum(s['tensors'] for s in groups)} small tensors")
    cn = r["counters"]
    lines += [
        f"compression: {r['compressed_bytes']} of {r['raw_bytes']} bytes, ratio {r['ratio']:.4f} "
        f"({8 * r['compressed_bytes'] / max(r['weights'], 1):.2f} bits/weight)",
        f"core: {cn['words']} words in {cn['busy']} busy cycles = {r['weights_per_busy_cycle']:.3f} weights per "
        f"busy cycle ({cn['starved']} starved, {cn['blocked']} blocked)",
        f"board: {cn['words']} words in {cn['cycles']} cycles = {r['weights_per_cycle']:.3f} weights/cycle "
        f"= {r['weights_per_s_board'] / 1e6:.1f} M weights/s at {b['clk_hz'] / 1e6:g} MHz",
        f"host: {r['weights']} weights in {r['elapsed_s']:.3f} s = {r['weights_per_s_wall'] / 1e6:.2f} M weights/s; "
        + (f"{r['wire_bytes']} bytes sent, protocol efficiency {100 * r['protocol_efficiency']:.1f} %, "
           f"{r['retransmissions']} frames resent, {r['attempts']} attempt(s)" if str(r.get("kind")).startswith("uart")
           else f"{r['wire_bytes']} bytes moved by DMA ({r['payload_bytes']} of them stripe words), "
                f"{r['attempts']} attempt(s)"),
    ]
    if "link_utilisation_board" in r:
        lines.append(f"link: receive line busy {100 * r['link_utilisation_board']:.1f} % of the board's cycles"
                     + (f", {100 * r['link_utilisation_wall']:.1f} % of the line rate (wall clock)"
                        if "link_utilisation_wall" in r else "")
                     + (f"; link errors {cn['link_errors']}" if "link_errors" in cn else "")
                     + f", decode errors {cn['decode_errors']}")
    if r["first_mismatch"]:
        lines.append(f"FIRST MISMATCH: {_printable(str(r['first_mismatch']))}")
    lines.append("RESULT: " + ("PASS" if r["ok"] else "FAIL"))
    return "\n".join(lines)


def _printable(text: str) -> str:
    """``text`` with control characters escaped (a tensor name must not drive the terminal)."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


# ------------------------------------------------------------------------------------------ replay
def replay_pieces(stripes, capacity: int):
    """Cut a stream's stripes into stripe-aligned pieces of at most ``capacity`` words.

    Returns
    -------
    list of (int, int)
        ``(first, end)`` stripe ranges; a stripe longer than ``capacity`` is a piece of its own, flagged by its
        size (the caller skips it).
    """
    out, a, used = [], 0, 0
    for i, st in enumerate(stripes):
        n = len(st)
        if used and used + n > capacity:
            out.append((a, i))
            a, used = i, 0
        used += n
    if used:
        out.append((a, len(stripes)))
    return out


def lane_sequence(n_stripes: int, lanes: int):
    """The stripes of one replay pass on a board whose replay unit has ``lanes`` lanes (docs/PROTOCOL.md, 6.1).

    The pass holds every stripe of the piece ``lanes`` times: its position ``t * lanes + j`` (lane ``j``'s
    ``t``-th stripe, the decoder's ``"rr"`` rule) is stripe ``(t + j) mod n_stripes``, so every lane decodes
    every stripe of the piece exactly once per pass (the lanes carry equal work whatever the stripes' lengths:
    a tensor's short last stripe, one-stripe tensors) and the pass's stripe count is a multiple of ``lanes``.
    One lane: the piece itself.

    Returns
    -------
    list of int
        Stripe indices (into the piece) in pass order.
    """
    if lanes == 1:
        return list(range(n_stripes))
    return [(t + j) % n_stripes for t in range(n_stripes) for j in range(lanes)]


def replay_container(board, c: ct.Container, passes: int, names=None, capacity=None) -> dict:
    """Decode each stream of ``c`` ``passes`` times from the board's replay buffer; check every pass.

    The core decodes the buffer back to back at its own clock, independent of the link: the figures are the
    silicon's rate. A stream larger than the buffer is replayed in stripe-aligned pieces. Each piece passes
    when the board's CRC32 of pass 1 equals the software decoder's, every later pass's CRC equals pass 1's,
    no stripe ended in a decode error, and the counters agree (``words`` = passes x the piece's weights,
    ``stripes`` = passes x its stripes, ``busy`` <= ``cycles``).

    Parameters
    ----------
    board : BoardBase
        A board with a replay buffer (``replay_piece``; the UART boards built with ``REPLAY_WORDS`` > 0).
    c : Container
        The compressed model.
    passes : int
        Passes per piece (>= 1).
    names : collection of str, optional
        Only these tensors (and the streams holding them).
    capacity : int, optional
        Use at most this many buffer words per piece (default: the whole buffer).

    Returns
    -------
    dict
        ``ok``, ``passes``, ``buffer_words``, ``clk_hz``, ``weights_per_cycle``, ``weights_per_busy_cycle``,
        ``weights_per_s`` (overall), ``tensors`` (per stream: ``name``, ``ok``, ``pieces``, ``weights``,
        ``cycles``, ``busy``, ``weights_per_cycle``, ``weights_per_s``, ``detail``), ``skipped``.

    Raises
    ------
    BoardError
        The board has no replay buffer.
    """
    from lutzip.board.base import BoardError
    if int(passes) < 1:
        raise LutzError(f"--replay needs at least 1 pass, not {passes}")
    info = board.info or board.identify()
    cap = int(getattr(info, "replay_words", 0) or 0)
    if not cap or not hasattr(board, "replay_piece"):
        raise BoardError(f"the board ({info.kind}) has no replay buffer: --replay needs a board built with "
                         "REPLAY_WORDS > 0 (docs/PROTOCOL.md, section 6)")
    if capacity is not None:
        cap = max(1, min(cap, int(capacity)))
    lanes = int(getattr(info, "lanes", 1) or 1)
    region = cap // lanes       # a piece's words: each lane's region holds the whole piece (lane_sequence)
    tensors, streams, job = _selection(c, names, info)
    rows, skipped = [], []
    tot = {"words": 0, "cycles": 0, "busy": 0}
    for s in streams:
        stripes = list(c.stripes(s))
        exp = stream_words(c, s) if len(s.members) > 1 else expected_words(c, c.tensors[s.members[0]])
        S = int(s.stripe_len)
        row = {"name": job[s.index], "ok": True, "pieces": 0, "weights": 0, "cycles": 0, "busy": 0,
               "stall_in": 0, "words": 0, "detail": ""}
        for a, b in replay_pieces(stripes, region):
            n_words = sum(len(st) for st in stripes[a:b])
            if n_words > region:
                where = f"the {cap}-word buffer" if lanes == 1 else f"a lane's {region}-word region"
                skipped.append(f"{job[s.index]} stripe {a}: {n_words} words > {where}")
                continue
            seq = lane_sequence(b - a, lanes)
            parts = [exp[(a + i) * S:min((a + i + 1) * S, len(exp))] for i in seq]
            want = np.concatenate(parts) if lanes > 1 else exp[a * S:min(b * S, len(exp))]
            v = board.replay_piece(c.tables[s.table], [stripes[a + i] for i in seq], passes, weights=len(want))
            crc = words_crc(want, info.W)
            problem = None
            if v["decode_errors"]:
                problem = f"stripes {a}..{b - 1}: {v['decode_errors']} decode errors (first code {v['first_error']})"
            elif v["passes"] != passes or v["bad_passes"]:
                problem = f"stripes {a}..{b - 1}: {v['passes']} passes done, {v['bad_passes']} with another CRC"
            elif v["crc_first"] != crc or v["crc_last"] != crc:
                problem = (f"stripes {a}..{b - 1}: CRC32 {v['crc_first']:#010x} / {v['crc_last']:#010x}, "
                           f"expected {crc:#010x}")
            elif v["words"] != passes * len(want) or v["stripes"] != passes * len(seq):
                problem = (f"stripes {a}..{b - 1}: {v['words']} words in {v['stripes']} stripes, expected "
                           f"{passes * len(want)} in {passes * len(seq)}")
            elif not v["busy"] <= v["cycles"]:
                problem = f"stripes {a}..{b - 1}: busy {v['busy']} > cycles {v['cycles']}"
            if problem and row["ok"]:
                row["ok"], row["detail"] = False, problem
            row["pieces"] += 1
            row["weights"] += min(b * S, len(exp)) - a * S
            row["words"] += passes * len(want)
            for k in ("cycles", "busy", "stall_in"):
                row[k] += int(v[k])
            tot["words"] += int(v["words"])
            tot["cycles"] += int(v["cycles"])
            tot["busy"] += int(v["busy"])
        wpc = row["words"] / max(row["cycles"], 1)
        row.update(weights_per_cycle=wpc, weights_per_s=wpc * info.clk_hz)
        if not row["pieces"]:
            row["ok"], row["detail"] = False, "no piece fits the buffer"
        rows.append(row)
    wpc = tot["words"] / max(tot["cycles"], 1)
    return {"ok": bool(rows) and all(r["ok"] for r in rows), "passes": int(passes), "buffer_words": cap,
            "lanes": lanes,
            "clk_hz": info.clk_hz, "words": tot["words"], "cycles": tot["cycles"], "busy": tot["busy"],
            "weights_per_cycle": wpc, "weights_per_busy_cycle": tot["words"] / max(tot["busy"], 1),
            "weights_per_s": wpc * info.clk_hz, "tensors": rows, "skipped": skipped}


def format_replay(r: dict, link_rate: dict | None = None) -> str:
    """The lines of :func:`replay_container`'s dict (with ``link_rate``: the streamed report, for comparison)."""
    lanes = r.get("lanes", 1)
    on = f" on {lanes} lanes (each stripe once per lane per pass)" if lanes > 1 else ""
    lines = [f"replay: {r['passes']} passes per piece from the {r['buffer_words']}-word buffer{on}, at the core "
             f"clock {r['clk_hz'] / 1e6:g} MHz"]
    for t in r["tensors"]:
        lines.append(f"  {'PASS' if t['ok'] else 'FAIL':4} {_printable(t['name']):<28} {t['weights']:>10} weights  "
                     f"{t['pieces']:>3} piece(s)  {t['weights_per_cycle']:.4f} weights/cycle = "
                     f"{t['weights_per_s'] / 1e6:.1f} M weights/s" + (f"  ({t['detail']})" if t["detail"] else ""))
    for sk in r.get("skipped", []):
        lines.append(f"  SKIP {sk}")
    line = (f"silicon: {r['words']} words in {r['cycles']} cycles = {r['weights_per_cycle']:.4f} weights/cycle = "
            f"{r['weights_per_s'] / 1e6:.1f} M weights/s")
    if link_rate:
        line += (f"; through the link {link_rate['weights_per_cycle']:.4f} weights/cycle = "
                 f"{link_rate['weights_per_s_board'] / 1e6:.1f} M weights/s")
    lines.append(line)
    lines.append("REPLAY: " + ("PASS" if r["ok"] else "FAIL"))
    return "\n".join(lines)
