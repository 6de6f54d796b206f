"""Registry of the supported boards: part, clock, constraints, top-level wrapper and tool flow.

Each board has a MyHDL top ``lutzip.firmware.boards.<name>.board_<name>`` (thin wrapper around
``lutzip.firmware.uart.uart_top.uart_top``) and one constraints file in :data:`CONSTRAINTS_DIR`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path

from lutzip.errors import UnsupportedError

#: The boards' constraints folder: ``constraints/`` beside ``firmware/`` in a source checkout, the package data
#: ``lutzip/constraints`` beside ``lutzip/firmware`` in an installed wheel (setup.cfg ``package_dir``) -- the
#: same place relative to this file in both layouts.
CONSTRAINTS_DIR = Path(__file__).resolve().parents[2] / "constraints"


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    family: str            # "ice40" | "ecp5" | "xilinx"
    part: str
    clk_hz: int
    constraints: str       # file name in constraints/
    baud: int              # default UART baud rate
    device_args: tuple = ()  # nextpnr device/package options (open flows)
    vivado_tcl: str = ""   # Vivado batch script in constraints/ (Xilinx)
    notes: str = ""
    top_params: dict = field(default_factory=dict)  # extra uart_top parameters (RING_DEPTH, ...)
    core_params: dict = field(default_factory=dict)  # defaults for L / W / LUT3_DEPTH on this board
    yosys_opts: tuple = ()  # extra synth_<family> options for the board build (open flows)
    lanes_params: dict = field(default_factory=dict)  # LANES -> top parameters of the replay-lanes build

    @property
    def top_name(self) -> str:
        return f"board_{self.name}"

    @property
    def constraints_path(self) -> Path:
        return CONSTRAINTS_DIR / self.constraints

    def module(self):
        """The board's wrapper module (``lutzip.firmware.boards.<name>``)."""
        return importlib.import_module(f"lutzip.firmware.boards.{self.name}")

    def top(self):
        """The board's top-level ``@block`` (``board_<name>``)."""
        return getattr(self.module(), self.top_name)


BOARDS = {
    "icebreaker": Board("icebreaker", "iCEBreaker v1.0", "ice40", "iCE40UP5K-SG48", 12_000_000, "icebreaker.pcf",
                        1_000_000, ("--up5k", "--package", "sg48"),
                        notes="yosys + nextpnr-ice40 + icepack -> .bin (iceprog); smallest configuration by default "
                              "(the UP5K has 5280 LCs and 30 RAM4K)",
                        # the UP5K is full: 36-bit counters inside (95 min of cycles at 12 MHz) and ABC mapping with
                        # the flip-flops visible (-dff): 5223 of 5280 LCs packed, 5297-5307 without
                        # no replay buffer (REPLAY_WORDS 0): the LCs are gone, and the 4 SPRAMs would need their own
                        # 16-bit-wide buffer logic
                        # STATES=2 (two code tables, format version 5) fits too (2026-12-07 evening, seed 1: 5202 of 5280
                        # LCs, 24 of 30 RAM4K, 26.8 MHz at 12 MHz; docs/log/2026-12-boards.md)
                        core_params={"L": 6, "LUT3_DEPTH": 2048},
                        # MIRROR=0 (no row streams): the MIRROR=1 core is +1148 LUT4 / +819 FF / +7 RAM4K in yosys
                        # (2026-12-07 night), with 78 LCs left; row-stream files are refused (--no-rows)
                        top_params={"RING_DEPTH": 256, "COUNTER_BITS": 36, "STATES": 2},
                        yosys_opts=("-dff",)),
    "ulx3s": Board("ulx3s", "ULX3S 85F", "ecp5", "LFE5U-85F-6BG381C", 25_000_000, "ulx3s.lpf", 1_000_000,
                   ("--85k", "--package", "CABGA381"),
                   notes="yosys + nextpnr-ecp5 + ecppack -> .bit (openFPGALoader / fujprog)",
                   # a 32 K-word replay buffer (docs/PROTOCOL.md, section 6): 64 of the 208 EBRs (512 x 36 each),
                   # whole MiniLM 384 x 384 tensors per piece; the other EBRs stay free for the lanes' tables;
                   # STATES=2: the core decodes format version 5 (two code tables) too (docs/CORE.md)
                   # MIRROR=1: row streams (format version 6) too (docs/CORE.md section 7; MAX_N 512: rows of <= 513
                   # words, a 256-word row buffer)
                   top_params={"REPLAY_WORDS": 32768, "STATES": 2, "MIRROR": 1},
                   # replay lanes (--lanes N; 2026-12-07 late night, h16rf): every lane is a vector-front core of
                   # 32 DP16KD (TL) + LUT1 + LUT3 with STATES=1 (64 TL with STATES=2: 4 lanes and the streaming
                   # core would need 320), so the lanes build is STATES=1, MIRROR=0 (the N-lane decoder has no row
                   # stripes), LUT3_DEPTH 2048 (2 DP16KD a core, as the iCEBreaker), a 512-entry ring (1 DP16KD), lane
                   # buffers of 1024 rows (3/4 of a 4096-weight stripe's beats: full rate on the default stripes) and
                   # the replay buffer sized to what is left: 1024 words a lane (2 DP16KD each)
                   lanes_params={4: {"STATES": 1, "MIRROR": 0, "LUT3_DEPTH": 2048, "RING_DEPTH": 512,
                                     "LANES_ROWS": 1024, "REPLAY_WORDS": 4096},
                                 2: {"STATES": 1, "MIRROR": 0}}),     # 2 lanes: ~192 DP16KD (estimated, not built)
    "arty_a7": Board("arty_a7", "Arty A7-35", "xilinx", "XC7A35TICSG324-1L", 100_000_000, "arty_a7.xdc",
                     3_000_000, vivado_tcl="arty_a7.tcl",
                     notes="Vivado batch (constraints/arty_a7.tcl); here only yosys synth_xilinx as a check",
                     top_params={"STATES": 2, "MIRROR": 1}),
}


def get_board(name: str) -> Board:
    """The :class:`Board` called ``name``; an unknown name raises :class:`lutzip.errors.UnsupportedError`."""
    try:
        return BOARDS[name]
    except KeyError:
        raise UnsupportedError(f"unknown board {name!r}; choose one of {', '.join(sorted(BOARDS))}") from None


def check_baud(clk_hz: int, baud: int, max_error=0.02, min_clocks_per_bit=8) -> float:
    """Relative baud-rate error of an integer clock divider; raises if the UART could not work."""
    if not isinstance(baud, int) or baud <= 0:
        raise UnsupportedError(f"baud rate must be a positive integer, got {baud!r}")
    div = round(clk_hz / baud)
    if div < min_clocks_per_bit:
        raise UnsupportedError(f"baud {baud} is too fast for a {clk_hz / 1e6:g} MHz clock "
                               f"({clk_hz / baud:.1f} clocks per bit, need >= {min_clocks_per_bit})")
    err = abs(clk_hz / div - baud) / baud
    if err > max_error:
        raise UnsupportedError(f"baud {baud} at {clk_hz / 1e6:g} MHz: divider {div} is off by {err:.1%} "
                               f"(> {max_error:.0%})")
    return err
