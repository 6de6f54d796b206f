"""The fast stripe decoder: a C kernel (``_fastdec.c``) compiled at first use and loaded with ctypes.

The kernel decodes the bit format of docs/FORMAT.md sections 1-3 exactly like the numba reference
(:func:`lutzip.codec.bitstream._decode_kernel`): same output, same checks, same error code, stripe and word on
bad input. It interleaves several stripes per loop, looks every symbol up in one combined LUT1+LUT2 table,
checks the stripe CRCs itself (carry-less multiply folding where the CPU has it, else slicing-by-16) and can
split the stripes over threads (the GIL is released during the call).

Build: the first call compiles ``_fastdec.c`` with the C compiler (``$CC``, else ``cc``, ``gcc`` or
``clang``) into the lutzip cache (``lutzip.cache.cache_dir("fastdec")``), keyed by the source, the compiler
and the CPU; later processes load the cached library. Without a compiler, or with ``LUTZIP_FASTDEC=0`` in the
environment, :func:`lib` is ``None`` and :func:`lutzip.codec.bitstream.decode_stripes` uses the numba kernel.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
import weakref
from pathlib import Path

import numpy as np

from lutzip.codec import cbuild
from lutzip.codec.tables import LUT, RANGE, ZRUN, TableSet

SOURCE = Path(__file__).with_name("_fastdec.c")
#: One entry of the combined table (``lz_entry`` of ``_fastdec.c``).
ENTRY_DTYPE = np.dtype([("tot", "u1"), ("flags", "u1"), ("sh", "u1"), ("adv", "u1"), ("param", "<u4")])
F_LUT, F_LONG, F_INVALID, F_SLOW = 1, 2, 4, 8
#: ``adv`` of a slow entry: a lane loop that added it takes it off again when it leaves the batch
ADV_SLOW = 64
#: The kernel's lane loops (passed as ``mode | loop << 2``): one symbol a step; two symbols from one 64-bit
#: window (table sets whose fast symbols are at most :data:`PAIR_MEAN_BITS` long on average, weighted by their
#: share of the code space: a pair longer than the window leaves the batch); or for zero-first table sets (code
#: 0 of one bit is the zero run of one word) up to :data:`ZMAX` zero words by counting leading zero bits, then
#: one symbol from the same window (entries of more than ``33 - ZMAX`` bits carry ``F_LONG``; zero runs of
#: k > 0 carry ``F_LUT`` besides ``F_SLOW``: the loop writes them itself).
LOOP_SINGLE, LOOP_PAIR, LOOP_ZERO = 0, 1, 2
ZMAX = 8
#: The zero-first loop also takes a code 0 of one bit that is a zero run of k <= ZERO_MAX_K index bits (pruned
#: to 90 %: runs of 1..16 words), one run a step, branch-free (``mode | loop << 2 | k << 4``).
ZERO_MAX_K = 4
PAIR_MEAN_BITS = 14
#: ... and whose fast symbols take at least this share of the code space (a slow symbol, e.g. a zero run of
#: k > 0, leaves the batch; the 6-lane loop of one symbol a step leaves it more cheaply)
PAIR_MIN_FAST = 7 / 8
#: One run of stripes of ``lz_decode_many`` (``lz_stream`` of ``_fastdec.c``): the arguments of ``lz_decode``.
STREAM_DTYPE = np.dtype([(f, "<u8" if f in ("words", "nw", "T", "lut3", "cls", "out", "crcs") else "<i8")
                         for f in ("words", "total", "nw", "n_stripes", "S", "numel", "T", "L", "mode", "lut3",
                                   "n_lut3", "cls", "out", "out8", "crcs")])
#: Fast-path modes of the kernel: every fast symbol is a LUT3 look-up, a RANGE value, or either.
MODE_LUT, MODE_RANGE, MODE_MIX = 0, 1, 2
KERNEL_LUT3 = 8192
#: The combined table of a shorter code is built over this many bits (the kernel's lane loop has a copy for
#: each table index width 8..12, with the shift as a constant).
MIN_L = 8
T_ENTRIES = 4096
#: Two code tables (format version 5, :mod:`lutzip.codec.states`): the combined table of state B starts this many
#: entries after that of state A (the kernel's LUT3 and unused space between them); every valid entry of either
#: state carries the state after its symbol in bit 7 of ``sh`` (:data:`SH_NEXT_B`), and the kernel mode the flag
#: :data:`TWO_STATES` (the lane loop is then the one-symbol loop with a state per lane).
B_OFF = 8192
SH_NEXT_B = 128
TWO_STATES = 128
#: In two-state tables a zero run of k <= ZRUN2_MAX_K is a fast entry with this flag (F_LONG is not used there): its
#: value is the run's index; the two-state loop stores 64 bytes of zeros every step and moves on by 1 or index + 1
F_RUN = F_LONG
ZRUN2_MAX_K = 6
#: Return codes of the kernel besides the decode errors (the ``ERR_*`` codes of bitstream.py): a CRC mismatch,
#: stripe word counts that do not tile the payload, no memory.
ERR_CRC, ERR_INDEX, ERR_NOMEM = 100, 101, 102
FLAGS = ["-O2", "-march=native", "-shared", "-fPIC", "-pthread", "-fvisibility=hidden"]

_lock = threading.Lock()
_state = {"tried": False, "lib": None, "why": None}


_compiler, _ptr = cbuild.compiler, cbuild.ptr


def _build(cc: str, dest: Path, variants=None):
    """Compile the kernel into ``dest/_fastdec.so`` (``-march=native`` first, then without it)."""
    cbuild.build(cc, SOURCE, dest / "_fastdec.so", FLAGS, variants=variants)


def _configure(lib):
    """Declare the argument and result types of the library's functions; returns ``lib``."""
    vp, i64, i32, u32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_uint32
    lib.lz_decode.argtypes = [vp, i64, vp, i64, i64, i64, vp, i32, i32, vp, i64, vp, vp, i32, vp, i32, vp]
    lib.lz_decode.restype = i32
    lib.lz_crc32.argtypes = [vp, i64, u32]
    lib.lz_crc32.restype = u32
    lib.lz_crc_check.argtypes = [vp, vp, vp, i64, vp]
    lib.lz_crc_check.restype = i64
    lib.lz_crc_mode.argtypes = [i32]
    lib.lz_crc_mode.restype = i32
    lib.lz_lanes.restype = i32
    lib.lz_loop_lanes.argtypes = [i32]
    lib.lz_loop_lanes.restype = i32
    lib.lz_parse_streams.argtypes = [vp, i64, i64, i64, vp, i64, i64, i64, vp, vp, vp, i64]
    lib.lz_parse_streams.restype = i64
    lib.lz_decode_many.argtypes = [vp, i64, i32, vp]
    lib.lz_decode_many.restype = i32
    lib.lz_exact_count.argtypes = [i32]
    lib.lz_exact_count.restype = i64
    lib.lz_build_tables.argtypes = [vp, i32, vp, i64, vp, vp]
    lib.lz_build_tables.restype = None
    lib.lz_build_tables2.argtypes = [vp, i32, vp, i64, vp, vp, vp, i32]
    lib.lz_build_tables2.restype = None
    lib.lz_spin.argtypes = [i64]
    lib.lz_spin.restype = ctypes.c_uint64
    lib.lz_expand_rows.argtypes = [vp, vp, i64, i64, vp, i32, i32]
    lib.lz_expand_rows.restype = None
    return lib


def expand_rows(coded: np.ndarray, out: np.ndarray, N: int, modes: np.ndarray, neg_float: int) -> np.ndarray:
    """``lz_expand_rows``: the output words of rows with ``modes`` (checked: 0, 1, 2) from their coded words
    (docs/FORMAT.md section 3.1; :func:`lutzip.codec.rows.expand` is the same in numpy). ``coded`` and ``out``
    C-contiguous uint8 or uint16, of one dtype, of the right sizes (the caller checks)."""
    modes = np.ascontiguousarray(modes, np.uint8)
    if len(modes):
        lib().lz_expand_rows(_ptr(coded) if coded.size else None, _ptr(out), len(modes), int(N), _ptr(modes),
                             int(out.dtype.itemsize == 1), int(neg_float))
    return out


def _load():
    return cbuild.load_kernel("fastdec", "the C decoder", SOURCE, FLAGS, _build, _configure, _compiler(),
                              None if sys.byteorder == "little" else
                              "a big-endian host (the kernel reads little-endian words)")


def lib():
    """The loaded C library (built on first call), or ``None`` when it cannot be built (:func:`why_not`)."""
    return cbuild.load_once(_state, _lock, _load)


def available() -> bool:
    """Whether the C decoder can be used."""
    return lib() is not None


def why_not():
    """Why the C decoder is not used (a short sentence), or ``None`` when it is."""
    lib()
    return _state["why"]


# ----------------------------------------------------------------------------------------------- tables
_table_cache: dict = {}
#: id(TableSet) -> (weak reference, word width, classes, LUT3 bytes, kernel tables): a table set seen again is
#: checked by identity and equality (no hashing); a changed or new object goes through the content cache
_by_object: dict = {}


def combined_table(tables: TableSet):
    """The kernel's tables of a table set (validated when first seen): ``(buf, mode, lut3k, cls, L, pointers)``.

    ``buf`` holds the combined table ``T`` (room for 4096 entries, the first ``2^L`` used) and then ``lut3k``.
    ``T`` has ``2^L`` entries (``L`` = longest class code, at least :data:`MIN_L`), one per ``L``-bit prefix:
    the symbol's length (``tot``; ``adv``, what the lane loop adds to the bit position, is ``tot`` too, or ADV_SLOW
    for a slow symbol),
    flags (slow, invalid prefix, LUT) with the class number in the upper 4 bits, the shift ``sh = 64 - c - k``
    that leaves the symbol's code and index bits of a 64-bit window (``x >> sh = code << k | index``) and the
    param added to that: the LUT3 offset or RANGE base minus ``code << k`` (modulo 2^32), so that the kernel's
    value is one shift and one add (no bit-field extract). Slow entries have ``sh = 63`` and param 0.
    When the table set has LUT classes, RANGE classes (and zero runs of one word) that fit are copied into
    the kernel's own LUT3 ``lut3k`` (8192 entries) as LUT classes. ``mode`` is :data:`MODE_LUT` or
    :data:`MODE_RANGE` when the other kind weighs at most 1/64 of the code space (its symbols, zero runs of
    more than one word and invalid prefixes take the slow branch), else :data:`MODE_MIX`. ``cls`` holds the
    kind, ``k``, param and ``c`` of each class (4 x 16 int32) for the slow branch and the exact decoder.
    """
    return _hit(tables)[:6]


def _hit(tables: TableSet):
    """:func:`combined_table`'s cache entry (its tuple, then the LUT3 copy and the kernel mode)."""
    classes, lut3b = tuple(tables.classes), tables.lut3.tobytes()
    two = None if tables.lens_b is None else (tuple(int(v) for v in tables.lens_b), int(tables.follow))
    m = _by_object.get(id(tables))
    if m is not None and m[0]() is tables and m[1] == tables.word_bits and m[2] == classes and m[3] == lut3b \
            and m[5] == two:
        return m[4]             # the same object, unchanged: no hashing of its classes
    # the classes' fields as one flat tuple (kind, k, param, c of each, padded to 16: the kernel's cls array):
    # hashed in C, not by ClassSpec.__hash__
    pad = (0,) * (16 - len(classes))
    flat = (tuple(cl.kind for cl in classes) + pad + tuple(cl.k for cl in classes) + pad +
            tuple(cl.param for cl in classes) + pad + tuple(cl.c for cl in classes) + pad)
    key = (tables.word_bits, flat, lut3b, two)
    hit = _table_cache.get(key)
    if hit is None:
        hit = _build_combined(tables, key)
    if len(_by_object) > 256:
        _by_object.clear()
    _by_object[id(tables)] = (weakref.ref(tables), key[0], classes, lut3b, hit, two)   # hit keeps the LUT3 copy alive
    return hit


#: ``$LUTZIP_FASTDEC_LOOP=single`` (read at import) makes the kernel use the loop of one symbol a step for every
#: table set (for measurements)
FORCE_SINGLE = os.environ.get("LUTZIP_FASTDEC_LOOP") == "single"


def kernel_mode(tables: TableSet) -> int:
    """The ``mode`` argument of the kernel for a table set: its fast-path mode, its lane loop << 2 and, for the
    zero-first loop, the k of its zero run << 4 (:data:`FORCE_SINGLE`: the fast-path mode alone)."""
    return _mode_of(_hit(tables))


def _mode_of(hit) -> int:
    return hit[1] | (hit[7] & TWO_STATES) if FORCE_SINGLE else hit[7]


LOOP_NAMES = {LOOP_SINGLE: "one-symbol", LOOP_PAIR: "pair", LOOP_ZERO: "zero-first"}


def loop_summary(runs) -> str:
    """The lane loops the kernel takes for ``runs`` of ``(tables, words)``: e.g. ``"pair loop, 4 lanes: 100 %"``
    (shares of the words, largest first)."""
    lb, words = lib(), {}
    for tables, n in runs:
        m = kernel_mode(tables)
        loop = (m >> 2 & 3) | (4 if m & TWO_STATES else 0)     # | 4: the loops of two code tables
        words[loop] = words.get(loop, 0) + n
    total = sum(words.values()) or 1
    return "; ".join(f"{'two-state ' if k & 4 else ''}{LOOP_NAMES[k & 3]} loop, {lb.lz_loop_lanes(k)} lanes: "
                     f"{100 * v / total:.0f} %" for k, v in sorted(words.items(), key=lambda kv: -kv[1]))


#: the kernel tables' buffers are cut from slabs of this many (one zeroed allocation: a fresh table set's buffer
#: costs no clearing of its own, and the pages it never writes are never touched: 24 us a set with np.zeros here)
_SLAB_BUFS = 64
_slab = {"arr": None, "next": 0}


def _zeroed_buf():
    """A zeroed buffer of one table set's kernel tables (``T_ENTRIES`` entries, then the kernel's LUT3)."""
    size = T_ENTRIES * ENTRY_DTYPE.itemsize + 2 * KERNEL_LUT3
    with _lock:
        if _slab["arr"] is None or _slab["next"] >= _SLAB_BUFS:
            _slab["arr"], _slab["next"] = np.zeros((_SLAB_BUFS, size), np.uint8), 0
        buf = _slab["arr"][_slab["next"]]
        _slab["next"] += 1
    return buf


def _build_combined(tables: TableSet, key):
    """The kernel's tables of a table set not seen before (:func:`combined_table`), cached under ``key`` (word
    width, the classes' fields as :func:`_hit` flattens them, LUT3 bytes): built
    by the C library's ``lz_build_tables`` (:func:`kernel_tables_py` is its reference in the tests)."""
    tables.validate()
    classes = tables.classes
    cls1 = np.array(key[1], np.int32)
    cls = cls1.reshape(4, 16)       # pointers from the 1-D array: __array_interface__ of a 2-D one took 44 us here
    lut3 = np.array(tables.lut3, np.uint16)       # a copy the cache owns: its pointer stays valid
    lb = lib()
    two = key[3]
    if lb is not None:
        # two code tables: a buffer of its own (room for the state-B table at B_OFF; the gap is never written)
        buf = _zeroed_buf() if two is None else np.zeros(_two_buf_size(), np.uint8)
        ptrs = (_ptr(buf), _ptr(lut3) if lut3.size else None, _ptr(cls1))     # each _ptr 4-12 us here: once
        info = (ctypes.c_int64 * 3)()
        if two is None:
            lb.lz_build_tables(ptrs[2], len(classes), ptrs[1], lut3.size, ptrs[0], info)
        else:
            lens_b = np.zeros(16, np.int32)
            lens_b[:len(two[0])] = two[0]
            lb.lz_build_tables2(ptrs[2], len(classes), ptrs[1], lut3.size, ptrs[0], info, _ptr(lens_b), two[1])
        L, mode, kmode = info[0], info[1], info[2]
        t0 = T_ENTRIES * ENTRY_DTYPE.itemsize
        lut3k = buf[t0:t0 + 2 * KERNEL_LUT3].view(np.uint16)
    else:
        buf, mode, lut3k, L, kmode = kernel_tables_py(tables)
        ptrs = (_ptr(buf), _ptr(lut3) if lut3.size else None, _ptr(cls1))
    if len(_table_cache) > 256:
        _table_cache.clear()
    _table_cache[key] = hit = (buf, mode, lut3k, cls, L, ptrs, lut3, kmode)
    return hit


def _two_buf_size() -> int:
    return (B_OFF + T_ENTRIES) * ENTRY_DTYPE.itemsize


def kernel_tables_py(tables: TableSet):
    """The kernel's tables of a valid table set in Python: ``(buf, mode, lut3k, L, kernel mode)`` (see
    :func:`combined_table`; the reference of the C library's ``lz_build_tables`` and, for a set with two code
    tables, ``lz_build_tables2``: the state-B table at entry :data:`B_OFF`)."""
    two = tables.lens_b is not None
    L = max(tables.max_code_len, MIN_L)
    classes = tables.classes
    n3 = len(tables.lut3)
    lut3k = np.zeros(KERNEL_LUT3, np.uint16)            # copied behind T below
    lut3k[:n3] = tables.lut3
    has_lut = any(cl.kind == LUT for cl in classes)
    as_lut = {j: cl.param for j, cl in enumerate(classes) if cl.kind == LUT}
    free = n3
    if has_lut:
        for j in sorted(range(len(classes)), key=lambda j: (classes[j].c, j)):
            cl = classes[j]
            if cl.kind == RANGE or (cl.kind == ZRUN and cl.k == 0):
                size = 1 << cl.k if cl.kind == RANGE else 1
                if free + size <= KERNEL_LUT3:
                    lut3k[free:free + size] = cl.param + np.arange(size) if cl.kind == RANGE else 0
                    as_lut[j] = free
                    free += size
    fast_range = [j for j, cl in enumerate(classes)
                  if j not in as_lut and (cl.kind == RANGE or (cl.kind == ZRUN and cl.k == 0))]
    w_lut = sum(2.0 ** -classes[j].c for j in as_lut)
    w_range = sum(2.0 ** -classes[j].c for j in fast_range)
    if w_lut == 0:
        mode = MODE_RANGE
    elif w_range == 0:
        mode = MODE_LUT
    elif min(w_lut, w_range) <= 1 / 64:
        mode = MODE_LUT if w_lut > w_range else MODE_RANGE
    else:
        mode = MODE_MIX
    # the lane loop: zero-first table sets (code 0 is one bit, the zero run of one word) count zero bits
    # two symbols a window where they are short, else one
    j0 = min(range(len(classes)), key=lambda j: (classes[j].c, j))
    c0 = classes[j0]
    fast = set(as_lut) if mode == MODE_LUT else set(fast_range) if mode == MODE_RANGE else set(as_lut) | set(fast_range)
    w_fast = sum(2.0 ** -classes[j].c for j in fast)
    zk = 0
    if two:
        # the two-state zero-first loop: the one-word zero run is code 0 of one bit in both states (no class before it
        # of length 1 in either); its entries of more than 33 - ZMAX bits are slow
        lb = [int(v) for v in tables.lens_b]
        zs = c0.kind == ZRUN and c0.k == 0 and c0.c == 1 and lb[j0] == 1 and all(lb[j] != 1 for j in range(j0))
        # else the two-state pair loop where the one-table pair loop would be taken (by the state-A codes)
        pair = w_fast >= PAIR_MIN_FAST and \
            sum(2.0 ** -classes[j].c * classes[j].total for j in fast) <= PAIR_MEAN_BITS * w_fast
        loop, long_bits = (LOOP_ZERO, 33 - ZMAX) if zs else (LOOP_PAIR if pair else LOOP_SINGLE, 64)
    elif c0.c == 1 and c0.kind == ZRUN and c0.k <= ZERO_MAX_K:
        # the window keeps 33 bits after the zero words: 33 - ZMAX after up to ZMAX one-bit zeros, 32 - k after a run
        zk = c0.k
        loop, long_bits = LOOP_ZERO, 33 - ZMAX if zk == 0 else 32 - zk
    elif w_fast >= PAIR_MIN_FAST and sum(2.0 ** -classes[j].c * classes[j].total for j in fast) <= PAIR_MEAN_BITS * w_fast:
        loop, long_bits = LOOP_PAIR, 64
    else:
        loop, long_bits = LOOP_SINGLE, 64
    buf = np.zeros(_two_buf_size() if two else T_ENTRIES * ENTRY_DTYPE.itemsize + 2 * KERNEL_LUT3, np.uint8)
    # canonical codes: in (c, j) order each class's prefixes are the next 2^(L - c) entries, then the invalid ones;
    # each entry packed into 64 bits (tot, flags, sh, adv, then param) and repeated over its class's prefixes.
    # Two code tables: the same for the state-B lengths (classes of length 0 have no code there) at entry B_OFF,
    # every valid entry with SH_NEXT_B in sh when its class is in the follow mask
    states = [[cl.c for cl in classes]] + ([[int(v) for v in tables.lens_b]] if two else [])
    follow = int(tables.follow) if two else 0
    from lutzip.codec.states import canonical_codes
    for st, lens in enumerate(states):
        codes = canonical_codes(lens)
        order = sorted((j for j in range(len(classes)) if lens[j]), key=lambda j: (lens[j], j))
        packed, counts = [], []
        for j in order:
            cl = classes[j]
            c, tot = lens[j], lens[j] + cl.k
            nb = SH_NEXT_B << 16 if (follow >> j) & 1 else 0
            lut_fast = j in as_lut and mode != MODE_RANGE
            range_fast = j in fast_range and mode != MODE_LUT
            if two and tot > long_bits:     # the two-state zero-first loop's window is too short for it: slow
                e = tot | ((j << 4) | F_SLOW) << 8 | 63 << 16 | ADV_SLOW << 24
            elif two and cl.kind == ZRUN and cl.k <= ZRUN2_MAX_K and loop != LOOP_PAIR \
                    and not (loop == LOOP_ZERO and cl.k == 0 and (lut_fast or range_fast)):
                # (the two-state zero-first loop takes a zero word as a fast value 0: no branch after ZMAX zeros)
                # a short zero run (the two-state loop takes it branch-free): value = its index, F_LONG as F_RUN
                e = tot | ((j << 4) | F_RUN) << 8 | (64 - tot) << 16 | tot << 24 | ((-(codes[j] << cl.k)) % (1 << 32)) << 32
            elif lut_fast or range_fast:
                # x >> (64 - total) = code << k | index (a zero run of k = 0: code), so base + index is that plus
                # base - (code << k), modulo 2^32
                base = as_lut[j] if lut_fast else (cl.param if cl.kind == RANGE else 0)
                flags = (j << 4) | (F_LUT if lut_fast and mode == MODE_MIX else 0) | (F_LONG if tot > long_bits else 0)
                e = tot | flags << 8 | (64 - tot) << 16 | tot << 24 | ((base - (codes[j] << cl.k)) % (1 << 32)) << 32
            else:       # sh 63: the loop reads lut3k[0 or 1] before it leaves for the slow branch; F_LUT on a slow
                # zero run of k > 0: the zero-first loop writes it itself
                run = (loop == LOOP_ZERO or two) and cl.kind == ZRUN and cl.k > 0
                e = tot | ((j << 4) | F_SLOW | (F_LUT if run else 0)) << 8 | 63 << 16 | ADV_SLOW << 24
            packed.append(e | nb)
            counts.append(1 << (L - c))
        packed.append(1 | (F_INVALID | F_SLOW) << 8 | 63 << 16 | ADV_SLOW << 24)
        counts.append((1 << L) - sum(counts))
        t0 = 8 * B_OFF * st
        buf[t0:t0 + (8 << L)].view("<u8")[:] = np.repeat(np.array(packed, np.uint64), counts)
    t0 = T_ENTRIES * ENTRY_DTYPE.itemsize
    buf[t0:t0 + 2 * KERNEL_LUT3].view(np.uint16)[:] = lut3k
    return buf, mode, lut3k, L, mode | loop << 2 | zk << 4 | (TWO_STATES if two else 0)


# ----------------------------------------------------------------------------------------------- entry points
class _Err(threading.local):
    def __init__(self):
        self.err = np.zeros(2, np.int64)
        self.ptr = _ptr(self.err)


_err = _Err()


def decode(payload_words: np.ndarray, stripe_words: np.ndarray, numel: int, stripe_len: int, tables: TableSet,
           out: np.ndarray, crcs=None, threads: int = 1):
    """Decode stripes into ``out`` with the C kernel (callers check the arguments: :func:`decode_stripes`).

    Parameters
    ----------
    payload_words : numpy.ndarray of uint32
        The stripes back to back (C-contiguous).
    stripe_words : numpy.ndarray of uint32
        Words of each stripe (header included, >= 2; C-contiguous); they must tile ``payload_words`` (the
        kernel checks: :data:`ERR_INDEX`).
    numel, stripe_len : int
        Words of the tensor (or stream) and words per stripe; ``len(stripe_words) == ceil(numel / stripe_len)``.
    tables : TableSet
        The table set (validated here the first time it is seen).
    out : numpy.ndarray
        ``numel`` C-contiguous uint16 (or, for 8-bit tables, uint8) words.
    crcs : numpy.ndarray of uint32, optional
        The stripes' CRC32s: checked as each stripe is decoded; the first mismatch wins over any decode error.
    threads : int
        Threads to split the stripes over (contiguous ranges of stripes; the GIL is released).

    Returns
    -------
    (rc, stripe, word) : tuple of int
        ``rc`` 0, an ``ERR_*`` decode error code, :data:`ERR_CRC` or :data:`ERR_INDEX`; the stripe and the
        decoded word within it.
    """
    lb = lib()
    hit = _hit(tables)
    L, ptrs, mode = hit[4], hit[5], _mode_of(hit)
    if crcs is not None and (crcs.dtype != np.uint32 or not crcs.flags.c_contiguous):
        crcs = np.ascontiguousarray(crcs, np.uint32)
    e = _err
    rc = lb.lz_decode(_ptr(payload_words), len(payload_words), _ptr(stripe_words), len(stripe_words),
                      stripe_len, numel, ptrs[0], L, mode, ptrs[1], len(tables.lut3), ptrs[2], _ptr(out),
                      out.dtype.itemsize == 1, None if crcs is None else _ptr(crcs), threads, e.ptr)
    if rc:
        return rc, int(e.err[0]), int(e.err[1])
    return 0, 0, 0


_as_char, _addressof = ctypes.c_char.from_buffer, ctypes.addressof


def _addr(a: np.ndarray) -> int:
    """The address of a non-empty C-contiguous array's data (``cbuild.ptr``): through ctypes' buffer export when
    the array is writable (about a third of the time of ``__array_interface__``, which builds a dict each call)."""
    if a.flags.writeable:
        try:
            return _addressof(_as_char(a))
        except (TypeError, ValueError, BufferError):
            pass
    return _ptr(a)


def decode_many(rows: list, threads: int = 1, payload=None):
    """Decode several runs of stripes in one call of the C library (``lz_decode_many``).

    Parameters
    ----------
    rows : list of tuple
        Per run: ``(payload_words, stripe_words, numel, stripe_len, tables, out, crcs)`` as for :func:`decode`
        (every array C-contiguous of its dtype: uint32 payload, stripe words and CRCs (or ``None``), uint16 or
        uint8 ``out``; the caller checks).
    threads : int
        Threads for each run's stripes.
    payload : numpy.ndarray of uint32, optional
        C-contiguous: then each row's ``payload_words`` is a ``(lo, hi)`` pair of word indices, the run being
        ``payload[lo:hi]`` (one address look-up for all runs instead of one each).

    Returns
    -------
    (rc, run, stripe, word) : tuple of int
        ``rc`` 0 or the first failing run's code (as :func:`decode`), that run's index, stripe and word.
    """
    lb = lib()
    st = np.zeros(len(rows), STREAM_DTYPE)
    keep = []
    recs = []
    if payload is not None:
        n_pay = len(payload)
        base = _ptr(payload) if n_pay else 0
    seen = {}                           # id -> hit of the table sets of this call (alive in rows until it returns)
    for pw, sw, numel, S, tables, out, crcs in rows:
        hit = seen.get(id(tables))
        if hit is None:
            hit = seen[id(tables)] = _hit(tables)
        keep.append(hit)
        ptrs = hit[5]
        if payload is None:
            n_pw = len(pw)
            a_pw = _addr(pw) if n_pw else 0
        else:                           # payload[lo:hi] as slicing clamps it (nonnegative lo, hi)
            lo, hi = min(pw[0], n_pay), min(pw[1], n_pay)
            n_pw = max(0, hi - lo)
            a_pw = base + 4 * lo if n_pw else 0
        recs.append((a_pw, n_pw, _addr(sw) if len(sw) else 0, len(sw), S, numel, ptrs[0],
                     hit[4], _mode_of(hit), ptrs[1] or 0, len(tables.lut3), ptrs[2], _addr(out) if out.size else 0,
                     out.dtype.itemsize == 1, 0 if crcs is None or not len(crcs) else _addr(crcs)))
    if recs:
        st[:] = recs
    err = np.zeros(3, np.int64)
    rc = lb.lz_decode_many(_ptr(st), len(rows), threads, _ptr(err))
    del keep
    return (rc, int(err[2]), int(err[0]), int(err[1])) if rc else (0, 0, 0, 0)


def cycles_per_second(clock=None, n: int = 20_000_000) -> float:
    """The core's cycles per second as ``clock`` sees them: ``n`` dependent additions (one cycle each) in C,
    timed (median of 5); ``clock`` defaults to :func:`time.thread_time`. For cycles-per-word figures on a
    machine without hardware counters (a virtual machine); ``nan`` without the C library."""
    import time
    lb = lib()
    if lb is None:
        return float("nan")
    clock = clock or time.thread_time
    ts = []
    for _ in range(5):
        t = clock()
        lb.lz_spin(n)
        ts.append(clock() - t)
    return n / float(np.median(ts))


def crc32(data, crc: int = 0) -> int:
    """``zlib.crc32(data, crc)`` with the C library (bytes-like or a contiguous numpy array)."""
    lb = lib()
    a = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else np.ascontiguousarray(data).view(np.uint8)
    if lb is None:
        import zlib
        return zlib.crc32(a, crc)
    return int(lb.lz_crc32(_ptr(a) if a.size else None, a.size, crc & 0xFFFFFFFF))


def first_bad_crc(payload_words: np.ndarray, stripe_words, crcs) -> int:
    """The first stripe whose CRC32 differs from ``crcs``, or -1 (all match).

    Parameters
    ----------
    payload_words : numpy.ndarray of uint32
        The stripes back to back.
    stripe_words : array of int
        Words of each stripe (header included); must tile ``payload_words``.
    crcs : array of uint32
        The recorded CRC32 of each stripe's little-endian bytes.
    """
    sw = np.ascontiguousarray(stripe_words, np.int64)
    crcs = np.ascontiguousarray(crcs, np.uint32)
    if len(sw) != len(crcs) or int(sw.sum()) > len(payload_words) or (len(sw) and int(sw.min()) < 0):
        raise ValueError("stripe word counts and CRCs do not fit the payload")
    starts = np.zeros(len(sw), np.int64)
    if len(sw):
        starts[1:] = np.cumsum(sw)[:-1]
    words = np.ascontiguousarray(payload_words, np.uint32)
    lb = lib()
    if lb is None:
        import zlib
        for s in range(len(sw)):
            if zlib.crc32(words[starts[s]:starts[s] + sw[s]].astype("<u4").tobytes()) != int(crcs[s]):
                return s
        return -1
    if not len(sw):
        return -1
    return int(lb.lz_crc_check(_ptr(words), _ptr(starts), _ptr(sw), len(sw), _ptr(crcs)))
