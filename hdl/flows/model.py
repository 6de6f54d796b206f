"""The hardware reference model: what the decoder core outputs for a stream of packets after table writes.

The core's tables are rebuilt from the table writes themselves (:func:`tables_from_ops`: out-of-range
addresses ignored, the configured LUT3 size clipped to ``LUT3_DEPTH``, data cut to the written fields), so
the model follows whatever a test writes; each packet (one AXI-Stream packet = one stripe of docs/FORMAT.md)
is then decoded by the reference decoder kernel of :mod:`lutzip.codec.bitstream` (the bit format's normative
code). The errors only the software checks (leftover words, padding bits) are not errors for the core, which
discards the rest of the packet through ``tlast``.

Output rows are ``(data, last, user)``: the decoded words with ``last`` on each stripe's final word; a stripe
the core rejects gives the words decoded before the error and one marker row ``(code, 1, 1)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lutzip.codec import bitstream as bs
from lutzip.codec.tables import SEL_LUT1, SEL_LUT2, SEL_LUT3, TableSet, expand_hw
from lutzip.errors import LutzError

SEL_CONFIG = 3   #: tbl_sel of the config registers (address 0: number of valid LUT3 entries)


def table_ops(ts: TableSet, L: int = 8, n_lut3: int | None = None, states: int = 1, mirror: int = 0) -> list:
    """The core's table writes ``(sel, addr, data)`` for ``ts``: LUT1, LUT2, LUT3, then the config word (and with
    ``mirror`` config word 1).

    Parameters
    ----------
    ts : TableSet
        The table set.
    L : int
        The core's LUT1 address bits.
    n_lut3 : int, optional
        The LUT3 size written to the config register (default ``len(ts.lut3)``; smaller provokes
        ``ERR_LUT3_RANGE``).
    states : int
        The core's ``STATES`` (2: a two-table set's LUT1 of ``2^(L+1)`` entries, :func:`expand_hw`).
    mirror : int
        The core's ``MIRROR``: 1 appends config word 1, ``(3, 1, 1)`` for a table set of 8-bit words, else
        ``(3, 1, 0)`` (the row stripes' negation width, docs/CORE.md section 7; a core with ``MIRROR=0`` ignores the
        address, so the writes of ``mirror=0`` are those of before).
    """
    ops = expand_hw(ts, L, states)
    ops.append((SEL_CONFIG, 0, len(ts.lut3) if n_lut3 is None else int(n_lut3)))
    if mirror:
        ops.append((SEL_CONFIG, 1, int(ts.word_bits == 8)))
    return ops


@dataclass
class CoreTables:
    """The core's table contents after a list of writes, in the reference kernel's array form."""

    L: int
    lut1: np.ndarray
    kinds: np.ndarray
    ks: np.ndarray
    params: np.ndarray
    lut3: np.ndarray
    #: ``STATES=2``: the next state after a symbol of each class (16 entries), else ``None``
    nxt: np.ndarray | None = None


def tables_from_ops(ops, L: int = 8, LUT3_DEPTH: int = 4096, W: int = 16, STATES: int = 1) -> CoreTables:
    """What the core's tables hold after the writes ``ops`` (list of ``(sel, addr, data)``).

    With ``STATES=2`` LUT1 has ``2^(L+1)`` entries of 16 bits (bit 15: the next state); the core takes the next
    state from the entry, the reference kernel from the class, so the valid entries of a class must agree on it
    (:class:`LutzError` otherwise: such writes are no table set's)."""
    two = STATES == 2
    lut1 = np.zeros(1 << (L + 1 if two else L), np.int64)
    lut2 = np.zeros(16, np.int64)
    lut3 = {}
    n3 = 0
    for sel, addr, data in ops:
        if sel == SEL_LUT1 and addr < len(lut1):
            lut1[addr] = data & (0xFFFF if two else 0x7FFF)
        elif sel == SEL_LUT2 and addr < 16:
            lut2[addr] = data & 0x7FFFFF
        elif sel == SEL_LUT3 and addr < LUT3_DEPTH:
            lut3[addr] = data & ((1 << W) - 1)
        elif sel == SEL_CONFIG and addr == 0:
            n3 = min(data, LUT3_DEPTH)  # the core clips the configured size to its RAM
    l3 = np.array([lut3.get(a, 0) for a in range(n3)], np.uint16)
    nxt = None
    if two:
        nxt = np.zeros(16, np.int64)
        valid = (lut1 >> 14) & 1 == 1
        for j in range(16):
            bits = set(((lut1[valid & (((lut1 >> 10) & 15) == j)] >> 15) & 1).tolist())
            if len(bits) > 1:
                raise LutzError(f"LUT1 entries of class {j} disagree on the next state")
            nxt[j] = bits.pop() if bits else 0
        lut1 = lut1 & 0x7FFF
    return CoreTables(L, lut1, (lut2 >> 21) & 3, (lut2 >> 16) & 31, lut2 & 0xFFFF, l3, nxt)


def stripe_output(stripe, tables: CoreTables):
    """What the core outputs for one packet: ``(words, code)``, the decoded words and the error code (0: none).

    Raises
    ------
    LutzError
        For an empty packet (a packet has at least its header word).
    """
    stripe = np.asarray(stripe, np.uint32)
    if len(stripe) == 0:
        raise LutzError("empty packet: a stripe has at least a header word")
    hdr = int(stripe[0])
    if hdr >> 16 != bs.STRIPE_MARKER >> 16:
        return np.zeros(0, np.uint16), bs.ERR_BAD_HEADER
    n = (hdr & 0xFFFF) + 1
    out = np.zeros(n, np.uint16)
    err = np.zeros(3, np.int64)
    t = tables
    if t.nxt is None:
        rc = bs._decode_kernel(stripe, np.zeros(1, np.int64), np.array([len(stripe)], np.int64), n, n, t.lut1, t.L,
                               t.kinds, t.ks, t.params, t.lut3, out, err)
    else:   # two code tables: the reference kernel of format version 5
        from lutzip.codec._statesnumba import _decode2_kernel
        rc = _decode2_kernel(stripe, np.zeros(1, np.int64), np.array([len(stripe)], np.int64), n, n, t.lut1, t.L,
                             t.nxt, t.kinds, t.ks, t.params, t.lut3, out, err)
    if rc in (bs.ERR_OK, bs.ERR_LEFTOVER, bs.ERR_PADDING):
        return out, 0
    return out[:int(err[2])], int(rc)


def expected_outputs(stripes, ops, L: int = 8, LUT3_DEPTH: int = 4096, W: int = 16, STATES: int = 1) -> np.ndarray:
    """``(n, 3)`` rows ``(data, last, user)`` the core outputs for ``stripes`` after the table writes ``ops``.

    Parameters
    ----------
    stripes : list of sequences of int
        The packets, in order (one stripe each, header first).
    ops : list of (sel, addr, data)
        The table writes before the stream (e.g. :func:`table_ops`).
    L, LUT3_DEPTH, W, STATES : int
        The core's parameters.
    """
    tables = tables_from_ops(ops, L, LUT3_DEPTH, W, STATES)
    rows = []
    for s in stripes:
        words, code = stripe_output(s, tables)
        r = np.zeros((len(words) + (1 if code else 0), 3), np.int64)
        r[:len(words), 0] = words
        if code:
            r[-1] = (code, 1, 1)
        elif len(r):
            r[-1, 1] = 1
        rows.append(r)
    return np.concatenate(rows) if rows else np.zeros((0, 3), np.int64)


def split_stripes(payload, stripe_words) -> list:
    """Cut back-to-back stripes (an ``encode_stripes`` payload) into packets, one ``uint32`` array each."""
    ends = np.cumsum(np.asarray(stripe_words, np.int64))
    if not len(ends):
        return []
    return [np.asarray(s, np.uint32) for s in np.split(np.asarray(payload, np.uint32), ends[:-1])]
