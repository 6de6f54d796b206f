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
