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
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from lutzip.codec import bitstream as bs
from lutzip.hdl.flows import lanes_sim as LS
from lutzip.hdl.flows.lanes_model import rate_model
from lutzip.hdl.flows.model import split_stripes, table_ops

STREAMS = ("residual_int16", "zero_run_int16", "lut_int8")
DEFAULT_MODEL = "ppocr-rec"


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


def run(lanes: int, n: int = 1_000_000, stripe_len: int = 4096, sim: str = "verilator", names=None, model=DEFAULT_MODEL,
        workdir=None, rows: int = 0, assign: str = "load", **params) -> dict:
    """Bench each stream of :func:`real_streams` on the ``lanes``-lane decoder.

    ``assign``: the decoder's ``ASSIGN`` (``"rr"`` or ``"load"``). Returns ``{name: {"weights", "tensors", "stripes", "cycles", "weights_per_cycle", "per_lane", "sim_seconds",
    "bit_exact", "mismatch"}}`` (``per_lane``: ``weights_per_cycle / lanes``).
    """
    root = Path(workdir or tempfile.mkdtemp(prefix="lutzip-lanes-bench-"))
    res = {}
    for name, (stripes, ops, W, n_t) in real_streams(n, model, stripe_len, names).items():
        vec = LS.LaneVectors.make(stripes, ops, lanes, rows, assign, **{**params, "W": W})
        stim = LS.make_lane_stimulus(vec, drain=8)
        out = LS.run(sim, stim, root / name, lanes, vec.params, rows, assign=assign)
        msg = LS.first_difference(out, vec)
        oc = out.out_cycles
        span = int(oc[-1] - oc[0]) if len(oc) > 1 else 0
        words = int(sum(int(b[1]) for b in out.beats))
        wpc = (words - int(out.beats[-1, 1])) / span if span else float("nan")
        m = rate_model([(int(s[0]) & 0xFFFF) + 1 for s in stripes], lanes, rows, assign)
        waits = sorted(m["wait"].items(), key=lambda x: -x[1])[:5]
        res[name] = {"weights": words, "tensors": n_t, "stripes": len(stripes), "stripe_len": stripe_len,
                     "cycles": span, "weights_per_cycle": wpc, "per_lane": wpc / lanes,
                     "model_cycles": m["cycles"], "model_per_lane": m["per_lane"],
                     "model_waits": [{"stripe": i, "words": (int(stripes[i][0]) & 0xFFFF) + 1, "cycles": c}
                                     for i, c in waits],
                     "sim_seconds": out.seconds, "bit_exact": msg is None, "mismatch": msg}
    return res
