"""Throughput benchmark of the decoder core: weights per cycle with the input always valid and the output
always ready (``python -m lutzip.hdl.flows.bench``).

The figure is ``(words - 1) / (last output cycle - first output cycle)``: pipeline fill excluded, stripe
boundaries included. Every run is also checked word for word against the reference decoder.
``--sim myhdl`` (default) simulates the MyHDL description (about 3-5 k cycles/s); ``--sim verilator|ghdl|
icarus`` runs the converted core through :mod:`lutzip.hdl.flows.simulate`.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lutzip.codec.bitstream import encode_stripes
from lutzip.codec.encoder import best_tableset
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet
from lutzip.hdl.flows import core_sim as cs


def streams(n: int, seed: int = 0) -> dict:
    """``{name: (TableSet, words)}``: residual-heavy int16, zero-run-heavy int16, LUT-heavy int8."""
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
    from lutzip.codec.tables import lut1_fields
    lut1 = ts.lut1(8)
    n_sym = n_words = 0
    for p in packets:
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


def run(n: int = 100_000, stripe_len: int = 4096, sim: str = "myhdl", names=None, workdir=None,
        front: str = "window", step: str = "adder") -> dict:
    """Benchmark each stream; returns ``{name: dict(weights, cycles, weights_per_cycle, ...)}``."""
    res = {}
    for name, (ts, words) in streams(n).items():
        if names and name not in names:
            continue
        pay, sw = encode_stripes(words, ts, stripe_len)
        packets = cs.packets_from_stripes(pay, sw)
        ops = cs.table_ops(ts)
        exp = cs.expected_words(packets, ops)
        t0 = time.perf_counter()
        if sim == "myhdl":
            r = cs.simulate(packets, ops, W=ts.word_bits, expect_words=len(exp), FRONT=front, STEP=step)
            got, oc, timed_out = r.words, np.asarray(r.out_cycles), r.timed_out
        else:
            from lutzip.hdl.flows import simulate as S
            vec = S.Vectors(ops, [np.asarray(p, np.uint32) for p in packets],
                            np.array(exp, np.int64).reshape(-1, 3), {"L": 8, "W": ts.word_bits, "LUT3_DEPTH": 4096})
            wd = Path(workdir or tempfile.mkdtemp(prefix="lutzip-bench-")) / name
            core = None
            if front != "window" or step != "adder":
                import functools
                from lutzip.hdl.core.decoder_core import decoder_core
                core = functools.partial(decoder_core, FRONT=front, STEP=step)
                core.srcfile = decoder_core.srcfile
            out = S.run(sim, S.make_stimulus(vec, drain=8), wd, vec.params, core=core)
            got = [tuple(int(x) for x in row[:3]) for row in out.words]
            got = [(d, bool(la), bool(u)) for d, la, u in got]
            oc, timed_out = np.asarray(out.words[:, 3]), False
        dt = time.perf_counter() - t0
        span = int(oc[-1] - oc[0]) if len(oc) > 1 else 0
        gaps = np.diff(oc)
        res[name] = {
            "weights": len(got), "stripes": len(packets), "cycles": span,
            "weights_per_cycle": (len(got) - 1) / span if span else float("nan"),
            "idle_cycles": int(np.sum(gaps - 1)), "bits_per_weight": 32.0 * sum(map(len, packets)) / len(words),
            "symbols_per_weight": _symbols_per_word(packets, ts), "sim_seconds": dt,
            "bit_exact": got == exp and not timed_out,
        }
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lutzip.hdl.flows.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="weights per stream (default 100000)")
    ap.add_argument("--stripe", type=int, default=4096, help="stripe length in words (default 4096)")
    ap.add_argument("--sim", default="myhdl", choices=("myhdl", "verilator", "ghdl", "icarus"))
    ap.add_argument("--stream", action="append", help="only these streams (repeatable)")
    ap.add_argument("--front", default="window", choices=("window", "vector"), help="core front end (docs/CORE.md)")
    ap.add_argument("--step", default="adder", choices=("adder", "onehot"),
                    help="the window front's decode step (docs/CORE.md)")
    a = ap.parse_args(argv)
    step = f", {a.step} step" if a.front == "window" else ""
    print(f"decoder core ({a.front} front{step}), {a.sim}, {a.n} weights per stream, stripes of {a.stripe} words, "
          f"input always valid, output always ready:")
    ok = True
    for name, r in run(a.n, a.stripe, a.sim, a.stream, front=a.front, step=a.step).items():
        ok &= r["bit_exact"]
        print(f"  {name:15s} {r['weights_per_cycle']:.5f} weights/cycle  ({r['weights']} weights in {r['cycles']} "
              f"cycles, {r['idle_cycles']} idle cycles over {r['stripes']} stripes; {r['bits_per_weight']:.2f} "
              f"bits/weight, {r['symbols_per_weight']:.3f} symbols/weight; "
              f"{'bit-exact' if r['bit_exact'] else 'MISMATCH'}; {r['sim_seconds']:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
