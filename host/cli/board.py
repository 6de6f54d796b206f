"""Board-in-the-loop sub-commands: ``lutzip board --sim``, ``lutzip stream``, ``lutzip demo``."""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from lutzip.board.verify import format_report, stream_container
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
                      core=getattr(args, "core", None), quiet=quiet, **opts)


def _start_sim(args, quiet=False):
    from lutzip.board import start_virtual_board
    return start_virtual_board(hdl=args.hdl, mode=args.mode, core=getattr(args, "core", None), quiet=quiet)


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
    c = ct.read(args.file)
    if args.sim and args.port:
        raise LutzError("give either --port or --sim, not both")
    with _open_board(args, quiet=args.json) as board:
        r = stream_container(board, c, args.verify, progress=not args.json)
    r["file"] = args.file
    print(json.dumps(r, indent=2) if args.json else format_report(r))
    return 0 if r["ok"] else 1


def demo_arrays():
    """The demo model: the bundled digits CNN quantised to int16 (a synthetic Laplace array if it is missing)."""
    from importlib import resources
    try:
        path = resources.files("lutzip") / "data" / "digits_cnn.npz"
        with resources.as_file(path) as p:
            data = dict(np.load(p))
        from lutzip.weights.quantize import quantize_int
        arrays, attrs = {}, {}
        for k, v in data.items():
            arrays[k], attrs[k] = quantize_int(v, "int16")
        return arrays, attrs, "digits_cnn (int16)"
    except (FileNotFoundError, OSError, ImportError):
        rng = np.random.default_rng(0)
        return {"laplace": np.rint(rng.laplace(0, 40, 200_000)).astype(np.int16)}, {}, "synthetic Laplace int16"


def _cmd_demo(args):
    import tempfile
    t0 = time.time()
    arrays, attrs, what = demo_arrays()
    c = codec.compress(arrays, attrs=attrs)
    raw = sum(t.raw_bytes for t in c.tensors)
    comp = sum(t.n_bytes for t in c.tensors)
    print(f"1. compressed {what}: {len(c.tensors)} tensors, {sum(t.numel for t in c.tensors)} weights, "
          f"{raw} -> {comp} bytes (ratio {comp / raw:.3f})")
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/demo.lutz"
        ct.write(path, c)
        back = codec.decompress(ct.read(path))
        same = all(np.array_equal(back[k].view(np.uint8), arrays[k].view(np.uint8)) for k in arrays)
        print(f"2. software round trip through {path.split('/')[-1]}: {'bit-exact' if same else 'MISMATCH'}")
    print(f"3. starting the virtual board ({args.hdl}, {args.mode} mode; the first run builds it) ...", flush=True)
    ok = same
    with _open_board(args, sim=True) as board:
        ident = board.identify()
        print(f"   board on {board.port}: core L={ident.L} W={ident.W}, {ident.clk_hz / 1e6:g} MHz")
        print("4. streaming the model, every decoded word checked against the software decoder:")
        r = stream_container(board, c, "full", progress=True)
        print("\n".join("   " + x for x in format_report(r).splitlines()))
        ok = ok and r["ok"]
        if args.throughput:
            rng = np.random.default_rng(1)
            big = {"throughput": np.rint(rng.laplace(0, 30, args.throughput)).astype(np.int16)}
            cb = codec.compress(big)
            print(f"5. throughput: {args.throughput} synthetic weights, CRC32 per stripe:")
            r2 = stream_container(board, cb, "crc", progress=True)
            print(f"   {r2['weights_per_s_wall'] / 1e6:.2f} M weights/s through the virtual board "
                  f"({r2['weights_per_busy_cycle']:.3f} weights per busy cycle, "
                  f"ratio {r2['ratio']:.3f}): {'PASS' if r2['ok'] else 'FAIL'}")
            ok = ok and r2["ok"]
    print(f"demo {'PASSED' if ok else 'FAILED'} in {time.time() - t0:.1f} s")
    return 0 if ok else 1


def _sim_args(p):
    p.add_argument("--hdl", choices=("verilog", "vhdl"), default="verilog",
                   help="simulator: Verilator on the Verilog (default) or GHDL on the VHDL")
    p.add_argument("--mode", choices=("fast", "pin"), default="fast",
                   help="fast: bytes straight into the protocol engine; pin: every UART bit simulated")
    p.add_argument("--core", choices=("real", "stub"), default=None, help=argparse_suppress())


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
    _sim_args(p)
    p.set_defaults(func=_cmd_stream)

    p = sub.add_parser("demo", help="end to end: compress the bundled model, decode it on the virtual board")
    _sim_args(p)
    p.add_argument("--baud", type=int, default=3_000_000, help=argparse_suppress())
    p.add_argument("--port", default=None, help=argparse_suppress())
    p.add_argument("--timeout", type=float, default=10.0, help=argparse_suppress())
    p.add_argument("--throughput", type=int, default=4_000_000, metavar="N",
                   help="also time N synthetic weights in CRC mode (0: skip)")
    p.set_defaults(func=_cmd_demo)
