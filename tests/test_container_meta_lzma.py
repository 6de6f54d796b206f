"""The LZMA-compressed metadata block (header flags bit 0, docs/FORMAT.md section 4): written where smaller, read
by every reader, and hostile blocks are one-line errors with nothing allocated beyond the checked header bound."""
import lzma
import os
import struct
import subprocess
import sys
import tracemalloc
import zlib

import numpy as np
import pytest

import lutzip
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import CorruptError, FormatError, LutzError

pytestmark = pytest.mark.timeout(300)


def many_tiny(n=200, seed=1):
    """A model of many tiny tensors with long, similar names (the case the index dominates)."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        size = int(rng.integers(1, 40))
        out[f"model.backbone.stage{i // 20}.block{i % 20}.conv.weight"] = rng.integers(-20, 20, size).astype(np.int8)
    out["model.head.fc.weight"] = rng.laplace(0, 8, (64, 64)).clip(-127, 127).astype(np.int8)
    return out


ARRAYS = many_tiny()
CONT = codec.compress(ARRAYS)
DATA = ct.to_bytes(CONT)
PLAIN = ct.to_bytes(CONT, compress_meta=False)


def header(data):
    return ct.HEADER.unpack_from(data)


def same_index(a: ct.Container, b: ct.Container):
    assert [t.name for t in a.tensors] == [t.name for t in b.tensors]
    for x, y in zip(a.tensors, b.tensors):
        assert (x.dtype, x.shape, x.table, x.stripe_len, x.offset, x.attrs, x.word_offset, x.axes) == \
               (y.dtype, y.shape, y.table, y.stripe_len, y.offset, y.attrs, y.word_offset, y.axes)
        assert np.array_equal(x.stripe_words, y.stripe_words) and np.array_equal(x.stripe_crcs, y.stripe_crcs)
    assert [ts.to_bytes() if hasattr(ts, "to_bytes") else repr(ts) for ts in a.tables] == \
           [ts.to_bytes() if hasattr(ts, "to_bytes") else repr(ts) for ts in b.tables]


def test_compressed_by_default_where_smaller_and_round_trips(tmp_path):
    magic, version, flags, meta_len, _, payload_len, raw_len, _ = header(DATA)
    p = header(PLAIN)
    assert flags == ct.META_LZMA and p[2] == 0 and p[6] == 0
    assert raw_len == p[3] and meta_len < raw_len and len(DATA) < len(PLAIN)
    assert DATA[32 + meta_len:] == PLAIN[32 + p[3]:]          # the same payload
    c = ct.from_bytes(DATA)
    same_index(c, ct.from_bytes(PLAIN))
    assert c.meta_flags == ct.META_LZMA
    back = codec.decompress(c)
    for k, a in ARRAYS.items():
        assert back[k].dtype == a.dtype and np.array_equal(back[k], a)
    # the streamed writer, the lazy reader and the whole-file readers
    f = tmp_path / "m.lutz"
    lutzip.save(f, ARRAYS)
    assert f.read_bytes() == lutzip.compress(ARRAYS) and header(f.read_bytes())[2] == ct.META_LZMA
    with lutzip.open(f) as z:
        assert all(np.array_equal(z[k], a) for k, a in ARRAYS.items())
    assert all(np.array_equal(lutzip.load(f)[k], a) for k, a in ARRAYS.items())


def test_not_compressed_where_larger_and_old_versions_read():
    one = codec.compress({"w": np.arange(-50, 50, dtype=np.int8)})
    d = ct.to_bytes(one)
    assert header(d)[2] == 0 and header(d)[6] == 0              # one tensor: the block itself is smaller
    forced = ct.to_bytes(one, compress_meta=True)
    assert header(forced)[2] == ct.META_LZMA and len(forced) > len(d)
    assert np.array_equal(codec.decompress(ct.from_bytes(forced))["w"], np.arange(-50, 50, dtype=np.int8))
    # version 2 is never compressed and still reads; stored version-3 files read as before
    c2 = codec.compress({"a": np.arange(3000, dtype=np.int16) % 77, "b": np.ones(2000, np.int8)})
    v2 = ct.to_bytes(c2, version=2, compress_meta=True)
    assert header(v2)[1] == 2 and header(v2)[2] == 0
    assert np.array_equal(codec.decompress(ct.from_bytes(v2))["a"], np.arange(3000, dtype=np.int16) % 77)
    assert np.array_equal(codec.decompress(ct.from_bytes(PLAIN))["model.head.fc.weight"],
                          ARRAYS["model.head.fc.weight"])


def rebuild(block: bytes, raw_len: int, version: int = 3, flags: int = ct.META_LZMA, payload: bytes = None) -> bytes:
    """DATA with another stored metadata block and header fields, every CRC valid."""
    if payload is None:
        payload = DATA[32 + header(DATA)[3]:]
    head = struct.pack("<4sHHIIQI", b"LUTZ", version, flags, len(block), zlib.crc32(block), len(payload), raw_len)
    return head + struct.pack("<I", zlib.crc32(head)) + block + payload


BLOCK = DATA[32:32 + header(DATA)[3]]
RAW = header(DATA)[6]


def test_rebuild_is_faithful():
    assert rebuild(BLOCK, RAW) == DATA


@pytest.mark.parametrize("block, raw_len, match", [
    (BLOCK, 0, "out of range"),
    (BLOCK, 256 * len(BLOCK) + 1, "out of range"),
    (BLOCK, 0xFFFFFFFF, "out of range"),
    (BLOCK, RAW - 1, "more than"),
    (BLOCK, RAW + 1, "expands to"),
    (BLOCK[:-1], RAW, "truncated|invalid"),
    (BLOCK[:len(BLOCK) // 2], RAW, "truncated|invalid"),
    (BLOCK + b"\x00", RAW, "after the end|invalid"),
    (BLOCK + b"junk", RAW, "after the end|invalid"),
    (bytes(range(256)) * 2, RAW, "invalid|truncated|expands to 0"),     # 00 first: LZMA2's end of stream
    (bytes(range(255, -1, -1)) * 2, RAW, "invalid|truncated"),
    (b"\x00", 100, "expands to 0"),
    (b"", RAW, "out of range"),
])
def test_bad_compressed_block_is_a_one_line_error(block, raw_len, match):
    with pytest.raises(FormatError, match=match) as e:
        ct.from_bytes(rebuild(block, raw_len))
    assert "\n" not in str(e.value)


def test_bad_flags_and_versions():
    with pytest.raises(FormatError, match="unknown flags"):
        ct.from_bytes(rebuild(BLOCK, RAW, flags=2))
    with pytest.raises(FormatError, match="unknown flags"):
        ct.from_bytes(rebuild(BLOCK, RAW, flags=ct.META_LZMA | 0x8000))
    v2 = ct.to_bytes(codec.compress({"a": np.arange(3000, dtype=np.int16) % 77}), version=2)
    m = v2[32:32 + header(v2)[3]]
    with pytest.raises(FormatError, match="unknown flags"):     # version 2 has no compressed block
        ct.from_bytes(rebuild(lzma.compress(m, format=lzma.FORMAT_RAW, filters=ct._meta_filters(len(m))),
                              len(m), version=2, payload=v2[32 + len(m):]))
    with pytest.raises(FormatError, match="reserved"):           # stored block: reserved must stay 0
        ct.from_bytes(rebuild(PLAIN[32:32 + header(PLAIN)[3]], 5, flags=0))
    bad = bytearray(DATA)
    bad[40] ^= 0x10                                               # a byte of the block, CRC left alone
    with pytest.raises(CorruptError, match="metadata CRC"):
        ct.from_bytes(bytes(bad))


def test_compressed_garbage_index_is_a_format_error():
    """A valid LZMA2 stream of bytes that are not an index: the index parser's own errors."""
    for junk in (b"\xff" * 300, bytes(range(200)), b"\x01\x01\x01" + b"\x00" * 50):
        z = lzma.compress(junk, format=lzma.FORMAT_RAW, filters=ct._meta_filters(len(junk)))
        with pytest.raises(LutzError):
            ct.from_bytes(rebuild(z, len(junk)))


def test_bit_flips_in_the_block_never_crash():
    rng = np.random.default_rng(4)
    for f in rng.choice(8 * len(BLOCK), size=min(300, 8 * len(BLOCK)), replace=False):
        b = bytearray(BLOCK)
        b[f // 8] ^= 1 << (f % 8)
        try:
            codec.decompress(ct.from_bytes(rebuild(bytes(b), RAW)))
        except LutzError as e:
            assert "\n" not in str(e)


def test_expansion_bomb_allocates_no_more_than_the_bound():
    """64 MiB of zeros in a few KB: the header may claim at most 256 x the stored bytes, and decoding stops
    there (output and dictionary bounded by the checked length)."""
    z = lzma.compress(bytes(64 << 20), format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2, "preset": 0,
                                                                          "dict_size": 1 << 20}])
    assert len(z) < 64 << 10
    with pytest.raises(FormatError, match="out of range"):
        ct.from_bytes(rebuild(z, 64 << 20))
    bound = 256 * len(z)
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match="more than"):
            ct.from_bytes(rebuild(z, bound))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * bound + (4 << 20), peak


def test_cli_one_line_error_on_a_bad_block(tmp_path):
    p = tmp_path / "bad.lutz"
    p.write_bytes(rebuild(BLOCK[:-3], RAW))
    for cmd in (["info", str(p)], ["decompress", str(p), "-o", str(tmp_path / "o.npz")]):
        r = subprocess.run([sys.executable, "-m", "lutzip.cli", *cmd], capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "compressed metadata" in r.stderr, r.stderr
    good = tmp_path / "good.lutz"
    good.write_bytes(DATA)
    r = subprocess.run([sys.executable, "-m", "lutzip.cli", "info", str(good)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "model.head.fc.weight" in r.stdout, r.stderr


def test_many_tiny_tensors_index_shrinks():
    """The index of 200 tiny tensors with similar names: the compressed block is well under the stored one."""
    assert header(DATA)[3] < 0.8 * header(PLAIN)[3]


@pytest.mark.parametrize("compressed", [True, False])
def test_info_reports_the_index_as_stored(tmp_path, compressed):
    """`lutzip info` says whether the index is LZMA2-compressed and its stored and decompressed sizes."""
    import json
    f = tmp_path / "m.lutz"
    data = DATA if compressed else PLAIN
    f.write_bytes(data)
    _, _, flags, meta_len, _, _, raw_len, _ = header(data)
    run = lambda *a: subprocess.run([sys.executable, "-m", "lutzip.cli", "info", *a, str(f)], capture_output=True,
                                    text=True, timeout=120)
    r = run("--json")
    assert r.returncode == 0, r.stderr
    idx = json.loads(r.stdout)["index"]
    assert idx == {"bytes": meta_len, "plain_bytes": raw_len if compressed else meta_len, "lzma": compressed}
    text = run().stdout
    assert (f"index {meta_len} bytes (LZMA2, {raw_len} decompressed)" if compressed
            else f"index {meta_len} bytes (not compressed)") in text
