"""Tensor by tensor: code named arrays, or a weight file, straight into a ``.lutz`` file in bounded memory.

``lutzip compress`` and :func:`lutzip.save` run :func:`write_streamed`; it writes the same bytes as
:func:`lutzip.codec.arrays.compress` followed by :func:`lutzip.codec.container.write` (version 3), but never
holds more than one tensor, its coded stripes and the index in memory:

1. **Statistics.** Each tensor is read (a fresh memory map for ``.safetensors`` and ``.npy``,
   :func:`file_source`), its lossy step applied (``quantize``/``bf16``/``prune``), and its words counted
   (:class:`lutzip.codec.encoder.Stats`: the table design depends on these alone). Then it is let go: a tensor
   read unchanged is read again in step 3, a transformed one is spilled to a temporary file; small tensors
   (those that share group streams) stay in memory.
2. **Tables.** :func:`lutzip.codec.encoder.plan_tables_stats` designs the table sets from the statistics, as
   :func:`~lutzip.codec.encoder.plan_tables` does from the words.
3. **Stripes.** Each stream is coded :data:`CHUNK_WORDS` words at a time
   (:class:`lutzip.codec.bitstream.StripeEncoder`; stripes are independent) into a temporary payload file.
4. **File.** The header and the metadata block precede the payload and the metadata's length is known only
   once every stripe is coded (docs/FORMAT.md, section 4), so the header and metadata are written first
   and the payload is copied after them (in the kernel, ``os.sendfile``), atomically
   (:func:`lutzip.codec.container.atomic_output`).

Peak memory: the largest tensor as read (mapped pages) plus its prepared words, plus a few parts of
:data:`CHUNK_WORDS` words, plus the statistics (512 kB per 16-bit tensor) and the index.
"""
from __future__ import annotations

import os
import shutil
import struct
import sys
import tempfile
import zlib

import numpy as np

from lutzip.codec import container as ct
from lutzip.codec.arrays import (DEFAULT_GROUP_BELOW, DEFAULT_STRIPE, GROUP_STRIPES, MIN_STRIPES, plan_streams,
                                 stream_stripe_len, to_words)
from lutzip.codec.layout import choose_axes, stored
from lutzip.errors import FormatError, UnsupportedError

#: words coded per call of the stripe encoder (rounded down to whole stripes; at least one stripe)
CHUNK_WORDS = 1 << 22
#: prepared words (after a lossy step) kept in memory between the passes, in all; beyond it they are spilled
KEEP_BYTES = 8 << 20


class _Size:
    """Stands for a tensor's words in :func:`lutzip.codec.arrays.plan_streams` (which needs the size only)."""

    def __init__(self, n):
        self.size = n


# ------------------------------------------------------------------------------------------------ sources
def arrays_source(arrays) -> list:
    """In-memory arrays as the ``[(name, get)]`` of :func:`write_streamed`."""
    return [(name, (lambda a=a: a)) for name, a in arrays.items()]


_eager = arrays_source


def _safetensors_source(path):
    from lutzip.weights import loaders
    header, start = loaders._safetensors_header(path)      # every entry checked against the file size
    if any(dt not in loaders._ST_DTYPES for dt, _, _, _ in header.values()):
        return _eager(loaders.load_safetensors(path))       # the loader's own message for such a dtype
    names = list(header)
    try:
        from safetensors import safe_open
    except ImportError:
        safe_open = None
    if safe_open is not None:                               # the library checks the layout; its tensor order
        try:
            with safe_open(path, framework="np") as f:
                names = list(f.keys())
        except (TypeError, ValueError):
            names = list(header)
        except Exception as e:  # noqa: BLE001 - safetensors raises its own SafetensorError for malformed files
            if type(e).__name__ == "SafetensorError":
                raise FormatError(f"{path}: not a readable safetensors file ({e})") from None
            raise
        if set(names) != set(header):
            raise FormatError(f"{path}: the safetensors header lists {len(header)} tensors, {len(names)} were read")
    import ml_dtypes
    items = []
    for name in names:
        dtype, shape, a, b = header[name]
        dt = loaders._ST_DTYPES[dtype]
        dt = np.dtype(ml_dtypes.bfloat16) if dt == "bfloat16" else np.dtype(dt).newbyteorder("<")
        n = 1
        for d in shape:
            n *= d
        if b - a != n * dt.itemsize:
            raise FormatError(f"{path}: tensor {name!r} has inconsistent offsets")

        def get(dt=dt, shape=shape, a=a, n=n):
            if n == 0:
                return np.zeros(shape, dt)
            return np.asarray(np.memmap(path, dt, "r", offset=start + a, shape=(n,))).reshape(shape)
        items.append((name, get))
    return items


def _npy_source(path):
    from lutzip.weights import loaders
    name = os.path.splitext(os.path.basename(path))[0] or "weights"
    # the loader's checks: header, no objects, no negative dimension, the shape accounts for every byte
    shape, dtype, _ = loaders.npy_layout(lambda: open(path, "rb"), os.path.getsize(path), path, "the file")
    n = dtype.itemsize
    for d in shape:
        n *= int(d)
    if n == 0:
        return _eager(loaders.load_npy(path))
    return [(name, lambda: np.asarray(np.load(path, mmap_mode="r", allow_pickle=False)))]


def file_source(path, kind: str | None = None) -> list:
    """The tensors of a weight file as ``[(name, get)]``, ``get()`` reading one tensor when it is called.

    ``.safetensors`` and ``.npy`` tensors are memory-mapped afresh at every call (the pages go when the array
    does); the other formats (``.npz``, ONNX, PyTorch) are read whole by :func:`lutzip.weights.loaders.load`
    first. Headers are checked as the loaders check them, before anything is read.

    Parameters
    ----------
    path : str or os.PathLike
        The weight file.
    kind : str, optional
        The loader (``npy``, ``npz``, ``safetensors``, ``onnx``, ``torch``); default: from the suffix.
    """
    from lutzip.weights import loaders
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    k = kind if kind is not None else loaders.SUFFIXES.get(os.path.splitext(path)[1].lower())
    if k == "safetensors":
        return _safetensors_source(path)
    if k == "npy":
        return _npy_source(path)
    return _eager(loaders.load(path, kind))


# ------------------------------------------------------------------------------------------------ writing
def _temp_dir(path):
    """Where the temporary files go: beside ``path`` when it is (to be) a regular file there, else the system's."""
    d = os.path.dirname(os.path.abspath(path))
    ok = os.path.isdir(d) and os.access(d, os.W_OK) and (not os.path.exists(path) or os.path.isfile(path))
    return d if ok else None


def _write_words(f, a: np.ndarray):
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        a = a.astype(a.dtype.newbyteorder("<"))
    f.write(memoryview(a).cast("B"))


def write_spooled(path, tables, tensors, pf, offset: int, payload_after=None):
    """Write the container of ``tables`` and ``tensors`` whose payload is the first ``offset`` bytes of the spool
    file ``pf``: header, metadata block, then the payload copied after them, atomically. Returns ``(bytes
    written, container)``; the container's payload is ``payload_after`` (None: not kept)."""
    pf.flush()
    payload = np.memmap(pf, np.dtype("<u4"), "r", shape=(offset // 4,)) if offset else np.zeros(0, "<u4")
    c = ct.Container(tables, tensors, payload)
    version = ct.version_for(c)
    meta, flags, raw_len = ct.pack_meta_block(ct._pack_meta_v3(c, version), version)
    c.payload = payload_after
    del payload
    head = struct.pack("<4sHHIIQI", ct.MAGIC, version, flags, len(meta), zlib.crc32(meta), offset, raw_len)
    head += struct.pack("<I", zlib.crc32(head))
    with ct.atomic_output(path) as f:
        f.write(head)
        f.write(meta)
        _copy(pf, f, offset)
    c.version = version
    return len(head) + len(meta) + offset, c


def _copy(src, dst, n: int):
    """Copy ``n`` bytes from the start of file ``src`` to the end of file ``dst`` (in the kernel where it can)."""
    src.flush()
    dst.flush()
    done = 0
    try:
        while done < n:
            k = os.sendfile(dst.fileno(), src.fileno(), done, min(n - done, 1 << 30))
            if k <= 0:
                break
            done += k
    except (AttributeError, OSError):
        pass
    if done < n:
        src.seek(done)
        shutil.copyfileobj(src, dst, 1 << 22)


def _code_part(enc, words, lo):
    """Stripes of one part: ``(little-endian bytes, stripe words, stripe CRCs)`` (runs on a worker thread: the
    C coder and zlib release the GIL)."""
    payload, sw = enc.encode(words, lo)
    le = payload if sys.byteorder == "little" else payload.astype("<u4")
    mv = memoryview(le).cast("B")
    crcs = np.empty(len(sw), np.uint32)
    p0 = 0
    for j, nw in enumerate(sw.tolist()):
        crcs[j] = zlib.crc32(mv[4 * p0:4 * (p0 + nw)])
        p0 += nw
    return mv, sw, crcs


def _in_order(tasks, threads: int):
    """Code the parts of ``tasks`` (:func:`_code_part` arguments, or ``None``) on ``threads`` threads, at most
    ``2 * threads`` parts ahead; yields each task with its result in the tasks' order."""
    if threads <= 1:
        for *head, part in tasks:
            yield (*head, None if part is None else _code_part(*part))
        return
    from collections import deque

    from lutzip.codec.bitstream import _pool
    pool, ahead = _pool(threads), deque()
    try:
        for *head, part in tasks:
            ahead.append((head, None if part is None else pool.submit(_code_part, *part)))
            while len(ahead) > 2 * threads or (ahead and (ahead[0][1] is None or ahead[0][1].done())):
                h, fut = ahead.popleft()
                yield (*h, None if fut is None else fut.result())
        while ahead:
            h, fut = ahead.popleft()
            yield (*h, None if fut is None else fut.result())
    finally:
        for _h, fut in ahead:
            if fut is not None:
                fut.cancel()


def write_streamed(path, items, prepare=None, stripe_len: int = DEFAULT_STRIPE, L: int = 8, share: bool = True,
                   tableset_fn=None, group_below: int = DEFAULT_GROUP_BELOW, attrs: dict | None = None,
                   progress=None, plan_progress=None, keep_bytes: int = KEEP_BYTES, threads: int = 1,
                   min_stripes: int = MIN_STRIPES, stripe_bits: int | None = None, reorder: bool = True,
                   rows: bool = True):
    """Code tensors one at a time into the ``.lutz`` file ``path`` (version 3, or 4 when a tensor is coded in
    another axis order), two passes over the tensors.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (atomically: it appears only when complete).
    items : iterable of (str, callable)
        ``(name, get)`` in file order; ``get()`` returns the tensor and is called once or twice (again in
        the second pass when the tensor needs no lossy step), e.g. :func:`file_source`.
    prepare : callable(name, array) -> (array, dict) or None, optional
        The lossy step of one tensor: the array to code and its attributes, or ``None`` to leave the tensor
        out. Default: the array as it is.
    stripe_len, L, share, tableset_fn, group_below, min_stripes, stripe_bits, reorder :
        As for :func:`lutzip.codec.arrays.compress`.
    attrs : dict of str -> dict, optional
        Attributes per tensor name (the lossy step's attributes are added to them).
    progress : callable(name), optional
        Called once per tensor as its stripes are written.
    plan_progress : callable(name), optional
        Called once per stream when its table set is chosen.
    keep_bytes : int
        Prepared words kept in memory between the passes; beyond them, prepared tensors go to a temporary
        file beside ``path``.
    threads : int
        Code the stripes on this many threads, parts of whole stripes of one or several tensors at a time, and
        design the tensors' table sets on as many (the statistics stay on the calling thread); the file is
        byte-identical to ``threads=1``.

    Returns
    -------
    (int, Container)
        Bytes written, and the container's tables and index (its ``payload`` is ``None``).

    Raises
    ------
    UnsupportedError
        No tensor to code (every one left out), or as :func:`lutzip.codec.arrays.compress`.
    """
    from lutzip.codec.bitstream import StripeEncoder
    from lutzip.codec.decode import MAX_STRIPE_WORDS
    from lutzip.codec.encoder import Stats, plan_tables_stats
    from lutzip.errors import TableError
    S = int(stripe_len)
    if not 1 <= S <= MAX_STRIPE_WORDS:
        raise TableError(f"stripe length {stripe_len} outside 1..{MAX_STRIPE_WORDS}")
    group_below = int(group_below)
    user_attrs = attrs or {}
    tmpdir = _temp_dir(path)
    spill = None
    from lutzip.codec import rows as rw
    names, shapes, dtypes, sizes, tattrs, srcs, own, axes_list = [], [], [], [], [], [], {}, []
    row_info = {}                  # tensor index -> (N, modes): a row stream (format version 6)
    kept = 0
    try:
        # ---- pass 1: read, prepare, count (and let go) every tensor
        for name, get in items:
            arr = get()
            arr = np.asarray(arr) if not hasattr(arr, "dtype") else arr
            if prepare is None:
                p, a = arr, {}
            else:
                r = prepare(name, arr)
                if r is None:
                    continue
                p, a = r
                del r
            axes = choose_axes(p) if reorder else None
            words, dtype = to_words(stored(p, axes))
            ta0 = {**dict(user_attrs.get(name, {})), **(a or {})}
            got = rw.choose(name, p, axes, words, dtype, ta0, stripe_len=S, L=L, min_stripes=min_stripes,
                            stripe_bits=stripe_bits) if rows and words.size >= max(group_below, 1) else None
            if got is not None:
                if got[0] != axes:
                    axes = got[0]
                    words, dtype = to_words(stored(p, axes))
                shp = tuple(np.shape(p)) if axes is None else tuple(np.shape(p)[x] for x in axes)
                row_info[len(names)] = (rw.row_shape(shp)[1], np.asarray(got[1], np.uint8))
            axes_list.append(axes)
            n = int(words.size)
            bits = ct.dtype_bits(dtype)
            names.append(name)
            shapes.append(tuple(p.shape))
            dtypes.append(dtype)
            sizes.append(n)
            ta = {**dict(user_attrs.get(name, {})), **(a or {})}
            tattrs.append(ta)
            i = len(names) - 1
            if n and n >= group_below:                     # a stream of its own: counted now
                cw = rw.reduce(words, *row_info[i]) if i in row_info else words     # a row stream: its coded words
                own[i] = tableset_fn(cw, bits) if tableset_fn is not None else Stats.of(np.asarray(cw), bits, S)
                del cw
            if i in row_info:
                srcs.append(("mem", np.array(words)))      # a row stream: coded whole in pass 2
            elif n == 0:
                srcs.append(("mem", np.zeros(0, words.dtype)))
            elif n < group_below:
                srcs.append(("mem", np.array(words)))      # small: a copy, detached from any mapping
            elif p is arr:
                srcs.append(("get", (get, axes)))          # unchanged: read it again
            elif kept + words.nbytes <= keep_bytes:
                srcs.append(("mem", np.array(words)))
                kept += words.nbytes
            else:
                if spill is None:
                    spill = tempfile.TemporaryFile(prefix=".lutzip-words.", dir=tmpdir)
                off = spill.tell()
                _write_words(spill, words)
                srcs.append(("spill", (off, n, words.dtype)))
            del arr, p, words
        if not names:
            raise UnsupportedError("no tensor left to code")
        if spill is not None:
            spill.flush()

        def stream_words(members):
            if len(members) > 1:
                return np.concatenate([srcs[i][1] for i in members])
            kind, v = srcs[members[0]]
            if kind == "mem":
                return v
            if kind == "get":
                get, axes = v
                w, _ = to_words(stored(np.asarray(get()), axes))
                return w
            off, n, dt = v
            return np.asarray(np.memmap(spill, dt, "r", offset=off, shape=(n,)))

        # ---- plan the streams and their table sets
        plan = plan_streams([_Size(n) for n in sizes], dtypes, group_below, GROUP_STRIPES * S)
        bits_list = [ct.dtype_bits(d) for d in dtypes]
        designs = []
        for m in plan:
            if len(m) == 1 and m[0] in own:
                designs.append(own.pop(m[0]))
            else:
                w = stream_words(m)
                b = bits_list[m[0]]
                designs.append(tableset_fn(w, b) if tableset_fn is not None else Stats.of(w, b, S))
        if tableset_fn is None:
            tables, assignment = plan_tables_stats(designs, S, L=L, share=share,
                                                   progress=(lambda k: plan_progress(names[plan[k][0]]))
                                                   if plan_progress else None, threads=max(1, int(threads)))
        else:
            tables, assignment = designs, list(range(len(designs)))
        del designs
        if not tables:
            from lutzip.codec.tables import raw_tableset
            tables = [raw_tableset(16)]

        # ---- pass 2: code every stream into the temporary payload file
        entries = [None] * len(names)
        encoders = {}
        offset = 0
        threads = max(1, int(threads))
        # with threads, parts of fewer words keep every thread busy on mid-size tensors (stripes are independent)
        part = CHUNK_WORDS if threads == 1 else CHUNK_WORDS // (2 * threads)
        n_of = [sum(sizes[i] for i in m) for m in plan]
        stripe_of = [stream_stripe_len(n, bits_list[m[0]], S, min_stripes, stripe_bits)
                     if len(m) == 1 and n >= group_below else S for m, n in zip(plan, n_of)]
        for k, m in enumerate(plan):
            if m[0] in row_info:
                N = row_info[m[0]][0]
                stripe_of[k] = rw.rows_per_stripe(N, stripe_of[k]) * N

        def tasks():
            """``(stream, members, table, part)`` in file order; ``part`` None closes the stream."""
            for k, members in enumerate(plan):
                ts_i, Sk = assignment[k], stripe_of[k]
                words = stream_words(members)
                total = int(words.size)
                if members[0] in row_info:                 # a row stream: one part, its row stripes
                    N, modes = row_info[members[0]]
                    yield k, members, ts_i, total, (rw.RowEncoder(tables[ts_i], N, modes, Sk // N, dtypes[members[0]]),
                                                    words, 0)
                    del words
                    yield k, members, ts_i, total, None
                    continue
                chunk = max(part // Sk, 1) * Sk
                enc = encoders.get((ts_i, Sk))
                if enc is None:
                    enc = encoders[ts_i, Sk] = StripeEncoder(tables[ts_i], Sk)
                for lo in range(0, total, chunk):
                    yield k, members, ts_i, total, (enc, words[lo:lo + chunk], lo)
                del words
                yield k, members, ts_i, total, None

        with tempfile.TemporaryFile(prefix=".lutzip-payload.", dir=tmpdir) as pf:
            sw_parts, crc_parts = [], []
            for k, members, ts_i, total, coded in _in_order(tasks(), threads):
                if coded is not None:
                    mv, sw, crcs = coded
                    pf.write(mv)
                    sw_parts.append(sw)
                    crc_parts.append(crcs)
                    del mv, coded
                    continue
                sw = np.concatenate(sw_parts) if sw_parts else np.zeros(0, np.uint32)
                crcs = np.concatenate(crc_parts) if crc_parts else np.zeros(0, np.uint32)
                sw_parts, crc_parts = [], []
                pos = 0
                for i in members:
                    entries[i] = ct.TensorEntry(names[i], dtypes[i], shapes[i], ts_i, stripe_of[k], offset, sw, crcs,
                                                tattrs[i], k, pos, total, axes_list[i], i in row_info)
                    pos += sizes[i]
                    if progress:
                        progress(names[i])
                offset += 4 * int(sw.astype(np.int64).sum())
            for i, name in enumerate(names):
                if entries[i] is None:                       # an empty tensor: no stream
                    table = next((j for j, ts in enumerate(tables) if ts.word_bits == bits_list[i]), None)
                    entries[i] = ct.TensorEntry(name, dtypes[i], shapes[i], table, S, 0, np.zeros(0, np.uint32),
                                                np.zeros(0, np.uint32), tattrs[i])
                    if progress:
                        progress(name)

            return write_spooled(path, tables, entries, pf, offset)      # header, metadata, the payload after
    finally:
        if spill is not None:
            spill.close()


def lossy_step(quantize=None, bf16: bool = False, prune: float = 0.0, skip_unsupported: bool = False, warn=None):
    """The ``prepare`` of :func:`write_streamed` for the user's lossy choices (:func:`lutzip.weights.quantize.prepare`
    of one tensor at a time: the same arrays, attributes, errors and warnings)."""
    from lutzip.weights.quantize import prepare as prep
    prep({}, quantize, bf16, prune)                      # the option checks, before any tensor is read

    def one(name, arr):
        out, attrs = prep({name: arr}, quantize, bf16, prune, skip_unsupported, warn=warn)
        if name not in out:
            return None
        return out[name], attrs.get(name, {})
    return one


def compress_file(src, dst, quantize=None, bf16: bool = False, prune: float = 0.0, skip_unsupported: bool = False,
                  kind: str | None = None, warn=None, items=None, **kw):
    """``lutzip compress``: code the weight file ``src`` into the ``.lutz`` file ``dst`` tensor by tensor.

    Parameters
    ----------
    src, dst : str or os.PathLike
        The weight file (:func:`file_source`) and the file to write.
    quantize, bf16, prune, skip_unsupported, warn :
        The lossy steps (:func:`lutzip.weights.quantize.prepare`).
    kind : str, optional
        The input's loader (default: from the suffix).
    items : list, optional
        ``file_source(src, kind)`` when the caller has it already.
    **kw
        :func:`write_streamed`'s options (``stripe_len``, ``L``, ``share``, ``tableset_fn``, ``group_below``,
        ``progress``, ``plan_progress``).

    Returns
    -------
    (int, Container)
        As :func:`write_streamed`.
    """
    step = lossy_step(quantize, bf16, prune, skip_unsupported, warn)
    items = file_source(src, kind) if items is None else items
    if not items:
        raise UnsupportedError(f"{os.fspath(src)}: no tensors in the file")
    try:
        return write_streamed(dst, items, prepare=step, **kw)
    except UnsupportedError as e:
        if str(e) == "no tensor left to code":
            raise UnsupportedError(f"{os.fspath(src)}: no tensor left to code") from None
        raise


def release_pages(mm, start: int, length: int) -> None:
    """Drop the pages of ``mm[start:start + length]`` from the process (``MADV_DONTNEED``; Linux, else nothing).

    A read-only file mapping's pages stay in the page cache; the process just stops counting them, so
    decoding a large file tensor by tensor keeps its resident memory at about one tensor's stripes.
    """
    advice = getattr(__import__("mmap"), "MADV_DONTNEED", None)
    if advice is None or length <= 0:
        return
    import mmap as _mmap
    page = _mmap.PAGESIZE
    lo = (start // page) * page
    hi = min(start + length, len(mm))
    try:
        mm.madvise(advice, lo, hi - lo)
    except (OSError, ValueError, AttributeError):
        pass
