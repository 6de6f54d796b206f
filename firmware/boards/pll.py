"""PLL divider settings computed in Python, as the open tools ``icepll`` (iCE40 SB_PLL40) and ``ecppll`` (ECP5
EHXPLLL) compute them: an exhaustive search over the dividers within the parts' PFD and VCO ranges, the
smallest output error first.

iCE40 (SIMPLE feedback): ``f_pfd = f_in / (DIVR + 1)`` in 10 .. 133 MHz, ``f_vco = f_pfd * (DIVF + 1)`` in
533 .. 1066 MHz, ``f_out = f_vco / 2**DIVQ`` (DIVR 0..15, DIVF 0..127, DIVQ 1..6); FILTER_RANGE from
``f_pfd``. ECP5 (feedback from CLKOP): ``f_pfd = f_in / CLKI_DIV`` in 3.125 .. 400 MHz,
``f_out = f_pfd * CLKFB_DIV``, ``f_vco = f_out * CLKOP_DIV`` in 400 .. 800 MHz (CLKI_DIV 1..128, CLKFB_DIV
1..80, CLKOP_DIV 1..128); among equal errors the VCO nearest 600 MHz; ``CLKOP_CPHASE = CLKOP_DIV - 1``.
"""
from __future__ import annotations

from dataclasses import dataclass

from lutzip.errors import UnsupportedError


@dataclass(frozen=True)
class Ice40Pll:
    """SB_PLL40 settings (SIMPLE feedback) and the frequencies they give (Hz)."""
    DIVR: int
    DIVF: int
    DIVQ: int
    FILTER_RANGE: int
    f_in: float
    f_pfd: float
    f_vco: float
    f_out: float


@dataclass(frozen=True)
class Ecp5Pll:
    """EHXPLLL settings (CLKOP feedback) and the frequencies they give (Hz)."""
    CLKI_DIV: int
    CLKFB_DIV: int
    CLKOP_DIV: int
    CLKOP_CPHASE: int
    f_in: float
    f_pfd: float
    f_vco: float
    f_out: float


def _filter_range(f_pfd_mhz: float) -> int:
    for limit, fr in ((17, 1), (26, 2), (44, 3), (66, 4), (101, 5)):
        if f_pfd_mhz < limit:
            return fr
    return 6


def ice40_pll(f_in: float, f_out: float, max_error: float = 0.01) -> Ice40Pll:
    """The SB_PLL40 dividers closest to ``f_out`` from ``f_in`` (Hz), as ``icepll -i F_IN -o F_OUT``.

    Raises
    ------
    lutzip.errors.UnsupportedError
        No setting within ``max_error`` (relative), e.g. an output outside 16.66 .. 533 MHz.
    """
    best, err = None, float("inf")
    fin, want = f_in / 1e6, f_out / 1e6
    for divr in range(16):
        pfd = fin / (divr + 1)
        if not 10 <= pfd <= 133:
            continue
        for divf in range(128):
            vco = pfd * (divf + 1)
            if not 533 <= vco <= 1066:
                continue
            for divq in range(1, 7):
                out = vco / (1 << divq)
                if abs(out - want) < err:
                    err, best = abs(out - want), (divr, divf, divq, pfd, vco, out)
    if best is None or err > max_error * want:
        raise UnsupportedError(f"no iCE40 PLL setting gives {want:g} MHz from {fin:g} MHz (within "
                               f"{max_error:.0%})")
    divr, divf, divq, pfd, vco, out = best
    return Ice40Pll(divr, divf, divq, _filter_range(pfd), f_in, pfd * 1e6, vco * 1e6, out * 1e6)


def ecp5_pll(f_in: float, f_out: float, max_error: float = 0.01) -> Ecp5Pll:
    """The EHXPLLL dividers closest to ``f_out`` from ``f_in`` (Hz), as ``ecppll -i F_IN -o F_OUT``.

    Raises
    ------
    lutzip.errors.UnsupportedError
        No setting within ``max_error`` (relative).
    """
    best, err, bvco = None, float("inf"), 0.0
    fin, want = f_in / 1e6, f_out / 1e6
    for idiv in range(1, 129):
        pfd = fin / idiv
        if not 3.125 <= pfd <= 400:
            continue
        for fbdiv in range(1, 81):
            out = pfd * fbdiv
            for odiv in range(1, 129):
                vco = out * odiv
                if not 400 <= vco <= 800:
                    continue
                e = abs(out - want)
                if e < err or (e == err and abs(vco - 600) < abs(bvco - 600)):
                    err, bvco, best = e, vco, (idiv, fbdiv, odiv, pfd, vco, out)
    if best is None or err > max_error * want:
        raise UnsupportedError(f"no ECP5 PLL setting gives {want:g} MHz from {fin:g} MHz (within "
                               f"{max_error:.0%})")
    idiv, fbdiv, odiv, pfd, vco, out = best
    return Ecp5Pll(idiv, fbdiv, odiv, odiv - 1, f_in, pfd * 1e6, vco * 1e6, out * 1e6)
