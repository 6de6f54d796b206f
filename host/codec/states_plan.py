"""Two code tables planned from the words' token statistics: the encoder's ``states=2`` path (format version 5).

:func:`lutzip.codec.states.apply` reads a finished one-table container back (the symbols walked, the words
decoded) and codes every table set's streams again two to four times to choose the second table. Here the
choice is made before any stripe is coded, from one pass over the words (:func:`stats`, ``lzs_tokstats``):

* a *token* is a nonzero word (a literal, of the class the one-table set codes its value in) or a maximal run of
  zero words inside a stripe; the pass counts literal-after-literal class pairs and runs by (class before, length,
  class after). How :func:`~lutzip.codec.states._encode2` codes the tokens with a two-state set (a run's chunks
  and end state from the run plan, the literal after it in that state) depends only on these: the bits of a
  coding and the class pairs of its parse follow from the statistics exactly (:func:`evaluate`, ``lzs_tokeval``),
  stripe padding not counted;
* :func:`plan` designs as ``apply`` does -- the follow set and code lengths of
  :func:`~lutzip.codec.states.design` from the pairs of the one-table parse, then the lengths re-derived from
  the pairs of the two-state parse, for ``F`` = the ZRUN classes and ``F`` searched greedily -- each round on the
  statistics instead of a coding of the streams, and keeps the fewest bits (the metadata bytes of the second
  table counted) where that is fewer than the one-table set's bits on the same statistics;
* the encoder then codes the streams of such a set once, with the two-state coder (:func:`code`) instead of the
  one-table coder.

Needs the C kernels (:mod:`lutzip.codec.states_c`); :func:`available` says whether they are there (without them
the caller falls back to ``apply``).
"""
from __future__ import annotations

import numpy as np

from lutzip.codec import states as st
from lutzip.codec.tables import MAX_CLASSES, ZRUN, ClassSpec, TableSet

#: designs on the statistics for each start (``apply`` codes 2: the first design and one re-design)
ROUNDS = 2
#: the follow-set searches :func:`plan` starts from: greedy only (``apply`` also codes ``F`` = the ZRUN classes,
#: which was never the smaller one on the real models, docs/log/2026-12-compression.md)
STARTS = (True,)


def available() -> bool:
    """Whether the C kernels this path needs are built."""
    return st._c() is not None


def literals(ts: TableSet):
    """``(lit_cls, lit_idx)`` of the one-table set ``ts``: the class and index each value is coded with, in
    both the statistics and the two-state coding (:func:`lutzip.codec.states._literals`)."""
    return st._literals(ts)


#: a stream of at least ``SAMPLE_MIN`` stripes is counted on every ``SAMPLE_STEP``-th stripe (:func:`stats`)
SAMPLE_MIN, SAMPLE_STEP = 16, 4


def stats(words_list, S_list, lit_cls, sample: bool = True):
    """The token statistics of streams (words, stripe length each) coded with one table set, together:
    ``(ll, runs, scale)`` (:func:`lutzip.codec.states_c.tokstats`; ``runs`` rows of every stream). ``sample``:
    streams of at least :data:`SAMPLE_MIN` stripes are counted on every :data:`SAMPLE_STEP`-th stripe;
    ``scale`` = all words / the words counted."""
    steps = []
    total = counted = 0
    for w, S in zip(words_list, S_list):
        n, S = int(np.size(w)), int(S)
        step = SAMPLE_STEP if sample and -(-n // S) >= SAMPLE_MIN else 1
        steps.append(step)
        total += n
        # the counted stripes: every step-th, the last one perhaps short
        full, last = divmod(n, S)
        idx = np.arange(0, full + (last > 0), step)
        counted += int(len(idx)) * S - ((S - last) if last and idx[-1] == full else 0)
    ll, runs = st._c().tokstats_many(words_list, S_list, steps, lit_cls)
    return ll, runs, (total / counted if counted else 1.0)


def _options(ts: TableSet, lit_cls):
    """The run plan's options: the ZRUN classes (a chunk of up to ``2^k`` zeros) and the literal zero."""
    opts = [(j, 1 << cl.k) for j, cl in enumerate(ts.classes) if cl.kind == ZRUN]
    if lit_cls[0] >= 0:
        opts.append((int(lit_cls[0]), 1))
    return np.array([o[0] for o in opts], np.int64), np.array([o[1] for o in opts], np.int64)


def evaluate(ll, runs, lens, nxt, ks, opt_cls, opt_cap):
    """``(bits, pairs)`` of the tokens coded with code lengths ``lens`` (by ``state * 16 + class``) and next
    states ``nxt`` (:func:`lutzip.codec.states_c.tokeval`), or ``(-1, None)`` when they cannot be coded so."""
    k = st._c()
    R = max(int(runs[:, 2].max()) if len(runs) else 1, 1)        # the run plan up to the longest run
    g = np.empty((2, R + 1, 2), np.int64)                        # run_dp fills every entry
    ch = np.empty((2, R + 1, 2), np.int64)
    k.run_dp(R, opt_cls, opt_cap, lens, ks, nxt, g, ch)
    pairs = np.zeros((MAX_CLASSES + 1, MAX_CLASSES), np.int64)
    bits = k.tokeval(ll, runs, R, opt_cls, opt_cap, lens, ks, nxt, g, ch, pairs)
    return bits, (pairs if bits >= 0 else None)


def one_table(ll, runs, ts: TableSet, lit_cls):
    """``(bits, pairs)`` of the tokens coded with the one-table set ``ts`` (both states its lengths, never B)."""
    lens = np.zeros(2 * MAX_CLASSES, np.int64)
    la = [cl.c for cl in ts.classes]
    lens[:len(la)] = la
    lens[MAX_CLASSES:MAX_CLASSES + len(la)] = la
    return evaluate(ll, runs, lens, np.zeros(MAX_CLASSES, np.int64), st._class_field(ts, "k"),
                    *_options(ts, lit_cls))


def plan(ll, runs, ts: TableSet, lit_cls, L: int = 8, starts=STARTS, rounds: int = ROUNDS, scale: float = 1.0):
    """The two-code-table version of ``ts`` with the fewest bits on the statistics ``(ll, runs)``: ``(two,
    bits, one_bits)`` (``bits`` with the second table's metadata bytes, weighed ``1 / scale`` for statistics of
    a ``1 / scale`` sample), ``two`` ``None`` where no design has fewer bits than ``ts`` itself (``one_bits``).
    ``starts``: the follow-set searches (``greedy`` of :func:`lutzip.codec.states.design`) each designed from
    the one-table parse and re-designed ``rounds - 1`` times from its own parse."""
    ks = st._class_field(ts, "k")
    opt = _options(ts, lit_cls)
    base, pairs0 = one_table(ll, runs, ts, lit_cls)
    if base < 0:
        return None, None, base
    design = _designer(ts, L)
    n = len(ts.classes)
    best, seen = None, set()
    for g in starts:
        cur = design(pairs0, g)
        for rnd in range(int(rounds)):
            if cur is None or cur in seen:
                break
            seen.add(cur)
            F, la, lb = cur
            lens, _, nxt = st._state_arrays(la, lb, F)
            bits, pairs = evaluate(ll, runs, lens, nxt, ks, *opt)
            if bits < 0:
                break
            bits += 8 * (2 + n) / scale                 # the second table's metadata bytes (states.extra_bytes)
            if best is None or bits < best[1]:
                best = (cur, bits)
            if rnd + 1 == rounds:
                break
            cur = design(pairs, g)
    if best is None or best[1] >= base:
        return None, None, base
    F, la, lb = best[0]
    two = TableSet(ts.word_bits, [ClassSpec(a, cl.kind, cl.k, cl.param) for a, cl in zip(la, ts.classes)],
                   ts.lut3.copy(), lens_b=lb, follow=F)
    two.validate()
    return two, best[1], base


def _designer(ts: TableSet, L: int):
    """:func:`lutzip.codec.states.design` of ``ts`` as a function ``(pairs, greedy) -> (F, lens_a, lens_b)`` (or
    ``None``): the same follow set and lengths, no table set made (:func:`plan` makes the one it keeps)."""
    k = st._c()
    n = len(ts.classes)
    L = max(int(L), ts.max_code_len)
    cs = np.array([cl.c for cl in ts.classes], np.int64)
    zr = sum(1 << j for j, cl in enumerate(ts.classes) if cl.kind == ZRUN)

    def design(pairs, greedy):
        base = int((pairs.sum(0)[:n] * cs).sum())
        got = k.design_search(pairs, n, L, zr, greedy, 8)
        if got is None:
            return None
        F, bits, la, lb = got
        if base - bits - 8 * (2 + n) <= 0 or not any(lb):
            return None
        return int(F), tuple(int(a) for a in la), tuple(int(b) for b in lb)
    return design


def code(words, S: int, two: TableSet, lits):
    """``(payload, stripe_words)`` of ``words`` in stripes of ``S`` coded with ``two`` (the literals of the
    one-table set, :func:`literals`): :func:`lutzip.codec.states._encode2`'s stripes."""
    return code_many([words], [S], two, lits)[0]


def code_many(words_list, S_list, two: TableSet, lits) -> list:
    """:func:`code` of several streams, the run plan made once per stripe length."""
    from lutzip.errors import TableError
    from lutzip.codec.tables import MAX_SYMBOL_BITS
    k = st._c()
    lens, codes, nxt = st.state_arrays(two)
    ks = st._class_field(two, "k")
    lit_cls, lit_idx = lits
    opt_cls, opt_cap, opt_lit = st._run_options(two, lit_cls)
    plans, out = {}, []
    for words, S in zip(words_list, S_list):
        S = int(S)
        if S not in plans:
            g = np.zeros((2, S + 1, 2), np.int64)
            ch = np.zeros((2, S + 1, 2), np.int64)
            k.run_dp(S, opt_cls, opt_cap, lens, ks, nxt, g, ch)
            plans[S] = (g, ch)
        g, ch = plans[S]
        n = int(np.size(words))
        n_stripes = -(-n // S)
        buf = np.empty(n_stripes * 2 + (n * (MAX_SYMBOL_BITS + 1)) // 32 + 2, np.uint32)
        sw = np.zeros(n_stripes, np.uint32)
        p = k.encode2(np.ascontiguousarray(words).reshape(-1), S, lit_cls, lit_idx, opt_cls, opt_cap, opt_lit,
                      lens, codes, ks, nxt, g, ch, buf, sw, None)
        if p < 0:
            raise TableError(f"word {-1 - p} is not covered by a class of the table set in the state it is read in")
        out.append((buf[:p], sw))                  # a view: only the written pages are resident
    return out


def plan_group(ts: TableSet, words_list, S_list, L: int = 8):
    """``(two, [(payload, stripe words)])``: the streams (their words, stripe lengths) of the one-table set ``ts``
    coded with its two-code-table version where :func:`plan` finds one, else ``None``. Planned on a sample of the
    stripes (:func:`stats`); when the set it finds cannot code a stream's words (a class the sample did not see
    in state B), planned again on every stripe."""
    from lutzip.errors import TableError
    lits = literals(ts)
    for sample in (True, False):
        ll, runs, scale = stats(words_list, S_list, lits[0], sample)
        two = plan(ll, runs, ts, lits[0], L=max(int(L), ts.max_code_len), scale=scale)[0]
        if two is None:
            return None
        try:
            return two, code_many(words_list, S_list, two, lits)
        except TableError:
            if scale == 1.0:
                return None
    return None


def rewrite(c, L: int = 8, only_rows: bool = False, release=None):
    """Container ``c`` (one code table per set) with two code tables where :func:`plan_group` finds them, its
    streams' words decoded back: the bytes :func:`lutzip.codec.arrays.compress` writes with ``states=2`` for the
    same tensors (``c`` itself where no set changes). A row stream's stripes are planned and coded each as a
    stream of one stripe (their coded words, as :func:`lutzip.codec.states.apply` does). ``only_rows``: only the
    table sets that have a row stream (what ``compress`` leaves to this function). ``release(stream)``: called
    after a stream's words are decoded (an mmapped file's pages dropped).

    Streams are decoded one at a time (for the statistics, then again for the coding where a set pays): at most
    one stream's words are held."""
    import dataclasses
    from lutzip.errors import TableError
    import zlib
    from lutzip.codec import container as ct
    from lutzip.codec.decode import decode_stripes
    if not available():
        return st.apply(c, L=L)
    by = {}
    for s in c.streams:
        by.setdefault(s.table, []).append(s)
    tables, new = list(c.tables), {}
    release = release or (lambda s: None)
    for ti, group in by.items():
        ts = c.tables[ti]
        rows = [bool(getattr(s, "rows", False)) for s in group]
        if ts.lens_b is not None or (only_rows and not any(rows)):
            continue

        def words_of(gi, s=None):
            # the stream's words (a row stream: each row stripe's coded words) and stripe lengths; one stream
            # decoded at a time, its payload pages released after (lutzip compress / save at model scale)
            s = group[gi]
            if rows[gi]:
                ws = st._stream_words(c, s, ts)
                out = (ws, [len(w) for w in ws])
            else:
                out = ([decode_stripes(c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts)],
                       [s.stripe_len])
            release(s)
            return out

        lits = literals(ts)
        two = None
        for sample in (True, False):
            ll = np.zeros((17, 16), np.int64)
            runs, total, counted = [], 0, 0
            for gi in range(len(group)):
                ws, Ss = words_of(gi)
                a, r, sc = stats(ws, Ss, lits[0], sample)
                ll += a
                runs.append(r)
                n = sum(int(np.size(w)) for w in ws)
                total += n
                counted += int(round(n / sc))          # the words counted, exactly (stats: n / counted)
            runs = np.asfortranarray(np.concatenate(runs)) if runs else np.zeros((0, 4), np.int64)
            scale = total / counted if counted else 1.0
            two = plan(ll, runs, ts, lits[0], L=max(int(L), ts.max_code_len), scale=scale)[0]
            if two is None:
                break
            try:
                coded = {}
                for gi, s in enumerate(group):
                    ws, Ss = words_of(gi)
                    parts = code_many(ws, Ss, two, lits)
                    got = (np.concatenate([p for p, _ in parts]), np.concatenate([q for _, q in parts]))
                    coded[s.index] = st._back(c, s, got) if rows[gi] else got
                break
            except TableError:
                two = None
                if scale == 1.0:
                    break
        if two is not None:
            tables[ti] = two
            new.update(coded)
    if not new:
        return c
    chunks, tensors, offset = [], list(c.tensors), 0
    for s in c.streams:                                 # the streams tile the payload in stream order
        if s.index in new:
            payload, sw = new[s.index]
            starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))]).tolist()
            mv = memoryview(payload.astype("<u4", copy=False)).cast("B")
            crcs = np.array([zlib.crc32(mv[4 * starts[j]:4 * starts[j + 1]]) for j in range(len(sw))], np.uint32)
        else:
            payload, sw, crcs = c.stripe_payload(s), s.stripe_words, s.stripe_crcs
        for i in s.members:
            tensors[i] = dataclasses.replace(tensors[i], offset=offset, stripe_words=sw, stripe_crcs=crcs)
        chunks.append(np.asarray(payload, np.uint32))
        offset += 4 * len(payload)
    payload = np.concatenate(chunks) if chunks else np.zeros(0, np.uint32)
    return ct.Container(tables, tensors, payload)


def _plan_file(c, L, release, full=()):
    """``{table index: (two-table set, literals)}`` of container ``c``'s one-table sets (their streams decoded one
    at a time, ``release`` after each), as :func:`rewrite` plans them; ``full``: sets planned on every stripe."""
    from lutzip.codec.decode import decode_stripes
    by = {}
    for s in c.streams:
        by.setdefault(s.table, []).append(s)
    out = {}
    for ti, group in by.items():
        ts = c.tables[ti]
        if ts.lens_b is not None:
            continue
        lits = literals(ts)
        sample = ti not in full
        ll = np.zeros((17, 16), np.int64)
        runs, total, counted = [], 0, 0
        for s in group:
            ws, Ss = _words(c, s, ts, decode_stripes)
            release(s)
            a, r, sc = stats(ws, Ss, lits[0], sample)
            ll += a
            runs.append(r)
            n = sum(int(np.size(w)) for w in ws)
            total += n
            counted += int(round(n / sc))
        runs = np.asfortranarray(np.concatenate(runs)) if runs else np.zeros((0, 4), np.int64)
        scale = total / counted if counted else 1.0
        two = plan(ll, runs, ts, lits[0], L=max(int(L), ts.max_code_len), scale=scale)[0]
        if two is not None:
            out[ti] = (two, lits, scale)
    return out


def _words(c, s, ts, decode_stripes):
    """A stream's words and stripe lengths (a row stream: each row stripe's coded words, one stripe each)."""
    if getattr(s, "rows", False):
        ws = st._stream_words(c, s, ts)
        return ws, [len(w) for w in ws]
    return [decode_stripes(c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts)], [s.stripe_len]


def redesign_file(path, L: int = 8):
    """The one-table ``.lutz`` file at ``path`` rewritten with two code tables and 8-bit classes cut for them
    (:func:`lutzip.codec.states.apply` with ``redesign=True``, the bytes of ``compress(..., redesign=True)``):
    ``(bytes, container)``. The whole container is in memory; the file is replaced whole or not at all."""
    from lutzip.codec import container as ct
    with open(path, "rb") as f:
        c = st.apply(ct.from_bytes(f.read()), L=L, redesign=True)
    data = ct.to_bytes(c)
    with ct.atomic_output(path) as f:
        f.write(data)
    return len(data), c


def rewrite_file(path, L: int = 8):
    """The one-table ``.lutz`` file at ``path`` rewritten with two code tables where they pay (the bytes of
    :func:`rewrite`, i.e. of ``compress(..., states=2)``): ``(bytes, container without payload)``; the file is left
    as it is where no table set changes. Memory: the file is memory-mapped, streams are decoded one at a time (for
    the statistics, then again for the coding) and their pages released, and the new payload goes to a temporary
    file beside ``path`` before the header and metadata are written (as the streamed writer does)."""
    import dataclasses
    import mmap
    import os
    import tempfile
    import zlib
    from lutzip.codec import container as ct
    from lutzip.codec.decode import decode_stripes
    from lutzip.codec.writer import _temp_dir, release_pages, write_spooled
    from lutzip.errors import TableError
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        c = ct.parse_index(mm)
        base = len(mm) - 4 * len(c.payload)

        def release(s):
            release_pages(mm, base + c.tensors[s.members[0]].offset, s.n_bytes)
        if not available():
            c = ct.from_bytes(bytes(mm[:]))
            two = st.apply(c, L=L)
            if two is c:
                return os.path.getsize(path), c
            n = ct.write(path, two)
            return n, two
        full = set()
        plans = _plan_file(c, L, release)
        while True:
            if not plans:
                c.payload = np.zeros(0, np.uint32)        # the index only (the payload stays in the file)
                return os.path.getsize(path), c
            with tempfile.TemporaryFile(dir=_temp_dir(path)) as pf:
                tensors, tables, offset, failed = list(c.tensors), list(c.tables), 0, None
                for s in c.streams:
                    if s.table in plans:
                        two, lits, _ = plans[s.table]
                        ts = c.tables[s.table]
                        ws, Ss = _words(c, s, ts, decode_stripes)
                        try:
                            parts = code_many(ws, Ss, two, lits)
                        except TableError:
                            failed = s.table
                            break
                        coded = parts[0] if len(parts) == 1 else \
                            (np.concatenate([p for p, _ in parts]), np.concatenate([q for _, q in parts]))
                        payload, sw = st._back(c, s, coded) if getattr(s, "rows", False) else coded
                        del parts, coded, ws
                        starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))]).tolist()
                        mv = memoryview(np.asarray(payload, "<u4")).cast("B")
                        crcs = np.array([zlib.crc32(mv[4 * starts[j]:4 * starts[j + 1]]) for j in range(len(sw))],
                                        np.uint32)
                        tables[s.table] = two
                    else:
                        payload, sw, crcs = c.stripe_payload(s), s.stripe_words, s.stripe_crcs
                    pf.write(memoryview(np.ascontiguousarray(payload, "<u4")).cast("B"))
                    release(s)
                    n_words = len(payload)
                    del payload
                    for i in s.members:
                        tensors[i] = dataclasses.replace(tensors[i], offset=offset, stripe_words=sw,
                                                         stripe_crcs=crcs)
                    offset += 4 * n_words
                if failed is not None:                    # planned on a sample: plan that set on every stripe
                    if plans[failed][2] == 1.0:
                        del plans[failed]
                    else:
                        full.add(failed)
                        got = _plan_file(c, L, release, full)
                        plans = {t: v for t, v in plans.items() if t != failed}
                        if failed in got:
                            plans[failed] = got[failed]
                    continue
                return write_spooled(path, tables, tensors, pf, offset, np.zeros(0, np.uint32))
    finally:
        c = None
        try:
            mm.close()
        except BufferError:                     # views of it still held: closed when they go
            pass
