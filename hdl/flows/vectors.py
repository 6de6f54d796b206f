"""Test vectors of the decoder core: packets, table writes and the words the core must output for them.

* :class:`Vectors` -- table writes, packets (one stripe each) and the expected output rows of
  :mod:`lutzip.hdl.flows.model`, plus the core parameters they are meant for.
* :func:`make_vectors` -- encode words with a table set (optionally corrupting the stripes).
* :func:`random_tableset`, :func:`random_stripe` -- random valid table sets and random-symbol stripes.

How the vectors are presented to the core cycle by cycle (gaps, backpressure, resets) is the stimulus of
:mod:`lutzip.hdl.flows.simulate`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lutzip.codec import bitstream as bs
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet
from lutzip.errors import LutzError
from lutzip.hdl.core.ports import CoreParams
from lutzip.hdl.flows.model import expected_outputs, split_stripes, table_ops


@dataclass
class Vectors:
    """What goes into the core and what must come out.

    Attributes
    ----------
    table_ops : list of (sel, addr, data)
        Table writes before the stream.
    stripes : list of numpy.ndarray
        The packets (``uint32``, header first).
    expected : numpy.ndarray
        ``(n, 3)`` rows ``(data, last, user)`` (:func:`lutzip.hdl.flows.model.expected_outputs`).
    params : dict
        The core parameters (:class:`lutzip.hdl.core.ports.CoreParams` fields) the vectors are for.
    """

    table_ops: list
    stripes: list
    expected: np.ndarray
    params: dict = field(default_factory=lambda: CoreParams().as_dict())

    @property
    def n_in(self) -> int:
        """Number of input words."""
        return sum(len(s) for s in self.stripes)

    @classmethod
    def from_packets(cls, packets, ops, **params) -> "Vectors":
        """Vectors for hand-made ``packets`` after the table writes ``ops``, for the core with ``params``."""
        p = CoreParams.make(params)
        stripes = [np.asarray(s, np.uint32) for s in packets]
        return cls(list(ops), stripes, expected_outputs(stripes, ops, p.L, p.LUT3_DEPTH, p.W, p.STATES), p.as_dict())


def make_vectors(ts: TableSet, words, stripe_len: int, L: int = 8, lut3_depth: int = 4096, corrupt=None,
                 n_lut3: int | None = None, **params) -> Vectors:
    """Encode ``words`` with ``ts`` into stripes of ``stripe_len`` words and build the vectors.

    Parameters
    ----------
    ts : TableSet
        The table set (its word width is the core's ``W``).
    words : array_like
        The weights.
    stripe_len : int
        Words per stripe.
    L, lut3_depth : int
        The core's LUT1 address bits and LUT3 entries.
    corrupt : callable, optional
        ``corrupt(stripes) -> stripes`` applied to the encoded stripes (error injection); the expected outputs
        follow whatever it returns.
    n_lut3 : int, optional
        Overrides the config write (to provoke ``ERR_LUT3_RANGE``).
    **params
        Further core parameters (``FRONT``, ``STEP``, ``LUT1_RAM``, ``STATES``; ``W`` the table set's unless
        given). A set with two code tables (format version 5) is coded by :mod:`lutzip.codec.states` and needs
        ``STATES=2``.
    """
    words = np.asarray(words).reshape(-1)
    if words.size == 0:
        raise LutzError("no words to encode")
    if ts.n_states == 2:
        from lutzip.codec import states
        payload, sw, _ = states._encode2(words, stripe_len, ts)
        ref = np.zeros(words.size, np.uint16)
        starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))[:-1]]).astype(np.int64)
        rc, _, _ = states.decode_stripes2(payload, starts, sw, stripe_len, words.size, ts, ref)
        if rc:
            raise LutzError(f"reference codec does not decode the two-table vectors (error {rc})")
    else:
        payload, sw = bs.encode_stripes(words, ts, stripe_len)
        ref = bs.decode_stripes(payload, sw, words.size, stripe_len, ts)
    stripes = split_stripes(payload, sw)
    if not np.array_equal(ref, words.astype(np.uint16)):
        raise LutzError("reference codec does not round-trip the vectors")
    if corrupt is not None:
        stripes = [np.asarray(s, np.uint32) for s in corrupt([s.copy() for s in stripes])]
    return Vectors.from_packets(stripes, table_ops(ts, L, n_lut3, params.get("STATES", 1)),
                                **{"L": L, "W": ts.word_bits, "LUT3_DEPTH": lut3_depth, **params})


def container_vectors(c, tensor, L: int = 8, lut3_depth: int = 4096, **params) -> Vectors:
    """The vectors of the stream that holds ``tensor`` of container ``c`` (its stripes as written, e.g. by
    ``lutzip compress --states 2``): the table writes of its table set, then its packets.

    Parameters
    ----------
    c : lutzip.codec.container.Container
        The container.
    tensor : str or int
        A tensor's name or index.
    L, lut3_depth, **params
        The core's parameters (``W`` the table set's unless given: 8-bit words come out of a 16-bit core
        zero-extended; ``STATES=2`` for a set with two code tables).
    """
    t = c.tensors[tensor] if isinstance(tensor, int) else next((x for x in c.tensors if x.name == tensor), None)
    if t is None:
        raise LutzError(f"no tensor {tensor!r} in the container")
    s = c.stream_of(t)
    ts = c.tables[s.table]
    stripes = split_stripes(c.stripe_payload(s), s.stripe_words)
    return Vectors.from_packets(stripes, table_ops(ts, L, None, params.get("STATES", 1)),
                                **{"L": L, "W": ts.word_bits, "LUT3_DEPTH": lut3_depth, **params})


def random_tableset(rng, W=16, L=8, max_classes=16, complete=True, lut_kmax=6, zrun_kmax=8) -> TableSet:
    """A random valid table set with codes of at most ``L`` bits (``complete=False`` may leave prefixes unused)."""
    from lutzip.codec.huffman import limited_code_lengths

    n = int(rng.integers(1, max_classes + 1))
    lens = limited_code_lengths([int(f) for f in rng.integers(1, 1000, n)], L)
    if not complete and n > 1 and rng.random() < 0.7:
        drop = int(rng.integers(n))
        lens = lens[:drop] + lens[drop + 1:]
        n -= 1
    lut3 = []
    classes = []
    for c in lens:
        kind = int(rng.choice([LUT, RANGE, ZRUN], p=[0.45, 0.4, 0.15]))
        if kind == LUT:
            k = int(rng.integers(0, lut_kmax + 1))
            classes.append(ClassSpec(c, LUT, k, len(lut3)))
            lut3 += [int(v) for v in rng.integers(0, 1 << W, 1 << k)]
        elif kind == RANGE:
            k = int(rng.integers(0, W + 1))
            base = int(rng.integers(0, 1 << (W - k))) << k
            classes.append(ClassSpec(c, RANGE, k, base))
        else:
            k = int(rng.choice([int(rng.integers(0, zrun_kmax + 1)), 16], p=[0.9, 0.1]))
            classes.append(ClassSpec(c, ZRUN, k, 0))
    return TableSet(W, classes, np.array(lut3, np.uint16)).validate()


def random_stripe(rng, ts: TableSet, n_max: int, zrun_max=None):
    """One stripe packet of random symbols of ``ts`` (any class, any index) and the words it decodes to.

    Returns ``(packet, words)``; ``n`` (the header count) is at most ``n_max`` and at least 1. With two code tables
    (``ts.lens_b``, format version 5) each symbol is of a class with a code in the state it is read in, and the next
    state follows ``ts.follow``.
    """
    lens = [[cl.c for cl in ts.classes]]
    codes = [ts.codes()]
    if ts.lens_b is not None:
        from lutzip.codec.states import canonical_codes
        lens.append(list(ts.lens_b))
        codes.append(canonical_codes(ts.lens_b))
    acc, nbits, words, state = 0, 0, [], 0
    while len(words) < n_max:
        if ts.lens_b is None:
            j = int(rng.integers(len(ts.classes)))
        else:
            j = int(rng.choice([i for i in range(len(ts.classes)) if lens[state][i]]))
        cl = ts.classes[j]
        idx = int(rng.integers(0, 1 << cl.k))
        if cl.kind == LUT:
            out = [int(ts.lut3[cl.param + idx])]
        elif cl.kind == RANGE:
            out = [cl.param + idx]
        else:
            room = n_max - len(words) if zrun_max is None else min(zrun_max, n_max - len(words))
            if idx + 1 > room:
                idx = int(rng.integers(0, min(room, 1 << cl.k)))
            out = [0] * (idx + 1)
        c = lens[state][j]
        acc = (acc << (c + cl.k)) | (codes[state][j] << cl.k) | idx
        nbits += c + cl.k
        words += out
        if ts.lens_b is not None:
            state = (ts.follow >> j) & 1
        if rng.random() < 1.0 / max(4, n_max // 2) and words:
            break
    pad = -nbits % 32 if nbits else 32
    acc <<= pad
    nw = (nbits + pad) // 32
    payload = [(acc >> (32 * (nw - 1 - i))) & 0xFFFFFFFF for i in range(nw)]
    return [bs.STRIPE_MARKER | (len(words) - 1)] + payload, words
