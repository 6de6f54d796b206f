"""Codec sub-commands: compress, decompress, info, bench."""
from __future__ import annotations

import numpy as np

from . import codec, container as ct


def _compress(args):
    data = np.load(args.input)
    arrays = dict(data) if hasattr(data, "files") else {"weights": data}
    c = codec.compress(arrays)
    n = ct.write(args.output, c)
    raw = sum(t.raw_bytes for t in c.tensors)
    print(f"{args.output}: {n} bytes, ratio {n / max(raw, 1):.4f} of {raw} raw bytes")


def _decompress(args):
    arrays = codec.decompress(ct.read(args.input))
    np.savez(args.output, **arrays)
    print(f"{args.output}: {len(arrays)} tensors")


def register(sub):
    p = sub.add_parser("compress", help="code weights into a .lutz container")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=_compress)
    p = sub.add_parser("decompress", help="decode a .lutz container to .npz")
    p.add_argument("input")
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=_decompress)
