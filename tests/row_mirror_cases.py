"""Stimulus and reference of the row mirror stage (:mod:`lutzip.hdl.stages.row_mirror`), shared by its MyHDL test
(tests/test_row_mirror.py) and its four-simulator test (tests/test_row_mirror_sims.py); :func:`basis` (a
DFT-like tensor of mirrored, negated-mirror and plain rows) is the input of the software and core row-stream tests.

A *case* is the stage's input -- the core's decoded words ``(data, last, user)`` in order and one descriptor
``(err, rows, neg, N - 1, modes)`` per packet -- and what it must output (``(data, last, user)``). A good row
stripe's output comes from :func:`lutzip.codec.symmetry.expand` (the reference expansion of mirrored rows), one
row at a time, checked against :func:`lutzip.codec.symmetry.expand_stripe` (the row stripe oracle);
:func:`model` is the stage's specification in Python (bad descriptors, plain packets, error markers from the
core), its row data again from ``symmetry``. :func:`header_model` is :mod:`lutzip.hdl.stages.row_header`'s.
"""
from __future__ import annotations

import numpy as np

from lutzip.codec import symmetry as sym

PLAIN, MIRROR, NEG_MIRROR = 0, 1, 2
#: descriptor word type (row_mirror's ``d_neg``) -> symmetry dtype
KIND_DTYPE = {0: "int8", 1: "int16", 2: "float16"}
MODES = {PLAIN: sym.PLAIN, MIRROR: sym.MIRROR, NEG_MIRROR: sym.NEG_MIRROR}


def random_words(rng, n, dtype):
    """``n`` words of ``dtype`` (as unsigned ints), with zeros, -0.0 and extreme values mixed in."""
    bits = 8 if dtype == "int8" else 16
    w = rng.integers(0, 1 << bits, n)
    special = [0, (1 << bits) - 1, 1 << (bits - 1), 1]
    if dtype == "float16":
        special += [0x8000, 0x7FFF, 0x8001]
    pick = rng.random(n) < 0.2
    w[pick] = rng.choice(special, int(pick.sum()))
    return [int(x) for x in w]


def expand_row(head, mode, N, kind):
    """The full row of ``mode`` from its coded words ``head`` (``symmetry.expand`` of one row)."""
    arr = np.asarray(head, np.uint16)
    return [int(x) for x in sym.expand(arr, (1, N), [(MODES[mode], None, None)], KIND_DTYPE[kind])]


def stripe_oracle(coded, N, modes, kind):
    """A row stripe's output words by ``symmetry.expand_stripe``, the decoders' reference (FORMAT.md 3.1)."""
    return [int(x) for x in sym.expand_stripe(coded, N, modes, int(kind == 2), 8 if kind == 0 else 16)]


def row_stripe(rng, W=16, max_n=64, n=None, r=None, modes=None):
    """A good row stripe: ``(descriptor, coded words, output words)``, tlast on the last of each."""
    kind = 0 if W == 8 else int(rng.integers(0, 3))
    N = n or int(rng.integers(2, max_n + 2))
    R = r or int(rng.integers(1, 17))
    ms = modes or [int(m) for m in rng.integers(0, 3, R)]
    coded, full = [], []
    for m in ms:
        head = random_words(rng, N if m == PLAIN else N // 2 + 1, KIND_DTYPE[kind])
        coded += head
        full += expand_row(head, m, N, kind)
    assert full == stripe_oracle(coded, N, ms, kind)     # symmetry's two references agree
    desc = (0, 1, kind, N - 1, sum(m << (2 * i) for i, m in enumerate(ms)))
    return desc, [(w, int(i == len(coded) - 1), 0) for i, w in enumerate(coded)], \
        [(w, int(i == len(full) - 1), 0) for i, w in enumerate(full)]


def good_case(rng, n_packets, W=16, max_n=64, plain=0.2):
    """Row stripes and plain packets: ``(words in, descriptors, expected out)``, the rows from ``symmetry``."""
    words, descs, expected = [], [], []
    for _ in range(n_packets):
        if rng.random() < plain:
            k = int(rng.integers(1, 20))
            pw = [(w, int(i == k - 1), 0) for i, w in enumerate(random_words(rng, k, "int8" if W == 8 else "int16"))]
            descs.append((0, 0, 0, 0, 0))
            words += pw
            expected += pw
        else:
            d, c, f = row_stripe(rng, W, max_n)
            descs.append(d)
            words += c
            expected += f
    return words, descs, expected


def model(words, descs):
    """What the stage outputs for the core's words ``(data, last, user)`` and the packets' descriptors:
    ``(words out, err pulse codes)``."""
    out, errs = [], []
    i = 0
    for err, rows, kind, nm1, modes in descs:
        pkt = []
        while i < len(words):
            pkt.append(words[i])
            i += 1
            if pkt[-1][1]:
                break
        if err:
            # the packet's first word (the core's marker for the bad header the front got) becomes the stage's
            # marker; the rest of the packet is dropped, markers passed on
            out.append((err, 1, 1))
            errs.append(err)
            out += [w for w in pkt[1:] if w[2]]
            errs += [d & 15 for d, l, u in pkt[1:] if u]
            continue
        if not rows:
            out += pkt
            errs += [d & 15 for d, l, u in pkt if u]
            continue
        N = nm1 + 1
        r = 0
        head = []
        for d, l, u in pkt:
            if u:
                out.append((d, l, 1))
                errs.append(d & 15)
                break
            m = modes >> (2 * r) & 3
            head.append(d)
            if len(head) == (N if m == PLAIN else N // 2 + 1):
                if m != PLAIN and N >= 3:
                    out.append((d, 0, 0))
                    tail = expand_row(head, m, N, kind)[N // 2 + 1:]
                    out += [(w, int(l and t == len(tail) - 1), 0) for t, w in enumerate(tail)]
                else:
                    out.append((d, l, 0))
                r += 1
                head = []
            else:
                out.append((d, l, 0))
    return out, errs


def error_case(rng, n_packets, W=16, max_n=64):
    """Row stripes, plain packets, bad descriptors (the core's code-1 marker replaced by the descriptor's code) and
    error markers of the core inside row stripes (at a row start, inside a row, at a row's last coded word)."""
    words, descs = [], []
    for _ in range(n_packets):
        x = rng.random()
        d, c, f = row_stripe(rng, W, max_n)
        if x < 0.15:
            descs.append((int(rng.choice([4, 10])), 0, 0, 0, 0))
            words.append((1, 1, 1))
        elif x < 0.35:
            cut = int(rng.integers(0, len(c)))
            descs.append(d)
            words += [(w, 0, 0) for w, _, _ in c[:cut]] + [(int(rng.integers(3, 7)), 1, 1)]
        elif x < 0.45:
            descs.append((0, 0, 0, 0, 0))
            words += [(5, 0, 0), (int(rng.integers(3, 7)), 1, 1)]
        else:
            descs.append(d)
            words += c
    out, errs = model(words, descs)
    return words, descs, out, errs


# ------------------------------------------------------------------------------ row_header (the input side)
def coded_words(N, R, modes):
    return sum(N if (modes >> 2 * r & 3) == 0 else N // 2 + 1 for r in range(R))


def desc_word(N, R, neg):
    return (N - 1) | (R - 1) << 16 | neg << 20


def header_model(packets, W=16, MAX_N=512, w8=0):
    """What the front gets (words ``(data, last)``) and the descriptors ``(err, rows, neg, N-1, modes)``."""
    front, descs = [], []
    eight = W == 8 or w8
    for p in packets:
        h = p[0]
        if h >> 16 != 0x4C5B:
            front += [(w, int(i == len(p) - 1)) for i, w in enumerate(p)]
            descs.append((0, 0, 0, 0, 0))
            continue
        if len(p) < 4:
            front.append((0, 1))
            descs.append((4, 0, 0, 0, 0))
            continue
        d, modes = p[1], p[2]
        N, R, neg = (d & 0xFFFF) + 1, (d >> 16 & 15) + 1, d >> 20 & 1
        kind = 2 if neg else (0 if eight else 1)
        bad = d >> 21 != 0 or N < 2 or (neg and eight) or N > MAX_N + 1 or modes >> 2 * R != 0 \
            or any(modes >> 2 * r & 3 == 3 for r in range(R)) or (h & 0xFFFF) + 1 != coded_words(N, R, modes)
        if bad:
            front.append((0, 1))
            descs.append((10, 0, 0, 0, 0))
            continue
        front.append((0x4C5A0000 | (h & 0xFFFF), 0))
        front += [(w, int(i == len(p) - 4)) for i, w in enumerate(p[3:])]
        descs.append((0, 1, kind, N - 1, modes))
    return front, descs


def exact_basis_int8(R=24, N=256):
    """Rows of a Hann-windowed DFT basis, made exactly symmetric (cosine) and antisymmetric (sine) in int8."""
    n = np.arange(N // 2 + 1)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * n / N)
    out = np.zeros((R, N), dtype=np.int8)
    for k in range(R):
        half = np.round(w * (np.cos if k % 2 == 0 else np.sin)(2 * np.pi * k * n / N) * 127).astype(np.int8)
        s = 1 if k % 2 == 0 else -1
        out[k, :N // 2 + 1] = half
        out[k, N // 2 + 1:] = (s * half[1:N // 2][::-1].astype(np.int16)).astype(np.int8)
    return out


def basis(R, N, dtype, seed=0):
    """A DFT-like basis: Hann-windowed cosine rows (mirror), sine rows (negated mirror), random rows (plain)."""
    n = np.arange(N)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * n / N)
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(R):
        if k % 3 == 0:
            rows.append(w * np.cos(2 * np.pi * k * n / N))
        elif k % 3 == 1:
            rows.append(-w * np.sin(2 * np.pi * k * n / N))
        else:
            rows.append(rng.normal(size=N) * 0.3)
    a = np.array(rows)
    if dtype == "int8":
        return np.round(a * 127).astype(np.int8)
    if dtype == "int16":
        return np.round(a * 32000).astype(np.int16)
    if dtype == "float16":
        return a.astype(np.float16)
    import ml_dtypes
    return a.astype(ml_dtypes.bfloat16)
