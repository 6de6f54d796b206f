import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.float16])
def test_roundtrip_dtypes(dtype):
    rng = np.random.default_rng(1)
    a = rng.laplace(0, 20, size=(37, 129)).astype(dtype)
    c = ct.from_bytes(ct.to_bytes(codec.compress({"a": a}, stripe_len=256)))
    b = codec.decompress(c)["a"]
    assert b.dtype == a.dtype and b.shape == a.shape
    assert np.array_equal(b.view(np.uint8), a.view(np.uint8))


def test_zero_run_class_roundtrip():
    rng = np.random.default_rng(2)
    a = rng.integers(-3, 4, size=20000).astype(np.int16)
    a[rng.random(a.size) < 0.9] = 0
    ts = TableSet(16, [ClassSpec(1, ZRUN, 5, 0), ClassSpec(2, LUT, 2, 0), ClassSpec(2, RANGE, 16, 0)],
                  np.array([0, 1, 0xFFFF, 2], np.uint16))
    c = codec.compress({"a": a}, tableset_fn=lambda w, b: ts, stripe_len=1000)
    assert np.array_equal(codec.decompress(ct.from_bytes(ct.to_bytes(c)))["a"], a)
    assert ct.to_bytes(c).__len__() < a.nbytes / 4
