"""Table design on several threads (plan_tables_stats threads=, arrays.compress threads=): the same tables,
assignment and bytes as one thread; a worker's failure reaches the caller."""
import numpy as np
import pytest

from lutzip.codec import arrays, container, designpool, encoder
from lutzip.codec.encoder import Stats
from lutzip.errors import TableError


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


@pytest.fixture
def fresh_processes():
    """Worker processes forked anew for the test (they copy the test's patches) and ended after it."""
    designpool.shutdown()
    yield
    designpool.shutdown()


@pytest.mark.parametrize("processes", ["0", "1"])
def test_worker_failure_reaches_caller(monkeypatch, fresh_processes, processes):
    monkeypatch.setenv("LUTZIP_DESIGN_PROCESSES", processes)
    stats = [Stats.of(np.arange(n, dtype=np.uint16) % 300, 16, 4096) for n in (5000, 6000, 7000, 8000)]
    real = encoder.design_tableset

    def failing(st, *a, **k):
        if st.n_words == 7000:
            raise ValueError("design failed")
        return real(st, *a, **k)
    monkeypatch.setattr(encoder, "design_tableset", failing)
    with pytest.raises(ValueError, match="design failed"):
        encoder.plan_tables_stats(stats, 4096, threads=2)


def _stats_set():
    rng = np.random.default_rng(11)
    out = []
    for j in range(6):
        n = int(rng.integers(3000, 30000))
        if j % 2:
            w = np.rint(rng.laplace(0, 5 + 3 * j, n)).clip(-128, 127).astype(np.int8)
            w[rng.random(n) < 0.3 * j / 2] = 0
            out.append(Stats.of(w.view(np.uint8), 8, 4096))
        else:
            w = np.rint(rng.laplace(0, 30 + 200 * j, n)).astype(np.int16)
            w[rng.random(n) < 0.2 * j] = 0
            out.append(Stats.of(w.view(np.uint16), 16, 4096))
    return out


@pytest.mark.skipif(not designpool.enabled(), reason="no fork: designs on threads")
def test_process_design_equals_in_process(fresh_processes):
    """A worker process's design (statistics sent as their non-zero entries) = design_tableset here, at both
    efforts and two L; a failing design's exception comes back; processes are used by threads=2."""
    for st in _stats_set():
        for L, effort in ((8, 0), (8, 1), (11, 1)):
            here = encoder.design_tableset(st, L, effort=effort)
            there = designpool.design(0, st, L, effort)
            assert _key(there[0]) == _key(here[0]) and there[1] == here[1]
    with pytest.raises(TableError):
        designpool.design(0, _stats_set()[0], 99, 1)
    designpool.shutdown()
    encoder.plan_tables_stats(_stats_set(), 4096, threads=3)
    assert sum(w is not None and w[0].is_alive() for w in designpool._procs) == 2


def test_bench_encode_has_two_thread_rows():
    pytest.importorskip("zstandard")
    import os
    from lutzip import bench
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if len(cpus) < 2:
        pytest.skip("fewer than 2 CPUs")
    out = bench.encode_speed(_tensors(3, 5), repeat=1, cpus=cpus, numba=False)
    rows = out["MBps"]
    assert rows["lutzip.compress, 2 threads (wall)"] > 0 and rows["table design, 2 threads (wall)"] > 0
    assert rows["lutzip.compress"] > 0


def test_bench_encode_cpu_time_has_caller_cpu_row():
    pytest.importorskip("zstandard")
    import os
    from lutzip import bench
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if len(cpus) < 2:
        pytest.skip("fewer than 2 CPUs")
    rows = bench.encode_speed(_tensors(4, 4), repeat=1, cpus=cpus, numba=False, cpu_time=True)["MBps"]
    assert rows["lutzip.compress, 2 threads (caller's CPU)"] > 0
    assert not any("(wall)" in k for k in rows)


def test_bench_encode_modes_and_small_tensor_model(monkeypatch, capsys):
    """``bench --encode`` measures int8 0 % and 90 % besides bf16 and int16 75 %, and the small-tensor model
    in a table of its own (tensor count in its label) where it loads; without it, the main table only."""
    import argparse
    from lutzip import bench
    from lutzip.errors import UnsupportedError
    assert [m[0] for m in bench.ENCODE_MODES] == ["bf16", "int16 75 %", "int8 0 %", "int8 90 %"]
    rng = np.random.default_rng(5)
    models = {"main": {"w": rng.standard_normal((64, 48)).astype(np.float32)},
              "small": {f"c{j}": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) for j in range(7)}}

    def load(name):
        if name not in models:
            raise UnsupportedError(f"model {name!r} is not installed")
        return name, models[name]
    monkeypatch.setattr(bench, "load_model", load)
    seen = []

    def measure(prep, attrs, **kw):
        seen.append((len(prep), str(next(iter(prep.values())).dtype)))
        return {"n": len(prep)}
    args = argparse.Namespace(input="main", cpu=None, repeat=3, cpu_time=True, stripe=4096, json=None)
    fmt = lambda label, res, *a: f"TABLE {label}: " + ",".join(res)
    bench._modes_main(args, measure, fmt, 3, 5, modes=bench.ENCODE_MODES, extra=("small", "int8 75 %", "int8", 0.75))
    out = capsys.readouterr().out
    assert "TABLE main: bf16,int16 75 %,int8 0 %,int8 90 %" in out and "TABLE small (7 tensors): int8 75 %" in out
    assert seen[2:] == [(1, "int8"), (1, "int8"), (7, "int8")]
    seen.clear()
    bench._modes_main(args, measure, fmt, 3, 5, modes=bench.ENCODE_MODES, extra=("gone", "int8 75 %", "int8", 0.75))
    assert "TABLE gone" not in capsys.readouterr().out and len(seen) == 4


@pytest.mark.skipif(not designpool.enabled(), reason="no fork: designs on threads")
def test_worker_process_ignores_ctrl_c(fresh_processes):
    """Ctrl-C reaches the whole process group: the worker ignores it (no second traceback) and still designs."""
    import os
    import signal
    import time
    st = _stats_set()[1]
    want = encoder.design_tableset(st, 8, effort=1)
    designpool.design(0, st, 8, 1)
    p = designpool._procs[0][0]
    os.kill(p.pid, signal.SIGINT)
    time.sleep(0.3)
    assert p.is_alive()
    got = designpool.design(0, st, 8, 1)
    assert _key(got[0]) == _key(want[0]) and got[1] == want[1]
