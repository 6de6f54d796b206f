"""`.lutz` format version 3 (issue 15, phase 2): group streams for small tensors and the compact index.

Round trips of many small and large tensors of mixed widths, version-2 files still read, every corruption of
the new fields a one-line FormatError, no tensor coded above raw + 8 bytes on a model of 300 tiny tensors,
lazy reading of a grouped tensor, ``lutzip info`` and the virtual board (Verilator, fast mode) on a grouped
container.
"""
import dataclasses
import json
import shutil
import struct
import zlib

import ml_dtypes
import numpy as np
import pytest

import lutzip
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import CorruptError, FormatError, LutzError

pytestmark = pytest.mark.timeout(300)


def _mixed(seed=0, n_small=60):
    """Large tensors of three dtypes, and small ones (1..300 words) of all six, interleaved as in a real model."""
    rng = np.random.default_rng(seed)
    arrays = {}
    dts = [np.int8, np.uint8, np.int16, np.uint16, np.float16, "bf16"]
    for i in range(n_small):
        if i % 10 == 0:
            arrays[f"block{i}.conv.weight"] = np.rint(rng.laplace(0, 6 + i % 3, (16, 8, 3, 3))).clip(
                -128, 127).astype(np.int8 if i % 20 else np.int16)
        dt = dts[i % len(dts)]
        n = int(rng.integers(1, 300))
        if dt == "bf16":
            a = rng.normal(0, 0.1, n).astype(ml_dtypes.bfloat16)
        elif dt == np.float16:
            a = rng.normal(1, 0.1, n).astype(np.float16)
        elif np.issubdtype(dt, np.unsignedinteger):
            a = rng.integers(0, 9, n).astype(dt)
        else:
            a = np.rint(rng.laplace(0, 4, n)).clip(-128, 127).astype(dt)
        arrays[f"block{i}.bn.{'scale' if i % 2 else 'bias'}"] = a
    arrays["empty"] = np.zeros((0, 4), np.int16)
    arrays["scalar"] = np.array(3, np.int8)
    arrays["fc.weight"] = np.rint(rng.laplace(0, 30, (40, 100))).astype(np.int16)
    return arrays


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def _same(got, want):
    assert list(got) == list(want)
    for k, w in want.items():
        w = _bits(w)
        assert got[k].dtype == w.dtype and got[k].shape == w.shape and np.array_equal(got[k], w), k


ARRAYS = _mixed()
DATA = lutzip.compress(ARRAYS, stripe_len=256, states=1)          # one code table: version 3
C = ct.from_bytes(DATA)


# ------------------------------------------------------------------------------------------- round trips
def test_round_trip_many_small_and_large_tensors_of_mixed_widths():
    assert struct.unpack_from("<H", DATA, 4)[0] == 3 and C.version == 3
    _same(lutzip.decompress(DATA), ARRAYS)
    groups = [s for s in C.streams if s.grouped]
    assert groups and sum(len(s.members) for s in groups) >= 55
    assert {C.tables[s.table].word_bits for s in groups} == {8, 16}
    assert any(s.n_stripes > 1 for s in groups)                     # tensors straddle stripe boundaries
    for s in C.streams:                                               # streams tile the payload in order
        assert s.offset == sum(x.n_bytes for x in C.streams[:s.index])
        assert s.numel == sum(C.tensors[i].numel for i in s.members)
    # every tensor decoded alone (the lazy path) equals the whole-container decode
    for t in C.tensors:
        assert np.array_equal(codec.decompress_tensor(C, t), _bits(ARRAYS[t.name]).reshape(t.shape)), t.name
    # rewriting a parsed container gives the same bytes
    assert ct.to_bytes(C) == DATA


@pytest.mark.parametrize("group_below", [0, 1, 2, 300, 5000])
def test_round_trip_at_every_grouping_threshold(group_below):
    data = ct.to_bytes(codec.compress(ARRAYS, stripe_len=100, group_below=group_below))
    _same(codec.decompress(ct.from_bytes(data)), ARRAYS)
    if group_below <= 1:
        assert not any(s.grouped for s in ct.from_bytes(data).streams)


def test_greedy_tables_and_one_word_stripes_group_too():
    from lutzip.codec.encoder import greedy_tableset
    small = {k: v for k, v in list(ARRAYS.items())[:12]}
    for kw in ({"tableset_fn": lambda w, b: greedy_tableset(w, b)}, {"stripe_len": 1}, {"share": False}):
        c = codec.compress(small, **kw)
        _same(codec.decompress(ct.from_bytes(ct.to_bytes(c))), small)


def test_version_2_file_still_reads_bit_identical():
    c2 = codec.compress(ARRAYS, stripe_len=256, group_below=0)
    v2 = ct.to_bytes(c2, version=2)
    assert struct.unpack_from("<H", v2, 4)[0] == 2
    back = ct.from_bytes(v2)
    assert back.version == 2 and not any(t.grouped for t in back.tensors)
    _same(lutzip.decompress(v2), ARRAYS)
    # the same container in version 3 decodes to the same arrays and is smaller (prefix-coded names ...)
    v3 = ct.to_bytes(c2)
    assert len(v3) < len(v2)
    _same(lutzip.decompress(v3), ARRAYS)
    # a v2 file re-written as v3 and back as v2 is the same v2 file
    assert ct.to_bytes(ct.from_bytes(ct.to_bytes(back)), version=2) == v2


def test_version_2_writer_refuses_group_streams_and_unknown_versions():
    with pytest.raises(FormatError, match="version 2 cannot store"):
        ct.to_bytes(C, version=2)
    with pytest.raises(FormatError, match="cannot write .lutz version 7"):     # 5: two code tables, 6: row streams
        ct.to_bytes(C, version=7)


def test_compact_index_is_smaller():
    c = codec.compress(ARRAYS, stripe_len=256)
    v3 = len(ct.to_bytes(c))
    flat = codec.compress(ARRAYS, stripe_len=256, group_below=0)
    assert v3 < len(ct.to_bytes(flat)) < len(ct.to_bytes(flat, version=2))


# ------------------------------------------------------------------------------------ no tensor above raw
def test_no_tensor_above_raw_plus_8_bytes_on_300_tiny_tensors():
    rng = np.random.default_rng(3)
    arrays = {}
    for i in range(300):
        n = int(rng.choice([1, 1, 2, 4, 8, 16, 24, 32, 64, 128]))
        arrays[f"model.layers.{i // 3}.{['bn.scale', 'bn.bias', 'mult'][i % 3]}"] = np.rint(
            rng.laplace(0, 6, n)).clip(-127, 127).astype(np.int8 if i % 4 else np.int16)
    c = codec.compress(arrays)
    data = ct.to_bytes(c)
    c = ct.from_bytes(data)
    cost = ct.coded_bytes(c)
    raw = {t.name: t.raw_bytes for t in c.tensors}
    over = [n for n in cost if cost[n] > raw[n] + 8]
    assert over == [], over[:5]
    # version 2 (every tensor its own stripes) had most of them above raw + 8
    flat = codec.compress(arrays, group_below=0)
    v2_over = [t.name for t in flat.tensors if t.n_bytes + 5 * len(t.stripe_words) > t.raw_bytes + 8]
    assert len(v2_over) > 100
    assert len(data) < len(ct.to_bytes(flat, version=2))
    _same(lutzip.decompress(data), arrays)


# ---------------------------------------------------------------------------------------- lazy reading
def test_lazy_read_of_a_grouped_tensor_decodes_only_its_stripes(tmp_path, monkeypatch):
    p = tmp_path / "m.lutz"
    p.write_bytes(DATA)
    t = next(t for t in C.tensors if t.grouped and t.stripe_range()[0] > 0)
    decoded = []
    real = codec.decode_stripes

    def counting(payload, sw, numel, S, ts, *a, **k):
        decoded.append((len(sw), numel))
        return real(payload, sw, numel, S, ts, *a, **k)
    monkeypatch.setattr(codec, "decode_stripes", counting)
    with lutzip.open(p) as f:
        got = f[t.name]
        info = f.info(t.name)
    assert np.array_equal(got, _bits(ARRAYS[t.name]))
    a, b = t.stripe_range()
    assert decoded == [(b - a, min(b * 256, t.stream_numel) - a * 256)]
    assert sum(n for _, n in decoded) < t.stream_numel
    assert info.grouped and info.stream == t.stream and info.word_offset == t.word_offset


def test_lazy_read_names_the_damaged_stripe_and_spares_the_other_tensors(tmp_path):
    t = next(t for t in C.tensors if t.grouped and t.stripe_range() == (0, 1))
    s = C.stream_of(t)
    data = bytearray(DATA)
    meta_len = ct.HEADER.unpack_from(data)[3]
    data[ct.HEADER_SIZE + meta_len + s.offset + 6] ^= 0x10          # stripe 0 of the group stream
    p = tmp_path / "bad.lutz"
    p.write_bytes(bytes(data))
    with lutzip.open(p) as f:
        with pytest.raises(CorruptError, match=f"{t.name}.*stripe 0"):
            f[t.name]
        other = next(u for u in C.tensors if u.grouped and u.stream == t.stream and u.stripe_range()[0] >= 1)
        assert np.array_equal(f[other.name], _bits(ARRAYS[other.name]))
        assert np.array_equal(f["fc.weight"], ARRAYS["fc.weight"])


# ----------------------------------------------------------------------------------------- lutzip info
def test_info_shows_streams_and_groups(tmp_path, capsys):
    from lutzip import cli
    p = tmp_path / "m.lutz"
    p.write_bytes(DATA)
    assert cli.main(["info", str(p)]) == 0
    out = capsys.readouterr().out
    assert "format version 3" in out and "group streams holding" in out and "group stream" in out
    assert cli.main(["info", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["version"] == 3 and len(d["streams"]) == len(C.streams)
    assert sum(s["bytes"] for s in d["streams"]) == len(C.payload) * 4
    assert abs(sum(t["bytes"] for t in d["tensors"]) - len(C.payload) * 4) <= len(C.tensors)
    assert {t["name"] for t in d["tensors"] if t["grouped"]} == {t.name for t in C.tensors if t.grouped}


# ------------------------------------------------------------------------ corruption of the new fields
def uv(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def rebuild(meta: bytes, payload: bytes = b"") -> bytes:
    head = struct.pack("<4sHHIIQI", b"LUTZ", 3, 0, len(meta), zlib.crc32(meta), len(payload), 0)
    return head + struct.pack("<I", zlib.crc32(head)) + meta + payload


def T16(classes=((1, 1, 16, 0),)):
    out = struct.pack("<BB", 16, len(classes)) + uv(0)
    for c, kind, k, p in classes:
        out += struct.pack("<BB", c | kind << 4, k) + uv(p)
    return out


T8 = struct.pack("<BB", 8, 1) + uv(0) + struct.pack("<BB", 1 | 1 << 4, 8) + uv(0)


def head(n_tables=1, n_tensors=1, S=4096, tables=None):
    return uv(n_tables) + uv(n_tensors) + uv(S) + (tables if tables is not None else T16())


def tensor(name=b"t", prefix=0, dtype=3, shape=(4,), flags=0, tail=b""):
    return uv(prefix) + uv(len(name)) + name + struct.pack("<BB", dtype, len(shape)) + \
        b"".join(uv(d) for d in shape) + struct.pack("<B", flags) + tail


def stream(sflags=0, tail=b"", stripes=((2, 0),)):
    return struct.pack("<B", sflags) + tail + b"".join(uv(n) for n, _ in stripes) + \
        b"".join(struct.pack("<I", crc) for _, crc in stripes)


def good_one(n=4):
    """A valid file: one int16 tensor of ``n`` words (raw residual class, one stripe)."""
    from lutzip.codec.tables import ClassSpec, TableSet
    ts = TableSet(16, [ClassSpec(1, 1, 16, 0)], np.zeros(0, np.uint16))
    c = codec.compress({"t": np.arange(n, dtype=np.int16)}, tableset_fn=lambda w, b: ts)
    return ct.to_bytes(c)


def test_hand_made_v3_file_matches_the_writer():
    data = good_one()
    meta = data[32:32 + ct.HEADER.unpack_from(data)[3]]
    pay = data[32 + len(meta):]
    words = len(pay) // 4
    crc = zlib.crc32(pay)
    assert meta == head() + tensor() + stream(stripes=((words, crc),))
    assert rebuild(meta, pay) == data


def _p():
    data = good_one()
    meta_len = ct.HEADER.unpack_from(data)[3]
    return data[32 + meta_len:]


PAY = _p()
W, CRC = len(PAY) // 4, zlib.crc32(PAY)
ST = stream(stripes=((W, CRC),))


@pytest.mark.parametrize("meta,match", [
    (head(S=0) + tensor() + ST, "default stripe length 0"),
    (head(S=65537) + tensor() + ST, "default stripe length"),
    (head(n_tensors=2**40) + tensor() + ST, "cannot fit"),
    (head() + tensor(prefix=1) + ST, "prefix length of tensor 0"),                # no previous name
    (head(n_tensors=2) + tensor(b"ab") + tensor(b"c", prefix=3) + ST, "prefix length of tensor 1"),
    (head(n_tensors=2) + tensor(b"ab") + tensor(b"", prefix=2, shape=(0,), flags=12) + ST, "appears twice"),
    (head() + uv(0) + uv(4097) + b"n" * 4097, "suffix length"),
    (head() + tensor(flags=0x10) + ST, "unknown flags 0x10"),
    (head() + tensor(flags=0x80) + ST, "unknown flags"),
    (head() + tensor(flags=12) + ST, "placement 3 for 4 words"),
    (head() + tensor(shape=(0,), flags=0) + ST, "placement 0 for 0 words"),
    (head() + tensor(flags=4) + ST, "previous tensor's stream, there is none"),
    (head() + tensor(flags=8, tail=uv(0)) + ST, "names a stream, there is none"),
    (head(n_tensors=2) + tensor(b"a", shape=(2,)) + tensor(b"b", shape=(2,), flags=8, tail=uv(1)) + ST,
     "stream index of tensor 'b'"),
    (head() + tensor(flags=2, tail=uv(0)) + ST, "attribute length 0"),
    (head() + tensor(flags=2, tail=uv(3) + b"[1]") + ST, "JSON object"),
    (head() + tensor(flags=2, tail=uv(2**21)) + ST, "exceeds"),
    (head() + tensor(flags=3, tail=b"\0\0\0?" + uv(11) + b'{"scale":1}') + ST, "both"),
    (head() + tensor(dtype=1) + ST, "does not match"),
    (head() + tensor(dtype=9) + ST, "dtype code"),
    (head() + tensor(), "stream records cannot fit|flags of stream 0"),
    (head() + tensor() + stream(sflags=4, stripes=((W, CRC),)), "stream 0: unknown flags"),
    (head() + tensor() + stream(sflags=2, tail=uv(1), stripes=((W, CRC),)), "stream 0 names table set 1"),
    (head() + tensor() + stream(sflags=1, tail=uv(0), stripes=((W, CRC),)), "stream 0: stripe length 0"),
    (head() + tensor() + stream(sflags=1, tail=uv(2**40), stripes=((W, CRC),)), "stream 0: stripe length"),
    (head() + tensor() + stream(sflags=1, tail=uv(1), stripes=((W, CRC),)), "stripe|truncated"),  # 4 stripes
    (head() + tensor() + stream(stripes=((1, CRC),)), "fewer than 2"),
    (head() + tensor() + stream(stripes=((4098, CRC),)), "exceeds"),
    (head() + tensor() + stream(stripes=((W + 1, CRC),)), "outside"),
    (head() + tensor() + stream(stripes=((W, CRC),))[:-1], "do not fit|truncated"),
    (head() + tensor() + ST + b"\0", "unexpected bytes after the stream records"),
    (head() + tensor(shape=(2**31, 2**30)) + ST, "stripes do not fit"),              # 2^61 words, one stream
    (head(S=1) + tensor(shape=(2**20,)) + ST, "do not fit"),
    (head(n_tensors=2) + tensor(b"a", shape=(2,)) + tensor(b"b", shape=(2**61,), flags=4) + ST, "do not fit"),
])
def test_hostile_v3_metadata(meta, match):
    with pytest.raises(FormatError, match=match) as e:
        codec.decompress(ct.from_bytes(rebuild(meta, PAY)))
    assert "\n" not in str(e.value)


def test_payload_not_tiled_by_the_streams():
    with pytest.raises(FormatError, match="belong to no tensor"):
        ct.from_bytes(rebuild(head() + tensor() + ST, PAY + b"\0" * 4))
    with pytest.raises(FormatError, match="outside"):
        ct.from_bytes(rebuild(head() + tensor() + ST, PAY[:-4]))


def test_group_stream_by_hand_reads_and_a_wrong_width_member_is_refused():
    # two int16 tensors of 2 words sharing one stream: the second continues the first's stream
    c = codec.compress({"a": np.arange(2, dtype=np.int16), "b": np.arange(2, dtype=np.int16) + 5})
    data = ct.to_bytes(c)
    d = ct.from_bytes(data)
    assert d.tensors[1].grouped and d.tensors[1].word_offset == 2 and len(d.streams) == 1
    meta = data[32:32 + ct.HEADER.unpack_from(data)[3]]
    assert tensor(b"b", shape=(2,), flags=4) in meta                # prefix-coded against "a": no shared prefix
    pay = data[32 + len(meta):]
    bad = meta.replace(tensor(b"b", shape=(2,), flags=4), tensor(b"b", dtype=1, shape=(2,), flags=4))
    with pytest.raises(FormatError, match="'b': dtype int8 does not match 16-bit table set"):
        ct.from_bytes(rebuild(bad, pay))


def test_writer_refuses_layouts_version_3_cannot_express():
    c = ct.from_bytes(DATA)
    t = next(t for t in c.tensors if t.grouped and t.word_offset)
    bad = [dataclasses.replace(u, word_offset=u.word_offset + 1) if u is t else u for u in c.tensors]
    with pytest.raises(FormatError, match="word offset"):
        ct.to_bytes(ct.Container(c.tables, bad, c.payload))
    bad = [dataclasses.replace(u, stream_numel=u.stream_numel + 1) if u is t else u for u in c.tensors]
    with pytest.raises(FormatError, match="other stripe fields|hold"):
        ct.to_bytes(ct.Container(c.tables, bad, c.payload))
    # streams out of payload order: v2 allowed it, v3 lays streams out in the order of their first tensor
    flat = codec.compress({"a": np.arange(50, dtype=np.int16), "b": np.arange(60, dtype=np.int16)}, group_below=0)
    a, b = flat.tensors
    sw = 4 * int(b.stripe_words.sum())
    swapped = ct.Container(flat.tables, [dataclasses.replace(a, offset=sw), dataclasses.replace(b, offset=0)],
                           np.concatenate([flat.payload[a.n_bytes // 4:], flat.payload[:a.n_bytes // 4]]))
    v2 = ct.to_bytes(swapped, version=2)
    _same(codec.decompress(ct.from_bytes(v2)), {"a": np.arange(50, dtype=np.int16),
                                                 "b": np.arange(60, dtype=np.int16)})
    with pytest.raises(FormatError, match="in the order of their first tensors"):
        ct.to_bytes(swapped)


def test_every_single_bit_flip_of_a_grouped_file_is_an_error():
    data = ct.to_bytes(codec.compress({k: v for k, v in list(ARRAYS.items())[:20]}, stripe_len=64))
    assert any(s.grouped for s in ct.from_bytes(data).streams)
    rng = np.random.default_rng(1)
    for f in rng.choice(8 * len(data), size=300, replace=False):
        buf = bytearray(data)
        buf[f // 8] ^= 1 << (f % 8)
        with pytest.raises(LutzError) as e:
            codec.decompress(ct.from_bytes(bytes(buf)))
        assert "\n" not in str(e.value)


def test_truncation_of_a_grouped_file_at_every_length():
    data = ct.to_bytes(codec.compress({k: v for k, v in list(ARRAYS.items())[:8]}, stripe_len=64))
    for n in range(len(data)):
        with pytest.raises(FormatError):
            ct.from_bytes(data[:n])


# ------------------------------------------------------------------------------------ the virtual board
@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.timeout(600)
@pytest.mark.parametrize("verify", ["crc", "full"])
def test_virtual_board_verifies_a_grouped_container(verify):
    from lutzip.board.uart import UartBoard
    from lutzip.board.verify import format_report, stream_container
    from lutzip.vboard import VirtualBoard
    small = {k: v for k, v in list(ARRAYS.items())[:16]}
    c = ct.from_bytes(ct.to_bytes(codec.compress(small, stripe_len=128)))
    assert any(s.grouped for s in c.streams)
    vb = VirtualBoard(mode="fast").start()
    try:
        with UartBoard(vb.port, timeout=10) as b:
            r = stream_container(b, c, verify, progress=False)
    finally:
        vb.stop()
    assert r["ok"], format_report(r)
    assert [t["name"] for t in r["tensors"]] == [t.name for t in c.tensors if t.numel]
    assert all(t["status"] == "pass" for t in r["tensors"]) and sum(t["grouped"] for t in r["tensors"]) >= 10
    assert len(r["streams"]) == len(c.streams) and r["counters"]["words"] == sum(s.numel for s in c.streams)


def test_cli_compress_group_below(tmp_path, capsys):
    from lutzip import cli
    src = tmp_path / "m.npz"
    small = {k.replace(".", "_"): _bits(v) for k, v in list(ARRAYS.items())[:12]}
    np.savez(src, **small)
    for n, grouped in (("1024", True), ("0", False)):
        out = tmp_path / f"m{n}.lutz"
        assert cli.main(["compress", str(src), "-o", str(out), "--group-below", n]) == 0
        line = capsys.readouterr().out
        assert ("group streams" in line) == grouped, line
        c = ct.read(out)
        assert any(s.grouped for s in c.streams) == grouped
        _same(codec.decompress(c), small)
    with pytest.raises(SystemExit) as e:                       # argparse: one usage error line
        cli.main(["compress", str(src), "-o", str(tmp_path / "x.lutz"), "--group-below", "-1"])
    assert e.value.code == 2 and "group threshold -1 outside" in capsys.readouterr().err


def test_api_group_below_option():
    small = {k: v for k, v in list(ARRAYS.items())[:12]}
    flat = ct.from_bytes(lutzip.compress(small, group_below=0))
    assert not any(s.grouped for s in flat.streams)
    assert any(s.grouped for s in ct.from_bytes(lutzip.compress(small)).streams)
    _same(lutzip.decompress(lutzip.compress(small, group_below=0)), small)
    with pytest.raises(lutzip.OptionError, match="group_below"):
        lutzip.compress(small, group_below="many")


def test_damaged_group_stream_without_crc_checks_never_crashes():
    """CRC checks off: a damaged group stripe is a DecodeError or arrays of the index's shapes, never a crash."""
    c = ct.from_bytes(DATA)
    rng = np.random.default_rng(4)
    lo = min(s.offset for s in c.streams if s.grouped) // 4
    for _ in range(150):
        p = c.payload.copy()
        p[lo + rng.integers(len(p) - lo)] ^= np.uint32(1 << int(rng.integers(32)))
        c2 = ct.Container(c.tables, c.tensors, p)
        try:
            out = codec.decompress(c2, check_crc=False)
        except LutzError as e:
            assert "\n" not in str(e)
            continue
        assert [a.shape for a in out.values()] == [tuple(t.shape) for t in c.tensors]
