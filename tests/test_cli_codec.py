"""The codec sub-commands end to end: compress / decompress / info / bench, and their error paths."""
import json
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from lutzip import cli
from lutzip.codec import container as ct
from lutzip.weights.quantize import dequantize


def run(argv, capsys):
    rc = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def weights(tmp_path):
    rng = np.random.default_rng(0)
    p = tmp_path / "w.npz"
    arrays = {"fc.weight": rng.normal(0, 0.05, (64, 48)).astype(np.float32),
              "fc.bias": rng.normal(0, 0.01, 64).astype(np.float32)}
    np.savez(p, **arrays)
    return p, arrays


@pytest.fixture
def int_weights(tmp_path):
    rng = np.random.default_rng(1)
    p = tmp_path / "q.npz"
    arrays = {"a": np.rint(rng.laplace(0, 200, (30, 70))).astype(np.int16),
              "b": rng.integers(-128, 128, 500).astype(np.int8),
              "c": rng.normal(0, 1, 99).astype(np.float16),
              "d": rng.normal(0, 1, 40).astype(ml_dtypes.bfloat16).view(np.uint16)}
    np.savez(p, **arrays)
    return p, arrays


def test_lossless_roundtrip_bit_identical(int_weights, tmp_path, capsys):
    src, arrays = int_weights
    out, back = tmp_path / "q.lutz", tmp_path / "back.npz"
    rc, o, e = run(["compress", src, "-o", out, "--stripe", "100", "--L", "10"], capsys)
    assert rc == 0 and "bits/weight" in o
    rc, o, e = run(["decompress", out, "-o", back], capsys)
    assert rc == 0
    with np.load(back) as z:
        assert sorted(z.files) == sorted(arrays)
        for k, a in arrays.items():
            assert z[k].dtype == a.dtype and np.array_equal(z[k], a)


@pytest.mark.parametrize("mode", [["--quantize", "int16"], ["--quantize", "int8"], ["--bf16"]])
def test_float32_needs_and_uses_an_explicit_lossy_step(weights, tmp_path, capsys, mode):
    src, arrays = weights
    out, back = tmp_path / "w.lutz", tmp_path / "back.npz"
    rc, o, e = run(["compress", src, "-o", out, *mode, "--prune", "0.5"], capsys)
    assert rc == 0
    c = ct.read(out)
    rc, _, _ = run(["decompress", out, "-o", back], capsys)
    with np.load(back) as z:
        w = z["fc.weight"]
        if mode[0] == "--bf16":
            assert w.dtype == np.uint16      # bf16 comes back as its bit patterns
            rec = w.view(ml_dtypes.bfloat16).astype(np.float32)
            tol = 2 ** -8
        else:
            assert w.dtype == (np.int16 if mode[1] == "int16" else np.int8)
            rec = dequantize(w, c.tensor("fc.weight").attrs)
            tol = 0.6 / (32767 if mode[1] == "int16" else 127)
        orig = arrays["fc.weight"]
        kept = rec != 0
        assert 0.45 <= 1 - kept.mean() <= 0.55                # half pruned
        assert np.all(np.abs(rec - orig)[kept] <= tol * np.abs(orig).max() + 1e-12 + np.abs(orig[kept]) * tol)
        assert np.count_nonzero(z["fc.bias"]) == 64             # 1-D tensors are not pruned


def test_float32_without_lossy_step_is_one_clear_error(weights, tmp_path, capsys):
    src, _ = weights
    rc, o, e = run(["compress", src, "-o", tmp_path / "x.lutz"], capsys)
    assert rc == 2
    assert e.count("\n") == 1 and "float32" in e and "--quantize" in e
    assert not (tmp_path / "x.lutz").exists()


def test_info_text_and_json(int_weights, tmp_path, capsys):
    src, arrays = int_weights
    out = tmp_path / "q.lutz"
    run(["compress", src, "-o", out], capsys)
    rc, o, e = run(["info", out], capsys)
    assert rc == 0 and "table set 0" in o and "bits/w" in o
    rc, o, e = run(["info", out, "--json"], capsys)
    d = json.loads(o)
    assert d["bytes"] == out.stat().st_size
    assert {t["name"] for t in d["tensors"]} == set(arrays)
    for t in d["tensors"]:
        assert t["bits_per_weight"] > 0 and t["ratio"] > 0
        assert t["table"] < len(d["tables"])
    assert all(1 <= len(tb["classes"]) <= 16 for tb in d["tables"])


@pytest.mark.parametrize("argv,msg", [
    (["compress", "/nonexistent/w.npz", "-o", "OUT"], "no such file"),
    (["decompress", "/nonexistent/w.lutz", "-o", "OUT"], "No such file"),
    (["info", "/nonexistent/w.lutz"], "No such file"),
])
def test_missing_files(argv, msg, tmp_path, capsys):
    argv = [str(tmp_path / "o") if a == "OUT" else a for a in argv]
    rc, o, e = run(argv, capsys)
    assert rc == 2 and msg in e and e.startswith("lutzip: error:")


def test_corrupt_and_wrong_inputs(int_weights, tmp_path, capsys):
    src, _ = int_weights
    out = tmp_path / "q.lutz"
    run(["compress", src, "-o", out], capsys)
    data = bytearray(out.read_bytes())
    data[-5] ^= 0x10
    bad = tmp_path / "bad.lutz"
    bad.write_bytes(bytes(data))
    rc, o, e = run(["decompress", bad, "-o", tmp_path / "x.npz"], capsys)
    assert rc == 2 and "CRC" in e
    rc, o, e = run(["decompress", src, "-o", tmp_path / "x.npz"], capsys)   # an .npz is not a .lutz
    assert rc == 2 and "not a .lutz file" in e
    txt = tmp_path / "w.txt"
    txt.write_text("hello")
    rc, o, e = run(["compress", txt, "-o", tmp_path / "y.lutz"], capsys)
    assert rc == 2 and "unknown weight file type" in e
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    rc, o, e = run(["compress", junk, "-o", tmp_path / "y.lutz"], capsys)
    assert rc == 2 and "npz" in e


def test_unsupported_dtype_and_skip(tmp_path, capsys):
    p = tmp_path / "i.npz"
    np.savez(p, ids=np.arange(10, dtype=np.int64), w=np.arange(10, dtype=np.int16))
    rc, o, e = run(["compress", p, "-o", tmp_path / "i.lutz"], capsys)
    assert rc == 2 and "int64" in e and "--skip-unsupported" in e
    rc, o, e = run(["compress", p, "-o", tmp_path / "i.lutz", "--skip-unsupported"], capsys)
    assert rc == 0 and "skipping" in e
    assert [t.name for t in ct.read(tmp_path / "i.lutz").tensors] == ["w"]


@pytest.mark.parametrize("opts", [["--prune", "1.5"], ["--prune", "x"], ["--stripe", "0"], ["--stripe", "70000"],
                                  ["--L", "13"], ["--quantize", "int4"], ["--quantize", "int8", "--bf16"]])
def test_bad_options_rejected_by_argparse(weights, tmp_path, capsys, opts):
    src, _ = weights
    with pytest.raises(SystemExit) as ei:
        cli.main(["compress", str(src), "-o", str(tmp_path / "x.lutz"), *opts])
    assert ei.value.code == 2


def test_greedy_and_no_share_options(int_weights, tmp_path, capsys):
    src, _ = int_weights
    sizes = {}
    for name, opts in [("best", []), ("greedy", ["--greedy"]), ("noshare", ["--no-share"])]:
        out = tmp_path / f"{name}.lutz"
        assert run(["compress", src, "-o", out, *opts], capsys)[0] == 0
        sizes[name] = out.stat().st_size
    assert sizes["best"] < sizes["greedy"]
    assert sizes["best"] <= sizes["noshare"]


def test_bench_command_json_and_plot(tmp_path, capsys):
    rng = np.random.default_rng(3)
    p = tmp_path / "m.npz"
    np.savez(p, w=rng.laplace(0, 0.05, (200, 100)).astype(np.float32), b=rng.normal(0, 0.1, 200).astype(np.float32))
    js, png = tmp_path / "b.json", tmp_path / "b.png"
    rc, o, e = run(["bench", p, "--prune", "0,0.75", "--json", js, "--plot", png], capsys)
    assert rc == 0
    assert "xz -9e" in o and "lutzip" in o and "bf16" in o
    d = json.loads(js.read_text())
    rows = next(iter(d.values()))
    assert [(r["mode"], r["sparsity"]) for r in rows] == [("int16", 0.0), ("int16", 0.75), ("bf16", 0.0)]
    assert png.stat().st_size > 1000


def test_console_script_entry_point(tmp_path):
    r = subprocess.run([sys.executable, "-m", "lutzip.cli", "info", str(tmp_path / "none.lutz")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("lutzip: error:")
