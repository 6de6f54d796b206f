"""Benchmark of the PYNQ DMA path on the simulated PYNQ device (printed figures, not a timed test).

    python -m lutzip.board.pynq_sim.bench [--model minilm|digits|FILE] [--dtype int16|bf16] [--min-weights N]
                                          [--lanes 1|2|4|8]

Compresses a real model, streams it tensor by tensor (one MM2S and one S2MM transfer per tensor each way,
every stripe's CRC checked against the software decoder) through the real pynq package, the AXI DMA model
and the converted ``lutzip_axi`` in Verilator, and prints per tensor and in total: decoded words per cycle of
the top (its counters: WORDS_OUT / CYC_TOTAL), DMA transfers, host register accesses per tensor (without the
table loads) and the host's own time per tensor (the simulator's time left out).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def model_container(model="minilm", dtype="int16", min_weights=1_000_000, stripe_len=4096):
    """``(label, Container)``: the model's first tensors (in file order) up to at least ``min_weights``."""
    from lutzip.bench import load_model
    from lutzip.codec import arrays as codec
    from lutzip.weights.quantize import quantize_int
    label, arrays = load_model(model)
    pick, n = {}, 0
    for k, v in arrays.items():
        v = np.asarray(v)
        if v.dtype.kind != "f" or v.size < 2:
            continue
        pick[k] = v
        n += v.size
        if min_weights and n >= min_weights:
            break
    if dtype == "bf16":
        import ml_dtypes
        words = {k: v.astype(np.float32).astype(ml_dtypes.bfloat16) for k, v in pick.items()}
    else:
        words = {k: quantize_int(v, dtype)[0] for k, v in pick.items()}
    return f"{label} ({dtype}, {len(words)} tensors)", codec.compress(words, stripe_len=stripe_len)


def run(model="minilm", dtype="int16", min_weights=1_000_000, backend="verilator", out=sys.stdout, lanes=1):
    """Run the benchmark and print its table; returns the per-tensor rows and the totals (dicts).

    ``lanes``: the top's ``LANES`` (docs/AXI.md); the host side and the buffers are the same for every value.
    """
    from lutzip.board.pynq import open_board
    from lutzip.board.verify import stream_container
    t0 = time.perf_counter()
    label, c = model_container(model, dtype, min_weights)
    t_comp = time.perf_counter() - t0
    rows = []
    top = {"LANES": int(lanes)} if int(lanes) != 1 else {}
    with open_board(sim=True, backend=backend, timeout=600.0, **top) as b:
        info = b.identify()
        print(f"{label}: {sum(t.numel for t in c.tensors)} weights, compressed in {t_comp:.1f} s; "
              f"{info.link_text()}; LANES={info.lanes}", file=out)
        print(f"{'tensor':<48} {'weights':>9} {'stripes':>7} {'xfers':>5} {'words/cyc':>9} {'reg acc':>7} "
              f"{'host ms':>8} {'result':>6}", file=out)
        for t in c.tensors:
            r = stream_container(b, c, "crc", names={t.name})
            x = {"tensor": t.name, "weights": t.numel, "stripes": len(t.stripe_words), "transfers": r["transfers"],
                 "words": r["counters"]["words"], "cycles": r["counters"]["cycles"],
                 "words_per_cycle": r["weights_per_cycle"], "reg_per_transfer": r["register_accesses_per_transfer"],
                 "host_s_per_transfer": r["host_overhead_s_per_transfer"], "ok": r["ok"],
                 "wall_s": r["elapsed_s"]}
            rows.append(x)
            print(f"{t.name[:48]:<48} {x['weights']:>9} {x['stripes']:>7} {x['transfers']:>5} "
                  f"{x['words_per_cycle']:>9.5f} {x['reg_per_transfer']:>7.1f} "
                  f"{1e3 * x['host_s_per_transfer']:>8.3f} {'PASS' if x['ok'] else 'FAIL':>6}", file=out)
    words = sum(x["words"] for x in rows)
    cycles = sum(x["cycles"] for x in rows)
    tot = {"weights": words, "cycles": cycles, "words_per_cycle": words / max(cycles, 1),
           "transfers": sum(x["transfers"] for x in rows),
           "reg_per_transfer": sorted({x["reg_per_transfer"] for x in rows}),
           "host_ms_per_transfer": 1e3 * np.mean([x["host_s_per_transfer"] for x in rows]),
           "wall_s": sum(x["wall_s"] for x in rows), "ok": all(x["ok"] for x in rows), "lanes": info.lanes}
    w_bytes = 2 if dtype != "int8" else 1
    print(f"total: {words} words in {cycles} cycles = {tot['words_per_cycle']:.5f} decoded words per cycle "
          f"(counters of the top); {tot['transfers']} DMA transfers each way for {len(rows)} tensors; "
          f"register accesses per transfer {tot['reg_per_transfer']} (stripes 1..{max(x['stripes'] for x in rows)}); "
          f"host overhead {tot['host_ms_per_transfer']:.3f} ms per tensor (x86, simulator time excluded); "
          f"wall {tot['wall_s']:.1f} s; {'PASS' if tot['ok'] else 'FAIL'}", file=out)
    s2mm = tot["words_per_cycle"] * w_bytes * info.clk_hz / 1e6
    who = ("the decoder sets the rate" if s2mm < 300 else
           "the DMA, not the decoder, may set the rate" if s2mm <= 400 else "the DMA sets the rate")
    print(f"silicon estimate at {info.clk_hz / 1e6:g} MHz: the core needs {s2mm:.0f} MB/s on S2MM and "
          f"{s2mm * sum(t.n_bytes for t in c.tensors) / max(sum(t.raw_bytes for t in c.tensors), 1):.0f} MB/s on "
          f"MM2S; AXI DMA at 32 bits moves about 300-400 MB/s per channel (PG021), so {who}",
          file=out)
    return rows, tot


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m lutzip.board.pynq_sim.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="minilm", help="minilm, digits or a weight file (default minilm)")
    ap.add_argument("--dtype", choices=("int16", "int8", "bf16"), default="int16")
    ap.add_argument("--min-weights", type=int, default=1_000_000, help="take tensors until this many (0: all)")
    ap.add_argument("--backend", choices=("verilator", "myhdl"), default="verilator")
    ap.add_argument("--lanes", type=int, choices=(1, 2, 4, 8), default=1,
                    help="decoder lanes of the AXI top (LANES x W <= the 32-bit beat; default 1)")
    a = ap.parse_args(argv)
    from lutzip.errors import LutzError
    try:
        _rows, tot = run(a.model, a.dtype, a.min_weights, a.backend, lanes=a.lanes)
    except LutzError as e:
        print(f"lutzip: {e}", file=sys.stderr)
        return 2
    return 0 if tot["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
