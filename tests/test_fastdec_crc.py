"""The stripe CRCs checked inside the C kernel's lane loops (the CRC cursor of _fastdec.c): every damaged stripe
is reported, whichever lane loop decodes it, wherever in the stripe the damage is (the first 16 bytes, a folded
block, the last 0..12 bytes the loop leaves to crc_next), with 1-3 threads, short stripes (checked directly) and
long ones, the carry-less multiply path and the table-only path; the first damaged stripe wins."""
import zlib

import numpy as np
import pytest

from lutzip.codec import fastdec
from lutzip.codec.bitstream import decode_stripes, encode_stripes
from lutzip.codec.tables import RANGE, ZRUN, ClassSpec, TableSet
from lutzip.errors import CorruptError

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(not fastdec.available(), reason=f"no C decoder: {fastdec.why_not()}")]

#: one table set per lane loop (as in test_fastdec.test_lane_loop_choice)
LOOPS = {
    "zero-first": TableSet(16, [ClassSpec(2, RANGE, 8, 0), ClassSpec(1, ZRUN, 0, 0), ClassSpec(2, RANGE, 16, 0)]),
    "pair": TableSet(16, [ClassSpec(1, RANGE, 8, 0), ClassSpec(2, RANGE, 9, 512), ClassSpec(2, RANGE, 16, 0)]),
    "one-symbol": TableSet(16, [ClassSpec(1, RANGE, 14, 0), ClassSpec(2, RANGE, 12, 0), ClassSpec(2, RANGE, 16, 0)]),
}
LOOP_OF = {"zero-first": fastdec.LOOP_ZERO, "pair": fastdec.LOOP_PAIR, "one-symbol": fastdec.LOOP_SINGLE}


def _words(rng, name, n):
    if name == "zero-first":
        w = rng.integers(0, 256, n).astype(np.uint16)
        w[rng.random(n) < 0.7] = 0
        big = rng.random(n) < 0.05
        w[big] = rng.integers(0, 65536, int(big.sum()))
        return w
    if name == "pair":
        w = rng.integers(0, 256, n).astype(np.uint16)
        mid = rng.random(n) < 0.3
        w[mid] = rng.integers(512, 1024, int(mid.sum()))
        big = rng.random(n) < 0.02
        w[big] = rng.integers(0, 65536, int(big.sum()))
        return w
    return rng.integers(0, 16384, n).astype(np.uint16)


def _crcs(payload, starts):
    return np.array([zlib.crc32(payload[starts[j]:starts[j + 1]].astype("<u4").tobytes())
                     for j in range(len(starts) - 1)], np.uint32)


def _decode(payload, sw, n, S, ts, crcs, threads):
    try:
        decode_stripes(payload, sw, n, S, ts, name="t", out=np.empty(n, np.uint16), kernel="c", crcs=crcs,
                       threads=threads)
        return None
    except CorruptError as e:
        return str(e)


def _flip_offsets(rng, nbytes):
    """Byte offsets of a stripe of nbytes to damage: the first 16 bytes, a folded block, the tail the loop leaves
    (the last nbytes % 16 bytes) and the last byte."""
    offs = [int(rng.integers(0, min(16, nbytes))), nbytes - 1]
    if nbytes >= 48:
        offs.append(int(rng.integers(16, (nbytes & ~15) - 16 + 1)))
    if nbytes % 16:
        offs.append(int(rng.integers(nbytes & ~15, nbytes)))
    return offs


@pytest.mark.parametrize("name", list(LOOPS))
@pytest.mark.parametrize("S", [3, 40, 300, 4096])
def test_every_damaged_stripe_is_caught(name, S):
    """One bit flipped in one stripe at a time, in every stripe of the stream, at the places of _flip_offsets:
    the kernel reports exactly that stripe (1, 2 and 3 threads); the undamaged stream decodes to its words."""
    lb = fastdec.lib()
    ts = LOOPS[name].validate()
    assert fastdec.kernel_mode(ts) >> 2 & 3 == LOOP_OF[name]
    rng = np.random.default_rng(S * 7 + len(name))
    n_stripes = 31 if S < 4096 else 9
    n = S * (n_stripes - 1) + int(rng.integers(1, S + 1))
    words = _words(rng, name, n)
    payload, sw = encode_stripes(words, ts, S)
    starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
    crcs = _crcs(payload, starts)
    sizes = 4 * sw.astype(np.int64)
    if S >= 300:
        assert sizes.min() >= 64          # stripes the loops fold (the cursor's blocks), not only direct checks
    modes = [1, 0] if lb.lz_crc_mode(-1) else [None]
    try:
        for mode in modes:
            if mode is not None:
                lb.lz_crc_mode(mode)
            for threads in (1, 2, 3):
                out = decode_stripes(payload, sw, n, S, ts, out=np.empty(n, np.uint16), kernel="c", crcs=crcs,
                                     threads=threads)
                assert np.array_equal(out, words)
            for s in range(len(sw)):
                for off in _flip_offsets(rng, int(sizes[s])):
                    bad = payload.copy()
                    b = bad.view(np.uint8)
                    b[4 * starts[s] + off] ^= np.uint8(1 << int(rng.integers(0, 8)))
                    threads = 1 + (s + off) % 3
                    msg = _decode(bad, sw, n, S, ts, crcs, threads)
                    assert msg == f"tensor 't', stripe {s}: CRC mismatch, the payload is corrupt", \
                        (name, S, mode, s, off, threads, msg)
    finally:
        if modes != [None]:
            lb.lz_crc_mode(1)


@pytest.mark.parametrize("name", list(LOOPS))
def test_the_first_damaged_stripe_wins(name):
    """Several damaged stripes (one of them with a decode error and a matching CRC before them): the first whose
    CRC differs is reported, with 1-3 threads; the numba path agrees."""
    ts = LOOPS[name].validate()
    rng = np.random.default_rng(11)
    S = 500
    n = S * 40
    words = _words(rng, name, n)
    payload, sw = encode_stripes(words, ts, S)
    starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
    crcs = _crcs(payload, starts)
    bad = payload.copy()
    bad[starts[2]] = np.uint32(0x12340000)                   # stripe 2: bad header, CRC recorded to match
    crcs[2] = zlib.crc32(bad[starts[2]:starts[3]].astype("<u4").tobytes())
    for s in (37, 21, 30):
        bad[starts[s] + int(rng.integers(1, sw[s]))] ^= np.uint32(1 << int(rng.integers(0, 32)))
    for threads in (1, 2, 3):
        assert _decode(bad, sw, n, S, ts, crcs, threads) == \
            "tensor 't', stripe 21: CRC mismatch, the payload is corrupt"
    with pytest.raises(CorruptError, match="stripe 21: CRC mismatch"):
        decode_stripes(bad, sw, n, S, ts, name="t", kernel="numba", crcs=crcs)
