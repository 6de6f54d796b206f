"""``lutzip bench --startup``: the start-up cost of the command line on a small file (issue 17: a compress or
decompress of a 600-weight file in under 0.3 s).

Each round runs, in fresh processes pinned to one CPU and in turn: ``python -c pass`` (the interpreter),
``python -c "import numpy"`` (the baseline: lutzip cannot start faster than numpy imports), ``lutzip compress``
of a 600-weight int16 file and ``lutzip decompress`` of the result. Wall time and the child's CPU time
(``os.wait4``'s user + system) are kept; the medians are printed, with each command's ratio to the baseline.
Every decompressed file is compared with the input word for word.

Bytecode: the children run with ``PYTHONDONTWRITEBYTECODE`` unset after a warm-up round, so a source tree
(an editable install) gets its ``__pycache__`` as an installed wheel has it from ``pip``; whether lutzip's
modules then have cached bytecode is printed (``bytecode cached``), since without it every start compiles
about 20 modules (about 0.1 s).
"""
from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

#: the issue's goal for a compress / decompress of a 600-weight file, seconds of wall time
GOAL_S = 0.3
N_WEIGHTS = 600


def _run(argv, cpu, env):
    """Run ``argv`` pinned to ``cpu``; returns (wall s, CPU s of the child). A failure is a RuntimeError."""
    def pin():
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, preexec_fn=pin)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace").strip()
    p.stderr.close()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} ... exited with {p.returncode}: {err.splitlines()[-1:] }")
    return wall, ru.ru_utime + ru.ru_stime


def _bytecode_cached() -> bool:
    """Whether the modules a compress imports have cached bytecode next to (or instead of) their sources."""
    for name in ("lutzip.cli.codec", "lutzip.codec.arrays", "lutzip.codec.container", "lutzip.codec.encoder"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            return False
        if spec.origin.endswith(".pyc"):
            continue
        try:
            if not os.path.exists(importlib.util.cache_from_source(spec.origin)):
                return False
        except (NotImplementedError, ValueError):
            return False
    return True


def startup(repeat: int = 9, cpu=None, weights: int = N_WEIGHTS) -> dict:
    """Medians over ``repeat`` rounds; returns ``{row: {"wall_s", "cpu_s", "x_numpy_wall", "x_numpy_cpu"}}`` plus
    ``"bytecode_cached"`` and ``"ok"`` (every decompressed file equal to the input)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONHASHSEED"] = "0"
    py = sys.executable
    lz = [py, "-m", "lutzip.cli"]
    with tempfile.TemporaryDirectory(prefix="lutzip-startup-") as d:
        src, out, back = (os.path.join(d, f) for f in ("w.npy", "w.lutz", "w.npz"))
        words = np.clip(np.rint(np.random.default_rng(0).laplace(0, 30, weights)), -32767, 32767).astype(np.int16)
        np.save(src, words)
        rows = {
            "python -c pass": [py, "-c", "pass"],
            "import numpy": [py, "-c", "import numpy"],
            "lutzip compress": lz + ["compress", src, "-o", out],
            "lutzip decompress": lz + ["decompress", out, "-o", back],
        }
        times = {k: [] for k in rows}
        ok = True
        for r in range(repeat + 1):                     # round 0 warms the caches (bytecode, the C kernels)
            for k, argv in rows.items():
                w, c = _run(argv, cpu, env)
                if r:
                    times[k].append((w, c))
            with np.load(back) as z:
                got = [z[n] for n in z.files]
            ok = ok and len(got) == 1 and got[0].dtype == words.dtype and np.array_equal(got[0], words)
    res = {}
    for k, v in times.items():
        res[k] = {"wall_s": statistics.median(w for w, _ in v), "cpu_s": statistics.median(c for _, c in v)}
    base = res["import numpy"]
    for k in res:
        res[k]["x_numpy_wall"] = res[k]["wall_s"] / base["wall_s"]
        res[k]["x_numpy_cpu"] = res[k]["cpu_s"] / base["cpu_s"]
    res["bytecode_cached"] = _bytecode_cached()
    res["ok"] = bool(ok)
    return res


def format_startup(res: dict, cpu=None, repeat: int = 9) -> str:
    lines = [f"start-up, {N_WEIGHTS}-weight int16 file, fresh processes, medians of {repeat}"
             + (f", CPU {cpu}" if cpu is not None else "") + f", bytecode cached: {res['bytecode_cached']}"
             + f", output checked: {'ok' if res['ok'] else 'MISMATCH'}",
             f"{'':20s} {'wall s':>8s} {'CPU s':>8s} {'x numpy (wall)':>15s} {'x numpy (CPU)':>14s}"]
    for k, v in res.items():
        if isinstance(v, dict):
            lines.append(f"{k:20s} {v['wall_s']:8.3f} {v['cpu_s']:8.3f} {v['x_numpy_wall']:15.2f} "
                         f"{v['x_numpy_cpu']:14.2f}")
    for t, what in (("wall_s", "wall"), ("cpu_s", "CPU")):
        worst = max(res["lutzip compress"][t], res["lutzip decompress"][t])
        lines.append(f"goal, compress and decompress under {GOAL_S} s ({what} time): "
                     f"{'met' if worst < GOAL_S else 'NOT met'} (slower of the two {worst:.3f} s)")
    lines.append("(on a loaded machine the wall time includes waiting for the CPU; the CPU time does not)")
    return "\n".join(lines)


def main(args) -> int:
    """``lutzip bench --startup``."""
    from lutzip.bench import pin_to_one_cpu
    cpu, allowed = pin_to_one_cpu(getattr(args, "cpu", None))    # the children inherit nothing; pinned apart
    if allowed:
        os.sched_setaffinity(0, allowed)
    repeat = max(5, int(getattr(args, "repeat", 9) or 9))
    res = startup(repeat=repeat, cpu=cpu)
    print(format_startup(res, cpu, repeat))
    if getattr(args, "json", None):
        with open(args.json, "w") as f:
            json.dump({"startup": res}, f, indent=1)
    return 0 if res["ok"] else 1
