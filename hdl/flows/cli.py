"""``lutzip hdl ...`` sub-commands: :func:`register` adds them to the hdl group that :mod:`lutzip.cli` made."""
from __future__ import annotations

from lutzip.cli.types import int_in


def add_core_params(p):
    """The core parameters (docs/CORE.md) as options ``--L --W --lut3-depth``."""
    p.add_argument("--L", type=int_in(1, 12, "L"), default=8, help="LUT1 address bits (default 8)")
    p.add_argument("--W", type=int_in(8, 16, "W"), default=16, choices=(8, 16), help="word width (default 16)")
    p.add_argument("--lut3-depth", type=int_in(1, 4096, "LUT3 depth"), default=4096,
                   help="LUT3 entries (default 4096)")


def _cmd_convert(args):
    from lutzip.hdl.flows.convert import convert
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


def register(hsub):
    """Add the ``lutzip hdl`` sub-commands to ``hsub`` (the hdl group's sub-parsers, made by :mod:`lutzip.cli`)."""
    from lutzip.hdl.flows import synth
    _add_convert(hsub)
    synth.register(hsub)
