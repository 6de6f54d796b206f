"""Argument types shared by every ``lutzip`` sub-command (one definition, so the CLI parses alike everywhere)."""
from __future__ import annotations

import argparse


def int_in(lo: int, hi: int, what: str):
    """An ``argparse`` type: an integer in ``lo..hi`` (decimal, or ``0x``/``0o``/``0b`` prefixed)."""
    def parse(text):
        try:
            v = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} {text!r} is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} {v} outside {lo}..{hi}")
        return v
    return parse


def fraction(text):
    """An ``argparse`` type: a pruning fraction in ``[0, 1)``."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= v < 1.0:
        raise argparse.ArgumentTypeError(f"prune fraction {v} outside [0, 1)")
    return v


def fractions(text):
    """An ``argparse`` type: comma-separated pruning fractions."""
    return [fraction(t) for t in text.split(",") if t.strip()]
