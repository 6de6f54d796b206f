"""Two code tables switched by the previous symbol's class (format version 5, docs/FORMAT.md section 2.1).

A table set may carry a second vector of class-code lengths (``TableSet.lens_b``) and a class set ``F``
(``TableSet.follow``, a bit mask). A stripe starts in state A, where the classes' own code lengths ``c`` hold;
after a symbol of a class in ``F`` the next symbol is read in state B (the ``lens_b`` codes, canonical like the
A codes; a class of length 0 has no code in B), after any other symbol in state A. The classes themselves
(kind, index length, param: LUT2) and LUT3 are the same in both states: only the prefix code differs. In a
decoder this is one more LUT1 address bit (the state) and one more LUT1 entry bit (the next state).

What pays for it: a zero run (a ZRUN symbol not cut at its class's maximum) is always followed by a literal, and an
order-0 code over runs and literals mixed pays for "run or literal" at every symbol
(docs/log/2026-12-compression.md, 2026-12-04 night).

The encoder side (:func:`apply`) works on a finished container: the one-table encoder's stripes are read
back symbol by symbol, the class pairs counted per table set, two code-length vectors derived (package-merge,
the lengths of :func:`lutzip.codec.huffman.limited_code_lengths`) for ``F`` = the ZRUN classes and for ``F``
chosen greedily; the streams are then coded again with the zero runs planned for the two states (which class
codes each chunk of a run, counting the state the run ends in and the code of the literal after it) and the
lengths re-derived from that parse, and the smallest coding is kept where the table set's streams get smaller. Opt-in (``lutzip compress --states 2``, ``compress(..., states=2)``): the hardware core
does not decode these table sets yet; the C fast decoder decodes them (a state per lane, docs/log/2026-12-decoder.md)
and the numba kernel here is its reference.

Speed: the encoder's loops (the follow-set search with its package-merge code lengths, the walk, the literal
classes, the run plan and the two-state coder) run in C (:mod:`lutzip.codec.states_c`, ``_states.c``; no numba
import) where a compiler is found, else in the Python / numba code here, which the C kernels are tested against;
both write the same bytes. A table set's transcoded stripes are sized from each stripe's class pairs and written
only when they are kept, and a table set's re-planned coding is computed once per group (``_replan``'s cache).
"""
from __future__ import annotations

import dataclasses
import functools
import zlib

import numpy as np

from lutzip.errors import TableError
from lutzip.codec.tables import LUT, MAX_CLASSES, MAX_CODE_LEN, MAX_SYMBOL_BITS, ZRUN, ClassSpec, TableSet

def extra_bytes(ts: TableSet) -> int:
    """Metadata bytes a two-state table set adds (u16 follow mask + one code length per class)."""
    return 2 + len(ts.classes)


def validate_states(ts: TableSet) -> None:
    """Raise :class:`TableError` unless the state-B fields of ``ts`` follow docs/FORMAT.md section 2.1."""
    n = len(ts.classes)
    if ts.lens_b is None:
        raise TableError(f"follow mask {ts.follow:#x} without state-B code lengths")
    lens = tuple(int(v) for v in ts.lens_b)
    if len(lens) != n:
        raise TableError(f"{len(lens)} state-B code lengths for {n} classes")
    if not 0 < ts.follow < (1 << n):
        raise TableError(f"follow mask {ts.follow:#x}: must name at least one of the {n} classes and no other")
    kraft = 0
    for j, (c, cl) in enumerate(zip(lens, ts.classes)):
        if not 0 <= c <= MAX_CODE_LEN:
            raise TableError(f"class {j}: state-B code length {c} outside 0..{MAX_CODE_LEN}")
        if c and c + cl.k > MAX_SYMBOL_BITS:
            raise TableError(f"class {j}: state-B code {c} + index {cl.k} bits exceeds {MAX_SYMBOL_BITS}")
        if c:
            kraft += 1 << (MAX_CODE_LEN - c)
    if not kraft:
        raise TableError("no class has a code in state B")
    if kraft > 1 << MAX_CODE_LEN:
        raise TableError("state-B code lengths break the Kraft inequality "
                         f"(sum 2^-c = {kraft / (1 << MAX_CODE_LEN):.4f} > 1)")


def canonical_codes(lens) -> list:
    """Canonical codes of code lengths ``lens`` (0: no code, gets 0), as :meth:`TableSet.codes`."""
    order = sorted((j for j in range(len(lens)) if lens[j]), key=lambda j: (lens[j], j))
    codes = [0] * len(lens)
    code, prev = -1, 0
    for j in order:
        c = lens[j]
        code = 0 if code < 0 else (code + 1) << (c - prev)
        prev = c
        codes[j] = code
    return codes


def _run_options(two, lit_cls):
    """The run plan's options of table set ``two``: (class, longest run it codes, 1 if a literal) as three int64
    arrays -- each ZRUN class with its 2^k, and the literal zero's class (``lit_cls[0]``, if any) with 1."""
    opts = [(j, 1 << cl.k, 0) for j, cl in enumerate(two.classes) if cl.kind == ZRUN]
    if lit_cls[0] >= 0:
        opts.append((int(lit_cls[0]), 1, 1))
    return (np.array([o[0] for o in opts] or [0], np.int64)[:len(opts)],
            np.array([o[1] for o in opts] or [1], np.int64)[:len(opts)],
            np.array([o[2] for o in opts] or [0], np.int64)[:len(opts)])


def state_arrays(ts: TableSet):
    """``(lens, codes, nxt)``: code lengths and codes by ``state * 16 + class`` (int64, 32 entries) and the next
    state of each class (16 entries). Fresh arrays (made once per code lengths and follow set)."""
    lens, codes, nxt = _state_arrays(tuple(int(cl.c) for cl in ts.classes), tuple(int(b) for b in ts.lens_b),
                                     int(ts.follow))
    return lens.copy(), codes.copy(), nxt.copy()


@functools.lru_cache(maxsize=256)
def _state_arrays(la: tuple, lb: tuple, follow: int):
    n = len(la)
    lens = np.zeros(2 * MAX_CLASSES, np.int64)
    codes = np.zeros(2 * MAX_CLASSES, np.int64)
    lens[:n], codes[:n] = la, canonical_codes(la)
    lens[MAX_CLASSES:MAX_CLASSES + n], codes[MAX_CLASSES:MAX_CLASSES + n] = lb, canonical_codes(lb)
    nxt = np.array([(follow >> j) & 1 for j in range(MAX_CLASSES)], np.int64)
    return lens, codes, nxt


def state_lut1(ts: TableSet, L: int) -> np.ndarray:
    """The two-state LUT1: ``2 << L`` entries ``valid|class|c|c+k`` addressed by ``state << L | prefix``."""
    lens, codes, _ = state_arrays(ts)
    table = np.zeros(2 << L, np.uint32)
    for st in range(2):
        for j, cl in enumerate(ts.classes):
            c = int(lens[st * MAX_CLASSES + j])
            if not c:
                continue
            code = int(codes[st * MAX_CLASSES + j])
            lo = (st << L) + (code << (L - c))
            hi = (st << L) + ((code + 1) << (L - c))
            table[lo:hi] = (1 << 14) | (j << 10) | (c << 6) | (c + cl.k)
    return table


def decode_stripes2(payload_words, starts, stripe_words, stripe_len: int, numel: int, ts: TableSet, out):
    """Decode a two-state set's stripes (checked like the one-table reference kernel) into ``out``.

    Returns ``(rc, stripe, word)``: the decoder error code (0: none) and where it happened."""
    L = ts.max_code_len
    lut1 = state_lut1(ts, L).astype(np.int64)
    _, _, nxt = state_arrays(ts)
    kinds = np.array([cl.kind for cl in ts.classes], np.int64)
    ks = np.array([cl.k for cl in ts.classes], np.int64)
    params = np.array([cl.param for cl in ts.classes], np.int64)
    err = np.zeros(3, np.int64)
    from lutzip.codec._statesnumba import _decode2_kernel
    rc = _decode2_kernel(np.asarray(payload_words, np.uint32), starts, np.asarray(stripe_words, np.int64),
                         int(stripe_len), int(numel), lut1, L, nxt, kinds, ks, params, ts.lut3, out, err)
    return int(rc), int(err[1]), int(err[2])


# ----------------------------------------------------------------------------------------------- encoder
#: ``"auto"``: the C kernels of :mod:`lutzip.codec.states_c` where they build, else the Python / numba code;
#: ``"py"``: always the Python / numba code (the reference the C kernels are tested against)
KERNELS = "auto"


def _c():
    """The :mod:`lutzip.codec.states_c` module when its kernels are used, else ``None``."""
    if KERNELS != "auto":
        return None
    from lutzip.codec import states_c
    return states_c if states_c.lib() is not None else None


def _class_field(ts: TableSet, field: str) -> np.ndarray:
    """``field`` (``"kind"`` or ``"k"``) of each class of ``ts``, padded with 0 to :data:`MAX_CLASSES` (int64)."""
    return np.array([getattr(cl, field) for cl in ts.classes] + [0] * (MAX_CLASSES - len(ts.classes)), np.int64)


def _walk_args(stripe_words, ts: TableSet):
    """The walk kernel's stripe and table arguments: ``(stripe words, stripe starts, L, LUT1, kinds, ks)``."""
    sw = np.asarray(stripe_words, np.int64)
    starts = np.zeros(len(sw), np.int64)
    if len(sw):
        starts[1:] = np.cumsum(sw)[:-1]
    L = ts.max_code_len
    return sw, starts, L, ts.lut1(L).astype(np.int64), _class_field(ts, "kind"), _class_field(ts, "k")


def _walk(payload, stripe_words, ts: TableSet, mode: int, two: TableSet | None = None):
    """Run :func:`~lutzip.codec._statesnumba._walk_kernel` (or its C twin) over one-table stripes coded with
    ``ts``."""
    k = _c()
    if k is not None:
        _walk_kernel = k.walk
    else:
        from lutzip.codec._statesnumba import _walk_kernel
    sw, starts, L, lut1, kinds, ks = _walk_args(stripe_words, ts)
    pairs = np.zeros((MAX_CLASSES + 1, MAX_CLASSES), np.int64)
    if mode == 0:
        dummy = np.zeros(1, np.int64)
        _walk_kernel(payload, starts, sw, lut1, L, kinds, ks, 0, dummy, dummy, dummy,
                     np.zeros(1, np.uint32), np.zeros(1, np.uint32), pairs)
        return pairs
    lens, codes, nxt = state_arrays(two)
    n_words = int(np.sum((np.asarray(payload, np.uint32)[starts] & 0xFFFF).astype(np.int64) + 1)) if len(sw) else 0
    # a symbol gets at most MAX_CODE_LEN - 1 bits longer: a safe bound of the rewritten stripes
    out = np.empty(len(payload) + (n_words * (MAX_CODE_LEN - 1)) // 32 + 2 * len(sw) + 2, np.uint32)
    out_sw = np.zeros(len(sw), np.uint32)
    p = _walk_kernel(payload, starts, sw, lut1, L, kinds, ks, 1, nxt, codes, lens, out, out_sw, pairs)
    return out[:p].copy(), out_sw


def _stripe_pairs(payload, stripe_words, ts: TableSet) -> np.ndarray:
    """The class pairs of each one-table stripe (``(stripes, 17, 16)``; the C walk's mode 3): their sum is
    ``_walk(..., 0)``, and :func:`_transcoded_words` gives the stripe words ``_walk(..., 1, two)`` writes."""
    k = _c()
    sw, starts, L, lut1, kinds, ks = _walk_args(stripe_words, ts)
    out = np.zeros((len(sw), MAX_CLASSES + 1, MAX_CLASSES), np.int64)
    dummy = np.zeros(1, np.int64)
    k.walk(payload, starts, sw, lut1, L, kinds, ks, 3, dummy, dummy, dummy, None, np.zeros(1, np.uint32), out)
    return out


def _transcoded_words(stripe_pairs: np.ndarray, ts: TableSet, two: TableSet) -> np.ndarray:
    """The words of each stripe of ``_walk(..., 1, two)`` from the stripes' class pairs (:func:`_stripe_pairs`):
    a header word and the symbols' bits (the class code in the state the previous class leaves, then the same
    index bits) rounded up to words, at least one."""
    lens, _, nxt = state_arrays(two)
    ks = _class_field(ts, "k")
    state = np.append(nxt, 0)                          # the state after each previous class; 16: stripe start
    bits_of = lens.reshape(2, MAX_CLASSES)[state] + ks[None, :]
    bits = stripe_pairs.reshape(len(stripe_pairs), -1) @ bits_of.reshape(-1)
    return 1 + np.maximum((bits + 31) // 32, 1)


def _literals(two: TableSet):
    """``(lit_cls, lit_idx)``: for every ``W``-bit value the literal class that codes it in the fewest state-A bits
    (the first class among equals; -1: no class) and its index there."""
    k = _c()
    if k is not None:
        got = k.literals(two.word_bits, [cl.kind for cl in two.classes], [cl.k for cl in two.classes],
                         [cl.param for cl in two.classes], [cl.total for cl in two.classes], two.lut3)
        if got is not None:
            return got
    return _literals_py(two)


def _literals_py(two: TableSet):
    """:func:`_literals` in numpy (the reference)."""
    size = 1 << two.word_bits
    best = np.full(size, 1 << 20, np.int64)
    lit_cls = np.full(size, -1, np.int64)
    lit_idx = np.zeros(size, np.int64)
    for j, cl in enumerate(two.classes):
        if cl.kind == ZRUN:
            continue
        idx = np.arange(1 << cl.k, dtype=np.int64)
        vals = two.lut3[cl.param + idx].astype(np.int64) if cl.kind == LUT else cl.param + idx
        order = np.argsort(vals, kind="stable")         # a value listed twice keeps its first index
        vals, idx = vals[order], idx[order]
        first = np.ones(len(vals), bool)
        first[1:] = vals[1:] != vals[:-1]
        vals, idx = vals[first], idx[first]
        better = cl.total < best[vals]
        best[vals[better]] = cl.total
        lit_cls[vals[better]] = j
        lit_idx[vals[better]] = idx[better]
    return lit_cls, lit_idx


def _encode2(words: np.ndarray, S: int, two: TableSet, lits=None, count: bool = True):
    """Code ``words`` in stripes of ``S`` with the two-state set ``two``, zero runs planned state-aware
    (:func:`~lutzip.codec._statesnumba._encode2_kernel`). Returns ``(payload, stripe_words, pairs)``.
    ``lits``: the ``(lit_cls, lit_idx)`` to code literals with (default :func:`_literals` of ``two``);
    ``count`` False: the pairs are not counted (``None``; C kernels only)."""
    k = _c()
    if k is not None:
        _encode2_kernel, _run_dp = k.encode2, k.run_dp
    else:
        from lutzip.codec._statesnumba import _encode2_kernel, _run_dp
    lens, codes, nxt = state_arrays(two)
    ks = _class_field(two, "k")
    lit_cls, lit_idx = _literals(two) if lits is None else lits
    opt_cls, opt_cap, opt_lit = _run_options(two, lit_cls)
    S = int(S)
    g = np.zeros((2, S + 1, 2), np.int64)
    ch = np.zeros((2, S + 1, 2), np.int64)
    _run_dp(S, opt_cls, opt_cap, lens, ks, nxt, g, ch)
    n = int(words.size)
    n_stripes = -(-n // S)
    out = np.empty(n_stripes * 2 + (n * (MAX_SYMBOL_BITS + 1)) // 32 + 2, np.uint32)
    out_sw = np.zeros(n_stripes, np.uint32)
    pairs = np.zeros((MAX_CLASSES + 1, MAX_CLASSES), np.int64) if count or k is None else None
    p = _encode2_kernel(np.ascontiguousarray(words).reshape(-1), S, lit_cls, lit_idx, opt_cls, opt_cap, opt_lit,
                        lens, codes, ks, nxt, g, ch, out, out_sw, pairs)
    if p < 0:
        raise TableError(f"word {-1 - p} is not covered by a class of the table set in the state it is read in")
    return out[:p].copy(), out_sw, pairs


def _lengths(counts, L: int, every: bool) -> list:
    """Package-merge code lengths (at most ``L`` bits) of ``counts``; ``every``: classes of count 0 get a code
    too (the longest the others leave room for), as state A must give every class one."""
    if len(counts) <= MAX_CLASSES and _c() is not None:
        return _c().lengths(counts, L, every)
    from lutzip.codec.huffman import limited_code_lengths
    if every:
        counts = [float(v) if v > 0 else 1e-9 for v in counts]
    return limited_code_lengths(list(counts), L)


def _cost(pairs: np.ndarray, n: int, F: int, L: int):
    """``(bits, lens_a, lens_b)`` of the class codes of all symbols with follow set ``F``."""
    inF = np.array([(F >> j) & 1 for j in range(MAX_CLASSES)] + [0], bool)
    ca = pairs[~inF].sum(0)[:n]
    cb = pairs[inF].sum(0)[:n]
    la = _lengths(ca.tolist(), L, True)
    lb = _lengths(cb.tolist(), L, False) if cb.any() else [0] * n
    return int((ca * np.array(la)).sum() + (cb * np.array(lb)).sum()), la, lb


def design(pairs: np.ndarray, ts: TableSet, L: int = 8, greedy: bool = True, max_steps: int = 8):
    """The best two-state version of ``ts`` for symbols with class-pair counts ``pairs`` (17 x 16; row 16: the
    stripe start), or ``None`` when no follow set codes them in fewer bits than ``ts`` itself.

    ``F`` is tried as the ZRUN classes, and (``greedy``) grown or shrunk one class at a time from there (from
    the best single class when there is no ZRUN class) while that saves bits. Returns ``(tableset, bits
    saved)``: the class-code bits of the symbols (index bits do not change), the metadata bytes it adds included.
    """
    n = len(ts.classes)
    L = max(int(L), ts.max_code_len)
    used = pairs.sum(0)[:n]
    base = int((used * np.array([cl.c for cl in ts.classes])).sum())
    zr = sum(1 << j for j, cl in enumerate(ts.classes) if cl.kind == ZRUN)
    k = _c()
    got = (k.design_search(pairs, n, L, zr, greedy, max_steps) if k is not None
           else _search_py(pairs, n, L, zr, greedy, max_steps))
    if got is None:
        return None
    best, bits, la, lb = got
    saved = base - bits - 8 * (2 + n)
    if saved <= 0 or not any(lb):
        return None
    two = TableSet(ts.word_bits, [ClassSpec(int(a), cl.kind, cl.k, cl.param) for a, cl in zip(la, ts.classes)],
                   ts.lut3.copy(), lens_b=tuple(int(b) for b in lb), follow=int(best))
    two.validate()
    return two, saved


def _search_py(pairs: np.ndarray, n: int, L: int, zr: int, greedy: bool, max_steps: int):
    """The follow set of :func:`design` and its ``(F, bits, lens_a, lens_b)``, or ``None`` (the Python reference
    of :func:`lutzip.codec.states_c.design_search`)."""
    tried = {}

    def cost(F):
        if F not in tried:
            tried[F] = _cost(pairs, n, F, L)
        return tried[F][0]

    best = None
    if zr:
        best = zr
    if greedy:
        F = zr if zr else min((1 << j for j in range(n)), key=cost)
        for _ in range(max_steps):
            nb = min((F ^ (1 << j) for j in range(n) if F ^ (1 << j)), key=cost, default=F)
            if cost(nb) >= cost(F):
                break
            F = nb
        if best is None or cost(F) < cost(best):
            best = F
    if best is None:
        return None
    cost(best)
    bits, la, lb = tried[best]
    return best, bits, la, lb


def _plain(c, s):
    """``(payload, stripe words)`` of stream ``s`` as plain stripes (a row stream's: :func:`lutzip.codec.rows.to_plain`,
    the symbols of each row stripe behind a plain header of its coded words)."""
    if not getattr(s, "rows", False):
        return c.stripe_payload(s), s.stripe_words
    from lutzip.codec.rows import to_plain
    p, sw, _ = to_plain(c.stripe_payload(s), s.stripe_words)
    return p, sw


def _back(c, s, coded):
    """Plain stripes ``coded = (payload, stripe words)`` of stream ``s`` as its own kind of stripes again."""
    if not getattr(s, "rows", False):
        return coded
    from lutzip.codec.rows import from_plain, to_plain
    heads = to_plain(c.stripe_payload(s), s.stripe_words)[2]
    return from_plain(coded[0], coded[1], heads)


def _stream_words(c, s, ts):
    """The words of stream ``s`` as coded (a row stream: a list of each stripe's coded words)."""
    from lutzip.codec.decode import decode_stripes
    if not getattr(s, "rows", False):
        return decode_stripes(c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts)
    from lutzip.codec.rows import plain_counts
    p, sw = _plain(c, s)
    out, p0 = [], 0
    for n, nw in zip(plain_counts(p, sw), np.asarray(sw, np.int64).tolist()):
        out.append(decode_stripes(p[p0:p0 + nw], np.array([nw], np.uint32), n, n, ts))
        p0 += nw
    return out


def _encode2_stream(c, s, words, two):
    """:func:`_encode2` of a stream's words (:func:`_stream_words`), a row stream's stripe by stripe."""
    if not getattr(s, "rows", False):
        return _encode2(words, s.stripe_len, two)
    parts = [_encode2(w, len(w), two) for w in words]
    payload = np.concatenate([p for p, _, _ in parts]) if parts else np.zeros(0, np.uint32)
    sw = np.concatenate([q for _, q, _ in parts]) if parts else np.zeros(0, np.uint32)
    pairs = sum(pr for _, _, pr in parts)
    payload, sw = _back(c, s, (payload, sw))
    return payload, sw, pairs


def _replan(c, group, ts, two, coded, after, L, greedy, rounds, cache=None):
    """Code the group's streams again with zero runs planned for the two states (:func:`_encode2`), the code
    lengths re-derived from that parse's pairs, ``rounds`` times; the smallest of all (the transcoded stripes
    included) is kept. Returns ``(tableset, [(payload, stripe_words)], bytes)``.

    ``cache``: a dict kept across the calls of one group: the streams' words, and each table set's coding (by its
    code lengths and follow set: the same set codes the words the same way)."""
    cache = {} if cache is None else cache
    if "words" not in cache:
        cache["words"] = [_stream_words(c, s, ts) for s in group]
    words = cache["words"]
    best = (after, two, coded)
    cur = two
    for _ in range(int(rounds)):
        key = (cur.follow, cur.lens_b, tuple(cl.c for cl in cur.classes))
        if key not in cache:
            try:
                cache[key] = [_encode2_stream(c, s, w, cur) for w, s in zip(words, group)]
            except TableError:                      # a literal lands in a state where its class has no code
                cache[key] = None
        res = cache[key]
        if res is None:
            break
        size = sum(4 * int(sw.astype(np.int64).sum()) for _, sw, _ in res) + extra_bytes(cur)
        if size < best[0]:
            best = (size, cur, [(p, sw) for p, sw, _ in res])
        got = design(sum(pr for _, _, pr in res), ts, L, greedy)
        if got is None:
            break
        cur = got[0]
    return best[1], best[2], best[0]


def _redesign(c, group, ts, L, memo=None):
    """:func:`lutzip.codec.states_design.redesign` on a group's streams, as ``(after, tableset, coded)`` with
    ``after`` in the terms of :func:`apply` (stream bytes + the table bytes beyond the one-table set's), or
    ``None``. Only the design of the smallest estimate is coded (:func:`_designs`; the estimate ranked the coded
    sizes of every candidate alike on nudenet int8 0 %'s 15 table sets). ``memo``: :func:`_memo`."""
    from lutzip.codec import states_design as sd
    if any(getattr(s, "rows", False) for s in group):
        return None                                 # row streams: not redesigned (their stripes' lengths vary)
    memo = _memo() if memo is None else memo
    found = _designs(c, group, ts, L, memo)
    if not found:
        return None
    words = [_words(c, s, ts, memo) for s in group]
    joint = _joint(c, group, ts, memo)
    got = sd.redesign(words, [s.stripe_len for s in group], ts, L, joint=joint, found=found, n_coded=1,
                      refine=REFINE)
    if got is None:
        return None
    two, coded, size = got
    return size - sd.table_cost(ts), two, coded


def _memo() -> dict:
    """What the redesign path computes once per stream or set of streams (words, pair counts, designs)."""
    return {"words": {}, "joint": {}, "designs": {}, "quick": {}, "two": {}, "axes": {}, "ivals": {}}


def _words(c, s, ts, memo):
    """The words of stream ``s`` (coded with ``ts``), decoded once; in the axis order :func:`_axis_order` picks for
    a redesigned 8-bit tensor (``memo["axes"]``)."""
    from lutzip.codec.decode import decode_stripes
    if s.index not in memo["words"]:
        w = decode_stripes(c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts)
        got = _axis_order(c, s, w, memo) if ts.word_bits == 8 else None
        if got is not None:
            memo["axes"][s.index], w = got
        memo["words"][s.index] = w
    return memo["words"][s.index]


#: a redesigned 8-bit tensor of at least this many words that owns its stream is also tried in other axis orders
AXES_MIN_WORDS = 16384
#: the orders tried (those of the tensor's axes; 4-D: a convolution's kernel axes and its channel axes swapped)
AXES_TRIED = {2: [(1, 0)], 3: [(0, 2, 1), (1, 0, 2)], 4: [(0, 1, 3, 2), (1, 0, 2, 3), (1, 0, 3, 2)]}
#: a new order must save this many bytes of the two-state order-0 estimate (the index stores it in a few bytes)
AXES_MIN_GAIN = 16


#: intervals :func:`_axis_order` keeps of the stored order's scan (enough for :func:`_designs`' candidates)
IVALS_KEPT = 16


def _axis_order(c, s, words, memo=None):
    """``(axes, words)``: an axis order (``numpy.transpose`` of the tensor in its own order) in which the stream's
    words have a smaller two-state order-0 estimate than in the order they are coded in, and the words in it;
    or ``None``. Two code tables read a word in the state the word before it leaves: the order decides which
    words neighbour (docs/log/2026-12-compression.md, 2026-12-07 late night). The estimate: the best of the
    stored order's value sets (:func:`lutzip.codec.states_design.candidates`), by the pairs of each order."""
    from lutzip.codec import layout
    from lutzip.codec import states_design as sd
    if len(s.members) != 1 or getattr(s, "rows", False) or s.numel < AXES_MIN_WORDS:
        return None
    t = c.tensors[s.members[0]]
    tried = AXES_TRIED.get(len(t.shape))
    if not tried or (t.stream_numel or t.numel) != s.numel:
        return None
    joint = sd.pair_counts([words])
    ivals = sd.intervals(None, IVALS_KEPT, joint=joint)
    sets = sd.candidates([words], 1, 1, joint=joint, ivals=ivals)

    def bits(j):
        return min(sd.ideal_bits(*sd.joint_state_counts(j, T)) for T in sets)

    own = np.asarray(words).reshape(t.stored_shape)           # the tensor in its own order: a view, no copy
    own = own if t.axes is None else np.transpose(own, np.argsort(t.axes))
    best, best_bits, best_words = None, bits(joint) - 8 * AXES_MIN_GAIN, None
    for axes in tried:
        if axes == t.axes:
            continue
        w = np.transpose(own, axes)                             # counted as a view (layout.stored's order)
        b = bits(sd.pair_counts([w]))
        if b < best_bits:
            best, best_bits, best_words = axes, b, w
    if best is None and memo is not None:       # the words stay in this order: its counts and scan are kept
        memo["joint"][s.index] = joint
        memo["ivals"][s.index] = ivals
    return None if best is None else (best, layout.stored(own, best).reshape(-1))


def _designs(c, group, ts, L, memo, quick: bool = False):
    """:func:`lutzip.codec.states_design.designs` of the group's streams (their pair counts summed from each
    stream's, counted once), smallest estimate first; ``quick``: its first pass only (one multiplier, ``full_top``
    0), unless the full designs are known."""
    from lutzip.codec import states_design as sd
    key = (tuple(sorted(s.index for s in group)), id(ts))
    # one stream: the interval scan of _axis_order's counts, where they are the coded order's
    ivals = memo["ivals"].get(group[0].index) if len(group) == 1 else None
    if quick and key not in memo["designs"]:
        if key not in memo["quick"]:
            words = [_words(c, s, ts, memo) for s in group]
            memo["quick"][key] = sd.designs(words, ts, L, joint=_joint(c, group, ts, memo), full_top=0, ivals=ivals)
        return memo["quick"][key]
    if key not in memo["designs"]:
        words = [_words(c, s, ts, memo) for s in group]
        memo["designs"][key] = sd.designs(words, ts, L, joint=_joint(c, group, ts, memo), ivals=ivals)
    return memo["designs"][key]


def _joint(c, group, ts, memo):
    """The pair counts of the group's streams (:func:`lutzip.codec.states_design.pair_counts`), each stream's
    counted once."""
    from lutzip.codec import states_design as sd
    for s in group:
        if s.index not in memo["joint"]:
            memo["joint"][s.index] = sd.pair_counts([_words(c, s, ts, memo)])
    return (sum(memo["joint"][s.index][0] for s in group), sum(memo["joint"][s.index][1] for s in group))


def _estimate(c, group, ts, L, memo) -> float:
    """Estimated bytes of the group's streams with a redesigned table set of their own, its table bytes counted
    (:func:`lutzip.codec.states_design.table_cost`); infinite when nothing can be designed."""
    found = _designs(c, group, ts, L, memo, quick=SPLIT_QUICK)
    return found[0][0] / 8 if found else float("inf")


#: the splits chosen on the quick designs (:func:`_designs`' ``quick``; nudenet int8 0 %: +67 B, not the default)
SPLIT_QUICK = False


#: the coded redesigns' values moved between classes (:func:`lutzip.codec.states_design._refine`)
REFINE = True

#: with ``redesign``, a stream of at least this many words is also tried with a table set of its own
SPLIT_MIN = 32768


def _two_tables(c, group, ts, pairs, L, greedy, replan, plains=None, sps=None):
    """The two-code-table versions of ``ts`` for the streams of ``group`` (class-pair counts ``pairs``): ``(after,
    tableset, coded)`` of the smallest, ``after`` the streams' bytes plus the metadata bytes the second table adds,
    or ``None``. ``plains``: the streams as plain stripes (:func:`_plain`); ``sps``: their per-stripe class pairs
    (:func:`_stripe_pairs`, C kernels and no row streams): the transcoded stripes are then sized from the pairs and
    ``coded`` is a function that writes the kept one (the same bytes as writing each one)."""
    plains = plains if plains is not None else [_plain(c, s) for s in group]
    best, seen, cache = None, set(), {}
    # F = the ZRUN classes, and F searched greedily: each coded (and re-planned) in full, the smaller kept
    for g in ((False, True) if greedy else (False,)):
        got = design(pairs, ts, L, g)
        if got is None:
            continue
        two = got[0]
        key = (two.follow, two.lens_b, tuple(cl.c for cl in two.classes))
        if key in seen:
            continue
        seen.add(key)
        if sps is not None:
            after = sum(4 * int(_transcoded_words(sp, ts, two).sum()) for sp in sps) + extra_bytes(two)
            coded = (lambda two=two: [_walk(p, sw, ts, 1, two) for p, sw in plains])
        else:
            coded = [_back(c, s, _walk(p, sw, ts, 1, two)) for s, (p, sw) in zip(group, plains)]
            after = sum(4 * int(sw.astype(np.int64).sum()) for _, sw in coded) + extra_bytes(two)
        if replan:
            two, coded, after = _replan(c, group, ts, two, coded, after, L, g, replan, cache)
        if best is None or after < best[0]:
            best = (after, two, coded)
    return best


def _two_tables_memo(c, group, ts, pairs, L, greedy, replan, plains, sps, memo):
    """:func:`_two_tables`, computed once per group when ``memo`` is given (``apply(redesign=True)`` asks for each
    group twice: with and without the redesign)."""
    if memo is None:
        return _two_tables(c, group, ts, pairs, L, greedy, replan, plains, sps)
    key = (tuple(s.index for s in group), id(ts))
    if key not in memo["two"]:
        memo["two"][key] = _two_tables(c, group, ts, pairs, L, greedy, replan, plains, sps)
    return memo["two"][key]


def _best_for(c, group, ts, L, greedy, replan, redesign, pairs=None, memo=None):
    """``(after, tableset, coded, redesigned)`` of the smallest coding of ``group``'s streams: one table (``ts``
    itself, ``coded`` None), two code tables (:func:`_two_tables`), or (``redesign``) classes cut for two states;
    ``after`` = the streams' bytes + the table bytes beyond ``ts``'s own."""
    plains, sps = [_plain(c, s) for s in group], None
    # C kernels and no row streams: the stripes' class pairs give the transcoded stripes' sizes (_two_tables)
    if _c() is not None and not any(getattr(s, "rows", False) for s in group):
        sps = [_stripe_pairs(p, sw, ts) for p, sw in plains]
        pairs = sum(sp.sum(0) for sp in sps)
    elif pairs is None:
        pairs = sum(_walk(p, sw, ts, 0) for p, sw in plains)
    best = (sum(s.n_bytes for s in group), ts, None, False)
    got = _two_tables_memo(c, group, ts, pairs, L, greedy, replan, plains, sps, memo)
    if got is not None and got[0] < best[0]:
        best = (*got, False)
    if redesign and ts.word_bits == 8:
        got = _redesign(c, group, ts, L, memo)
        if got is not None and got[0] < best[0]:
            best = (*got, True)
    return best


def _split(c, group, ts, L, greedy, replan, memo=None):
    """With ``redesign``: the group's streams of at least :data:`SPLIT_MIN` words each with a table set of its own
    and the others together (a shared set is cut for all its streams' contexts at once; nudenet's dense 3x3
    convolutions want different value sets ``S``). The split is chosen on the designs' estimates (greedily: one
    stream at a time, largest first, while the estimate of the parts, each with its table bytes, is smaller) and
    only the chosen parts are coded. Returns ``(after, parts)`` with ``parts`` a list of ``(streams, tableset,
    coded, redesigned)`` and ``after`` the streams' bytes plus every part's table bytes beyond ``ts``'s, or
    ``None`` when there is nothing to split."""
    from lutzip.codec import states_design as sd
    memo = _memo() if memo is None else memo
    big = [s for s in group if s.numel >= SPLIT_MIN and not getattr(s, "rows", False)]
    if len(group) < 2 or not big or any(getattr(s, "rows", False) for s in group):
        return None
    rest, alone = list(group), []
    total = _estimate(c, rest, ts, L, memo)
    for s in sorted(big, key=lambda s: -s.numel):   # greedy: split off one stream at a time while that pays
        if len(rest) < 2:
            break
        others = [x for x in rest if x is not s]
        got = total - _estimate(c, rest, ts, L, memo) + _estimate(c, [s], ts, L, memo) + \
            _estimate(c, others, ts, L, memo)
        if got < total:
            total, rest = got, others
            alone.append(s)
    if not alone:
        return None
    parts, after = [], -sd.table_cost(ts)
    for part in [rest] + [[s] for s in alone]:
        got = _redesign(c, part, ts, L, memo)
        if got is None:
            return None
        after += got[0] + sd.table_cost(ts)
        parts.append((part, got[1], got[2], True))
    return after, parts


def apply(c, L: int = 8, greedy: bool = True, report: list | None = None, replan: int = 2, redesign: bool = False):
    """A copy of container ``c`` whose table sets have two code tables where that makes their streams smaller.

    Parameters
    ----------
    c : lutzip.codec.container.Container
        A container written by the one-table encoder (its stripes are read back; they must be valid).
    L : int
        Longest code in either state (the decoder's LUT1 address bits, the state bit not counted).
    greedy : bool
        Also try follow sets other than the ZRUN classes (:func:`design`).
    replan : int
        Rounds of coding the streams again with zero runs planned for the two states and the code lengths
        re-derived from that parse (:func:`_replan`; 0: only the one-table encoder's symbols, rewritten).
    redesign : bool
        For 8-bit table sets, also try classes cut for the two states (:func:`lutzip.codec.states_design.redesign`:
        a new LUT3 and class set, value sets beyond magnitude thresholds), and shared 8-bit sets split into a set
        per stream of at least :data:`SPLIT_MIN` words (greedily, on the designs' estimates); a redesigned tensor
        of its own stream may be coded in another axis order (:func:`_axis_order`); kept where its streams plus its
        table bytes (:func:`lutzip.codec.states_design.table_cost`) are the smallest, and the whole file only where
        it is smaller than without ``redesign``. Off by default: nudenet int8 0 % 2 004 900 -> 1 995 942 B (-0.45 %,
        below xz -9e's 1 996 032) for 6.8 s CPU against 0.2 s (the default two-table ``compress``: 0.38 s; was
        18.8 s before the whole cut moved to C; docs/log/2026-12-compression.md, 2026-12-07 late night and
        2026-12-08 h18x).
    report : list, optional
        Gets one dict per table set that was tried: ``{"table", "follow", "before", "after", "redesigned",
        "split"}`` (payload bytes of its streams; ``after`` counts the table bytes a redesigned set adds or saves;
        ``split``: the number of table sets the group was split into, 0 if not).

    Returns
    -------
    Container
        The same tensors, with new table sets, stripes, stripe CRCs and offsets (written as format version 5
        when any table set has two code tables; else ``c`` itself).
    """
    from lutzip.codec import container as ct
    if redesign:                                       # its choices weigh table bytes as compressed (an estimate):
        rep_plain, rep, memo = [], [], _memo()         # the file is never larger than without it
        plain = _apply(c, L, greedy, rep_plain, replan, False, memo)
        out = _apply(c, L, greedy, rep, replan, True, memo)
        if out is not c and len(ct.to_bytes(out)) < len(ct.to_bytes(plain)):
            plain, rep_plain = out, rep
        if report is not None:
            report.extend(rep_plain)
        return plain
    return _apply(c, L, greedy, report, replan, False)


def _apply(c, L, greedy, report, replan, redesign, memo=None):
    """:func:`apply`'s work (``memo``: what ``apply(redesign=True)``'s two calls share, :func:`_memo`)."""
    from lutzip.codec import container as ct
    streams = c.streams
    by_table = {}
    for s in streams:
        by_table.setdefault(s.table, []).append(s)
    new_tables = list(c.tables)
    new_stripes = {}                                   # stream index -> (payload, stripe_words)
    retable = {}                                       # stream index -> its new table index (a split group)
    new_axes = {}                                      # stream index -> the axis order its words are coded in
    for ti, group in by_table.items():
        ts = c.tables[ti]
        if ts.lens_b is not None:
            continue
        before = sum(s.n_bytes for s in group)
        after, two, coded, redesigned = _best_for(c, group, ts, L, greedy, replan, redesign, memo=memo)
        parts = None
        if redesign and ts.word_bits == 8:
            got = _split(c, group, ts, L, greedy, replan, memo)
            if got is not None and got[0] < min(after, before):
                after, parts = got
        if report is not None:
            report.append({"table": ti, "follow": getattr(two, "follow", 0), "before": before, "after": after,
                           "redesigned": redesigned if parts is None else any(p[3] for p in parts),
                           "split": 0 if parts is None else len(parts)})
        if after >= before:
            continue
        if parts is None:
            parts = [(group, two, coded, redesigned)]
        for i, (part, two, coded, redone) in enumerate(parts):
            if callable(coded):                         # a transcoding sized from the class pairs: written now
                coded = coded()
            if redone and memo is not None:             # a redesigned stream may be coded in another axis order
                new_axes.update((s.index, memo["axes"][s.index]) for s in part if s.index in memo["axes"])
            if i:
                retable.update((s.index, len(new_tables)) for s in part)
                new_tables.append(two)
            else:
                new_tables[ti] = two
            for j, s in enumerate(part):
                new_stripes[s.index] = (c.stripe_payload(s), s.stripe_words) if coded is None else coded[j]
    if not new_stripes:
        return c
    chunks, tensors, offset = [], list(c.tensors), 0
    for s in streams:                                   # the streams tile the payload in stream order
        if s.index in new_stripes:
            payload, sw = new_stripes[s.index]
            starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
            mv = memoryview(payload.astype("<u4", copy=False)).cast("B")
            crcs = np.array([zlib.crc32(mv[4 * starts[j]:4 * starts[j + 1]]) for j in range(len(sw))], np.uint32)
        else:
            payload, sw, crcs = c.stripe_payload(s), s.stripe_words, s.stripe_crcs
        for i in s.members:
            tensors[i] = dataclasses.replace(tensors[i], offset=offset, stripe_words=sw, stripe_crcs=crcs,
                                             table=retable.get(s.index, tensors[i].table),
                                             axes=new_axes.get(s.index, tensors[i].axes))
        chunks.append(np.asarray(payload, np.uint32))
        offset += 4 * len(payload)
    payload = np.concatenate(chunks) if chunks else np.zeros(0, np.uint32)
    return ct.Container(new_tables, tensors, payload)
