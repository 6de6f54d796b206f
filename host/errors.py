"""Exception types of lutzip. Every error a user can provoke is a :class:`LutzError`."""


class LutzError(Exception):
    """Base class of all lutzip errors."""


class FormatError(LutzError):
    """A container or its metadata is malformed (bad magic, absurd sizes, truncation, ...)."""


class CorruptError(FormatError):
    """A CRC does not match: the bytes were changed after they were written."""


class TableError(LutzError):
    """A table set breaks a rule of the format (Kraft inequality, LUT3 range, index lengths, ...)."""


class DecodeError(LutzError):
    """A stripe's bits do not decode to exactly the words it claims.

    Attributes
    ----------
    tensor : str or None
        Name of the tensor, when known.
    stripe : int or None
        Stripe number within the tensor, when known.
    """

    def __init__(self, msg, tensor=None, stripe=None):
        where = []
        if tensor is not None:
            where.append(f"tensor {tensor!r}")
        if stripe is not None:
            where.append(f"stripe {stripe}")
        super().__init__(f"{', '.join(where)}: {msg}" if where else msg)
        self.tensor = tensor
        self.stripe = stripe


class UnsupportedError(LutzError):
    """An input (dtype, file type, option) that lutzip does not handle."""


class OutputLimitError(LutzError):
    """Decoding would produce more bytes of arrays than the caller allows (``max_output`` / ``--max-output``)."""
