"""Table sets: the class definitions and LUT3 that drive decoding (docs/FORMAT.md, section 2).

A :class:`TableSet` is what the container stores; :func:`expand_hw` turns it into the LUT1/LUT2/LUT3 words the
hardware decoder's table-write port takes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lutzip.errors import TableError

#: Class kinds (LUT2 ``kind`` field).
LUT, RANGE, ZRUN = 0, 1, 2
KIND_NAMES = {LUT: "LUT", RANGE: "RANGE", ZRUN: "ZRUN"}

MAX_CLASSES = 16
MAX_CODE_LEN = 12
MAX_LUT3 = 4096
MAX_SYMBOL_BITS = 32
MAX_LUT_K = 12
MAX_ZRUN_K = 16
WORD_BITS = (8, 16)

#: Hardware sel codes of the table-write port.
SEL_LUT1, SEL_LUT2, SEL_LUT3 = 0, 1, 2


@dataclass(frozen=True)
class ClassSpec:
    """One class: code length ``c``, ``kind``, index length ``k`` and ``param`` (offset or base)."""

    c: int
    kind: int
    k: int
    param: int = 0

    @property
    def total(self) -> int:
        """Bits of one symbol of this class (code + index)."""
        return self.c + self.k


@dataclass
class TableSet:
    """A word width, up to 16 classes, and the LUT3 values they index."""

    word_bits: int
    classes: list
    lut3: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint16))
    #: format version 5 (:mod:`lutzip.codec.states`): the classes' code lengths in state B (0: no code there), or
    #: ``None`` for one code table; the classes' ``c`` are then the state-A lengths
    lens_b: tuple | None = None
    #: version 5: bit ``j`` set: the symbol after a class-``j`` symbol is read with the state-B codes
    follow: int = 0

    def __post_init__(self):
        self.lut3 = np.asarray(self.lut3, dtype=np.uint16).reshape(-1)
        self.classes = [c if isinstance(c, ClassSpec) else ClassSpec(*c) for c in self.classes]

    @property
    def max_code_len(self) -> int:
        if self.lens_b is not None:              # two code tables: the longest code of either
            return max(max(c.c for c in self.classes), max(self.lens_b))
        return max(c.c for c in self.classes)

    @property
    def n_states(self) -> int:
        """Code tables of the set: 1, or 2 (format version 5, :mod:`lutzip.codec.states`)."""
        return 1 if self.lens_b is None else 2

    def validate(self) -> "TableSet":
        """Raise :class:`TableError` unless every rule of docs/FORMAT.md section 1-2 holds."""
        w = self.word_bits
        if w not in WORD_BITS:
            raise TableError(f"word width {w} is not 8 or 16")
        n = len(self.classes)
        if not 1 <= n <= MAX_CLASSES:
            raise TableError(f"{n} classes: a table set has 1 to {MAX_CLASSES}")
        n3 = len(self.lut3)
        if n3 > MAX_LUT3:
            raise TableError(f"LUT3 has {n3} entries, more than {MAX_LUT3}")
        if n3 and int(self.lut3.max()) >= (1 << w):
            raise TableError(f"LUT3 value {int(self.lut3.max())} does not fit {w} bits")
        kraft = 0                   # sum of 2^(MAX_CODE_LEN - c): exact in integers (c <= MAX_CODE_LEN)
        for j, cl in enumerate(self.classes):
            if not 1 <= cl.c <= MAX_CODE_LEN:
                raise TableError(f"class {j}: code length {cl.c} outside 1..{MAX_CODE_LEN}")
            if cl.k < 0 or cl.total > MAX_SYMBOL_BITS:
                raise TableError(f"class {j}: code {cl.c} + index {cl.k} bits exceeds {MAX_SYMBOL_BITS}")
            kraft += 1 << (MAX_CODE_LEN - cl.c)
            if cl.kind == LUT:
                if cl.k > MAX_LUT_K:
                    raise TableError(f"class {j}: LUT index of {cl.k} bits (max {MAX_LUT_K})")
                if cl.param < 0 or cl.param + (1 << cl.k) > n3:
                    raise TableError(
                        f"class {j}: LUT3 range {cl.param}..{cl.param + (1 << cl.k) - 1} beyond LUT3 size {n3}")
            elif cl.kind == RANGE:
                if cl.k > w:
                    raise TableError(f"class {j}: RANGE index of {cl.k} bits exceeds word width {w}")
                if not 0 <= cl.param < (1 << w) or cl.param % (1 << cl.k):
                    raise TableError(f"class {j}: RANGE base {cl.param:#x} not a {w}-bit multiple of 2^{cl.k}")
            elif cl.kind == ZRUN:
                if cl.k > MAX_ZRUN_K:
                    raise TableError(f"class {j}: zero-run index of {cl.k} bits (max {MAX_ZRUN_K})")
                if cl.param != 0:
                    raise TableError(f"class {j}: zero-run class with non-zero param {cl.param}")
            else:
                raise TableError(f"class {j}: unknown kind {cl.kind}")
        if kraft > 1 << MAX_CODE_LEN:
            raise TableError("class code lengths break the Kraft inequality "
                             f"(sum 2^-c = {kraft / (1 << MAX_CODE_LEN):.4f} > 1)")
        if self.lens_b is not None or self.follow:
            from lutzip.codec.states import validate_states
            validate_states(self)
        return self

    def codes(self) -> list:
        """Canonical class codes, one int per class (MSB-first, ``c`` bits)."""
        order = sorted(range(len(self.classes)), key=lambda j: (self.classes[j].c, j))
        codes = [0] * len(self.classes)
        code, prev = -1, 0
        for j in order:
            c = self.classes[j].c
            code = 0 if code < 0 else (code + 1) << (c - prev)
            prev = c
            codes[j] = code
        return codes

    def lut1(self, L: int | None = None) -> np.ndarray:
        """LUT1 as a 2^L array of packed entries ``valid|class|c|c+k`` (0 = invalid prefix)."""
        if self.lens_b is not None:
            _one_table_only(self)
        L = self.max_code_len if L is None else L
        if self.max_code_len > L:
            raise TableError(f"codes of {self.max_code_len} bits do not fit a LUT1 of {L} address bits")
        table = np.zeros(1 << L, np.uint32)
        for j, (cl, code) in enumerate(zip(self.classes, self.codes())):
            lo = code << (L - cl.c)
            hi = (code + 1) << (L - cl.c)
            table[lo:hi] = (1 << 14) | (j << 10) | (cl.c << 6) | cl.total
        return table

    def lut2(self) -> np.ndarray:
        """LUT2: 16 packed entries ``kind|k|param`` (unused classes are 0)."""
        table = np.zeros(MAX_CLASSES, np.uint32)
        for j, cl in enumerate(self.classes):
            table[j] = (cl.kind << 21) | (cl.k << 16) | (cl.param & 0xFFFF)
        return table

    def describe(self) -> list:
        """A list of dicts, one per class, for reports and ``lutzip info --json``."""
        out = []
        for j, (cl, code) in enumerate(zip(self.classes, self.codes())):
            out.append({"class": j, "kind": KIND_NAMES.get(cl.kind, "?"), "code": format(code, f"0{cl.c}b"),
                        "code_len": cl.c, "index_len": cl.k, "param": cl.param})
        if self.lens_b is not None:              # two code tables (version 5): the state-B code, the next state
            from lutzip.codec.states import canonical_codes
            for d, cb, code in zip(out, self.lens_b, canonical_codes(self.lens_b)):
                d.update(code_b=format(code, f"0{cb}b") if cb else "", next_state="B" if self.follow >> d["class"] & 1
                         else "A")
        return out


def lut1_fields(entry):
    """Unpack a LUT1 entry into ``(valid, class, c, total)``."""
    entry = int(entry)
    return (entry >> 14) & 1, (entry >> 10) & 0xF, (entry >> 6) & 0xF, entry & 0x3F


def lut2_fields(entry):
    """Unpack a LUT2 entry into ``(kind, k, param)``."""
    entry = int(entry)
    return (entry >> 21) & 0x3, (entry >> 16) & 0x1F, entry & 0xFFFF


def expand_hw(tables: TableSet, L: int = 8, states: int = 1):
    """Table-write operations for a decoder with a LUT1 of ``L`` address bits.

    Parameters
    ----------
    tables : TableSet
        The table set.
    L : int
        The decoder's LUT1 address bits (the state bit not counted).
    states : int
        Code tables the decoder reads (its ``STATES``): 1, or 2 (format version 5). A set with two code tables
        needs 2; a one-table set is written the same way for either.

    Returns a list of ``(sel, addr, data)`` tuples: all of LUT1, all 16 LUT2 entries, then LUT3. A two-table set's
    LUT1 (``states=2``) is ``2^(L+1)`` entries at ``state << L | prefix``, each ``next|valid|class|c|c+k`` with the
    next state in bit 15 (docs/FORMAT.md section 2.1).
    """
    tables.validate()
    if states not in (1, 2):
        from lutzip.errors import UnsupportedError
        raise UnsupportedError(f"a decoder of {states!r} code tables: 1 or 2")
    if tables.lens_b is not None:
        if states != 2:
            _one_table_only(tables)
        if tables.max_code_len > L:
            raise TableError(f"codes of {tables.max_code_len} bits do not fit a LUT1 of {L} address bits")
        from lutzip.codec.states import state_lut1
        lut1 = state_lut1(tables, L)
        for j in range(len(tables.classes)):
            if tables.follow >> j & 1:
                lut1[((lut1 >> 14) & 1).astype(bool) & (((lut1 >> 10) & 0xF) == j)] |= 1 << 15
        ops = [(SEL_LUT1, a, int(v)) for a, v in enumerate(lut1)]
    else:
        ops = [(SEL_LUT1, a, int(v)) for a, v in enumerate(tables.lut1(L))]
    ops += [(SEL_LUT2, a, int(v)) for a, v in enumerate(tables.lut2())]
    ops += [(SEL_LUT3, a, int(v)) for a, v in enumerate(tables.lut3)]
    return ops


def _one_table_only(tables: TableSet):
    from lutzip.errors import UnsupportedError
    raise UnsupportedError("the table set has two code tables (format version 5, `--states 2`): the hardware core "
                           "and the one-table decoders do not decode it; re-compress without --states")


def raw_tableset(word_bits: int) -> TableSet:
    """The trivial table set: one raw RANGE class of ``word_bits`` bits (1 bit of code overhead)."""
    return TableSet(word_bits, [ClassSpec(1, RANGE, word_bits, 0)])
