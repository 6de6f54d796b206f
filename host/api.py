"""The public Python API of lutzip: compress named arrays to ``.lutz`` bytes or files and get them back.

Everything here is also reachable at the top of the package (``lutzip.compress`` ...); ``import lutzip`` stays
fast because this module, and the numba kernels under it, load on first use.

Examples
--------
>>> import numpy as np, lutzip
>>> w = {"fc.weight": np.arange(-8, 8, dtype=np.int8).reshape(4, 4)}
>>> data = lutzip.compress(w, stripe_len=1024)
>>> bool((lutzip.decompress(data)["fc.weight"] == w["fc.weight"]).all())
True
"""
from __future__ import annotations

import builtins
import dataclasses
import mmap
import os
from collections.abc import Mapping

import numpy as np

from lutzip.codec import container as ct
from lutzip.errors import LutzError, UnsupportedError

__all__ = ["compress", "decompress", "save", "load", "open", "LutzFile", "OptionError", "OPTIONS"]

#: The encoder options of :func:`compress` and :func:`save` and what each does.
#: code tables per table set when ``states`` is not given: two where they pay (format version 5)
DEFAULT_STATES = 2

OPTIONS = {
    "stripe_len": "words per stripe, 1..65536 (default 4096)",
    "L": "longest class code = the decoder's LUT1 address bits, 1..12 (default 8)",
    "share": "let tensors share table sets where that pays (default True)",
    "greedy": "use the published greedy table sets instead of the optimising encoder (default False)",
    "attrs": "per-tensor attributes stored with the tensor: {name: {key: JSON value}} (default none)",
    "quantize": "'int16' or 'int8': quantise float32/float64 tensors, the scale kept in the attributes",
    "bf16": "round float32/float64 tensors to bfloat16 (default False)",
    "prune": "zero this fraction of the smallest-magnitude weights of each tensor of 2+ dimensions (default 0)",
    "group_below": "tensors of fewer words share group streams (one table set, shared stripes; default 1024; "
                   "0: every tensor owns its stripes)",
    "threads": "code the stripes on N threads, 1..256 (default 1; the bytes are the same for every N)",
    "reorder": "let a tensor be coded in another axis order where its zero runs are cheaper so (format version 4; "
               "the arrays come back the same; default True, False: every stream in its tensor's own order)",
    "rows": "let a tensor whose rows are mirror images (a transform's basis, e.g. an STFT) be coded by half rows "
            "where that is smaller (format version 6; default True, False: none)",
    "states": "2 (default): two code tables switched by the previous symbol's class where that is smaller (format "
              "version 5; on hardware only boards built with STATES=2, docs/PROTOCOL.md); 1: one code table "
              "everywhere (versions 3/4/6, for boards of one code table)",
    "redesign": "with two code tables, also cut 8-bit classes for the two states and split shared table sets "
                "(lutzip.codec.states.apply(redesign=True)): up to 1.2 % smaller for ~25x the encode time, the whole "
                "container in memory (default False)",
}

_BOOL_OPTIONS = ("share", "greedy", "bf16", "reorder", "rows", "redesign")


class OptionError(UnsupportedError, TypeError):
    """An option of :func:`compress` / :func:`save` that does not exist or has a value of the wrong type."""


def _check_options(options: dict) -> dict:
    """The options as given, each known and of the right type (else :class:`OptionError` naming it)."""
    for key, value in options.items():
        if key not in OPTIONS:
            import difflib
            near = difflib.get_close_matches(key, OPTIONS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f" (options: {', '.join(OPTIONS)})"
            raise OptionError(f"unknown option {key!r}{hint}")
        if key in _BOOL_OPTIONS and not isinstance(value, (bool, np.bool_)):
            raise OptionError(f"option {key}={value!r}: expected True or False")
        if key in ("stripe_len", "L", "group_below") and (isinstance(value, (bool, np.bool_))
                                           or not isinstance(value, (int, np.integer))):
            raise OptionError(f"option {key}={value!r}: expected an integer")
        if key == "prune" and (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number))):
            raise OptionError(f"option prune={value!r}: expected a fraction in [0, 1)")
        if key == "attrs" and value is not None and not (isinstance(value, Mapping) and all(
                isinstance(v, Mapping) for v in value.values())):
            raise OptionError(f"option attrs: expected {{tensor name: {{key: value}}}}, not {type(value).__name__}")
    if "states" in options and (isinstance(options["states"], (bool, np.bool_))
                                or options["states"] not in (1, 2)):
        raise OptionError(f"option states={options['states']!r}: expected 1 or 2")
    if options.get("redesign") and int(options.get("states", DEFAULT_STATES)) != 2:
        raise OptionError("option redesign=True needs two code tables (states=2)")
    if "threads" in options:
        _threads(options["threads"])
    if "L" in options:
        from lutzip.codec.tables import MAX_CODE_LEN
        if not 1 <= int(options["L"]) <= MAX_CODE_LEN:
            raise OptionError(f"option L={options['L']}: outside 1..{MAX_CODE_LEN}")
    return options


def _check_arrays(arrays):
    if not isinstance(arrays, Mapping):
        raise UnsupportedError(f"arrays must be a dict of name -> array, not {type(arrays).__name__}")
    for name in arrays:
        if not isinstance(name, str):
            raise UnsupportedError(f"tensor names must be strings, not {type(name).__name__} ({name!r})")


def _encode(arrays, options) -> ct.Container:
    """The container of ``arrays`` coded with ``options`` (the one path of :func:`compress` and :func:`save`)."""
    _check_arrays(arrays)
    opts = _check_options(dict(options))
    from lutzip.codec import arrays as codec
    from lutzip.weights.quantize import prepare
    prepared, lossy_attrs = prepare(arrays, opts.get("quantize"), bool(opts.get("bf16", False)),
                                    float(opts.get("prune", 0.0)))
    user_attrs = opts.get("attrs") or {}
    attrs = {name: {**dict(user_attrs.get(name, {})), **lossy_attrs.get(name, {})}
             for name in prepared if name in user_attrs or name in lossy_attrs}
    redesign = bool(opts.get("redesign", False))
    c = codec.compress(prepared, attrs=attrs, threads=int(opts.get("threads", 1)),
                       states=1 if redesign else int(opts.get("states", DEFAULT_STATES)), **_encoder_kw(opts))
    return _redesigned(c, opts) if redesign else c


def _redesigned(c: ct.Container, opts: dict) -> ct.Container:
    """The one-table container ``c`` with two code tables and the classes cut for them (option ``redesign``)."""
    from lutzip.codec import states
    return states.apply(c, L=int(opts.get("L", 8)), redesign=True)


def _encoder_kw(opts: dict) -> dict:
    """The encoder's keywords of checked options (the one mapping of :func:`compress` and :func:`save`)."""
    kw = {k: int(opts[k]) for k in ("stripe_len", "L", "group_below") if k in opts}
    kw.update({k: bool(opts[k]) for k in ("share", "reorder", "rows") if k in opts})
    if opts.get("greedy"):
        from lutzip.codec.encoder import greedy_tableset
        L = kw.get("L", 8)
        kw["tableset_fn"] = lambda w, b: greedy_tableset(w, b, L=L)
    return kw


def compress(arrays, **options) -> bytes:
    """Code named arrays into the bytes of a ``.lutz`` container.

    Parameters
    ----------
    arrays : mapping of str -> numpy.ndarray
        Tensors by name. int8, uint8, int16, uint16, float16 and bfloat16 (``ml_dtypes.bfloat16``) arrays are
        coded losslessly as they are; float32/float64 need ``quantize`` or ``bf16``.
    **options
        Encoder options (:data:`OPTIONS`): ``stripe_len`` (int, 4096), ``L`` (int, 8), ``share`` (bool, True),
        ``greedy`` (bool, False), ``group_below`` (int, 1024: smaller tensors share group streams),
        ``attrs`` (dict of dicts), ``threads`` (int, 1: threads that code the stripes; the same bytes for any
        number), ``reorder`` (bool, True: a tensor may be coded in another axis order, format version 4; the
        array comes back the same), ``states`` (int, 2: two code tables where they pay, format version 5, decoded
        by cores built with ``STATES=2``; 1: one code table, for ``STATES=1`` boards), and the explicit lossy steps
        ``quantize`` (``"int16"``/``"int8"``), ``bf16`` (bool), ``prune`` (fraction).

    Returns
    -------
    bytes
        The container (docs/FORMAT.md); :func:`decompress` gives the arrays back.

    Raises
    ------
    OptionError
        An unknown option or a value of the wrong type (also a :class:`TypeError`).
    UnsupportedError
        A dtype lutzip does not code, or a float tensor without a lossy step.
    TableError
        An option value out of range (e.g. ``stripe_len=0``).
    """
    return ct.to_bytes(_encode(arrays, options))


def save(path, arrays, **options) -> int:
    """Code named arrays into the ``.lutz`` file ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (replaced if it exists).
    arrays : mapping of str -> numpy.ndarray
        Tensors by name, as for :func:`compress`.
    **options
        Encoder options, as for :func:`compress`.

    Returns
    -------
    int
        Bytes written.
    """
    _check_arrays(arrays)
    opts = _check_options(dict(options))
    from lutzip.codec import writer
    kw = _encoder_kw(opts)
    step = writer.lossy_step(opts.get("quantize"), bool(opts.get("bf16", False)), float(opts.get("prune", 0.0)))
    # tensor by tensor (lutzip.codec.writer): the same bytes as compress(), one prepared tensor in memory at a time
    n = writer.write_streamed(os.fspath(path), writer.arrays_source(arrays), prepare=step,
                              attrs=opts.get("attrs") or {}, threads=int(opts.get("threads", 1)), **kw)[0]
    if opts.get("redesign"):                # the same bytes as compress(): the whole container in memory
        from lutzip.codec import states_plan
        n = states_plan.redesign_file(os.fspath(path), L=int(opts.get("L", 8)))[0]
    elif int(opts.get("states", DEFAULT_STATES)) == 2:
        # the same bytes as compress(): the one-table file's table sets planned again on its decoded words
        from lutzip.codec import states_plan
        n = states_plan.rewrite_file(os.fspath(path), L=int(opts.get("L", 8)))[0]
    return n


def _threads(threads) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
        raise OptionError(f"threads must be an integer 1..256, not {threads!r}")
    return threads


def _decode_all(c: ct.Container, max_output, threads) -> dict:
    from lutzip.codec import arrays as codec
    return codec.decompress(c, max_output=max_output, threads=threads)


def decompress(data, max_output="auto", threads=1) -> dict:
    """Decode the bytes of a ``.lutz`` container back to its arrays.

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        A whole container, as :func:`compress` returns it.
    max_output : int, "auto" or None
        Most bytes of arrays to produce, checked from the index before anything is decoded; ``"auto"``
        (default): the memory available now; ``None``: no limit.
    threads : int
        Threads decoding each stream's stripes (the compiled decoder; 1: single-threaded).

    Returns
    -------
    dict of str -> numpy.ndarray
        The tensors in file order, bit-identical to what was coded; bfloat16 tensors come back as their
        ``uint16`` bit patterns (``a.view(ml_dtypes.bfloat16)`` gives the bfloat16 array). Arrays of 64 KiB
        to 4 MiB are views of shared 8 MiB huge-page slabs (freed when all their arrays are dropped; up to
        64 MiB of freed slabs are kept for the next call), larger ones own a mapping each.

    Raises
    ------
    FormatError
        Not a container, truncated, or inconsistent metadata.
    CorruptError
        A CRC (header, metadata or stripe) does not match.
    DecodeError
        A stripe's bits do not decode to the words it claims.
    OutputLimitError
        The arrays would take more than ``max_output`` bytes.
    """
    if not isinstance(data, (bytes, bytearray, memoryview, mmap.mmap)):
        raise UnsupportedError(f"decompress takes the bytes of a container, not {type(data).__name__} "
                               f"(lutzip.load(path) reads a file)")
    threads = _threads(threads)
    return _decode_all(ct.parse_index(data), max_output, threads)   # decoded into new arrays: no copy of the payload


def load(path, max_output="auto", threads=1) -> dict:
    """Read and decode every tensor of the ``.lutz`` file ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.
    max_output : int, "auto" or None
        As for :func:`decompress`.
    threads : int
        As for :func:`decompress`.

    Returns
    -------
    dict of str -> numpy.ndarray
        As :func:`decompress`.
    """
    threads = _threads(threads)
    return _decode_all(ct.read(os.fspath(path)), max_output, threads)


class LutzFile(Mapping):
    """A ``.lutz`` file opened for reading: a mapping tensor name -> array, each tensor decoded on access.

    Made by :func:`open`. The file is memory-mapped; the index (names, shapes, dtypes, table sets, stripe
    sizes and CRCs) is parsed and checked when the file is opened, each tensor's stripes are CRC-checked and
    decoded from the mapping when the tensor is read, and nothing is cached (reading a tensor twice decodes
    it twice; the pages of its stripes are released from the process afterwards, so reading a large file
    layer by layer keeps about one tensor's stripes resident). A small tensor sharing a group stream (format
    version 3) decodes only the stripes of that stream that hold its words. ``len``, iteration (file order), ``keys()`` and ``in`` never decode. Opening reads only the
    header and the metadata (:func:`lutzip.codec.container.parse_index`), never a copy of the payload.
    A tensor larger than ``max_output`` bytes is refused when it is read (:class:`OutputLimitError`).
    """

    def __init__(self, path, max_output="auto", threads=1):
        self.path = os.fspath(path)
        self.max_output = max_output
        self.threads = _threads(threads)
        self._mm = None
        self._c = None
        with builtins.open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < ct.HEADER_SIZE:
                ct.from_bytes(f.read())          # raises the reader's own "shorter than the header" error
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self._c = ct.parse_index(self._mm)   # every check of the reader; the payload stays in the mapping
            self._names = {t.name: t for t in self._c.tensors}
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------------------------- mapping
    def _container(self) -> ct.Container:
        if self._c is None:
            raise LutzError(f"{self.path}: the lutzip file is closed")
        return self._c

    def __getitem__(self, name) -> np.ndarray:
        c = self._container()
        try:
            t = self._names[name]
        except (KeyError, TypeError):
            raise KeyError(name) from None
        from lutzip.codec import arrays as codec
        from lutzip.codec.writer import release_pages
        codec.check_output_size([t], self.max_output)
        out = codec.decompress_tensor(c, t, threads=self.threads)
        # the stream's pages leave the process (they stay in the page cache): reading a file layer by layer
        # keeps the resident memory at about one tensor's stripes, not the whole mapping
        release_pages(self._mm, len(self._mm) - 4 * len(c.payload) + t.offset,
                      4 * int(np.asarray(t.stripe_words, np.int64).sum()))
        return out

    def __contains__(self, name) -> bool:
        self._container()
        try:
            return name in self._names
        except TypeError:
            return False

    def __iter__(self):
        return iter([t.name for t in self._container().tensors])

    def __len__(self) -> int:
        return len(self._container().tensors)

    def info(self, name) -> ct.TensorEntry:
        """The index entry of tensor ``name``, without decoding it.

        Returns
        -------
        lutzip.codec.container.TensorEntry
            ``.dtype``, ``.shape``, ``.numel``, ``.attrs`` (e.g. the quantisation scale), ``.table``,
            ``.stripe_len``, ``.stripe_words``, ``.n_bytes`` (compressed; a grouped tensor's share of its
            stream), ``.raw_bytes``, ``.stream``, ``.word_offset`` and ``.grouped`` (a copy: changing it does
            not change the file's index).
        """
        self._container()
        try:
            t = self._names[name]
        except (KeyError, TypeError):
            raise KeyError(name) from None
        return dataclasses.replace(t, attrs=dict(t.attrs))     # the reader's own entry stays untouched

    @property
    def tables(self) -> list:
        """The table sets of the file (:class:`lutzip.codec.tables.TableSet`)."""
        return self._container().tables

    # ---------------------------------------------------------------------------------- lifetime
    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._c is None

    def close(self):
        """Release the memory mapping (arrays already read stay valid: they are copies)."""
        self._c = None
        self._names = {}
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:       # a view of the mapping is still alive somewhere: let it go with it
                pass
            self._mm = None

    def __enter__(self) -> "LutzFile":
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"{len(self)} tensors"
        return f"<lutzip.LutzFile {self.path!r}, {state}>"


def open(path, max_output="auto", threads=1) -> LutzFile:  # noqa: A001 - lutzip.open, as gzip.open
    """Open a ``.lutz`` file for lazy reading: a mapping name -> array that decodes a tensor when it is read.

    Parameters
    ----------
    path : str or os.PathLike
        The file to open.
    max_output : int, "auto" or None
        Most bytes one tensor may decode to, checked when it is read; ``"auto"`` (default): the memory
        available then; ``None``: no limit.
    threads : int
        Threads decoding a tensor's stripes when it is read.

    Returns
    -------
    LutzFile
        Use it as a context manager (``with lutzip.open(p) as f: w = f["fc.weight"]``) or call ``close()``;
        ``f.info(name)`` gives a tensor's dtype, shape and attributes without decoding it.

    Raises
    ------
    FormatError, CorruptError
        As :func:`decompress`, for the header and the index (a tensor's stripes are checked when it is read).
    """
    return LutzFile(path, max_output, threads)
