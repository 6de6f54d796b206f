"""Table design on several threads (plan_tables_stats threads=, arrays.compress threads=): the same tables,
assignment and bytes as one thread; a worker's failure reaches the caller."""
import numpy as np
import pytest

from lutzip.codec import arrays, container, encoder
from lutzip.codec.encoder import Stats


def _key(ts):
    return ts.word_bits, list(ts.classes), np.asarray(ts.lut3).tolist()


def _tensors(seed, n=9):
    rng = np.random.default_rng(seed)
    out = {}
    for j in range(n):
        size = int(rng.integers(2000, 60000))
        if j % 3 == 0:
            a = np.rint(rng.laplace(0, 4 + 3 * j, size)).clip(-128, 127).astype(np.int8)
        elif j % 3 == 1:
            a = np.rint(rng.laplace(0, 50 * (j + 1), size)).astype(np.int16)
            a[rng.random(size) < 0.6] = 0
        else:
            a = np.rint(rng.standard_cauchy(size) * 20).clip(-32768, 32767).astype(np.int16)
        out[f"t{j}"] = a
    return out


@pytest.mark.parametrize("threads", [2, 3])
def test_plan_tables_same_on_threads(threads):
    rng = np.random.default_rng(7)
    stats = []
    for j in range(12):
        w = np.rint(rng.laplace(0, 3 + 40 * (j % 4), int(rng.integers(3000, 40000)))).astype(np.int16)
        if j % 2:
            w[rng.random(w.size) < 0.5] = 0
        stats.append(Stats.of(w.view(np.uint16), 16, 4096))
    one = encoder.plan_tables_stats(stats, 4096, threads=1)
    many = encoder.plan_tables_stats(stats, 4096, threads=threads)
    assert one[1] == many[1]
    assert [_key(t) for t in one[0]] == [_key(t) for t in many[0]]
    assert len(set(one[1])) > 1 and len(set(one[1])) < len(stats)     # some designs shared, some own


@pytest.mark.parametrize("seed", [1, 2])
def test_compress_same_bytes_on_threads(seed):
    arrs = _tensors(seed)
    b1 = container.to_bytes(arrays.compress(arrs, threads=1))
    b2 = container.to_bytes(arrays.compress(arrs, threads=2))
    assert b1 == b2


def test_worker_failure_reaches_caller(monkeypatch):
    stats = [Stats.of(np.arange(n, dtype=np.uint16) % 300, 16, 4096) for n in (5000, 6000, 7000, 8000)]
    real = encoder.design_tableset

    def failing(st, *a, **k):
        if st.n_words == 7000:
            raise ValueError("design failed")
        return real(st, *a, **k)
    monkeypatch.setattr(encoder, "design_tableset", failing)
    with pytest.raises(ValueError, match="design failed"):
        encoder.plan_tables_stats(stats, 4096, threads=2)
