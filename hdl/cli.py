"""``lutzip hdl ...`` sub-commands.

``register(sub)`` adds (or joins) the ``hdl`` command group; this module's sub-commands are created in
:func:`register_hdl_commands`, one ``_add_*`` function each. Other areas hook in by appending a function
``(hdl_subparsers) -> None`` to ``HDL_COMMAND_HOOKS``, by an ``_add_*`` call there, or (like
``lutzip.hdl.synth``) with their own ``register`` in COMMAND_MODULES that joins the same group.
"""
from __future__ import annotations

import argparse


def _int_in(lo, hi, what):
    def parse(text):
        try:
            v = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} {text!r} is not an integer") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} {v} outside {lo}..{hi}")
        return v
    return parse


def add_core_params(p):
    """The core parameters (docs/CORE.md) as options ``--L --W --lut3-depth``."""
    p.add_argument("--L", type=_int_in(1, 12, "L"), default=8, help="LUT1 address bits (default 8)")
    p.add_argument("--W", type=_int_in(8, 16, "W"), default=16, choices=(8, 16), help="word width (default 16)")
    p.add_argument("--lut3-depth", type=_int_in(1, 4096, "LUT3 depth"), default=4096,
                   help="LUT3 entries (default 4096)")


def _cmd_convert(args):
    from .convert import convert
    hdls = ("vhdl", "verilog") if args.hdl == "both" else (args.hdl,)
    files = convert(args.out, hdls, L=args.L, W=args.W, LUT3_DEPTH=args.lut3_depth, LUT1_RAM=args.lut1_ram,
                    FRONT=args.front)
    for f in files:
        print(f)
    return 0


def _add_convert(hsub):
    p = hsub.add_parser("convert", help="convert the decoder core to VHDL / Verilog",
                        description="Write decoder_core.vhd (+ pck_myhdl) and/or decoder_core.v into a directory.")
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--hdl", choices=("vhdl", "verilog", "both"), default="both", help="which HDL (default both)")
    add_core_params(p)
    p.add_argument("--front", choices=("window", "vector"), default="window",
                   help="front end: window (LUT1 in the loop, small) or vector (fast, 32 TL block RAMs)")
    p.add_argument("--lut1-ram", choices=("block", "distributed"), default="block",
                   help="LUT1 read: registered (block RAM; iCE40) or asynchronous (LUT RAM; ECP5 / Xilinx)")
    p.set_defaults(func=_cmd_convert)


#: Extra ``hdl`` sub-commands registered by other modules: callables taking the hdl sub-parsers.
HDL_COMMAND_HOOKS = []


def register_hdl_commands(hsub):
    """Create this module's ``lutzip hdl`` sub-commands on ``hsub`` (the hdl group's sub-parsers)."""
    _add_convert(hsub)
    # --- place for more sub-commands: add an ``_add_*`` call here, or append a hook to HDL_COMMAND_HOOKS.
    # ``hdl synth`` comes from lutzip.hdl.synth (its own ``register`` joins this group via COMMAND_MODULES).
    for hook in HDL_COMMAND_HOOKS:
        hook(hsub)


def _hdl_group(sub):
    """The ``lutzip hdl`` parser and its sub-parsers, created or joined (another module may have made it)."""
    if "hdl" in sub.choices:
        p = sub.choices["hdl"]
    else:
        p = sub.add_parser("hdl", help="decoder core HDL: convert, simulate, synthesise",
                           description="Decoder-core HDL tools.")
    for a in p._actions:  # argparse keeps no public handle on the sub-parsers action
        if isinstance(a, argparse._SubParsersAction):
            return p, a
    hsub = p.add_subparsers(dest="hdl_command", metavar="COMMAND")
    hsub.required = True
    return p, hsub


def register(sub):
    """Add ``lutzip hdl convert`` (and the hooked sub-commands) for ``host/cli.py``'s COMMAND_MODULES."""
    register_hdl_commands(_hdl_group(sub)[1])
