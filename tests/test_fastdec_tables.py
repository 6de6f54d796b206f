"""The kernel's tables built by the C library (``lz_build_tables``) equal those of the Python reference
(``fastdec.kernel_tables_py``) byte for byte, with the same fast-path mode, lane loop and zero-run k, on random
table sets of every kind mix, zero-first sets, short-symbol (pair loop) sets and the encoder's tables; and the
table sets :func:`fastdec.decode_many` sees are looked up once per call."""
import zlib

import numpy as np
import pytest

from lutzip.codec import fastdec
from lutzip.codec.bitstream import decode_stripes, encode_stripes
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet
from test_fastdec import random_tableset, random_words, zero_first_tableset

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(not fastdec.available(), reason=f"no C decoder: {fastdec.why_not()}")]


def _c_and_py(ts):
    fastdec._table_cache.clear()
    fastdec._by_object.clear()
    buf, mode, lut3k, cls, L, _ptrs, _lut3, kmode = fastdec._hit(ts)
    ref = fastdec.kernel_tables_py(ts)
    return (buf, mode, lut3k, L, kmode), ref, cls


@pytest.mark.parametrize("seed", range(30))
def test_c_tables_equal_the_python_reference(seed):
    rng = np.random.default_rng(31000 + seed)
    kinds = [(LUT, RANGE, ZRUN), (RANGE,), (LUT,), (LUT, RANGE), (RANGE, ZRUN), (ZRUN,), (LUT, ZRUN)][seed % 7]
    loops = set()
    for i in range(60):
        if i % 3 == 0:
            ts = zero_first_tableset(rng, kinds=kinds)
        else:
            ts = random_tableset(rng, kinds=kinds, L=int(rng.integers(1, 13)) if i % 2 else None)
        (buf, mode, lut3k, L, kmode), ref, cls = _c_and_py(ts)
        assert (L, mode, kmode) == (ref[3], ref[1], ref[4]), (seed, i, ts)
        assert np.array_equal(buf, ref[0]), (seed, i, ts)
        assert np.array_equal(lut3k, ref[2])
        n = len(ts.classes)
        assert cls[:, :n].tolist() == [[cl.kind for cl in ts.classes], [cl.k for cl in ts.classes],
                                       [cl.param for cl in ts.classes], [cl.c for cl in ts.classes]]
        assert not cls[:, n:].any()
        loops.add(kmode >> 2 & 3)
    if seed % 7 == 0:
        assert loops >= {fastdec.LOOP_ZERO, fastdec.LOOP_SINGLE}


def test_c_tables_of_each_loop_and_mode():
    """Hand-made sets: each lane loop, each fast-path mode (LUT, RANGE, MIX), a RANGE class copied into the kernel's
    LUT3 and one too large for it, a zero run of k 0..5 as code 0, an incomplete code (invalid prefixes)."""
    lut3 = np.arange(0, 3000, 3, dtype=np.uint16)
    sets = [
        TableSet(16, [ClassSpec(2, RANGE, 8, 0), ClassSpec(1, ZRUN, k, 0), ClassSpec(2, RANGE, 16, 0)])
        for k in range(6)] + [
        TableSet(16, [ClassSpec(1, RANGE, 8, 0), ClassSpec(2, RANGE, 9, 512), ClassSpec(2, RANGE, 16, 0)]),
        TableSet(16, [ClassSpec(1, RANGE, 14, 0), ClassSpec(2, RANGE, 12, 0), ClassSpec(2, RANGE, 16, 0)]),
        TableSet(16, [ClassSpec(1, LUT, 9, 0), ClassSpec(2, RANGE, 12, 4096), ClassSpec(3, RANGE, 16, 0)], lut3),
        TableSet(16, [ClassSpec(1, LUT, 9, 0), ClassSpec(3, RANGE, 12, 4096), ClassSpec(7, RANGE, 4, 16)], lut3),
        TableSet(16, [ClassSpec(2, LUT, 9, 0), ClassSpec(1, RANGE, 12, 4096), ClassSpec(8, LUT, 3, 8)], lut3),
        TableSet(8, [ClassSpec(3, LUT, 2, 0), ClassSpec(3, RANGE, 8, 0), ClassSpec(12, ZRUN, 16, 0)], lut3[:4]),
        # zero-first: symbols of 33 - ZMAX bits (fast) and one more (F_LONG: they leave the loop's window)
        TableSet(16, [ClassSpec(1, ZRUN, 0, 0), ClassSpec(2, RANGE, 8, 0), ClassSpec(4, RANGE, 16, 0),
                      ClassSpec(10, RANGE, 16, 0), ClassSpec(9, RANGE, 16, 0), ClassSpec(3, RANGE, 8, 256)]),
    ]
    modes = set()
    for ts in sets:
        (buf, mode, lut3k, L, kmode), ref, _cls = _c_and_py(ts.validate())
        assert (L, mode, kmode) == (ref[3], ref[1], ref[4]) and np.array_equal(buf, ref[0]), ts
        modes.add(mode)
    e = fastdec._hit(sets[-1])[0][:8 << 10].view(fastdec.ENTRY_DTYPE)
    assert {int(t) for t in e["tot"][e["flags"] & fastdec.F_LONG != 0]} == {26}
    assert modes == {fastdec.MODE_LUT, fastdec.MODE_RANGE, fastdec.MODE_MIX}


def test_decode_many_agrees_with_decode():
    """Runs of stripes sharing table sets (the same object, an equal copy, a different set) decode in one call as
    each alone does; a changed table set after the call is seen (not served from a stale lookup)."""
    rng = np.random.default_rng(3)
    a = random_tableset(rng, W=16)
    b = TableSet(16, list(a.classes), a.lut3.copy())
    c = zero_first_tableset(rng, W=16)
    rows, want = [], []
    for ts in (a, b, a, c, a, c):
        words = random_words(rng, ts, int(rng.integers(1, 3000)))
        payload, sw = encode_stripes(words, ts, 256)
        out = np.empty(len(words), np.uint16)
        rows.append((payload, sw, len(words), 256, ts, out, None))
        want.append(words)
    assert fastdec.decode_many(rows) == (0, 0, 0, 0)
    for r, w in zip(rows, want):
        assert np.array_equal(r[5], w)
    # the same object changed in place: its tables are built again
    words = random_words(rng, c, 2000)
    payload, sw = encode_stripes(words, c, 256)
    c.lut3 = (c.lut3 ^ 1).astype(np.uint16) if len(c.lut3) else c.lut3
    c.classes = c.classes[::-1]
    c.validate()
    out = np.empty(len(words), np.uint16)
    got = fastdec.decode_many([(payload, sw, len(words), 256, c, out, None)])
    ref = np.empty(len(words), np.uint16)
    try:
        decode_stripes(payload, sw, len(words), 256, c, out=ref, kernel="numba")
        assert got == (0, 0, 0, 0) and np.array_equal(out, ref)
    except Exception:
        assert got[0] != 0


def test_decode_many_word_ranges_of_one_payload():
    """``decode_many(rows, payload=...)`` with ``(lo, hi)`` word ranges decodes as the rows of ``payload[lo:hi]``
    arrays do: the same words, the same CRC error and stripe of a damaged run, a range past the payload's end
    clamped as slicing clamps it (the kernel then reports ERR_INDEX); read-only stripe words and CRCs (the
    address look-up's fallback) and writable ones alike."""
    rng = np.random.default_rng(17)
    sets = [random_tableset(rng, W=16), zero_first_tableset(rng, W=16)]
    parts, metas, at = [], [], 0
    for i in range(5):
        ts = sets[i % 2]
        words = random_words(rng, ts, int(rng.integers(1, 3000)))
        payload, sw = encode_stripes(words, ts, 256)
        starts = np.concatenate([[0], np.cumsum(sw, dtype=np.int64)])
        crcs = np.array([zlib.crc32(payload[starts[j]:starts[j + 1]].astype("<u4").tobytes())
                         for j in range(len(sw))], np.uint32)
        if i % 2:
            sw, crcs = sw.copy(), crcs.copy()
            sw.flags.writeable = crcs.flags.writeable = False
        parts.append(payload)
        metas.append((at, at + len(payload), sw, crcs, ts, words))
        at += len(payload)
    buf = np.concatenate(parts)

    def both(edit=lambda m: m, data=buf):
        res = []
        for ranged in (False, True):
            outs, rows = [], []
            for lo, hi, sw, crcs, ts, words in map(edit, metas):
                out = np.empty(len(words), np.uint16)
                outs.append(out)
                rows.append(((lo, hi) if ranged else data[lo:hi], sw, len(words), 256, ts, out, crcs))
            res.append((fastdec.decode_many(rows, payload=data if ranged else None), outs))
        (rc_a, outs_a), (rc_b, outs_b) = res
        assert rc_a == rc_b
        if rc_a == (0, 0, 0, 0):
            assert all(np.array_equal(a, b) for a, b in zip(outs_a, outs_b))
        return rc_a, outs_a

    rc, outs = both()
    assert rc == (0, 0, 0, 0) and all(np.array_equal(o, m[5]) for o, m in zip(outs, metas))
    bad = buf.copy()
    bad[metas[3][0] + 5] ^= 1 << 7
    rc, _ = both(data=bad)
    assert rc[:2] == (fastdec.ERR_CRC, 3)
    ro = buf.copy()
    ro.flags.writeable = False
    assert both(data=ro)[0] == (0, 0, 0, 0)
    past = len(buf) + 10
    # the last run to past the end: clamped to the end, its own words (it decodes)
    assert both(edit=lambda m: (m[0], past, *m[2:]) if m is metas[-1] else m)[0] == (0, 0, 0, 0)
    # run 2 to past the end: the words of runs 2..4, which its stripes do not tile
    assert both(edit=lambda m: (m[0], past, *m[2:]) if m is metas[2] else m)[0][:2] == (fastdec.ERR_INDEX, 2)
    # run 1 wholly past the end: no words
    assert both(edit=lambda m: (past, past, *m[2:]) if m is metas[1] else m)[0][:2] == (fastdec.ERR_INDEX, 1)


def test_decode_many_looks_each_table_set_up_once(monkeypatch):
    """One call of decode_many looks each table set object up once (then by identity), and decodes every run."""
    rng = np.random.default_rng(5)
    a, c = random_tableset(rng, W=16), zero_first_tableset(rng, W=16)
    b = TableSet(16, list(a.classes), a.lut3.copy())        # equal to a, another object
    rows, want = [], []
    for ts in (a, c, a, b, a, c):
        words = random_words(rng, ts, int(rng.integers(1, 2000)))
        payload, sw = encode_stripes(words, ts, 256)
        rows.append((payload, sw, len(words), 256, ts, np.empty(len(words), np.uint16), None))
        want.append(words)
    calls = []
    real = fastdec._hit
    monkeypatch.setattr(fastdec, "_hit", lambda ts: calls.append(id(ts)) or real(ts))
    assert fastdec.decode_many(rows) == (0, 0, 0, 0)
    assert sorted(calls) == sorted({id(a), id(b), id(c)})
    assert all(np.array_equal(r[5], w) for r, w in zip(rows, want))
