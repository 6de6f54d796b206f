"""Is the one-lane decoder unchanged? Convert ``decoder_lanes`` with ``LANES=1`` from two source trees and compare.

A change to the N-lane decoder's output side for two or more lanes must leave ``LANES=1`` text-identical. Each
conversion runs in a fresh interpreter under ``PYTHONHASHSEED=0`` (MyHDL's set order otherwise moves reset lines
and sensitivity lists) with the ``lutzip`` packages mapped onto the tree given (``<root>/host``, ``<root>/hdl``),
whatever tree the running Python has installed; the texts are compared with the ``File`` / ``Date`` header
lines dropped.

Use::

    python -m lutzip.hdl.flows.lanes_identity /tmp/main_tree /work/wt/me      # prints one line per case; exit 1
                                                                               # when any differs
    git -C /work/main archive main | tar -x -C /tmp/main_tree                  # a tree of a revision
"""
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: case name -> convert_lanes keywords (LANES=1)
CASES = {
    "window": {"FRONT": "window"},
    "vector": {"FRONT": "vector"},
    "window_rr": {"FRONT": "window", "assign": "rr"},
}

_CHILD = r'''
import importlib.machinery, importlib.util, sys, warnings
ROOT, PARAMS, HDL, OUT = sys.argv[1], eval(sys.argv[2]), sys.argv[3], sys.argv[4]
MAP = {"lutzip": ROOT + "/host", "lutzip.hdl": ROOT + "/hdl"}

class Finder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAP:
            return importlib.util.spec_from_file_location(fullname, MAP[fullname] + "/__init__.py",
                                                          submodule_search_locations=[MAP[fullname]])
        parent, _, child = fullname.rpartition(".")
        if parent in MAP:
            return importlib.machinery.PathFinder.find_spec(fullname, [MAP[parent]])
        return None

sys.meta_path.insert(0, Finder)
from lutzip.hdl.flows.convert import convert_lanes
assign = PARAMS.pop("assign", "load")
print(convert_lanes(OUT, HDL, lanes=1, assign=assign, **PARAMS))
'''

_HEADER = re.compile(r"^\s*(//|--)\s*(File|Date)\s*:")


def convert_tree(root, out_dir, hdl):
    """Convert every case of :data:`CASES` from the tree ``root`` into ``out_dir/<case>_<hdl>/``; returns the
    paths of the main HDL files by case."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = {}
    for name, params in CASES.items():
        d = Path(out_dir) / f"{name}_{hdl}"
        d.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([sys.executable, "-c", _CHILD, str(Path(root).resolve()), repr(params), hdl, str(d)],
                           env=env, cwd=str(d), capture_output=True, text=True, timeout=900)
        if r.returncode:
            raise RuntimeError(f"converting {name} ({hdl}) from {root} failed: {r.stderr.strip()[-2000:]}")
        out[name] = Path(r.stdout.strip().splitlines()[-1])
    return out


def body(path):
    """The HDL text without its File / Date header lines."""
    return "\n".join(ln for ln in Path(path).read_text().splitlines() if not _HEADER.match(ln))


def compare(root_a, root_b, hdls=("verilog", "vhdl")):
    """``{case_hdl: (md5 of A's body, md5 of B's body, identical)}``."""
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for hdl in hdls:
            fa = convert_tree(root_a, Path(tmp) / "a", hdl)
            fb = convert_tree(root_b, Path(tmp) / "b", hdl)
            for name in CASES:
                ba, bb = body(fa[name]), body(fb[name])
                res[f"{name}_{hdl}"] = (hashlib.md5(ba.encode()).hexdigest(), hashlib.md5(bb.encode()).hexdigest(),
                                        ba == bb)
    return res


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: python -m lutzip.hdl.flows.lanes_identity TREE_A TREE_B", file=sys.stderr)
        sys.exit(2)
    r = compare(sys.argv[1], sys.argv[2])
    for k, (a, b, same) in r.items():
        print(f"{k}: {'identical' if same else 'DIFFERS'} ({a[:8]} / {b[:8]})")
    sys.exit(0 if all(v[2] for v in r.values()) else 1)
