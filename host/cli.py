"""The ``lutzip`` command line. Each area registers its own sub-commands (see ``COMMAND_MODULES``)."""
from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__
from .errors import LutzError

#: Modules with a ``register(subparsers)`` function; each sub-command sets ``func(args) -> int``.
COMMAND_MODULES = [
    "lutzip.cli_codec",
    "lutzip.hdl.cli",
    "lutzip.hdl.synth",
    "lutzip.cli_board",
]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lutzip", description="Lossless NN-weight compression with a "
                                "one-weight-per-clock hardware decoder.")
    p.add_argument("--version", action="version", version=f"lutzip {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LutzError as e:
        print(f"lutzip: error: {e}", file=sys.stderr)
        return 2
    except (OSError, KeyboardInterrupt) as e:
        print(f"lutzip: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
