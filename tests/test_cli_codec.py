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


# ------------------------------------------------------------------------------------ issue 14, items 6-12
def _lutz(tmp_path, arrays, name="m.lutz", **kw):
    import lutzip
    p = tmp_path / name
    lutzip.save(p, arrays, **kw)
    return p


def test_tensor_names_numpy_savez_would_lose_come_back(tmp_path, capsys):
    """``file`` (a TypeError in np.savez), ``allow_pickle`` (swallowed by it) and friends, from a safetensors file."""
    from safetensors.numpy import save_file
    arrays = {"file": np.arange(6, dtype=np.int16).reshape(2, 3), "allow_pickle": np.arange(3, dtype=np.int8),
              "args": np.ones(2, np.uint8), "kwds": np.zeros(1, np.int16), "a/b": np.arange(2, dtype=np.int8),
              "": np.arange(3, dtype=np.int16), "x.npy.y": np.ones(1, np.int8), "é日": np.ones(2, np.int8)}
    src = tmp_path / "m.safetensors"
    save_file(arrays, str(src))
    out, back = tmp_path / "m.lutz", tmp_path / "back.npz"
    assert run(["compress", src, "-o", out], capsys)[0] == 0
    rc, o, e = run(["decompress", out, "-o", back], capsys)
    assert rc == 0 and o.strip().endswith(f"{len(arrays)} tensors") and e == ""
    with np.load(back) as z:
        assert sorted(z.files) == sorted(arrays)
        for k, a in arrays.items():
            assert z[k].dtype == a.dtype and np.array_equal(z[k], a), k


@pytest.mark.parametrize("names,match", [(["a\0b", "a\0c"], "NUL"), (["w", "w.npy"], "'w' and 'w.npy'")])
def test_names_an_npz_cannot_hold_are_refused_and_nothing_is_written(tmp_path, capsys, names, match):
    p = _lutz(tmp_path, {n: np.arange(3, dtype=np.int8) + i for i, n in enumerate(names)})
    back = tmp_path / "back.npz"
    rc, o, e = run(["decompress", p, "-o", back], capsys)
    assert rc == 2 and match in e and e.count("\n") == 1 and "lutzip.load" in e
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.lutz"]
    import lutzip
    got = lutzip.load(p)                                # the API keeps every tensor
    assert list(got) == names and all(np.array_equal(got[n], np.arange(3, dtype=np.int8) + i)
                                      for i, n in enumerate(names))


def test_failed_decompress_leaves_the_old_output_alone(tmp_path, capsys):
    p = _lutz(tmp_path, {"a": np.arange(100, dtype=np.int16)})
    data = bytearray(p.read_bytes())
    data[-3] ^= 1
    bad = tmp_path / "bad.lutz"
    bad.write_bytes(bytes(data))
    back = tmp_path / "back.npz"
    back.write_bytes(b"previous")
    rc, o, e = run(["decompress", bad, "-o", back], capsys)
    assert rc == 2 and "CRC" in e
    assert back.read_bytes() == b"previous" and sorted(x.name for x in tmp_path.iterdir()) == \
        ["back.npz", "bad.lutz", "m.lutz"]


def test_max_output(tmp_path, capsys):
    z = np.zeros((1024, 1024), np.int16)                 # 2 MiB from a few KB
    p = _lutz(tmp_path, {"z": z, "b": np.ones(8, np.int8)})
    assert p.stat().st_size < 32 * 1024
    back = tmp_path / "back.npz"
    for limit in ("1M", "2097159", "0.5m"):
        rc, o, e = run(["decompress", p, "-o", back, "--max-output", limit], capsys)
        assert rc == 2 and f"decode to {z.nbytes + 8} bytes" in e and "--max-output" in e and e.count("\n") == 1
        assert not back.exists()
    for limit in ("2097160", "3M", "none", "auto"):
        assert run(["decompress", p, "-o", back, "--max-output", limit], capsys)[0] == 0
    with pytest.raises(SystemExit):
        cli.main(["decompress", str(p), "-o", str(back), "--max-output", "lots"])
    assert "not a size" in capsys.readouterr().err


def test_info_json_is_valid_json_with_nan_and_inf_attributes(tmp_path, capsys):
    attrs = {"a": {"scale": float("nan"), "lo": float("-inf"), "hi": [float("inf"), 1.5]}}
    p = _lutz(tmp_path, {"a": np.arange(10, dtype=np.int16)}, attrs=attrs)
    rc, o, e = run(["info", p, "--json"], capsys)
    assert rc == 0

    def no_constants(c):
        raise AssertionError(f"{c} in the JSON")
    d = json.loads(o, parse_constant=no_constants)
    assert d["tensors"][0]["attrs"] == {"scale": "NaN", "lo": "-Infinity", "hi": ["Infinity", 1.5]}


def test_info_escapes_control_characters_in_names(tmp_path, capsys):
    p = _lutz(tmp_path, {"a\x1b[2Jb": np.arange(4, dtype=np.int8), "c\rd\x07": np.arange(4, dtype=np.int8),
                         "ok.weight": np.arange(4, dtype=np.int8)})
    rc, o, e = run(["info", p], capsys)
    assert rc == 0 and "a\\x1b[2Jb" in o and "c\\x0dd\\x07" in o and "ok.weight" in o
    assert not any(ch in o for ch in "\x1b\r\x07")
    rc, o, e = run(["info", p, "--json"], capsys)
    assert [t["name"] for t in json.loads(o)["tensors"]] == ["a\x1b[2Jb", "c\rd\x07", "ok.weight"]   # JSON is exact


def test_info_json_tensor_bytes_sum_to_the_payload(tmp_path, capsys):
    rng = np.random.default_rng(3)
    w = np.rint(rng.laplace(0, 50, (200, 300))).astype(np.int16)
    w[rng.random(w.shape) < 0.9] = 0
    p = _lutz(tmp_path, {"w": w, "b": rng.integers(-5, 5, 300).astype(np.int8)}, stripe_len=256)
    rc, o, e = run(["info", p, "--json"], capsys)
    d = json.loads(o)
    head = ct.HEADER.unpack_from(p.read_bytes())
    assert sum(t["bytes"] for t in d["tensors"]) == head[5] and d["bytes"] == p.stat().st_size
    assert all(t["stripes"] > 1 for t in d["tensors"])


def test_info_into_a_closed_pipe_ends_quietly(tmp_path):
    p = _lutz(tmp_path, {f"tensor.{i:04d}.weight": np.arange(8, dtype=np.int8) for i in range(1500)})
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from lutzip import cli; sys.exit(cli.main())",
                             "info", str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = [proc.stdout.readline() for _ in range(2)]     # what `| head -2` reads, then it goes away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=120)
    assert first[0].startswith(str(p).encode()) and rc in (0, 141) and err == "", (rc, err)


def test_deep_json_attributes_are_one_line_in_every_command(tmp_path, capsys):
    import struct
    import zlib
    good = ct.to_bytes(ct.from_bytes(_lutz(tmp_path, {"a": np.zeros(0, np.int16)}).read_bytes()), version=2)
    c = ct.from_bytes(good)                              # the record below is the version-2 layout
    meta = bytearray(good[ct.HEADER_SIZE:ct.HEADER_SIZE + ct.HEADER.unpack_from(good)[3]])
    deep = b'{"x":' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    # rebuild the one tensor record with the deep attributes (name a, int16, 1 dim 0, no flags)
    head = meta[:meta.index(b"\x01a")]
    rec = b"\x01a" + bytes([3, 1, 0, 0]) + ct._varint(len(deep)) + deep + b"\x00" \
        + ct._varint(c.tensors[0].stripe_len) + b"\x00\x00"
    m = bytes(head + rec)
    h = struct.pack("<4sHHIIQI", b"LUTZ", 2, 0, len(m), zlib.crc32(m), 0, 0)
    bad = tmp_path / "deep.lutz"
    bad.write_bytes(h + struct.pack("<I", zlib.crc32(h)) + m)
    for argv in (["decompress", bad, "-o", tmp_path / "x.npz"], ["info", bad], ["info", bad, "--json"]):
        rc, o, e = run(argv, capsys)
        assert rc == 2 and "nested deeper" in e and e.count("\n") == 1, (argv, e[:200])
