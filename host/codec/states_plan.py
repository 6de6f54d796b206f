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
from lutzip.codec.tables import MAX_CLASSES, ZRUN, TableSet

#: re-design rounds on the statistics for each starting follow set (``apply`` codes 2)
ROUNDS = 2


def available() -> bool:
    """Whether the C kernels this path needs are built."""
    return st._c() is not None


def literals(ts: TableSet):
    """``(lit_cls, lit_idx)`` of the one-table set ``ts``: the class and index each value is coded with, in
    both the statistics and the two-state coding (:func:`lutzip.codec.states._literals`)."""
    return st._literals(ts)


def stats(words_list, S_list, lit_cls):
    """The token statistics of streams (words, stripe length each) coded with one table set, together:
    ``(ll, runs)`` (:func:`lutzip.codec.states_c.tokstats`; ``runs`` rows of every stream)."""
    k = st._c()
    ll = np.zeros((17, 16), np.int64)
    runs = []
    for w, S in zip(words_list, S_list):
        a, r = k.tokstats(w, int(S), lit_cls)
        ll += a
        runs.append(r)
    runs = np.concatenate(runs) if runs else np.zeros((0, 4), np.int64)
    return ll, runs


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
    g = np.zeros((2, R + 1, 2), np.int64)
    ch = np.zeros((2, R + 1, 2), np.int64)
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


def plan(ll, runs, ts: TableSet, lit_cls, L: int = 8, greedy: bool = True, rounds: int = ROUNDS):
    """The two-code-table version of ``ts`` with the fewest bits on the statistics ``(ll, runs)``: ``(two,
    bits, one_bits)`` (``bits`` with the second table's metadata bytes), ``two`` ``None`` where no design has
    fewer bits than ``ts`` itself (``one_bits``)."""
    ks = st._class_field(ts, "k")
    opt = _options(ts, lit_cls)
    base, pairs0 = one_table(ll, runs, ts, lit_cls)
    if base < 0:
        return None, None, base
    best, seen = None, set()
    for g in ((False, True) if greedy else (False,)):
        got = st.design(pairs0, ts, L, g)
        cur = got[0] if got is not None else None
        for _ in range(int(rounds)):
            if cur is None:
                break
            key = (cur.follow, cur.lens_b, tuple(cl.c for cl in cur.classes))
            if key in seen:
                break
            seen.add(key)
            lens, _, nxt = st.state_arrays(cur)
            bits, pairs = evaluate(ll, runs, lens, nxt, ks, *opt)
            if bits < 0:
                break
            bits += 8 * st.extra_bytes(cur)
            if best is None or bits < best[1]:
                best = (cur, bits)
            got = st.design(pairs, ts, L, g)
            cur = got[0] if got is not None else None
    if best is None or best[1] >= base:
        return None, None, base
    return best[0], best[1], base


def code(words, S: int, two: TableSet, lits):
    """``(payload, stripe_words)`` of ``words`` in stripes of ``S`` coded with ``two`` (the literals of the
    one-table set, :func:`literals`)."""
    payload, sw, _ = st._encode2(words, S, two, lits)
    return payload, sw
