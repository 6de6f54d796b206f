"""Board-in-the-loop sub-commands: ``lutzip board --sim``, ``lutzip stream``, ``lutzip demo``."""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import LutzError


# ------------------------------------------------------------------------------------------ commands
def _open_board(args, sim=None, quiet=False):
    """The board the arguments name, through the chooser (:func:`lutzip.board.open_board`)."""
    from lutzip.board import open_board
    sim = args.sim if sim is None else sim
    opts = {}
    if getattr(args, "overlay", None):
        opts["overlay"] = args.overlay
    return open_board(None if sim else args.port, transport="pynq" if getattr(args, "pynq", False) else "uart",
                      sim=sim, baud=args.baud, timeout=args.timeout, hdl=args.hdl, mode=args.mode,
                      core=getattr(args, "core", None), quiet=quiet, sim_params=_sim_params(args), **opts)


def _start_sim(args, quiet=False):
    from lutzip.board import start_virtual_board
    return start_virtual_board(hdl=args.hdl, mode=args.mode, core=getattr(args, "core", None), quiet=quiet,
                               params=_sim_params(args))


def _sim_params(args):
    """Virtual board parameters the options ask for over its defaults (``--sim-states``, ``--sim-mirror``), or
    None."""
    out = {}
    states = getattr(args, "sim_states", None)
    if states:
        out["STATES"] = states
    mirror = getattr(args, "sim_mirror", None)
    if mirror is not None:
        out["MIRROR"] = mirror
    lanes = getattr(args, "sim_lanes", None)
    if lanes:
        out["LANES"] = lanes
    return out or None


def _cmd_board(args):
    if not args.sim:
        print("lutzip board: give --sim to start a virtual board (or a sub-command, see --help)", file=sys.stderr)
        return 2
    vb = _start_sim(args)
    try:
        print(vb.port, flush=True)
        print(f"lutzip: virtual board ({args.hdl}, {args.mode} mode) on {vb.port}; Ctrl-C to stop",
              file=sys.stderr, flush=True)
        while vb.alive():
            time.sleep(0.2)
        print("lutzip: the simulator stopped", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        vb.stop()


def _cmd_stream(args):
    from lutzip.board.verify import format_report, stream_container      # on use (start-up of the other commands)
    c = ct.read(args.file)
    # two code tables (format version 5) and row streams (format version 6) are checked against the board's IDENT
    # (STATES, MIRROR) before anything is sent
    if args.sim and args.port:
        raise LutzError("give either --port or --sim, not both")
    replay = getattr(args, "replay", None)
    if replay is not None and replay < 1:
        raise LutzError(f"--replay needs K >= 1 passes, not {replay}")
    with _open_board(args, quiet=args.json) as board:
        if replay is not None:
            _check_replay(board)
        r = stream_container(board, c, args.verify, progress=not args.json)
        if replay is not None:
            from lutzip.board.verify import replay_container
            r["replay"] = replay_container(board, c, replay)
    r["file"] = args.file
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(format_report(r))
        if "replay" in r:
            from lutzip.board.verify import format_replay
            print(format_replay(r["replay"], r))
    return 0 if r["ok"] and r.get("replay", {"ok": True})["ok"] else 1


def _check_replay(board):
    """A one-line error before any streaming if the board cannot replay (no buffer, or not a UART board)."""
    from lutzip.board.base import BoardError
    info = board.info or board.identify()
    if not getattr(info, "replay_words", 0) or not hasattr(board, "replay_piece"):
        raise BoardError(f"the board ({info.kind}) has no replay buffer: --replay needs a board built with "
                         "REPLAY_WORDS > 0 (docs/PROTOCOL.md, section 6)")


#: The demo's model variants: (label, quantize, bf16, prune fraction).
DEMO_VARIANTS = (("int16, 75 % pruned", "int16", False, 0.75), ("bf16", None, True, 0.0))


def demo_models(model="auto"):
    """The demo's float32 weights: ``(label, arrays)``.

    Parameters
    ----------
    model : {"auto", "minilm", "digits"}
        ``minilm``: encoder layer 0 of all-MiniLM-L6-v2 (1.77 M weights, 16 tensors; the whole model's rates
        are in README); ``digits``: the bundled digits CNN (18 k weights); ``auto``: MiniLM if it is
        installed (``lutzip.bench.minilm_path``), else the digits CNN.

    Returns
    -------
    (str, dict)
        A label and the arrays by name.
    """
    from lutzip import bench
    if model == "auto":
        model = "minilm" if bench.minilm_path() else "digits"
    label, arrays = bench.load_model(model)
    if model == "minilm":
        arrays = {k: v for k, v in arrays.items() if ".layer.0." in k}
        label += ", encoder layer 0"
    return label, arrays


def _demo_row(label, prep, attrs):
    """Sizes of lutzip and the general-purpose compressors (lutzip.bench.measure) and the container to stream."""
    from lutzip import bench
    m = bench.measure(prep, attrs)           # also checks lutzip's software round trip, bit for bit
    c = ct.from_bytes(ct.to_bytes(codec.compress(prep, attrs=attrs)))
    return {"label": label, "sizes": m, "container": c}


def _cmd_demo(args):
    from lutzip.board.verify import stream_container      # on use: lutzip compress starts without it
    t0 = time.time()
    what, arrays = demo_models(args.model)
    from lutzip.weights.quantize import prepare
    print(f"lutzip demo: {what} ({len(arrays)} tensors, {sum(a.size for a in arrays.values()) / 1e6:.2f} M "
          f"weights) as {' and '.join(v[0] for v in DEMO_VARIANTS)}; compressing, and xz -9e / zstd -19 on the "
          f"same bytes ...", flush=True)
    rows = []
    for label, quantize, bf16, prune in DEMO_VARIANTS:
        prep, attrs = prepare(arrays, quantize=quantize, bf16=bf16, prune_fraction=prune, skip_unsupported=True)
        rows.append(_demo_row(label, prep, attrs))
    print(f"decoding on the virtual board ({args.hdl}, {args.mode} mode; the first run builds it), every word "
          f"checked against the software decoder ...", flush=True)
    ok = True
    with _open_board(args, sim=True) as board:
        for row in rows:                     # every decoded word comes back and is compared
            row["full"] = stream_container(board, row["container"], "full", progress=True)
            row["crc"] = stream_container(board, row["container"], "crc", progress=True)
            ok = ok and row["full"]["ok"] and row["crc"]["ok"]
        synth = None
        if args.throughput:
            rng = np.random.default_rng(1)
            big = codec.compress({"throughput": np.rint(rng.laplace(0, 30, args.throughput)).astype(np.int16)})
            synth = stream_container(board, big, "crc", progress=True)
            ok = ok and synth["ok"]
        info = board.info
    print("\n".join(demo_summary(rows, info)))
    if synth:
        print(f"throughput: {args.throughput} synthetic int16 weights, CRC per stripe: "
              f"{synth['weights_per_s_wall'] / 1e6:.2f} M weights/s through the virtual board "
              f"({synth['weights_per_busy_cycle']:.3f} weights per busy cycle): {'PASS' if synth['ok'] else 'FAIL'}")
    print(f"demo {'PASSED' if ok else 'FAILED'} in {time.time() - t0:.1f} s")
    return 0 if ok else 1


def demo_summary(rows, info) -> list:
    """The demo's screen: compression against xz and zstd, the board check, the core's and the link's rates.

    Parameters
    ----------
    rows : list of dict
        Per model variant: ``label``, ``sizes`` (:func:`lutzip.bench.measure`), ``full`` and ``crc`` (reports
        of :func:`lutzip.board.verify.stream_container` in each verify mode).
    info : BoardInfo
        The board's parameters (clock; ``baud`` 0 means one byte per clock each way).
    """
    cols = ("lutzip", "xz -9e", "zstd -19")
    w = max(len(r["label"]) for r in rows) + 2
    out = [f"{'model':<{w}}{'raw MB':>7} " + " ".join(f"{c:>9}" for c in cols) + f"  {'vs xz -9e':>14}   board"]
    for row in rows:
        m, r = row["sizes"], row["full"]
        check = (f"PASS, {r['counters']['words']} words bit-exact" if r["ok"] and row["crc"]["ok"] else
                 "FAIL " + (r["first_mismatch"] and str(r["first_mismatch"]) or str(row["crc"]["first_mismatch"])))
        out.append(f"{row['label']:<{w}}{m['raw'] / 1e6:7.2f} "
                   + " ".join(f"{100 * (1 - m[c] / m['raw']):8.2f}%" for c in cols)
                   + f"  {100 * (1 - m['lutzip'] / m['xz -9e']):5.1f} % smaller   {check}")
    out.append("compression rate = 1 - compressed/original (whole .lutz files; xz -9e = lzma 9|EXTREME, zstd -19, "
               "on the same bytes)")
    cpb = 10.0 * info.clk_hz / info.baud if getattr(info, "baud", 0) else 1.0

    def line(cn):           # weights per cycle the busier direction of the line allows
        return min(1.0, cn["words"] / max(max(cn.get("rx_bytes", 0), cn.get("tx_bytes", 0)) * cpb, 1))

    free = [row for row in rows if line(row["crc"]["counters"]) >= 1.0]
    if free:                # the core's own rate: a run the link does not limit
        b, cn = free[0]["crc"], free[0]["crc"]["counters"]
        out.append(f"core: {b['weights_per_busy_cycle']:.3f} weights per busy cycle ({free[0]['label']}, CRC mode, "
                   f"{cn['starved']} of {cn['busy']} busy cycles starved) = "
                   f"{b['weights_per_busy_cycle'] * info.clk_hz / 1e6:.0f} M weights/s at {info.clk_hz / 1e6:g} MHz")
    else:
        out.append("core: every run here is limited by the link (see below)")
    out.append("link: weights per board cycle, and what the line allows ("
               + (f"UART {info.baud} baud" if cpb != 1.0 else "1 byte per clock each way") + "):")
    for row in rows:
        parts = []
        for key, how in (("full", "every word back"), ("crc", "CRC per stripe")):
            parts.append(f"{how} {row[key]['weights_per_cycle']:.3f} (line {line(row[key]['counters']):.3f})")
        out.append(f"  {row['label']:<{w}}" + "   ".join(parts))
    out.append("host wall clock (the simulator's speed): " + ", ".join(
        f"{row['label']} {row['full']['weights_per_s_wall'] / 1e6:.2f} / {row['crc']['weights_per_s_wall'] / 1e6:.2f}"
        for row in rows) + " M weights/s (every word / CRC)")
    return out


def _sim_args(p):
    p.add_argument("--hdl", choices=("verilog", "vhdl"), default="verilog",
                   help="simulator: Verilator on the Verilog (default) or GHDL on the VHDL")
    p.add_argument("--mode", choices=("fast", "pin"), default="fast",
                   help="fast: bytes straight into the protocol engine; pin: every UART bit simulated")
    p.add_argument("--core", choices=("real", "stub"), default=None, help=argparse_suppress())
    p.add_argument("--sim-states", type=int, choices=(1, 2), default=None, metavar="N",
                   help="virtual board: its core's code tables (STATES; default: 2 in fast mode, decoding "
                        "--states 2 files, 1 in pin mode, a board of one code table)")
    p.add_argument("--sim-mirror", type=int, choices=(0, 1), default=None, metavar="M",
                   help="virtual board: its core's row stripes (MIRROR; default: 1 in fast mode, decoding row "
                        "streams, format version 6; 0 in pin mode, a board that refuses them)")
    p.add_argument("--sim-lanes", type=int, choices=(1, 2, 4, 8), default=None, metavar="N",
                   help="virtual board (fast mode): the replay unit's lanes (--replay decodes through the N-lane "
                        "decoder; default 1)")


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


def register_board_options(p):
    """``lutzip board --sim``: options of the board group itself (its sub-commands come from the boards)."""
    p.add_argument("--sim", action="store_true", help="start a virtual board and print its serial port")
    _sim_args(p)
    p.set_defaults(func=_cmd_board)


def register(sub):
    """Add ``lutzip stream`` and ``lutzip demo`` to the top-level sub-parsers."""
    p = sub.add_parser("stream", help="decode a .lutz file on a board (or the virtual board) and verify it")
    p.add_argument("file")
    p.add_argument("--port", help="serial port of the board (/dev/ttyUSB0, /dev/pts/N, ...)")
    p.add_argument("--baud", type=int, default=3_000_000)
    p.add_argument("--verify", choices=("crc", "full"), default="crc",
                   help="crc: a CRC32 per stripe (default); full: every decoded word comes back")
    p.add_argument("--json", action="store_true")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds without progress before giving up")
    p.add_argument("--sim", action="store_true", help="start a virtual board for this run instead of --port "
                   "(with --pynq: the simulated PYNQ device)")
    p.add_argument("--pynq", action="store_true", help="a Zynq board through AXI DMA (PYNQ) instead of a UART")
    p.add_argument("--overlay", metavar="BIT", help="with --pynq: the overlay's .bit file (its .hwh beside it)")
    p.add_argument("--replay", type=int, metavar="K", default=None,
                   help="also decode each tensor K times back to back from the board's replay buffer at the core "
                   "clock (the silicon's rate, independent of the link; JSON key 'replay')")
    _sim_args(p)
    p.set_defaults(func=_cmd_stream)

    p = sub.add_parser("demo", help="end to end: compress the bundled model, decode it on the virtual board")
    _sim_args(p)
    p.add_argument("--baud", type=int, default=3_000_000, help=argparse_suppress())
    p.add_argument("--port", default=None, help=argparse_suppress())
    p.add_argument("--timeout", type=float, default=10.0, help=argparse_suppress())
    p.add_argument("--model", choices=("auto", "minilm", "digits"), default="auto",
                   help="minilm: all-MiniLM-L6-v2's encoder layer 0 (if installed; auto picks it), digits: the "
                   "bundled digits CNN")
    p.add_argument("--throughput", type=int, default=0, metavar="N",
                   help="also time N synthetic int16 weights in CRC mode (e.g. 4000000)")
    p.set_defaults(func=_cmd_demo)
