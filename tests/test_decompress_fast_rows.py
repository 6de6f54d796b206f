"""arrays._decompress_c (every stream in one kernel call): each stream's payload slice runs to the next stream's
offset in payload order, and the kernel's tiling check sends a container whose stripes do not tile it to the
per-tensor path."""
import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import fastdec

pytestmark = pytest.mark.skipif(not fastdec.available(), reason="no C decoder")


def _container():
    rng = np.random.default_rng(7)
    arrays = {f"w{i}": (rng.standard_normal((40 + 13 * i, 33)) * 300).astype(np.int16) for i in range(5)}
    arrays["small"] = np.arange(50, dtype=np.int16)
    arrays["bytes"] = rng.integers(-128, 128, 9000).astype(np.int8)
    c = ct.from_bytes(ct.to_bytes(codec.compress(arrays, stripe_len=256)))
    return arrays, c


def _same(out, arrays):
    assert set(out) == set(arrays)
    for k, a in arrays.items():
        assert out[k].dtype == a.dtype and out[k].shape == a.shape and np.array_equal(out[k], a), k


def test_streams_listed_out_of_payload_order_decode_in_one_call():
    arrays, c = _container()
    assert len(c.streams) >= 4
    _same(codec._decompress_c(c, True, 1), arrays)
    c._streams = c.streams[::-1]                    # listed in reverse: each slice still ends at its successor
    out = codec._decompress_c(c, True, 1)
    assert out is not None
    _same(out, arrays)
    _same(codec.decompress(c), arrays)


def test_stripes_that_do_not_tile_their_stream_leave_the_one_call_path():
    arrays, c = _container()
    s = max(c.streams, key=lambda s: len(s.stripe_words))
    sw = s.stripe_words.copy()
    sw[-1] -= 1                                     # one word short of the next stream's offset
    s.stripe_words = sw
    assert codec._decompress_c(c, True, 1) is None
    assert codec._decompress_c(c, False, 1) is None
