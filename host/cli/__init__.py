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


#: the commands of :mod:`lutzip.cli.codec`: a parser for one of them needs none of the hdl and board modules
CODEC_COMMANDS = frozenset({"compress", "decompress", "info", "bench"})


#: commands whose output is converted HDL (or built from it): run under ``PYTHONHASHSEED=0``, because MyHDL
#: writes sensitivity lists and reset assignments in set order, so the text (and the netlist yosys makes from
#: it) would otherwise change from one run to the next (docs/log/2026-12-house.md, 2026-12-03 evening)
HDL_COMMANDS = (("hdl", "convert"), ("hdl", "synth"), ("board", "build"))


def _reproducible(argv) -> None:
    """Re-execute ``lutzip`` under ``PYTHONHASHSEED=0`` for an :data:`HDL_COMMANDS` command typed at the
    console (``argv`` None) in a process with another hash seed; returns for everything else."""
    if argv is not None or os.environ.get("PYTHONHASHSEED") == "0":
        return
    words = tuple(a for a in sys.argv[1:3])
    if words not in HDL_COMMANDS:
        return
    env = dict(os.environ, PYTHONHASHSEED="0")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "lutzip.cli", *sys.argv[1:]], env)


def _command(argv):
    """The command word of ``argv`` (its first item, when that is not an option), else ``None``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    return argv[0] if argv and not str(argv[0]).startswith("-") else None


def build_parser(command=None) -> argparse.ArgumentParser:
    """The whole command tree; with ``command`` one of :data:`CODEC_COMMANDS`, only the codec commands (the
    hdl and board modules are not imported: the start-up of ``lutzip compress`` / ``decompress``)."""
    from lutzip.cli import codec

    p = argparse.ArgumentParser(prog="lutzip", description="Lossless NN-weight compression with a "
                                "one-weight-per-clock hardware decoder.")
    p.add_argument("--version", action="version", version=f"lutzip {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    codec.register(sub)                                   # compress, decompress, info, bench
    if command in CODEC_COMMANDS:
        return p
    from lutzip.cli import board
    from lutzip.firmware.boards import build as board_build
    from lutzip.hdl.flows import cli as hdl_cli
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
    _reproducible(argv)
    args = build_parser(_command(argv)).parse_args(argv)
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
