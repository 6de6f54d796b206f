"""Damaged and hostile containers: every one is a LutzError naming the problem, never a wrong array, never a
hang, and nothing is allocated from a header field before it is checked against the bytes present."""
import json
import os
import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as hst

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import CorruptError, FormatError, LutzError, TableError, UnsupportedError


def sample_file():
    rng = np.random.default_rng(5)
    a = rng.laplace(0, 300, size=(40, 50)).astype(np.int16)
    a[rng.random(a.shape) < 0.6] = 0
    b = rng.integers(-128, 128, size=300).astype(np.int8)
    c = rng.standard_normal(77).astype(np.float16)
    arrays = {"w": a, "b": b, "h": c}
    c = codec.compress(arrays, stripe_len=256, attrs={"w": {"scale": 0.5}})
    # the metadata block stored (the LZMA2-compressed one: tests/test_container_meta_lzma.py)
    return ct.to_bytes(c, compress_meta=False), arrays


#: "never a hang": every test here must finish well within this
pytestmark = pytest.mark.timeout(120)

DATA, ARRAYS = sample_file()


def decode_all(data):
    return codec.decompress(ct.from_bytes(data))


def rebuild(meta: bytes, payload: bytes = b"", version: int = 2) -> bytes:
    """A file with valid header and CRCs around arbitrary metadata: only the parser's checks stand.

    The hand-made metadata of this file is the version-2 layout (the older layout every reader still reads);
    tests/test_format_v3.py has the version-3 ones."""
    head = struct.pack("<4sHHIIQI", b"LUTZ", version, 0, len(meta), zlib.crc32(meta), len(payload), 0)
    return head + struct.pack("<I", zlib.crc32(head)) + meta + payload


def test_sample_roundtrips():
    out = decode_all(DATA)
    for k, a in ARRAYS.items():
        assert out[k].dtype == a.dtype and np.array_equal(out[k].view(np.uint8), a.view(np.uint8))


def test_truncation_at_every_length():
    lengths = sorted(set(range(0, 200)) | set(range(0, len(DATA), 7)))
    for n in lengths:
        with pytest.raises(FormatError):
            decode_all(DATA[:n])


def test_appended_bytes_rejected():
    with pytest.raises(FormatError, match="claims"):
        decode_all(DATA + b"\0\0\0\0")


@given(flips=hst.lists(hst.integers(0, 8 * len(DATA) - 1), min_size=1, max_size=4, unique=True))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_bit_flips_anywhere_are_errors(flips):
    buf = bytearray(DATA)
    for f in flips:
        buf[f // 8] ^= 1 << (f % 8)
    with pytest.raises(LutzError):
        decode_all(bytes(buf))


def test_every_single_bit_flip_sampled():
    rng = np.random.default_rng(0)
    for f in rng.choice(8 * len(DATA), size=400, replace=False):
        buf = bytearray(DATA)
        buf[f // 8] ^= 1 << (f % 8)
        with pytest.raises(LutzError):
            decode_all(bytes(buf))


def test_damaged_payload_without_crc_never_crashes():
    """With CRC checks off, a damaged stripe is a DecodeError or some array: never a crash or a hang."""
    c = ct.from_bytes(DATA)
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = c.payload.copy()
        p[rng.integers(len(p))] ^= np.uint32(1 << int(rng.integers(32)))
        c2 = ct.Container(c.tables, c.tensors, p)
        try:
            codec.decompress(c2, check_crc=False)
        except LutzError:
            pass


def test_bad_magic_version_flags():
    with pytest.raises(FormatError, match="magic"):
        decode_all(b"XXXX" + DATA[4:])
    for field, val, msg in [(4, 1, "version 1"), (4, 7, "version 7"), (4, 0xFFFF, "version 65535"), (6, 2, "flags"),
                           (6, 0x8001, "flags"), (6, 1, "compressed metadata length 0 out of range")]:
        head = bytearray(DATA[:28])
        struct.pack_into("<H", head, field, val)
        buf = bytes(head) + struct.pack("<I", zlib.crc32(bytes(head))) + DATA[32:]
        with pytest.raises(FormatError, match=msg):
            decode_all(buf)


@pytest.mark.parametrize("meta_len,payload_len", [(2**32 - 1, 0), (0, 2**63), (10, 2**40 + 4), (0, 6)])
def test_header_claiming_absurd_sizes(meta_len, payload_len):
    head = struct.pack("<4sHHIIQI", b"LUTZ", ct.VERSION, 0, meta_len, 0, payload_len, 0)
    buf = head + struct.pack("<I", zlib.crc32(head)) + b"\0" * 64
    with pytest.raises(FormatError):
        decode_all(buf)


def uv(v: int) -> bytes:
    """Unsigned LEB128 (written here independently of the container module)."""
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def _counts(n_tables=1, n_tensors=0):
    return uv(n_tables) + uv(n_tensors)


def _table(w=16, classes=((1, 1, 16, 0),), lut3=()):
    out = struct.pack("<BB", w, len(classes)) + uv(len(lut3))
    for c, kind, k, p in classes:
        out += struct.pack("<BB", c | kind << 4, k) + uv(p)
    return out + np.asarray(lut3, "<u2" if w == 16 else "u1").tobytes()


def _tensor(name=b"t", dtype=3, shape=(4,), flags=0, scale=b"", attrs=b"", table=0, S=4096, offset=0,
            stripes=((2, 0),), n_stripes=None):
    out = uv(len(name)) + name + struct.pack("<BB", dtype, len(shape)) + b"".join(uv(d) for d in shape)
    out += struct.pack("<B", flags) + scale + uv(len(attrs)) + attrs
    out += uv(table) + uv(S) + uv(offset) + uv(len(stripes) if n_stripes is None else n_stripes)
    out += b"".join(uv(n) for n, _ in stripes) + b"".join(struct.pack("<I", crc) for _, crc in stripes)
    return out


def test_varint_helper_matches_spec():
    assert uv(0) == b"\0" and uv(127) == b"\x7f" and uv(128) == b"\x80\x01" and uv(300) == b"\xac\x02"
    assert len(uv(2**64 - 1)) == 10


ONE = _counts(1, 1) + _table()


@pytest.mark.parametrize("meta,match", [
    (_counts(0, 0), "no table set"),
    (_counts(1, 0) + struct.pack("<BB", 16, 200) + uv(0), "claims"),
    (_counts(1, 0) + struct.pack("<BB", 16, 1) + uv(60000), "claims"),
    (_counts(1, 2**32 - 1) + _table(), "cannot fit"),
    (_counts(1, 2**60) + _table(), "cannot fit"),
    (_counts(5, 0) + _table(), "truncated"),
    (_counts(2**16, 0) + _table(), "exceeds"),
    (ONE + _tensor(shape=(2**40,), stripes=()), "stripes recorded"),
    (ONE + _tensor(shape=(4,) * 9), "dimensions"),
    (ONE + _tensor(shape=(2**63,)), "exceeds"),
    (ONE + _tensor(dtype=9), "dtype code"),
    (ONE + _tensor(dtype=1), "does not match"),
    (ONE + _tensor(table=3), "table set 3"),
    (ONE + _tensor(S=0), "stripe length"),
    (ONE + _tensor(S=2**40), "stripe length"),
    (ONE + _tensor(offset=2**60), "outside"),
    (ONE + _tensor(offset=2), "outside"),
    (ONE + _tensor(shape=(4,), S=4, stripes=((6, 0),)), "exceeds"),      # > S + 1 words
    (ONE + _tensor(stripes=((1, 0),)), "fewer than 2"),
    (ONE + _tensor(stripes=((100, 0),)), "outside"),
    (ONE + _tensor(attrs=b"[1]"), "JSON object"),
    (ONE + _tensor(attrs=b"{"), "not JSON"),
    (ONE + _tensor(attrs=b"\xff"), "not JSON"),
    (ONE + _tensor(flags=2), "attribute flags"),
    (ONE + _tensor(flags=1, scale=b"\0\0\0?", attrs=b'{"scale":1}'), "both"),
    (ONE + uv(8) + b"t" * 8 + struct.pack("<BB", 3, 1) + uv(4) + b"\x01\0\0", "truncated"),  # scale cut
    (ONE + _tensor(name=b"\xff"), "UTF-8"),
    (ONE + uv(5000) + b"n" * 5000, "exceeds"),                                  # name longer than MAX_NAME
    (ONE + uv(1) + b"t" + struct.pack("<BB", 3, 1) + uv(4) + b"\0" + uv(2**21) + b"{}" * 9, "exceeds"),
    (ONE + _tensor()[:-3], "do not fit"),
    (ONE + _tensor(name=b"n" * 40)[:-30], "truncated"),
    (ONE + _tensor() + b"\0", "unexpected bytes"),
    # hostile varints
    (b"\x81\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00" + uv(0) + _table(), "longer than 10"),
    (b"\x81\x00" + uv(0) + _table(), "overlong"),
    (uv(1) + b"\x80\x00" + _table(), "overlong"),
    (uv(1) + b"\x80\x80", "truncated"),
    (uv(1) + b"\xff" * 9 + b"\x7f" + _table(), "exceeds|cannot fit"),           # > 2^64 - 1 is no value
])
def test_hostile_metadata(meta, match):
    with pytest.raises(FormatError, match=match):
        decode_all(rebuild(meta, b"\0" * 8))


@pytest.mark.parametrize("n", [2**32 - 1, 2**60, 2**64 - 1])
def test_huge_stripe_count_not_allocated(n):
    """A tensor claiming 2^32-1 .. 2^64-1 stripes in a small file fails on the count, before any allocation."""
    meta = ONE + _tensor(shape=(2**31, 2**30), S=256, stripes=(), n_stripes=n)     # 2^61 words: an array numpy allows
    with pytest.raises(FormatError, match="stripes"):
        decode_all(rebuild(meta))
    meta = ONE + _tensor(shape=(2**20,), S=1, stripes=(), n_stripes=2**20)
    with pytest.raises(FormatError, match="do not fit"):
        decode_all(rebuild(meta))


@pytest.mark.parametrize("classes,lut3,match", [
    (((1, 1, 16, 0), (1, 1, 16, 0), (1, 1, 16, 0)), (), "Kraft"),
    (((0, 1, 16, 0),), (), "code length"),
    (((13, 1, 16, 0),), (), "code length"),
    (((1, 0, 2, 0),), (1, 2, 3), "LUT3"),
    (((1, 0, 13, 0),), (), "LUT index"),
    (((1, 1, 8, 3),), (), "base"),
    (((1, 1, 17, 0),), (), "exceeds"),
    (((1, 2, 17, 0),), (), "zero-run"),
    (((1, 2, 3, 5),), (), "non-zero param"),
    (((1, 7, 3, 0),), (), "unknown kind"),
    ((), (), "classes"),
])
def test_bad_tables_in_container(classes, lut3, match):
    meta = _counts(1, 0) + _table(classes=classes, lut3=lut3)
    with pytest.raises(TableError, match=match):
        decode_all(rebuild(meta))


def test_bad_word_width():
    with pytest.raises(TableError, match="word width 12"):
        decode_all(rebuild(_counts(1, 0) + _table(w=12)))


def test_lut3_value_too_wide_for_8_bits():
    """v2 stores an 8-bit table set's LUT3 as bytes: a value of 300 cannot be written, nor read."""
    ts = ct.TableSet(8, [ct.ClassSpec(1, 0, 0, 0)], np.array([300], np.uint16))
    c = ct.Container([ts], [], np.zeros(0, np.uint32))
    with pytest.raises(TableError, match="fit"):
        ct.to_bytes(c)
    meta = _counts(1, 0) + _table(w=8, classes=((1, 0, 0, 0),), lut3=(200,))
    assert ct.from_bytes(rebuild(meta)).tables[0].lut3.tolist() == [200]


def test_stripe_count_mismatch_and_crc():
    c = ct.from_bytes(DATA)
    t = c.tensors[0]
    # a stripe whose header claims a different word count (CRC recomputed so only the decoder can tell)
    p = c.payload.copy()
    lo = t.offset // 4
    p[lo] = np.uint32(0x4C5A0000 | 7)
    t2 = ct.TensorEntry(t.name, t.dtype, t.shape, t.table, t.stripe_len, t.offset, t.stripe_words.copy(),
                        t.stripe_crcs.copy(), t.attrs)
    t2.stripe_crcs[0] = zlib.crc32(p[lo:lo + int(t.stripe_words[0])].astype("<u4").tobytes())
    c2 = ct.Container(c.tables, [t2] + c.tensors[1:], p)
    with pytest.raises(LutzError, match="stripe 0"):
        codec.decompress(ct.from_bytes(ct.to_bytes(c2)))
    with pytest.raises(CorruptError, match="CRC"):
        codec.decompress(ct.Container(c.tables, [t] + c.tensors[1:], p))


def test_overlapping_stripes_rejected():
    c = ct.from_bytes(DATA)
    t0, t1 = c.tensors[0], c.tensors[1]
    t1b = ct.TensorEntry(t1.name, t1.dtype, t1.shape, t1.table, t1.stripe_len, t0.offset, t1.stripe_words,
                         t1.stripe_crcs, t1.attrs)
    with pytest.raises(FormatError, match="overlap"):
        ct.from_bytes(ct.to_bytes(ct.Container(c.tables, [t0, t1b] + c.tensors[2:], c.payload)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64])
def test_unsupported_dtypes(dtype):
    with pytest.raises(UnsupportedError):
        codec.compress({"x": np.zeros(8, dtype)})


def test_attrs_roundtrip_json():
    c = ct.from_bytes(DATA)
    assert c.tensor("w").attrs == {"scale": 0.5}
    assert json.loads(json.dumps(c.tensor("w").attrs)) == {"scale": 0.5}


@pytest.mark.parametrize("attrs", [{"scale": 3.9999e-05}, {"scale": 0.1}, {"scale": 0.123456789},
                                   {"scale": 1}, {"scale": float("inf")}, {"scale": 1e300},
                                   {"scale": 0.5, "source_dtype": "float32"}, {"note": "x"}])
def test_attrs_roundtrip_exactly(attrs):
    a = np.arange(10, dtype=np.int16)
    c = ct.from_bytes(ct.to_bytes(codec.compress({"a": a}, attrs={"a": attrs})))
    got = c.tensor("a").attrs
    assert got == attrs and {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in attrs.items()}


def test_scale_stored_in_4_bytes():
    """A float32-exact scale costs 1 flags byte + 4 bytes, not a JSON string."""
    a = np.arange(10, dtype=np.int16)
    n0 = len(ct.to_bytes(codec.compress({"a": a})))
    n1 = len(ct.to_bytes(codec.compress({"a": a}, attrs={"a": {"scale": 3.9999e-05}})))
    assert n1 - n0 == 4
    assert len(ct.to_bytes(codec.compress({"a": a}, attrs={"a": {"scale": 0.123456789}}))) - n0 > 10


# ------------------------------------------------------------------------ issue 14, items 6, 7, 8, 10
def _with_header_field(data: bytes, fmt: str, offset: int, value) -> bytes:
    head = bytearray(data[:28])
    struct.pack_into(fmt, head, offset, value)
    return bytes(head) + struct.pack("<I", zlib.crc32(bytes(head))) + data[32:]


@pytest.mark.parametrize("value", [1, 0x80000000, 0xFFFFFFFF])
def test_nonzero_reserved_header_field_rejected(value):
    with pytest.raises(FormatError, match="reserved"):
        decode_all(_with_header_field(DATA, "<I", 24, value))


def _payload_moved(gap_before: int, gap_after: int, tensor: int = 1) -> bytes:
    """DATA with ``gap_before`` zero bytes in front of tensor ``tensor``'s stripes and ``gap_after`` at the end."""
    c = ct.from_bytes(DATA)
    t = c.tensors[tensor]
    words = c.payload
    lo = t.offset // 4
    payload = np.concatenate([words[:lo], np.zeros(gap_before // 4, np.uint32), words[lo:],
                              np.zeros(gap_after // 4, np.uint32)])
    for u in c.tensors[tensor:]:
        u.offset += gap_before
    return ct.to_bytes(ct.Container(c.tables, c.tensors, payload))


@pytest.mark.parametrize("before,after,match", [(4, 0, "belong to no tensor"), (64, 0, "belong to no tensor"),
                                                (0, 4, "belong to no tensor"), (0, 4096, "belong to no tensor"),
                                                (8, 8, "belong to no tensor")])
def test_unused_payload_bytes_rejected(before, after, match):
    assert codec.decompress(ct.from_bytes(_payload_moved(0, 0)))["w"].shape == (40, 50)
    with pytest.raises(FormatError, match=match):
        decode_all(_payload_moved(before, after))
    with pytest.raises(FormatError, match=match):      # the first tensor moved as well
        decode_all(_payload_moved(before, after, tensor=0))


def test_duplicate_names_rejected_by_reader_and_writer():
    a = np.arange(4, dtype=np.int16)
    meta = _counts(1, 2) + _table() + _tensor(name=b"t", shape=(0,), stripes=()) + \
        _tensor(name=b"t", shape=(0,), stripes=())
    with pytest.raises(FormatError, match="'t' appears twice"):
        decode_all(rebuild(meta))
    c = codec.compress({"t": a, "u": a})
    c.tensors[1].name = "t"
    with pytest.raises(FormatError, match="'t' appears twice"):
        ct.to_bytes(c)
    # names that differ only after a NUL, or in case, are different names
    back = decode_all(ct.to_bytes(codec.compress({"a\0x": a, "a\0y": a + 1, "A": a, "a": a})))
    assert sorted(back) == sorted(["a\0x", "a\0y", "A", "a"]) and np.array_equal(back["a\0y"], a + 1)


@pytest.mark.parametrize("attrs", [b"[" * 200_000 + b"]" * 200_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
                                   b'{"a":' * 65 + b"1" + b"}" * 65])
def test_deeply_nested_attributes_are_one_error(attrs):
    body = b'{"x":' + attrs + b"}" if attrs[:1] == b"[" else attrs
    meta = ONE + _tensor(shape=(0,), stripes=(), attrs=body)
    with pytest.raises(FormatError, match="nested deeper than 64") as e:
        decode_all(rebuild(meta))
    assert "\n" not in str(e.value)


def test_attribute_nesting_limit_is_the_same_for_writer_and_reader():
    a = np.arange(4, dtype=np.int16)
    ok, deep = {}, {}
    for _ in range(63):
        ok = {"a": ok}
    for _ in range(64):
        deep = {"a": deep}
    assert decode_all(ct.to_bytes(codec.compress({"t": a}, attrs={"t": ok})))["t"].shape == (4,)
    with pytest.raises(FormatError, match="nested deeper"):
        ct.to_bytes(codec.compress({"t": a}, attrs={"t": deep}))
    circular = {}
    circular["me"] = circular
    with pytest.raises(FormatError, match="'t'"):
        ct.to_bytes(codec.compress({"t": a}, attrs={"t": circular}))


@pytest.mark.parametrize("shape,dtype", [((0, 2**62), 3), ((2**62, 0), 3), ((0, 2**62, 3), 1), ((0, 2**63 - 1), 3),
                                         ((0, 2**32, 2**32), 3)])
def test_shape_numpy_cannot_hold_is_an_error(shape, dtype):
    table = _table(w=8, classes=((1, 1, 8, 0),)) if dtype in (1, 2) else _table()
    meta = _counts(1, 1) + table + _tensor(shape=shape, dtype=dtype, stripes=())
    with pytest.raises(FormatError, match="too big for an array"):
        decode_all(rebuild(meta))


@pytest.mark.parametrize("shape,dtype", [((0, 2**61), 3), ((0, 2**62), 1), ((2**20, 0, 2**40), 1),
                                         ((0, 2**63 - 1), 1)])
def test_empty_shapes_numpy_can_hold_decode(shape, dtype):
    table = _table(w=8, classes=((1, 1, 8, 0),)) if dtype in (1, 2) else _table()
    out = decode_all(rebuild(_counts(1, 1) + table + _tensor(shape=shape, dtype=dtype, stripes=())))
    assert out["t"].shape == shape and out["t"].size == 0


def test_output_size_checked_before_allocating(monkeypatch):
    """A small file declaring a large output: refused from the index, with the sizes; nothing is decoded."""
    z = np.zeros((4096, 1024), np.int16)                  # 8 MiB of zeros: a few KB of zero runs
    data = ct.to_bytes(codec.compress({"z": z}))
    assert len(data) < 64 * 1024
    calls = []
    monkeypatch.setattr(codec, "decode_stripes", lambda *a, **k: calls.append(a))
    with pytest.raises(ct.OutputLimitError, match=f"{z.nbytes} bytes, more than the limit \\(1000000 bytes\\)"):
        codec.decompress(ct.from_bytes(data), max_output=1_000_000)
    assert calls == []
    monkeypatch.setattr(codec, "available_memory", lambda: 5_000_000)     # the default: memory available
    with pytest.raises(ct.OutputLimitError, match="memory available"):
        codec.decompress(ct.from_bytes(data))
    monkeypatch.undo()
    assert codec.decompress(ct.from_bytes(data), max_output=z.nbytes)["z"].shape == z.shape
    assert codec.decompress(ct.from_bytes(data), max_output=None)["z"].shape == z.shape
    assert codec.available_memory() is None or codec.available_memory() > 0


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.float16])
def test_decode_into_the_output_once(dtype):
    """The decoded array owns one buffer of exactly its size (no wider intermediate kept, no copy made)."""
    import tracemalloc
    a = (np.arange(1 << 20) % 7).astype(dtype)
    c = ct.from_bytes(ct.to_bytes(codec.compress({"a": a})))
    codec.decompress(c)                                  # compile first
    tracemalloc.start()
    out = codec.decompress(c)["a"]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.array_equal(out, a)
    assert peak < a.nbytes * 1.25 + 200_000, (peak, a.nbytes)


def test_parse_index_does_not_copy_the_payload():
    buf = bytearray(DATA)
    c = ct.parse_index(buf)
    assert np.shares_memory(c.payload, np.frombuffer(buf, np.uint8))
    assert not np.shares_memory(ct.from_bytes(buf).payload, np.frombuffer(buf, np.uint8))
    out = codec.decompress(c)
    for k, a in ARRAYS.items():
        assert np.array_equal(out[k].view(np.uint8), a.view(np.uint8))


def test_write_is_atomic(tmp_path, monkeypatch):
    p = tmp_path / "m.lutz"
    p.write_bytes(b"old")
    c = codec.compress({"a": np.arange(4, dtype=np.int16)})
    c.tensors[0].attrs = {"bad": object()}
    with pytest.raises(FormatError):
        ct.write(p, c)
    assert p.read_bytes() == b"old" and sorted(x.name for x in tmp_path.iterdir()) == ["m.lutz"]
    c.tensors[0].attrs = {}

    def boom(*a):
        raise OSError("disk full")
    real = ct.os.replace
    monkeypatch.setattr(ct.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        ct.write(p, c)
    monkeypatch.setattr(ct.os, "replace", real)
    assert p.read_bytes() == b"old" and sorted(x.name for x in tmp_path.iterdir()) == ["m.lutz"]
    assert ct.write(p, c) == p.stat().st_size and ct.read(p).tensors[0].name == "a"
    assert ct.write(os.devnull, c) > 0 and os.path.exists(os.devnull)   # a device is written, never replaced


def test_printable_escapes_what_a_terminal_would_act_on():
    assert ct.printable("fc.weight") == "fc.weight" and ct.printable("Gewichte.é.日本") == "Gewichte.é.日本"
    assert ct.printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert ct.printable("x\ny\rz\0\x7f\x9b") == "x\\x0ay\\x0dz\\x00\\x7f\\x9b"
    assert ct.printable("\u202eevil") == "\\u202eevil" and ct.printable("a\\x1b") == "a\\\\x1b"
