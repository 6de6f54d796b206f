"""Encoder CPU time of ``states=2`` against the one-table encode, in one process (``python -m lutzip.codec.states_bench``).

For each cell (a real model quantised and pruned, or a synthetic array set) it prepares the arrays once, then runs
``compress(prepared)`` (one table) and ``compress(prepared, states=2)`` alternately ``--repeat`` times after a
warm-up round, timing each with the thread's CPU time (``time.thread_time``; pin the process with ``taskset -c N``),
and prints the medians, their ratio and the sha256 of the ``states=2`` file (its bytes are the product: a speed
change must not change them). ``--parts`` also times :func:`lutzip.codec.states.apply` alone and, with
``--profile``, prints its cProfile top functions.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import time

import numpy as np

#: the cells of the comparison: (model, quantize, bf16, prune)
CELLS = [("minilm", "int8", False, 0.0), ("minilm", "int8", False, 0.75), ("minilm", "int8", False, 0.9),
         ("minilm", "int16", False, 0.75), ("minilm", None, True, 0.0),
         ("nudenet", "int8", False, 0.0), ("nudenet", "int8", False, 0.75), ("nudenet", "int8", False, 0.9),
         ("synthetic", None, False, 0.0)]


def synthetic(seed: int = 7) -> dict:
    """Arrays with zero runs, a skewed int8 body, an int16 tensor and tiny tensors (grouped streams)."""
    rng = np.random.default_rng(seed)
    a = np.clip(np.round(rng.laplace(0, 6, 300_000)), -127, 127).astype(np.int8)
    a[rng.random(a.size) < 0.6] = 0
    b = np.clip(np.round(rng.normal(0, 300, 120_000)), -32767, 32767).astype(np.int16)
    b[rng.random(b.size) < 0.8] = 0
    out = {"a": a, "b": b.reshape(300, 400)}
    for i in range(12):
        out[f"t{i}"] = np.clip(np.round(rng.laplace(0, 3, 40 + 17 * i)), -127, 127).astype(np.int8)
    return out


def cell_arrays(model, quantize, bf16, prune):
    """The prepared arrays (and their attributes) of one cell."""
    from lutzip.weights.quantize import prepare
    if model == "synthetic":
        return synthetic(), {}
    from lutzip.bench import load_model
    _, arrays = load_model(model)
    return prepare(arrays, quantize=quantize, bf16=bf16, prune_fraction=prune, skip_unsupported=True)


def label(cell) -> str:
    model, quantize, bf16, prune = cell
    return f"{model} {'bf16' if bf16 else (quantize or 'raw')} {int(round(prune * 100))} %"


def run_cell(cell, repeat: int, parts: bool = False, profile: bool = False) -> dict:
    from lutzip.api import compress
    from lutzip.codec import container as ct, states
    prep, attrs = cell_arrays(*cell)
    kw = {"attrs": attrs} if attrs else {}
    one = compress(prep, **kw)
    two = compress(prep, states=2, **kw)               # warm-up (kernels compiled or loaded)
    c1 = ct.from_bytes(one)
    t1, t2, ta = [], [], []
    clock = time.thread_time
    for _ in range(repeat):
        t = clock()
        b1 = compress(prep, **kw)
        t1.append(clock() - t)
        t = clock()
        b2 = compress(prep, states=2, **kw)
        t2.append(clock() - t)
        if b1 != one or b2 != two:
            raise AssertionError(f"{label(cell)}: a repeat wrote different bytes")
        if parts:
            t = clock()
            states.apply(c1, L=8)
            ta.append(clock() - t)
    if profile:
        import cProfile
        import pstats
        pr = cProfile.Profile()
        pr.enable()
        states.apply(c1, L=8)
        pr.disable()
        pstats.Stats(pr).sort_stats("cumulative").print_stats(25)
    m1, m2 = statistics.median(t1), statistics.median(t2)
    return {"cell": label(cell), "one": m1, "two": m2, "ratio": m2 / m1, "apply": statistics.median(ta) if ta else None,
            "bytes1": len(one), "bytes2": len(two), "version": ct.from_bytes(two).version,
            "sha256": hashlib.sha256(two).hexdigest()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cells", default="", help="comma-separated substrings of cell labels (default: all)")
    ap.add_argument("--parts", action="store_true", help="also time states.apply alone")
    ap.add_argument("--profile", action="store_true", help="cProfile one states.apply per cell")
    a = ap.parse_args(argv)
    want = [w.strip() for w in a.cells.split(",") if w.strip()]
    cells = [c for c in CELLS if not want or any(w in label(c) for w in want)]
    cpu = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    print(f"states=2 vs one table, thread CPU time, medians of {a.repeat}; CPUs {cpu}; load {os.getloadavg()[0]:.1f}")
    print(f"{'cell':22s} {'one s':>7s} {'two s':>7s} {'ratio':>6s} {'apply':>7s} {'bytes 1':>10s} {'bytes 2':>10s}  v  sha256")
    for cell in cells:
        r = run_cell(cell, a.repeat, a.parts, a.profile)
        ap_s = f"{r['apply']:7.3f}" if r["apply"] is not None else "      -"
        print(f"{r['cell']:22s} {r['one']:7.3f} {r['two']:7.3f} {r['ratio']:6.2f} {ap_s} {r['bytes1']:10d} "
              f"{r['bytes2']:10d} {r['version']:2d}  {r['sha256'][:16]}", flush=True)
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
