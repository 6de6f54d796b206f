"""Row streams (format version 6, docs/FORMAT.md section 3.1): mirrored rows coded by half."""
import struct
import zlib

import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import rows as rw
from lutzip.codec import states as st
from lutzip.codec import symmetry as sy
from lutzip.codec.decode import ERR_BAD_HEADER, ERR_ROW, decode_stripes
from lutzip.errors import DecodeError, FormatError, LutzError
from row_mirror_cases import basis

DTYPES = ("int8", "int16", "float16", "bfloat16")


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8 if a.dtype.itemsize == 1 else np.uint16).ravel()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N", [256, 255])
def test_round_trip_every_decoder(dtype, N):
    a = basis(40, N, dtype).reshape(40, 1, N)
    arrays = {"stft": a, "other": (np.arange(3000) % 11).astype(np.int16)}
    c = codec.compress(arrays)
    data = ct.to_bytes(c)
    r = ct.from_bytes(data)
    t = r.tensor("stft")
    assert r.version == 6 and t.rows and not r.tensor("other").rows
    modes = rw.find_modes(bits(a), N, dtype)
    s = rw.summary(r, t)
    assert s["mirror"] + s["neg_mirror"] == np.count_nonzero(modes) > 0 and s["plain"] > 0
    assert s["mirror"] > 0 and s["neg_mirror"] > 0
    want = bits(a)
    rows = codec.row_args(r, t)
    outs = [codec.decompress(r)["stft"], codec.decompress_tensor(r, t), codec.decode_stream(r, t)]
    for kernel in ("c", "numba"):
        o = np.empty(t.numel, want.dtype)
        decode_stripes(r.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, r.tables[t.table], kernel=kernel,
                       rows=rows, out=o, crcs=t.stripe_crcs)
        outs.append(o)
    for o in outs:
        assert np.array_equal(bits(np.asarray(o)), want)
    # the oracle: each stripe's coded words expanded by the word-at-a-time reference
    coded = rw.reduce(want, N, modes)
    rs = int(t.stripe_len) // N
    ref, p = [], 0
    for j in range(0, len(modes), rs):
        m = modes[j:j + rs]
        n = rw.coded_len(m, N)
        ref.append(sy.expand_stripe(coded[p:p + n], N, m, rw.neg_flag(dtype), 8 * a.dtype.itemsize))
        p += n
    assert np.array_equal(np.concatenate(ref), want)


def test_8_bit_rows_into_a_16_bit_array_negate_in_8_bits():
    """An int8 row stream decoded into a uint16 array: every decoder level gives the 8-bit words zero-extended (a
    negated row in 8 bits, not in the array's 16)."""
    c, a = _file("int8", N=64, R=20)
    r = ct.from_bytes(ct.to_bytes(c))
    t = r.tensor("b")
    want = bits(a).astype(np.uint16)
    assert r.tables[t.table].word_bits == 8 and s_neg_rows(a) > 0
    for kernel in ("c", "numba"):
        o = np.empty(t.numel, np.uint16)
        decode_stripes(r.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, r.tables[t.table], kernel=kernel,
                       rows=codec.row_args(r, t), out=o, crcs=t.stripe_crcs)
        assert np.array_equal(o, want), kernel


def s_neg_rows(a):
    """Rows of ``a`` (R x N) that are the negated mirror of another: ``row[n] == -row[N - n]``."""
    N = a.shape[-1]
    m = rw.find_modes(bits(a), N, a.dtype)
    return int(np.count_nonzero(m == rw.NEG_MIRROR))


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_code_tables_compose(dtype):
    a = basis(48, 128, dtype)
    c = codec.compress({"b": a})
    c2 = st.apply(c, L=8)
    r = ct.from_bytes(ct.to_bytes(c2))
    t = r.tensor("b")
    assert t.rows and r.version == 6
    assert np.array_equal(bits(codec.decompress(r)["b"]), bits(a))
    o = np.empty(t.numel, bits(a).dtype)
    decode_stripes(r.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, r.tables[t.table], kernel="numba",
                   rows=codec.row_args(r, t), out=o)
    assert np.array_equal(o, bits(a))


def test_modes_match_the_cost_model():
    for dtype in DTYPES:
        a = basis(30, 64, dtype)
        w = bits(a)
        kinds = sy.find(w, a.shape, dtype, allowed=(sy.MIRROR, sy.NEG_MIRROR))
        assert [k[0] for k in kinds] == rw.find_modes(w, 64, dtype).tolist()


def test_negation():
    w8 = np.array([0, 1, 0x7F, 0x80, 0xFF], np.uint8)
    assert rw.negate_words(w8, 8, 0).tolist() == [0, 0xFF, 0x81, 0x80, 1]
    w16 = np.array([0, 0x8000, 0x3C00, 0xBC00, 0x0001], np.uint16)
    assert rw.negate_words(w16, 16, 1).tolist() == [0, 0x8000, 0xBC00, 0x3C00, 0x8001]
    assert rw.negate_words(w16, 16, 0).tolist() == [0, 0x8000, 0xC400, 0x4400, 0xFFFF]
    assert rw.negate_words(w16, 16, 1).tolist() == sy.negate(w16, "float16").tolist()


def test_other_files_unchanged():
    rng = np.random.default_rng(3)
    arrays = {"w": rng.integers(-60, 60, (64, 200)).astype(np.int8), "z": np.zeros((32, 64), np.int16)}
    a = ct.to_bytes(codec.compress(arrays))
    b = ct.to_bytes(codec.compress(arrays, rows=False))
    assert a == b and ct.from_bytes(a).version in (3, 4)


def test_only_where_smaller_and_off_switch():
    a = basis(40, 256, "int16")
    assert ct.from_bytes(ct.to_bytes(codec.compress({"b": a}, rows=False))).version < 6
    noise = np.random.default_rng(0).integers(-3000, 3000, (40, 256)).astype(np.int16)
    assert not ct.from_bytes(ct.to_bytes(codec.compress({"n": noise}))).tensor("n").rows


# ---------------------------------------------------------------------------------------------- hostile input
def _file(dtype="int16", N=64, R=20):
    a = basis(R, N, dtype)
    c = codec.compress({"b": a}, rows={"b": (None, rw.find_modes(bits(a), N, dtype))})     # forced: any size
    assert c.tensors[0].rows
    return c, a


def _rewrite(c, fn):
    """The container with stripe 0's words changed by ``fn(words)`` (CRCs kept valid)."""
    t = c.tensors[0]
    pw = np.array(c.payload, np.uint32)
    n0 = int(t.stripe_words[0])
    fn(pw[:n0])
    crcs = np.array(t.stripe_crcs, np.uint32)
    crcs[0] = zlib.crc32(pw[:n0].astype("<u4").tobytes())
    import dataclasses
    t2 = dataclasses.replace(t, stripe_crcs=crcs)
    return ct.Container(c.tables, [t2], pw)


@pytest.mark.parametrize("what,fn,code", [
    ("marker", lambda w: w.__setitem__(0, (w[0] & 0xFFFF) | 0x4C5A0000), ERR_BAD_HEADER),
    ("reserved", lambda w: w.__setitem__(1, w[1] | 1 << 25), ERR_ROW),
    ("N", lambda w: w.__setitem__(1, (w[1] & ~0xFFFF) | 31), ERR_ROW),
    ("N=1", lambda w: w.__setitem__(1, w[1] & ~0xFFFF), ERR_ROW),
    ("R", lambda w: w.__setitem__(1, w[1] ^ 1 << 16), ERR_ROW),
    ("neg", lambda w: w.__setitem__(1, w[1] ^ 1 << 20), ERR_ROW),
    ("mode 3", lambda w: w.__setitem__(2, w[2] | 3), ERR_ROW),
    ("mode past R", lambda w: w.__setitem__(2, w[2] | 1 << 31), ERR_ROW),
    ("n", lambda w: w.__setitem__(0, w[0] ^ 1), ERR_ROW),
])
def test_bad_row_stripe_one_line_error(what, fn, code):
    from lutzip.codec.decode import ERROR_TEXT
    c, _ = _file(R=5 if what == "mode past R" else 20)
    bad = ct.from_bytes(ct.to_bytes(_rewrite(c, fn)))
    with pytest.raises(DecodeError) as e:
        codec.decompress(bad)
    msg = str(e.value)
    assert "\n" not in msg and ERROR_TEXT[code] in msg and "stripe 0" in msg


def test_plain_stream_with_a_row_stripe_is_error_1():
    c, _ = _file()
    t = c.tensors[0]
    import dataclasses
    c2 = ct.Container(c.tables, [dataclasses.replace(t, rows=False)], c.payload)
    with pytest.raises(DecodeError, match="0x4C5A"):
        codec.decompress_tensor(c2, c2.tensors[0])


def _meta_edit(data, fn):
    """A stored-metadata file with its metadata block changed by ``fn(bytearray)``."""
    h = ct.HEADER.unpack_from(data)
    meta = bytearray(data[32:32 + h[3]])
    fn(meta)
    head = bytearray(data[:28])
    struct.pack_into("<I", head, 8, len(meta))
    struct.pack_into("<I", head, 12, zlib.crc32(bytes(meta)))
    return bytes(head) + struct.pack("<I", zlib.crc32(bytes(head))) + bytes(meta) + data[32 + h[3]:]


def test_index_rules_one_line_errors():
    c, a = _file()
    data = ct.to_bytes(c, compress_meta=False)
    assert ct.from_bytes(data).tensors[0].rows
    # the stream flags byte follows the tensor record; find it as the byte with bit 2 set after the names
    meta = data[32:32 + ct.HEADER.unpack_from(data)[3]]
    t = c.tensors[0]
    rec = ct._stream_records(c.streams, ct._default_stripe_len(c.streams))[0]
    at = len(meta) - len(rec)
    assert meta[at] & ct.S_ROWS
    # version 5 does not know the flag
    v5 = bytearray(data[:28])
    struct.pack_into("<H", v5, 4, 5)
    with pytest.raises(FormatError, match="unknown flags"):
        ct.from_bytes(bytes(v5) + struct.pack("<I", zlib.crc32(bytes(v5))) + data[32:])
    # an unsigned dtype: the dtype byte of the (only) tensor record (uint16 = 4)
    name = t.name.encode()
    dpos = meta.index(name) + len(name)

    def unsigned(m):
        m[dpos] = 4
    with pytest.raises(FormatError) as e:
        ct.from_bytes(_meta_edit(data, unsigned))
    assert "row stream of dtype uint16" in str(e.value) and "\n" not in str(e.value)
    # stripes not on row boundaries: a stripe length that is not a multiple of N
    S = int(t.stripe_len)

    def not_whole_rows(m):
        new = bytes([m[at] | ct.S_STRIPE_LEN]) + bytes(m[at + 1:at + 1]) + ct._varint(S - 1)
        m[at:at + 1] = new
    with pytest.raises(FormatError):
        ct.from_bytes(_meta_edit(data, not_whole_rows))


def test_truncated_and_short_stripes():
    c, _ = _file()
    data = ct.to_bytes(c)
    for cut in (1, 4, 9, 40):
        with pytest.raises(LutzError) as e:
            codec.decompress(ct.from_bytes(data[:-cut]))
        assert "\n" not in str(e.value)
    t = c.tensors[0]
    import dataclasses
    sw = np.array(t.stripe_words, np.uint32)
    sw[0] = 3                                   # a row stripe of three words: header, descriptor, modes only
    c2 = ct.Container(c.tables, [dataclasses.replace(t, stripe_words=sw)], c.payload)
    with pytest.raises(FormatError, match="4..S\\+3"):
        ct.to_bytes(c2)


def test_writer_refuses_older_versions():
    c, _ = _file()
    with pytest.raises(FormatError, match="version 6"):
        ct.to_bytes(c, version=5)
    with pytest.raises(FormatError, match="version 6"):
        ct.to_bytes(c, version=2)


def test_cli_info_shows_rows(tmp_path, capsys):
    from lutzip.cli import main
    c, _ = _file()
    p = tmp_path / "m.lutz"
    ct.write(p, c)
    assert main(["info", str(p)]) == 0
    out = capsys.readouterr().out
    assert "row stream" in out and "mirror" in out


def test_streamed_writer_same_bytes(tmp_path):
    """lutzip.save / lutzip compress (the streamed writer) write the same file as lutzip.compress."""
    import lutzip
    arrays = {"stft": basis(60, 256, "int16").reshape(60, 1, 256),
              "x": (np.arange(3000) % 13).astype(np.int16), "s": np.arange(100, dtype=np.int16)}
    data = lutzip.compress(arrays)
    p = tmp_path / "f.lutz"
    lutzip.save(p, arrays)
    assert p.read_bytes() == data
    r = ct.from_bytes(data)
    assert r.tensor("stft").rows and r.version == 6
    back = lutzip.load(p)
    assert all(np.array_equal(back[k], v) for k, v in arrays.items())


def test_rows_option_and_cli_flag(tmp_path):
    import lutzip
    from lutzip.cli import main
    arrays = {"stft": basis(60, 256, "int16")}
    assert ct.from_bytes(lutzip.compress(arrays)).version == 6
    assert ct.from_bytes(lutzip.compress(arrays, rows=False)).version < 6
    with pytest.raises(lutzip.api.OptionError, match="rows"):
        lutzip.compress(arrays, rows="yes")
    src = tmp_path / "a.npz"
    np.savez(src, **arrays)
    for flag, version in (([], 6), (["--no-rows", "--states", "1"], 3), (["--no-rows"], 5)):
        out = tmp_path / f"o{len(flag)}.lutz"
        assert main(["compress", str(src), "-o", str(out), *flag]) == 0
        assert ct.read(out).version == version
        d = tmp_path / f"o{len(flag)}.npz"
        assert main(["decompress", str(out), "-o", str(d)]) == 0
        assert np.array_equal(np.load(d)["stft"], arrays["stft"])


@pytest.mark.parametrize("W,negf", [(8, 0), (16, 0), (16, 1)])
def test_expand_levels_agree(W, negf):
    """lz_expand_rows (C), rows.expand (numpy) and symmetry.expand_stripe (the word-at-a-time reference)."""
    from lutzip.codec import fastdec
    rng = np.random.default_rng(W + negf)
    dt = np.uint8 if W == 8 else np.uint16
    for N in (2, 3, 7, 8, 255, 256):
        modes = rng.integers(0, 3, 40).astype(np.uint8)
        coded = rng.integers(0, 1 << W, rw.coded_len(modes, N)).astype(dt)
        coded[::5] = 0
        if W == 16:
            coded[::7] = 0x8000
        ref = sy.expand_stripe(coded, N, modes, negf, W)
        assert np.array_equal(rw.expand(coded, N, modes, W, negf), ref)
        if fastdec.available():
            assert np.array_equal(fastdec.expand_rows(coded, np.empty(40 * N, dt), N, modes, negf), ref)


def test_truncated_mode_data_in_the_index_and_the_stripe():
    """A row stripe recorded with 3 words (no room for a symbol word after the modes): the reader refuses the
    index; a row stripe cut before its mode word: the decoder refuses it."""
    c, _ = _file()
    data = ct.to_bytes(c, compress_meta=False)
    rec = ct._stream_records(c.streams, ct._default_stripe_len(c.streams))[0]
    fl = rec[0]
    p = 1
    for bit in (ct.S_TABLE, ct.S_STRIPE_LEN):
        if fl & bit:
            while rec[p] & 0x80:
                p += 1
            p += 1
    q = p
    while rec[q] & 0x80:
        q += 1

    def three(m):
        at = len(m) - len(rec) + p
        m[at:at + q - p + 1] = bytes([3])
    with pytest.raises(FormatError, match="fewer than 4 words") as e:
        ct.from_bytes(_meta_edit(data, three))
    assert "\n" not in str(e.value)
    t = c.tensors[0]
    pw = np.asarray(c.stripe_payload(t))
    with pytest.raises(DecodeError, match="do not add up"):
        rw.parse(pw[:2], [2], 64, int(t.stripe_len) // 64, 20, 16, 0)


def test_small_tensor_with_group_below_0():
    a = basis(12, 64, "int16")                       # 768 words: a group stream by default, its own with 0
    assert not ct.from_bytes(ct.to_bytes(codec.compress({"b": a}))).tensors[0].rows
    c = codec.compress({"b": a, "s": np.arange(10, dtype=np.int16)}, group_below=0,
                       rows={"b": (None, rw.find_modes(bits(a), 64, "int16"))})
    r = ct.from_bytes(ct.to_bytes(c))
    assert r.tensor("b").rows and np.array_equal(codec.decompress(r)["b"], a)
    codec.compress({"b": a}, group_below=0)          # the writer's choice runs and does not fail
