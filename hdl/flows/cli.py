"""``lutzip hdl ...`` sub-commands: :func:`register` adds them to the hdl group that :mod:`lutzip.cli` made.

``convert`` (the core to VHDL / Verilog), ``synth`` (yosys + nextpnr, :mod:`lutzip.hdl.flows.synth`) and
``bench`` (weights per cycle in a simulator, :mod:`lutzip.hdl.flows.bench`). The core's parameters are the
same options everywhere (:func:`add_core_params`).
"""
from __future__ import annotations

import json

from lutzip.cli.types import int_in


def add_core_params(p, target_defaults=False, mirror=False):
    """The core parameters (docs/CORE.md) as options ``--L --W --lut3-depth --front --step --lut1-ram --states``
    (with ``mirror``: ``--mirror --max-n`` too).

    With ``target_defaults`` the choice options default to what the synthesis target builds.
    """
    p.add_argument("--L", type=int_in(1, 12, "L"), default=8, help="LUT1 address bits (default 8)")
    p.add_argument("--W", type=int_in(8, 16, "W"), default=16, choices=(8, 16), help="word width (default 16)")
    p.add_argument("--lut3-depth", type=int_in(1, 4096, "LUT3 depth"), default=4096,
                   help="LUT3 entries (default 4096)")
    dflt = "the target's choice" if target_defaults else None
    p.add_argument("--front", choices=("window", "vector"),
                   help="front end: window (LUT1 in the loop, small) or vector (fast, 32 TL block RAMs); default "
                   + (dflt or "window"))
    p.add_argument("--step", choices=("adder", "onehot"),
                   help="the window front's decode step: adder (small) or onehot (faster, ~1500 LUT4 more); "
                   "default " + (dflt or "adder"))
    p.add_argument("--lut1-ram", choices=("block", "distributed"),
                   help="LUT1 read: registered (block RAM; iCE40) or asynchronous (LUT RAM; ECP5 / Xilinx); default "
                   + (dflt or "block"))
    p.add_argument("--states", type=int, choices=(1, 2), default=1,
                   help="code tables: 2 also decodes two-table sets (format version 5, --states 2 files); default 1")
    if mirror:
        p.add_argument("--mirror", action="store_true",
                       help="row stripes too (MIRROR=1: row streams, format version 6; docs/CORE.md section 7)")
        p.add_argument("--max-n", type=int, default=512, metavar="N",
                       help="with --mirror: the row buffer MAX_N (rows of <= MAX_N + 1 words; a power of two "
                            "4..32768, default 512)")


def add_lanes_param(p, bench=False):
    """``--lanes N``: the N-lane decoder (docs/CORE.md section 6) instead of the single core (1, the default).

    With ``bench``: no default; any ``--lanes`` (1 included) runs the N-lane bench on real-model streams."""
    if bench:
        p.add_argument("--lanes", type=int, choices=(1, 2, 4, 8),
                       help="the N-lane decoder (decoder_lanes) on real-model streams (default: the single core on "
                       "the synthetic streams)")
        add_assign_param(p)
        return
    p.add_argument("--lanes", type=int, choices=(1, 2, 4, 8), default=1,
                   help="lanes of the N-lane decoder (decoder_lanes); 1 (default): the single core decoder_core")
    add_assign_param(p)


def add_assign_param(p):
    """``--assign rr|load``: the N-lane decoder's stripe-to-lane rule (docs/CORE.md section 6.3)."""
    p.add_argument("--assign", choices=("rr", "load"), default="load",
                   help="with --lanes: stripe i on the least-loaded lane (load, default) or on lane i mod N (rr)")


def core_params(args):
    """The :class:`lutzip.hdl.core.ports.CoreParams` of parsed options (``--target``: the target's choices)."""
    from lutzip.hdl.core.ports import CoreParams
    target = getattr(args, "target", None)
    # --mirror (convert, synth): MIRROR=1 and its MAX_N; without it the parameters of before
    mirror = {"MIRROR": 1, "MAX_N": args.max_n} if getattr(args, "mirror", False) else {}
    if target:
        from lutzip.hdl.flows.synth import core_params as for_target
        p = for_target(target, args.L, args.W, args.lut3_depth, args.front, args.step, args.lut1_ram,
                       getattr(args, "states", 1))
        return CoreParams.make(p, **mirror) if mirror else p
    given = {"FRONT": args.front, "STEP": args.step, "LUT1_RAM": args.lut1_ram}
    return CoreParams.make(L=args.L, W=args.W, LUT3_DEPTH=args.lut3_depth, STATES=getattr(args, "states", 1),
                           **{k: v for k, v in given.items() if v is not None}, **mirror)


# ------------------------------------------------------------------------------------------------ convert
def _cmd_convert(args):
    from pathlib import Path

    from lutzip.hdl.flows.convert import convert_core
    p = core_params(args)
    out = Path(args.out)
    lanes = getattr(args, "lanes", 1)   # --mirror with --lanes: row stripes in every lane (docs/CORE.md 6.8)
    before = {f.name: f.stat().st_mtime_ns for f in out.iterdir()} if out.is_dir() else {}
    for h in (("vhdl", "verilog") if args.hdl == "both" else (args.hdl,)):
        if lanes == 1:
            convert_core(out, h, **p.as_dict())
        else:
            from lutzip.hdl.flows.convert import convert_lanes
            convert_lanes(out, h, lanes=lanes, assign=args.assign, **p.as_dict())
    top = "decoder_core." if lanes == 1 else "decoder_lanes."
    for f in sorted(out.iterdir()):
        if before.get(f.name) != f.stat().st_mtime_ns or f.name.startswith(top):
            print(f)
    return 0


def _add_convert(hsub):
    from lutzip.hdl.flows.synth import TARGETS
    p = hsub.add_parser("convert", help="convert the decoder core to VHDL / Verilog",
                        description="Write decoder_core.vhd (+ pck_myhdl) and/or decoder_core.v into a directory.")
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--hdl", choices=("vhdl", "verilog", "both"), default="both", help="which HDL (default both)")
    p.add_argument("--target", choices=sorted(TARGETS),
                   help="the core 'lutzip hdl synth --target' builds (its front, step and LUT1 RAM by default)")
    add_lanes_param(p)
    add_core_params(p, mirror=True)
    p.set_defaults(func=_cmd_convert)


# -------------------------------------------------------------------------------------------------- synth
def _cmd_synth(args) -> int:
    from pathlib import Path

    from lutzip.hdl.flows import synth as sy
    p = core_params(args)   # every parameter checked before anything runs
    seeds = args.seed or [1]
    # one synthesis; every seed places and routes that same netlist
    bd = Path(args.out) / args.target if args.out else None
    first = sy.synth(args.target, L=p.L, W=p.W, LUT3_DEPTH=p.LUT3_DEPTH, seed=seeds[0], freq_mhz=args.freq,
                     pnr=not args.no_pnr, build_dir=bd, front=p.FRONT, step=p.STEP, lut1_ram=p.LUT1_RAM,
                     more_seeds=seeds[1:] if not args.no_pnr else (), lanes=args.lanes, assign=args.assign,
                     states=p.STATES, jobs=args.jobs, **({"mirror": 1, "max_n": p.MAX_N} if p.MIRROR else {}))
    results = [first] + first.pop("more", [])
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=2))
    else:
        for r in results:
            print(sy.format_result(r))
        fms = [r["pnr"]["fmax_mhz"] for r in results if r.get("pnr") and r["pnr"]["fmax_mhz"]]
        if len(fms) > 1:
            print(f"Fmax over {len(fms)} seeds: min {min(fms):.1f}  max {max(fms):.1f}  "
                  f"mean {sum(fms) / len(fms):.1f} MHz")
        sw = results[0].get("sweep")
        if sw and sw["best_seed"] is not None:
            print("seeds    " + "  ".join(f"{x['seed']}: {x['fmax_mhz']}" for x in sw["seeds"])
                  + f"  (best: seed {sw['best_seed']}, {sw['best_fmax_mhz']:.2f} MHz)")
    return 0


def _add_synth(hsub):
    from lutzip.hdl.flows.synth import TARGETS
    p = hsub.add_parser("synth", help="synthesise + place and route the decoder core, print LUT/FF/BRAM use and "
                        "Fmax")
    p.add_argument("--target", choices=sorted(TARGETS), default="ice40-hx8k")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--seed", type=int_in(0, 2**31 - 1, "seed"), action="append",
                   help="nextpnr seed (repeat: one synthesis, the same netlist placed with each seed)")
    p.add_argument("--jobs", type=int_in(1, 16, "jobs"), default=1,
                   help="place and route this many seeds at a time (default 1); every seed is reported, with the "
                   "best ('sweep' in --json)")
    p.add_argument("--freq", type=float, help="clock constraint in MHz (default: the target's goal)")
    add_lanes_param(p)
    add_core_params(p, target_defaults=True, mirror=True)
    p.add_argument("--no-pnr", action="store_true", help="stop after yosys")
    p.add_argument("--out", help="keep the build files in this directory")
    p.set_defaults(func=_cmd_synth)


# -------------------------------------------------------------------------------------------------- bench
def add_bench_arguments(p):
    """The options of ``lutzip hdl bench`` (also ``python -m lutzip.hdl.flows.bench``)."""
    from lutzip.hdl.flows import SIMULATORS
    p.add_argument("--sim", choices=SIMULATORS, default="verilator", help="simulator (default verilator)")
    p.add_argument("-n", "--n", type=int_in(2, 10**8, "weights per stream"),
                   help="weights per stream (default 100000; with --lanes 1000000)")
    p.add_argument("--stripe", type=int_in(1, 65536, "stripe length"),
                   help="stripe length in words (default 4096; with --lanes N the host's cut for N lanes, "
                   "lutzip.hdl.flows.lanes_model.host_stripe_len: 2048 for 4 lanes, 1024 for 8)")
    p.add_argument("--stream", action="append", choices=("residual_int16", "zero_run_int16", "lut_int8",
                                                         "rows_int16", "rows_int8", "rows_bf16"),
                   help="only these streams (repeatable; rows_*: with --mirror)")
    p.add_argument("--front", choices=("window", "vector"), default="window", help="core front end (default window)")
    p.add_argument("--step", choices=("adder", "onehot"), default="adder",
                   help="the window front's decode step (default adder)")
    p.add_argument("--speeds", action="store_true", help="also the cycles/s of each simulator on one small vector")
    p.add_argument("--workdir", help="keep the run files here (default: a temporary directory)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    add_lanes_param(p, bench=True)
    p.add_argument("--model", help="with --lanes: the real model of the streams (default "
                   "lutzip.hdl.flows.lanes_bench.DEFAULT_MODEL)")
    p.add_argument("--mirror", action="store_true",
                   help="the decoder with MIRROR=1 on row streams of silero-vad's STFT basis (rows repeated to "
                   ">= -n weights; lutzip.hdl.flows.lanes_bench.row_streams)")


def cmd_bench_lanes(args) -> int:
    """``lutzip hdl bench --lanes N``: the N-lane decoder on real-model streams (:mod:`lutzip.hdl.flows.lanes_bench`)."""
    from pathlib import Path

    from lutzip.hdl.core.ports import CoreParams
    from lutzip.hdl.flows import lanes_bench as lb
    p = CoreParams.make(FRONT=args.front, STEP=args.step)
    n = args.n if args.n is not None else 1_000_000
    wd = Path(args.workdir) / "bench-lanes" if args.workdir else None
    mirror = getattr(args, "mirror", False)
    model = args.model or (lb.ROWS_MODEL if mirror else lb.DEFAULT_MODEL)
    from lutzip.hdl.flows.lanes_model import host_stripe_len
    args.stripe = args.stripe or host_stripe_len(args.lanes)
    res = lb.run(args.lanes, n, args.stripe, args.sim, args.stream, model, wd, assign=args.assign, FRONT=p.FRONT,
                 STEP=p.STEP, **({"mirror": True} if mirror else {}))
    ok = all(r["bit_exact"] for r in res.values())
    if args.json:
        print(json.dumps({"sim": args.sim, "lanes": args.lanes, "assign": args.assign, "model": model, "weights": n, "stripe": args.stripe,
                          "front": p.FRONT, "step": p.STEP, "streams": res}, indent=2))
        return 0 if ok else 1
    rows = f", MIRROR=1, row streams of {lb.ROWS_TENSOR}" if mirror else ""
    print(f"decoder_lanes, {args.lanes} lanes, assign {args.assign} ({p.FRONT} front{rows}), {args.sim}, {model}: >= {n} weights per stream, "
          f"stripes of {args.stripe} words per tensor, input always valid, output always ready:")
    for name, r in res.items():
        print(f"  {name:15s} {r['weights_per_cycle']:.5f} weights/cycle ({r['per_lane']:.5f} per lane; "
              f"{r['weights']} weights, {r['tensors']} tensors, {r['stripes']} stripes, {r['cycles']} cycles; "
              f"{'bit-exact' if r['bit_exact'] else 'MISMATCH: ' + str(r['mismatch'])}; {r['sim_seconds']:.1f} s)")
    return 0 if ok else 1


def cmd_bench(args) -> int:
    """Run the bench of parsed ``args``; 0 if every stream was bit-exact."""
    from pathlib import Path

    from lutzip.hdl.core.ports import CoreParams
    from lutzip.hdl.flows import bench
    if getattr(args, "lanes", None) is not None:
        return cmd_bench_lanes(args)
    p = CoreParams.make(FRONT=args.front, STEP=args.step)
    wd = Path(args.workdir) if args.workdir else None
    args.stripe = args.stripe or 4096
    if getattr(args, "mirror", False):
        return _cmd_bench_rows(args, p, wd)
    res = bench.run(args.n or 100_000, args.stripe, args.sim, args.stream, wd and wd / "bench", FRONT=p.FRONT, STEP=p.STEP)
    speeds = bench.sim_speeds(workdir=wd and wd / "speeds") if args.speeds else None
    ok = all(r["bit_exact"] for r in res.values())
    if args.json:
        doc = {"sim": args.sim, "weights": args.n or 100_000, "stripe": args.stripe, "front": p.FRONT, "step": p.STEP,
               "streams": res}
        if speeds is not None:
            doc["speeds"] = speeds
        print(json.dumps(doc, indent=2))
        return 0 if ok else 1
    step = f", {p.STEP} step" if p.FRONT == "window" else ""
    print(f"decoder core ({p.FRONT} front{step}), {args.sim}, {args.n or 100_000} weights per stream, stripes of "
          f"{args.stripe} words, input always valid, output always ready:")
    for name, r in res.items():
        print(f"  {name:15s} {r['weights_per_cycle']:.5f} weights/cycle  ({r['weights']} weights in {r['cycles']} "
              f"cycles, {r['idle_cycles']} idle cycles over {r['stripes']} stripes; {r['bits_per_weight']:.2f} "
              f"bits/weight, {r['symbols_per_weight']:.3f} symbols/weight; "
              f"{'bit-exact' if r['bit_exact'] else 'MISMATCH: ' + str(r['mismatch'])}; {r['sim_seconds']:.1f} s)")
    if speeds is not None:
        print("Simulation speed (same vector, build/conversion excluded):")
        for s, r in speeds.items():
            print(f"  {s:10s} {r['cycles_per_second']:12.0f} cycles/s  ({r['cycles']} cycles, {r['seconds']:.2f} s)"
                  f"{'' if r['bit_exact'] else '  MISMATCH'}"
                  f"{'  (%d simulator warnings)' % r['warnings'] if r['warnings'] else ''}")
    return 0 if ok else 1


def _cmd_bench_rows(args, p, wd) -> int:
    """``lutzip hdl bench --mirror``: the single core with MIRROR=1 on row streams (bench.run_rows)."""
    from lutzip.hdl.flows import bench
    from lutzip.hdl.flows import lanes_bench as lb
    n = args.n if args.n is not None else 1_000_000
    res = bench.run_rows(n, args.stripe, args.sim, args.stream, wd and wd / "bench-rows", FRONT=p.FRONT, STEP=p.STEP)
    ok = all(r["bit_exact"] for r in res.values())
    if args.json:
        print(json.dumps({"sim": args.sim, "mirror": 1, "model": lb.ROWS_MODEL, "tensor": lb.ROWS_TENSOR,
                          "weights": n, "stripe": args.stripe, "front": p.FRONT, "step": p.STEP, "streams": res},
                         indent=2))
        return 0 if ok else 1
    print(f"decoder core (MIRROR=1, {p.FRONT} front), {args.sim}, row streams of {lb.ROWS_MODEL} {lb.ROWS_TENSOR}: "
          f">= {n} weights per stream, stripes of {args.stripe} words, input always valid, output always ready:")
    for name, r in res.items():
        print(f"  {name:15s} {r['weights_per_cycle']:.5f} weights/cycle  ({r['weights']} weights in {r['cycles']} "
              f"cycles, {r['idle_cycles']} idle cycles over {r['stripes']} stripes; {r['bits_per_weight']:.2f} "
              f"bits/weight; {'bit-exact' if r['bit_exact'] else 'MISMATCH: ' + str(r['mismatch'])}; "
              f"{r['sim_seconds']:.1f} s)")
    return 0 if ok else 1


def _add_bench(hsub):
    p = hsub.add_parser("bench", help="weights per cycle of the decoder core per stream type (simulation)",
                        description="Throughput of the decoder core in a simulator: input always valid, output "
                        "always ready; every word checked against the reference model.")
    add_bench_arguments(p)
    p.set_defaults(func=cmd_bench)


def register(hsub):
    """Add the ``lutzip hdl`` sub-commands to ``hsub`` (the hdl group's sub-parsers, made by :mod:`lutzip.cli`)."""
    _add_convert(hsub)
    _add_synth(hsub)
    _add_bench(hsub)
