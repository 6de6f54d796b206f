"""The vectorized read of a tensor's stripe sizes (container._varints) against the value-by-value reader."""
import numpy as np
import pytest

from lutzip.codec import container as ct
from lutzip.errors import FormatError


def _scalar(buf, n, limit):
    r = ct._Reader(buf)
    try:
        v = [r.varint("v", limit) for _ in range(n)]
    except FormatError as e:
        return None, str(e)
    return (v, r.pos), None


def _vector(buf, n, limit):
    r = ct._Reader(buf)
    v = ct._varints(r, n, limit)
    return None if v is None else (v.tolist(), r.pos)


@pytest.mark.parametrize("seed", range(6))
def test_varints_equal_the_scalar_reader(seed):
    rng = np.random.default_rng(seed)
    limit = int(rng.choice([1, 3, 127, 128, 4097, 16384, 65537, (1 << 21) - 1]))
    for trial in range(300):
        # both readers of _varints: the Python loop (up to 64 values) and the numpy one (more)
        n = int(rng.integers(0, 40)) if trial // 6 % 2 else int(rng.integers(0, 200))
        vals = rng.integers(0, limit + 1, n).tolist()
        parts = [ct._varint(v) for v in vals]
        kind = trial % 6
        if n and kind == 1:         # one value beyond the limit
            parts[int(rng.integers(n))] = ct._varint(limit + int(rng.integers(1, 1000)))
        elif n and kind == 2:       # one overlong form (a zero last byte)
            j = int(rng.integers(n))
            parts[j] = bytes([parts[j][0] | 0x80]) + parts[j][1:] + b"\x00" if len(parts[j]) == 1 else \
                parts[j][:-1] + bytes([parts[j][-1] | 0x80, 0])
        elif n and kind == 3:       # one value of 4 bytes or more
            parts[int(rng.integers(n))] = b"\x80\x80\x80" + bytes([int(rng.integers(0, 128))])
        buf = b"".join(parts)
        if n and kind == 4:         # truncated
            buf = buf[:int(rng.integers(0, len(buf)))]
        tail = bytes(rng.integers(0, 256, int(rng.integers(0, 8)), dtype=np.uint8))
        buf += tail
        want, err = _scalar(buf, n, limit)
        got = _vector(buf, n, limit)
        if err is not None:
            assert got is None, (buf, n, limit, err)
        elif got is not None:
            assert got == want
        else:
            # the fast path may decline only for forms it does not read (longer than 3 bytes)
            assert limit >= 1 << 21 or any(len(p) > 3 for p in parts)


def test_bad_stripe_size_is_named_as_before():
    r = ct._Reader(ct._varint(5) + ct._varint(3) + ct._varint(70000) + b"\0" * 40)
    with pytest.raises(FormatError, match="size of stripe 2 of tensor 'w' = 70000 exceeds the limit 4097"):
        ct._read_stripes(r, 3, 4096, "tensor 'w'")
    r = ct._Reader(ct._varint(5) + b"\x83\x00" + b"\0" * 40)
    with pytest.raises(FormatError, match="size of stripe 1 of tensor 'w': overlong varint"):
        ct._read_stripes(r, 2, 4096, "tensor 'w'")


def _table_blob(classes, lut3, w=16, overlong_at=None):
    """The bytes of one table set (container._pack_tables' layout), optionally with class j's param in an
    overlong form (a zero byte appended)."""
    out = bytearray([w, len(classes)]) + ct._varint(len(lut3))
    for j, cl in enumerate(classes):
        p = ct._varint(cl.param)
        if j == overlong_at:
            p = p[:-1] + bytes([p[-1] | 0x80, 0])
        out += bytes([cl.c | (cl.kind << 4), cl.k]) + p
    out += np.asarray(lut3, "<u2" if w == 16 else "u1").tobytes()
    return bytes(out)


@pytest.mark.parametrize("tail", [0, 1, 2, 8])
def test_table_set_params_of_every_varint_length(tail):
    """Class params of 1..5 varint bytes read like _pack_tables wrote them; an overlong one is an error."""
    from lutzip.codec.tables import LUT, RANGE, ClassSpec, TableSet
    from lutzip.errors import TableError
    lut3 = np.arange(4096, dtype=np.uint16)
    classes = [ClassSpec(2, LUT, 6, 0), ClassSpec(2, LUT, 7, 127), ClassSpec(3, LUT, 8, 128),
               ClassSpec(3, LUT, 10, 3000), ClassSpec(4, RANGE, 14, 16384), ClassSpec(4, RANGE, 9, 65024),
               ClassSpec(5, RANGE, 16, 0)]
    ts = TableSet(16, classes, lut3).validate()
    blob = ct._pack_tables([ts])
    assert blob == _table_blob(classes, lut3)
    r = ct._Reader(blob + b"\x00" * tail)    # the table set last in the block, or a few bytes before its end
    r.n_tables = 1
    got = ct._read_tables(r)
    assert r.pos == len(blob) and got[0].classes == classes and np.array_equal(got[0].lut3, lut3)
    big = [ClassSpec(1, RANGE, 0, 1 << 30)] + classes[1:]      # 5 bytes: the field-by-field path
    r = ct._Reader(_table_blob(big, lut3) + b"\x00" * tail)
    r.n_tables = 1
    with pytest.raises(TableError):
        ct._read_tables(r)                  # read, then refused by the validation (RANGE base beyond 16 bits)
    for j in range(len(classes)):
        r = ct._Reader(_table_blob(classes, lut3, overlong_at=j) + b"\x00" * tail)
        r.n_tables = 1
        with pytest.raises(FormatError, match=f"param of class {j} of table set 0: overlong varint"):
            ct._read_tables(r)


def _streams_container():
    """A version-3 container of many streams: own streams of stripe lengths 64..16384 (stripe sizes of 1..3
    varint bytes, stripe-length and table fields), group streams, 8- and 16-bit table sets."""
    from lutzip.codec import arrays as codec
    rng = np.random.default_rng(3)
    arrays = {}
    for j, n in enumerate([40, 300, 5000, 20000, 70000]):
        arrays[f"w{j}"] = np.rint(rng.laplace(0, 3 + 40 * j, n)).clip(-30000, 30000).astype(np.int16)
        arrays[f"b{j}"] = rng.integers(-128, 128, 50 + j).astype(np.int8)
        arrays[f"u{j}"] = rng.integers(0, 256 if j % 2 else 4, 3000 + 1000 * j).astype(np.uint8)
    c = codec.compress(arrays, stripe_len=64, group_below=200, stripe_bits=16 << 14)
    assert len({s.stripe_len for s in c.streams}) >= 3 and len(c.tables) >= 2
    return ct.to_bytes(c, compress_meta=False)         # the index's own bytes, to be changed in place


def _with_meta(data, meta):
    import zlib
    h = list(ct.HEADER.unpack_from(data))
    payload = data[ct.HEADER_SIZE + h[3]:]
    h[3], h[4] = len(meta), zlib.crc32(meta)
    h[7] = zlib.crc32(ct.HEADER.pack(*h)[:28])
    return ct.HEADER.pack(*h) + meta + payload


def _outcome(data):
    try:
        c = ct.from_bytes(data)
    except FormatError as e:
        return "error", str(e)
    return "ok", [(s.index, s.table, s.stripe_len, s.offset, s.numel, s.stripe_words.tolist(), s.stripe_crcs.tolist(),
                   s.members) for s in c.streams], [(t.name, t.table, t.stripe_len, t.stream, t.word_offset)
                                                    for t in c.tensors]


def test_stream_records_in_c_equal_the_python_reader(monkeypatch):
    """lz_parse_streams (one C call for all stream records) against container._read_streams on the stream
    records of a container mutated byte by byte (flips, new values, bytes inserted and deleted, cut short;
    metadata CRC recomputed): the same streams, or the C reader declines exactly where the Python one raises
    (then the Python one names the problem, so the error is the same)."""
    from lutzip.codec import fastdec
    if not fastdec.available():
        pytest.skip(fastdec.why_not())
    data = _streams_container()
    meta_len = ct.HEADER.unpack_from(data)[3]
    meta = data[ct.HEADER_SIZE:ct.HEADER_SIZE + meta_len]
    at, accepted = [], []
    real_c, real_py = ct._read_streams_c, ct._read_streams

    def spy_c(r, *a):
        at.append(r.pos)
        got = real_c(r, *a)
        accepted.append(got is not None)
        return got
    monkeypatch.setattr(ct, "_read_streams_c", spy_c)
    ok, *want = _outcome(data)
    assert ok == "ok" and accepted == [True] and len(want[0]) >= 8
    start = at[0]                                    # where the stream records begin
    rng = np.random.default_rng(7)
    outcomes = {"ok": 0, "error": 0}
    records = {"read": 0, "refused": 0, "not reached": 0}
    for trial in range(1500):
        m = bytearray(meta)
        for _ in range(1 + trial % 3):
            p = int(rng.integers(start, len(m))) if len(m) > start else start
            kind = int(rng.integers(5))
            if kind == 0 and p < len(m):
                m[p] ^= 1 << int(rng.integers(8))
            elif kind == 1 and p < len(m):
                m[p] = int(rng.choice([0, 1, 2, 3, 0x7F, 0x80, 0x81, 0xFF, int(rng.integers(256))]))
            elif kind == 2:
                m[p:p] = bytes(rng.integers(0, 256, int(rng.integers(1, 4)), dtype=np.uint8))
            elif kind == 3:
                del m[p:p + int(rng.integers(1, 5))]
            else:
                del m[p:]
        case = _with_meta(data, bytes(m))
        accepted.clear()
        got = _outcome(case)
        py_ok = []

        def spy_py(*a):
            py_ok.append(False)
            got = real_py(*a)
            py_ok[-1] = True
            return got
        monkeypatch.setattr(ct, "_read_streams_c", lambda *a: None)
        monkeypatch.setattr(ct, "_read_streams", spy_py)
        ref = _outcome(case)
        monkeypatch.setattr(ct, "_read_streams_c", spy_c)
        monkeypatch.setattr(ct, "_read_streams", real_py)
        assert got == ref, trial
        assert accepted == py_ok, trial              # C declines exactly the records Python refuses
        outcomes[ref[0]] += 1
        records["read" if py_ok == [True] else "refused" if py_ok else "not reached"] += 1
    assert outcomes["ok"] >= 20 and records["read"] >= 50 and records["refused"] >= 500, (outcomes, records)


@pytest.mark.parametrize("first", [0, 1])
def test_stripe_sizes_out_of_range_with_the_same_total_are_refused(first, monkeypatch):
    """A stripe of 0 or 1 words with the next stripe making up the total (so the payload is still tiled):
    refused by the C reader of the stream records and named by the Python one."""
    from lutzip.codec import fastdec
    if not fastdec.available():
        pytest.skip(fastdec.why_not())
    data = _streams_container()
    c = ct.from_bytes(data)
    last = c.streams[-1]
    w = last.stripe_words.tolist()
    assert len(w) >= 2
    meta_len = ct.HEADER.unpack_from(data)[3]
    meta = data[ct.HEADER_SIZE:ct.HEADER_SIZE + meta_len]
    old = b"".join(ct._varint(v) for v in w)
    end = len(meta) - 4 * len(w)                     # the last stream's sizes, then its CRCs, end the block
    assert meta[end - len(old):end] == old
    new = b"".join(ct._varint(v) for v in [first, w[0] + w[1] - first] + w[2:])
    case = _with_meta(data, meta[:end - len(old)] + new + meta[end:])
    declined = []
    real_c = ct._read_streams_c
    monkeypatch.setattr(ct, "_read_streams_c", lambda *x: declined.append(real_c(*x) is None) or None)
    with pytest.raises(FormatError, match="fewer than 2 words"):
        ct.from_bytes(case)
    assert declined == [True]


def test_index_fields_of_every_varint_length_read_back():
    """Names whose shared prefixes and suffixes need one and two varint bytes, dimensions of 1..4 varint
    bytes (empty tensors), scales and JSON attributes: the index reads back as written (the reader's fast
    paths and its field-by-field path)."""
    from lutzip.codec import arrays as codec
    rng = np.random.default_rng(11)
    arrays, attrs = {}, {}
    stem = "layer." * 30                                 # 180 bytes: prefix lengths beyond 127
    for j, (shape, dt) in enumerate([((3, 5), np.int16), ((0, 127), np.int8), ((128, 0), np.int16),
                                     ((0, 16383, 16384), np.uint8), ((2 ** 21, 0), np.int16), ((0, 2 ** 28), np.int8),
                                     ((130,), np.int8), ((1, 1, 129), np.uint16), ((), np.int16)]):
        name = stem + f"t{j}" + "s" * (j * 40)          # prefix 180 bytes shared, suffixes up to 320 bytes
        arrays[name] = rng.integers(0, 100, shape).astype(dt) if 0 not in shape else np.zeros(shape, dt)
        if j % 3 == 0:
            attrs[name] = {"scale": 0.5 ** j}
        elif j % 3 == 1:
            attrs[name] = {"scale": 0.25, "note": "x" * (50 * j)}
    c = codec.compress(arrays, attrs=attrs, stripe_len=64, group_below=100)
    back = ct.from_bytes(ct.to_bytes(c))
    assert [t.name for t in back.tensors] == list(arrays)
    for t, (k, a) in zip(back.tensors, arrays.items()):
        assert t.shape == a.shape and t.dtype == codec.dtype_name(a) and t.attrs == attrs.get(k, {}), k
    out = codec.decompress(back)
    assert all(np.array_equal(out[k], a) for k, a in arrays.items())
