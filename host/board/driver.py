"""Old import path of the UART board driver; kept for one release. Use :mod:`lutzip.board.uart` (the driver),
:mod:`lutzip.board.base` (results, errors) and :func:`lutzip.board.open_board` (the chooser)."""
from lutzip.board.base import BoardError, BoardProtocolError, LinkError, StreamResult, StripeResult  # noqa: F401
from lutzip.board.uart import UartBoard as Board  # noqa: F401

__all__ = ["Board", "BoardError", "BoardProtocolError", "LinkError", "StreamResult", "StripeResult"]
