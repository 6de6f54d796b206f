"""A cost model (the mirror kind is now a format feature: version 6, lutzip.codec.rows): what row symmetries of a tensor (a fixed transform's basis, e.g. an STFT) would save
if the format had "mirrored row" and "copy of an earlier row" kinds (docs/log/2026-12-compression.md, 2026-12-07
afternoon 2). Nothing here is written to a file; :func:`expand` is the reference of what a decoder would do.

A tensor is seen as rows (its first axis) of ``N`` words (the other axes, C order), the words of the stream
(``lutzip.codec.arrays.to_words``). Two relations are found, exactly (bit for bit):

* **mirror** (``MIRROR`` / ``NEG_MIRROR``): ``row[n] = s * row[N - n]`` for ``n = N/2+1 .. N-1`` (a DFT basis row
  with a symmetric window: cosine rows ``s = +1``, sine rows ``s = -1``); only ``row[0 .. N/2]`` is coded, the
  rest is the coded half read backwards (negated);
* **copy** (``COPY``): ``row[n] = p(n) * ref[n]`` for an earlier row ``ref`` and a sign pattern ``p`` of
  :data:`PATTERNS` (``+``, ``-``, ``+-+-...``, ``-+-+...``; a DFT basis: row ``N/2 - k`` is row ``k`` with
  alternating signs); the row is not coded at all.

Negation is what a decoder's output stage would do: two's complement (wrapping) for signed integer words,
the sign bit flipped for float16 / bfloat16 words except +0 (which stays +0); unsigned words are never negated.
"""
from __future__ import annotations

import numpy as np

PLAIN, MIRROR, NEG_MIRROR, COPY = 0, 1, 2, 3
#: sign patterns of a copy: (name, multiplier of even positions, of odd positions)
PATTERNS = (("+", 1, 1), ("-", -1, -1), ("+-", 1, -1), ("-+", -1, 1))
SIGNED = ("int8", "int16")
FLOAT = ("float16", "bfloat16")


def negate(words: np.ndarray, dtype: str) -> np.ndarray:
    """The words of the negated values (see the module text), or ``None`` for an unsigned dtype."""
    w = np.asarray(words)
    if dtype in SIGNED:
        bits = 8 if dtype == "int8" else 16
        return ((-w.astype(np.int64)) & ((1 << bits) - 1)).astype(w.dtype)
    if dtype in FLOAT:
        w64 = w.astype(np.int64)
        return np.where(w64 & 0x7FFF, w64 ^ 0x8000, w64).astype(w.dtype)
    return None


def apply_pattern(row: np.ndarray, pattern: str, dtype: str):
    """``row`` with the sign pattern applied (``None`` when the dtype cannot be negated and the pattern needs it)."""
    if pattern == "+":
        return row
    neg = negate(row, dtype)
    if neg is None:
        return None
    if pattern == "-":
        return neg
    out = row.copy()
    odd = np.arange(row.size) % 2 == 1
    flip = odd if pattern == "+-" else ~odd
    out[flip] = neg[flip]
    return out


def _mirror_tail(head: np.ndarray, N: int) -> np.ndarray:
    """``row[N/2+1 .. N-1]`` from ``row[0 .. N/2]``: ``row[N - n]`` for ``n = N/2+1 .. N-1``."""
    return head[1:N - N // 2][::-1]


ALL = (MIRROR, NEG_MIRROR, COPY)


def find(words: np.ndarray, shape, dtype: str, min_row: int = 8, allowed=ALL):
    """The row kinds of a tensor: a list, one ``(kind, ref, pattern)`` per row (``ref``/``pattern`` for ``COPY``),
    or ``None`` when the tensor has fewer than two rows or rows shorter than ``min_row``. Only the kinds of
    ``allowed`` are looked for (a copy first, then a mirror)."""
    shape = tuple(int(d) for d in shape)
    if len(shape) < 2 or shape[0] < 2:
        return None
    R = shape[0]
    N = int(np.prod(shape[1:]))
    if N < min_row or N % 2:
        return None
    rows = np.asarray(words).reshape(R, N)
    kinds = []
    seen = {}                                          # bytes of a coded row -> its index
    for i in range(R):
        row = rows[i]
        hit = None
        for name, _, _ in (PATTERNS if COPY in allowed else ()):
            # row i = p * ref  <=>  ref = p * row i (every pattern is its own inverse)
            cand = apply_pattern(row, name, dtype)
            if cand is None:
                continue
            j = seen.get(cand.tobytes())
            if j is not None:
                hit = (COPY, j, name)
                break
        if hit is None:
            tail = row[N // 2 + 1:]
            mt = _mirror_tail(row[:N // 2 + 1], N)
            nm = negate(mt, dtype) if NEG_MIRROR in allowed else None
            if MIRROR in allowed and np.array_equal(tail, mt):
                hit = (MIRROR, None, None)
            elif nm is not None and np.array_equal(tail, nm):
                hit = (NEG_MIRROR, None, None)
            else:
                hit = (PLAIN, None, None)
            seen.setdefault(row.tobytes(), i)
        kinds.append(hit)
    return kinds


def reduce(words: np.ndarray, shape, kinds) -> np.ndarray:
    """The words a decoder would still decode: plain rows whole, mirrored rows' first ``N/2 + 1`` words, copies
    nothing; in row order."""
    R = int(shape[0])
    rows = np.asarray(words).reshape(R, -1)
    N = rows.shape[1]
    parts = []
    for i, (kind, _, _) in enumerate(kinds):
        if kind == PLAIN:
            parts.append(rows[i])
        elif kind in (MIRROR, NEG_MIRROR):
            parts.append(rows[i, :N // 2 + 1])
    return np.concatenate(parts) if parts else np.zeros(0, rows.dtype)


def expand(coded: np.ndarray, shape, kinds, dtype: str) -> np.ndarray:
    """The tensor's words from the decoded words ``coded`` (:func:`reduce`) and the row kinds: what a decoder with
    the two row kinds would output (the reference the cost model is checked against)."""
    R = int(shape[0])
    N = int(np.prod([int(d) for d in shape[1:]]))
    out = np.zeros((R, N), np.asarray(coded).dtype)
    p = 0
    for i, (kind, ref, pattern) in enumerate(kinds):
        if kind == PLAIN:
            out[i] = coded[p:p + N]
            p += N
        elif kind in (MIRROR, NEG_MIRROR):
            head = coded[p:p + N // 2 + 1]
            p += N // 2 + 1
            out[i, :N // 2 + 1] = head
            tail = _mirror_tail(head, N)
            out[i, N // 2 + 1:] = tail if kind == MIRROR else negate(tail, dtype)
        else:
            out[i] = apply_pattern(out[ref], pattern, dtype)
    if p != len(coded):
        raise ValueError(f"{len(coded)} coded words for row kinds that take {p}")
    return out.reshape(-1)


def expand_stripe(coded, N: int, modes, neg_float: int, W: int) -> np.ndarray:
    """The words a decoder outputs for one row stripe of format version 6 (docs/FORMAT.md, section 3.1): rows of
    ``modes`` (0 PLAIN, 1 MIRROR, 2 NEG_MIRROR) from the stripe's ``n`` coded words ``coded``, row by row, one
    word at a time -- the reference of the decoders (``lutzip.codec.rows.expand`` is its vectorised form).
    ``neg_float``: the descriptor's NEG bit (1: sign-bit negation), ``W``: word bits."""
    coded = [int(v) for v in np.asarray(coded).reshape(-1)]
    h = N // 2 + 1
    out, p = [], 0
    for m in modes:
        m = int(m)
        if m == PLAIN:
            out += coded[p:p + N]
            p += N
            continue
        if m not in (MIRROR, NEG_MIRROR):
            raise ValueError(f"row mode {m}")
        x = coded[p:p + h]
        p += h
        out += x
        for k in range(h, N):                    # row[k] = f(row[N - k]): x[N - h] down to x[1]
            w = x[N - k]
            if m == NEG_MIRROR:
                if neg_float:
                    w = w ^ 0x8000 if w & 0x7FFF else w
                else:
                    w = (-w) & ((1 << W) - 1)
            out.append(w)
    if p != len(coded):
        raise ValueError(f"{len(coded)} coded words for rows that take {p}")
    return np.array(out, np.uint8 if W == 8 else np.uint16)


def _varint_len(v: int) -> int:
    n = 1
    while v >= 128:
        v >>= 7
        n += 1
    return n


def descriptor_bytes(kinds) -> int:
    """Bytes a descriptor of the row kinds would take: a flag byte and a varint of the row count, then the smaller
    of a dense list (1 byte per row: kind and pattern) and a sparse one (per non-plain row a varint of the rows
    skipped since the last one and 1 byte), a copy's reference row as a varint distance back in either."""
    if kinds is None:
        return 0
    refs = sum(_varint_len(i - ref) for i, (kind, ref, _) in enumerate(kinds) if kind == COPY)
    dense = len(kinds)
    sparse, last = 0, -1
    for i, (kind, _, _) in enumerate(kinds):
        if kind != PLAIN:
            sparse += _varint_len(i - last - 1) + 1
            last = i
    return 1 + _varint_len(len(kinds)) + min(dense, sparse) + refs


def summary(kinds) -> dict:
    """Counts of each row kind: ``{"plain", "mirror", "neg_mirror", "copy"}``."""
    out = {"plain": 0, "mirror": 0, "neg_mirror": 0, "copy": 0}
    names = {PLAIN: "plain", MIRROR: "mirror", NEG_MIRROR: "neg_mirror", COPY: "copy"}
    for kind, _, _ in kinds or ():
        out[names[kind]] += 1
    return out


def estimate(arrays: dict, attrs: dict | None = None, kinds_allowed=ALL, states: int = 2,
             min_saving_rows: int = 2):
    """File bytes of ``arrays`` as coded today and with the row kinds of ``kinds_allowed``.

    Each tensor with at least ``min_saving_rows`` non-plain rows is replaced by its :func:`reduce` words (a 1-D
    array of its dtype; the same encoder, ``states=2``: :func:`lutzip.codec.states.apply` as well), checked with
    :func:`expand` to give the tensor back bit for bit, where that tensor alone plus its descriptor codes smaller
    than the tensor as it is (what an encoder would choose); the descriptors' bytes are added. Returns ``{"base",
    "with_rows", "descriptor", "tensors": {name: summary}}``.
    """
    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    from lutzip.codec import states as st
    from lutzip.codec.layout import stored

    def size(d, at=attrs):
        c = codec.compress(d, attrs=at, rows=False)      # the model of today's coding (no row streams)
        if states == 2:
            c = st.apply(c, L=8)
        return len(ct.to_bytes(c))

    out = {"base": size(arrays), "descriptor": 0, "tensors": {}}
    reduced = {}
    for name, arr in arrays.items():
        a = np.asarray(arr) if not hasattr(arr, "dtype") else arr
        try:
            words, dtype = codec.to_words(stored(a, None))
        except Exception:                             # not coded by lutzip at all: left as it is
            reduced[name] = arr
            continue
        kinds = find(words, a.shape, dtype, allowed=kinds_allowed)
        if kinds is None or sum(k[0] != PLAIN for k in kinds) < min_saving_rows:
            reduced[name] = arr
            continue
        r = reduce(words, a.shape, kinds)
        if not np.array_equal(expand(r, a.shape, kinds, dtype), words):
            raise AssertionError(f"row kinds of {name!r} do not give the tensor back")
        r = r.view(a.dtype) if r.dtype.itemsize == a.dtype.itemsize else r
        one = {name: dict((attrs or {}).get(name, {}))} if attrs else None
        # an encoder would use the row kinds only where they pay: the tensor alone, coded both ways
        if size({name: r}, one) + descriptor_bytes(kinds) >= size({name: arr}, one):
            reduced[name] = arr
            continue
        reduced[name] = r
        out["descriptor"] += descriptor_bytes(kinds)
        out["tensors"][name] = summary(kinds)
    out["with_rows"] = size(reduced) + out["descriptor"] if out["tensors"] else out["base"]
    return out


#: the cells of ``lutzip bench models``: (mode, pruned fraction)
CELLS = (("int8", 0.0), ("int8", 0.6), ("int8", 0.75), ("int8", 0.9), ("int16", 0.0), ("int16", 0.6),
         ("int16", 0.75), ("int16", 0.9), ("bf16", 0.0))


def table_rows(model: str, cells=CELLS):
    """Markdown rows ``| model | cell | --states 2 | + mirror | + mirror and copy | xz -9e | ... vs xz |`` of a model
    (a name of ``lutzip.weights.models.REAL_MODELS`` or a weight file), prepared as ``lutzip bench models`` does."""
    import lzma
    from lutzip.bench import load_model
    from lutzip.weights.quantize import prepare
    label, arrays = load_model(model)
    for mode, p in cells:
        prep, attrs = prepare(arrays, quantize=None if mode == "bf16" else mode, bf16=mode == "bf16",
                              prune_fraction=p, skip_unsupported=True)
        raw = b"".join(np.ascontiguousarray(a).tobytes() for a in prep.values())
        xz = len(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
        m = estimate(prep, attrs, (MIRROR, NEG_MIRROR))
        b = estimate(prep, attrs, ALL)

        def vs(n):
            return f"{(n / xz - 1) * 100:+.2f} %"
        yield (f"| {label} | {mode} {round(p * 100)} % | {m['base']} | {m['with_rows']} | {b['with_rows']} | {xz} | "
               f"{vs(m['base'])} | {vs(m['with_rows'])} | {vs(b['with_rows'])} | "
               f"{', '.join(f'{k} {v}' for k, v in b['tensors'].items())} |")


def main(argv=None) -> int:
    """``python -m lutzip.codec.symmetry MODEL... [--cells int8:0,bf16:0]``: the cost-model table of
    docs/log/2026-12-compression.md (2026-12-07 afternoon 2) for the given models."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m lutzip.codec.symmetry", description=main.__doc__)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--cells", default="", help="e.g. int8:0,int16:75 (default: all nine cells)")
    args = ap.parse_args(argv)
    cells = CELLS
    if args.cells:
        want = set(args.cells.split(","))
        cells = tuple(c for c in CELLS if f"{c[0]}:{round(c[1] * 100)}" in want)
        if not cells:
            print(f"error: no cell of {sorted(want)}; cells are mode:percent, e.g. int8:0", file=__import__("sys").stderr)
            return 2
    print("| model | cell | lutzip --states 2 | + mirror kind | + mirror and copy kinds | xz -9e | today vs xz | "
          "mirror vs xz | both vs xz | tensors with row kinds |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for model in args.models:
        for row in table_rows(model, cells):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
