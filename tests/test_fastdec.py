"""The C stripe decoder (lutzip.codec.fastdec) against the numba reference decoder of lutzip.codec.bitstream:
the same words on random table sets and streams, the same error (code, stripe, word) on damaged stripes, the
same CRC verdicts as zlib, reads that stay inside the payload, and the numba fallback when there is no C kernel."""
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

from lutzip.codec import fastdec
from lutzip.codec.bitstream import decode_stripes, encode_stripes
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet
from lutzip.errors import CorruptError, DecodeError, UnsupportedError

pytestmark = pytest.mark.timeout(120)
#: the tests of the C kernel itself (the fallback tests run without it)
needs_c = pytest.mark.skipif(not fastdec.available(), reason=f"no C decoder: {fastdec.why_not()}")


# ------------------------------------------------------------------------------------------ random inputs
def random_tableset(rng, W=None, kinds=(LUT, RANGE, ZRUN), L=None):
    """A valid table set: a random (possibly incomplete) prefix code over 1..16 classes of random kinds."""
    W = W or int(rng.choice([8, 16]))
    L = L or int(rng.integers(1, 13))
    lengths = [0]
    n = int(rng.integers(1, 17))
    while len(lengths) < n:
        split = [i for i, c in enumerate(lengths) if c < L]
        if not split:
            break
        c = lengths.pop(int(rng.choice(split)))
        lengths += [c + 1, c + 1]
    lengths = [max(c, 1) for c in lengths]
    if len(lengths) > 1 and rng.random() < 0.3:
        lengths.pop(int(rng.integers(len(lengths))))
    n_lut3 = int(rng.choice([0, 1, 5, 64, 700, 4096] if len(kinds) > 1 else [1, 64, 4096])) if LUT in kinds else 0
    lut3 = rng.integers(0, 1 << W, n_lut3)
    classes = []
    for c in lengths:
        kind = int(rng.choice([k for k in kinds if k != LUT or n_lut3]))
        if kind == LUT:
            k = int(rng.integers(0, min(12, n_lut3.bit_length() - 1) + 1))
            classes.append(ClassSpec(c, LUT, k, int(rng.integers(0, n_lut3 - (1 << k) + 1))))
        elif kind == RANGE:
            k = int(rng.integers(0, W + 1))
            classes.append(ClassSpec(c, RANGE, k, int(rng.integers(0, 1 << (W - k))) << k))
        else:
            classes.append(ClassSpec(c, ZRUN, int(rng.choice([0, 0, 1, 3, 6, 16])), 0))
    return TableSet(W, classes, lut3.astype(np.uint16)).validate()


def random_words(rng, ts, n, zeros=0.5):
    """``n`` words that the table set covers, with runs of zeros when it can code 0."""
    vals = []
    for cl in ts.classes:
        if cl.kind == LUT:
            vals += [int(v) for v in ts.lut3[cl.param:cl.param + (1 << cl.k)]]
        elif cl.kind == RANGE:
            vals += [cl.param + int(i) for i in rng.integers(0, 1 << cl.k, 64)]
        else:
            vals.append(0)
    words = np.array(vals, np.uint16)[rng.integers(0, len(vals), n)]
    if 0 in vals and n:
        words[rng.random(n) < zeros] = 0
        if n > 50 and rng.random() < 0.5:         # a long run across stripes
            a = int(rng.integers(0, n - 1))
            words[a:a + int(rng.integers(1, n - a))] = 0
    return words


def both(payload, sw, n, S, ts, out8=False, threads=1, crcs=None):
    """``(numba result, C result)``: the words, or the DecodeError / CorruptError message."""
    res = []
    for kernel in ("numba", "c"):
        out = np.empty(n, np.uint8 if out8 else np.uint16)
        try:
            res.append(decode_stripes(payload, sw, n, S, ts, name="t", out=out, kernel=kernel,
                                      threads=threads if kernel == "c" else 1, crcs=crcs).copy())
        except (DecodeError, CorruptError) as e:
            res.append(f"{type(e).__name__}: {e}")
    return res


def same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return a.dtype == b.dtype and np.array_equal(a, b)


STRIPES = [1, 2, 3, 7, 32, 100, 1000, 4096, 65536]


# ------------------------------------------------------------------------------------------ valid streams
@needs_c
@pytest.mark.parametrize("seed", range(40))
def test_random_streams_agree_with_numba(seed):
    rng = np.random.default_rng(seed)
    ts = random_tableset(rng, W=8 if seed % 4 == 0 else None)
    S = STRIPES[seed % len(STRIPES)]
    shape = seed % 3                 # one stripe / whole stripes / a short last stripe
    n = {0: min(S, int(rng.integers(1, 5000))), 1: S * int(rng.integers(1, 6)),
         2: S * int(rng.integers(0, 4)) + int(rng.integers(1, S + 1))}[shape]
    n = min(n, 200_000)
    words = random_words(rng, ts, n, zeros=float(rng.random()))
    payload, sw = encode_stripes(words, ts, S)
    for out8 in ([False, True] if ts.word_bits == 8 else [False]):
        for threads in (1, 2, 3):
            ref, got = both(payload, sw, n, S, ts, out8=out8, threads=threads)
            assert not isinstance(ref, str) and np.array_equal(ref, words)
            assert same(ref, got), (seed, out8, threads)


@needs_c
@pytest.mark.parametrize("kinds", [(LUT,), (RANGE,), (ZRUN, RANGE), (LUT, RANGE), (LUT, RANGE, ZRUN)])
def test_every_kernel_mode_agrees(kinds):
    """LUT-only, RANGE-only and mixed table sets run the kernel's three fast-path modes (and the slow branch)."""
    modes = set()
    for seed in range(30):
        rng = np.random.default_rng(1000 + seed)
        ts = random_tableset(rng, kinds=kinds, W=16)
        modes.add(fastdec.combined_table(ts)[1])
        S = int(rng.choice([64, 4096]))
        words = random_words(rng, ts, int(rng.integers(1, 30000)))
        payload, sw = encode_stripes(words, ts, S)
        ref, got = both(payload, sw, len(words), S, ts)
        assert same(ref, got) and np.array_equal(ref, words), seed
    if kinds == (LUT, RANGE):
        assert len(modes) >= 2


@needs_c
def test_model_like_tables():
    """bf16-like (exponent classes with raw low bytes, LUT classes) and pruned int16-like (zero runs) data."""
    from lutzip.codec.encoder import greedy_tableset
    rng = np.random.default_rng(7)
    f = (rng.standard_normal(300_000) * 0.05).astype(np.float32)
    bf = (f.view(np.uint32) >> 16).astype(np.uint16)
    q = np.round(rng.standard_normal(300_000) * 300).astype(np.int16)
    q[rng.random(q.size) < 0.75] = 0
    for words in (bf, q.view(np.uint16)):
        ts = greedy_tableset(words, 16)
        payload, sw = encode_stripes(words, ts, 4096)
        ref, got = both(payload, sw, len(words), 4096, ts)
        assert np.array_equal(ref, words) and same(ref, got)


@needs_c
def test_zero_and_one_word_tensors():
    ts = TableSet(16, [ClassSpec(1, RANGE, 16, 0)])
    for n in (0, 1):
        words = np.arange(n, dtype=np.uint16)
        payload, sw = encode_stripes(words, ts, 4096)
        ref, got = both(payload, sw, n, 4096, ts)
        assert same(ref, got) and len(got) == n


@needs_c
@pytest.mark.parametrize("L", range(1, 13))
def test_every_table_width_runs_the_full_lane_loop(L):
    """Valid streams of enough stripes to fill every lane, for each table index width L (the lane loops have a
    copy for L = 8 and one for any L) and W 8 / 16 (uint8 and uint16 outputs): the C kernel's words equal numba's, and no stripe
    was decoded again by the exact decoder (a fast path that decodes wrong words is caught by the end checks
    and repaired by the exact decoder, so only this count shows it)."""
    lb = fastdec.lib()
    for W, out8 in ((16, False), (8, True), (8, False)):
        rng = np.random.default_rng(100 * L + W + out8)
        ts = random_tableset(rng, W=W, L=L)
        for _ in range(20):                             # a table set of exactly L bits (L is only the maximum)
            if ts.max_code_len == L:
                break
            ts = random_tableset(rng, W=W, L=L)
        S = int(rng.choice([7, 64, 300]))
        words = random_words(rng, ts, S * int(rng.integers(3 * fastdec.lib().lz_lanes(), 40)) + int(rng.integers(S)))
        payload, sw = encode_stripes(words, ts, S)
        out = np.empty(len(words), np.uint8 if out8 else np.uint16)
        lb.lz_exact_count(1)
        decode_stripes(payload, sw, len(words), S, ts, "t", out=out, kernel="c")
        assert lb.lz_exact_count(1) == 0, (L, W, out8)
        assert np.array_equal(out, words.astype(out.dtype)), (L, W, out8)


# ------------------------------------------------------------------------------------------ pair loop
def _check_fast_loop(lb, words, ts, S, seed):
    """``words`` coded in stripes of ``S`` decode to themselves in the C kernel (8- and 16-bit output, 1 and 2
    threads) as in numba, and no stripe went to the exact decoder (the batched loops did them all)."""
    payload, sw = encode_stripes(words, ts, S)
    for out8 in ([False, True] if ts.word_bits == 8 else [False]):
        for threads in (1, 2):
            lb.lz_exact_count(1)
            ref, got = both(payload, sw, len(words), S, ts, out8=out8, threads=threads)
            assert lb.lz_exact_count(1) == 0, (seed, out8, threads)
            assert not isinstance(ref, str) and np.array_equal(ref, words)
            assert same(ref, got), (seed, out8, threads)


@needs_c
@pytest.mark.parametrize("seed", range(36))
def test_pair_loop_agrees_with_numba(seed):
    """Table sets of short symbols (the pair loop: two symbols from one 64-bit window), L 1..12 (the loop has a
    copy for L = 8 and one for the others), W 16 and 8 (uint16 and uint8 outputs), every mode, with long and
    slow symbols among the short ones (pairs longer than the window leave the batch): the words equal numba's
    and the original, and no stripe went to the exact decoder."""
    lb = fastdec.lib()
    rng = np.random.default_rng(9000 + seed)
    kinds = [(LUT, RANGE, ZRUN), (RANGE,), (LUT,), (LUT, RANGE), (RANGE, ZRUN)][seed % 5]
    for _ in range(500):
        ts = random_tableset(rng, W=8 if seed % 3 == 0 else 16, kinds=kinds, L=1 + seed % 12)
        if fastdec.kernel_mode(ts) >> 2 & 3 == fastdec.LOOP_PAIR:
            break
    assert fastdec.kernel_mode(ts) >> 2 & 3 == fastdec.LOOP_PAIR
    S = int(rng.choice([2, 3, 9, 64, 300, 4096]))
    n = min(_fills_lanes(rng, S), 120_000)
    words = random_words(rng, ts, n, zeros=float(rng.choice([0.0, 0.3, 0.9])))
    _check_fast_loop(lb, words, ts, S, seed)


def test_lane_loop_choice():
    """Zero-first table sets take the zero-first loop, short symbols the pair loop, long ones the loop of one
    symbol a step."""
    zf = TableSet(16, [ClassSpec(2, RANGE, 8, 0), ClassSpec(1, ZRUN, 0, 0), ClassSpec(2, RANGE, 16, 0)])
    short = TableSet(16, [ClassSpec(1, RANGE, 8, 0), ClassSpec(2, RANGE, 9, 512), ClassSpec(2, RANGE, 16, 0)])
    long_ = TableSet(16, [ClassSpec(1, RANGE, 14, 0), ClassSpec(2, RANGE, 12, 0), ClassSpec(2, RANGE, 16, 0)])
    two_bit_zero = TableSet(16, [ClassSpec(2, ZRUN, 0, 0), ClassSpec(1, RANGE, 8, 0), ClassSpec(2, RANGE, 16, 0)])
    zrun4 = TableSet(16, [ClassSpec(2, RANGE, 8, 0), ClassSpec(1, ZRUN, 4, 0), ClassSpec(2, RANGE, 16, 0)])
    zrun5 = TableSet(16, [ClassSpec(2, RANGE, 8, 0), ClassSpec(1, ZRUN, 5, 0), ClassSpec(2, RANGE, 16, 0)])
    assert [fastdec.kernel_mode(t.validate()) >> 2 for t in (zf, short, long_, two_bit_zero, zrun4, zrun5)] == \
        [fastdec.LOOP_ZERO, fastdec.LOOP_PAIR, fastdec.LOOP_SINGLE, fastdec.LOOP_PAIR, fastdec.LOOP_ZERO | 4 << 2,
         fastdec.LOOP_SINGLE]      # the zero run's k in bits 4.. of the mode
    if fastdec.available():        # the benchmark's note: the loops and their shares of the words
        lanes = fastdec.lib().lz_loop_lanes
        assert fastdec.loop_summary([(zf, 300), (short, 100), (zrun4, 600)]) == \
            f"zero-first loop, {lanes(fastdec.LOOP_ZERO)} lanes: 90 %; pair loop, {lanes(fastdec.LOOP_PAIR)} lanes: 10 %"


# ------------------------------------------------------------------------------------------ zero-first loop
def zero_first_tableset(rng, W=None, kinds=(LUT, RANGE, ZRUN), zk=None):
    """A valid table set whose code 0 is one bit long and a zero run of zk <= 4 index bits (one word for zk = 0;
    pruned weights): the kernel decodes it with its zero-first loop. The other classes are a random table set
    one bit longer."""
    W = W or int(rng.choice([8, 16]))
    zk = int(rng.choice([0, 0, 1, 2, 3, 4])) if zk is None else zk
    base = random_tableset(rng, W=W, kinds=kinds, L=int(rng.integers(1, 12)))
    classes = [ClassSpec(cl.c + 1, cl.kind, cl.k, cl.param) for cl in base.classes][:15]
    classes.insert(int(rng.integers(0, len(classes) + 1)), ClassSpec(1, ZRUN, zk, 0))
    return TableSet(W, classes, base.lut3).validate()


def _fills_lanes(rng, S):
    """A word count of enough stripes of S words to fill every lane of the kernel several times."""
    return S * int(rng.integers(3 * fastdec.lib().lz_lanes(), 6 * fastdec.lib().lz_lanes())) + int(rng.integers(S))


@needs_c
@pytest.mark.parametrize("seed", range(36))
def test_zero_first_loop_agrees_with_numba(seed):
    """Zero-first table sets of every kind mix, W 16 and 8 (uint16 and uint8 outputs), stripes of 1..4096
    words, sparse and dense data, runs longer than a stripe: the zero-first loop runs (the kernel mode says so),
    its words equal numba's and the original, and no stripe went to the exact decoder (a wrong fast path is
    caught by the end checks and repaired by the exact decoder, so only this count shows it)."""
    lb = fastdec.lib()
    rng = np.random.default_rng(7000 + seed)
    kinds = [(LUT, RANGE, ZRUN), (RANGE, ZRUN), (LUT, ZRUN), (ZRUN,)][seed % 4]
    ts = zero_first_tableset(rng, W=8 if seed % 3 == 0 else 16, kinds=kinds)
    assert fastdec.kernel_mode(ts) >> 2 & 3 == fastdec.LOOP_ZERO
    S = int(rng.choice([1, 9, 10, 17, 64, 300, 4096]))
    n = min(_fills_lanes(rng, S), 120_000)
    words = random_words(rng, ts, n, zeros=float(rng.choice([0.3, 0.75, 0.95, 0.999])))
    _check_fast_loop(lb, words, ts, S, seed)


@needs_c
def test_zero_first_loop_on_encoder_tables():
    """Table sets the encoder designs for pruned int16 and int8 weights (60, 75, 90 %): the container's
    streams decode alike in the C kernel (every loop it chooses) and numba, and equal the weights; the
    zero-first loop ran for some of them, with code 0 a zero word and with code 0 a zero run of k > 0."""
    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    rng = np.random.default_rng(21)
    loops = set()
    for dtype, prune in ((np.int16, 0.6), (np.int16, 0.75), (np.int16, 0.9), (np.int8, 0.75)):
        q = np.round(rng.standard_normal((300, 700)) * (40 if dtype == np.int8 else 900)).clip(
            np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)
        q[rng.random(q.shape) < prune] = 0
        c = ct.from_bytes(ct.to_bytes(codec.compress({"w": q, "b": q[:3, :50].copy()})))
        for s in getattr(c, "streams", None) or c.tensors:
            ts = c.tables[s.table]
            loops.add(fastdec.kernel_mode(ts) >> 2)
            ref, got = both(np.ascontiguousarray(c.stripe_payload(s)), s.stripe_words, s.numel, s.stripe_len, ts,
                            out8=ts.word_bits == 8, crcs=s.stripe_crcs)
            assert not isinstance(ref, str) and same(ref, got)
        back = codec.decompress(c)
        assert np.array_equal(back["w"], q)
    assert fastdec.LOOP_ZERO in loops                           # one-bit zero words (75 %) ...
    assert any(m & 3 == fastdec.LOOP_ZERO and m >> 2 for m in loops)   # ... and a one-bit code of zero runs (90 %)


@needs_c
def test_zero_first_loop_on_minilm_int16_75():
    """The real tables of all-MiniLM-L6-v2 int16 75 % pruned (when the model is installed): every stream decodes
    to the weights in the C kernel and in numba, the zero-first loop decodes most of its words and no stripe
    went to the exact decoder."""
    from lutzip import bench
    from lutzip.codec import arrays as codec
    from lutzip.weights.quantize import prepare
    if not bench.minilm_path():
        pytest.skip("all-MiniLM-L6-v2 is not installed")
    _label, arrays = bench.load_model("minilm")
    prep, attrs = prepare(arrays, quantize="int16", bf16=False, prune_fraction=0.75, skip_unsupported=True)
    c = codec.compress(prep, attrs=attrs)
    lb = fastdec.lib()
    zero_words = all_words = 0
    for s in c.streams[::3]:
        ts = c.tables[s.table]
        want = np.concatenate([np.ascontiguousarray(prep[c.tensors[m].name]).reshape(-1).view(np.uint16)
                               for m in s.members])
        lb.lz_exact_count(1)
        ref, got = both(np.ascontiguousarray(c.stripe_payload(s)), s.stripe_words, s.numel, s.stripe_len, ts,
                        crcs=s.stripe_crcs)
        assert lb.lz_exact_count(1) == 0
        assert np.array_equal(got, want) and same(ref, got)
        all_words += s.numel
        zero_words += s.numel * (fastdec.kernel_mode(ts) >> 2 & 3 == fastdec.LOOP_ZERO)
    assert zero_words > 0.9 * all_words


@needs_c
@pytest.mark.parametrize("kind", ["flip", "marker", "count", "cut", "extra", "padding", "garbage"])
def test_zero_first_damage_is_reported_like_numba(kind):
    """Damaged stripes of zero-first table sets (many stripes, so that the zero-first loop runs on them): the
    same first error (kind, stripe, word) as numba, and with the CRCs every damaged stripe is reported."""
    errors = set()
    for seed in range(40):
        rng = np.random.default_rng(hash(kind) % 1000 * 100 + 50_000 + seed)
        ts = zero_first_tableset(rng)
        S = int(rng.choice([9, 17, 64, 500]))
        n = _fills_lanes(rng, S)
        words = random_words(rng, ts, n, zeros=float(rng.choice([0.5, 0.9])))
        payload, sw = encode_stripes(words, ts, S)
        good = _crcs(payload, sw)
        bad_p, bad_sw = _damage(rng, payload, sw, kind)
        ref, got = both(bad_p, bad_sw, n, S, ts, threads=int(rng.integers(1, 3)))
        assert same(ref, got), (seed, ref if isinstance(ref, str) else "words", got if isinstance(got, str) else "words")
        if isinstance(ref, str):
            errors.add(ref.split(": ", 2)[-1])
        if len(bad_sw) == len(sw) and not np.array_equal(bad_p, payload):
            ref, got = both(bad_p, bad_sw, n, S, ts, crcs=good)
            assert same(ref, got) and isinstance(got, str) and "CRC mismatch" in got, seed
    assert errors, kind


@needs_c
@pytest.mark.parametrize("loop", ["zero k 0", "zero k 3", "pair"])
def test_lane_loops_report_each_error(loop):
    """Stripes decoded by the zero-first loop (code 0 a zero word, or a run of k = 3) and the pair loop (the
    middle one of 30) with a bad header, symbols past the end, a word left over and a zero run past the stripe's
    end: the same error, stripe and word as numba."""
    if loop == "pair":
        ts = TableSet(16, [ClassSpec(1, RANGE, 8, 0), ClassSpec(2, RANGE, 9, 0), ClassSpec(3, RANGE, 10, 0),
                           ClassSpec(3, ZRUN, 4, 0)]).validate()
        assert fastdec.kernel_mode(ts) >> 2 & 3 == fastdec.LOOP_PAIR
    else:
        ts = TableSet(16, [ClassSpec(1, ZRUN, int(loop[-1]), 0), ClassSpec(2, RANGE, 8, 0), ClassSpec(3, ZRUN, 4, 0),
                           ClassSpec(3, RANGE, 16, 0)]).validate()
        assert fastdec.kernel_mode(ts) >> 2 & 3 == fastdec.LOOP_ZERO
    rng = np.random.default_rng(3)
    S = 200
    words = rng.integers(0, 256, 30 * S).astype(np.uint16)
    words[rng.random(words.size) < 0.7] = 0
    words[15 * S + 150:15 * S + 200] = 0                     # stripe 15 ends in runs of zeros
    payload, sw = encode_stripes(words, ts, S)
    starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
    a, b = int(starts[15]), int(starts[16])
    cases = {}
    p = payload.copy()
    p[a] ^= np.uint32(1 << 20)
    cases["marker"] = (p, sw)
    p = np.delete(payload, [b - 1])
    sw2 = sw.astype(np.int64).copy()
    sw2[15] -= 1
    cases["past the end"] = (p, sw2)
    p = np.insert(payload, b, np.uint32(0x80000000))
    sw2 = sw.astype(np.int64).copy()
    sw2[15] += 1
    cases["left over"] = (p, sw2)
    p = payload.copy()                                        # header: 30 words fewer than the run needs
    p[a] = np.uint32(0x4C5A0000 | (S - 30 - 1))
    cases["zero run"] = (p, sw)
    for text, (p, sw_) in cases.items():
        n = len(words) - (30 if text == "zero run" else 0)
        if text == "zero run":               # the stream ends short: stripe 15 is the last one
            p, sw_ = p[:b], sw_[:16]
            n = 15 * S + S - 30
        ref, got = both(p, sw_, n, S, ts)
        assert isinstance(ref, str) and text in ref and "stripe 15" in ref and ref == got, (text, ref, got)


# ------------------------------------------------------------------------------------------ damaged streams
def _damage(rng, payload, sw, kind):
    payload = payload.copy()
    sw = sw.astype(np.int64).copy()
    starts = np.concatenate([[0], np.cumsum(sw)[:-1]])
    s = int(rng.integers(len(sw)))
    a, b = int(starts[s]), int(starts[s] + sw[s])
    if kind == "flip":
        for _ in range(int(rng.integers(1, 4))):
            payload[int(rng.integers(a + 1, b))] ^= np.uint32(1 << int(rng.integers(32)))
    elif kind == "marker":
        payload[a] ^= np.uint32(1 << int(rng.integers(16, 32)))
    elif kind == "count":
        payload[a] = np.uint32((int(payload[a]) & 0xFFFF0000) | ((int(payload[a]) + 1) & 0xFFFF))
    elif kind == "cut" and sw[s] > 2:
        cut = int(rng.integers(1, sw[s] - 1))
        payload = np.delete(payload, np.arange(b - cut, b))
        sw[s] -= cut
    elif kind == "extra":
        payload = np.insert(payload, b, np.uint32(rng.integers(0, 1 << 32)) if rng.random() < 0.5 else 0)
        sw[s] += 1
    elif kind == "padding":
        payload[b - 1] |= np.uint32(1)
    elif kind == "garbage":
        payload[a + 1:b] = rng.integers(0, 1 << 32, b - a - 1, dtype=np.uint32)
    return payload, sw


@needs_c
@pytest.mark.parametrize("kind", ["flip", "marker", "count", "cut", "extra", "padding", "garbage"])
def test_damage_is_reported_like_numba(kind):
    """The same first error (kind, stripe, decoded word) or the same words, for every kind of damage."""
    errors = 0
    for seed in range(60):
        rng = np.random.default_rng(hash(kind) % 1000 * 100 + seed)
        ts = random_tableset(rng)
        S = int(rng.choice([1, 5, 64, 500]))
        n = int(rng.integers(1, 8 * S + 1))
        words = random_words(rng, ts, n)
        payload, sw = encode_stripes(words, ts, S)
        for _ in range(int(rng.integers(1, 3))):
            payload, sw = _damage(rng, payload, sw, kind)
        ref, got = both(payload, sw, n, S, ts, threads=int(rng.integers(1, 3)))
        assert same(ref, got), (seed, ref if isinstance(ref, str) else "words", got if isinstance(got, str) else "words")
        errors += isinstance(ref, str)
    assert errors >= 20


@needs_c
def test_each_error_code():
    """The hand-made stripes of test_codec_oracle: every error code, the same message as numba."""
    cases = [([0x12340000, 0], TableSet(8, [ClassSpec(1, RANGE, 8, 0)]), 1, "marker"),
             ([0x4C5A0001, 0], TableSet(8, [ClassSpec(1, RANGE, 8, 0)]), 1, "disagrees"),
             ([0x4C5A0000, 0xC0000000], TableSet(8, [ClassSpec(2, RANGE, 0, 0)]), 1, "valid class code"),
             ([0x4C5A0002, 0], TableSet(16, [ClassSpec(1, RANGE, 16, 0)]), 3, "past the end"),
             ([0x4C5A0000, 0x60000000], TableSet(8, [ClassSpec(1, ZRUN, 2, 0), ClassSpec(1, RANGE, 8, 0)]), 1,
              "zero run"),
             ([0x4C5A0000, 0, 0], TableSet(8, [ClassSpec(1, RANGE, 8, 0)]), 1, "left over"),
             ([0x4C5A0000, 1], TableSet(8, [ClassSpec(1, RANGE, 8, 0)]), 1, "padding")]
    for words, ts, n, text in cases:
        ref, got = both(np.array(words, np.uint32), np.array([len(words)]), n, n, ts)
        assert isinstance(ref, str) and text in ref and ref == got


# ------------------------------------------------------------------------------------------ CRC
@needs_c
def test_crc32_matches_zlib():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, 70_000, dtype=np.uint8).tobytes()
    # 0..299: the 128-bit folding; from 512 bytes the 512-bit one (where the CPU has it), every tail length
    for n in list(range(0, 300)) + list(range(500, 1300, 7)) + [4096, 65_537, 70_000]:
        for off in (0, 1, 7):
            chunk = data[off:off + n]
            assert fastdec.crc32(chunk) == zlib.crc32(chunk)
            assert fastdec.crc32(chunk, 0x12345678) == zlib.crc32(chunk, 0x12345678)
    lb = fastdec.lib()
    if lb.lz_crc_mode(-1):                     # the table-only path too
        lb.lz_crc_mode(0)
        try:
            assert fastdec.crc32(data) == zlib.crc32(data)
        finally:
            lb.lz_crc_mode(1)


def _crcs(payload, sw):
    starts = np.concatenate([[0], np.cumsum(np.asarray(sw, np.int64))])
    return np.array([zlib.crc32(payload[starts[j]:starts[j + 1]].astype("<u4").tobytes()) for j in range(len(sw))],
                    np.uint32)


@needs_c
def test_crc_checks_in_the_kernel():
    """A stripe with a wrong CRC is reported (the first one), before any decode error of an earlier stripe."""
    rng = np.random.default_rng(5)
    ts = random_tableset(rng, W=16)
    words = random_words(rng, ts, 40 * 64)
    payload, sw = encode_stripes(words, ts, 64)
    crcs = _crcs(payload, sw)
    ref, got = both(payload, sw, len(words), 64, ts, crcs=crcs)
    assert same(ref, got) and np.array_equal(got, words)
    assert fastdec.first_bad_crc(payload, sw, crcs) == -1
    for threads in (1, 2):
        bad = payload.copy()
        starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
        bad[starts[31] + 1] ^= np.uint32(4)          # stripe 31: CRC no longer matches
        bad[starts[3]] = np.uint32(0x12340000)          # stripe 3: bad header ...
        c2 = crcs.copy()
        c2[3] = zlib.crc32(bad[starts[3]:starts[4]].astype("<u4").tobytes())   # ... with a matching CRC
        ref, got = both(bad, sw, len(words), 64, ts, crcs=c2, threads=threads)
        assert ref == got == "CorruptError: tensor 't', stripe 31: CRC mismatch, the payload is corrupt"
        assert fastdec.first_bad_crc(bad, sw, c2) == 31
        ref, got = both(bad, sw, len(words), 64, ts, threads=threads)          # no CRCs: the decode error
        assert ref == got and "stripe 3:" in got and "marker" in got


# ------------------------------------------------------------------------------------------ memory safety
GUARD_SCRIPT = r"""
import ctypes, mmap, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_fastdec import random_tableset, random_words, _damage, zero_first_tableset
from lutzip.codec.bitstream import decode_stripes, encode_stripes
from lutzip.errors import DecodeError
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
page = mmap.PAGESIZE
keep = []


def guarded(nbytes):                                     # a writable buffer of nbytes ending at a PROT_NONE page
    pages = -(-nbytes // page) + 1
    mm = mmap.mmap(-1, pages * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    assert libc.mprotect(base + (pages - 1) * page, page, 0) == 0
    keep.append(mm)
    return mm, (pages - 1) * page - nbytes


checked = 0
for seed in range(150):
    rng = np.random.default_rng(seed)
    ts = random_tableset(rng) if seed % 3 else zero_first_tableset(rng)     # every lane loop
    S = int(rng.choice([3, 64, 4096]))
    words = random_words(rng, ts, int(rng.integers(1, 3 * S)) if seed % 4 else 40 * S + int(rng.integers(S)),
                         zeros=float(rng.choice([0.5, 0.95])))
    payload, sw = encode_stripes(words, ts, S)
    if seed % 2:
        payload, sw = _damage(rng, payload, sw, str(rng.choice(["flip", "cut", "garbage", "count"])))
    mm, off = guarded(4 * len(payload))                  # PROT_NONE after the payload ...
    buf = np.frombuffer(mm, np.uint32, len(payload), off)
    buf[:] = payload
    mo, oo = guarded(2 * len(words))                     # ... and after the output
    out = np.frombuffer(mo, np.uint16, len(words), oo)
    try:
        decode_stripes(buf, sw, len(words), S, ts, kernel="c", out=out)
    except DecodeError:
        pass
    checked += 1
    del buf, out
print("ok", checked)
"""


@needs_c
def test_reads_stay_inside_the_payload(tmp_path):
    """The payload and the output end at a PROT_NONE page: any read or write past them would kill the (separate)
    process. Every lane loop (a third of the table sets zero-first, long inputs for the full lanes)."""
    script = GUARD_SCRIPT.format(tests=os.path.dirname(__file__))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ok 150" in r.stdout, r.stderr[-2000:]


# ------------------------------------------------------------------------------------------ fallback
def test_fallback_without_the_c_kernel(monkeypatch):
    """No C kernel: decode_stripes uses numba (same words, same errors); kernel='c' says why it cannot."""
    rng = np.random.default_rng(11)
    ts = random_tableset(rng, W=16)
    words = random_words(rng, ts, 5000)
    payload, sw = encode_stripes(words, ts, 256)
    crcs = _crcs(payload, sw)
    monkeypatch.setitem(fastdec._state, "tried", True)
    monkeypatch.setitem(fastdec._state, "lib", None)
    monkeypatch.setitem(fastdec._state, "why", "no C compiler (test)")
    assert not fastdec.available()
    assert np.array_equal(decode_stripes(payload, sw, len(words), 256, ts, crcs=crcs), words)
    bad = payload.copy()
    bad[5] ^= np.uint32(1)
    with pytest.raises(CorruptError, match="CRC mismatch"):
        decode_stripes(bad, sw, len(words), 256, ts, crcs=crcs)
    assert fastdec.first_bad_crc(bad, sw, crcs) >= 0
    assert fastdec.crc32(b"abc") == zlib.crc32(b"abc")
    with pytest.raises(UnsupportedError, match="no C compiler"):
        decode_stripes(payload, sw, len(words), 256, ts, kernel="c")


def test_no_compiler_and_switch_off(monkeypatch):
    """No compiler: no library and the reason; LUTZIP_FASTDEC=0: a whole round trip through numba."""
    monkeypatch.delenv("LUTZIP_FASTDEC", raising=False)
    monkeypatch.setattr(fastdec, "_compiler", lambda: None)
    assert fastdec._load() == (None, "no C compiler (cc, gcc, clang or $CC)")
    monkeypatch.setenv("LUTZIP_FASTDEC", "0")
    assert fastdec._load()[0] is None
    code = ("import numpy as np, lutzip; from lutzip.codec import fastdec; "
            "a = {'w': (np.arange(20000) % 301 - 150).astype(np.int16)}; "
            "b = lutzip.decompress(lutzip.compress(a)); assert np.array_equal(b['w'], a['w']); "
            "print(fastdec.available(), fastdec.why_not())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, LUTZIP_FASTDEC="0"))
    assert r.returncode == 0 and r.stdout.strip() == "False LUTZIP_FASTDEC=0", r.stderr[-2000:]


@needs_c
@pytest.mark.timeout(1300)      # two builds of up to 600 s each (the C kernels take minutes at load 20+)
def test_fresh_build_in_an_empty_cache(tmp_path):
    """A new process with an empty cache compiles the kernel and decodes with it; a second one loads it."""
    code = ("import numpy as np; from lutzip.codec import fastdec; "
            "from lutzip.codec.bitstream import decode_stripes, encode_stripes; "
            "from lutzip.codec.tables import TableSet, ClassSpec; "
            "ts = TableSet(16, [ClassSpec(1, 1, 16, 0)]); w = np.arange(9000, dtype=np.uint16); "
            "p, sw = encode_stripes(w, ts, 1000); "
            "assert np.array_equal(decode_stripes(p, sw, 9000, 1000, ts, kernel='c'), w); print(fastdec.available())")
    env = dict(os.environ, LUTZIP_CACHE=str(tmp_path))
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
        assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr[-2000:]
    assert list(tmp_path.glob("fastdec/*/_fastdec.so"))


# ------------------------------------------------------------------------------------------ benchmark
@needs_c
def test_bench_speed_rows_and_cli(tmp_path, capsys):
    """``lutzip bench --speed`` measures every row on a small input (outputs checked inside) and prints them."""
    from lutzip import bench
    from lutzip.cli import main
    rng = np.random.default_rng(2)
    arrays = {"a": np.round(rng.standard_normal((64, 300)) * 200).astype(np.int16),
              "b": np.arange(-50, 50, dtype=np.int16)}
    r = bench.speed(arrays, repeat=5, cpus=None)
    assert {"numba kernel", "C kernel", "C kernel + CRC", "lutzip.decompress (end to end)", "zstd -3 decompress",
            "memcpy of the output"} <= set(r["GBps"])
    assert all(v > 0 for v in r["GBps"].values())
    text = bench.format_speed("x", {"int16": r}, cpu=0, repeat=5)
    assert "/ memcpy" in text and "C kernel + CRC" in text and " loop, " in text and " lanes: " in text
    # the cycles-per-word column: the add chain's rate over the row's words per second
    assert r["GBps"][bench.SPIN_ROW] > 0 and "cyc/word" in text and bench.SPIN_ROW not in text
    row = next(line for line in text.splitlines() if line.startswith("C kernel + CRC "))
    cw = r["GBps"][bench.SPIN_ROW] / (r["GBps"]["C kernel + CRC"] / 2)
    assert abs(float(row.split()[-1]) - cw) <= 0.01 * cw + 0.01
    path = tmp_path / "w.npz"
    np.savez(path, w=np.round(rng.standard_normal((40, 50)) * 3).astype(np.float32))
    assert main(["bench", "--speed", str(path), "--repeat", "5", "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "bf16:" in out and "int16 75 %:" in out and "zstd -3 decompress" in out
    assert (tmp_path / "s.json").stat().st_size > 0


@needs_c
def test_cycles_per_second_counts_the_add_chain():
    """lz_spin runs its n dependent additions (returns n: not folded away); cycles_per_second is a rate."""
    lb = fastdec.lib()
    assert [lb.lz_spin(n) for n in (0, 1, 1000, 123457)] == [0, 1, 1000, 123457]
    cps = fastdec.cycles_per_second(n=1_000_000)
    assert np.isfinite(cps) and cps > 0


@needs_c
def test_stripe_numbers_of_a_part_of_a_stream():
    """first_stripe and crc_where: messages name the stripe of the whole stream and its owner, in both kernels."""
    rng = np.random.default_rng(9)
    ts = random_tableset(rng, W=16)
    words = random_words(rng, ts, 10 * 50)
    payload, sw = encode_stripes(words, ts, 50)
    crcs = _crcs(payload, sw)
    bad = payload.copy()
    bad[sw[0]] = np.uint32(0x12340000)                       # header of stripe 1
    for kernel in ("numba", "c"):
        with pytest.raises(DecodeError, match=r"stripe 8: stripe header marker"):
            decode_stripes(bad, sw, len(words), 50, ts, "s", kernel=kernel, first_stripe=7)
        with pytest.raises(CorruptError, match=r"^stream 3, stripe 8: CRC mismatch"):
            decode_stripes(bad, sw, len(words), 50, ts, "s", kernel=kernel, crcs=crcs, first_stripe=7,
                           crc_where="stream 3")


@needs_c
def test_portable_build_agrees(tmp_path, monkeypatch):
    """The kernel built without -march=native (no BMI/PCLMUL: the plain C index extraction and slicing-by-16
    CRC) decodes and checks like the native build."""
    import ctypes
    import platform
    cc = fastdec._compiler()
    x86 = ["-mno-bmi", "-mno-bmi2", "-mno-pclmul"] if platform.machine() in ("x86_64", "AMD64", "i686") else []
    fastdec._build(cc, tmp_path, [[f for f in fastdec.FLAGS if f != "-march=native"] + x86])
    lb = fastdec._configure(ctypes.CDLL(str(tmp_path / "_fastdec.so")))
    assert lb.lz_crc_mode(-1) == 0                         # no carry-less multiply path in this build
    monkeypatch.setitem(fastdec._state, "lib", lb)
    data = np.random.default_rng(4).integers(0, 256, 5000, dtype=np.uint8).tobytes()
    assert fastdec.crc32(data) == zlib.crc32(data)
    for seed in range(12):
        rng = np.random.default_rng(500 + seed)
        ts = random_tableset(rng)
        S = int(rng.choice([1, 64, 4096]))
        words = random_words(rng, ts, int(rng.integers(1, 20000)))
        payload, sw = encode_stripes(words, ts, S)
        if seed % 2:
            payload, sw = _damage(rng, payload, sw, str(rng.choice(["flip", "cut", "garbage", "padding"])))
        ref, got = both(payload, sw, len(words), S, ts, crcs=_crcs(payload, sw) if seed % 3 == 0 else None)
        assert same(ref, got), seed


def _zero_first(ts):
    """The k of the zero run of the table set's code 0 when that code is one bit long and k <= 4 (the zero-first
    loop), else None."""
    first = ts.classes[min(range(len(ts.classes)), key=lambda j: (ts.classes[j].c, j))]
    return first.k if first.c == 1 and first.kind == ZRUN and first.k <= fastdec.ZERO_MAX_K else None


def _combined_reference(ts, mode, as_lut, fast_range, L):
    """The combined table entry by entry (the loop fastdec.combined_table had before it packed the entries)."""
    zk = _zero_first(ts)
    zf = zk is not None
    long_bits = 64 if not zf else 33 - fastdec.ZMAX if zk == 0 else 32 - zk
    T = np.zeros(1 << L, fastdec.ENTRY_DTYPE)
    T["tot"], T["flags"], T["sh"], T["adv"] = 1, fastdec.F_INVALID | fastdec.F_SLOW, 63, fastdec.ADV_SLOW
    for j, (cl, code) in enumerate(zip(ts.classes, ts.codes())):
        lo, hi = code << (L - cl.c), (code + 1) << (L - cl.c)
        T["tot"][lo:hi] = cl.total
        lut_fast = j in as_lut and mode != fastdec.MODE_RANGE
        range_fast = j in fast_range and mode != fastdec.MODE_LUT
        if lut_fast or range_fast:
            T["adv"][lo:hi] = cl.total
            T["flags"][lo:hi] = (j << 4) | (fastdec.F_LUT if lut_fast and mode == fastdec.MODE_MIX else 0) | \
                (fastdec.F_LONG if cl.total > long_bits else 0)
            T["sh"][lo:hi] = 64 - cl.total
            base = as_lut[j] if lut_fast else (cl.param if cl.kind == RANGE else 0)
            T["param"][lo:hi] = (base - (code << cl.k)) % (1 << 32)
        else:
            T["flags"][lo:hi] = (j << 4) | fastdec.F_SLOW | (fastdec.F_LUT if zf and cl.kind == ZRUN and cl.k else 0)
            T["adv"][lo:hi] = fastdec.ADV_SLOW
    return T


def test_combined_table_equals_the_entry_by_entry_reference():
    """Random table sets of every kind mix and width, L 1..12: the packed table equals the reference entry for
    entry (the kernel's LUT3 copy decides which classes are LUT-fast: read back from the table's param)."""
    seen = set()
    for seed in range(330):
        rng = np.random.default_rng(5000 + seed)
        kinds = [(LUT,), (RANGE,), (ZRUN, RANGE), (LUT, RANGE), (LUT, RANGE, ZRUN)][seed % 5]
        ts = random_tableset(rng, kinds=kinds, W=8 if seed % 7 == 0 else 16, L=1 + seed % 12)
        if seed >= 300:          # a comb code 1, 2, .., m, m (m = 7..12): the longest table index widths
            m = 7 + seed % 6
            ts = TableSet(16, [ClassSpec(c, RANGE if c % 2 else ZRUN, 4 * (c % 2), 0)
                               for c in list(range(1, m + 1)) + [m]]).validate()
        buf, mode, lut3k, _cls, L, _p = fastdec.combined_table(ts)
        T = buf[:8 << L].view(fastdec.ENTRY_DTYPE)
        n3 = len(ts.lut3)
        # which classes the builder copied into the kernel's LUT3 (their offsets follow the table set's LUT3)
        as_lut = {j: cl.param for j, cl in enumerate(ts.classes) if cl.kind == LUT}
        free = n3
        if as_lut:
            for j in sorted(range(len(ts.classes)), key=lambda j: (ts.classes[j].c, j)):
                cl = ts.classes[j]
                if cl.kind == RANGE or (cl.kind == ZRUN and cl.k == 0):
                    size = 1 << cl.k if cl.kind == RANGE else 1
                    if free + size <= fastdec.KERNEL_LUT3:
                        as_lut[j] = free
                        free += size
        fast_range = [j for j, cl in enumerate(ts.classes)
                      if j not in as_lut and (cl.kind == RANGE or (cl.kind == ZRUN and cl.k == 0))]
        ref = _combined_reference(ts, mode, as_lut, fast_range, L)
        assert T.tobytes() == ref.tobytes(), seed
        seen.add((mode, L))
    assert {m for m, _ in seen} == {fastdec.MODE_LUT, fastdec.MODE_RANGE, fastdec.MODE_MIX}
    assert {L for _, L in seen} >= set(range(8, 13))


def test_kernel_tables_follow_a_table_set_changed_in_place():
    """combined_table remembers a table set object; changing its LUT3 or classes in place gives new tables."""
    ts = TableSet(16, [ClassSpec(1, LUT, 2, 0), ClassSpec(2, RANGE, 3, 8), ClassSpec(2, ZRUN, 4, 0)],
                  np.array([5, 6, 7, 8], np.uint16)).validate()
    lut3_of = lambda: fastdec.combined_table(ts)[0][fastdec.T_ENTRIES * 8:].view(np.uint16)   # noqa: E731
    assert lut3_of()[:4].tolist() == [5, 6, 7, 8]
    ts.lut3[1] = 60
    assert lut3_of()[:4].tolist() == [5, 60, 7, 8]
    first = fastdec.combined_table(ts)[0].copy()
    ts.classes[1] = ClassSpec(2, RANGE, 3, 16)
    assert not np.array_equal(fastdec.combined_table(ts)[0], first)
    assert fastdec.combined_table(ts)[0].tobytes() == fastdec.combined_table(
        TableSet(16, list(ts.classes), ts.lut3.copy()))[0].tobytes()
