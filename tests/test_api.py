"""The public API at the top of the package: compress / decompress / save / load / open."""
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import lutzip
from lutzip.codec import arrays as codec_arrays
from lutzip.codec import container as ct
from lutzip.errors import CorruptError, FormatError, LutzError, TableError, UnsupportedError


def _weights(seed=0):
    rng = np.random.default_rng(seed)
    f32 = rng.normal(0, 0.05, (32, 48)).astype(np.float32)
    sparse = np.rint(rng.laplace(0, 30, (64, 40))).astype(np.int16)
    sparse[rng.random(sparse.shape) < 0.7] = 0
    return {
        "conv.int8": np.rint(rng.laplace(0, 6, (8, 3, 3, 3))).clip(-128, 127).astype(np.int8),
        "fc.int16": sparse,
        "emb.bf16": f32.astype(ml_dtypes.bfloat16),
        "norm.f16": rng.normal(1, 0.1, 48).astype(np.float16),
        "mask.u8": rng.integers(0, 4, 100).astype(np.uint8),
        "empty": np.zeros((0, 7), np.int16),
        "scalar": np.array(-3, np.int8),
    }


def _bits(a):
    """The value as bit patterns: bfloat16 arrays as their uint16 words (how lutzip gives them back)."""
    return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def _same(got, want):
    assert list(got) == list(want)
    for k in want:
        w = _bits(np.asarray(want[k]))
        assert got[k].dtype == w.dtype and got[k].shape == w.shape, k
        assert np.array_equal(got[k], w), k


def test_compress_decompress_round_trip_every_dtype():
    w = _weights()
    data = lutzip.compress(w)
    assert isinstance(data, bytes) and data[:4] == b"LUTZ"
    got = lutzip.decompress(data)
    _same(got, w)
    assert got["emb.bf16"].dtype == np.uint16           # bf16 as its bit patterns
    _same(lutzip.decompress(memoryview(bytearray(data))), w)


def test_no_tensors_round_trip():
    assert lutzip.decompress(lutzip.compress({})) == {}


def test_save_load_and_options(tmp_path):
    w = _weights(1)
    p = tmp_path / "m.lutz"
    n = lutzip.save(p, w, stripe_len=100, L=10, share=False, attrs={"fc.int16": {"layer": 3}})
    assert n == p.stat().st_size
    _same(lutzip.load(p), w)
    _same(lutzip.load(str(p)), w)
    with lutzip.open(p) as f:
        assert f.info("fc.int16").stripe_len == 100 and f.info("fc.int16").attrs == {"layer": 3}
        assert max(ts.max_code_len for ts in f.tables) <= 10
        assert len(f.tables) == len(ct.read(p).streams)                # share=False: one table set per stream
    shared = ct.from_bytes(lutzip.compress(w))
    assert all(t.stripe_len == codec_arrays.DEFAULT_STRIPE for t in shared.tensors)
    greedy = lutzip.compress(w, greedy=True)
    _same(lutzip.decompress(greedy), w)
    assert greedy != lutzip.compress(w)


def test_lossy_options_go_through_the_documented_steps():
    from lutzip.weights.quantize import prepare
    rng = np.random.default_rng(5)
    w = {"w": rng.normal(0, 1, (20, 30)).astype(np.float32), "b": rng.normal(0, 1, 30).astype(np.float32)}
    q = lutzip.decompress(lutzip.compress(w, quantize="int8", prune=0.5))
    want, attrs = prepare(w, "int8", False, 0.5)
    _same(q, want)
    assert (q["w"] == 0).mean() >= 0.5 and (q["b"] == 0).mean() < 0.5     # biases are not pruned
    with pytest.raises(UnsupportedError, match="float32"):
        lutzip.compress(w)                                                  # floats need a lossy step
    b = lutzip.decompress(lutzip.compress(w, bf16=True))
    _same(b, {k: v.astype(ml_dtypes.bfloat16) for k, v in w.items()})


def test_quantize_scale_is_stored(tmp_path):
    p = tmp_path / "q.lutz"
    w = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
    lutzip.save(p, {"w": w}, quantize="int16")
    with lutzip.open(p) as f:
        scale = f.info("w").attrs["scale"]
        assert f.info("w").dtype == "int16"
        assert np.allclose(f["w"] * scale, w, atol=scale)


@pytest.mark.parametrize("opts,word", [
    ({"stripe": 100}, "'stripe'.*did you mean 'stripe_len'"),
    ({"threads": 0}, "threads must be an integer 1..256, not 0"),
    ({"L": "8"}, "L='8'"),
    ({"L": True}, "L=True"),
    ({"share": 1}, "share=1"),
    ({"prune": "half"}, "prune='half'"),
    ({"attrs": [1, 2]}, "attrs"),
    ({"L": 13}, "L=13"),
])
def test_bad_options_name_the_option(opts, word):
    with pytest.raises(lutzip.OptionError, match=word) as e:
        lutzip.compress({"a": np.zeros(4, np.int8)}, **opts)
    assert isinstance(e.value, TypeError) and isinstance(e.value, LutzError)
    assert "\n" not in str(e.value)


def test_out_of_range_values_are_lutz_errors():
    with pytest.raises(TableError, match="stripe length 0"):
        lutzip.compress({"a": np.zeros(4, np.int8)}, stripe_len=0)
    with pytest.raises(UnsupportedError, match="quantisation"):
        lutzip.compress({"a": np.zeros(4, np.float32)}, quantize="int4")
    with pytest.raises(UnsupportedError, match="dict of name"):
        lutzip.compress([np.zeros(4, np.int8)])
    with pytest.raises(UnsupportedError, match="names must be strings"):
        lutzip.compress({3: np.zeros(4, np.int8)})
    with pytest.raises(UnsupportedError, match="int64"):
        lutzip.compress({"a": np.zeros(4, np.int64)})
    with pytest.raises(UnsupportedError, match="not str"):
        lutzip.decompress("model.lutz")


def test_truncated_or_damaged_bytes_are_one_line_lutz_errors(tmp_path):
    data = lutzip.compress(_weights(2))
    for cut in (0, 10, ct.HEADER_SIZE, len(data) // 2, len(data) - 1):
        with pytest.raises(FormatError) as e:
            lutzip.decompress(data[:cut])
        assert "\n" not in str(e.value) and str(e.value)
        p = tmp_path / f"cut{cut}.lutz"
        p.write_bytes(data[:cut])
        with pytest.raises(FormatError):
            lutzip.load(p)
        with pytest.raises(FormatError):
            lutzip.open(p)
    bad = bytearray(data)
    bad[-3] ^= 0x10                                    # inside the last tensor's stripes
    with pytest.raises(CorruptError, match="stripe"):
        lutzip.decompress(bytes(bad))


@pytest.fixture
def decoder_calls(monkeypatch):
    """Names of the tensors the decoder kernel's wrapper is asked to decode."""
    calls = []
    real = codec_arrays.decode_stripes

    def counting(*args, **kw):
        calls.append(args[5] if len(args) > 5 else kw.get("name"))
        return real(*args, **kw)

    monkeypatch.setattr(codec_arrays, "decode_stripes", counting)
    return calls


def test_open_decodes_only_what_is_read(tmp_path, decoder_calls):
    w = _weights(3)
    p = tmp_path / "m.lutz"
    lutzip.save(p, w)
    with lutzip.open(p) as f:
        assert len(f) == len(w) and list(f) == list(w) and list(f.keys()) == list(w)
        assert "fc.int16" in f and "nope" not in f and 3 not in f
        e = f.info("fc.int16")
        assert (e.dtype, e.shape, e.numel) == ("int16", (64, 40), 64 * 40) and e.n_bytes < e.raw_bytes
        assert f.info("emb.bf16").dtype == "bfloat16"
        e.attrs["x"], e.shape = 1, (1,)                  # a copy: the index is not changed through it
        assert f.info("fc.int16").shape == (64, 40) and f.info("fc.int16").attrs == {}
        with pytest.raises(KeyError):
            f.info("nope")
        with pytest.raises(KeyError):
            f["nope"]
        assert decoder_calls == []                       # nothing above decodes
        a = f["fc.int16"]
        assert decoder_calls == ["fc.int16"]
        assert np.array_equal(a, w["fc.int16"])
        assert np.array_equal(f["conv.int8"], w["conv.int8"]) and decoder_calls == ["fc.int16", "conv.int8"]
        _same(dict(f.items()), w)
        assert "open" in repr(f) or "tensors" in repr(f)
    assert f.closed and "closed" in repr(f)
    assert np.array_equal(a, w["fc.int16"])              # arrays read before close stay valid
    for use in (lambda: f["fc.int16"], lambda: len(f), lambda: "fc.int16" in f, lambda: f.info("fc.int16")):
        with pytest.raises(LutzError, match="closed"):
            use()
    f.close()                                            # closing twice is harmless


def test_open_reads_healthy_tensors_of_a_damaged_file(tmp_path):
    w = _weights(4)
    data = bytearray(lutzip.compress(w))
    c = ct.from_bytes(bytes(data))
    t = c.tensor("fc.int16")
    meta_len = ct.HEADER.unpack_from(data)[3]
    data[ct.HEADER_SIZE + meta_len + t.offset + 5] ^= 0x01
    p = tmp_path / "bad.lutz"
    p.write_bytes(bytes(data))
    with lutzip.open(p) as f:
        assert np.array_equal(f["conv.int8"], w["conv.int8"])
        with pytest.raises(CorruptError, match="fc.int16"):
            f["fc.int16"]


def test_open_missing_and_empty_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        lutzip.open(tmp_path / "none.lutz")
    (tmp_path / "empty.lutz").write_bytes(b"")
    with pytest.raises(FormatError, match="shorter than"):
        lutzip.open(tmp_path / "empty.lutz")


def test_import_is_light_and_the_api_loads_on_first_use(tmp_path):
    p = tmp_path / "m.lutz"
    lutzip.save(p, {"a": np.arange(100, dtype=np.int16).reshape(10, 10)})
    code = ("import sys, lutzip\n"
            "print('lutzip.api' in sys.modules, 'numba' in sys.modules, 'numpy' in sys.modules)\n"
            "assert 'compress' in dir(lutzip)\n"
            f"with lutzip.open({str(p)!r}) as f:\n"
            "    print(f.info('a').shape, 'numba' in sys.modules)\n"
            "    a = f['a']\n"
            "print(int(a.sum()), 'numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    from lutzip.codec import fastdec      # decoding imports numba only without the compiled decoder
    assert out.stdout.split("\n")[:3] == ["False False False", "(10, 10) False", f"4950 {not fastdec.available()}"]
    with pytest.raises(AttributeError):
        lutzip.no_such_function  # noqa: B018


def test_max_output_in_decompress_load_and_open(tmp_path, monkeypatch, decoder_calls):
    """A small file that decodes to a lot: refused from the index before decoding (issue 14, item 8)."""
    z = np.zeros((2048, 1024), np.int16)                      # 4 MiB of zeros in a few KB
    p = tmp_path / "z.lutz"
    lutzip.save(p, {"z": z, "b": np.arange(5, dtype=np.int8)})
    data = p.read_bytes()
    assert len(data) < 64 * 1024
    for call in (lambda **k: lutzip.decompress(data, **k), lambda **k: lutzip.load(p, **k)):
        with pytest.raises(ct.OutputLimitError, match=f"{z.nbytes + 5} bytes"):
            call(max_output=1 << 20)
        assert decoder_calls == []
        assert call(max_output=None)["z"].shape == z.shape
        decoder_calls.clear()
    with lutzip.open(p, max_output=1 << 20) as f:
        assert np.array_equal(f["b"], np.arange(5, dtype=np.int8))      # small tensors still read
        with pytest.raises(ct.OutputLimitError, match=f"{z.nbytes} bytes"):
            f["z"]
        assert decoder_calls == ["b"]
    monkeypatch.setattr(codec_arrays, "available_memory", lambda: 1 << 20)   # the default: memory available
    with pytest.raises(LutzError, match="memory available"):
        lutzip.load(p)
    with lutzip.open(p) as f, pytest.raises(LutzError, match="memory available"):
        f["z"]


def _slab_weights():
    rng = np.random.default_rng(5)
    return {name: rng.integers(-3, 4, n).astype(np.int16) for name, n in
            [("tiny", 1000), ("a", 60_000), ("b", 500_000), ("c", 1_500_000), ("big", 2_600_000)]}


def test_decompress_outputs_come_from_huge_page_slabs(monkeypatch):
    """Arrays of 64 KiB..4 MiB share 2 MiB-aligned slabs, larger ones get a mapping each; every array is its
    own memory (writable, independent) and a slab goes back to the pool only when all its arrays are dropped."""
    w = _slab_weights()
    data = lutzip.compress(w, greedy=True)
    monkeypatch.setattr(codec_arrays, "_pool", [])
    pool = codec_arrays._pool
    back = lutzip.decompress(data)
    for k in w:
        assert np.array_equal(back[k], w[k]), k
        assert back[k].flags.writeable
    addr = {k: back[k].ctypes.data for k in w}
    # a (120 kB), b (1 MB) and c (3 MB) are packed into one 8 MiB slab from its 2 MiB-aligned start
    assert addr["a"] % (2 << 20) == 0
    assert addr["b"] - addr["a"] in range(120_000, 120_064) and addr["c"] - addr["b"] in range(1_000_000, 1_000_064)
    assert addr["big"] % (2 << 20) == 0 and not addr["a"] <= addr["big"] < addr["a"] + codec_arrays.SLAB_BYTES
    for k in w:
        back[k][:] = 7
    assert all(np.all(back[k] == 7) for k in w)          # no two arrays overlap
    keep = back.pop("b")
    del back
    assert len(pool) == 1 and pool[0][0] == 5_201_920     # the big tensor's mapping; b holds the shared slab
    del keep
    assert sorted(p[0] for p in pool) == [5_201_920, codec_arrays.SLAB_BYTES]
    again = lutzip.decompress(data)                     # the pooled mappings are taken again
    assert pool == [] and again["a"].ctypes.data == addr["a"] and again["big"].ctypes.data == addr["big"]
    assert all(np.array_equal(again[k], w[k]) for k in w)
    del again
    monkeypatch.setattr(codec_arrays, "POOL_BYTES", 0)
    pool.clear()
    out = lutzip.decompress(data)
    del out
    assert pool == []                                    # unmapped, not pooled


def test_decompress_in_one_c_call_equals_the_per_tensor_path(monkeypatch):
    """decompress decodes every stream in one call of the C library (lz_decode_many): the same arrays (names,
    order, dtypes, shapes, bits) as tensor by tensor; a damaged stripe, a CRC mismatch or a hand-made container
    with odd stream fields falls back to the per-tensor path, which raises the same error as before."""
    from lutzip.codec import fastdec
    if not fastdec.available():
        pytest.skip(fastdec.why_not())
    w = dict(_weights(), **{f"small{j}": np.arange(j * 10, dtype=np.int16) for j in range(1, 6)})
    data = lutzip.compress(w, group_below=256)
    c = ct.from_bytes(data)
    assert any(s.grouped for s in c.streams)
    used = []
    real = codec_arrays._decompress_c
    monkeypatch.setattr(codec_arrays, "_decompress_c", lambda *a: used.append(real(*a)) or used[-1])
    fast = codec_arrays.decompress(c)
    assert used and used[-1] is not None                     # the one-call path decoded it
    monkeypatch.setattr(codec_arrays, "_decompress_c", lambda *a: None)
    slow = codec_arrays.decompress(c)
    assert list(fast) == list(slow) == list(w)
    for k in w:
        assert fast[k].dtype == slow[k].dtype and fast[k].shape == slow[k].shape and np.array_equal(fast[k], slow[k])
    assert all(np.array_equal(codec_arrays.decompress(c, check_crc=False)[k], slow[k]) for k in w)
    # a flipped payload bit: the CRC error of the per-tensor path, with and without the one-call path
    bad = bytearray(data)
    bad[-5] ^= 0x10
    errors = []
    for patched in (real, lambda *a: None):
        monkeypatch.setattr(codec_arrays, "_decompress_c", patched)
        with pytest.raises(CorruptError) as e:
            lutzip.decompress(bytes(bad))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    # without CRCs the decoder itself judges the damage: again the same outcome either way
    outcomes = []
    for patched in (real, lambda *a: None):
        monkeypatch.setattr(codec_arrays, "_decompress_c", patched)
        try:
            got = codec_arrays.decompress(ct.from_bytes(bytes(bad)), check_crc=False)
            outcomes.append(("ok", [np.asarray(a).tobytes() for a in got.values()]))
        except LutzError as e:
            outcomes.append(("error", str(e)))
    assert outcomes[0] == outcomes[1]
    # a stream's stripe words as int64 (a hand-made container): the per-tensor path takes it
    monkeypatch.setattr(codec_arrays, "_decompress_c", lambda *a: used.append(real(*a)) or used[-1])
    c2 = ct.from_bytes(data)
    c2.streams[0].stripe_words = c2.streams[0].stripe_words.astype(np.int64)
    got = codec_arrays.decompress(c2)
    assert used[-1] is None and all(np.array_equal(got[k], slow[k]) for k in w)
