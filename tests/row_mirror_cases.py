"""Stimulus and reference of the row mirror stage (:mod:`lutzip.hdl.stages.row_mirror`), shared by its MyHDL test
(tests/test_row_mirror.py) and its four-simulator test (tests/test_row_mirror_sims.py).

A *case* is the stage's input (words ``(data, last, user)`` in order, one descriptor ``(mode, neg, N)`` per row)
and what it must output (``(data, last, user)``). Good rows come from :func:`lutzip.codec.symmetry.expand` (the
reference decoder's expansion of mirrored rows); :func:`model` is the stage's specification in Python (bad
descriptors, error markers, stripes ending inside rows), its row data again from ``symmetry``.
"""
from __future__ import annotations

import numpy as np

from lutzip.codec import symmetry as sym
from lutzip.hdl.stages.row_mirror import MIRROR, NEG_MIRROR, PLAIN

#: descriptor word type of each dtype (row_mirror's ``d_neg``)
NEG_KIND = {"int8": 0, "uint8": 3, "int16": 1, "uint16": 3, "float16": 2, "bfloat16": 2}
KIND_DTYPE = {0: "int8", 1: "int16", 2: "float16", 3: "uint16"}
MODES = {PLAIN: sym.PLAIN, MIRROR: sym.MIRROR, NEG_MIRROR: sym.NEG_MIRROR}


def random_words(rng, n, dtype):
    """``n`` words of ``dtype`` (as unsigned ints), with zeros, -0.0 and extreme values mixed in."""
    bits = 8 if dtype in ("int8", "uint8") else 16
    w = rng.integers(0, 1 << bits, n)
    special = [0, (1 << bits) - 1, 1 << (bits - 1), 1]
    if dtype in ("float16", "bfloat16"):
        special += [0x8000, 0x7FFF, 0x8001]
    pick = rng.random(n) < 0.2
    w[pick] = rng.choice(special, int(pick.sum()))
    return w.astype(np.int64)


def expand_row(head, mode, N, dtype):
    """The full row of ``mode`` from its coded words ``head`` (``symmetry.expand`` of one row)."""
    arr = np.asarray(head, np.uint16)
    return [int(x) for x in sym.expand(arr, (1, N), [(MODES[mode], None, None)], dtype)]


def random_rows(rng, n_rows, W=16, max_n=64, modes=(PLAIN, MIRROR, NEG_MIRROR), dtypes=None):
    """``n_rows`` good rows: ``(mode, dtype, N, coded words, full row)``."""
    dtypes = dtypes or (("int8", "uint8") if W == 8 else ("int8", "uint8", "int16", "uint16", "float16", "bfloat16"))
    rows = []
    for _ in range(n_rows):
        mode = int(rng.choice(modes))
        dtype = str(rng.choice(dtypes))
        if mode == NEG_MIRROR and NEG_KIND[dtype] == 3:
            mode = MIRROR
        if mode == PLAIN:
            N = int(rng.integers(1, max_n + 1))
            coded = random_words(rng, N, dtype)
        else:
            N = 2 * int(rng.integers(1, max_n // 2 + 1))
            coded = random_words(rng, N // 2 + 1, dtype)
        rows.append((mode, dtype, N, [int(x) for x in coded], expand_row(coded, mode, N, dtype)))
    return rows


def good_case(rows, stripe_rows, rng):
    """Input words, descriptors and expected output of ``rows`` cut into stripes of 1 .. ``stripe_rows`` rows
    (tlast on a stripe's last coded word at the input, on its last row's last word at the output)."""
    words, descs, expected = [], [], []
    i = 0
    while i < len(rows):
        k = int(rng.integers(1, stripe_rows + 1))
        group = rows[i:i + k]
        i += k
        for j, (mode, dtype, N, coded, full) in enumerate(group):
            end = j == len(group) - 1
            descs.append((mode, NEG_KIND[dtype], N))
            words += [(w, int(end and t == len(coded) - 1), 0) for t, w in enumerate(coded)]
            expected += [(w, int(end and t == len(full) - 1), 0) for t, w in enumerate(full)]
    return words, descs, expected


def desc_bad(desc, W, max_n):
    """Whether the stage rejects a descriptor (docs/CORE.md, row mirror stage)."""
    mode, neg, N = desc
    if mode == PLAIN:
        return N == 0
    if mode in (MIRROR, NEG_MIRROR):
        return N % 2 == 1 or N < 2 or N > max_n or (mode == NEG_MIRROR and (neg == 3 or (W == 8 and neg != 0)))
    return True


def model(words, descs, W=16, max_n=512, err=10):
    """What the stage outputs for input ``words`` ``(data, last, user)`` and descriptors ``descs``: ``(rows out,
    err pulses, words consumed, descriptors consumed)``. Stops where the stage would wait for a descriptor."""
    out, errs = [], []
    di = 0
    i = 0
    state = "start"
    row = None
    while i < len(words):
        data, last, user = words[i]
        if state == "drop":
            i += 1
            if user:
                out.append((data, last, 1))
            if last:
                state = "start"
            continue
        if user:
            out.append((data, last, 1))
            i += 1
            state, row = "start", None
            continue
        if state == "start":
            if di >= len(descs):
                break                       # the stage waits for a descriptor
            mode, neg, N = descs[di]
            di += 1
            i += 1
            if desc_bad((mode, neg, N), W, max_n):
                out.append((err, 1, 1))
                errs.append(err)
                if not last:
                    state = "drop"
                continue
            coded = N if mode == PLAIN else N // 2 + 1
            row = [mode, neg, N, coded, [data]]
            out.append((data, last, 0))
            if coded == 1:
                state = "start"
            else:
                state = "row"
            continue
        # mid-row
        mode, neg, N, coded, got = row
        got.append(data)
        i += 1
        if len(got) < coded:
            out.append((data, last, 0))
            continue
        state = "start"
        if mode == PLAIN or N < 4:
            out.append((data, last, 0))
            continue
        out.append((data, 0, 0))
        full = expand_row(got, mode, N, KIND_DTYPE[neg])
        tail = full[N // 2 + 1:]
        out += [(w, int(last and t == len(tail) - 1), 0) for t, w in enumerate(tail)]
    return out, errs, i, di


def error_case(rng, W=16, max_n=64, n_rows=60):
    """Good rows mixed with bad descriptors, upstream error markers (inside rows and at row starts) and stripes
    ending inside rows; the expected output from :func:`model`."""
    rows = random_rows(rng, n_rows, W, max_n)
    words, descs = [], []
    for mode, dtype, N, coded, full in rows:
        r = rng.random()
        if r < 0.12:
            # a bad descriptor: mode 3, odd / too long / too short mirror, NEG of unsigned, PLAIN of 0 words
            bad = [(3, NEG_KIND[dtype], N), (MIRROR, 0, max_n + 2), (NEG_MIRROR, 0, 3), (MIRROR, 1, 0),
                   (NEG_MIRROR, 3, 8), (PLAIN, 0, 0)][int(rng.integers(0, 6))]
            descs.append(bad)
        else:
            descs.append((mode, NEG_KIND[dtype], N))
        for t, w in enumerate(coded):
            if rng.random() < 0.02:
                words.append((int(rng.integers(1, 9)), 1, 1))     # an upstream error marker
            words.append((w, int(rng.random() < 0.05), 0))
        if rng.random() < 0.3:
            words[-1] = (words[-1][0], 1, 0)
    words.append((0, 1, 0))
    descs += [(PLAIN, 0, 1)] * 4
    out, errs, n_in, n_d = model(words, descs, W, max_n)
    return words[:n_in], descs[:n_d], out, errs
