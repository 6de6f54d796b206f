"""High-level compress / decompress of named arrays to and from a :class:`~lutzip.codec.container.Container`."""
from __future__ import annotations

import os
import zlib

import numpy as np

from lutzip.codec import container as ct
from lutzip.codec.decode import decode_stripes   # decoding never imports numba (the encoder does)
from lutzip.codec.layout import choose_axes, restore, stored
from lutzip.errors import UnsupportedError

DEFAULT_STRIPE = 4096

_NUMPY_TO_DTYPE = {np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
                   np.dtype(np.uint16): "uint16", np.dtype(np.float16): "float16"}


def dtype_name(arr: np.ndarray) -> str:
    """The lutzip dtype of a numpy array (bfloat16 is recognised by name, e.g. ml_dtypes.bfloat16)."""
    if arr.dtype.name == "bfloat16":
        return "bfloat16"
    try:
        return _NUMPY_TO_DTYPE[arr.dtype]
    except KeyError:
        raise UnsupportedError(
            f"dtype {arr.dtype} is not coded losslessly; use --quantize int16|int8 or --bf16 for floats") from None


def to_words(arr: np.ndarray):
    """``(words, dtype)``: the array's bit patterns as unsigned words, flattened in C order."""
    name = dtype_name(arr)
    bits = ct.dtype_bits(name)
    words = np.ascontiguousarray(arr).reshape(-1).view(np.uint8 if bits == 8 else np.uint16)
    return words, name


def from_words(words: np.ndarray, dtype: str, shape) -> np.ndarray:
    """Inverse of :func:`to_words`; bfloat16 comes back as uint16 bit patterns."""
    bits = ct.dtype_bits(dtype)
    np_dtype = ct.DTYPES[ct.DTYPE_CODES[dtype]][2]
    raw = np.asarray(words, np.uint16).astype(np.uint8 if bits == 8 else np.uint16)
    return raw.view(np_dtype).reshape(shape)


#: tensors of fewer words than this share group streams (one table set and one run of stripes per group)
DEFAULT_GROUP_BELOW = 1024
#: a group stream holds at most this many stripes' worth of words (decoding one grouped tensor decodes only
#: the stripes that hold it; the board gets one job per stream)
GROUP_STRIPES = 16


def plan_streams(word_list, kinds, group_below: int = DEFAULT_GROUP_BELOW, cap: int = GROUP_STRIPES * DEFAULT_STRIPE):
    """Which tensors share a stream: a list of streams, each a list of tensor indices in file order.

    A tensor of at least ``group_below`` words is a stream of its own; smaller ones of one kind (the dtype:
    one word width, and values alike enough to share a table set) go into the open group stream of that kind,
    a new one once it would exceed ``cap`` words. Empty tensors have no stream. Streams are listed in the
    order of their first tensor (the payload order of version 3).
    """
    streams, open_group, size = [], {}, {}
    for i, (w, b) in enumerate(zip(word_list, kinds)):
        n = int(w.size)
        if n == 0:
            continue
        if n < group_below:
            g = open_group.get(b)
            if g is not None and size[g] + n <= cap:
                streams[g].append(i)
                size[g] += n
                continue
            open_group[b] = len(streams)
        streams.append([i])
        size[len(streams) - 1] = n
    return streams


#: a stream of its own keeps at least this many stripes when it gets longer ones (an 8-lane decoder: one each)
MIN_STRIPES = 8


def stream_stripe_len(numel: int, word_bits: int, stripe_len: int, min_stripes: int = MIN_STRIPES,
                      stripe_bits: int | None = None) -> int:
    """The stripe length of a stream of its own: ``stripe_len`` words, or longer where the stream stays cut.

    The longest ``stripe_len * 2**k`` words that hold at most ``stripe_bits`` bits of raw words (default
    ``16 * stripe_len``: the raw size of a 16-bit stripe, so an 8-bit stream gets stripes of twice the words
    and a 16-bit one keeps ``stripe_len``) and still leave the stream ``min_stripes`` stripes or more (0: always
    ``stripe_len``). Fewer stripes cost fewer header words, paddings and index records; a stripe of no more
    raw bits than a 16-bit one compresses to about as many words, so the decoder's input buffers are sized
    alike. An encoder choice only: every decoder reads each stream's stripe length from the index.
    """
    s = int(stripe_len)
    if min_stripes <= 0:
        return s
    limit = min((16 * s if stripe_bits is None else int(stripe_bits)) // int(word_bits), 65536)
    while 2 * s <= limit and -(-int(numel) // (2 * s)) >= min_stripes:
        s *= 2
    return s


def compress(arrays: dict, tableset_fn=None, stripe_len: int = DEFAULT_STRIPE, attrs: dict | None = None,
             progress=None, L: int = 8, share: bool = True, plan_progress=None,
             group_below: int = DEFAULT_GROUP_BELOW, threads: int = 1, min_stripes: int = MIN_STRIPES,
             stripe_bits: int | None = None, reorder: bool = True, rows=True, states: int = 1) -> ct.Container:
    """Code named arrays into a container.

    Parameters
    ----------
    arrays : dict of str -> numpy.ndarray
        Integer or 16-bit float arrays (bfloat16 as ``ml_dtypes.bfloat16``), coded losslessly.
    tableset_fn : callable(words, word_bits) -> TableSet, optional
        How to choose one stream's classes (one table set per stream), e.g.
        :func:`lutzip.codec.encoder.greedy_tableset`. By default :func:`lutzip.codec.encoder.plan_tables` designs the table
        sets and lets streams share one where that pays.
    stripe_len : int
        Words per stripe, 1..65536.
    attrs : dict of str -> dict, optional
        Per-tensor attributes stored with the tensor (e.g. quantisation scale).
    progress : callable(name), optional
        Called once per tensor as it is coded.
    L : int
        Longest class code (the decoder's LUT1 address bits), 1..12.
    share : bool
        Let streams share table sets (default encoder only).
    plan_progress : callable(name), optional
        Called once per stream when its table set has been chosen (with its first tensor's name; default
        encoder only).
    group_below : int
        Tensors of fewer words share group streams (:func:`plan_streams`); 0: every tensor owns its stripes
        (what version 2 can store).
    threads : int
        Threads that design the table sets (tensors in parallel) and code each stream's stripes
        (:func:`lutzip.codec.bitstream.encode_stripes`); the same bytes for any number.
    min_stripes, stripe_bits : int
        A tensor that owns its stream gets longer stripes (:func:`stream_stripe_len`): an 8-bit tensor of at
        least ``2 * min_stripes * stripe_len`` words stripes of ``2 * stripe_len`` words by default (the raw bits
        of a 16-bit stripe; ``stripe_bits`` changes that bound). Its table set is designed for ``stripe_len``,
        which stays the stripe length of group streams. ``min_stripes=0``: every stream has stripes of
        ``stripe_len`` words.
    reorder : bool
        Let a tensor be coded in another axis order where its zero runs are cheaper so
        (:func:`lutzip.codec.layout.choose_axes`; format version 4). The decoded array is the same; the
        stream (what a hardware decoder emits) holds ``numpy.transpose(tensor, axes)``. ``False``: every
        stream holds its tensor in its own order (version 3).
    rows : bool or dict
        Let a tensor of its own stream be a row stream (format version 6, docs/FORMAT.md section 3.1: mirrored
        rows coded by half) where that makes it smaller (:func:`lutzip.codec.rows.choose`). ``False``: none.
        A dict ``{name: (axes, modes)}``: exactly these tensors, so (what ``choose`` tries).
    states : int
        2: a table set gets a second code table (format version 5) where that codes its streams in fewer bits,
        chosen from the words' token statistics before its stripes are coded (:mod:`lutzip.codec.states_plan`;
        a table set with a row stream: planned on the coded row stripes afterwards,
        :func:`lutzip.codec.states_plan.rewrite`). 1: one code table everywhere.
    """
    from lutzip.codec import bitstream           # the encoder (numba): imported when something is compressed
    from lutzip.codec.decode import MAX_STRIPE_WORDS
    from lutzip.errors import TableError
    if int(states) not in (1, 2):
        raise TableError(f"states={states}: 1 or 2 code tables")
    if not 1 <= int(stripe_len) <= MAX_STRIPE_WORDS:
        raise TableError(f"stripe length {stripe_len} outside 1..{MAX_STRIPE_WORDS}")
    from lutzip.codec import rows as rw
    names, shapes, word_list, dtypes, axes_list, row_modes = [], [], [], [], [], []
    for name, arr in arrays.items():
        arr = np.asarray(arr) if not hasattr(arr, "dtype") else arr
        axes = choose_axes(arr) if reorder and arr.dtype.itemsize <= 2 else None
        words, dtype = to_words(stored(arr, axes))
        got = None
        if isinstance(rows, dict):
            got = rows.get(name)
        elif rows and words.size >= max(int(group_below), 1):
            got = rw.choose(name, arr, axes, words, dtype, (attrs or {}).get(name), stripe_len=stripe_len, L=L,
                            min_stripes=min_stripes, stripe_bits=stripe_bits)
        if got is not None:
            if got[0] != axes:
                axes = got[0]
                words, dtype = to_words(stored(arr, axes))
        axes_list.append(axes)
        row_modes.append(None if got is None else np.asarray(got[1], np.uint8))
        names.append(name)
        shapes.append(tuple(arr.shape))
        word_list.append(words)
        dtypes.append(dtype)
    bits_list = [ct.dtype_bits(d) for d in dtypes]
    plan = plan_streams(word_list, dtypes, int(group_below), GROUP_STRIPES * int(stripe_len))
    for m in plan:
        if len(m) > 1 and any(row_modes[i] is not None for i in m):
            raise UnsupportedError(f"tensor {names[m[0]]!r}: a row stream holds one tensor (it is in a group stream)")
    # a row stream's table set is planned for its coded words (rows.reduce)
    row_n = {}
    for i, m in enumerate(row_modes):
        if m is not None:
            shp = shapes[i] if axes_list[i] is None else tuple(shapes[i][a] for a in axes_list[i])
            if rw.row_shape(shp) is None or dtypes[i] not in rw.ROW_DTYPES:
                raise UnsupportedError(f"tensor {names[i]!r} of dtype {dtypes[i]}, stored shape {shp}: not a row "
                                       f"stream")
            row_n[i] = rw.row_shape(shp)[1]
    s_words = [(rw.reduce(word_list[m[0]], row_n[m[0]], row_modes[m[0]]) if m[0] in row_n else word_list[m[0]])
               if len(m) == 1 else np.concatenate([word_list[i] for i in m]) for m in plan]
    s_bits = [bits_list[m[0]] for m in plan]
    if tableset_fn is None:
        from lutzip.codec.encoder import plan_tables
        tables, assignment = plan_tables(s_words, s_bits, stripe_len, L=L, share=share,
                                         progress=(lambda k: plan_progress(names[plan[k][0]])) if plan_progress
                                         else None, threads=max(1, int(threads)))
    else:
        tables = [tableset_fn(w, b) for w, b in zip(s_words, s_bits)]
        assignment = list(range(len(tables)))
    if not tables:
        from lutzip.codec.tables import raw_tableset
        tables = [raw_tableset(16)]
    S_of = [stream_stripe_len(s_words[k].size, s_bits[k], stripe_len, min_stripes, stripe_bits)
            if len(m) == 1 and s_words[k].size >= group_below else int(stripe_len) for k, m in enumerate(plan)]
    two, rewrite = {}, False
    if int(states) == 2:
        from lutzip.codec import states_plan
        if states_plan.available():
            two = _two_tables(tables, assignment, plan, s_words, S_of, row_n, L)
        else:                                # no C kernels: the one-table container rewritten (Python / numba)
            rewrite = True
    tables = [two[i][0] if i in two else ts for i, ts in enumerate(tables)]
    entries = [None] * len(names)
    chunks = []
    offset = 0
    for k, members in enumerate(plan):
        ts = tables[assignment[k]]
        i0 = members[0]
        if assignment[k] in two:
            S = S_of[k]
            payload, sw = two[assignment[k]][1].pop(k)
        elif i0 in row_n:
            N = row_n[i0]
            S = rw.rows_per_stripe(N, stream_stripe_len(word_list[i0].size, s_bits[k], stripe_len, min_stripes,
                                                        stripe_bits)) * N
            payload, sw = rw.RowEncoder(ts, N, row_modes[i0], S // N, dtypes[i0]).encode(word_list[i0])
        else:
            S = S_of[k]
            payload, sw = bitstream.encode_stripes(s_words[k], ts, S, threads=threads)
        starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))]).tolist()
        mv = memoryview(payload.astype("<u4", copy=False)).cast("B")     # the stripes' bytes, no copy
        crcs = np.array([zlib.crc32(mv[4 * starts[j]:4 * starts[j + 1]]) for j in range(len(sw))], np.uint32)
        pos = 0
        for i in members:
            entries[i] = ct.TensorEntry(names[i], dtypes[i], shapes[i], assignment[k], S, offset, sw, crcs,
                                        dict((attrs or {}).get(names[i], {})), k, pos,
                                        int(word_list[i].size) if i in row_n else int(s_words[k].size),
                                        axes_list[i], i in row_n)
            pos += int(word_list[i].size)
            if progress:
                progress(names[i])
        chunks.append(payload)
        offset += 4 * len(payload)
    for i, name in enumerate(names):
        if entries[i] is None:                       # an empty tensor: no stream
            bits = bits_list[i]
            table = next((j for j, ts in enumerate(tables) if ts.word_bits == bits), None)
            entries[i] = ct.TensorEntry(name, dtypes[i], shapes[i], table, stripe_len, 0,
                                        np.zeros(0, np.uint32), np.zeros(0, np.uint32),
                                        dict((attrs or {}).get(name, {})))
            if progress:
                progress(name)
    payload = np.concatenate(chunks) if chunks else np.zeros(0, np.uint32)
    out = ct.Container(tables, entries, payload)
    if rewrite:
        from lutzip.codec import states as st
        out = st.apply(out, L=L)
    elif int(states) == 2 and row_n:           # the table sets of row streams: planned on their coded stripes
        from lutzip.codec import states_plan
        out = states_plan.rewrite(out, L=L, only_rows=True)
    return out


def _two_tables(tables, assignment, plan, s_words, S_of, row_n, L) -> dict:
    """``{table index: (two-table set, {stream: (payload, stripe words)})}`` for the table sets whose streams
    :func:`lutzip.codec.states_plan.plan_group` codes with two code tables (none with a row stream)."""
    from lutzip.codec import states_plan
    by = {}
    for k, a in enumerate(assignment):
        by.setdefault(a, []).append(k)
    out = {}
    for a, ks in by.items():
        if any(plan[k][0] in row_n for k in ks) or tables[a].lens_b is not None:
            continue
        got = states_plan.plan_group(tables[a], [s_words[k] for k in ks], [S_of[k] for k in ks], L)
        if got is not None:
            out[a] = (got[0], dict(zip(ks, got[1])))
    return out


#: ``max_output="auto"``: the limit is the memory available when decoding starts (:func:`available_memory`)
AUTO = "auto"


_psutil = None           # psutil once imported, False when it is not installed (a failed import costs 0.1 ms)


def _system_available():
    global _psutil
    if _psutil is None:
        try:
            import psutil as _psutil
        except ImportError:
            _psutil = False
    if _psutil:
        return int(_psutil.virtual_memory().available)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_left():
    """What ``RLIMIT_AS`` still allows this process to map, or ``None`` without such a limit."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * int(os.sysconf("SC_PAGE_SIZE"))
        return max(soft - mapped, 0)
    except (ImportError, OSError, ValueError, IndexError, AttributeError):
        return None


def available_memory():
    """Bytes of memory available to a new allocation now, or ``None`` when the system does not say.

    ``psutil.virtual_memory().available`` when psutil is installed, else ``MemAvailable`` of
    ``/proc/meminfo`` (Linux), else ``os.sysconf`` free pages times the page size; and no more than an
    address-space limit (``RLIMIT_AS``) leaves.
    """
    known = [v for v in (_system_available(), _address_space_left()) if v is not None]
    return min(known) if known else None


def check_output_size(tensors, max_output=AUTO):
    """Raise :class:`~lutzip.codec.container.OutputLimitError` if decoding ``tensors`` exceeds ``max_output``.

    Checked from the index alone, before anything is allocated.

    Parameters
    ----------
    tensors : iterable of TensorEntry
        What is about to be decoded.
    max_output : int, "auto" or None
        Most bytes of decoded arrays allowed; ``"auto"``: the memory available now; ``None``: no limit.

    Returns
    -------
    int
        The bytes the tensors decode to.
    """
    total = sum(t.raw_bytes for t in tensors)
    limit = available_memory() if max_output == AUTO else max_output
    if limit is not None and total > int(limit):
        what = "the memory available" if max_output == AUTO else "the limit"
        raise ct.OutputLimitError(f"the tensors decode to {total} bytes, more than {what} ({int(limit)} bytes); "
                                  f"raise the limit with --max-output / max_output= if this is intended")
    return total


# ------------------------------------------------------------------------------------------ output memory
#: tensors of fewer bytes come from ``numpy.empty`` (:class:`_Slabs`)
SLAB_MIN = 64 << 10
#: tensors of fewer bytes share slabs of :data:`SLAB_BYTES`; larger ones get a mapping of their own
SLAB_MAX = 4 << 20
#: bytes of one shared slab (a multiple of the 2 MiB huge page)
SLAB_BYTES = 8 << 20
#: mappings whose arrays have all been dropped are kept for the next ``decompress`` up to this many bytes
POOL_BYTES = 64 << 20
_HUGE = 2 << 20
_pool: list = []             # (bytes, mmap, address); appended by _Slab.__del__, taken by _new_slab


class _Slab:
    """One private anonymous mapping, 2 MiB-aligned inside and advised ``MADV_HUGEPAGE``, as a numpy buffer.

    The arrays decoded into it are views of ``numpy.asarray(slab)``; when the last of them is dropped the
    mapping goes back to the pool (at most :data:`POOL_BYTES` in all) or is unmapped.
    """
    __slots__ = ("mm", "addr", "size")

    def __init__(self, mm, addr, size):
        self.mm, self.addr, self.size = mm, addr, size

    @property
    def __array_interface__(self):
        return {"shape": (self.size,), "typestr": "|u1", "data": (self.addr, False), "version": 3}

    def __del__(self):
        mm, self.mm = self.mm, None
        if mm is None:
            return
        try:
            if sum(p[0] for p in _pool) + self.size <= POOL_BYTES:
                _pool.append((self.size, mm, self.addr))
                return
        except TypeError:                               # interpreter shutdown
            pass
        mm.close()


def _new_slab(size: int):
    """A :class:`_Slab` of at least ``size`` bytes (a multiple of 4 KiB): a pooled one of at most 1.25x that
    size, else a new mapping whose whole 2 MiB blocks are advised ``MADV_HUGEPAGE`` (the tail, if any, gets
    4 KiB pages: no memory beyond ``size`` is ever touched); ``None`` when the system gives none."""
    for p in list(_pool):
        if size <= p[0] <= size + size // 4:
            try:
                _pool.remove(p)                         # another thread may have taken it
            except ValueError:
                continue
            return _Slab(p[1], p[2], p[0])
    import mmap
    try:
        # private: the default (shared) is shmem, which gets no huge pages here; the slack lets the slab start
        # on a 2 MiB boundary (its pages are never touched)
        mm = mmap.mmap(-1, size + _HUGE, flags=mmap.MAP_PRIVATE)
    except (OSError, ValueError, OverflowError, TypeError, AttributeError):     # also: no MAP_PRIVATE (Windows)
        return None
    import ctypes
    holder = ctypes.c_char.from_buffer(mm)
    base = ctypes.addressof(holder)
    del holder
    skip = -base % _HUGE
    try:
        if size >= _HUGE:
            mm.madvise(mmap.MADV_HUGEPAGE, skip, size // _HUGE * _HUGE)
    except (AttributeError, OSError, ValueError):
        pass                                            # no huge pages: 4 KiB pages, as numpy.empty's
    return _Slab(mm, base + skip, size)


class _Slabs:
    """The output arrays of one ``decompress``.

    A fresh 4 KiB page costs its first write a page fault (1.7 us on the machine of docs/log/2026-12-decoder.md,
    a quarter of a cold decode), a 2 MiB huge page one fault for 512 times the memory. ``numpy.empty`` asks for
    huge pages only from 4 MiB (and glibc's mapping of such an array is not 2 MiB-aligned), so here: tensors of
    :data:`SLAB_MIN` to :data:`SLAB_MAX` bytes are packed into 2 MiB-aligned huge-page slabs of
    :data:`SLAB_BYTES`, larger ones get a mapping of their own, smaller ones come from ``numpy.empty``. A slab
    is released (pooled) when all its arrays are dropped, so a kept array holds at most :data:`SLAB_BYTES`
    besides its own memory, never every output.
    """

    def __init__(self):
        self.slab, self.used = None, SLAB_BYTES

    def empty(self, numel: int, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = int(numel) * dtype.itemsize
        if nbytes < SLAB_MIN:
            return np.empty(numel, dtype)
        if nbytes >= SLAB_MAX:
            slab = _new_slab(-(-nbytes // 4096) * 4096)
            return np.empty(numel, dtype) if slab is None else np.asarray(slab)[:nbytes].view(dtype)
        at = (self.used + 63) & ~63
        if at + nbytes > SLAB_BYTES:
            slab = _new_slab(SLAB_BYTES)
            if slab is None:
                return np.empty(numel, dtype)
            self.slab, at = np.asarray(slab), 0
        self.used = at + nbytes
        return self.slab[at:at + nbytes].view(dtype)


def _np_dtype(t: ct.TensorEntry):
    return ct.DTYPES[ct.DTYPE_CODES[t.dtype]][2]


def decode_stream(c: ct.Container, s, check_crc: bool = True, stripes=None, threads: int = 1) -> np.ndarray:
    """Decode stripes of one stream (a :class:`~lutzip.codec.container.Stream`, or a tensor for its stream).

    Parameters
    ----------
    c : Container
        The container.
    s : Stream or TensorEntry
        The stream (or a tensor: its ``table``, ``stripe_len``, ``offset``, stripes and ``stream_numel``).
    check_crc : bool
        Check the CRC of each stripe decoded.
    stripes : (int, int), optional
        ``(first, stop)``: only these stripes (default all).
    threads : int
        Threads of the compiled decoder (stripes split between them).

    Returns
    -------
    numpy.ndarray
        The decoded words of those stripes (uint8 for an 8-bit table set, else uint16).
    """
    numel = int(s.numel if isinstance(s, ct.Stream) else (s.stream_numel or s.numel))
    S = int(s.stripe_len)
    sw = np.asarray(s.stripe_words, np.int64)
    rows = row_args(c, s)
    if rows is not None:                # a row stream: one tensor, decoded whole
        stripes = None
    a, b = stripes if stripes is not None else (0, len(sw))
    starts = np.concatenate([[0], np.cumsum(sw)])
    b = min(b, len(sw))
    n = max(min(b * S, numel) - a * S, 0)
    ts = c.tables[s.table]
    out = np.empty(n, np.uint8 if ts.word_bits == 8 else np.uint16)
    # the stripes' CRCs are checked inside the decoder, each before its stripe is decoded (a CRC error wins)
    return decode_stripes(c.stripe_payload(s)[starts[a]:starts[b]], sw[a:b], n, S, ts, s.name, out=out,
                          crcs=np.asarray(s.stripe_crcs, np.uint32)[a:b] if check_crc else None, threads=threads,
                          first_stripe=a, crc_where=f"tensor {s.name!r}" if isinstance(s, ct.TensorEntry) else s.name,
                          rows=rows)


def row_args(c: ct.Container, s):
    """``(N, dtype)`` of a row stream (a :class:`~lutzip.codec.container.Stream` or its tensor) for
    :func:`lutzip.codec.decode.decode_stripes`, or ``None``."""
    if not getattr(s, "rows", False):
        return None
    t = c.tensors[s.members[0]] if isinstance(s, ct.Stream) else s
    from lutzip.codec.rows import row_shape
    rs = row_shape(t.stored_shape)
    return (rs[1] if rs else 0), t.dtype


#: lutzip dtype name -> (word bits, numpy dtype of the array) (the decompress side's look-up)
_OUT_DTYPES = {v[0]: (v[1], np.dtype(v[2])) for v in ct.DTYPES.values()}


def _shaped(words: np.ndarray, t: ct.TensorEntry) -> np.ndarray:
    """A tensor's decoded words as its array: its dtype, its stored shape, transposed back to its own axis order
    when it has one (version 4, :func:`lutzip.codec.layout.restore`: a copy then)."""
    if t.axes is None:
        return words.view(_OUT_DTYPES[t.dtype][1]).reshape(t.shape)
    return restore(words.view(_np_dtype(t)).reshape(t.stored_shape), t.axes)


def decompress_tensor(c: ct.Container, t: ct.TensorEntry, check_crc: bool = True, threads: int = 1,
                      alloc=None) -> np.ndarray:
    """Decode one tensor of a container back to its array (bit-identical to what was coded).

    A tensor that owns its stream is decoded straight into the returned array (one allocation of the tensor's
    size); a tensor of a group stream decodes only the stripes that hold its words. The caller checks the
    size first (:func:`check_output_size`). ``alloc``: where that array comes from (``alloc(numel, dtype)``,
    default ``numpy.empty``).
    """
    bits = ct.dtype_bits(t.dtype)
    if not t.numel:
        return np.empty(0, np.uint8 if bits == 8 else np.uint16).view(_np_dtype(t)).reshape(t.shape)
    if t.grouped:
        a, b = t.stripe_range()
        words = decode_stream(c, t, check_crc, (a, b), threads)
        lo = t.word_offset - a * int(t.stripe_len)
        out = words[lo:lo + t.numel]
        if len(out) != t.numel:
            from lutzip.errors import DecodeError
            raise DecodeError(f"group stream holds {len(words)} words at stripes {a}..{b - 1}, the tensor needs "
                              f"{t.numel} from word {lo}", t.name)
        return _shaped(out if t.axes is not None else out.copy(), t)
    out = (alloc or np.empty)(t.numel, np.uint8 if bits == 8 else np.uint16)
    decode_stripes(c.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, c.tables[t.table], t.name, out=out,
                   crcs=np.asarray(t.stripe_crcs, np.uint32) if check_crc else None, threads=threads,
                   rows=row_args(c, t))
    return _shaped(out, t)


def decompress(c: ct.Container, check_crc: bool = True, max_output=AUTO, threads: int = 1) -> dict:
    """Decode every tensor of a container: ``{name: array}``.

    Each group stream is decoded once and split into its tensors. Arrays of 64 KiB to 4 MiB are views of
    2 MiB-aligned huge-page slabs of 8 MiB (:class:`_Slabs`: a fresh process pays one page fault per 2 MiB,
    not per 4 KiB); a slab is released when all its arrays are dropped.

    Parameters
    ----------
    c : Container
        A parsed container.
    check_crc : bool
        Check every stripe's CRC before decoding it.
    max_output : int, "auto" or None
        Most bytes of arrays to produce (:func:`check_output_size`), checked before decoding.
    threads : int
        Threads of the compiled decoder per stream (1: single-threaded).
    """
    check_output_size(c.tensors, max_output)
    fast = _decompress_c(c, check_crc, threads)
    if fast is not None:
        return fast
    out, cache, alloc = {}, {}, _Slabs().empty
    for t in c.tensors:
        if t.numel and t.grouped:
            key = (t.offset, t.stream_numel)
            if key not in cache:
                cache[key] = decode_stream(c, t, check_crc, threads=threads)   # group streams are small (GROUP_STRIPES)
            words = cache[key]
            if t.word_offset + t.numel > len(words):
                out[t.name] = decompress_tensor(c, t, check_crc, threads)     # raises the decoder's error
                continue
            w = words[t.word_offset:t.word_offset + t.numel]
            out[t.name] = _shaped(w if t.axes is not None else w.copy(), t)
        else:
            out[t.name] = decompress_tensor(c, t, check_crc, threads, alloc)
    return out


def _decompress_c(c: ct.Container, check_crc: bool, threads: int):
    """:func:`decompress` with every stream decoded in one call of the C library (``lz_decode_many``), or
    ``None``: no C library, a container whose fields the per-tensor path must judge (stream fields of the wrong
    dtype or length, a stream that does not tile), or any decode or CRC error (the per-tensor path then decodes
    again and raises the error it names)."""
    from lutzip.codec import fastdec
    if not fastdec.available():
        return None
    try:
        streams = c.streams
    except ct.FormatError:
        return None
    tensors, payload, tables = c.tensors, c.payload, c.tables
    if payload.dtype != np.uint32 or not payload.flags.c_contiguous:
        return None
    alloc = _Slabs().empty
    rows, outs, later = [], [], []
    n_tables, n_payload = len(tables), len(payload)
    out_dtypes = _OUT_DTYPES
    u32 = np.dtype(np.uint32)
    # each stream's words run to the next stream's offset in payload order (the last: the payload's end); the
    # kernel checks that its stripes add up to exactly that (else ERR_INDEX: the per-tensor path judges)
    by_offset = sorted(range(len(streams)), key=lambda j: streams[j].offset)
    ends = [n_payload] * len(streams)
    for j, k in zip(by_offset, by_offset[1:]):
        ends[j] = streams[k].offset // 4
    for s, hi in zip(streams, ends):
        if s.rows:                      # a row stream: decoded after the others (rows.decode: the same kernel)
            later.append(s)
            continue
        ts = tables[s.table] if 0 <= s.table < n_tables else None
        sw, crcs = s.stripe_words, s.stripe_crcs
        S, numel = int(s.stripe_len), int(s.numel)
        if ts is None or not isinstance(sw, np.ndarray) or sw.dtype != u32 or not sw.flags.c_contiguous \
                or not 1 <= S <= 65536 or len(sw) != -(-numel // S) or s.offset % 4:
            return None
        if check_crc:
            if not isinstance(crcs, np.ndarray) or crcs.dtype != u32 or not crcs.flags.c_contiguous \
                    or len(crcs) != len(sw):
                return None
        else:
            crcs = None
        members = s.members
        bits = {out_dtypes[tensors[i].dtype][0] if tensors[i].dtype in out_dtypes else ct.dtype_bits(tensors[i].dtype)
                for i in members}
        if len(bits) != 1:
            return None
        (bits,) = bits
        if ts.word_bits == 16 and bits == 8:
            return None
        # a group stream's words are copied out per tensor: its buffer is temporary (not in a slab)
        out = (alloc if len(members) == 1 else np.empty)(numel, np.uint8 if bits == 8 else np.uint16)
        lo = s.offset // 4
        if not 0 <= lo <= hi:
            return None
        rows.append(((lo, hi), sw, numel, S, ts, out, crcs))     # payload[lo:hi]: one address look-up for all
        outs.append(out)
    rc = fastdec.decode_many(rows, max(1, int(threads)), payload=payload)[0] if rows else 0
    if rc:
        return None
    result = {}
    for s in later:
        t = tensors[s.members[0]]
        try:
            result[t.name] = decompress_tensor(c, t, check_crc, threads, alloc)
        except (ct.FormatError, ct.LutzError):
            return None
    for s, words in zip((s for s in streams if not s.rows), outs):
        if len(s.members) == 1:
            t = tensors[s.members[0]]
            result[t.name] = _shaped(words, t)
            continue
        for i in s.members:             # a group stream: each tensor gets a copy of its words
            t = tensors[i]
            w = words[t.word_offset:t.word_offset + t.numel]
            result[t.name] = _shaped(w if t.axes is not None else w.copy(), t)
    out = {}
    for t in tensors:
        a = result.get(t.name)
        if a is None:
            if t.numel:
                return None             # a tensor no stream holds: the per-tensor path judges it
            a = np.empty(0, np.uint8 if ct.dtype_bits(t.dtype) == 8 else np.uint16).view(_np_dtype(t)).reshape(t.shape)
        out[t.name] = a
    return out


# --------------------------------------------------------------------------------------------- .npz output
def npz_name_problem(names):
    """Why ``names`` cannot all be written to one ``.npz`` that ``numpy.load`` reads back, or ``None``.

    An ``.npz`` member is ``name + ".npy"``; ``numpy.load`` gives it back as ``name``. A name holding NUL
    cannot be a zip member name (zip readers cut it there), and a name ``x.npy`` beside a name ``x`` is
    ambiguous to ``numpy.load`` (``z["x.npy"]`` returns the member of ``x``).
    """
    names = list(names)
    have = set(names)
    for n in names:
        if "\0" in n:
            return f"tensor name {n!r} holds a NUL character, which an .npz member name cannot"
        if n.endswith(".npy") and n[:-4] in have:
            return f"tensor names {n[:-4]!r} and {n!r} cannot both be stored in an .npz (numpy.load reads {n!r} " \
                   f"as the member of {n[:-4]!r})"
    return None


def write_npz(path, names, get) -> int:
    """Write arrays to the ``.npz`` file ``path``, one at a time, atomically; any tensor name is stored as it is.

    Unlike ``numpy.savez(f, **arrays)``, names such as ``file`` or ``allow_pickle`` are not taken for keyword
    arguments; the layout is the one ``numpy.savez`` writes (stored zip members ``name.npy``, ZIP64).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; it appears only once every array is written (:func:`~lutzip.codec.container.atomic_output`).
    names : list of str
        The tensor names, in order; checked first (:func:`npz_name_problem`).
    get : callable(name) -> numpy.ndarray
        Gives each array when it is written (so only one needs to be in memory at a time).

    Returns
    -------
    int
        Number of arrays written.
    """
    import zipfile
    from lutzip.errors import FormatError
    problem = npz_name_problem(names)
    if problem:
        raise FormatError(f"{problem}; read this file with lutzip.load / lutzip.open instead")
    with ct.atomic_output(path) as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name in names:
            arr = get(name)
            with zf.open(name + ".npy", "w", force_zip64=True) as m:
                np.lib.format.write_array(m, np.asanyarray(arr), allow_pickle=False)
            del arr
    return len(names)

