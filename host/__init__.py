"""lutzip: lossless compression of neural-network weights for a one-weight-per-clock hardware decoder.

The public API (:mod:`lutzip.api`, loaded on first use so that ``import lutzip`` stays fast):

* :func:`compress` ``(arrays, **options) -> bytes`` and :func:`decompress` ``(data) -> dict``;
* :func:`save` ``(path, arrays, **options)`` and :func:`load` ``(path) -> dict``;
* :func:`open` ``(path)``: a lazy mapping name -> array over a memory-mapped ``.lutz`` file.

Every error a user can provoke is a :class:`LutzError`.
"""
__version__ = "0.1.0"

from lutzip.errors import (CorruptError, DecodeError, FormatError, LutzError, OutputLimitError,  # noqa: F401
                           TableError, UnsupportedError)

#: Names of :mod:`lutzip.api` served lazily at the top of the package.
_API = ("compress", "decompress", "save", "load", "open", "LutzFile", "OptionError")

__all__ = ["__version__", *_API, "LutzError", "FormatError", "CorruptError", "TableError", "DecodeError",
           "UnsupportedError", "OutputLimitError"]


def __getattr__(name):
    if name in _API:
        from lutzip import api
        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))
