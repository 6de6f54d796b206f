"""The C decoder on two code tables (format version 5, lutzip.codec.states): the same words as the numba states
kernel and as a pure-Python reference written from docs/FORMAT.md section 2.1 here (canonical codes per state,
the follow mask), on random tensors and on real-model tensors compressed with ``states=2``; corrupt stripes give
the same error code, stripe and word in all three (CRCs off), and a CRC mismatch the same stripe; threads 1 and
2. The kernel tables of ``lz_build_tables2`` equal those of the Python reference ``fastdec.kernel_tables_py`` byte
for byte, and a kernel whose state switch is broken (the next-state bits cleared) fails these checks."""
import types
import zlib

import numpy as np
import pytest

import lutzip
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import fastdec, states
from lutzip.codec.decode import ERROR_TEXT, decode_stripes
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet
from lutzip.errors import CorruptError, DecodeError

pytestmark = pytest.mark.skipif(not fastdec.available(), reason="no C decoder")


def sparse(shape, scale, sparsity, dtype, seed=0):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    a = np.clip(np.rint(rng.laplace(0, scale, shape)), info.min + 1, info.max).astype(dtype)
    a[rng.random(shape) < sparsity] = 0
    return a


# ------------------------------------------------------------------------------------ pure-Python reference
def py_decode(payload, stripe_words, numel, S, ts):
    """Decode the stripes bit by bit from the spec: ``(words, rc, stripe, word)`` (rc 0: no error)."""
    n = len(ts.classes)
    lens = [[cl.c for cl in ts.classes], list(ts.lens_b) if ts.lens_b is not None else None]
    codes = {}
    for st in range(2 if ts.lens_b is not None else 1):
        for j, code in enumerate(states.canonical_codes(lens[st])):
            if lens[st][j]:
                codes[st, lens[st][j], code] = j
    follow = ts.follow if ts.lens_b is not None else 0
    out = np.zeros(numel, np.uint16)
    payload = [int(w) for w in payload]
    base = 0
    for s, nw in enumerate(int(v) for v in stripe_words):
        lo, n_exp = s * S, min(S, numel - s * S)
        hdr = payload[base]
        if hdr >> 16 != 0x4C5A:
            return out, 1, s, 0
        if (hdr & 0xFFFF) + 1 != n_exp:
            return out, 2, s, 0
        bits = "".join(f"{w:032b}" for w in payload[base + 1:base + nw])
        p, o, st = 0, 0, 0
        while o < n_exp:
            j = None
            for c in range(1, 13):
                if p + c > len(bits):
                    break
                j = codes.get((st, c, int(bits[p:p + c], 2)))
                if j is not None:
                    break
            if j is None:
                # no code within the bits left: an overrun if a code would match past the end, else invalid
                ext = bits[p:] + "0" * 12
                ok = any((st, c, int(ext[:c], 2)) in codes for c in range(1, 13))
                return out, 4 if ok else 3, s, o
            cl = ts.classes[j]
            if p + c + cl.k > len(bits):
                return out, 4, s, o
            idx = int(bits[p + c:p + c + cl.k], 2) if cl.k else 0
            p += c + cl.k
            st = (follow >> j) & 1
            if cl.kind == LUT:
                if cl.param + idx >= len(ts.lut3):
                    return out, 5, s, o
                out[lo + o] = ts.lut3[cl.param + idx]
                o += 1
            elif cl.kind == RANGE:
                out[lo + o] = cl.param + idx
                o += 1
            else:
                if o + idx + 1 > n_exp:
                    return out, 6, s, o
                o += idx + 1
        left = len(bits) - p
        if left >= 32:
            return out, 7, s, n_exp
        if "1" in bits[p:]:
            return out, 8, s, n_exp
        base += nw
    return out, 0, 0, 0


def run(kernel, payload, sw, numel, S, ts, threads=1, crcs=None, wide=False):
    """``(words, None)`` or ``(None, error text)`` of decode_stripes with one kernel (``wide``: into uint16 words
    also for an 8-bit table set, the kernel's 16-bit loops)."""
    # unwritten words show; 64 guard words behind the output must stay unwritten
    buf = np.full(numel + 64, 0xA5, np.uint8 if ts.word_bits == 8 and not wide else np.uint16)
    out = buf[:numel]
    try:
        decode_stripes(payload, sw, numel, S, ts, out=out, kernel=kernel, threads=threads, crcs=crcs)
        return out, None
    except (DecodeError, CorruptError) as e:
        return None, str(e)
    finally:
        assert np.all(buf[numel:] == buf.dtype.type(0xA5)), f"{kernel} wrote past the output"


def agree(payload, sw, numel, S, ts, ref=True):
    """C (threads 1 and 2) == numba == the Python reference; returns the words (or the error text)."""
    a, ea = run("numba", payload, sw, numel, S, ts)
    for th in (1, 2):
        b, eb = run("c", payload, sw, numel, S, ts, threads=th)
        assert ea == eb, (th, ea, eb)
        if ea is None:
            assert np.array_equal(a, b), th
    if ts.word_bits == 8:               # 8-bit words into uint16 (runs of more than 32 words: a branch of their own)
        b, eb = run("c", payload, sw, numel, S, ts, wide=True)
        assert ea == eb and (ea is not None or np.array_equal(a, b))
    if ref:
        w, rc, stripe, word = py_decode(payload, sw, numel, S, ts)
        if ea is None:
            assert rc == 0 and np.array_equal(w.astype(a.dtype), a)
        else:
            assert rc and ERROR_TEXT[rc] in ea and f"at decoded word {word} " in ea and f"stripe {stripe}" in ea, \
                (rc, stripe, word, ea)
    return a if ea is None else ea


def two_state_streams(c):
    """(stream, table set) of every stream of ``c`` whose table set has two code tables."""
    return [(s, c.tables[s.table]) for s in c.streams if c.tables[s.table].lens_b is not None]


def random_arrays(seed):
    rng = np.random.default_rng(seed)
    return {
        "conv.int8.90": sparse((64, 32, 3, 3), 20, 0.9, np.int8, seed),
        "fc.int8.90": sparse((300, 200), 12, 0.9, np.int8, seed + 1),
        "fc.int8.75": sparse((150, 200), 6, 0.75, np.int8, seed + 3),
        "fc.int16.75": sparse((120, 150), 400, 0.75, np.int16, seed + 2),
        "dense.uint8": rng.integers(0, 40, (100, 100)).astype(np.uint8),
    }


# ------------------------------------------------------------------------------------------------- tables
def test_tables_match_python_reference():
    """lz_build_tables2 == kernel_tables_py for every two-state set of random containers (and both states'
    tables are really there: state B differs from A, next-state bits on exactly the follow classes)."""
    seen = 0
    loops = set()
    for seed in range(3):
        c = ct.from_bytes(lutzip.compress(random_arrays(seed), reorder=False, states=2))
        for _, ts in two_state_streams(c):
            fastdec._table_cache.clear()
            fastdec._by_object.clear()
            buf, mode, lut3k, cls, L, _ = fastdec.combined_table(ts)
            kmode = fastdec.kernel_mode(ts)
            rbuf, rmode, rlut3k, rL, rkmode = fastdec.kernel_tables_py(ts)
            assert (L, mode, kmode) == (rL, rmode, rkmode)
            # the two-state zero-first loop exactly when the one-word zero run is code 0 of one bit in both states
            zero = [j for j, cl in enumerate(ts.classes) if cl.kind == ZRUN and cl.k == 0 and cl.c == 1
                    and ts.lens_b[j] == 1 and not any(ts.classes[i].c == 1 or ts.lens_b[i] == 1 for i in range(j))]
            assert kmode & fastdec.TWO_STATES
            assert (kmode >> 2 & 3 == fastdec.LOOP_ZERO) == bool(zero)
            loops.add(kmode >> 2 & 3)
            assert buf.size == rbuf.size == (fastdec.B_OFF + fastdec.T_ENTRIES) * 8
            assert np.array_equal(buf, rbuf)
            ents = buf.view(fastdec.ENTRY_DTYPE)
            a, b = ents[:1 << L], ents[fastdec.B_OFF:fastdec.B_OFF + (1 << L)]
            assert not np.array_equal(a, b)
            for e in (a, b):
                valid = (e["flags"] & fastdec.F_INVALID) == 0
                nxt = (e["sh"] >> 7).astype(bool)
                assert np.array_equal(nxt[valid], [(ts.follow >> (f >> 4)) & 1 == 1 for f in e["flags"][valid]])
                assert not nxt[~valid].any()
            seen += 1
    assert seen >= 3
    assert {fastdec.LOOP_SINGLE, fastdec.LOOP_ZERO} <= loops      # both two-state loops are among these sets


def test_one_and_two_table_sets_do_not_share_cache_entries():
    """A two-state set and the one-table set of the same classes get different kernel tables."""
    c = ct.from_bytes(lutzip.compress(random_arrays(0), reorder=False, states=2))
    _, ts = two_state_streams(c)[0]
    one = TableSet(ts.word_bits, ts.classes, ts.lut3.copy())
    assert not fastdec.kernel_mode(one) & fastdec.TWO_STATES
    assert fastdec.kernel_mode(ts) & fastdec.TWO_STATES


# ------------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("seed", [0, 1])
def test_random_tensors_agree(seed):
    arrays = random_arrays(seed)
    c = ct.from_bytes(lutzip.compress(arrays, reorder=False, states=2))
    got = two_state_streams(c)
    assert len(got) >= 2
    for s, ts in got:
        payload = c.stripe_payload(s)
        words = agree(payload, s.stripe_words, s.numel, s.stripe_len, ts, ref=s.numel <= 60000)
        assert isinstance(words, np.ndarray)
    out = lutzip.decompress(ct.to_bytes(c))     # the whole container in one call of the C library
    for k, v in arrays.items():
        assert np.array_equal(out[k].view(np.uint8), v.view(np.uint8)), k


@pytest.mark.parametrize("S", [1, 3, 64, 1000])
def test_stripe_lengths_and_lane_tails(S):
    """Few and many stripes (the lane loop's tail of 1..5 lanes, lanes leaving near the payload's end)."""
    words = sparse(9000, 15, 0.85, np.int8, S).view(np.uint8)
    c = ct.from_bytes(lutzip.compress({"w": words}, states=2))
    (s, ts), = two_state_streams(c)
    payload, sw, _ = states._encode2(words, S, ts)          # the same table set over stripes of S words
    got = agree(payload, sw, words.size, S, ts, ref=True)
    assert np.array_equal(got, words)


def test_hand_made_table_set_with_a_class_missing_in_state_b():
    """A class without a state-B code: C, numba and the reference agree on the words and on its prefix in state B
    being invalid."""
    cls = [ClassSpec(1, ZRUN, 2, 0), ClassSpec(2, RANGE, 4, 16), ClassSpec(2, RANGE, 7, 128)]
    two = TableSet(8, cls, lens_b=(0, 1, 2), follow=0b001)
    two.validate()
    rng = np.random.default_rng(5)
    words = []
    for _ in range(4000):           # runs of 1..4 zeros, always followed by a literal (state B has no run)
        if rng.random() < 0.4:
            words += [0] * int(rng.integers(1, 5))
        words.append(int(rng.integers(16, 32)) if rng.random() < 0.6 else int(rng.integers(128, 256)))
    words = np.array(words, np.uint8)
    payload, sw, _ = states._encode2(words, 256, two)
    got = agree(payload, sw, len(words), 256, two)
    assert np.array_equal(got, words)
    # state A codes: run "0", class 1 "10", class 2 "11"; state B: class 1 "0", class 2 "10", "11" invalid. A run of
    # one zero ("0" + index "00") then "11": invalid in state B (class 2 in state A)
    bits = "0" + "00" + "11"
    bad = np.array([0x4C5A0000 | 4, int(bits + "0" * (32 - len(bits)), 2)], np.uint32)
    err = agree(bad, np.array([2], np.uint32), 5, 5, two)
    assert isinstance(err, str) and "not a valid class code (at decoded word 1 " in err


def test_state_switch_is_used():
    """Decoding a two-state stream as if the state never left A (the one-table set of its state-A codes) gives
    other words or an error: the tests above would catch a kernel that ignores the state."""
    c = ct.from_bytes(lutzip.compress(random_arrays(0), reorder=False, states=2))
    s, ts = two_state_streams(c)[0]
    one = TableSet(ts.word_bits, ts.classes, ts.lut3.copy())
    good, _ = run("c", c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts)
    bad, err = run("c", c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, one)
    assert good is not None and (bad is None or not np.array_equal(bad, good))


def test_broken_state_switch_fails(monkeypatch):
    """With the next-state bits cleared in the kernel's tables (every symbol read in state A: a kernel whose state
    switch is broken), the C decoder's words no longer equal the reference's."""
    c = ct.from_bytes(lutzip.compress(random_arrays(1), reorder=False, states=2))
    s, ts = two_state_streams(c)[0]
    payload = c.stripe_payload(s)
    ref, _ = run("numba", payload, s.stripe_words, s.numel, s.stripe_len, ts)
    fastdec._table_cache.clear()
    fastdec._by_object.clear()
    buf = fastdec.combined_table(ts)[0]
    ents = buf.view(fastdec.ENTRY_DTYPE)
    saved = ents["sh"].copy()
    try:
        ents["sh"] &= 127
        broke, err = run("c", payload, s.stripe_words, s.numel, s.stripe_len, ts)
        assert broke is None or not np.array_equal(broke, ref)
        with pytest.raises(AssertionError):
            agree(payload, s.stripe_words, s.numel, s.stripe_len, ts, ref=False)
    finally:
        ents["sh"] = saved
        fastdec._table_cache.clear()
        fastdec._by_object.clear()
    ok, _ = run("c", payload, s.stripe_words, s.numel, s.stripe_len, ts)
    assert np.array_equal(ok, ref)


# ------------------------------------------------------------------------------------ two-state zero-first loop
def zero_first_set(word_bits=16):
    """A two-state set of the zero-first loop: the one-word zero run is code 0 of one bit in both states (and leads
    to state B), short (k 6) and long (k 8) zero runs, and for 16-bit words a class of 10 + 16 = 26 bits (more than
    the loop's window after 8 zeros: a slow entry)."""
    if word_bits == 16:
        cls = [ClassSpec(1, ZRUN, 0, 0), ClassSpec(3, RANGE, 10, 1024), ClassSpec(3, RANGE, 10, 64512),
               ClassSpec(5, ZRUN, 6, 0), ClassSpec(6, ZRUN, 8, 0), ClassSpec(7, RANGE, 16, 0),
               ClassSpec(10, RANGE, 16, 0)]
        ts = TableSet(16, cls, lens_b=(1, 2, 3, 0, 5, 6, 10), follow=0b11001)
    else:
        cls = [ClassSpec(1, ZRUN, 0, 0), ClassSpec(3, RANGE, 5, 32), ClassSpec(3, RANGE, 5, 224),
               ClassSpec(5, ZRUN, 6, 0), ClassSpec(6, ZRUN, 8, 0), ClassSpec(7, RANGE, 8, 0)]
        ts = TableSet(8, cls, lens_b=(1, 2, 3, 0, 5, 6), follow=0b11001)
    ts.validate()
    return ts


def zero_first_words(seed, n=5000, word_bits=16):
    """Words for :func:`zero_first_set`: zeros alone, in runs of up to 300 (more than 8 in a row: the loop's zero
    count ends and a zero is decoded as a symbol) and values of every class."""
    rng = np.random.default_rng(seed)
    big, lo, hi = (65536, 1024, 64512) if word_bits == 16 else (256, 32, 224)
    w = []
    for _ in range(n):
        r = rng.random()
        if r < 0.5:
            w += [0] * int(rng.integers(1, 4))
        elif r < 0.6:
            w += [0] * int(rng.integers(8, 20))
        elif r < 0.63:
            w += [0] * int(rng.integers(20, 300))
        r = rng.random()
        w.append(int(rng.integers(lo, 2 * lo)) if r < 0.45 else int(rng.integers(hi, big)) if r < 0.9
                 else int(rng.integers(0, big)))
    w += [0] * (8 + seed % 9)           # the last stripe ends in 8..16 zeros (the zero count at its end)
    return np.array(w, np.uint16 if word_bits == 16 else np.uint8)


@pytest.mark.parametrize("word_bits", [16, 8])
@pytest.mark.parametrize("S", [1, 3, 64, 512, 4096])
def test_two_state_zero_first_loop(S, word_bits):
    """The two-state zero-first loop (lz_build_tables2 chooses it; entries longer than 33 - ZMAX bits are slow, zero
    words fast): C (threads 1, 2; 8-bit words also into uint16) == numba == the Python reference, for stripes of
    1 .. 4096 words (lane tails)."""
    ts = zero_first_set(word_bits)
    kmode = fastdec.kernel_mode(ts)
    assert kmode & fastdec.TWO_STATES and (kmode >> 2 & 3) == fastdec.LOOP_ZERO
    L = fastdec.combined_table(ts)[4]
    ents = fastdec.combined_table(ts)[0].view(fastdec.ENTRY_DTYPE)
    for e in (ents[:1 << L], ents[fastdec.B_OFF:fastdec.B_OFF + (1 << L)]):
        valid = (e["flags"] & fastdec.F_INVALID) == 0
        long_ = valid & (e["tot"] > 33 - fastdec.ZMAX)
        assert (long_.any() or word_bits == 8) and np.all(e["flags"][long_] & 15 == fastdec.F_SLOW)
        zero = valid & (e["flags"] >> 4 == 0)
        assert zero.any() and not np.any(e["flags"][zero] & (fastdec.F_SLOW | fastdec.F_RUN))
    words = zero_first_words(S, 3000 if S > 1 else 300, word_bits)
    payload, sw, _ = states._encode2(words, S, ts)
    got = agree(payload, sw, words.size, S, ts, ref=S >= 64)
    assert np.array_equal(got, words)
    crcs = np.array([zlib.crc32(np.asarray(payload[a:a + n], "<u4").tobytes())
                     for a, n in zip(np.concatenate([[0], np.cumsum(sw.astype(np.int64))[:-1]]), sw)], np.uint32)
    out, err = run("c", payload, sw, words.size, S, ts, crcs=crcs)
    assert err is None and np.array_equal(out, words)


@pytest.mark.parametrize("word_bits", [16, 8])
def test_two_state_zero_first_stripe_ends_in_zeros(word_bits):
    """Stripes that end in 8 one-bit zeros after a value (the zero count reaches its maximum at the stripe's last
    word): no word written past a stripe (the next stripe's first word, decoded by another lane, or the guard behind
    the output) and the same words in every decoder."""
    ts = zero_first_set(word_bits)
    rng = np.random.default_rng(4)
    v = rng.integers(1024, 2048, 700) if word_bits == 16 else rng.integers(32, 64, 700)
    words = np.zeros((700, 9), np.uint16 if word_bits == 16 else np.uint8)
    words[:, 0] = v
    words = words.reshape(-1)
    for S in (63, 126):
        payload, sw, _ = states._encode2(words, S, ts)
        got = agree(payload, sw, words.size, S, ts, ref=False)
        assert np.array_equal(got, words)


def pair_set(esc_len):
    """A two-state set of the pair loop (short LUT codes, a RANGE class of 8 index bits, a 16-bit escape of code
    length ``esc_len``: 5 gives the MIX mode, 7 the LUT mode), and words of every class."""
    rng = np.random.default_rng(esc_len)
    lut3 = rng.permutation(np.arange(0x3000, 0x3100, dtype=np.uint16))[:128]
    cls = [ClassSpec(2, LUT, 4, 0), ClassSpec(2, LUT, 4, 16), ClassSpec(3, LUT, 5, 32), ClassSpec(3, LUT, 6, 64),
           ClassSpec(3, RANGE, 8, 0x3f00), ClassSpec(esc_len, RANGE, 16, 0)]
    ts = TableSet(16, cls, lut3, lens_b=(3, 2, 2, 3, 4, esc_len), follow=0b000101)
    ts.validate()
    w = []
    for j in rng.choice(6, 20000, p=[0.3, 0.2, 0.2, 0.12, 0.12, 0.06]):
        cl = cls[j]
        i = int(rng.integers(1 << cl.k))
        w.append(int(lut3[cl.param + i]) if cl.kind == LUT else cl.param + i)
    return ts, np.array(w, np.uint16)


@pytest.mark.parametrize("esc_len", [5, 7])
@pytest.mark.parametrize("S", [1, 3, 64, 1000, 4096])
def test_two_state_pair_loop(S, esc_len):
    """The two-state pair loop (LUT / MIX mode here, RANGE below): C (threads 1, 2) == numba == the Python
    reference for stripes of 1 .. 4096 words, with CRCs."""
    ts, words = pair_set(esc_len)
    kmode = fastdec.kernel_mode(ts)
    assert kmode & fastdec.TWO_STATES and (kmode >> 2 & 3) == fastdec.LOOP_PAIR
    assert kmode & 3 == (fastdec.MODE_MIX if esc_len == 5 else fastdec.MODE_LUT)
    words = words[:3000] if S < 64 else words
    payload, sw, _ = states._encode2(words, S, ts)
    got = agree(payload, sw, words.size, S, ts, ref=S >= 64 and S != 4096)
    assert np.array_equal(got, words)
    crcs = np.array([zlib.crc32(np.asarray(payload[a:a + n], "<u4").tobytes())
                     for a, n in zip(np.concatenate([[0], np.cumsum(sw.astype(np.int64))[:-1]]), sw)], np.uint32)
    out, err = run("c", payload, sw, words.size, S, ts, crcs=crcs)
    assert err is None and np.array_equal(out, words)


def test_two_state_pair_loop_bf16_like():
    """bf16-like tensors compressed with two code tables: a set of the two-state pair loop (RANGE mode) among them;
    C == numba == the reference on every two-state stream and ``lutzip.decompress`` round-trips."""
    rng = np.random.default_rng(0)
    arrays = {n: (rng.laplace(0, 0.05, 100000).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
              .reshape(-1, 100) for n in ("a", "b")}
    data = lutzip.compress(arrays, states=2)
    c = ct.from_bytes(data)
    got = two_state_streams(c)
    assert any(fastdec.kernel_mode(ts) >> 2 & 3 == fastdec.LOOP_PAIR for _, ts in got)
    for s, ts in got:
        words = agree(c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts, ref=False)
        assert isinstance(words, np.ndarray)
    out = lutzip.decompress(data)
    for k, v in arrays.items():
        assert np.array_equal(out[k], v), k


def test_two_state_zero_first_crc_mismatch():
    """A flipped bit in any stripe of the zero-first two-state loop: the same stripe in C (1, 2 threads) and numba."""
    ts, words = zero_first_set(), zero_first_words(11, 3000)
    payload, sw, _ = states._encode2(words, 128, ts)
    payload, sw = np.array(payload, np.uint32), np.array(sw, np.uint32)
    starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
    crcs = np.array([zlib.crc32(payload[starts[i]:starts[i + 1]].astype("<u4").tobytes()) for i in range(len(sw))],
                    np.uint32)
    for st in range(0, len(sw), max(1, len(sw) // 7)):
        p = payload.copy()
        p[starts[st + 1] - 1] ^= np.uint32(0x100)
        msgs = {run(k, p, sw, words.size, 128, ts, threads=th, crcs=crcs)[1] for k, th in (("numba", 1), ("c", 1), ("c", 2))}
        assert len(msgs) == 1 and f"stripe {st}: CRC mismatch" in msgs.pop()


# ---------------------------------------------------------------------------------------------- corruption
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("source", ["int8", "zero-first", "pair"])
def test_corrupt_stripes_same_errors(seed, source):
    """Flipped bits, words cut off or added, a wrong header: C (threads 1, 2), numba and the reference give the
    same error (code, stripe, word) or the same words (an int8 set of the one-symbol two-state loop, and the
    hand-made set of the two-state zero-first loop)."""
    rng = np.random.default_rng(100 + seed)
    if source == "int8":
        words = sparse(6000, 12, 0.88, np.int8, seed).view(np.uint8)
        c = ct.from_bytes(lutzip.compress({"w": words}, stripe_len=256, states=2))
        (s, ts), = two_state_streams(c)
        payload = np.array(c.stripe_payload(s), np.uint32)
        sw = np.array(s.stripe_words, np.uint32)
    else:
        ts, words = (zero_first_set(), zero_first_words(seed, 1500)) if source == "zero-first" else pair_set(5 + seed % 3)
        words = words[:6000]
        payload, sw, _ = states._encode2(words, 256, ts)
        s = types.SimpleNamespace(numel=words.size, stripe_len=256)
        payload, sw = np.array(payload, np.uint32), np.array(sw, np.uint32)
    starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
    errors = set()
    for trial in range(25):
        p, w = payload.copy(), sw.copy()
        kind = trial % 5
        st = int(rng.integers(len(sw)))
        if kind <= 1:                          # bit flips in one stripe's bits
            for _ in range(1 + kind):
                i = int(rng.integers(starts[st] + 1, starts[st + 1]))
                p[i] ^= np.uint32(1 << int(rng.integers(32)))
        elif kind == 2:                        # the stripe's last word zeroed / random
            p[starts[st + 1] - 1] = np.uint32(rng.integers(0, 1 << 32)) if rng.random() < 0.5 else 0
        elif kind == 3:                        # one word more (leftover) or less (overrun) in a stripe
            if rng.random() < 0.5 and w[st] > 2:
                p = np.delete(p, starts[st + 1] - 1)
                w[st] -= 1
            else:
                p = np.insert(p, starts[st + 1], np.uint32(rng.integers(0, 1 << 32)))
                w[st] += 1
        else:                                  # the header's count
            p[starts[st]] ^= np.uint32(1 << int(rng.integers(0, 3)))
        got = agree(p, w, s.numel, s.stripe_len, ts)
        if isinstance(got, str):
            errors.add(got.split(" (at")[0])
    assert len(errors) >= 3, errors


def test_crc_mismatch_same_stripe():
    words = sparse(8000, 12, 0.9, np.int8, 7).view(np.uint8)
    c = ct.from_bytes(lutzip.compress({"w": words}, stripe_len=128, states=2))
    (s, ts), = two_state_streams(c)
    payload = np.array(c.stripe_payload(s), np.uint32)
    sw = np.asarray(s.stripe_words, np.uint32)
    crcs = np.asarray(s.stripe_crcs, np.uint32)
    starts = np.concatenate([[0], np.cumsum(sw.astype(np.int64))])
    for st in (0, len(sw) // 2, len(sw) - 1):
        p = payload.copy()
        p[starts[st] + 1] ^= np.uint32(0x10)
        msgs = {run(k, p, sw, s.numel, s.stripe_len, ts, threads=th, crcs=crcs)[1]
                for k, th in (("numba", 1), ("c", 1), ("c", 2))}
        assert len(msgs) == 1 and f"stripe {st}: CRC mismatch" in msgs.pop()
    assert run("c", payload, sw, s.numel, s.stripe_len, ts, crcs=crcs)[1] is None


def test_container_level_errors_match():
    """A corrupt v5 container: the one-call C path and the per-tensor path raise the same one-line error."""
    c = ct.from_bytes(lutzip.compress(random_arrays(2), reorder=False, states=2))
    s, _ = two_state_streams(c)[0]
    payload = np.array(c.payload, np.uint32)
    payload[s.offset // 4 + 1] ^= np.uint32(0x40)
    bad = ct.Container(c.tables, c.tensors, payload)
    with pytest.raises(CorruptError, match="CRC mismatch") as e1:
        lutzip.decompress(ct.to_bytes(bad))
    assert "\n" not in str(e1.value)
    t = bad.tensors[s.members[0]]
    with pytest.raises(CorruptError) as e2:
        codec.decompress_tensor(bad, t, True, 1)
    assert str(e2.value) == str(e1.value)


# -------------------------------------------------------------------------------------------- real models
REAL = [("ppocr-rec", "int8", 0.9), ("magika", "int8", 0.9)]


@pytest.mark.parametrize("model,mode,p", REAL, ids=[f"{m}-{q}-{int(p * 100)}" for m, q, p in REAL])
def test_real_model_tensors_agree(model, mode, p):
    from lutzip.weights.models import load_real_model, real_model_path
    from lutzip.weights.quantize import prepare
    if real_model_path(model) is None:
        pytest.skip(f"{model} is not installed")
    prep, attrs = prepare(load_real_model(model), quantize=mode, prune_fraction=p, skip_unsupported=True)
    c = ct.from_bytes(ct.to_bytes(states.apply(codec.compress(prep, attrs=attrs))))
    got = two_state_streams(c)
    assert got
    done_ref = 0
    for s, ts in got:
        # the pure-Python reference on a few streams (it reads bit by bit), C == numba on all
        ref = s.numel <= 40000 and done_ref < 4
        done_ref += ref
        words = agree(c.stripe_payload(s), s.stripe_words, s.numel, s.stripe_len, ts, ref=ref)
        assert isinstance(words, np.ndarray)
    assert done_ref >= 1
    out = lutzip.decompress(ct.to_bytes(c), threads=2)
    for k, v in prep.items():
        assert np.array_equal(out[k].view(np.uint8).ravel(), np.ascontiguousarray(v).view(np.uint8).ravel()), k


def test_codes_longer_than_8_bits():
    """A set whose codes reach 10 bits (the generic lane loop; sets of codes up to 8 bits run the L = 8 copy)."""
    cls = [ClassSpec(1, ZRUN, 2, 0), ClassSpec(2, RANGE, 4, 16), ClassSpec(3, RANGE, 7, 128),
           ClassSpec(10, RANGE, 4, 32), ClassSpec(10, ZRUN, 8, 0)]
    two = TableSet(8, cls, lens_b=(0, 1, 2, 9, 0), follow=0b10001)
    two.validate()
    assert two.max_code_len == 10
    rng = np.random.default_rng(9)
    words = []
    for _ in range(6000):
        r = rng.random()
        if r < 0.35:
            words += [0] * int(rng.integers(1, 5))
        elif r < 0.37:
            words += [0] * int(rng.integers(5, 200))
        r = rng.random()
        words.append(int(rng.integers(16, 32)) if r < 0.5 else int(rng.integers(32, 48)) if r < 0.55
                     else int(rng.integers(128, 256)))
    words = np.array(words, np.uint8)
    payload, sw, _ = states._encode2(words, 512, two)
    assert fastdec.combined_table(two)[4] == 10
    got = agree(payload, sw, len(words), 512, two)
    assert np.array_equal(got, words)
