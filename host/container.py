"""The ``.lutz`` container: write and read it with every size checked before use (docs/FORMAT.md, section 4)."""
from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from .errors import CorruptError, FormatError, TableError, UnsupportedError
from .tables import ClassSpec, TableSet, MAX_CLASSES, MAX_LUT3

MAGIC = b"LUTZ"
VERSION = 1
HEADER = struct.Struct("<4sHHIIQII")  # magic, version, flags, meta_len, meta_crc, payload_len, reserved, hdr_crc
HEADER_SIZE = HEADER.size  # 32
MAX_NDIM = 8
MAX_NAME = 4096
MAX_ATTRS = 1 << 20

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


# --------------------------------------------------------------------------------------------- writing
def _pack_meta(c: Container) -> bytes:
    out = bytearray()
    if not 1 <= len(c.tables) <= 0xFFFF:
        raise FormatError(f"{len(c.tables)} table sets: a container holds 1 to 65535")
    out += struct.pack("<HI", len(c.tables), len(c.tensors))
    for ts in c.tables:
        ts.validate()
        out += struct.pack("<BBH", ts.word_bits, len(ts.classes), len(ts.lut3))
        for cl in ts.classes:
            out += struct.pack("<BBBBI", cl.c, cl.kind, cl.k, 0, cl.param)
        out += np.asarray(ts.lut3, "<u2").tobytes()
    for t in c.tensors:
        name = t.name.encode("utf-8")
        attrs = json.dumps(t.attrs, sort_keys=True).encode("utf-8") if t.attrs else b""
        if len(name) > MAX_NAME:
            raise FormatError(f"tensor name of {len(name)} bytes is longer than {MAX_NAME}")
        if len(t.shape) > MAX_NDIM:
            raise FormatError(f"tensor {t.name!r} has {len(t.shape)} dimensions (max {MAX_NDIM})")
        out += struct.pack("<H", len(name)) + name
        out += struct.pack("<BB", DTYPE_CODES[t.dtype], len(t.shape))
        out += struct.pack(f"<{len(t.shape)}Q", *[int(d) for d in t.shape])
        out += struct.pack("<I", len(attrs)) + attrs
        out += struct.pack("<HIQI", t.table, t.stripe_len, t.offset, len(t.stripe_words))
        sw = np.empty((len(t.stripe_words), 2), "<u4")
        sw[:, 0] = t.stripe_words
        sw[:, 1] = t.stripe_crcs
        out += sw.tobytes()
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
        raise FormatError(f"unsupported .lutz version {version} (this reader knows {VERSION})")
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
    n_tables, n_tensors = r.unpack("HI", "table/tensor counts")
    if n_tables == 0:
        raise FormatError("container has no table set")
    tables = []
    for i in range(n_tables):
        w, ncls, n3 = r.unpack("BBH", f"table set {i}")
        if ncls > MAX_CLASSES or n3 > MAX_LUT3:
            raise FormatError(f"table set {i} claims {ncls} classes and {n3} LUT3 entries")
        classes = []
        for j in range(ncls):
            c, kind, k, res, param = r.unpack("BBBBI", f"class {j} of table set {i}")
            if res:
                raise FormatError(f"class {j} of table set {i}: reserved byte is {res}")
            classes.append(ClassSpec(c, kind, k, param))
        lut3 = np.frombuffer(r.take(2 * n3, f"LUT3 of table set {i}"), "<u2").astype(np.uint16)
        ts = TableSet(w, classes, lut3)
        try:
            ts.validate()
        except TableError as e:
            raise TableError(f"table set {i}: {e}") from None
        tables.append(ts)
    # every tensor record takes at least 2+1+1+4+2+4+8+4 = 26 bytes: check the count before the loop
    if n_tensors * 26 > r.remaining():
        raise FormatError(f"tensor count {n_tensors} cannot fit in {r.remaining()} bytes of metadata")
    tensors = []
    used = []
    for i in range(n_tensors):
        (nl,) = r.unpack("H", f"name length of tensor {i}")
        try:
            name = r.take(nl, f"name of tensor {i}").decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"name of tensor {i} is not UTF-8") from None
        code, ndim = r.unpack("BB", f"dtype of tensor {name!r}")
        if code not in DTYPES:
            raise FormatError(f"tensor {name!r}: unknown dtype code {code}")
        if ndim > MAX_NDIM:
            raise FormatError(f"tensor {name!r}: {ndim} dimensions (max {MAX_NDIM})")
        shape = r.unpack(f"{ndim}Q", f"shape of tensor {name!r}")
        (al,) = r.unpack("I", f"attributes of tensor {name!r}")
        if al > MAX_ATTRS:
            raise FormatError(f"tensor {name!r}: attribute block of {al} bytes")
        attrs = {}
        if al:
            try:
                attrs = json.loads(r.take(al, f"attributes of tensor {name!r}").decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise FormatError(f"tensor {name!r}: attributes are not JSON") from None
            if not isinstance(attrs, dict):
                raise FormatError(f"tensor {name!r}: attributes are not a JSON object")
        table, S, offset, n_stripes = r.unpack("HIQI", f"index of tensor {name!r}")
        if table >= n_tables:
            raise FormatError(f"tensor {name!r} names table set {table}, there are {n_tables}")
        if tables[table].word_bits != DTYPES[code][1]:
            raise FormatError(f"tensor {name!r}: dtype {DTYPES[code][0]} does not match "
                              f"{tables[table].word_bits}-bit table set {table}")
        if not 1 <= S <= 65536:
            raise FormatError(f"tensor {name!r}: stripe length {S} outside 1..65536")
        numel = 1
        for d in shape:
            numel *= d
        if numel and -(-numel // S) != n_stripes or (numel == 0 and n_stripes):
            raise FormatError(f"tensor {name!r}: {n_stripes} stripes recorded for {numel} words of {S}")
        if n_stripes * 8 > r.remaining():
            raise FormatError(f"tensor {name!r}: {n_stripes} stripes do not fit the metadata")
        sw = np.frombuffer(r.take(8 * n_stripes, f"stripes of {name!r}"), "<u4").reshape(-1, 2)
        words = sw[:, 0].astype(np.int64)
        nbytes = 4 * int(words.sum())
        if offset % 4 or offset + nbytes > payload_len:
            raise FormatError(f"tensor {name!r}: stripes at {offset}..{offset + nbytes} outside the "
                              f"{payload_len}-byte payload")
        if n_stripes and words.min() < 2:
            raise FormatError(f"tensor {name!r}: a stripe of fewer than 2 words")
        if n_stripes:
            used.append((offset, offset + nbytes, name))
        tensors.append(TensorEntry(name, DTYPES[code][0], tuple(int(d) for d in shape), table, S, offset,
                                   sw[:, 0].astype(np.uint32), sw[:, 1].astype(np.uint32), attrs))
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
