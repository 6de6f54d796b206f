"""Random table sets and arrays: the numba coder round-trips, and a pure-Python decoder written from
docs/FORMAT.md (independent of lutzip.codec.bitstream) agrees with the numba decoder bit for bit, on valid stripes
and on damaged ones."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as hst

from lutzip.codec.bitstream import decode_stripes, encode_stripes
from lutzip.errors import DecodeError, LutzError
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet

#: "never a hang": every test here must finish well within this
pytestmark = pytest.mark.timeout(120)

SETTINGS = dict(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------------------- reference decoder (oracle)
def canonical_codes(lengths):
    """DEFLATE-style canonical codes, computed here from the spec, not by lutzip.codec.tables."""
    order = sorted(range(len(lengths)), key=lambda j: (lengths[j], j))
    codes, code, prev = {}, None, 0
    for j in order:
        c = lengths[j]
        code = 0 if code is None else (code + 1) << (c - prev)
        prev = c
        codes[(c, code)] = j
    return codes


class OracleError(Exception):
    pass


def oracle_decode_stripe(words, n_expected, ts):
    words = [int(w) for w in words]
    if words[0] >> 16 != 0x4C5A:
        raise OracleError("marker")
    if (words[0] & 0xFFFF) + 1 != n_expected:
        raise OracleError("count")
    bits = "".join(format(w, "032b") for w in words[1:])
    total = len(bits)
    codes = canonical_codes([cl.c for cl in ts.classes])
    maxc = max(cl.c for cl in ts.classes)
    pos, out = 0, []

    def read(n, at):
        s = bits[at:at + n]
        return int(s.ljust(n, "0"), 2) if n else 0

    while len(out) < n_expected:
        j = None
        for c in range(1, maxc + 1):
            if (c, read(c, pos)) in codes:
                j = codes[(c, read(c, pos))]
                break
        if j is None:
            raise OracleError("prefix")
        cl = ts.classes[j]
        if pos + cl.c + cl.k > total:
            raise OracleError("overrun")
        idx = read(cl.k, pos + cl.c)
        pos += cl.c + cl.k
        if cl.kind == LUT:
            if cl.param + idx >= len(ts.lut3):
                raise OracleError("lut3")
            out.append(int(ts.lut3[cl.param + idx]))
        elif cl.kind == RANGE:
            out.append(cl.param + idx)
        else:
            if len(out) + idx + 1 > n_expected:
                raise OracleError("zrun")
            out.extend([0] * (idx + 1))
    if total - pos >= 32:
        raise OracleError("leftover")
    if "1" in bits[pos:]:
        raise OracleError("padding")
    return out


def oracle_decode(payload, stripe_words, numel, S, ts):
    out, p = [], 0
    for s, n in enumerate(stripe_words):
        out += oracle_decode_stripe(payload[p:p + n], min(S, numel - s * S), ts)
        p += n
    return out


# ------------------------------------------------------------------------------- random table sets
@hst.composite
def tablesets(draw, word_bits=None):
    W = draw(hst.sampled_from([8, 16])) if word_bits is None else word_bits
    L = draw(hst.integers(1, 12))
    # code lengths: split leaves of a binary tree, then maybe drop some (incomplete codes are allowed)
    lengths = [0]
    n = draw(hst.integers(1, 16))
    while len(lengths) < n:
        splittable = [i for i, c in enumerate(lengths) if c < L]
        if not splittable:
            break
        i = draw(hst.sampled_from(splittable))
        c = lengths.pop(i)
        lengths += [c + 1, c + 1]
    lengths = [max(c, 1) for c in lengths]
    if len(lengths) > 1 and draw(hst.booleans()):
        lengths.pop(draw(hst.integers(0, len(lengths) - 1)))
    n_lut3 = draw(hst.integers(0, 64))
    lut3 = draw(hst.lists(hst.integers(0, (1 << W) - 1), min_size=n_lut3, max_size=n_lut3))
    classes = []
    for c in lengths:
        kinds = [RANGE, ZRUN] + ([LUT] if n_lut3 else [])
        kind = draw(hst.sampled_from(kinds))
        if kind == LUT:
            k = draw(hst.integers(0, min(6, n_lut3.bit_length() - 1)))
            off = draw(hst.integers(0, n_lut3 - (1 << k)))
            classes.append(ClassSpec(c, LUT, k, off))
        elif kind == RANGE:
            k = draw(hst.integers(0, W))
            base = draw(hst.integers(0, (1 << (W - k)) - 1)) << k
            classes.append(ClassSpec(c, RANGE, k, base))
        else:
            classes.append(ClassSpec(c, ZRUN, draw(hst.integers(0, 6)), 0))
    return TableSet(W, classes, np.array(lut3, np.uint16)).validate()


def covered_values(ts):
    vals = set()
    for cl in ts.classes:
        if cl.kind == LUT:
            vals.update(int(v) for v in ts.lut3[cl.param:cl.param + (1 << cl.k)])
        elif cl.kind == RANGE:
            vals.update(range(cl.param, cl.param + (1 << cl.k)) if cl.k <= 10 else
                        [cl.param, cl.param + (1 << cl.k) - 1, cl.param + 12345 % (1 << cl.k)])
        else:
            vals.add(0)
    return sorted(vals)


@given(ts=tablesets(), data=hst.data())
@settings(**SETTINGS)
def test_random_tables_roundtrip_and_oracle(ts, data):
    vals = covered_values(ts)
    n = data.draw(hst.integers(0, 600))
    zero_bias = data.draw(hst.floats(0, 0.95))
    picks = data.draw(hst.lists(hst.integers(0, len(vals) - 1), min_size=n, max_size=n))
    words = np.array([vals[i] for i in picks], np.uint16)
    if 0 in vals and n:
        rng = np.random.default_rng(n)
        words[rng.random(n) < zero_bias] = 0
    S = data.draw(hst.integers(1, 300))
    payload, sw = encode_stripes(words, ts, S)
    back = decode_stripes(payload, sw, len(words), S, ts)
    assert np.array_equal(back, words)
    assert oracle_decode(payload, sw, len(words), S, ts) == [int(w) for w in words]


@given(ts=tablesets(), data=hst.data())
@settings(**SETTINGS)
def test_damaged_stripes_numba_agrees_with_oracle(ts, data):
    """Flip bits or cut words: both decoders fail, or both return the same words; never a crash or hang."""
    vals = covered_values(ts)
    n = data.draw(hst.integers(1, 200))
    picks = data.draw(hst.lists(hst.integers(0, len(vals) - 1), min_size=n, max_size=n))
    words = np.array([vals[i] for i in picks], np.uint16)
    payload, sw = encode_stripes(words, ts, n)          # one stripe
    payload = payload.copy()
    for _ in range(data.draw(hst.integers(1, 3))):
        i = data.draw(hst.integers(0, len(payload) - 1))
        payload[i] ^= np.uint32(1 << data.draw(hst.integers(0, 31)))
    if data.draw(hst.booleans()) and len(payload) > 2:
        cut = data.draw(hst.integers(2, len(payload) - 1))
        payload, sw = payload[:cut], np.array([cut], np.uint32)
    try:
        got = decode_stripes(payload, sw, n, n, ts)
    except DecodeError:
        got = None
    try:
        ref = oracle_decode(payload, sw, n, n, ts)
    except OracleError:
        ref = None
    if ref is None:
        assert got is None
    else:
        assert got is not None and [int(x) for x in got] == ref


@pytest.mark.parametrize("err,words,ts", [
    ("marker", [0x12340000, 0], TableSet(8, [ClassSpec(1, RANGE, 8, 0)])),
    ("count", [0x4C5A0001, 0], TableSet(8, [ClassSpec(1, RANGE, 8, 0)])),
    ("prefix", [0x4C5A0000, 0xC0000000], TableSet(8, [ClassSpec(2, RANGE, 0, 0)])),   # code 11 unused
    ("overrun", [0x4C5A0002, 0x00000000], TableSet(16, [ClassSpec(1, RANGE, 16, 0)])),
    ("zrun", [0x4C5A0000, 0x60000000], TableSet(8, [ClassSpec(1, ZRUN, 2, 0), ClassSpec(1, RANGE, 8, 0)])),
    ("leftover", [0x4C5A0000, 0x00000000, 0], TableSet(8, [ClassSpec(1, RANGE, 8, 0)])),
    ("padding", [0x4C5A0000, 0x00000001], TableSet(8, [ClassSpec(1, RANGE, 8, 0)])),
])
def test_decoder_error_kinds(err, words, ts):
    n = 1 if err == "count" else (words[0] & 0xFFFF) + 1
    payload = np.array(words, np.uint32)
    with pytest.raises(OracleError, match=err):
        oracle_decode(payload, [len(words)], n, n, ts)
    with pytest.raises(DecodeError):
        decode_stripes(payload, np.array([len(words)]), n, n, ts)


def test_lut3_index_out_of_range_rejected():
    """A LUT class reaching past LUT3 never gets to the decoder: the table set is invalid."""
    with pytest.raises(LutzError, match="LUT3"):
        TableSet(8, [ClassSpec(1, LUT, 1, 0)], np.array([5])).validate()
    with pytest.raises(LutzError, match="LUT3"):
        decode_stripes(np.array([0x4C5A0000, 0x80000000], np.uint32), np.array([2]), 1, 1,
                       TableSet(8, [ClassSpec(1, LUT, 2, 3)], np.array([5, 6, 7, 8])))
