"""Longer stripes for 8-bit streams (lutzip.codec.arrays.stream_stripe_len): an encoder choice only -- the file
is smaller, and the C kernel, the numba kernel, the pure-Python oracle and the MyHDL core decode it alike."""
import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec.decode import decode_stripes
from test_codec_oracle import oracle_decode          # the decoder written from docs/FORMAT.md alone


def test_stream_stripe_len_rule():
    f = codec.stream_stripe_len
    assert f(7 * 8192 + 1, 8, 4096) == 8192             # 8-bit: the raw bits of a 16-bit stripe, 8 stripes left
    assert f(7 * 8192, 8, 4096) == 4096                 # would leave 7 stripes
    assert f(10 ** 6, 16, 4096) == 4096                 # 16-bit streams keep the stripe length
    assert f(10 ** 6, 8, 4096, min_stripes=0) == 4096
    assert f(3 * 10 ** 5, 8, 4096, stripe_bits=16 * 65536) == 32768     # 5 stripes of 65536 words: too few
    assert f(10 ** 6, 8, 4096, stripe_bits=16 * 65536) == 65536
    assert f(10 ** 7, 16, 4096, stripe_bits=16 * 65536) == 65536        # never beyond the format's 65536
    assert f(3000, 8, 64, min_stripes=4) == 128                          # at most twice the words
    assert f(3000, 8, 64, min_stripes=4, stripe_bits=8 * 1024) == 512    # 6 stripes of 512 (1024 would leave 3)


def _int8(n, seed, zeros=0.6):
    rng = np.random.default_rng(seed)
    q = np.clip(np.round(rng.laplace(0, 9, n)), -127, 127).astype(np.int8)
    q[rng.random(n) < zeros] = 0
    return q


def test_int8_stream_gets_longer_stripes_and_a_smaller_file():
    arrays = {"w": _int8(40000, 1).reshape(200, 200), "b": _int8(300, 2), "w16": _int8(40000, 3).astype(np.int16)}
    new = codec.compress(arrays, stripe_len=1024)
    old = codec.compress(arrays, stripe_len=1024, min_stripes=0)
    lens = {t.name: t.stripe_len for t in new.tensors}
    assert lens == {"w": 2048, "b": 1024, "w16": 1024}              # the group stream and the 16-bit one keep 1024
    assert {t.stripe_len for t in old.tensors} == {1024}
    a, b = ct.to_bytes(new), ct.to_bytes(old)
    assert len(a) < len(b) - 8 * 12                                  # 20 stripes fewer (header, padding, CRC, size)
    for data in (a, b):
        back = codec.decompress(ct.from_bytes(data))
        assert all(np.array_equal(back[k], v) for k, v in arrays.items())


def test_longer_stripes_decode_alike_on_every_software_decoder():
    words = _int8(6000, 4).view(np.uint8)
    c = ct.from_bytes(ct.to_bytes(codec.compress({"w": words.view(np.int8)}, stripe_len=256)))
    (s,) = c.streams
    assert s.stripe_len == 512 and len(s.stripe_words) == 12
    p, ts = c.stripe_payload(s), c.tables[s.table]
    for kernel in ("c", "numba"):
        if kernel == "c":
            from lutzip.codec import fastdec
            if not fastdec.available():
                continue
        w = decode_stripes(p, s.stripe_words, s.numel, s.stripe_len, ts, s.name, kernel=kernel, crcs=s.stripe_crcs)
        assert np.array_equal(np.asarray(w, np.uint8), words), kernel
    assert oracle_decode(p, s.stripe_words, s.numel, s.stripe_len, ts) == [int(v) for v in words]


def test_longer_stripes_on_the_core():
    """The MyHDL core decodes a stream whose stripes are twice the requested length (one small case)."""
    from lutzip.hdl.flows import model as M
    from lutzip.hdl.flows import simulate as S
    from lutzip.hdl.flows.vectors import Vectors
    words = _int8(1100, 5).view(np.uint8)
    c = ct.from_bytes(ct.to_bytes(codec.compress({"w": words.view(np.int8)}, stripe_len=64)))
    (s,) = c.streams
    assert s.stripe_len == 128 and len(s.stripe_words) == 9
    ts = c.tables[s.table]
    pk = [[int(v) for v in st] for st in M.split_stripes(c.stripe_payload(s), s.stripe_words)]
    res = S.check(Vectors.from_packets(pk, M.table_ops(ts), W=8), in_gap=0.2, out_stall=0.2, seed=3)
    assert [d for d, _, _ in res.rows] == [int(v) for v in words]
