"""Row streams: tensors whose rows are mirror images of themselves (docs/FORMAT.md, section 3.1; version 6).

A row of ``N`` words with ``row[m] = s * row[N - m]`` for ``m = N//2 + 1 .. N - 1`` (``s = +1``: MIRROR,
``s = -1``: NEG_MIRROR) is coded as its first ``h = N//2 + 1`` words; every stripe of a row stream is a *row
stripe*: header ``0x4C5B0000 | (n - 1)`` (``n`` coded words), a row descriptor word (``N - 1``, ``R - 1``, NEG) and
a word of 2-bit row modes, then the symbols of the ``n`` coded words exactly as a plain stripe's.

Here: finding the modes (bit for bit), the coded words, the writer's choice (:func:`choose`), coding a row
stream (:func:`encode`), and decoding one (:func:`decode`, used by :func:`lutzip.codec.decode.decode_stripes`
when it is given ``rows=``): the row stripes' symbols are decoded by the same kernels as plain stripes (C,
numba, two code tables), the output is expanded with :func:`expand` (vectorised; the reference of a decoder is
:func:`lutzip.codec.symmetry.expand_stripe`).
"""
from __future__ import annotations

import numpy as np

from lutzip.errors import DecodeError, FormatError

ROW_MARKER = 0x4C5B0000
PLAIN_MARKER = 0x4C5A0000
PLAIN, MIRROR, NEG_MIRROR = 0, 1, 2
#: rows a row stripe holds at most (one word of 2-bit modes)
MAX_ROWS = 16
#: the longest row (``N - 1`` is a 16-bit field)
MAX_N = 65536
#: dtypes a row stream may hold (negation defined): two's complement / sign bit
ROW_DTYPES = ("int8", "int16", "bfloat16", "float16")
FLOAT_DTYPES = ("bfloat16", "float16")
#: stripe words a row stripe has before its symbols (header, descriptor, modes)
HEAD_WORDS = 3
#: a tensor is a candidate when at least this many of its rows (and an eighth of them) are mirrored and not zero
MIN_ROWS = 2


def neg_flag(dtype: str) -> int:
    return 1 if dtype in FLOAT_DTYPES else 0


def negate_words(w: np.ndarray, word_bits: int, neg_float: int) -> np.ndarray:
    """``neg`` of FORMAT.md section 3.1 on an array of ``word_bits``-bit words."""
    w = np.asarray(w)
    if neg_float:
        return np.where(w & 0x7FFF, w ^ 0x8000, w).astype(w.dtype)
    mask = (1 << word_bits) - 1
    return ((-w.astype(np.int64)) & mask).astype(w.dtype)


def row_shape(stored_shape) -> tuple | None:
    """``(R_total, N)`` of a stored shape, or ``None`` when it cannot be a row stream (``ndim < 2``, ``N``
    outside 2..65536)."""
    shape = tuple(int(d) for d in stored_shape)
    if len(shape) < 2:
        return None
    n = 1
    for d in shape[1:]:
        n *= d
    if not 2 <= n <= MAX_N:
        return None
    return shape[0], n


def coded_len(modes, N: int) -> int:
    """Coded words of rows with ``modes``."""
    modes = np.asarray(modes)
    m = int(np.count_nonzero(modes))
    return (len(modes) - m) * N + m * (N // 2 + 1)


def find_modes(words: np.ndarray, N: int, dtype: str) -> np.ndarray:
    """The mode of every row (uint8: PLAIN / MIRROR / NEG_MIRROR), exact bit for bit; MIRROR wins where both
    hold (a row whose tail is all zeros). ``words``: the stream's words (``R x N``)."""
    rows = np.asarray(words).reshape(-1, N)
    h = N // 2 + 1
    tail = rows[:, h:]
    mt = rows[:, N - h:0:-1] if N - h > 0 else rows[:, :0]     # row[N - m] for m = h .. N-1
    mirror = np.all(tail == mt, axis=1)
    modes = np.where(mirror, MIRROR, PLAIN).astype(np.uint8)
    if dtype in ROW_DTYPES:
        bits = 8 if rows.dtype.itemsize == 1 else 16
        neg = np.all(tail == negate_words(mt, bits, neg_flag(dtype)), axis=1)
        modes[~mirror & neg] = NEG_MIRROR
    return modes


def reduce(words: np.ndarray, N: int, modes) -> np.ndarray:
    """The coded words: plain rows whole, mirrored rows' first ``N//2 + 1`` words, in row order."""
    rows = np.asarray(words).reshape(-1, N)
    keep = np.ones(rows.shape, bool)
    keep[np.asarray(modes) != PLAIN, N // 2 + 1:] = False
    return rows[keep]


def expand(coded: np.ndarray, N: int, modes, word_bits: int, neg_float: int, out=None) -> np.ndarray:
    """The ``len(modes) x N`` output words of rows with ``modes`` from their coded words (vectorised; the same as
    :func:`lutzip.codec.symmetry.expand_stripe`)."""
    modes = np.asarray(modes)
    R = len(modes)
    h = N // 2 + 1
    c = np.where(modes == PLAIN, N, h)
    start = np.zeros(R, np.int64)
    start[1:] = np.cumsum(c)[:-1]
    p = np.arange(N, dtype=np.int64)
    mirrored = (modes != PLAIN)[:, None] & (p >= h)[None, :]
    src = start[:, None] + np.where(mirrored, N - p[None, :], p[None, :])
    res = np.asarray(coded)[src]
    negm = (modes == NEG_MIRROR)[:, None] & (p >= h)[None, :]
    if negm.any():
        res[negm] = negate_words(res[negm], word_bits, neg_float)
    if out is None:
        return res.reshape(-1)
    out[:] = res.reshape(-1)
    return out


def descriptor(N: int, R: int, neg_float: int) -> int:
    return (N - 1) | (R - 1) << 16 | (neg_float & 1) << 20


def modes_word(modes) -> int:
    v = 0
    for r, m in enumerate(modes):
        v |= int(m) << (2 * r)
    return v


def rows_per_stripe(N: int, stripe_len: int) -> int:
    """Rows a stripe of a row stream holds: as many as ``stripe_len`` words take, 1 .. 16."""
    return max(1, min(MAX_ROWS, int(stripe_len) // N, MAX_N // N))


# ------------------------------------------------------------------------------------------------ writer
def candidate(arr: np.ndarray, axes, words: np.ndarray, dtype: str, min_rows: int = MIN_ROWS):
    """``(axes, modes)`` when ``arr`` has mirrored rows worth trying (in the stored order ``axes``, else in its own
    order), else ``None``. A mirrored row counts when it is not all zeros (a zero row is its own mirror but a
    zero run codes it in a few bits); at least ``min_rows`` of them and an eighth of the rows."""
    from lutzip.codec.arrays import to_words
    from lutzip.codec.layout import stored
    if dtype not in ROW_DTYPES:
        return None
    from lutzip.codec import fastenc
    fast = fastenc.available() and hasattr(fastenc, "row_modes")
    tries = [(axes, words)]
    if axes is not None:
        tries.append((None, None))
    for ax, w in tries:
        shp = np.shape(arr) if ax is None else tuple(np.shape(arr)[a] for a in ax)
        rs = row_shape(shp)
        if rs is None or rs[0] < 2:
            continue
        R, N = rs
        h = N // 2 + 1
        if N - h < 1:
            continue                                   # no word to mirror
        if w is None:
            w, _ = to_words(stored(arr, None))
        rows = np.asarray(w).reshape(rs)
        need = max(min_rows, R // 8)
        if fast:        # every row's mode and the count in one C pass (each row's scan stops at a mismatch)
            modes, good = fastenc.row_modes(rows, neg_flag(dtype))
            if good >= need:
                return ax, modes
            continue
        # a quick look first (an encoder runs this on every tensor): the first k mirrored words of each row
        k = min(4, N - h)
        x, y = rows[:, h:h + k], rows[:, N - h:N - h - k:-1]
        pre = np.all(x == y, axis=1)
        bits = 8 if rows.dtype.itemsize == 1 else 16
        pre |= np.all(x == negate_words(y, bits, neg_flag(dtype)), axis=1)
        idx = np.flatnonzero(pre)
        if len(idx) < need:
            continue
        sub = rows[idx]
        good = int(np.count_nonzero((find_modes(sub, N, dtype) != PLAIN) & np.any(sub != 0, axis=1)))
        if good >= need:
            return ax, find_modes(rows, N, dtype)
    return None


def choose(name, arr, axes, words, dtype, attrs=None, **kw):
    """The writer's choice for one tensor: ``(axes, modes)`` to code it as a row stream, or ``None``.

    A :func:`candidate` is coded alone both ways (:func:`lutzip.codec.arrays.compress` with and without rows)
    and kept as a row stream only when that file is smaller."""
    got = candidate(arr, axes, words, dtype)
    if got is None:
        return None
    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    one = {name: dict(attrs)} if attrs else None
    kw = {k: v for k, v in kw.items() if k in ("stripe_len", "L", "min_stripes", "stripe_bits")}
    kw["group_below"] = 0                      # the tensor alone, in a stream of its own either way
    plain = len(ct.to_bytes(codec.compress({name: arr}, attrs=one, rows=False, **kw)))
    rowed = len(ct.to_bytes(codec.compress({name: arr}, attrs=one, rows={name: got}, **kw)))
    return got if rowed < plain else None


class RowEncoder:
    """Codes a row stream (``.encode(words, first_word)`` as :class:`lutzip.codec.bitstream.StripeEncoder`: the
    whole stream at once) with one code table."""

    def __init__(self, tables, N: int, modes, rs: int, dtype: str):
        from lutzip.codec.bitstream import StripeEncoder
        self.N, self.modes, self.rs, self.neg = int(N), np.asarray(modes, np.uint8), int(rs), neg_flag(dtype)
        longest = min(self.rs * self.N, MAX_N)
        self.enc = StripeEncoder(tables, longest)

    def encode(self, words, first_word: int = 0, threads: int = 1):
        N, rs, modes = self.N, self.rs, self.modes
        rows = np.asarray(words).reshape(-1, N)
        parts, sws = [], []
        for j in range(0, len(modes), rs):
            m = modes[j:j + rs]
            coded = reduce(rows[j:j + rs], N, m)
            p, sw = self.enc.encode(coded, first_word + j * N)
            if len(sw) != 1 or p[0] != PLAIN_MARKER | (len(coded) - 1):
                raise AssertionError("row stripe: the stripe coder did not give one stripe")
            parts.append(np.concatenate([[ROW_MARKER | (len(coded) - 1), descriptor(N, len(m), self.neg),
                                          modes_word(m)], p[1:]]).astype(np.uint32))
            sws.append(len(p) + 2)
        if not parts:
            return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
        return np.concatenate(parts), np.array(sws, np.uint32)


# ------------------------------------------------------------------------------------------------ reader
def check_stream(dtype: str, stored_shape, S: int, where: str) -> tuple:
    """The index's rules for a row stream (FORMAT.md 4.1): ``(R_total, N, RS)``; :class:`FormatError` naming
    ``where`` otherwise."""
    if dtype not in ROW_DTYPES:
        raise FormatError(f"{where}: a row stream of dtype {dtype} (row streams hold int8, int16, bfloat16 or "
                          f"float16)")
    rs = row_shape(stored_shape)
    if rs is None:
        raise FormatError(f"{where}: a row stream of stored shape {tuple(stored_shape)} (needs 2 or more axes and "
                          f"rows of 2..{MAX_N} words)")
    R_total, N = rs
    if S % N or not 1 <= S // N <= MAX_ROWS:
        raise FormatError(f"{where}: stripe length {S} of a row stream is not 1..{MAX_ROWS} rows of {N} words")
    return R_total, N, S // N


def parse(payload, stripe_words, N: int, rs: int, n_rows: int, word_bits: int, neg_float: int, name=None,
          first_stripe: int = 0):
    """Check the row stripes' head words against the index and split them: ``(plain payload, plain stripe
    words, modes of every row, coded words of every stripe)``; the plain stripes are the symbols of each row
    stripe behind a plain header of its ``n`` (what the symbol decoders take). Raises :class:`DecodeError`
    (codes 1, 10) naming the first bad stripe (:func:`_check_stripe`)."""
    sw = np.asarray(stripe_words, np.int64)
    pw = np.asarray(payload, np.uint32)
    if sw.size and (sw.min() < HEAD_WORDS + 1 or int(sw.sum()) != len(pw)):
        raise DecodeError("stripe word counts do not add up to the payload", name)
    a = np.zeros(len(sw), np.int64)
    if len(sw):
        a[1:] = np.cumsum(sw)[:-1]
    head = pw[a].astype(np.int64)
    desc = pw[a + 1].astype(np.int64)
    mw = pw[a + 2].astype(np.int64)
    R = np.minimum(rs, n_rows - np.arange(len(sw), dtype=np.int64) * rs)
    m = (mw[:, None] >> (2 * np.arange(MAX_ROWS, dtype=np.int64))[None, :]) & 3
    live = np.arange(MAX_ROWS)[None, :] < R[:, None]
    counts = np.where(live, np.where(m == PLAIN, N, N // 2 + 1), 0).sum(axis=1)
    ok = ((head & 0xFFFF0000) == ROW_MARKER) & (desc == descriptor(N, 1, neg_float) + ((R - 1) << 16)) \
        & ~np.any(live & (m == 3), axis=1) & ((mw >> (2 * R)) == 0) & ((head & 0xFFFF) + 1 == counts)
    if not ok.all():
        j = int(np.flatnonzero(~ok)[0])
        _check_stripe(int(head[j]), int(desc[j]), int(mw[j]), int(R[j]), N, word_bits, neg_float, name,
                      first_stripe + j)
        raise DecodeError("bad row stripe", name, first_stripe + j)       # not reached: _check_stripe raised
    modes = m[live].astype(np.uint8)
    keep = np.ones(len(pw), bool)
    keep[a] = False
    keep[a + 1] = False
    plain = pw.copy()
    plain[a + 2] = PLAIN_MARKER | (head & 0xFFFF)
    return plain[keep], (sw - 2).astype(np.uint32), modes, counts


def _check_stripe(head, desc, mw, R, N, word_bits, neg_float, name, stripe):
    """Raise the :class:`DecodeError` of a row stripe's first bad head word (FORMAT.md 3.1, codes 1 and 10)."""
    from lutzip.codec.decode import ERR_BAD_HEADER, ERR_ROW, ERROR_TEXT

    def bad(what, code=ERR_ROW):
        return DecodeError(f"{ERROR_TEXT[code]}: {what}", name, stripe)
    if head & 0xFFFF0000 != ROW_MARKER:
        raise bad(f"marker {head >> 16:#06x}, a row stream's stripes have 0x4C5B", ERR_BAD_HEADER)
    if desc >> 21:
        raise bad(f"reserved descriptor bits {desc:#010x}")
    dn, dr, dneg = (desc & 0xFFFF) + 1, ((desc >> 16) & 15) + 1, (desc >> 20) & 1
    if dn < 2:
        raise bad("row length 1")
    if dneg and word_bits == 8:
        raise bad("sign-bit negation of 8-bit words")
    if (dn, dr, dneg) != (N, R, neg_float):
        raise bad(f"row length {dn}, {dr} rows, NEG {dneg}; the index says {N}, {R}, {neg_float}")
    m = [(mw >> (2 * r)) & 3 for r in range(MAX_ROWS)]
    if 3 in m[:R]:
        raise bad("row mode 3")
    if mw >> (2 * R):
        raise bad(f"mode bits set beyond row {R - 1}")
    n = (head & 0xFFFF) + 1
    c = sum(N if v == PLAIN else N // 2 + 1 for v in m[:R])
    if n != c:
        raise bad(f"header counts {n} coded words, the rows' modes {c}")


def decode(payload, stripe_words, numel: int, stripe_len: int, tables, rows, name=None, out=None, crcs=None,
           threads: int = 1, kernel: str = "auto", first_stripe: int = 0, crc_where=None) -> np.ndarray:
    """:func:`lutzip.codec.decode.decode_stripes` of a row stream: ``rows = (N, dtype)``. The symbols of all
    stripes are decoded in one call of the C library (``lz_decode_many``, each stripe a run of its own ``n``
    words), else (``kernel="numba"``, no C library, or an error: then the error of that stripe is raised) stripe
    by stripe through ``decode_stripes``; the rows are expanded by :func:`expand`."""
    from lutzip.codec.decode import _crc_error, decode_stripes
    N, dtype = int(rows[0]), rows[1]
    S = int(stripe_len)
    if N < 2 or S % N or not 1 <= S // N <= MAX_ROWS or numel % N:
        raise DecodeError(f"row stream: stripe length {S} / {numel} words are not whole rows of {N}", name)
    rs, n_rows = S // N, numel // N
    n_stripes = -(-numel // S) if numel else 0
    if len(stripe_words) != n_stripes:
        raise DecodeError(f"{len(stripe_words)} stripes recorded, {n_stripes} expected", name)
    word_bits = tables.word_bits
    if out is None:
        out = np.empty(numel, np.uint16)
    elif out.shape != (numel,):
        raise ValueError(f"out must be {numel} words")
    pw = np.asarray(payload, np.uint32)
    sw = np.asarray(stripe_words, np.int64)
    if crcs is not None:
        from lutzip.codec import fastdec
        if len(crcs) != n_stripes:
            raise DecodeError(f"{len(crcs)} stripe CRCs recorded, {n_stripes} expected", name)
        if sw.size and (sw.min() < 1 or int(sw.sum()) != len(pw)):
            raise DecodeError("stripe word counts do not add up to the payload", name)
        bad = fastdec.first_bad_crc(pw, sw, np.asarray(crcs, np.uint32))
        if bad >= 0:
            raise _crc_error(name, first_stripe + bad, crc_where)
    plain, psw, modes, counts = parse(pw, sw, N, rs, n_rows, word_bits, neg_flag(dtype), name, first_stripe)
    coded = np.empty(int(counts.sum()), out.dtype)
    done = False
    if kernel != "numba" and n_stripes:
        from lutzip.codec import fastdec
        if fastdec.available():
            pstart = np.zeros(n_stripes + 1, np.int64)
            pstart[1:] = np.cumsum(psw.astype(np.int64))
            cstart = np.zeros(n_stripes + 1, np.int64)
            cstart[1:] = np.cumsum(counts)
            runs = [((int(pstart[j]), int(pstart[j + 1])), psw[j:j + 1], int(counts[j]), int(counts[j]), tables,
                     coded[cstart[j]:cstart[j + 1]], None) for j in range(n_stripes)]
            done = fastdec.decode_many(runs, max(1, int(threads)), payload=plain)[0] == 0
    if not done:
        p0 = c0 = 0
        for j in range(n_stripes):     # each stripe alone: its coded words are n, not a common stripe length
            n = int(counts[j])
            decode_stripes(plain[p0:p0 + int(psw[j])], psw[j:j + 1], n, n, tables, name, out=coded[c0:c0 + n],
                           kernel=kernel, first_stripe=first_stripe + j)
            p0 += int(psw[j])
            c0 += n
    # the C expansion negates in the output's width: only where that is the words' width (8-bit words decoded into
    # a uint16 array take the numpy path, which negates in word_bits like every other decoder level)
    if kernel != "numba" and out.flags.c_contiguous and out.dtype == coded.dtype and \
            out.dtype in (np.uint8, np.uint16) and out.dtype.itemsize * 8 == word_bits and len(modes) * N == numel:
        from lutzip.codec import fastdec
        if fastdec.available():
            return fastdec.expand_rows(coded, out, N, modes, neg_flag(dtype))
    expand(coded, N, modes, word_bits, neg_flag(dtype), out=out)
    return out


def to_plain(payload, stripe_words):
    """A row stream's stripes as plain stripes (for :mod:`lutzip.codec.states`): ``(payload, stripe words,
    heads)`` with ``heads`` the descriptor and mode words of each stripe (:func:`from_plain` puts them back)."""
    pw = np.asarray(payload, np.uint32)
    sw = np.asarray(stripe_words, np.int64)
    starts = np.concatenate([[0], np.cumsum(sw)[:-1]]).astype(np.int64)
    heads = [(int(pw[a + 1]), int(pw[a + 2])) for a in starts]
    keep = np.ones(len(pw), bool)
    out = pw.copy()
    for a in starts:
        out[a + 2] = PLAIN_MARKER | (int(pw[a]) & 0xFFFF)
        keep[a:a + 2] = False
    return out[keep], (sw - 2).astype(np.uint32), heads


def from_plain(payload, stripe_words, heads):
    """Inverse of :func:`to_plain`."""
    pw = np.asarray(payload, np.uint32)
    sw = np.asarray(stripe_words, np.int64)
    parts, p = [], 0
    for n, (desc, mw) in zip(sw.tolist(), heads):
        s = pw[p:p + n]
        parts.append(np.concatenate([[ROW_MARKER | (int(s[0]) & 0xFFFF), desc, mw], s[1:]]).astype(np.uint32))
        p += n
    return (np.concatenate(parts) if parts else np.zeros(0, np.uint32)), (sw + 2).astype(np.uint32)


def plain_counts(payload, stripe_words) -> list:
    """The coded words ``n`` of each stripe (from the headers)."""
    sw = np.asarray(stripe_words, np.int64)
    starts = np.concatenate([[0], np.cumsum(sw)[:-1]]).astype(np.int64)
    pw = np.asarray(payload, np.uint32)
    return [(int(pw[a]) & 0xFFFF) + 1 for a in starts]


def summary(c, t) -> dict | None:
    """``{"N", "rows_per_stripe", "plain", "mirror", "neg_mirror"}`` of a row stream's tensor ``t`` (the modes
    read from its stripes' mode words), or ``None`` when ``t`` is not one."""
    if not getattr(t, "rows", False):
        return None
    R_total, N = row_shape(t.stored_shape)
    rs = int(t.stripe_len) // N
    counts = {"plain": 0, "mirror": 0, "neg_mirror": 0}
    names = {PLAIN: "plain", MIRROR: "mirror", NEG_MIRROR: "neg_mirror"}
    if c.payload is not None:
        for j, s in enumerate(c.stripes(t)):
            R = min(rs, R_total - j * rs)
            mw = int(s[2]) if len(s) > 2 else 0
            for r in range(R):
                counts[names.get((mw >> (2 * r)) & 3, "plain")] += 1
    return {"N": N, "rows_per_stripe": rs, **counts}
