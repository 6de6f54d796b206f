"""Throughput bench of the decoder core (``lutzip hdl bench``, ``python -m lutzip.hdl.flows.bench``).

* :func:`streams` -- the synthetic streams: residual-heavy int16, zero-run-heavy int16, LUT-heavy int8.
* :func:`run` -- weights per cycle per stream, input always valid and output always ready, in any simulator
  of :mod:`lutzip.hdl.flows.simulate` (Verilator by default; MyHDL runs about 3-5 k cycles/s). The figure is
  ``(words - 1) / (last output cycle - first output cycle)``: pipeline fill excluded, stripe boundaries
  included. Every run is also checked word for word against the reference model.
* :func:`run_rows` -- the same figure for the core with ``MIRROR=1`` on row streams of a real model's transform
  basis (``lutzip hdl bench --mirror``; the streams of :func:`lutzip.hdl.flows.lanes_bench.row_streams`), every
  word checked against the software decoder's.
* :func:`sim_speeds` -- cycles per second of each simulator on one small vector (builds excluded).

(The compression benchmark against xz / zstd is :mod:`lutzip.bench`.)
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from lutzip.codec.encoder import best_tableset
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet, lut1_fields
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.vectors import make_vectors


def streams(n: int, seed: int = 0) -> dict:
    """The synthetic streams ``{name: (TableSet, words)}`` of ``n`` weights each.

    ``residual_int16``: Laplace int16 (scale 3000), mostly raw residuals; ``zero_run_int16``: 85 % zeros,
    zero runs and a small LUT; ``lut_int8``: Laplace int8 (scale 6), LUT classes.
    """
    rng = np.random.default_rng(seed)
    out = {}
    r = np.round(rng.laplace(0, 3000, n)).astype(np.int16).view(np.uint16)
    out["residual_int16"] = (best_tableset(r, 16), r)
    z = np.round(rng.laplace(0, 2, n)).astype(np.int16)
    z[rng.random(n) < 0.85] = 0
    z = z.view(np.uint16)
    out["zero_run_int16"] = (TableSet(16, [ClassSpec(1, ZRUN, 4, 0), ClassSpec(2, LUT, 3, 0),
                                           ClassSpec(2, RANGE, 16, 0)],
                                      np.array([1, 0xFFFF, 2, 0xFFFE, 3, 0xFFFD, 4, 0xFFFC], np.uint16)), z)
    b = np.clip(np.round(rng.laplace(0, 6, n)), -128, 127).astype(np.int8).view(np.uint8)
    out["lut_int8"] = (best_tableset(b, 8), b)
    return out


def _symbols_per_word(packets, ts):
    """Average class symbols per word (zero runs make it < 1)."""
    lut1 = ts.lut1(8)
    n_sym = n_words = 0
    for p in packets:
        p = [int(v) for v in p]
        n_words += (p[0] & 0xFFFF) + 1
        bits = "".join(format(w, "032b") for w in p[1:])
        pos, left = 0, (p[0] & 0xFFFF) + 1
        while left > 0:
            e = lut1[int(bits[pos:pos + 8].ljust(8, "0"), 2)]
            _, cls, _, tot = lut1_fields(e)
            k = ts.classes[cls].k
            left -= (int(bits[pos + tot - k:pos + tot] or "0", 2) + 1) if ts.classes[cls].kind == ZRUN else 1
            pos += tot
            n_sym += 1
    return n_sym / n_words


def run(n: int = 100_000, stripe_len: int = 4096, sim: str = "verilator", names=None, workdir=None, core=None,
        seed: int = 0, **params) -> dict:
    """Benchmark each stream of :func:`streams`.

    Parameters
    ----------
    n : int
        Weights per stream.
    stripe_len : int
        Stripe length in words.
    sim : str
        One of :data:`lutzip.hdl.flows.simulate.SIMULATORS`.
    names : sequence of str, optional
        Only these streams.
    workdir : str or Path, optional
        Keep the run files here (default: a temporary directory).
    core : myhdl block, optional
        A stand-in with the core's ports (default: the decoder core).
    **params
        Core parameters (``FRONT``, ``STEP``, ``LUT1_RAM`` ...; ``W`` follows each stream).

    Returns
    -------
    dict
        ``{name: {"weights", "stripes", "cycles", "weights_per_cycle", "idle_cycles", "bits_per_weight",
        "symbols_per_weight", "sim_seconds", "bit_exact", "mismatch"}}``.
    """
    res = {}
    root = Path(workdir or tempfile.mkdtemp(prefix="lutzip-bench-"))
    for name, (ts, words) in streams(n, seed).items():
        if names and name not in names:
            continue
        vec = make_vectors(ts, words, stripe_len, **params)
        out = S.run(sim, S.make_stimulus(vec, drain=8), root / name, vec.params, core)
        msg = S.first_difference(out, vec.expected)
        oc = out.out_cycles
        span = int(oc[-1] - oc[0]) if len(oc) > 1 else 0
        res[name] = {
            "weights": len(oc), "stripes": len(vec.stripes), "cycles": span,
            "weights_per_cycle": (len(oc) - 1) / span if span else float("nan"),
            "idle_cycles": int(np.sum(np.diff(oc) - 1)), "bits_per_weight": 32.0 * vec.n_in / len(words),
            "symbols_per_weight": _symbols_per_word(vec.stripes, ts), "sim_seconds": out.seconds,
            "bit_exact": msg is None, "mismatch": msg,
        }
    return res


def run_rows(n: int = 1_000_000, stripe_len: int = 4096, sim: str = "verilator", names=None, workdir=None,
             **params) -> dict:
    """Benchmark the core with ``MIRROR=1`` on the row streams of
    :func:`lutzip.hdl.flows.lanes_bench.row_streams` (``n``: at least this many weights per stream).

    Returns ``{name: {"weights", "stripes", "cycles", "weights_per_cycle", "idle_cycles", "bits_per_weight",
    "sim_seconds", "bit_exact", "mismatch"}}`` (the figure as :func:`run`'s).
    """
    from lutzip.hdl.core.ports import CoreParams
    from lutzip.hdl.flows.lanes_bench import ROWS_MAX_N, row_streams
    from lutzip.hdl.flows.vectors import Vectors
    res = {}
    root = Path(workdir or tempfile.mkdtemp(prefix="lutzip-bench-rows-"))
    for name, (stripes, ops, W, rows) in row_streams(n, stripe_len, names).items():
        p = CoreParams.make({"MIRROR": 1, "MAX_N": ROWS_MAX_N, **params, "W": W})
        vec = Vectors(ops, stripes, rows, p.as_dict())
        out = S.run(sim, S.make_stimulus(vec, drain=8), root / name, vec.params)
        msg = S.first_difference(out, vec.expected)
        oc = out.out_cycles
        span = int(oc[-1] - oc[0]) if len(oc) > 1 else 0
        res[name] = {
            "weights": len(oc), "stripes": len(stripes), "cycles": span,
            "weights_per_cycle": (len(oc) - 1) / span if span else float("nan"),
            "idle_cycles": int(np.sum(np.diff(oc) - 1)), "bits_per_weight": 32.0 * vec.n_in / len(rows),
            "sim_seconds": out.seconds, "bit_exact": msg is None, "mismatch": msg,
        }
    return res


def sim_speeds(n: int = 4000, workdir=None, sims=S.SIMULATORS, core=None, **params) -> dict:
    """Cycles per second of each simulator on the same small LUT-heavy vector (builds excluded).

    Returns ``{sim: {"cycles", "seconds", "cycles_per_second", "bit_exact", "warnings"}}``; simulators that
    cannot run here are left out.
    """
    root = Path(workdir or tempfile.mkdtemp(prefix="lutzip-speed-"))
    ts, words = streams(n)["lut_int8"]
    vec = make_vectors(ts, words, 1024, **params)
    stim = S.make_stimulus(vec, in_gap=0.1, out_stall=0.2, seed=1)
    out = {}
    for s in sims:
        if S.available(s):
            continue
        S.run(s, stim, root / f"warm-{s}", vec.params, core)  # builds / converts once
        o = S.run(s, stim, root / s, vec.params, core)
        out[s] = {"cycles": o.end_cycle, "seconds": o.seconds, "cycles_per_second": o.cycles_per_second,
                  "bit_exact": S.first_difference(o, vec.expected) is None, "warnings": len(o.notes)}
    return out


def main(argv=None) -> int:
    """``python -m lutzip.hdl.flows.bench``: the options of ``lutzip hdl bench``."""
    import argparse

    from lutzip.errors import LutzError
    from lutzip.hdl.flows import cli
    ap = argparse.ArgumentParser(prog="python -m lutzip.hdl.flows.bench", description=__doc__.split("\n\n")[0])
    cli.add_bench_arguments(ap)
    args = ap.parse_args(argv)
    try:
        return cli.cmd_bench(args)
    except LutzError as e:
        print(f"{ap.prog}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
