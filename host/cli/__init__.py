"""The ``lutzip`` command line: one command tree, assembled here.

Each area adds its commands to the sub-parsers it is handed (``register(subparsers)``); the groups ``hdl`` and
``board`` are created here, once, so no module has to find or create a group. Argument types shared by the
commands live in :mod:`lutzip.cli.types`.
"""
from __future__ import annotations

import argparse
import os
import sys

from lutzip import __version__
from lutzip.errors import LutzError


def build_parser() -> argparse.ArgumentParser:
    from lutzip.cli import board, codec
    from lutzip.firmware.boards import build as board_build
    from lutzip.hdl.flows import cli as hdl_cli

    p = argparse.ArgumentParser(prog="lutzip", description="Lossless NN-weight compression with a "
                                "one-weight-per-clock hardware decoder.")
    p.add_argument("--version", action="version", version=f"lutzip {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    codec.register(sub)                                   # compress, decompress, info, bench
    hdl = sub.add_parser("hdl", help="decoder core HDL: convert, simulate, synthesise",
                         description="Decoder-core HDL tools.")
    hdl_cli.register(hdl.add_subparsers(dest="hdl_command", metavar="COMMAND", required=True))
    brd = sub.add_parser("board", help="FPGA boards: virtual board, build",
                         description="Start a virtual board (--sim) or build a board's bitstream (build).")
    board.register_board_options(brd)                     # lutzip board --sim
    board_build.register(brd.add_subparsers(dest="board_command", metavar="COMMAND"))  # lutzip board build
    board.register(sub)                                   # stream, demo
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LutzError as e:
        print(f"lutzip: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (``lutzip info X | head``): stop quietly; later writes go nowhere
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("lutzip: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"lutzip: error: {e}", file=sys.stderr)
        return 2
