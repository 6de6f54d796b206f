"""The table-set reader's checks (container._read_tables: per-class entries, Kraft sum, word width, LUT3 size)
against TableSet.validate: the same table sets accepted, the same message for every refused one."""
import numpy as np
import pytest

from lutzip.codec import container as ct
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet
from lutzip.errors import TableError


def _blob(w, classes, lut3):
    out = bytearray([w, len(classes)]) + ct._varint(len(lut3))
    for cl in classes:
        out += bytes([cl.c | (cl.kind << 4), cl.k]) + ct._varint(cl.param)
    out += np.asarray(lut3, "<u2" if w == 16 else "u1").tobytes()
    return bytes(out)


def _random_class(rng, w, n3):
    kind = int(rng.choice([LUT, RANGE, ZRUN, 3, 15], p=[0.3, 0.4, 0.2, 0.05, 0.05]))
    c = int(rng.choice([0, 1, 2, 3, 5, 8, 11, 12, 13, 15], p=[.03, .1, .2, .2, .15, .1, .1, .06, .03, .03]))
    k = int(rng.integers(0, 21)) if rng.random() < 0.9 else int(rng.integers(0, 256))
    if kind == LUT:
        param = int(rng.integers(0, n3 + 2)) if rng.random() < 0.9 else int(rng.integers(0, 1 << 20))
    elif kind == RANGE:
        kk = min(k, 16)
        param = (int(rng.integers(0, 1 << (w + 1))) >> kk) << kk if rng.random() < 0.85 else int(rng.integers(0, 1 << 17))
    else:
        param = 0 if rng.random() < 0.9 else int(rng.integers(1, 300))
    return ClassSpec(c, kind, k, param)


def _valid_class(rng, w, n3):
    c = int(rng.integers(4, 13))            # 16 classes of >= 4 bits keep the Kraft sum
    kinds = [RANGE, ZRUN] + ([LUT] if n3 else [])
    kind = kinds[int(rng.integers(0, len(kinds)))]
    if kind == LUT:
        k = int(rng.integers(0, min(12, n3.bit_length() - 1) + 1))
        return ClassSpec(c, LUT, k, int(rng.integers(0, n3 - (1 << k) + 1)))
    if kind == RANGE:
        k = int(rng.integers(0, min(w, 32 - c) + 1))
        return ClassSpec(c, RANGE, k, int(rng.integers(0, 1 << (w - k))) << k)
    return ClassSpec(c, ZRUN, int(rng.integers(0, min(16, 32 - c) + 1)), 0)


def _reference(ts):
    try:
        TableSet(ts.word_bits, ts.classes, ts.lut3).validate()
        return None
    except TableError as e:
        return f"table set 0: {e}"


@pytest.mark.parametrize("seed", range(6))
def test_read_tables_accepts_and_refuses_as_validate(seed):
    rng = np.random.default_rng(seed)
    seen = {None: 0, "bad": 0}
    for trial in range(800):
        if trial % 3 == 0:
            ct._classes.clear()             # cold class entries as well as cached ones
        w = int(rng.choice([8, 16]))
        n3 = int(rng.choice([0, 1, 4, 64, 300, 4096]))
        lut3 = rng.integers(0, 1 << w, n3).astype(np.uint16)
        # mostly small codes so the Kraft sum is sometimes kept; sometimes many long ones
        if trial % 2:
            classes = [_random_class(rng, w, n3) for _ in range(int(rng.integers(1, 17)))]
        else:                               # a valid table set, then sometimes one class replaced at random
            classes = [_valid_class(rng, w, n3) for _ in range(int(rng.integers(1, 17)))]
            if rng.random() < 0.4:
                classes[int(rng.integers(0, len(classes)))] = _random_class(rng, w, n3)
        ts = TableSet(w, classes, lut3)
        want = _reference(ts)
        r = ct._Reader(_blob(w, classes, lut3) + b"\0" * int(rng.integers(0, 6)))
        r.n_tables = 1
        if want is None:
            got = ct._read_tables(r)[0]
            assert got.word_bits == w and got.classes == classes and got.lut3.dtype == np.uint16
            assert np.array_equal(got.lut3, lut3)
            got.validate()
            seen[None] += 1
        else:
            with pytest.raises(TableError) as e:
                ct._read_tables(r)
            assert str(e.value) == want
            seen["bad"] += 1
    assert seen[None] > 50 and seen["bad"] > 50, seen


def test_each_rule_alone_is_refused():
    """One valid table set, then each rule of validate broken by one change: every one refused by the reader."""
    lut3 = np.arange(16, dtype=np.uint16)
    good = [ClassSpec(1, ZRUN, 0, 0), ClassSpec(2, LUT, 4, 0), ClassSpec(3, RANGE, 8, 256), ClassSpec(3, RANGE, 16, 0)]
    r = ct._Reader(_blob(16, good, lut3))
    r.n_tables = 1
    assert ct._read_tables(r)[0].classes == good
    bad = {"code length": [ClassSpec(13, ZRUN, 0, 0)] + good[1:],
           "code length 0": [ClassSpec(0, ZRUN, 0, 0)] + good[1:],
           "exceeds 32": good[:3] + [ClassSpec(3, RANGE, 30, 0)],
           "LUT index": [good[0], ClassSpec(2, LUT, 13, 0)] + good[2:],
           "beyond LUT3": [good[0], ClassSpec(2, LUT, 4, 1)] + good[2:],
           "RANGE base": [good[0], good[1], ClassSpec(3, RANGE, 8, 255)] + good[3:],
           "RANGE 16 bits": [good[0], good[1], ClassSpec(3, RANGE, 8, 1 << 16)] + good[3:],
           "RANGE index": good[:3] + [ClassSpec(3, RANGE, 17, 0)],
           "zero-run index": [ClassSpec(1, ZRUN, 17, 0)] + good[1:],
           "zero-run param": [ClassSpec(1, ZRUN, 0, 1)] + good[1:],
           "kind": [ClassSpec(1, 3, 0, 0)] + good[1:],
           "Kraft": good + [ClassSpec(3, ZRUN, 0, 0)]}
    for what, classes in bad.items():
        r = ct._Reader(_blob(16, classes, lut3))
        r.n_tables = 1
        with pytest.raises(TableError):
            ct._read_tables(r)
    # 8-bit words: a RANGE base of 9 bits and a RANGE index of 9 bits are refused, 8 bits accepted
    for cl, ok in ((ClassSpec(2, RANGE, 0, 255), True), (ClassSpec(2, RANGE, 0, 256), False),
                   (ClassSpec(2, RANGE, 8, 0), True), (ClassSpec(2, RANGE, 9, 0), False)):
        r = ct._Reader(_blob(8, good[:2] + [cl], lut3))
        r.n_tables = 1
        if ok:
            ct._read_tables(r)
        else:
            with pytest.raises(TableError):
                ct._read_tables(r)
    r = ct._Reader(bytes([16, 0, 0]))          # no class at all
    r.n_tables = 1
    with pytest.raises(TableError, match="0 classes"):
        ct._read_tables(r)
