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
from lutzip.codec.tables import ClassSpec, TableSet, MAX_CLASSES, MAX_LUT3

MAGIC = b"LUTZ"
VERSION = 2
HEADER = struct.Struct("<4sHHIIQII")  # magic, version, flags, meta_len, meta_crc, payload_len, reserved, hdr_crc
HEADER_SIZE = HEADER.size  # 32
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
    """One tensor of a container: its name, dtype, shape, table set and stripes."""

    name: str
    dtype: str
    shape: tuple
    table: int
    stripe_len: int
    offset: int = 0
    stripe_words: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    stripe_crcs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    attrs: dict = field(default_factory=dict)

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n

    @property
    def n_bytes(self) -> int:
        """Bytes of this tensor's stripes in the payload."""
        return 4 * int(np.asarray(self.stripe_words, np.int64).sum())

    @property
    def raw_bytes(self) -> int:
        """Bytes of the uncompressed tensor."""
        return self.numel * dtype_bits(self.dtype) // 8


@dataclass
class Container:
    """Table sets, tensor index and payload of a ``.lutz`` file."""

    tables: list
    tensors: list
    payload: np.ndarray  # uint32 words, little-endian on disk

    def tensor(self, name: str) -> TensorEntry:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def stripe_payload(self, t: TensorEntry) -> np.ndarray:
        """The uint32 words of a tensor's stripes."""
        lo = t.offset // 4
        return self.payload[lo:lo + t.n_bytes // 4]

    def stripes(self, t: TensorEntry):
        """Yield each stripe of ``t`` as an array of uint32 words (header word first)."""
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
def _pack_meta(c: Container) -> bytes:
    out = bytearray()
    if not 1 <= len(c.tables) <= 0xFFFF:
        raise FormatError(f"{len(c.tables)} table sets: a container holds 1 to 65535")
    out += _varint(len(c.tables)) + _varint(len(c.tensors))
    for ts in c.tables:
        ts.validate()
        out += struct.pack("<BB", ts.word_bits, len(ts.classes)) + _varint(len(ts.lut3))
        for cl in ts.classes:
            out += struct.pack("<BB", cl.c | (cl.kind << 4), cl.k) + _varint(cl.param)
        out += np.asarray(ts.lut3, "<u2" if ts.word_bits == 16 else "u1").tobytes()
    seen = set()
    for t in c.tensors:
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
        flags = 0
        if scale is not None:
            flags |= ATTR_SCALE
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
        out += _varint(len(name)) + name
        out += struct.pack("<BB", DTYPE_CODES[t.dtype], len(t.shape))
        out += b"".join(_varint(d) for d in t.shape)
        out += struct.pack("<B", flags)
        if scale is not None:
            out += struct.pack("<f", scale)
        out += _varint(len(attrs)) + attrs
        out += _varint(t.table) + _varint(t.stripe_len) + _varint(t.offset) + _varint(len(t.stripe_words))
        out += b"".join(_varint(n) for n in np.asarray(t.stripe_words, np.int64).tolist())
        out += np.asarray(t.stripe_crcs, "<u4").tobytes()
    return bytes(out)


def to_bytes(c: Container) -> bytes:
    """Serialise a container."""
    meta = _pack_meta(c)
    payload = np.asarray(c.payload, "<u4").tobytes()
    head = struct.pack("<4sHHIIQI", MAGIC, VERSION, 0, len(meta), zlib.crc32(meta), len(payload), 0)
    return head + struct.pack("<I", zlib.crc32(head)) + meta + payload


def write(path, c: Container) -> int:
    """Write a container to ``path`` atomically (:func:`atomic_output`); returns the number of bytes written."""
    data = to_bytes(c)
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
    if version != VERSION:
        raise FormatError(f"unsupported .lutz version {version} (this reader knows {VERSION}; re-compress "
                          f"the original weights with this lutzip)")
    if flags != 0:
        raise FormatError(f"unknown flags {flags:#x} in the header")
    if reserved != 0:
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
    tables, tensors = _parse_meta(meta, payload_len)
    payload = np.frombuffer(mv, np.dtype("<u4"), count=payload_len // 4, offset=HEADER_SIZE + meta_len)
    if not payload.dtype.isnative:
        payload = payload.astype(np.uint32)
    return Container(tables, tensors, payload)


def _parse_meta(meta: bytes, payload_len: int):
    """Tables and tensor entries of a metadata block whose CRC was checked; see :func:`parse_index`."""
    r = _Reader(meta)
    n_tables = r.varint("table set count", 0xFFFF)
    if n_tables == 0:
        raise FormatError("container has no table set")
    n_tensors = r.varint("tensor count", U64)
    tables = []
    for i in range(n_tables):
        w, ncls = r.unpack("BB", f"table set {i}")
        n3 = r.varint(f"LUT3 size of table set {i}", U64)
        if ncls > MAX_CLASSES or n3 > MAX_LUT3:
            raise FormatError(f"table set {i} claims {ncls} classes and {n3} LUT3 entries")
        if w not in (8, 16):
            raise TableError(f"table set {i}: word width {w} is not 8 or 16")
        classes = []
        for j in range(ncls):
            ck, k = r.unpack("BB", f"class {j} of table set {i}")
            param = r.varint(f"param of class {j} of table set {i}", 0xFFFFFFFF)
            classes.append(ClassSpec(ck & 15, ck >> 4, k, param))
        lut3 = np.frombuffer(r.take(n3 * w // 8, f"LUT3 of table set {i}"),
                             "<u2" if w == 16 else "u1").astype(np.uint16)
        ts = TableSet(w, classes, lut3)
        try:
            ts.validate()
        except TableError as e:
            raise TableError(f"table set {i}: {e}") from None
        tables.append(ts)
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
        code, ndim = r.unpack("BB", f"dtype of tensor {name!r}")
        if code not in DTYPES:
            raise FormatError(f"tensor {name!r}: unknown dtype code {code}")
        if ndim > MAX_NDIM:
            raise FormatError(f"tensor {name!r}: {ndim} dimensions (max {MAX_NDIM})")
        shape = tuple(r.varint(f"dimension {d} of tensor {name!r}", MAX_DIM) for d in range(ndim))
        if array_bytes(shape, DTYPES[code][1] // 8) > MAX_ARRAY_BYTES:
            raise FormatError(f"tensor {name!r}: shape {shape} is too big for an array ({DTYPES[code][1] // 8}"
                              f" bytes x the non-zero dimensions must stay below 2^63)")
        (aflags,) = r.unpack("B", f"attribute flags of tensor {name!r}")
        if aflags & ~ATTR_SCALE:
            raise FormatError(f"tensor {name!r}: unknown attribute flags {aflags:#04x}")
        attrs = {}
        if aflags & ATTR_SCALE:
            (f,) = r.unpack("f", f"scale of tensor {name!r}")
            attrs["scale"] = _scale_from_f32(f)
        al = r.varint(f"attribute length of tensor {name!r}", MAX_ATTRS)
        if al:
            try:
                more = json.loads(r.take(al, f"attributes of tensor {name!r}").decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise FormatError(f"tensor {name!r}: attributes are not JSON") from None
            except RecursionError:
                raise FormatError(f"tensor {name!r}: attributes nested deeper than {MAX_ATTR_DEPTH} "
                                  f"levels") from None
            if not isinstance(more, dict):
                raise FormatError(f"tensor {name!r}: attributes are not a JSON object")
            if _too_deep(more):
                raise FormatError(f"tensor {name!r}: attributes nested deeper than {MAX_ATTR_DEPTH} levels")
            if "scale" in more and "scale" in attrs:
                raise FormatError(f"tensor {name!r}: scale given both as f32 and in the JSON attributes")
            attrs.update(more)
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
        numel = 1
        for d in shape:
            numel *= d
        if numel and -(-numel // S) != n_stripes or (numel == 0 and n_stripes):
            raise FormatError(f"tensor {name!r}: {n_stripes} stripes recorded for {numel} words of {S}")
        if n_stripes * MIN_STRIPE_BYTES > r.remaining():
            raise FormatError(f"tensor {name!r}: {n_stripes} stripes do not fit the metadata")
        words = np.array([r.varint(f"size of stripe {s} of tensor {name!r}", S + 1) for s in range(n_stripes)],
                         np.int64)
        crcs = np.frombuffer(r.take(4 * n_stripes, f"stripe CRCs of {name!r}"), "<u4").astype(np.uint32)
        nbytes = 4 * int(words.sum())
        if offset % 4 or offset + nbytes > payload_len:
            raise FormatError(f"tensor {name!r}: stripes at {offset}..{offset + nbytes} outside the "
                              f"{payload_len}-byte payload")
        if n_stripes and words.min() < 2:
            raise FormatError(f"tensor {name!r}: a stripe of fewer than 2 words")
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


def check_stripe_crcs(c: Container, t: TensorEntry):
    """Raise :class:`CorruptError` naming the first stripe of ``t`` whose CRC does not match."""
    for s, (words, crc) in enumerate(zip(c.stripes(t), t.stripe_crcs)):
        if zlib.crc32(words.astype("<u4").tobytes()) != int(crc):
            raise CorruptError(f"tensor {t.name!r}, stripe {s}: CRC mismatch, the payload is corrupt")
