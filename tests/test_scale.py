"""Model scale (issue 17): the tensor-by-tensor writer writes the bytes of the in-memory path, in bounded memory."""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import encoder, writer
from lutzip.codec.bitstream import StripeEncoder, encode_stripes
from lutzip.weights import quantize as qz


def _arrays(seed=1):
    rng = np.random.default_rng(seed)
    return {"a.w": (rng.standard_normal((300, 700)) * 0.02).astype(np.float32),
            "a.b": rng.standard_normal(50).astype(np.float32),
            "empty": np.zeros((0, 3), np.float32),
            "c.w": rng.standard_normal((64, 64)).astype(np.float32),
            "d": rng.integers(-5, 5, (100,)).astype(np.int8),
            "i8": rng.integers(-20, 20, (5000,)).astype(np.int8),
            "sparse": np.where(rng.random(9000) < 0.8, 0, rng.integers(-99, 99, 9000)).astype(np.int16)}


def _old_bytes(arrays, quantize=None, bf16=False, prune=0.0, **kw):
    prep, attrs = qz.prepare(arrays, quantize, bf16, prune)
    return ct.to_bytes(codec.compress(prep, attrs=attrs, **kw))


@pytest.mark.parametrize("lossy", [dict(quantize="int16"), dict(bf16=True), dict(quantize="int8", prune=0.5)])
@pytest.mark.parametrize("kw", [dict(), dict(group_below=0), dict(stripe_len=300), dict(share=False)])
def test_streamed_writer_writes_the_same_bytes(tmp_path, monkeypatch, lossy, kw):
    monkeypatch.setattr(writer, "CHUNK_WORDS", 1000)           # several parts per tensor
    arrays = _arrays()
    out = tmp_path / "x.lutz"
    for keep in (0, writer.KEEP_BYTES):                        # prepared words spilled to a file, or kept
        n, c = writer.write_streamed(out, writer._eager(arrays), prepare=writer.lossy_step(**lossy),
                                     keep_bytes=keep, **kw)
        data = out.read_bytes()
        assert data == _old_bytes(arrays, **lossy, **kw)
        assert n == len(data) and c.payload is None
    assert [p.name for p in tmp_path.iterdir()] == ["x.lutz"]    # no temporary file left


def test_streamed_writer_greedy_and_lossless(tmp_path):
    from lutzip.codec.encoder import greedy_tableset
    arrays = {k: v for k, v in _arrays(2).items() if v.dtype != np.float32}
    fn = lambda w, b: greedy_tableset(w, b, L=8)  # noqa: E731
    writer.write_streamed(tmp_path / "g.lutz", writer._eager(arrays), tableset_fn=fn)
    assert (tmp_path / "g.lutz").read_bytes() == ct.to_bytes(codec.compress(arrays, tableset_fn=fn))


def _write_safetensors(path, arrays):
    header, off, blobs = {}, 0, []
    for name, a in arrays.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": {"float32": "F32", "int8": "I8", "int16": "I16"}[a.dtype.name],
                        "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def test_file_source_maps_safetensors_and_npy(tmp_path):
    from lutzip.weights import loaders
    arrays = _arrays(3)
    st = tmp_path / "m.safetensors"
    _write_safetensors(st, arrays)
    items = writer.file_source(st)
    eager = loaders.load(st)
    assert [n for n, _ in items] == list(eager)               # the loader's order
    for name, get in items:
        a = get()
        assert a.dtype == eager[name].dtype and a.shape == eager[name].shape and np.array_equal(a, eager[name])
    npy = tmp_path / "w.npy"
    np.save(npy, arrays["a.w"])
    [(name, get)] = writer.file_source(npy)
    assert name == "w" and np.array_equal(get(), arrays["a.w"])
    n, _ = writer.compress_file(st, tmp_path / "m.lutz", quantize="int16")
    assert (tmp_path / "m.lutz").read_bytes() == _old_bytes(eager, quantize="int16")


def test_file_source_refuses_a_lying_header(tmp_path):
    from lutzip.errors import FormatError
    p = tmp_path / "bad.safetensors"
    h = json.dumps({"w": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}).encode()
    p.write_bytes(struct.pack("<Q", len(h)) + h + bytes(40))
    with pytest.raises(FormatError):
        writer.file_source(p)


def test_stripe_encoder_parts_equal_one_call():
    rng = np.random.default_rng(4)
    w = np.where(rng.random(50_000) < 0.5, 0, rng.integers(0, 300, 50_000)).astype(np.uint16)
    ts = encoder.best_tableset(w, 16, stripe_len=256)
    whole, sw = encode_stripes(w, ts, 256)
    enc = StripeEncoder(ts, 256)
    parts = [enc.encode(w[i:i + 256 * 7], i) for i in range(0, w.size, 256 * 7)]
    assert np.array_equal(np.concatenate([p for p, _ in parts]), whole)
    assert np.array_equal(np.concatenate([s for _, s in parts]), sw)


def test_histogram_in_parts(monkeypatch):
    monkeypatch.setattr(encoder, "HIST_CHUNK", 1000)
    w = np.random.default_rng(5).integers(0, 1 << 16, 12_345).astype(np.uint16)
    assert np.array_equal(encoder.histogram(w, 16), np.bincount(w.astype(np.int64), minlength=1 << 16))


def test_quantize_in_parts_matches_whole(monkeypatch):
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((77, 131)) * 3).astype(np.float32)
    ref_scale = float(str(np.float32(np.abs(a.astype(np.float64)).max() / 32767)))
    ref = np.clip(np.rint(a.astype(np.float64) / ref_scale), -32767, 32767).astype(np.int16)
    whole = qz.quantize_int(a, "int16")
    monkeypatch.setattr(qz, "CHUNK", 1000)
    q, attrs = qz.quantize_int(a, "int16")
    assert attrs == {"scale": ref_scale} == whole[1] and np.array_equal(q, ref) and np.array_equal(q, whole[0])
    b, _ = qz.to_bfloat16(a)
    import ml_dtypes
    assert np.array_equal(b.view(np.uint16), a.astype(ml_dtypes.bfloat16).view(np.uint16))
    bad = a.copy()
    bad[5, 3], bad[70, 1] = np.nan, np.inf
    with pytest.raises(qz.UnsupportedError, match=r"holds 2 NaN or infinite values \(first nan\)"):
        qz.quantize_int(bad, "int16", "w")


# --------------------------------------------------------------------------------------------- peak memory
_RSS = r"""
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
if r.returncode:
    sys.exit(r.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


def _peak(*cmd) -> int:
    """Peak resident bytes of ``python -m lutzip.cli cmd...`` (a fresh process, measured by its parent)."""
    r = subprocess.run([sys.executable, "-c", _RSS, sys.executable, "-m", "lutzip.cli", *map(str, cmd)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


@pytest.mark.slow
def test_peak_memory_within_two_tensors(tmp_path):
    """Eight 32 MB float32 tensors through --quantize int16 and --bf16, and back: above a tiny file's peak, the
    peak stays below twice the largest tensor plus 48 MB of parts (it was about twice the whole file)."""
    n, k = 8 << 20, 8
    big = tmp_path / "big.safetensors"
    h = json.dumps({f"l{i}.w": {"dtype": "F32", "shape": [n // 4096, 4096], "data_offsets": [4 * n * i, 4 * n * (i + 1)]}
                    for i in range(k)}).encode()
    rng = np.random.default_rng(7)
    with open(big, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for _ in range(k * n // (1 << 22)):
            (rng.standard_normal(1 << 22, dtype=np.float32) * 0.05).tofile(f)
    small = tmp_path / "small.safetensors"
    _write_safetensors(small, {"w": np.linspace(-1, 1, 4096, dtype=np.float32).reshape(64, 64)})
    base = _peak("compress", small, "-o", tmp_path / "s.lutz", "--quantize", "int16")
    base_d = _peak("decompress", tmp_path / "s.lutz", "-o", tmp_path / "s.npz")
    parts = 48 << 20
    for lossy in (["--quantize", "int16"], ["--bf16"]):
        peak = _peak("compress", big, "-o", tmp_path / "b.lutz", *lossy)
        print("compress", lossy, (peak - base) >> 20, "MB above", base >> 20)
        assert peak - base <= 2 * 4 * n + parts, (lossy, peak, base)
        peak = _peak("decompress", tmp_path / "b.lutz", "-o", tmp_path / "b.npz", "--max-output", "none")
        print("decompress", lossy, (peak - base_d) >> 20, "MB above", base_d >> 20)
        assert peak - base_d <= 2 * 2 * n + parts, (lossy, peak, base_d)


@pytest.mark.parametrize("opts", [dict(quantize="int16", attrs={"a.w": {"layer": 1}}), dict(bf16=True, greedy=True),
                                  dict(quantize="int8", prune=0.5, stripe_len=512, group_below=0)])
def test_save_writes_what_compress_returns(tmp_path, opts):
    import lutzip
    arrays = _arrays(8)
    n = lutzip.save(tmp_path / "s.lutz", arrays, **opts)
    assert (tmp_path / "s.lutz").read_bytes() == lutzip.compress(arrays, **opts) and n == (tmp_path / "s.lutz").stat().st_size


def test_open_releases_each_tensors_pages(tmp_path, monkeypatch):
    import lutzip
    arrays = {k: v for k, v in _arrays(9).items() if v.dtype != np.float32}
    lutzip.save(tmp_path / "r.lutz", arrays)
    calls = []
    monkeypatch.setattr(writer, "release_pages", lambda mm, a, n: calls.append((a, n)))
    size = (tmp_path / "r.lutz").stat().st_size
    with lutzip.open(tmp_path / "r.lutz") as f:
        for name in arrays:
            assert np.array_equal(f[name], arrays[name])
            t = f.info(name)
            assert calls[-1][1] == 4 * int(np.asarray(t.stripe_words, np.int64).sum())
            assert 0 < calls[-1][0] and calls[-1][0] + calls[-1][1] <= size
    # and the real call on a mapping does no harm
    import mmap
    with open(tmp_path / "r.lutz", "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        monkeypatch.undo()
        writer.release_pages(mm, 10, 100)
        assert mm[:4] == b"LUTZ"
