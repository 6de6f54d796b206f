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
        n = int(rng.integers(0, 40))
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
