"""The ``.lutz`` container: write and read it with every size checked before use (docs/FORMAT.md, section 4)."""
from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from lutzip.errors import CorruptError, FormatError, TableError, UnsupportedError
from lutzip.codec.tables import ClassSpec, TableSet, MAX_CLASSES, MAX_LUT3

MAGIC = b"LUTZ"
VERSION = 2
HEADER = struct.Struct("<4sHHIIQII")  # magic, version, flags, meta_len, meta_crc, payload_len, reserved, hdr_crc
HEADER_SIZE = HEADER.size  # 32
MAX_NDIM = 8
MAX_NAME = 4096
MAX_ATTRS = 1 << 20
MAX_DIM = (1 << 63) - 1
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
    for t in c.tensors:
        name = t.name.encode("utf-8")
        attrs = dict(t.attrs) if t.attrs else {}
        scale = _f32_scale(attrs)
        flags = 0
        if scale is not None:
            flags |= ATTR_SCALE
            del attrs["scale"]
        attrs = json.dumps(attrs, sort_keys=True, separators=(",", ":")).encode("utf-8") if attrs else b""
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
    """Write a container to ``path``; returns the number of bytes written."""
    data = to_bytes(c)
    with open(path, "wb") as f:
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


def from_bytes(data: bytes) -> Container:
    """Parse and validate a container. Raises :class:`FormatError` / :class:`CorruptError` on any problem."""
    data = bytes(data)
    if len(data) < HEADER_SIZE:
        raise FormatError(f"file of {len(data)} bytes is shorter than the {HEADER_SIZE}-byte header")
    magic, version, flags, meta_len, meta_crc, payload_len, _res, hdr_crc = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise FormatError(f"not a .lutz file (magic {magic!r}, expected {MAGIC!r})")
    if zlib.crc32(data[:28]) != hdr_crc:
        raise CorruptError("header CRC mismatch: the file header is corrupt")
    if version != VERSION:
        raise FormatError(f"unsupported .lutz version {version} (this reader knows {VERSION}; re-compress "
                          f"the original weights with this lutzip)")
    if flags != 0:
        raise FormatError(f"unknown flags {flags:#x} in the header")
    if payload_len % 4:
        raise FormatError(f"payload length {payload_len} is not a multiple of 4")
    expect = HEADER_SIZE + meta_len + payload_len
    if expect != len(data):
        raise FormatError(f"header claims {expect} bytes (metadata {meta_len}, payload {payload_len}) "
                          f"but the file has {len(data)}" + (": truncated" if expect > len(data) else ""))
    meta = data[HEADER_SIZE:HEADER_SIZE + meta_len]
    if zlib.crc32(meta) != meta_crc:
        raise CorruptError("metadata CRC mismatch: tables or tensor index are corrupt")
    payload = np.frombuffer(data, "<u4", count=payload_len // 4, offset=HEADER_SIZE + meta_len).astype(np.uint32)
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
    for i in range(n_tensors):
        nl = r.varint(f"name length of tensor {i}", MAX_NAME)
        try:
            name = r.take(nl, f"name of tensor {i}").decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"name of tensor {i} is not UTF-8") from None
        code, ndim = r.unpack("BB", f"dtype of tensor {name!r}")
        if code not in DTYPES:
            raise FormatError(f"tensor {name!r}: unknown dtype code {code}")
        if ndim > MAX_NDIM:
            raise FormatError(f"tensor {name!r}: {ndim} dimensions (max {MAX_NDIM})")
        shape = tuple(r.varint(f"dimension {d} of tensor {name!r}", MAX_DIM) for d in range(ndim))
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
            if not isinstance(more, dict):
                raise FormatError(f"tensor {name!r}: attributes are not a JSON object")
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
    for (a0, a1, n0), (b0, b1, n1) in zip(used, used[1:]):
        if b0 < a1:
            raise FormatError(f"stripes of tensors {n0!r} and {n1!r} overlap")
    return Container(tables, tensors, payload)


def read(path) -> Container:
    """Read and validate a container file."""
    with open(path, "rb") as f:
        return from_bytes(f.read())


def check_stripe_crcs(c: Container, t: TensorEntry):
    """Raise :class:`CorruptError` naming the first stripe of ``t`` whose CRC does not match."""
    for s, (words, crc) in enumerate(zip(c.stripes(t), t.stripe_crcs)):
        if zlib.crc32(words.astype("<u4").tobytes()) != int(crc):
            raise CorruptError(f"tensor {t.name!r}, stripe {s}: CRC mismatch, the payload is corrupt")
