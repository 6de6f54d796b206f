"""The board seam: what every lutzip board (transport) provides, and the types its answers come in.

A *board* is a decoder core the host can reach: a real FPGA board over a UART (:mod:`lutzip.board.uart`),
the virtual board behind a pseudo-terminal (the same driver, ``kind="uart-sim"``), or a Zynq board through
AXI DMA (``lutzip.board.pynq``, kinds ``"pynq"`` / ``"pynq-sim"``). The verify-and-report layer
(:mod:`lutzip.board.verify`) and the CLI talk to any of them only through :class:`BoardBase`; the chooser
(:func:`lutzip.board.open_board`) picks the implementation. This module never imports a backend.

What a new transport must implement
-----------------------------------
Subclass :class:`BoardBase` and provide

``kind`` : str (class or instance attribute)
    What the board is: ``"uart"``, ``"uart-sim"``, ``"pynq"``, ``"pynq-sim"``, ... A kind ending in ``-sim``
    is reported as a simulation.
``identify() -> BoardInfo``
    Ask the board for its core parameters and clock, store the answer in ``self.info`` and return it. Raise
    :class:`LinkError` when the board does not answer, :class:`BoardProtocolError` when the answer is
    impossible. A subclass of :class:`BoardInfo` may add transport fields (the UART adds protocol version,
    ring depth, payload limit, baud); they appear in the report's ``board`` dict.
``load_tables(tables)``
    Write a :class:`lutzip.codec.tables.TableSet` into the decoder (raise :class:`BoardError` if the core
    cannot hold it: LUT3 depth, word width).
``stream(tensors, words=False, progress=None) -> StreamResult``
    ``tensors`` is a list of ``(name, TableSet, stripes)`` with ``stripes`` a list of uint32 numpy arrays
    (each stripe's words as stored in the container, header word first). Load each tensor's tables (when
    they differ from the previous tensor's), decode every stripe in order and return one
    :class:`StripeResult` per stripe (``words`` filled only when ``words=True``: every decoded word comes
    back; otherwise a CRC32 of the stripe's decoded words, as :func:`lutzip.link.protocol.words_crc`
    computes it) and the board's counters for this call. ``progress(k)`` is called with the number of
    stripes finished since the last call. Every wait must be bounded (``self.timeout`` without progress
    ends in :class:`LinkError` saying what never came).
``read_counters() -> dict``
    The board's counters since its last reset, with at least the names in :data:`COUNTERS` (a transport
    may add its own, e.g. the UART's ``link_errors``, ``rx_bytes``, ``tx_bytes``).
``_close()``
    Release the transport (port, overlay, DMA buffers). :meth:`BoardBase.close` calls it, then stops what
    was handed to :meth:`BoardBase.attach` (e.g. a simulator started for this board).

Optional: ``link_report(result) -> dict`` adds transport figures to the report (the UART: how busy its
receive line was); ``port`` (str or None) says where the board is (shown in the report).

A backend module for the chooser (e.g. ``lutzip/board/pynq.py``) provides
``open_board(*, sim=False, timeout=5.0, **options) -> BoardBase``.
"""
from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field

import numpy as np

from lutzip.errors import LutzError

#: Counters every board reports (:meth:`BoardBase.read_counters`, :attr:`StreamResult.counters`):
#: clock cycles; cycles the core was decoding a stripe; busy cycles it waited for input (starved); cycles a
#: decoded word waited for the output (blocked); decoded words; stripes finished; stripes that ended with a
#: decode error.
COUNTERS = ("cycles", "busy", "starved", "blocked", "words", "stripes", "decode_errors")


class BoardError(LutzError):
    """Base class of the errors a board raises (a table set it cannot hold, no board given, ...)."""


class LinkError(BoardError):
    """The link failed: no answer within the timeout, too many retransmissions, or board frames were lost."""


class BoardProtocolError(BoardError):
    """The board answered something the protocol does not allow (wrong type, size or content)."""


@dataclass(frozen=True)
class BoardInfo:
    """What a board says about itself (:meth:`BoardBase.identify`).

    Attributes
    ----------
    kind : str
        ``"uart"``, ``"uart-sim"``, ``"pynq"``, ``"pynq-sim"``, ...
    L, W : int
        The core's LUT1 index bits and output word width (8 or 16).
    lut3_depth : int
        LUT3 entries the core holds.
    clk_hz : int
        The core's clock (simulations report the clock they model).
    lanes : int
        Decoder lanes (words per cycle at most).
    states : int
        The core's code tables (``STATES``, docs/CORE.md): 2 decodes format version 5 (``--states 2``) besides
        one-table sets, 1 one-table sets only.
    mirror : int
        1 when the core decodes row streams (format version 6, mirrored rows; built with ``MIRROR=1``,
        docs/CORE.md section 7), else 0.
    max_n : int
        With ``mirror``: the core's row buffer ``MAX_N`` (rows of at most ``MAX_N + 1`` words), else 0.
    """

    kind: str
    L: int
    W: int
    lut3_depth: int
    clk_hz: int
    lanes: int = 1
    states: int = 1
    mirror: int = 0
    max_n: int = 0

    @property
    def simulated(self) -> bool:
        """True when the board is a simulation (its kind ends in ``-sim``)."""
        return self.kind.endswith("-sim")

    def as_dict(self) -> dict:
        """All fields (those of a transport's subclass too) and ``simulated``, JSON-ready."""
        d = asdict(self)
        d["simulated"] = self.simulated
        return d

    def link_text(self) -> str:
        """How the host reaches the core, in a few words (the report's first line)."""
        return self.kind


def two_tables(tables) -> bool:
    """True for a table set with two code tables (format version 5, ``--states 2``)."""
    return getattr(tables, "lens_b", None) is not None


def states_refusal(info=None) -> str:
    """Why a board whose core has ``info.states`` = 1 (``info`` None: any such board) cannot take a two-table set
    (the end of a one-line error)."""
    which = f" (this {info.kind} board's IDENT says STATES=1)" if info is not None else ""
    return (f"which the hardware core does not decode when built with STATES=1{which}; stream it to a board "
            f"built with STATES=2 or re-compress with --states 1 (one code table)")


def check_states(tables, info) -> None:
    """Raise :class:`~lutzip.errors.UnsupportedError` (one line) if ``tables`` has two code tables and the board's
    core (``info.states``) decodes one: the last check before a table load."""
    if two_tables(tables) and getattr(info, "states", 1) < 2:
        from lutzip.errors import UnsupportedError
        raise UnsupportedError(f"a table set with two code tables (format version 5, --states 2), "
                               f"{states_refusal(info)}")


def rows_refusal(info=None) -> str:
    """Why a board whose core has no row stripes (``info.mirror`` 0; ``info`` None: any such board) cannot take a
    row stream (the end of a one-line error)."""
    which = f" (this {info.kind} board's IDENT says MIRROR=0)" if info is not None else ""
    return (f"which the hardware core does not decode when built with MIRROR=0{which}; stream it to a board built "
            f"with MIRROR=1 (lutzip board build --mirror) or re-compress with --no-rows")


@dataclass
class StripeResult:
    """What the board reported for one stripe.

    Attributes
    ----------
    tensor : str
        Name of the tensor.
    index : int
        Stripe number within the tensor.
    n_words : int
        Words the core decoded.
    err : int
        0, or the core's error code (``lutzip.codec.bitstream.ERR_*``).
    crc : int
        CRC32 of the decoded words (:func:`lutzip.link.protocol.words_crc`).
    words : numpy.ndarray or None
        The decoded words (words mode only).
    """

    tensor: str
    index: int
    n_words: int
    err: int
    crc: int
    words: np.ndarray | None = None


@dataclass
class StreamResult:
    """Result of :meth:`BoardBase.stream`.

    Attributes
    ----------
    stripes : list of StripeResult
        One per stripe, in order.
    counters : dict
        The board's counters for this call (names :data:`COUNTERS` and the transport's own).
    elapsed : float
        Wall-clock seconds of the call.
    wire_bytes : int
        Bytes the host sent (framing, retransmissions, descriptors included).
    payload_bytes : int
        Stripe bytes streamed (compressed data).
    retransmissions : int
        Frames (or transfers) sent again.
    attempts : int
        Runs started (a transport may restart after a link failure).
    stats : dict
        Transport statistics (NACKs, rejected frames, ...).
    """

    stripes: list
    counters: dict
    elapsed: float
    wire_bytes: int
    payload_bytes: int
    retransmissions: int = 0
    attempts: int = 1
    stats: dict = field(default_factory=dict)


class BoardBase(abc.ABC):
    """A decoder core the host can reach; see the module docstring for what an implementation provides.

    Attributes
    ----------
    kind : str
        What the board is (``"uart"``, ``"uart-sim"``, ``"pynq"``, ...).
    info : BoardInfo or None
        The last :meth:`identify` answer.
    port : str or None
        Where the board is (a serial port, an overlay), for the report.
    timeout : float
        Seconds without progress after which a wait fails with :class:`LinkError`.
    """

    kind = "board"
    port = None
    timeout = 5.0

    def __init__(self):
        self.info = None
        self._attached = []

    @abc.abstractmethod
    def identify(self) -> BoardInfo:
        """Ask the board for its core parameters and clock (also stored in ``self.info``)."""

    @abc.abstractmethod
    def load_tables(self, tables) -> None:
        """Write a :class:`~lutzip.codec.tables.TableSet` into the decoder."""

    @abc.abstractmethod
    def stream(self, tensors, words: bool = False, progress=None) -> StreamResult:
        """Decode ``[(name, TableSet, [uint32 stripe arrays])]`` on the board; one result per stripe."""

    @abc.abstractmethod
    def read_counters(self) -> dict:
        """The board's counters since its last reset (at least the names in :data:`COUNTERS`)."""

    @abc.abstractmethod
    def _close(self) -> None:
        """Release the transport."""

    def link_report(self, result: StreamResult) -> dict:
        """Transport figures for the report of ``result`` (none by default)."""
        return {}

    def attach(self, resource):
        """Stop ``resource`` (anything with ``stop()``, e.g. a simulator) when the board is closed."""
        self._attached.append(resource)
        return resource

    def close(self):
        """Release the transport, then stop the attached resources (last attached first)."""
        try:
            self._close()
        finally:
            while self._attached:
                self._attached.pop().stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
