"""Throughput bench of the N-lane decoder (``lutzip hdl bench --lanes N``) on real-model streams.

* :func:`real_streams` -- three streams from an installed real model (:data:`lutzip.weights.models.REAL_MODELS`),
  tensor by tensor in file order up to at least ``n`` weights, one table set per stream designed over all its
  words, each tensor coded into its own stripes (so every tensor's last stripe is short and small tensors are one
  stripe): ``residual_int16`` (int16 quantised), ``zero_run_int16`` (the same with the 85 % smallest magnitudes
  of each tensor set to 0), ``lut_int8`` (int8 quantised).
* :func:`run` -- words per cycle of each stream in a simulator (:mod:`lutzip.hdl.flows.lanes_sim`), input always
  valid on every lane and the output always ready, every beat checked against the reference model. The figure
  is ``(words - words of the last beat) / (cycle of the last beat - cycle of the first beat)``: pipeline fill
  excluded, stripe and tensor boundaries included (with one lane it is the single core's bench figure).
  Beside it ``model_cycles`` / ``model_per_lane`` and ``model_waits`` (the stripes the output waited on longest):
  :func:`lutzip.hdl.flows.lanes_model.rate_model` of the same stripes, where the cycles go.
* :func:`row_streams` -- ``mirror=True`` (``lutzip hdl bench --mirror``, with or without ``--lanes``): row streams
  (docs/FORMAT.md section 3.1) of a real model's transform basis (:data:`ROWS_MODEL`'s :data:`ROWS_TENSOR`, the
  STFT basis of silero-vad: 258 mirrored rows of 256 words), its rows repeated (or its first rows) to at least
  ``n`` words, coded by
  the reference encoder (``rows_int16``, ``rows_int8``: quantised per tensor; ``rows_bf16``), each beat checked
  against the software decoder's words; the decoder is built with ``MIRROR=1``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from lutzip.codec import bitstream as bs
from lutzip.hdl.flows import lanes_sim as LS
from lutzip.hdl.flows.lanes_model import rate_model, stripe_cost
from lutzip.hdl.flows.model import split_stripes, table_ops

STREAMS = ("residual_int16", "zero_run_int16", "lut_int8")
DEFAULT_MODEL = "ppocr-rec"
ROW_STREAMS = ("rows_int16", "rows_int8", "rows_bf16")
ROWS_MODEL = "silero-vad"
ROWS_TENSOR = "stft_conv.weight"
ROWS_MAX_N = 512   #: the MIRROR=1 decoder's row buffer on the bench (rows of up to 513 words)


def _tensors(model: str, n: int) -> list:
    from lutzip.weights.models import load_real_model
    out, total = [], 0
    for v in load_real_model(model).values():
        v = np.asarray(v)
        if v.dtype.kind != "f" or v.size < 1:
            continue
        out.append(v.astype(np.float32).reshape(-1))
        total += v.size
        if total >= n:
            break
    return out


def real_streams(n: int = 1_000_000, model: str = DEFAULT_MODEL, stripe_len: int = 4096, names=None) -> dict:
    """``{name: (stripes, table_ops, W, tensors)}`` of the real-model streams (module docstring)."""
    from lutzip.codec.encoder import best_tableset
    from lutzip.weights.quantize import quantize_int
    ts_f = _tensors(model, n)
    out = {}
    for name in STREAMS:
        if names and name not in names:
            continue
        words = []
        for v in ts_f:
            q = quantize_int(v, "int8" if name == "lut_int8" else "int16")[0].reshape(-1)
            if name == "zero_run_int16":
                q = q.copy()
                cut = np.quantile(np.abs(q.astype(np.int32)), 0.85) if q.size > 1 else 0
                q[np.abs(q.astype(np.int32)) <= cut] = 0
            words.append(q.view(np.uint8 if name == "lut_int8" else np.uint16))
        W = 8 if name == "lut_int8" else 16
        ts = best_tableset(np.concatenate(words), W)
        stripes = []
        for w in words:
            payload, sw = bs.encode_stripes(w, ts, stripe_len)
            stripes += split_stripes(payload, sw)
        out[name] = (stripes, table_ops(ts, 8), W, len(words))
    return out


def _stripe_out_words(stripe) -> int:
    """Words a good stripe decodes to: ``n`` of a plain stripe, ``R x N`` of a row stripe."""
    h = int(stripe[0])
    if h >> 16 == 0x4C5B:
        d = int(stripe[1])
        return ((d >> 16 & 15) + 1) * ((d & 0xFFFF) + 1)
    return (h & 0xFFFF) + 1


def row_streams(n: int = 1_000_000, stripe_len: int = 4096, names=None, model: str = ROWS_MODEL,
                tensor: str = ROWS_TENSOR) -> dict:
    """``{name: (stripes, table_ops, W, rows)}`` of the row streams (module docstring): ``rows`` are the single
    MIRROR=1 core's output rows ``(data, last, user)``, the software decoder's words with ``last`` on each stripe's
    last word."""
    import ml_dtypes

    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    from lutzip.errors import LutzError
    from lutzip.hdl.flows.model import table_ops as make_ops
    from lutzip.weights.models import load_real_model
    from lutzip.weights.quantize import quantize_int
    arrays = load_real_model(model)
    if tensor not in arrays:
        raise LutzError(f"{model} has no tensor {tensor!r}")
    a = np.asarray(arrays[tensor], np.float32)
    a = a.reshape(a.shape[0], -1)
    # at least n words: the tensor's first rows, or the tensor repeated
    a = a[:-(-n // a.shape[1])]
    reps = max(1, -(-n // a.size))
    out = {}
    for name in ROW_STREAMS:
        if names and name not in names:
            continue
        if name == "rows_bf16":
            q = a.astype(ml_dtypes.bfloat16)
        else:
            q = quantize_int(a, name[5:])[0].reshape(a.shape)
        q = np.tile(q, (reps, 1))
        # min_stripes=0: stripes of stripe_len words for every word width (lanes_model.host_compress_kw; the
        # encoder's default would give the int8 stream stripes of 2 x stripe_len words where 16 rows allow it)
        c = ct.from_bytes(ct.to_bytes(codec.compress({"t": q}, stripe_len=stripe_len, min_stripes=0)))
        t = c.tensor("t")
        if not t.rows:
            raise LutzError(f"{model} {tensor} ({name}): the encoder did not code it as a row stream")
        stripes = [np.asarray(x, np.uint32) for x in c.stripes(t)]
        ts = c.tables[t.table]
        if ts.n_states != 1:
            raise LutzError(f"{name}: the encoder chose two code tables (the bench builds STATES=1)")
        W = ts.word_bits
        words = np.ascontiguousarray(codec.decompress(c)["t"]).view(np.uint8 if W == 8 else np.uint16).ravel()
        last = np.zeros(len(words), np.int64)
        last[np.cumsum([_stripe_out_words(x) for x in stripes]) - 1] = 1
        rows = np.stack([words.astype(np.int64), last, np.zeros_like(last)], axis=1)
        out[name] = (stripes, make_ops(ts, 8, mirror=1), W, rows)
    return out


def run(lanes: int, n: int = 1_000_000, stripe_len: int = 4096, sim: str = "verilator", names=None, model=DEFAULT_MODEL,
        workdir=None, rows: int = 0, assign: str = "load", mirror: bool = False, **params) -> dict:
    """Bench each stream of :func:`real_streams` on the ``lanes``-lane decoder (``mirror``: the row streams of
    :func:`row_streams` on the decoder with ``MIRROR=1``; ``model`` then defaults to :data:`ROWS_MODEL`).

    ``assign``: the decoder's ``ASSIGN`` (``"rr"`` or ``"load"``). Returns ``{name: {"weights", "tensors", "stripes", "cycles", "weights_per_cycle", "per_lane", "sim_seconds",
    "bit_exact", "mismatch"}}`` (``per_lane``: ``weights_per_cycle / lanes``).
    """
    root = Path(workdir or tempfile.mkdtemp(prefix="lutzip-lanes-bench-"))
    res = {}
    if mirror:
        streams = {k: (st, ops, W, 1, r) for k, (st, ops, W, r) in
                   row_streams(n, stripe_len, names, model if model != DEFAULT_MODEL else ROWS_MODEL).items()}
        params = {"MIRROR": 1, "MAX_N": ROWS_MAX_N, **params}
    else:
        streams = {k: (*v, None) for k, v in real_streams(n, model, stripe_len, names).items()}
    for name, (stripes, ops, W, n_t, core_rows) in streams.items():
        vec = LS.LaneVectors.make(stripes, ops, lanes, rows, assign, core_rows=core_rows, **{**params, "W": W})
        stim = LS.make_lane_stimulus(vec, drain=8)
        out = LS.run(sim, stim, root / name, lanes, vec.params, rows, assign=assign)
        msg = LS.first_difference(out, vec)
        oc = out.out_cycles
        span = int(oc[-1] - oc[0]) if len(oc) > 1 else 0
        words = int(sum(int(b[1]) for b in out.beats))
        wpc = (words - int(out.beats[-1, 1])) / span if span else float("nan")
        # the model on each stripe's output words (a row stripe's R x N) and the weights ASSIGN="load" counts
        cost = [stripe_cost(s, int(mirror)) for s in stripes]
        m = rate_model([c[0] for c in cost], lanes, rows, assign, weights=[c[1] for c in cost])
        waits = sorted(m["wait"].items(), key=lambda x: -x[1])[:5]
        res[name] = {"weights": words, "tensors": n_t, "stripes": len(stripes), "stripe_len": stripe_len,
                     "cycles": span, "weights_per_cycle": wpc, "per_lane": wpc / lanes,
                     "model_cycles": m["cycles"], "model_per_lane": m["per_lane"],
                     "model_waits": [{"stripe": i, "words": cost[i][0], "cycles": c}
                                     for i, c in waits],
                     "sim_seconds": out.seconds, "bit_exact": msg is None, "mismatch": msg}
    return res
