"""The ``.lutz`` container: write and read it with every size checked before use (docs/FORMAT.md, section 4)."""
from __future__ import annotations

import contextlib
import json
import os
import stat
import struct
import tempfile
import zlib
from dataclasses import dataclass, field

import numpy as np

from lutzip.errors import CorruptError, FormatError, LutzError, OutputLimitError, TableError, UnsupportedError  # noqa: F401
from lutzip.codec.tables import ClassSpec, TableSet, MAX_CLASSES, MAX_CODE_LEN, MAX_LUT3, MAX_LUT_K, \
    MAX_SYMBOL_BITS, MAX_ZRUN_K, LUT, RANGE, ZRUN

MAGIC = b"LUTZ"
VERSION = 3              # written by default when no tensor has an axis order (4 when one has)
READ_VERSIONS = (2, 3, 4, 5, 6)   # read (and written on request; 5: two code tables, only when a table set has them;
                                  # 6: row streams, only when a stream is one)
TS_STATES = 0x80         # version 5: bit 7 of a table set's W byte: two code tables (docs/FORMAT.md, section 2.1)
HEADER = struct.Struct("<4sHHIIQII")  # magic, version, flags, meta_len, meta_crc, payload_len, reserved, hdr_crc
HEADER_SIZE = HEADER.size  # 32
META_LZMA = 0x0001       # header flags bit 0 (versions 3-5): the metadata block is a raw LZMA2 stream (FORMAT.md, 4)
META_RATIO = 256         # a compressed metadata block expands to at most this many times its stored bytes
META_DICT_MAX = 1 << 24  # LZMA2 dictionary: max(4096, the block's length), at most 16 MiB (encoder and decoder)
MAX_NDIM = 8
MAX_NAME = 4096
MAX_ATTRS = 1 << 20
MAX_ATTR_DEPTH = 64      # nesting of arrays/objects in the JSON attributes (the object itself is level 1)
MAX_DIM = (1 << 63) - 1
MAX_ARRAY_BYTES = (1 << 63) - 1   # numpy's limit: element size x the product of the non-zero dimensions
U64 = (1 << 64) - 1

#: dtype code -> (name, word bits, numpy dtype of the decoded array)
DTYPES = {
    1: ("int8", 8, np.int8),
    2: ("uint8", 8, np.uint8),
    3: ("int16", 16, np.int16),
    4: ("uint16", 16, np.uint16),
    5: ("bfloat16", 16, np.uint16),   # bit patterns
    6: ("float16", 16, np.float16),
}
DTYPE_CODES = {v[0]: k for k, v in DTYPES.items()}


def dtype_bits(name: str) -> int:
    if name not in DTYPE_CODES:
        raise UnsupportedError(f"unsupported dtype {name!r} (lutzip codes {', '.join(DTYPE_CODES)})")
    return DTYPES[DTYPE_CODES[name]][1]


def printable(text: str) -> str:
    """``text`` safe to print to a terminal: control and other non-printable characters as escapes.

    Tensor names come from files; a name holding ``ESC[2J`` must not clear the user's screen. Printable
    characters (any script) stay as they are; a backslash becomes ``\\\\`` so the escaped form is unambiguous;
    everything :meth:`str.isprintable` rejects becomes ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``.

    Parameters
    ----------
    text : str
        A tensor name or any other text read from a file.

    Returns
    -------
    str
        The escaped text (``text`` itself when nothing needs escaping).
    """
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            o = ord(ch)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
    return "".join(out)


def array_bytes(shape, itemsize: int) -> int:
    """Bytes numpy needs for an array of ``shape``: ``itemsize`` times the product of the non-zero dimensions.

    numpy refuses any shape for which this exceeds ``2**63 - 1`` even when a dimension is 0 (an empty array),
    so the reader checks it (:data:`MAX_ARRAY_BYTES`).
    """
    n = int(itemsize)
    for d in shape:
        if d:
            n *= int(d)
    return n


def _too_deep(obj, limit: int = MAX_ATTR_DEPTH) -> bool:
    """True if a JSON value nests arrays/objects more than ``limit`` levels (``{}`` is 1), without recursion.

    Stops at the first value beyond the limit, so a self-referencing structure ends too.
    """
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list, tuple)):
            if d > limit:
                return True
            stack.extend((v, d + 1) for v in (o.values() if isinstance(o, dict) else o))
    return False


@contextlib.contextmanager
def atomic_output(path, mode: str = "wb"):
    """Open ``path`` for writing so that it appears whole or not at all.

    The data goes to a temporary file in the same directory, which replaces ``path`` only when the ``with``
    block ends without an exception; on any error the temporary file is removed and an existing ``path`` is
    left as it was. A ``path`` that exists and is not a regular file (``/dev/null``, a FIFO, a terminal) is
    written directly.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    mode : str
        ``"wb"`` or ``"w"``.

    Yields
    ------
    file object
        Open for writing.
    """
    path = os.fspath(path)
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(path, mode) as f:
            yield f
        return
    d, base = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".part", dir=d)
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)             # as open() would have created it
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass
class TensorEntry:
    """One tensor of a container: its name, dtype, shape, attributes and where its words are coded.

    ``table``, ``stripe_len``, ``offset``, ``stripe_words`` and ``stripe_crcs`` describe the *stream* the
    tensor's words are coded in (docs/FORMAT.md, section 4): the tensor's own stripes when it owns its
    stream (always in version 2), the stripes of a group stream shared with other small tensors otherwise.
    ``stream`` is the stream's index in :attr:`Container.streams` (``None`` for an empty tensor, or for an
    entry made by hand that owns its stripes), ``word_offset`` the index of the tensor's first word in the
    stream and ``stream_numel`` the stream's word count (``None``: the tensor's own ``numel``).
    """

    name: str
    dtype: str
    shape: tuple
    table: int
    stripe_len: int
    offset: int = 0
    stripe_words: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    stripe_crcs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    attrs: dict = field(default_factory=dict)
    stream: int | None = None
    word_offset: int = 0
    stream_numel: int | None = None
    axes: tuple | None = None
    rows: bool = False       # version 6: the tensor's stream is a row stream (docs/FORMAT.md, section 3.1)

    @property
    def stored_shape(self) -> tuple:
        """The shape of the array whose C-order words the stream holds: ``shape`` permuted by ``axes``
        (version 4: ``numpy.transpose(tensor, axes)``); ``shape`` itself when ``axes`` is ``None``."""
        if self.axes is None:
            return tuple(self.shape)
        return tuple(self.shape[a] for a in self.axes)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n

    @property
    def owns_stream(self) -> bool:
        """True when the stripes hold this tensor's words only (every tensor of a version-2 file)."""
        return self.stream_numel is None or (self.word_offset == 0 and int(self.stream_numel) == self.numel)

    @property
    def grouped(self) -> bool:
        """True when the tensor shares a group stream with other tensors."""
        return not self.owns_stream

    @property
    def n_bytes(self) -> int:
        """Bytes of this tensor's stripes in the payload; for a grouped tensor its share of the group stream's
        bytes, pro rata of its words (rounded)."""
        b = 4 * int(np.asarray(self.stripe_words, np.int64).sum())
        if self.owns_stream:
            return b
        return int(round(b * self.numel / max(int(self.stream_numel), 1)))

    @property
    def raw_bytes(self) -> int:
        """Bytes of the uncompressed tensor."""
        return self.numel * dtype_bits(self.dtype) // 8

    def stripe_range(self) -> tuple:
        """``(first, stop)``: the stripes of the stream that hold this tensor's words (``(0, 0)`` when empty)."""
        if not self.numel:
            return 0, 0
        S = int(self.stripe_len)
        return self.word_offset // S, -(-(self.word_offset + self.numel) // S)


@dataclass
class Stream:
    """A run of stripes coded with one table set: one tensor's words, or a group of small tensors' words.

    Duck-types the stripe fields of :class:`TensorEntry` (``name``, ``table``, ``stripe_len``, ``offset``,
    ``numel``, ``stripe_words``, ``stripe_crcs``, ``n_bytes``), so :meth:`Container.stripes`,
    :meth:`Container.stripe_payload` and :func:`check_stripe_crcs` take a stream as well as a tensor.
    """

    index: int
    table: int
    stripe_len: int
    offset: int
    numel: int
    stripe_words: np.ndarray
    stripe_crcs: np.ndarray
    members: list = field(default_factory=list)     # indices into Container.tensors, in file order
    rows: bool = False                              # version 6: a row stream (its one tensor's ``rows``)

    @property
    def name(self) -> str:
        return f"stream {self.index}"

    @property
    def n_stripes(self) -> int:
        return len(self.stripe_words)

    @property
    def n_bytes(self) -> int:
        return 4 * int(np.asarray(self.stripe_words, np.int64).sum())

    @property
    def grouped(self) -> bool:
        """True when the stream holds the words of more than one tensor."""
        return len(self.members) > 1


def derive_streams(tensors) -> list:
    """The streams of a tensor list, in the order the tensors first use them (checked for consistency).

    A tensor with ``stream=None`` or owning its stripes makes a stream of its own from its stripe fields;
    tensors naming the same ``stream`` index share it and must agree on its fields, and their words must
    tile it in file order (``word_offset`` 0, then each where the previous ends). Empty tensors have none.

    Raises
    ------
    FormatError
        Members of one stream disagree, or their words do not tile it.
    """
    streams, by_key = [], {}
    for i, t in enumerate(tensors):
        if not t.numel:
            continue
        key = ("own", i) if t.stream is None or (t.owns_stream and t.word_offset == 0
                                                 and t.stream_numel in (None, t.numel)) else ("s", t.stream)
        s = by_key.get(key)
        numel = t.numel if key[0] == "own" else int(t.stream_numel)
        if s is None:
            s = Stream(len(streams), t.table, t.stripe_len, t.offset, numel, t.stripe_words, t.stripe_crcs,
                       rows=bool(t.rows))
            s.fill = 0
            by_key[key] = s
            streams.append(s)
        elif (s.table, s.stripe_len, s.offset, s.numel) != (t.table, t.stripe_len, t.offset, numel) or \
                not np.array_equal(np.asarray(s.stripe_words, np.int64), np.asarray(t.stripe_words, np.int64)):
            raise FormatError(f"tensor {t.name!r} names stream {t.stream} with other stripe fields than the tensors "
                              f"before it in that stream")
        if key[0] == "s" and t.word_offset != s.fill:
            raise FormatError(f"tensor {t.name!r}: word offset {t.word_offset} in stream {t.stream}, the words before "
                              f"it end at {s.fill} (a stream's tensors tile it in file order)")
        s.fill += t.numel
        s.members.append(i)
    for s in streams:
        if s.fill != s.numel:
            raise FormatError(f"the tensors of stream {s.index} hold {s.fill} of its {s.numel} words")
        del s.fill
    return streams


@dataclass
class Container:
    """Table sets, tensor index and payload of a ``.lutz`` file.

    :attr:`streams` (derived from the tensor entries when first asked for) lists the runs of stripes of one
    table set; in version 3 several small tensors may share one.
    """

    tables: list
    tensors: list
    payload: np.ndarray  # uint32 words, little-endian on disk

    def __post_init__(self):
        self._streams = None
        self.version = None      # the version a parsed container was read from

    @property
    def streams(self) -> list:
        """The :class:`Stream` list, in payload order (every stream's ``members`` are tensor indices)."""
        if self._streams is None:
            self._streams = derive_streams(self.tensors)
        return self._streams

    def stream_of(self, t: TensorEntry):
        """The :class:`Stream` holding tensor ``t``'s words (``None`` for an empty tensor)."""
        if not t.numel:
            return None
        numel = t.stream_numel or t.numel
        if t.stream is not None and 0 <= t.stream < len(self.streams):
            s = self.streams[t.stream]
            if s.offset == t.offset and s.numel == numel:
                return s
        for s in self.streams:
            if s.offset == t.offset and s.numel == numel:
                return s
        raise KeyError(t.name)

    def tensor(self, name: str) -> TensorEntry:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def stripe_payload(self, t) -> np.ndarray:
        """The uint32 words of the stripes of a tensor's stream (a tensor or a :class:`Stream`)."""
        lo = t.offset // 4
        return self.payload[lo:lo + 4 * int(np.asarray(t.stripe_words, np.int64).sum()) // 4]

    def stripes(self, t):
        """Yield each stripe of ``t``'s stream (a tensor or a :class:`Stream`) as uint32 words (header first)."""
        words = self.stripe_payload(t)
        p = 0
        for n in np.asarray(t.stripe_words, np.int64):
            yield words[p:p + n]
            p += n


# --------------------------------------------------------------------------------------------- varints
MAX_VARINT = 10          # bytes of an unsigned LEB128 value < 2^64
ATTR_SCALE = 0x01        # tensor flags bit 0: an f32 ``scale`` follows
MIN_TENSOR_BYTES = 9     # name_len, dtype, ndim, flags, attrs_len, table, S, offset, n_stripes: 1 byte each at least
MIN_STRIPE_BYTES = 5     # varint n_words (>= 1 byte) + u32 crc
MIN_TENSOR_BYTES_V3 = 5  # v3: prefix length, suffix length, dtype, ndim, flags
MIN_STREAM_BYTES = 1     # v3: the stream flags byte
# v3 tensor flags: bit 0 an f32 scale follows, bit 1 JSON attributes follow, bits 2-3 the placement
T_SCALE = 0x01
T_ATTRS = 0x02
T_AXES = 0x10            # version 4: ndim x u8 axis order follows (docs/FORMAT.md, section 4.1)
PLACE_NEW, PLACE_SAME, PLACE_INDEX, PLACE_NONE = 0, 1, 2, 3
# v3 stream flags: bit 0 the stripe length follows (else the block's default), bit 1 the table index follows
# (else the previous stream's; 0 for the first)
S_STRIPE_LEN = 0x01
S_TABLE = 0x02
S_ROWS = 0x04            # version 6: a row stream (docs/FORMAT.md, section 3.1)


def _varint(v: int) -> bytes:
    """Unsigned LEB128."""
    v = int(v)
    if v < 0 or v >> 64:
        raise FormatError(f"value {v} cannot be stored as an unsigned 64-bit varint")
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _f32_scale(attrs: dict):
    """The ``scale`` attribute as an f32 if storing it as 4 bytes reads back exactly the same Python float."""
    s = attrs.get("scale") if attrs else None
    if isinstance(s, bool) or not isinstance(s, (float, np.floating)):
        return None
    s = float(s)
    with np.errstate(over="ignore"):
        f = np.float32(s)
    return f if _scale_from_f32(f) == s else None


def _scale_from_f32(f) -> float:
    # the shortest decimal of the f32, as a Python float: what quantize.quantize_int produces
    return float(str(np.float32(f)))


# --------------------------------------------------------------------------------------------- writing
def _pack_tables(tables, version: int = 3) -> bytes:
    out = bytearray()
    for i, ts in enumerate(tables):
        ts.validate()
        two = ts.lens_b is not None
        if two and version < 5:
            raise FormatError(f"table set {i} has two code tables: version {version} cannot store it (write version 5)")
        out += struct.pack("<BB", ts.word_bits | (TS_STATES if two else 0), len(ts.classes)) + _varint(len(ts.lut3))
        for cl in ts.classes:
            out += struct.pack("<BB", cl.c | (cl.kind << 4), cl.k) + _varint(cl.param)
        if two:
            out += struct.pack("<H", ts.follow) + bytes(int(v) for v in ts.lens_b)
        out += np.asarray(ts.lut3, "<u2" if ts.word_bits == 16 else "u1").tobytes()
    return bytes(out)


def _tensor_fields(t: TensorEntry, seen: set):
    """``(name bytes, dtype+shape bytes, scale or None, attrs JSON bytes)`` of a tensor, every limit checked."""
    if not isinstance(t.name, str):
        raise FormatError(f"tensor name {t.name!r} is not a string")
    if t.name in seen:
        raise FormatError(f"tensor name {t.name!r} appears twice: names in a container are unique")
    seen.add(t.name)
    try:
        name = t.name.encode("utf-8")
    except UnicodeEncodeError:
        raise FormatError(f"tensor name {t.name!r} cannot be stored as UTF-8") from None
    attrs = dict(t.attrs) if t.attrs else {}
    scale = _f32_scale(attrs)
    if scale is not None:
        del attrs["scale"]
    if attrs and _too_deep(attrs):
        raise FormatError(f"tensor {t.name!r}: attributes nested deeper than {MAX_ATTR_DEPTH} levels")
    try:
        attrs = json.dumps(attrs, sort_keys=True, separators=(",", ":")).encode("utf-8") if attrs else b""
    except (TypeError, ValueError, RecursionError) as e:
        raise FormatError(f"tensor {t.name!r}: attributes cannot be stored as JSON ({e})") from None
    if array_bytes(t.shape, dtype_bits(t.dtype) // 8) > MAX_ARRAY_BYTES:
        raise FormatError(f"tensor {t.name!r}: shape {tuple(t.shape)} is too big for an array")
    if len(name) > MAX_NAME:
        raise FormatError(f"tensor name of {len(name)} bytes is longer than {MAX_NAME}")
    if len(t.shape) > MAX_NDIM:
        raise FormatError(f"tensor {t.name!r} has {len(t.shape)} dimensions (max {MAX_NDIM})")
    if len(attrs) > MAX_ATTRS:
        raise FormatError(f"tensor {t.name!r}: attributes of {len(attrs)} bytes (max {MAX_ATTRS})")
    head = struct.pack("<BB", DTYPE_CODES[t.dtype], len(t.shape)) + b"".join(_varint(d) for d in t.shape)
    return name, head, scale, attrs


def check_axes(axes, ndim: int, name) -> tuple | None:
    """``axes`` as a tuple, ``None`` for the identity or ``None``; :class:`FormatError` unless it is a
    permutation of ``0 .. ndim-1``."""
    if axes is None:
        return None
    axes = tuple(int(a) for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise FormatError(f"tensor {name!r}: axis order {axes} is not a permutation of its {ndim} axes")
    return None if axes == tuple(range(ndim)) else axes


def version_for(c: Container) -> int:
    """The lowest version that holds ``c``: 6 when a stream is a row stream, 5 when a table set has two code
    tables, 4 when a tensor has an axis order, else :data:`VERSION` (3)."""
    if any(getattr(t, "rows", False) for t in c.tensors):
        return 6
    if any(getattr(ts, "lens_b", None) is not None for ts in c.tables):
        return 5
    return 4 if any(check_axes(t.axes, len(t.shape), t.name) for t in c.tensors) else VERSION


def _pack_meta_v2(c: Container) -> bytes:
    """The version-2 metadata block: every tensor owns its stripes (no group streams)."""
    if not 1 <= len(c.tables) <= 0xFFFF:
        raise FormatError(f"{len(c.tables)} table sets: a container holds 1 to 65535")
    out = bytearray(_varint(len(c.tables)) + _varint(len(c.tensors)))
    out += _pack_tables(c.tables, 2)
    seen = set()
    for t in c.tensors:
        if t.grouped:
            raise FormatError(f"tensor {t.name!r} shares a group stream: version 2 cannot store it (write version 3)")
        if check_axes(t.axes, len(t.shape), t.name) is not None:
            raise FormatError(f"tensor {t.name!r} has an axis order: version 2 cannot store it (write version 4)")
        if t.rows:
            raise FormatError(f"tensor {t.name!r} is a row stream: version 2 cannot store it (write version 6)")
        name, head, scale, attrs = _tensor_fields(t, seen)
        out += _varint(len(name)) + name + head
        out += struct.pack("<B", ATTR_SCALE if scale is not None else 0)
        if scale is not None:
            out += struct.pack("<f", scale)
        out += _varint(len(attrs)) + attrs
        table = t.table if t.table is not None else next(
            (i for i, ts in enumerate(c.tables) if ts.word_bits == dtype_bits(t.dtype)), 0)
        out += _varint(table) + _varint(t.stripe_len) + _varint(t.offset) + _varint(len(t.stripe_words))
        out += b"".join(_varint(n) for n in np.asarray(t.stripe_words, np.int64).tolist())
        out += np.asarray(t.stripe_crcs, "<u4").tobytes()
    return bytes(out)


def _check_layout(c: Container, streams) -> None:
    """What a version-3 file implies rather than stores, checked on the writer's side: the streams tile the
    payload in the order of their first tensor, each has ``ceil(numel / S)`` stripes and a CRC per stripe, its
    table set exists and has the word width of every tensor in it."""
    end, prev = 0, None
    size = 4 * len(c.payload)
    starts = {s.offset for s in streams}
    for s in streams:
        first = c.tensors[s.members[0]].name
        if not 1 <= int(s.stripe_len) <= 65536:
            raise FormatError(f"tensor {first!r}: stripe length {s.stripe_len} outside 1..65536")
        n = -(-s.numel // int(s.stripe_len))
        if len(s.stripe_words) != n:
            raise FormatError(f"tensor {first!r}: {len(s.stripe_words)} stripes recorded for {s.numel} words of "
                              f"{s.stripe_len}")
        if len(s.stripe_crcs) != n:
            raise FormatError(f"tensor {first!r}: {len(s.stripe_crcs)} stripe CRCs for {n} stripes")
        if not isinstance(s.table, (int, np.integer)) or not 0 <= s.table < len(c.tables):
            raise FormatError(f"tensor {first!r} names table set {s.table}, there are {len(c.tables)}")
        for i in s.members:
            t = c.tensors[i]
            if c.tables[s.table].word_bits != dtype_bits(t.dtype):
                raise FormatError(f"tensor {t.name!r}: dtype {t.dtype} does not match "
                                  f"{c.tables[s.table].word_bits}-bit table set {s.table}")
        if s.rows or any(c.tensors[i].rows for i in s.members):
            _check_row_stream(s, [c.tensors[i] for i in s.members], f"tensor {first!r}")
        if s.offset % 4 or s.offset < 0:
            raise FormatError(f"tensor {first!r}: stripes at {s.offset} outside the {size}-byte payload")
        if s.offset != end and end in starts:
            raise FormatError(f"the stripes of tensor {first!r} are not where the streams before it end ({end}): "
                              f"version 3 lays the streams out in the order of their first tensors")
        if s.offset < end:
            raise FormatError(f"stripes of tensors {prev!r} and {first!r} overlap (or are not in file order, which "
                              f"version 3 needs)")
        if s.offset > end:
            raise FormatError(f"payload bytes {end}..{s.offset} belong to no tensor (before the stripes of {first!r})")
        end, prev = s.offset + s.n_bytes, first
        if end > size:
            raise FormatError(f"tensor {first!r}: stripes at {s.offset}..{end} outside the {size}-byte payload")
    if end != size:
        raise FormatError(f"payload bytes {end}..{size} belong to no tensor")


def _check_row_stream(s, members, where: str) -> None:
    """The index's rules of a row stream (docs/FORMAT.md, section 4.1; :func:`lutzip.codec.rows.check_stream`)."""
    from lutzip.codec import rows as rw
    if len(members) != 1 or not all(t.rows for t in members):
        raise FormatError(f"{where}: a row stream holds exactly one tensor ({len(members)} here)")
    t = members[0]
    rw.check_stream(t.dtype, t.stored_shape, int(s.stripe_len), where)
    sw = np.asarray(s.stripe_words, np.int64)
    if sw.size and (sw.min() < rw.HEAD_WORDS + 1 or sw.max() > int(s.stripe_len) + rw.HEAD_WORDS):
        raise FormatError(f"{where}: a row stripe of {int(sw.min())}..{int(sw.max())} words (4..S+3)")


def _pack_meta_v3(c: Container, version: int = 3) -> bytes:
    """The version-3 (or 4: axis orders; 5: two code tables; 6: row streams) metadata block (docs/FORMAT.md,
    section 4)."""
    if not 1 <= len(c.tables) <= 0xFFFF:
        raise FormatError(f"{len(c.tables)} table sets: a container holds 1 to 65535")
    streams = derive_streams(c.tensors)
    _check_layout(c, streams)
    if version < 6 and any(s.rows for s in streams):
        raise FormatError(f"a row stream: version {version} cannot store it (write version 6)")
    where = {}
    for s in streams:
        for i in s.members:
            where[i] = s.index
    default_s = _default_stripe_len(streams)
    out = bytearray(_varint(len(c.tables)) + _varint(len(c.tensors)) + _varint(default_s))
    out += _pack_tables(c.tables, version)
    seen, prev, opened, cur = set(), b"", 0, None
    for i, t in enumerate(c.tensors):
        name, head, scale, attrs = _tensor_fields(t, seen)
        k = 0
        while k < min(len(prev), len(name)) and prev[k] == name[k]:
            k += 1
        out += _varint(k) + _varint(len(name) - k) + name[k:] + head
        prev = name
        flags = (T_SCALE if scale is not None else 0) | (T_ATTRS if attrs else 0)
        s = where.get(i)
        extra = b""
        if s is None:
            flags |= PLACE_NONE << 2
        elif s == opened:
            flags |= PLACE_NEW << 2
            opened += 1
        elif s == cur:
            flags |= PLACE_SAME << 2
        else:
            flags |= PLACE_INDEX << 2
            extra = _varint(s)
        if s is not None:
            cur = s
        axes = check_axes(t.axes, len(t.shape), t.name)
        if axes is not None:
            if version < 4:
                raise FormatError(f"tensor {t.name!r} has an axis order: version {version} cannot store it "
                                  f"(write version 4)")
            flags |= T_AXES
        out += struct.pack("<B", flags)
        if scale is not None:
            out += struct.pack("<f", scale)
        if attrs:
            out += _varint(len(attrs)) + attrs
        out += extra
        if axes is not None:
            out += bytes(axes)
    for rec in _stream_records(streams, default_s):
        out += rec
    return bytes(out)


def _default_stripe_len(streams) -> int:
    lens = [int(s.stripe_len) for s in streams]
    return max(set(lens), key=lambda v: (lens.count(v), v == 4096)) if lens else 4096


def _stream_records(streams, default_s: int) -> list:
    """The version-3 stream records (bytes each), in order."""
    out, prev_table = [], 0
    for s in streams:
        sflags = (S_STRIPE_LEN if int(s.stripe_len) != default_s else 0) | (S_TABLE if s.table != prev_table else 0) \
            | (S_ROWS if s.rows else 0)
        rec = bytearray(struct.pack("<B", sflags))
        if sflags & S_TABLE:
            rec += _varint(s.table)
        if sflags & S_STRIPE_LEN:
            rec += _varint(s.stripe_len)
        prev_table = s.table
        rec += b"".join(_varint(n) for n in np.asarray(s.stripe_words, np.int64).tolist())
        rec += np.asarray(s.stripe_crcs, "<u4").tobytes()
        out.append(bytes(rec))
    return out


def coded_bytes(c: Container) -> dict:
    """Bytes each tensor is coded in, version 3: ``{name: bytes}`` (float).

    Its stream's payload bytes plus the stream's record in the index (stripe sizes, CRCs, flags), a group
    stream's shared pro rata of the tensors' words; the name, shape and attributes are not counted (every
    format stores them). Empty tensors cost 0.
    """
    streams = c.streams
    recs = _stream_records(streams, _default_stripe_len(streams))
    out = {t.name: 0.0 for t in c.tensors}
    for s, rec in zip(streams, recs):
        total = s.n_bytes + len(rec)
        for i in s.members:
            t = c.tensors[i]
            out[t.name] = total * t.numel / s.numel
    return out


def to_bytes(c: Container, version: int | None = None, compress_meta: bool | None = None) -> bytes:
    """Serialise a container.

    Parameters
    ----------
    c : Container
        The tables, tensors and payload.
    version : {None, 5, 4, 3, 2}
        The layout of the metadata block. ``None`` (default): the lowest that holds ``c``
        (:func:`version_for`: 5 when a table set has two code tables, 4 when a tensor has an axis order, else
        3). 4 and lower cannot hold two code tables, 3 axis orders, the older 2 neither group streams.

    Raises
    ------
    FormatError
        A field out of range, a layout the version cannot express (e.g. streams not in the order of their
        first tensor), or ``version`` not 2, 3, 4 or 5.

    ``compress_meta``: as ``compress`` of :func:`pack_meta_block` (default: the metadata block LZMA-compressed
    where that is smaller; never in version 2).
    """
    if version is None:
        version = version_for(c)
    if version not in READ_VERSIONS:
        raise FormatError(f"cannot write .lutz version {version} (this writer knows {', '.join(map(str, READ_VERSIONS))})")
    meta = _pack_meta_v3(c, version) if version >= 3 else _pack_meta_v2(c)
    meta, flags, raw_len = pack_meta_block(meta, version, compress_meta)
    payload = np.asarray(c.payload, "<u4").tobytes()
    head = struct.pack("<4sHHIIQI", MAGIC, version, flags, len(meta), zlib.crc32(meta), len(payload), raw_len)
    return head + struct.pack("<I", zlib.crc32(head)) + meta + payload


def _meta_filters(raw_len: int, preset: int | None = None) -> list:
    import lzma
    f = {"id": lzma.FILTER_LZMA2, "dict_size": min(max(4096, raw_len), META_DICT_MAX)}
    if preset is not None:
        f["preset"] = preset
    return [f]


#: the LZMA literal-context and position bits the writer tries on a block of up to 256 KiB (the smallest is kept;
#: pb = 0 saves 22-73 B on real indexes of 2-9 KB against liblzma's default lc 3, pb 2)
_META_PROPS = ((3, 0), (0, 0), (1, 0), (2, 0), (0, 2), (1, 2), (2, 2), (3, 2))


def pack_meta_block(meta: bytes, version: int, compress: bool | None = None) -> tuple:
    """The metadata block as stored: ``(block, header flags, header reserved field)`` (docs/FORMAT.md, section 4).

    ``compress``: ``None`` (default) the LZMA2-compressed block (flags bit 0, ``reserved`` = the block's length)
    where that is smaller, else the block itself; ``False`` never compressed; ``True`` compressed whenever the
    format allows it (version >= 3, at most :data:`META_RATIO` times the compressed bytes, Python's ``lzma``
    present), even when larger.
    """
    if compress is False or version < 3 or not meta or len(meta) > 0xFFFFFFFF:
        return meta, 0, 0
    try:
        import lzma
    except ImportError:                  # a Python without lzma writes the block as it is
        return meta, 0, 0
    z = None
    for lc, pb in _META_PROPS if len(meta) <= 1 << 18 else _META_PROPS[:1]:   # lc, pb: in the stream's first chunk
        f = _meta_filters(len(meta), 9 | lzma.PRESET_EXTREME)
        f[0].update(lc=lc, pb=pb)
        t = lzma.compress(meta, format=lzma.FORMAT_RAW, filters=f)
        z = t if z is None or len(t) < len(z) else z
    if len(meta) > META_RATIO * len(z) or (compress is None and len(z) >= len(meta)):
        return meta, 0, 0
    return z, META_LZMA, len(meta)


def unpack_meta_block(block: bytes, raw_len: int) -> bytes:
    """The metadata of a compressed block (flags bit 0) of ``raw_len`` bytes (the checked header field).

    Never produces more than ``raw_len`` bytes (the decoder's output and dictionary are bounded by it); a
    stream that is invalid, ends early, runs on, or is followed by other bytes is a one-line FormatError.
    """
    try:
        import lzma
    except ImportError:
        raise UnsupportedError("this file's metadata block is LZMA-compressed and this Python has no lzma module")
    d = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=_meta_filters(raw_len))
    try:
        out = d.decompress(block, raw_len)
        if len(out) == raw_len and not d.eof and d.decompress(b"", 1):
            raise FormatError(f"compressed metadata block expands to more than the {raw_len} bytes of the header")
    except lzma.LZMAError as e:
        raise FormatError(f"compressed metadata block is invalid (LZMA2: {e})") from None
    if not d.eof:
        raise FormatError(f"compressed metadata block is truncated ({len(out)} of {raw_len} bytes decoded)")
    if len(out) != raw_len:
        raise FormatError(f"compressed metadata block expands to {len(out)} bytes, the header says {raw_len}")
    if d.unused_data:
        raise FormatError(f"{len(d.unused_data)} bytes after the end of the compressed metadata block")
    return out


def write(path, c: Container, version: int | None = None) -> int:
    """Write a container to ``path`` atomically (:func:`atomic_output`); returns the number of bytes written.

    ``version``: as for :func:`to_bytes`.
    """
    data = to_bytes(c, version)
    with atomic_output(path) as f:
        f.write(data)
    return len(data)


# --------------------------------------------------------------------------------------------- reading
class _Reader:
    """Bounds-checked little-endian reads from a bytes object."""

    def __init__(self, buf: bytes):
        self.buf = buf
        self.pos = 0

    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def need(self, n: int, what: str):
        if n < 0 or n > self.remaining():
            raise FormatError(f"metadata truncated: {what} needs {n} bytes, {self.remaining()} left")

    def unpack(self, fmt: str, what: str):
        s = struct.calcsize("<" + fmt)
        self.need(s, what)
        v = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += s
        return v

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        v = self.buf[self.pos:self.pos + n]
        self.pos += n
        return v

    def varint(self, what: str, limit: int) -> int:
        """An unsigned LEB128 value ``<= limit``: at most 10 bytes, no overlong (zero-padded) form."""
        pos, buf = self.pos, self.buf
        if pos + 1 < len(buf):
            b = buf[pos]
            if b < 0x80:
                if b <= limit:                  # fast path: one byte (the common case), nothing to check
                    self.pos = pos + 1
                    return b
            elif 0 < buf[pos + 1] < 0x80:       # two bytes, not overlong
                v = (b & 0x7F) | buf[pos + 1] << 7
                if v <= limit:
                    self.pos = pos + 2
                    return v
        elif pos < len(buf):
            b = buf[pos]
            if b < 0x80 and b <= limit:
                self.pos = pos + 1
                return b
        v = shift = 0
        for i in range(MAX_VARINT):
            if self.pos >= len(self.buf):
                raise FormatError(f"metadata truncated: {what} (varint) runs past the end")
            b = self.buf[self.pos]
            self.pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                if i and b == 0:
                    raise FormatError(f"{what}: overlong varint (a zero last byte)")
                if v > limit:
                    raise FormatError(f"{what} = {v} exceeds the limit {limit}")
                return v
        raise FormatError(f"{what}: varint longer than {MAX_VARINT} bytes")


def parse_index(buffer) -> Container:
    """Parse and validate a container without copying its payload.

    Every check of the format (docs/FORMAT.md, section 4) is made: header, CRCs of header and metadata,
    every field's range, the layout of the payload. The stripe CRCs are checked when a tensor is decoded
    (:func:`check_stripe_crcs`), so the payload is not read here.

    Parameters
    ----------
    buffer : bytes, bytearray, memoryview or mmap.mmap
        A whole container. Only the metadata block is copied.

    Returns
    -------
    Container
        Its ``payload`` is a read-only ``uint32`` view into ``buffer`` (which must stay alive and unchanged
        while the container is used).

    Raises
    ------
    FormatError
        Not a container, truncated, or any field out of range.
    CorruptError
        The header or metadata CRC does not match.
    """
    base = memoryview(buffer)
    mv = base.cast("B")
    try:
        return _parse(mv)
    except BaseException:
        mv.release()            # an error's traceback must not keep the caller's buffer (an mmap) exported
        base.release()
        raise


def _parse(mv: memoryview) -> Container:
    size = len(mv)
    if size < HEADER_SIZE:
        raise FormatError(f"file of {size} bytes is shorter than the {HEADER_SIZE}-byte header")
    magic, version, flags, meta_len, meta_crc, payload_len, reserved, hdr_crc = HEADER.unpack_from(mv)
    if magic != MAGIC:
        raise FormatError(f"not a .lutz file (magic {magic!r}, expected {MAGIC!r})")
    if zlib.crc32(mv[:28]) != hdr_crc:
        raise CorruptError("header CRC mismatch: the file header is corrupt")
    if version not in READ_VERSIONS:
        raise FormatError(f"unsupported .lutz version {version} (this reader knows "
                          f"{' and '.join(map(str, READ_VERSIONS))}; re-compress the original weights with this lutzip)")
    if flags & ~META_LZMA or (flags and version < 3):
        raise FormatError(f"unknown flags {flags:#x} in the header")
    if flags & META_LZMA:                 # reserved = the metadata's length once decompressed
        if not 0 < reserved <= META_RATIO * meta_len:
            raise FormatError(f"compressed metadata length {reserved} out of range (1..{META_RATIO} x the "
                              f"{meta_len} stored bytes)")
    elif reserved != 0:
        raise FormatError(f"reserved header field is {reserved:#x}, must be 0")
    if payload_len % 4:
        raise FormatError(f"payload length {payload_len} is not a multiple of 4")
    expect = HEADER_SIZE + meta_len + payload_len
    if expect != size:
        raise FormatError(f"header claims {expect} bytes (metadata {meta_len}, payload {payload_len}) "
                          f"but the file has {size}" + (": truncated" if expect > size else ""))
    meta = bytes(mv[HEADER_SIZE:HEADER_SIZE + meta_len])
    if zlib.crc32(meta) != meta_crc:
        raise CorruptError("metadata CRC mismatch: tables or tensor index are corrupt")
    if flags & META_LZMA:
        meta = unpack_meta_block(meta, reserved)
    if version == 2:
        tables, tensors = _parse_meta_v2(meta, payload_len)
        streams = None
    else:
        tables, tensors, streams = _parse_meta_v3(meta, payload_len, version)
    payload = np.frombuffer(mv, np.dtype("<u4"), count=payload_len // 4, offset=HEADER_SIZE + meta_len)
    if not payload.dtype.isnative:
        payload = payload.astype(np.uint32)
    c = Container(tables, tensors, payload)
    c.version = version
    c.meta_flags = flags
    c.meta_sizes = (meta_len, len(meta))    # the metadata block as stored, and once decompressed
    if streams is not None:
        c._streams = streams
    return c


#: ClassSpec objects by their bytes (code length | kind << 4, k, param), each with what TableSet.validate asks of
#: it: ``(spec, 2^(12 - c), word bits it needs, LUT3 entries it needs)`` (needs of 99 / 2^40: the class alone
#: breaks a rule). A ClassSpec is immutable, so table sets may share one, and building one (a frozen dataclass)
#: costs more than the dictionary look-up
_classes: dict = {}
_BAD = 99, 1 << 40


def _class_entry(key) -> tuple:
    """The :data:`_classes` entry of a class's bytes (the checks of :meth:`TableSet.validate` on one class)."""
    ck, k, param = key
    c, kind = ck & 15, ck >> 4
    cl = ClassSpec(c, kind, k, param)
    w_need = n3_need = 0
    if not 1 <= c <= MAX_CODE_LEN or c + k > MAX_SYMBOL_BITS:
        w_need, n3_need = _BAD
    elif kind == LUT:
        n3_need = param + (1 << k) if k <= MAX_LUT_K else _BAD[1]
    elif kind == RANGE:
        w_need = max(k, param.bit_length()) if param % (1 << k) == 0 else _BAD[0]
    elif kind != ZRUN or k > MAX_ZRUN_K or param:
        w_need, n3_need = _BAD
    if len(_classes) >= 4096:
        _classes.clear()
    e = _classes[key] = (cl, 1 << (MAX_CODE_LEN - c) if c <= MAX_CODE_LEN else 0, w_need, n3_need)
    return e


_new_tableset = object.__new__


def _read_tables(r: _Reader, version: int = 3) -> list:
    """``n_tables`` table sets (the count already read and checked), each validated.

    The rules of :meth:`TableSet.validate` are checked from each class's :data:`_classes` entry (Kraft sum,
    word width, LUT3 size); a table set that breaks one goes through ``validate`` for its message."""
    tables = []
    for i in range(r.n_tables):
        w, ncls = r.unpack("BB", f"table set {i}")
        two = version >= 5 and w & TS_STATES
        if two:
            w &= ~TS_STATES
        n3 = r.varint(f"LUT3 size of table set {i}", U64)
        if ncls > MAX_CLASSES or n3 > MAX_LUT3:
            raise FormatError(f"table set {i} claims {ncls} classes and {n3} LUT3 entries")
        if w not in (8, 16):
            raise TableError(f"table set {i}: word width {w} is not 8 or 16")
        ents = []
        buf, p = r.buf, r.pos
        last = len(buf) - 5
        get = _classes.get
        for j in range(ncls):
            # fast path: a param of one to three varint bytes (no overlong form); anything else, or too few bytes
            # left, is read field by field with the checks and messages of _Reader
            if p <= last and buf[p + 2] < 0x80:
                key = buf[p], buf[p + 1], buf[p + 2]
                p += 3
            elif p <= last and 0 < buf[p + 3] < 0x80:
                key = buf[p], buf[p + 1], (buf[p + 2] & 0x7F) | buf[p + 3] << 7
                p += 4
            elif p <= last and buf[p + 3] >= 0x80 and 0 < buf[p + 4] < 0x80:
                key = buf[p], buf[p + 1], (buf[p + 2] & 0x7F) | (buf[p + 3] & 0x7F) << 7 | buf[p + 4] << 14
                p += 5
            else:
                r.pos = p
                ck, k = r.unpack("BB", f"class {j} of table set {i}")
                key = ck, k, r.varint(f"param of class {j} of table set {i}", 0xFFFFFFFF)
                p = r.pos
            ents.append(get(key) or _class_entry(key))
        r.pos = p
        if two:
            follow = r.unpack("H", f"follow mask of table set {i}")[0]
            lens_b = tuple(r.take(ncls, f"state-B code lengths of table set {i}"))
        if n3:
            lut3 = np.frombuffer(r.take(n3 * w // 8, f"LUT3 of table set {i}"),
                                 "<u2" if w == 16 else "u1").astype(np.uint16)
        else:
            lut3 = np.zeros(0, np.uint16)
        # a TableSet without __post_init__ (its classes are ClassSpecs, its LUT3 uint16 already)
        ts = _new_tableset(TableSet)
        ts.word_bits, ts.lut3 = w, lut3
        if ents:
            classes, kraft, w_need, n3_need = zip(*ents)
            ts.classes = list(classes)
            ok = sum(kraft) <= 1 << MAX_CODE_LEN and max(w_need) <= w and max(n3_need) <= n3
        else:
            ts.classes, ok = [], False
        if two:                             # the state-B rules are checked by validate
            ts.lens_b, ts.follow, ok = lens_b, follow, False
        # LUT3 values fit w bits by how they are read; every other rule of validate is in ok
        if not ok:
            try:
                ts.validate()
            except TableError as e:
                raise TableError(f"table set {i}: {e}") from None
        tables.append(ts)
    return tables


def _read_shape(r: _Reader, name: str):
    """``(dtype code, shape, numel)`` of a tensor record, each checked."""
    p = r.pos
    if p + 2 <= len(r.buf):
        code, ndim = r.buf[p], r.buf[p + 1]
        r.pos = p + 2
    else:
        code, ndim = r.unpack("BB", f"dtype of tensor {name!r}")
    if code not in DTYPES:
        raise FormatError(f"tensor {name!r}: unknown dtype code {code}")
    if ndim > MAX_NDIM:
        raise FormatError(f"tensor {name!r}: {ndim} dimensions (max {MAX_NDIM})")
    buf, p, dims = r.buf, r.pos, []
    for d in range(ndim):              # dimensions of one or two varint bytes read here, others by r.varint
        if p + 1 < len(buf) and buf[p] < 0x80:
            dims.append(buf[p])
            p += 1
        elif p + 2 < len(buf) and 0 < buf[p + 1] < 0x80:
            dims.append((buf[p] & 0x7F) | buf[p + 1] << 7)
            p += 2
        else:
            r.pos = p
            dims.append(r.varint(f"dimension {d} of tensor {name!r}", MAX_DIM))
            p = r.pos
    r.pos = p
    shape = tuple(dims)
    if array_bytes(shape, DTYPES[code][1] // 8) > MAX_ARRAY_BYTES:
        raise FormatError(f"tensor {name!r}: shape {shape} is too big for an array ({DTYPES[code][1] // 8}"
                          f" bytes x the non-zero dimensions must stay below 2^63)")
    numel = 1
    for d in shape:
        numel *= d
    return code, shape, numel


def _read_attrs(r: _Reader, name: str, attrs: dict, al: int) -> dict:
    """``al`` bytes of JSON attributes merged into ``attrs`` (which may hold the f32 scale)."""
    try:
        more = json.loads(r.take(al, f"attributes of tensor {name!r}").decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise FormatError(f"tensor {name!r}: attributes are not JSON") from None
    except RecursionError:
        raise FormatError(f"tensor {name!r}: attributes nested deeper than {MAX_ATTR_DEPTH} levels") from None
    if not isinstance(more, dict):
        raise FormatError(f"tensor {name!r}: attributes are not a JSON object")
    if _too_deep(more):
        raise FormatError(f"tensor {name!r}: attributes nested deeper than {MAX_ATTR_DEPTH} levels")
    if "scale" in more and "scale" in attrs:
        raise FormatError(f"tensor {name!r}: scale given both as f32 and in the JSON attributes")
    attrs.update(more)
    return attrs


def _varints(r: _Reader, n: int, limit: int):
    """``n`` varints of at most 3 bytes each, every one ``<= limit`` (``limit < 2^21``), decoded at once with
    numpy, the reader moved past them; ``None`` (the reader not moved) when any of them is not such a value
    (truncated, overlong, longer, beyond ``limit``): then :meth:`_Reader.varint` reads them one by one and
    names the bad one."""
    if n == 0 or limit >= 1 << 21:
        return np.zeros(0, np.int64) if n == 0 else None
    if n <= 64:
        # a few values (group streams, small tensors): a Python loop is quicker than the numpy set-up
        buf, p = r.buf, r.pos
        end = min(p + 3 * n, len(buf))
        out = []
        for _ in range(n):
            if p >= end:
                return None
            b0 = buf[p]
            if b0 < 0x80:
                v, p = b0, p + 1
            elif p + 1 < end and 0 < buf[p + 1] < 0x80:
                v, p = (b0 & 0x7F) | buf[p + 1] << 7, p + 2
            elif p + 2 < end and buf[p + 1] >= 0x80 and 0 < buf[p + 2] < 0x80:
                v, p = (b0 & 0x7F) | (buf[p + 1] & 0x7F) << 7 | buf[p + 2] << 14, p + 3
            else:
                return None
            if v > limit:
                return None
            out.append(v)
        r.pos = p
        return np.array(out, np.int64)
    b = np.frombuffer(r.buf, np.uint8, count=min(3 * n, r.remaining()), offset=r.pos)
    ends = np.flatnonzero(b < 0x80)[:n]                # the last byte of each value
    if len(ends) < n:
        return None
    starts = np.empty(n, np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    length = ends - starts + 1
    if length.max() > 3:
        return None
    b = b[:ends[-1] + 1].astype(np.int64)
    v = b[starts] & 0x7F
    two, three = length >= 2, length == 3
    v[two] |= (b[starts[two] + 1] & 0x7F) << 7
    v[three] |= (b[starts[three] + 2] & 0x7F) << 14
    if np.any((length > 1) & (b[ends] == 0)) or v.max() > limit:
        return None
    r.pos += int(ends[-1]) + 1
    return v


def _read_stripes(r: _Reader, n_stripes: int, S: int, what: str, head: int = 1):
    """``n_stripes`` stripe sizes (varints 2..S+1; ``head`` = 3, a row stream's: 4..S+3) then their CRCs; the
    count checked against the bytes left."""
    if n_stripes * MIN_STRIPE_BYTES > r.remaining():
        raise FormatError(f"{what}: {n_stripes} stripes do not fit the metadata")
    words = _varints(r, n_stripes, S + head)
    if words is None:       # something is wrong (or unusual): the value-by-value reader names the stripe
        words = np.array([r.varint(f"size of stripe {s} of {what}", S + head) for s in range(n_stripes)], np.int64)
    crcs = np.frombuffer(r.take(4 * n_stripes, f"stripe CRCs of {what}"), "<u4").astype(np.uint32)
    if n_stripes and words.min() < head + 1:
        raise FormatError(f"{what}: a stripe of fewer than {head + 1} words")
    return words, crcs


def _read_counts(meta: bytes):
    """A reader over ``meta`` and the block's two leading counts ``(reader, n_tables, n_tensors)`` (v2 and v3)."""
    r = _Reader(meta)
    n_tables = r.varint("table set count", 0xFFFF)
    if n_tables == 0:
        raise FormatError("container has no table set")
    return r, n_tables, r.varint("tensor count", U64)


def _parse_meta_v2(meta: bytes, payload_len: int):
    """Tables and tensor entries of a version-2 metadata block whose CRC was checked; see :func:`parse_index`."""
    r, n_tables, n_tensors = _read_counts(meta)
    r.n_tables = n_tables
    tables = _read_tables(r)
    # check the count against the bytes left before the loop
    if n_tensors * MIN_TENSOR_BYTES > r.remaining():
        raise FormatError(f"tensor count {n_tensors} cannot fit in {r.remaining()} bytes of metadata")
    tensors = []
    used = []
    names = {}
    for i in range(n_tensors):
        nl = r.varint(f"name length of tensor {i}", MAX_NAME)
        try:
            name = r.take(nl, f"name of tensor {i}").decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"name of tensor {i} is not UTF-8") from None
        if name in names:
            raise FormatError(f"tensor name {name!r} appears twice (tensors {names[name]} and {i}): names in a "
                              f"container are unique")
        names[name] = i
        code, shape, numel = _read_shape(r, name)
        (aflags,) = r.unpack("B", f"attribute flags of tensor {name!r}")
        if aflags & ~ATTR_SCALE:
            raise FormatError(f"tensor {name!r}: unknown attribute flags {aflags:#04x}")
        attrs = {}
        if aflags & ATTR_SCALE:
            (f,) = r.unpack("f", f"scale of tensor {name!r}")
            attrs["scale"] = _scale_from_f32(f)
        al = r.varint(f"attribute length of tensor {name!r}", MAX_ATTRS)
        if al:
            _read_attrs(r, name, attrs, al)
        table = r.varint(f"table index of tensor {name!r}", U64)
        if table >= n_tables:
            raise FormatError(f"tensor {name!r} names table set {table}, there are {n_tables}")
        if tables[table].word_bits != DTYPES[code][1]:
            raise FormatError(f"tensor {name!r}: dtype {DTYPES[code][0]} does not match "
                              f"{tables[table].word_bits}-bit table set {table}")
        S = r.varint(f"stripe length of tensor {name!r}", U64)
        if not 1 <= S <= 65536:
            raise FormatError(f"tensor {name!r}: stripe length {S} outside 1..65536")
        offset = r.varint(f"offset of tensor {name!r}", U64)
        n_stripes = r.varint(f"stripe count of tensor {name!r}", U64)
        if numel and -(-numel // S) != n_stripes or (numel == 0 and n_stripes):
            raise FormatError(f"tensor {name!r}: {n_stripes} stripes recorded for {numel} words of {S}")
        words, crcs = _read_stripes(r, n_stripes, S, f"tensor {name!r}")
        nbytes = 4 * int(words.sum())
        if offset % 4 or offset + nbytes > payload_len:
            raise FormatError(f"tensor {name!r}: stripes at {offset}..{offset + nbytes} outside the "
                              f"{payload_len}-byte payload")
        if n_stripes:
            used.append((offset, offset + nbytes, name))
        tensors.append(TensorEntry(name, DTYPES[code][0], shape, table, S, offset,
                                   words.astype(np.uint32), crcs, attrs))
    if r.remaining():
        raise FormatError(f"{r.remaining()} unexpected bytes after the tensor index")
    used.sort()
    end, prev = 0, None
    for a0, a1, n in used:
        if a0 < end:
            raise FormatError(f"stripes of tensors {prev!r} and {n!r} overlap")
        if a0 > end:
            raise FormatError(f"payload bytes {end}..{a0} belong to no tensor (before the stripes of {n!r})")
        end, prev = a1, n
    if end != payload_len:
        raise FormatError(f"payload bytes {end}..{payload_len} belong to no tensor")
    return tables, tensors


_parse_meta = _parse_meta_v2      # the name earlier code and tests use


def _read_streams(r: _Reader, fill: list, n_tables: int, default_s: int, payload_len: int,
                  version: int = 3) -> list:
    """The stream records of a version-3 metadata block (they end it), every field checked; ``fill``: the
    words of each stream."""
    n_streams = len(fill)
    streams = []
    offset, prev_table = 0, 0
    for k in range(n_streams):
        (sflags,) = r.unpack("B", f"flags of stream {k}")
        if sflags & ~(S_STRIPE_LEN | S_TABLE | (S_ROWS if version >= 6 else 0)):
            raise FormatError(f"stream {k}: unknown flags {sflags:#04x}")
        table = r.varint(f"table index of stream {k}", U64) if sflags & S_TABLE else prev_table
        if table >= n_tables:
            raise FormatError(f"stream {k} names table set {table}, there are {n_tables}")
        S = r.varint(f"stripe length of stream {k}", U64) if sflags & S_STRIPE_LEN else default_s
        if not 1 <= S <= 65536:
            raise FormatError(f"stream {k}: stripe length {S} outside 1..65536")
        prev_table = table
        numel = fill[k]
        words, crcs = _read_stripes(r, -(-numel // S), S, f"stream {k}", 3 if sflags & S_ROWS else 1)
        nbytes = 4 * int(words.sum())
        if offset + nbytes > payload_len:
            raise FormatError(f"stream {k}: stripes at {offset}..{offset + nbytes} outside the "
                              f"{payload_len}-byte payload")
        streams.append(Stream(k, table, S, offset, numel, words.astype(np.uint32), crcs, rows=bool(sflags & S_ROWS)))
        offset += nbytes
    if r.remaining():
        raise FormatError(f"{r.remaining()} unexpected bytes after the stream records")
    if offset != payload_len:
        raise FormatError(f"payload bytes {offset}..{payload_len} belong to no tensor")
    return streams


def _read_streams_c(r: _Reader, fill: list, n_tables: int, default_s: int, payload_len: int):
    """:func:`_read_streams` in one call of the C library (``lz_parse_streams``, the same checks), or ``None``
    when the library is not there or declines (anything wrong or unusual: :func:`_read_streams` then names it).
    The streams' stripe sizes and CRCs are views of two arrays."""
    from lutzip.codec import fastdec
    lib = fastdec.lib()
    if lib is None or not fill or max(fill) >= 1 << 62:
        return None
    buf = r.buf
    cap = r.remaining() // MIN_STRIPE_BYTES
    numel = np.array(fill, np.int64)
    rec = np.empty(4 * len(fill), np.int64)
    words = np.empty(cap, np.uint32)
    crcs = np.empty(cap, np.uint32)
    ptr = fastdec._ptr
    n = lib.lz_parse_streams(buf, len(buf), r.pos, len(fill), ptr(numel), n_tables, default_s, payload_len,
                             ptr(rec), ptr(words) if cap else None, ptr(crcs) if cap else None, cap)
    if n < 0:
        return None
    r.pos = len(buf)
    rec = rec.reshape(-1, 4).tolist()
    ends = [x[3] for x in rec[1:]] + [n]
    return [Stream(k, t, S, off, fill[k], words[a:e], crcs[a:e])
            for k, ((t, S, off, a), e) in enumerate(zip(rec, ends))]


_F32 = struct.Struct("<f")


def _parse_meta_v3(meta: bytes, payload_len: int, version: int = 3):
    """Tables, tensor entries and streams of a version-3 (or 4) metadata block whose CRC was checked."""
    r, n_tables, n_tensors = _read_counts(meta)
    default_s = r.varint("default stripe length", U64)
    if not 1 <= default_s <= 65536:
        raise FormatError(f"default stripe length {default_s} outside 1..65536")
    r.n_tables = n_tables
    tables = _read_tables(r, version)
    if n_tensors * MIN_TENSOR_BYTES_V3 > r.remaining():
        raise FormatError(f"tensor count {n_tensors} cannot fit in {r.remaining()} bytes of metadata")
    recs = []                 # (name, dtype code, shape, numel, attrs, stream, word offset, axis order)
    fill = []                 # words placed in each stream so far
    names = {}
    prev, cur = b"", None
    buf = r.buf
    for i in range(n_tensors):
        p = r.pos
        if p + 2 < len(buf) and buf[p] < 0x80 and buf[p] <= len(prev) and buf[p + 1] < 0x80 \
                and p + 2 + buf[p + 1] <= len(buf):
            pl, sl = buf[p], buf[p + 1]                 # fast path: one-byte lengths (MAX_NAME >= 255)
            raw = prev[:pl] + buf[p + 2:p + 2 + sl]
            r.pos = p + 2 + sl
        else:
            pl = r.varint(f"name prefix length of tensor {i}", len(prev))
            sl = r.varint(f"name suffix length of tensor {i}", MAX_NAME - pl)
            raw = prev[:pl] + r.take(sl, f"name of tensor {i}")
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"name of tensor {i} is not UTF-8") from None
        if name in names:
            raise FormatError(f"tensor name {name!r} appears twice (tensors {names[name]} and {i}): names in a "
                              f"container are unique")
        names[name] = i
        prev = raw
        code, shape, numel = _read_shape(r, name)
        p = r.pos
        if p + 5 <= len(buf):                           # fast path: the flags and a scale are there
            tflags = buf[p]
            r.pos = p + 1
        else:
            (tflags,) = r.unpack("B", f"flags of tensor {name!r}")
        if tflags & ~(0x1F if version >= 4 else 0x0F):
            raise FormatError(f"tensor {name!r}: unknown flags {tflags:#04x}")
        attrs = {}
        if tflags & T_SCALE:
            if p + 5 <= len(buf):
                (f,) = _F32.unpack_from(buf, p + 1)
                r.pos = p + 5
            else:
                (f,) = r.unpack("f", f"scale of tensor {name!r}")
            attrs["scale"] = _scale_from_f32(f)
        if tflags & T_ATTRS:
            al = r.varint(f"attribute length of tensor {name!r}", MAX_ATTRS)
            if al == 0:
                raise FormatError(f"tensor {name!r}: attribute length 0 with the attributes flag set")
            _read_attrs(r, name, attrs, al)
        place = (tflags >> 2) & 3
        if (place == PLACE_NONE) != (numel == 0):
            raise FormatError(f"tensor {name!r}: placement {place} for {numel} words (an empty tensor and only an "
                              f"empty tensor has no stream)")
        if place == PLACE_NEW:
            s = len(fill)
            fill.append(0)
        elif place == PLACE_SAME:
            if cur is None:
                raise FormatError(f"tensor {name!r} continues the previous tensor's stream, there is none")
            s = cur
        elif place == PLACE_INDEX:
            if not fill:
                raise FormatError(f"tensor {name!r} names a stream, there is none yet")
            s = r.varint(f"stream index of tensor {name!r}", len(fill) - 1)
        else:
            s = None
        axes = None
        if tflags & T_AXES:
            axes = tuple(r.take(len(shape), f"axis order of tensor {name!r}"))
            if check_axes(axes, len(shape), name) is None:
                raise FormatError(f"tensor {name!r}: axis order {axes} is the identity (stored only when it is not)")
        off = 0
        if s is not None:
            off = fill[s]
            fill[s] += numel
            cur = s
        recs.append((name, code, shape, numel, attrs, s, off, axes))
    n_streams = len(fill)
    if n_streams * MIN_STREAM_BYTES > r.remaining():
        raise FormatError(f"{n_streams} stream records cannot fit in {r.remaining()} bytes of metadata")
    streams = _read_streams_c(r, fill, n_tables, default_s, payload_len)
    if streams is None:
        streams = _read_streams(r, fill, n_tables, default_s, payload_len, version)
    tensors = []
    for i, (name, code, shape, numel, attrs, s, off, axes) in enumerate(recs):
        if s is None:
            tensors.append(TensorEntry(name, DTYPES[code][0], shape, None, default_s, 0, np.zeros(0, np.uint32),
                                       np.zeros(0, np.uint32), attrs, axes=axes))
            continue
        st = streams[s]
        if tables[st.table].word_bits != DTYPES[code][1]:
            raise FormatError(f"tensor {name!r}: dtype {DTYPES[code][0]} does not match "
                              f"{tables[st.table].word_bits}-bit table set {st.table} of stream {s}")
        st.members.append(i)
        tensors.append(TensorEntry(name, DTYPES[code][0], shape, st.table, st.stripe_len, st.offset,
                                   st.stripe_words, st.stripe_crcs, attrs, s, off, st.numel, axes, st.rows))
    for st in streams:
        if st.rows:
            _check_row_stream(st, [tensors[i] for i in st.members], f"stream {st.index}")
    return tables, tensors, streams


def from_bytes(data) -> Container:
    """Parse and validate a container (:func:`parse_index`); the payload is copied unless ``data`` is ``bytes``.

    Raises :class:`FormatError` / :class:`CorruptError` on any problem.
    """
    c = parse_index(data)
    if not isinstance(data, bytes):
        c.payload = c.payload.copy()         # the caller may change or release its buffer afterwards
    return c


def read(path) -> Container:
    """Read and validate a container file."""
    with open(path, "rb") as f:
        return from_bytes(f.read())


def check_stripe_crcs(c: Container, t, stripes=None):
    """Raise :class:`CorruptError` naming the first stripe whose CRC does not match.

    Parameters
    ----------
    c : Container
        The container.
    t : TensorEntry or Stream
        A tensor (the stripes of its stream that hold its words, by default) or a stream (all its stripes).
    stripes : (int, int), optional
        ``(first, stop)`` stripe indices to check instead.
    """
    if stripes is None:
        grouped = isinstance(t, TensorEntry) and t.grouped
        stripes = t.stripe_range() if grouped else (0, len(t.stripe_words))
    a, b = stripes
    for s, (words, crc) in enumerate(zip(c.stripes(t), t.stripe_crcs)):
        if s < a:
            continue
        if s >= b:
            break
        if zlib.crc32(words.astype("<u4").tobytes()) != int(crc):
            where = f"tensor {t.name!r}" if isinstance(t, TensorEntry) else t.name
            raise CorruptError(f"{where}, stripe {s}: CRC mismatch, the payload is corrupt")
