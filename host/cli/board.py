"""Board-in-the-loop sub-commands: ``lutzip board --sim``, ``lutzip stream``, ``lutzip demo``."""
from __future__ import annotations

import json
import sys
import time

import numpy as np

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.link import protocol as link
from lutzip.errors import LutzError


# ------------------------------------------------------------------------------------------ verification
def expected_words(c: ct.Container, t: ct.TensorEntry) -> np.ndarray:
    """The tensor's decoded words from the software reference decoder (flat uint16)."""
    from lutzip.codec.bitstream import decode_stripes
    ct.check_stripe_crcs(c, t)
    return decode_stripes(c.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, c.tables[t.table], t.name)


def stream_container(board, c: ct.Container, verify="crc", progress=True, names=None) -> dict:
    """Stream every tensor of ``c`` through ``board``, check each stripe against the software reference.

    Returns a report dict (``ok``, per-tensor results, first mismatch, throughput and link figures).
    """
    from tqdm import tqdm
    ident = board.ident or board.identify()
    tensors = [t for t in c.tensors if t.numel and (names is None or t.name in names)]
    jobs = [(t.name, c.tables[t.table], list(c.stripes(t))) for t in tensors]
    n_stripes = sum(len(j[2]) for j in jobs)
    bar = tqdm(total=n_stripes, unit="stripe", desc="stream", disable=not progress or None, leave=False,
               file=sys.stderr)
    try:
        res = board.stream(jobs, words=(verify == "full"), progress=bar.update)
    finally:
        bar.close()
    by_tensor = {}
    for sr in res.stripes:
        by_tensor.setdefault(sr.tensor, []).append(sr)
    report = {"port": getattr(board, "port", None), "board": ident.as_dict(), "verify": verify, "tensors": [],
              "first_mismatch": None}
    raw = comp = 0
    for t in tensors:
        exp = expected_words(c, t)
        S = t.stripe_len
        status, why = "pass", ""
        got = by_tensor.get(t.name, [])
        if len(got) != len(t.stripe_words):
            status, why = "fail", f"{len(got)} stripe results for {len(t.stripe_words)} stripes"
        for sr in got:
            e = exp[sr.index * S:(sr.index + 1) * S]
            problem = None
            if sr.err:
                from lutzip.codec.bitstream import ERROR_TEXT
                problem = f"stripe {sr.index}: board decode error {sr.err} ({ERROR_TEXT.get(sr.err, '?')})"
            elif sr.n_words != len(e):
                problem = f"stripe {sr.index}: board decoded {sr.n_words} words, expected {len(e)}"
            elif verify == "full":
                w = sr.words
                if len(w) != len(e) or not np.array_equal(w.astype(np.uint16), e):
                    n = min(len(w), len(e))
                    diff = np.nonzero(w[:n].astype(np.uint16) != e[:n])[0]
                    i = int(diff[0]) if len(diff) else n
                    mm = {"tensor": t.name, "index": sr.index * S + i,
                          "expected": int(e[i]) if i < len(e) else None,
                          "got": int(w[i]) if i < len(w) else None}
                    problem = (f"word {mm['index']}: expected {mm['expected']}, got {mm['got']}")
                    if report["first_mismatch"] is None:
                        report["first_mismatch"] = mm
            if problem is None and sr.crc != link.words_crc(e, ident.W):
                problem = f"stripe {sr.index}: CRC32 {sr.crc:#010x}, expected {link.words_crc(e, ident.W):#010x}"
            if problem:
                if status == "pass":
                    why = problem
                status = "fail"
                if report["first_mismatch"] is None:
                    report["first_mismatch"] = {"tensor": t.name, "stripe": sr.index, "problem": problem}
        raw += t.raw_bytes
        comp += t.n_bytes
        report["tensors"].append({"name": t.name, "dtype": t.dtype, "numel": t.numel,
                                  "stripes": len(t.stripe_words), "bytes": t.n_bytes,
                                  "ratio": t.n_bytes / max(t.raw_bytes, 1), "status": status, "detail": why})
    cn = res.counters
    words = cn["words"]
    cyc_per_byte = 1.0 if not ident.baud else 10.0 * ident.clk_hz / ident.baud
    report.update({
        "ok": all(x["status"] == "pass" for x in report["tensors"]),
        "weights": int(sum(t.numel for t in tensors)),
        "raw_bytes": raw, "compressed_bytes": comp, "ratio": comp / max(raw, 1),
        "elapsed_s": res.elapsed,
        "weights_per_s_wall": words / res.elapsed if res.elapsed else 0.0,
        "wire_bytes": res.wire_bytes, "payload_bytes": res.payload_bytes,
        "protocol_efficiency": res.payload_bytes / max(res.wire_bytes, 1),
        "retransmissions": res.retransmissions, "attempts": res.attempts,
        "counters": cn,
        "weights_per_cycle": words / max(cn["cycles"], 1),
        "weights_per_busy_cycle": words / max(cn["busy"], 1),
        "weights_per_s_board": words / max(cn["cycles"], 1) * ident.clk_hz,
        "link_utilisation_board": min(1.0, cn["rx_bytes"] * cyc_per_byte / max(cn["cycles"], 1)),
    })
    if board.baud and not _is_pty(report["port"]):
        report["link_utilisation_wall"] = res.wire_bytes * 10.0 / (res.elapsed * board.baud)
    return report


def _is_pty(port):
    return bool(port) and str(port).startswith("/dev/pts/")


def format_report(r: dict) -> str:
    b = r["board"]
    lines = [f"board: protocol {b['version']}, core L={b['L']} W={b['W']} LUT3={b['lut3_depth']}, "
             f"clock {b['clk_hz'] / 1e6:g} MHz, " + (f"UART {b['baud']} baud" if b["baud"] else "byte-level link")]
    for t in r["tensors"]:
        lines.append(f"  {t['status'].upper():4} {t['name']:<28} {t['numel']:>10} weights  {t['stripes']:>5} stripes  "
                     f"ratio {t['ratio']:.3f}" + (f"  ({t['detail']})" if t["detail"] else ""))
    cn = r["counters"]
    lines += [
        f"compression: {r['compressed_bytes']} of {r['raw_bytes']} bytes, ratio {r['ratio']:.4f} "
        f"({8 * r['compressed_bytes'] / max(r['weights'], 1):.2f} bits/weight)",
        f"host: {r['weights']} weights in {r['elapsed_s']:.3f} s = {r['weights_per_s_wall'] / 1e6:.2f} M weights/s; "
        f"{r['wire_bytes']} bytes sent, protocol efficiency {100 * r['protocol_efficiency']:.1f} %, "
        f"{r['retransmissions']} frames resent, {r['attempts']} attempt(s)",
        f"board: {cn['words']} words in {cn['cycles']} cycles ({cn['busy']} busy, {cn['stall_in']} starved, "
        f"{cn['stall_out']} blocked) = {r['weights_per_cycle']:.3f} weights/cycle "
        f"({r['weights_per_busy_cycle']:.3f} while busy) = {r['weights_per_s_board'] / 1e6:.1f} M weights/s "
        f"at {b['clk_hz'] / 1e6:g} MHz",
        f"link: receive line busy {100 * r['link_utilisation_board']:.1f} % of the board's cycles"
        + (f", {100 * r['link_utilisation_wall']:.1f} % of the line rate (wall clock)"
           if "link_utilisation_wall" in r else "")
        + f"; link errors {cn['link_errors']}, decode errors {cn['decode_errors']}",
    ]
    if r["first_mismatch"]:
        lines.append(f"FIRST MISMATCH: {r['first_mismatch']}")
    lines.append("RESULT: " + ("PASS" if r["ok"] else "FAIL"))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ commands
def _open_board(args, vb=None):
    from lutzip.board.driver import Board
    port = vb.port if vb else args.port
    if not port:
        raise LutzError("give --port PORT (e.g. /dev/ttyUSB0 or the port `lutzip board --sim` printed) or --sim")
    timeout = args.timeout
    if vb is not None and vb.hdl == "vhdl":
        timeout = max(timeout, 60.0)     # GHDL simulates some 10^4..10^5 cycles per second
    return Board(port, baud=args.baud, timeout=timeout)


def _start_sim(args, quiet=False):
    from lutzip.vboard.verilator import VirtualBoard
    return VirtualBoard(hdl=args.hdl, mode=args.mode, core=getattr(args, "core", None), quiet=quiet).start()


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
    vb = _start_sim(args, quiet=args.json) if args.sim else None
    try:
        with _open_board(args, vb) as board:
            r = stream_container(board, c, args.verify, progress=not args.json)
    finally:
        if vb:
            vb.stop()
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
    vb = _start_sim(args, quiet=False)
    try:
        with _open_board(args, vb) as board:
            ident = board.identify()
            print(f"   board on {vb.port}: core L={ident.L} W={ident.W}, {ident.clk_hz / 1e6:g} MHz")
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
    finally:
        vb.stop()
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
    p.add_argument("--sim", action="store_true", help="start a virtual board for this run instead of --port")
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
