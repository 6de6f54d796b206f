"""lutzip: lossless compression of neural-network weights for a one-weight-per-clock hardware decoder."""
__version__ = "0.1.0"

from lutzip.errors import CorruptError, DecodeError, FormatError, LutzError, TableError, UnsupportedError  # noqa: F401
