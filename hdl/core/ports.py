"""The decoder core's interface, defined once: its ports and its parameters (docs/CORE.md).

:data:`PORTS` lists every port of :func:`lutzip.hdl.core.decoder_core.decoder_core` in signature order with
its direction and width (``"W"``: the output word width parameter). :func:`core_signals` builds fresh MyHDL
signals from it; every flow (conversion, simulators, synthesis) and every test bench is built from these.
:class:`CoreParams` holds the core's parameters and checks them, once, before anything is elaborated.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from lutzip.errors import UnsupportedError


@dataclass(frozen=True)
class Port:
    """One port of the core: ``name``, ``direction`` (``"in"`` / ``"out"``), ``width`` (bits or ``"W"``)."""

    name: str
    direction: str
    width: int | str = 1

    def bits(self, W: int = 16) -> int:
        """The port's width in bits for output words of ``W`` bits."""
        return W if self.width == "W" else int(self.width)


#: Every port of the core, in signature order. ``rst`` is synchronous and active high.
PORTS = (
    Port("clk", "in"), Port("rst", "in"),
    Port("s_axis_tdata", "in", 32), Port("s_axis_tvalid", "in"), Port("s_axis_tready", "out"),
    Port("s_axis_tlast", "in"),
    Port("m_axis_tdata", "out", "W"), Port("m_axis_tvalid", "out"), Port("m_axis_tready", "in"),
    Port("m_axis_tlast", "out"), Port("m_axis_tuser", "out"),
    Port("tbl_we", "in"), Port("tbl_sel", "in", 2), Port("tbl_addr", "in", 12), Port("tbl_wdata", "in", 32),
    Port("err_valid", "out"), Port("err_code", "out", 4), Port("busy", "out"),
)

PORT_NAMES = tuple(p.name for p in PORTS)


def core_signals(W: int = 16) -> dict:
    """Fresh MyHDL signals for every port of the core, ``{name: Signal}`` in signature order.

    Parameters
    ----------
    W : int
        Output word width (the width of ``m_axis_tdata``).

    Returns
    -------
    dict
        ``rst`` is a synchronous active-high ``ResetSignal`` (usable by ``always_seq(reset=rst)`` and as a
        plain bool); one-bit ports are ``bool`` signals, the others ``intbv`` of their width.
    """
    from myhdl import ResetSignal, Signal, intbv

    out = {}
    for p in PORTS:
        if p.name == "rst":
            out[p.name] = ResetSignal(0, active=1, isasync=False)
        elif p.width == 1:
            out[p.name] = Signal(bool(0))
        else:
            out[p.name] = Signal(intbv(0)[p.bits(W):])
    return out


#: Allowed values of the core's choice parameters.
CHOICES = {"LUT1_RAM": ("block", "distributed"), "FRONT": ("window", "vector"), "STEP": ("adder", "onehot")}
#: Allowed ranges / sets of the core's integer parameters.
RANGES = {"L": (1, 12), "LUT3_DEPTH": (1, 4096)}
WIDTHS = (8, 16)
#: Code tables the core decodes: 1, or 2 (format version 5, docs/FORMAT.md section 2.1).
STATES_CHOICES = (1, 2)


def check_states(STATES, L, FRONT=None) -> None:
    """Raise :class:`UnsupportedError` (one line) unless the core can be built with ``STATES`` code tables.

    ``STATES=2`` makes LUT1 ``2^(L+1)`` entries, written at ``tbl_addr = state << L | prefix`` (12 address bits:
    ``L <= 11``; docs/CORE.md section 1).
    """
    if isinstance(STATES, bool) or STATES not in STATES_CHOICES:
        raise UnsupportedError(f"core parameter STATES={STATES!r}: 1 or 2 code tables")
    if STATES == 2 and L > 11:
        raise UnsupportedError(f"core parameter STATES=2 needs L <= 11 (LUT1 of 2^(L+1) entries behind the 12-bit "
                               f"table address), not L={L}")


def check_mirror(MIRROR, MAX_N) -> None:
    """Raise :class:`UnsupportedError` (one line) unless ``MIRROR`` is 0 or 1 and ``MAX_N`` is a power of two
    4 .. 32768."""
    if isinstance(MIRROR, bool) or MIRROR not in (0, 1):
        raise UnsupportedError(f"core parameter MIRROR={MIRROR!r}: 0 or 1 (row stripes, docs/FORMAT.md section 3.1)")
    if isinstance(MAX_N, bool) or not isinstance(MAX_N, int) or MAX_N < 4 or MAX_N & (MAX_N - 1) or MAX_N > 32768:
        raise UnsupportedError(f"core parameter MAX_N={MAX_N!r}: the row buffer's rows, a power of two 4 .. 32768")


def check_tbl_reg(TBL_REG) -> None:
    """Raise :class:`UnsupportedError` (one line) unless ``TBL_REG`` is 0 or 1."""
    if isinstance(TBL_REG, bool) or TBL_REG not in (0, 1):
        raise UnsupportedError(f"core parameter TBL_REG={TBL_REG!r}: 0 or 1 (the table writes registered)")


@dataclass(frozen=True)
class CoreParams:
    """The parameters of the decoder core (docs/CORE.md), checked when made.

    Attributes
    ----------
    L : int
        LUT1 address bits, 1..12.
    W : int
        Output word width, 8 or 16.
    LUT3_DEPTH : int
        LUT3 entries, 1..4096.
    LUT1_RAM : str
        ``"block"`` (registered LUT1 read) or ``"distributed"`` (asynchronous read).
    FRONT : str
        ``"window"`` or ``"vector"``.
    STEP : str
        The window front's decode step: ``"adder"`` or ``"onehot"``.
    STATES : int
        Code tables: 1, or 2 (format version 5; :func:`check_states`).
    MIRROR : int
        1: row stripes too (format version 6, docs/CORE.md section 7); 0: the core as before.
    MAX_N : int
        With ``MIRROR=1``: the row buffer (``MAX_N / 2`` words), a power of two 4 .. 32768.
    TBL_REG : int
        1: the decoded table writes from flip-flops inside the core (each written a cycle later); 0: as before.

    A new core parameter is one more field here (with its check below, if it needs one).
    """

    L: int = 8
    W: int = 16
    LUT3_DEPTH: int = 4096
    LUT1_RAM: str = "block"
    FRONT: str = "window"
    STEP: str = "adder"
    STATES: int = 1
    MIRROR: int = 0
    MAX_N: int = 512
    TBL_REG: int = 0

    def __post_init__(self):
        for name, (lo, hi) in RANGES.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise UnsupportedError(f"core parameter {name}={v!r} is out of range {lo}..{hi}")
        if isinstance(self.W, bool) or self.W not in WIDTHS:
            raise UnsupportedError(f"core parameter W={self.W!r}: output words are 8 or 16 bits")
        for name, allowed in CHOICES.items():
            v = getattr(self, name)
            if v not in allowed:
                raise UnsupportedError(f"core parameter {name}={v!r}: choose from {', '.join(allowed)}")
        check_states(self.STATES, self.L, self.FRONT)
        check_mirror(self.MIRROR, self.MAX_N)
        check_tbl_reg(self.TBL_REG)

    @classmethod
    def make(cls, params=None, **more) -> "CoreParams":
        """``CoreParams`` from a dict and/or keywords (an unknown name is an :class:`UnsupportedError`)."""
        if isinstance(params, CoreParams):
            params = params.as_dict()
        kw = {**(params or {}), **more}
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(kw) - names)
        if unknown:
            raise UnsupportedError(f"unknown core parameter {unknown[0]!r}: the core has {', '.join(sorted(names))}")
        return cls(**kw)

    def as_dict(self) -> dict:
        """``{name: value}`` of every parameter, in declaration order."""
        return asdict(self)

    def tag(self) -> str:
        """A short text naming every parameter (for file and cache names)."""
        return "-".join(f"{k}{v}" for k, v in self.as_dict().items())


# ============================================================================================ N lanes
#: The lane counts of :func:`lutzip.hdl.core.decoder_lanes.decoder_lanes`.
LANE_CHOICES = (1, 2, 4, 8)


def lanes_ports(lanes: int, W: int = 16) -> tuple:
    """Every port of :func:`lutzip.hdl.core.decoder_lanes.decoder_lanes` for ``lanes`` lanes, widths in bits.

    The single-lane :data:`PORTS` are unchanged; here the input stream, ``err_valid`` and ``err_code`` are
    ``lanes`` of the core's bundled into one vector each (lane 0 in the low bits), ``m_axis_tdata`` holds
    ``lanes`` words, ``m_axis_tkeep`` counts them and ``err_stripe`` gives each lane's stripe index (32 bits).
    docs/CORE.md section 6.
    """
    if isinstance(lanes, bool) or lanes not in LANE_CHOICES:
        raise UnsupportedError(f"LANES={lanes!r}: choose from {', '.join(map(str, LANE_CHOICES))}")
    n = int(lanes)
    return (
        Port("clk", "in"), Port("rst", "in"),
        Port("s_axis_tdata", "in", 32 * n), Port("s_axis_tvalid", "in", n), Port("s_axis_tready", "out", n),
        Port("s_axis_tlast", "in", n),
        Port("m_axis_tdata", "out", n * W), Port("m_axis_tkeep", "out", n.bit_length()),
        Port("m_axis_tvalid", "out"), Port("m_axis_tready", "in"),
        Port("m_axis_tlast", "out"), Port("m_axis_tuser", "out"),
        Port("tbl_we", "in"), Port("tbl_sel", "in", 2), Port("tbl_addr", "in", 12), Port("tbl_wdata", "in", 32),
        Port("err_valid", "out", n), Port("err_code", "out", 4 * n), Port("err_stripe", "out", 32 * n),
        Port("busy", "out"),
    )


def lanes_signals(lanes: int, W: int = 16) -> dict:
    """Fresh MyHDL signals for every port of the N-lane decoder (:func:`lanes_ports`), as :func:`core_signals`:
    one-bit ports (all of them with one lane) are ``bool`` signals."""
    from myhdl import ResetSignal, Signal, intbv

    out = {}
    for p in lanes_ports(lanes, W):
        if p.name == "rst":
            out[p.name] = ResetSignal(0, active=1, isasync=False)
        elif p.width == 1:
            out[p.name] = Signal(bool(0))
        else:
            out[p.name] = Signal(intbv(0)[p.width:])
    return out
