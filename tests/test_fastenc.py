"""The encoder's C kernels (lutzip.codec.fastenc) against the numba kernels of lutzip.codec._encnumba: the same
results kernel by kernel, the same bytes for whole files (and those decode bit-exactly with the pure-Python oracle
and the C decoder), no numba import on the compress path, and the numba fallback with LUTZIP_FASTENC=0."""
import subprocess
import sys

import numpy as np
import pytest

import lutzip
from lutzip.codec import _encnumba as nb
from lutzip.codec import bitstream, encoder, fastenc
from lutzip.codec import container as ct
from lutzip.codec.bitstream import StripeEncoder, decode_stripes
from lutzip.codec.encoder import CLASS_BITS, LUT3_BITS, Stats, best_tableset
from lutzip.errors import TableError
from lutzip.codec.tables import RANGE, ZRUN, ClassSpec, TableSet

pytestmark = pytest.mark.skipif(not fastenc.available(), reason=f"no C encoder: {fastenc.why_not()}")


def _words(rng, n, kind):
    if kind == "bf16":
        return (rng.standard_normal(n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if kind == "sparse16":
        w = np.rint(rng.laplace(0, 30, n)).astype(np.int16).view(np.uint16)
        w[rng.random(n) < 0.75] = 0
        return w
    if kind == "int8":
        w = np.rint(rng.laplace(0, 8, n)).clip(-128, 127).astype(np.int8).view(np.uint8)
        w[rng.random(n) < 0.4] = 0
        return w
    raise ValueError(kind)


@pytest.fixture
def numba_kernels(monkeypatch):
    """Run the encoder on the numba kernels (as without a C compiler)."""
    monkeypatch.setattr(encoder, "_k", lambda: nb)
    monkeypatch.setattr(bitstream, "kernels", lambda: nb)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_zero_runs_by_masks_agree_with_numba(dtype):
    """The C kernel counts zero runs 64 words at a time (a mask of the zero words): runs that cross the
    64-word blocks, fill whole blocks, end at a stripe end or at the last word, stripes of any length (not a
    multiple of 64, shorter than a block, one word), all-zero and zero-free inputs: the numba scan's counts."""
    rng = np.random.default_rng(7)
    cases = [np.zeros(1000, dtype), np.ones(1000, dtype), np.zeros(1, dtype), np.r_[np.zeros(130), 1, np.zeros(64)]]
    for n, p0 in [(5000, 0.3), (5000, 0.75), (5000, 0.97), (20000, 0.999), (777, 0.5)]:
        cases.append(np.where(rng.random(n) < p0, 0, rng.integers(1, 200, n)))
    long = np.ones(9000, dtype)
    long[100:4200] = 0                              # a run across a stripe end and many blocks
    long[5000:] = 0                                 # a run to the last word
    cases.append(long)
    checked = 0
    for w in cases:
        w = np.ascontiguousarray(w, dtype)
        for S in (1, 3, 63, 64, 65, 100, 4096, 5000, 65536):
            rc = np.zeros(min(S, w.size) + 1, np.int64)
            rn = rc.copy()
            fastenc.stats(w, S, None, rc)
            nb._run_histogram(w, S, rn)
            assert np.array_equal(rc, rn), (w.size, S)
            checked += int(rc.sum())
    assert checked > 10_000


def test_zrun_approx_agrees_with_python(monkeypatch):
    """The zero-run candidates' estimates of every single and pair (one C call) are the floats the Python
    estimate gives (run symbol counts by the numba kernel), and _zrun_candidates chooses the same sets."""
    import itertools
    import math
    rng = np.random.default_rng(3)
    checked = 0
    for trial in range(40):
        p0 = rng.choice([0.3, 0.75, 0.95, 0.999])
        n = int(rng.integers(2000, 60000))
        w = np.where(rng.random(n) < p0, 0, rng.integers(1, 300, n)).astype(np.uint16)
        if trial % 5 == 0:
            w[:int(rng.integers(0, n))] = 0
        st = Stats.of(w, 16, int(rng.choice([64, 4096])))
        if not st.hist[0] or not st.runs.any():
            continue
        nnz = int(st.n_words - st.hist[0])
        maxk = min(16, max(0, int(np.nonzero(st.runs)[0][-1]).bit_length()))
        for floor in (0.0, 1.0):
            one, two = fastenc.zrun_approx(st.runs, maxk, nnz, floor)
            for ks in [(k,) for k in range(maxk + 1)] + list(itertools.combinations(range(maxk + 1), 2)):
                desc = sorted(ks, reverse=True)
                cnt = nb._zrun_symbols_kernel(st.runs, np.array(desc, np.int64))
                N = nnz + int(cnt.sum())
                nz = nnz * math.log2(N / nnz) if nnz else 0.0
                ref = nz + sum(int(c) * (k + max(floor, math.log2(N / int(c)))) + CLASS_BITS
                               for k, c in zip(desc, cnt) if c)
                got = float(one[ks[0]]) if len(ks) == 1 else float(two[ks])
                assert got == ref, (ks, got, ref)
                checked += 1
        c_sets = encoder._zrun_candidates(st, nnz)
        monkeypatch.setattr(encoder, "_k", lambda: nb)
        st2 = Stats.of(w, 16, st.stripe_len)
        assert encoder._zrun_candidates(st2, nnz) == c_sets
        monkeypatch.undo()
    assert checked > 500


def test_byte_histogram_any_length_and_alignment():
    """The 8-bit histogram (eight words a load, eight partial counts) = numpy's bincount added to what the histogram
    held, for lengths around multiples of 8 (0 to 8 words left over), unaligned starts and runs of one value."""
    rng = np.random.default_rng(21)
    base = rng.integers(0, 256, 5000).astype(np.uint8)
    base[1000:2500] = 0
    base[3000:3100] = 255
    for n in (0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097):
        for start in (0, 1, 3, 7):
            w = base[start:start + n]
            prior = rng.integers(0, 1000, 256).astype(np.int64)
            hist = prior.copy()
            fastenc.stats(w, 4096, hist, None)
            assert np.array_equal(hist, prior + np.bincount(w, minlength=256)), (n, start)


def test_zrun_parse_counts_agree_with_numba():
    """The zero-run parse's symbol counts (C: choices forward, weights backward) = the numba kernel's (count vectors
    per run length), for random run histograms, 0 to 6 ZRUN classes, with and without the single-zero symbol."""
    rng = np.random.default_rng(31)
    checked = 0
    for trial in range(300):
        nr = int(rng.integers(1, 5000)) if trial % 7 else int(rng.integers(1, 4))
        runs = np.where(rng.random(nr) < 0.3, rng.integers(0, 1000, nr), 0).astype(np.int64)
        runs[0] = 0
        nz = int(rng.integers(0, 7))
        zk = np.sort(rng.choice(13, size=nz, replace=False)).astype(np.int64)
        zt = (zk + rng.integers(1, 12, nz)).astype(np.int64)
        single = int(rng.integers(0, 5)) if trial % 3 else 0
        got = fastenc._zrun_parse_counts(runs, single, zk, zt)
        ref = nb._zrun_parse_counts(runs, single, zk, zt)
        assert np.array_equal(got, ref), trial
        checked += int(got.sum() > 0)
    assert checked > 150


@pytest.mark.parametrize("kind", ["bf16", "sparse16", "int8"])
def test_statistics_and_costs_agree(kind):
    rng = np.random.default_rng(1)
    w = _words(rng, 50_000, kind)
    W = 8 * w.dtype.itemsize
    runs_c = np.zeros(4097, np.int64)
    runs_n = np.zeros(4097, np.int64)
    hist = np.zeros(1 << W, np.int64)
    fastenc.stats(w, 4096, hist, runs_c)
    nb._run_histogram(w, 4096, runs_n)
    assert np.array_equal(hist, np.bincount(w, minlength=1 << W))
    assert np.array_equal(runs_c, runs_n) and (kind == "bf16" or runs_c.sum() > 100)
    st = Stats.of(w, W, 4096)
    ts = encoder.design_tableset(st)[0]
    kinds = np.array([c.kind for c in ts.classes], np.int64)
    ks = np.array([c.k for c in ts.classes], np.int64)
    params = np.array([c.param for c in ts.classes], np.int64)
    tot = np.array([c.total for c in ts.classes], np.int64)
    lut3 = ts.lut3.astype(np.int64)
    assert np.array_equal(fastenc._lengths(1 << W, kinds, ks, params, tot, lut3),
                          nb._lengths(1 << W, kinds, ks, params, tot, lut3))
    zk, zt = np.array([0, 3, 7], np.int64), np.array([3, 7, 12], np.int64)
    assert np.array_equal(fastenc._zrun_costs(300, 2, zk, zt), nb._zrun_costs(300, 2, zk, zt))
    assert np.array_equal(fastenc._zrun_costs(300, 0, zk[1:], zt[1:]), nb._zrun_costs(300, 0, zk[1:], zt[1:]))
    for a, b in zip(fastenc._zero_run_dp(300, 2, np.arange(3), zk, zt), nb._zero_run_dp(300, 2, np.arange(3), zk, zt)):
        assert np.array_equal(a, b)
    for a, b in zip(fastenc._zrun_parse_counts(runs_c, 3, zk, zt), nb._zrun_parse_counts(runs_c, 3, zk, zt)):
        assert np.array_equal(a, b)
    assert np.array_equal(fastenc._zrun_symbols_kernel(runs_c, zk[::-1].copy()),
                          nb._zrun_symbols_kernel(runs_c, zk[::-1].copy()))


@pytest.mark.parametrize("which", ["lut_dp", "group_dp", "package_merge", "zrun_estimate", "trie_solve"])
def test_design_kernels_agree(which):
    """One kernel per case (a cold numba cache compiles each kernel once: a few seconds apiece)."""
    rng = np.random.default_rng(2)
    for trial in range(20 if which != "trie_solve" else 0):
        R = int(rng.integers(1, 300))
        freq = np.sort(rng.pareto(1.2, R) * 100 + rng.integers(0, 2, R))[::-1].astype(np.float64)
        N = float(freq.sum() + 10)
        M = int(rng.integers(1, 16))
        if which == "lut_dp":
            for a, b in zip(fastenc._lut_dp(freq, N, M, 12), nb._lut_dp(freq, N, M, 12)):
                assert np.array_equal(a, b)
        mu = 2.0 ** rng.uniform(5, 20)
        args = (freq, M, min(12, max(0, (R - 1).bit_length())), mu, 8, 16, float(CLASS_BITS), float(LUT3_BITS))
        if which == "group_dp":
            for a, b in zip(fastenc._group_dp(*args), nb._group_dp(*args)):
                assert np.array_equal(a, b)
        w = rng.integers(1, 1000, int(rng.integers(2, 17))).astype(np.float64)
        w[:2] = w[0]                                             # ties: the stable order decides
        if which == "package_merge":
            assert np.array_equal(fastenc._package_merge(w, 8), nb._package_merge(w, 8))
        runs = np.zeros(200, np.int64)
        runs[rng.integers(1, 200, 30)] = rng.integers(1, 50, 30)
        zk = np.array(sorted(rng.choice(8, int(rng.integers(1, 4)), replace=False)), np.int64)
        mus = 2.0 ** np.arange(8.0, 14.0, 0.25)
        tab = rng.uniform(1e4, 1e5, len(mus))
        if which == "zrun_estimate":
            dc, gc, zc = fastenc._zrun_estimate(runs, zk, tab, mus, 8, 2, float(CLASS_BITS))
            dn, gn, zn = nb._zrun_estimate(runs, zk, tab, mus, 8, 2, float(CLASS_BITS))
            assert (dc, gc) == (dn, gn) and np.array_equal(zc, zn)
    if which != "trie_solve":
        return
    # the trie DP on the encoder's own trees (bf16-like and sparse: nodes with one and with two children)
    for kind in ("bf16", "sparse16"):
        hist = np.bincount(_words(rng, 40_000, kind), minlength=1 << 16)
        tree = encoder._trie_tree(hist, 16)
        n = len(tree[2])
        for M in (1, 8, 15):
            outs = []
            for k in (fastenc, nb):
                arrs = [np.empty((n, M + 1)), np.empty((n, M + 1)), np.empty((n, M + 1), np.int64),
                        np.empty((n, M + 1), np.int64)]
                k._trie_solve(tree[2], tree[1], tree[3], tree[4], 40_000.0, 16.0, 12.0, M, *arrs)
                outs.append(arrs)
            for a, b in zip(*outs):
                assert np.array_equal(a, b)
            # keep_n: another residual cost on the tables of the first call gives what a fresh call gives
            fresh = [np.empty((n, M + 1)), np.empty((n, M + 1)), np.empty((n, M + 1), np.int64),
                     np.empty((n, M + 1), np.int64)]
            fastenc._trie_solve(tree[2], tree[1], tree[3], tree[4], 40_000.0, 16.0, 3.0, M, *fresh)
            kept = outs[0]
            kept[1][:] = np.nan
            kept[3][:] = -7
            fastenc._trie_solve(tree[2], tree[1], tree[3], tree[4], 40_000.0, 16.0, 3.0, M, *kept, keep_n=True)
            for a, b in zip(kept, fresh):
                assert np.array_equal(a, b)
            assert not np.array_equal(fresh[1], outs[1][1])      # the residual cost does change the res table


@pytest.mark.parametrize("kind", ["bf16", "sparse16", "int8"])
@pytest.mark.parametrize("stripe_len", [1, 37, 4096])
def test_stripe_coder_agrees_and_decodes(kind, stripe_len):
    rng = np.random.default_rng(3)
    w = _words(rng, 20_000, kind)
    W = 8 * w.dtype.itemsize
    ts = best_tableset(w, W, stripe_len=stripe_len)
    enc = StripeEncoder(ts, stripe_len)
    pay, sw = enc.encode(w)
    flat = w.astype(np.uint16)
    out = np.zeros(flat.size + 2 * len(sw) + 1, np.uint32)
    sw_n = np.zeros(len(sw), np.uint32)
    p = nb._encode_kernel(flat, stripe_len, enc.sym_bits, enc.sym_len, enc.has_zrun, enc.zr_choice, enc.zr_bits,
                          enc.zr_len, enc.zr_k, out, sw_n)
    assert np.array_equal(pay, out[:p]) and np.array_equal(sw, sw_n)
    for kernel in ("c", "numba"):
        back = decode_stripes(pay, sw, w.size, stripe_len, ts, kernel=kernel)
        assert np.array_equal(back.astype(w.dtype), w)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grouped_scores_in_one_call_agree(seed):
    """The grouped design's partition scores of one C call (fastenc.score_parts) are the floats of
    _Grouped._score, partition by partition, with and without zero-run classes."""
    rng = np.random.default_rng(seed)
    w = np.rint(rng.laplace(0, 4 + 6 * seed, 80_000)).clip(-128, 127).astype(np.int8).view(np.uint8)
    w[rng.random(w.size) < 0.3] = 0
    st = Stats.of(w, 8, 4096)
    checked = 0
    for zeros in (True, False):
        g = encoder._Grouped(st, 8, 16, zeros)
        for zks, zF in [((), np.zeros(0)), ((0, 3), np.array([1234.0, 56.7])), ((1, 4, 6), np.array([9.5, 3.0, 1.0]))]:
            parts = g.partitions(g.M - len(zks))
            ref = [g._score(b, r, zks, zF) for b, r in parts]
            assert g._scores(parts, zks, zF) == ref
            checked += len(parts)
    assert checked >= 10


def test_order_by_count_is_the_stable_argsort():
    """The LUT order by 16-bit radix passes is numpy's stable argsort of -counts (ties in value order) at every
    count range: one pass below 2^16, two below 2^32, the int64 sort above."""
    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 7, 300, 5000, 40_000):
        for top in (0, 1, 3, 1000, 65535, 65536, 10 ** 7, 2 ** 32 - 1, 2 ** 32, 2 ** 40):
            c = rng.integers(0, top + 1, n).astype(np.int64)
            if n:
                c[rng.integers(0, n)] = top
            assert np.array_equal(encoder._order_by_count(c), np.argsort(-c, kind="stable")), (n, top)


def _numba_stripes(enc, w, S):
    flat = w.astype(np.uint16)
    n_st = -(-w.size // S)
    out = np.zeros(w.size + 2 * n_st + 1, np.uint32)
    sw = np.zeros(n_st, np.uint32)
    p = nb._encode_kernel(flat, S, enc.sym_bits, enc.sym_len, enc.has_zrun, enc.zr_choice, enc.zr_bits, enc.zr_len,
                          enc.zr_k, out, sw)
    return p, out[:max(p, 0)], sw


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_zero_run_token_loop_agrees_with_numba(dtype):
    """The C coder's token loop (stripes of at least a quarter zeros: a non-zero word or a whole zero run a
    step, run codes from a table) and its ways out -- runs of 32 words and more, runs reaching a stripe end or
    the last word, runs whose code is longer than 32 bits, stripes of few zeros (the word loop), stripe
    lengths that are not multiples of 64 -- write the numba coder's words; an uncovered word is reported at
    the same index."""
    rng = np.random.default_rng(11)
    W = 8 * np.dtype(dtype).itemsize
    pieces = []
    for p0 in (0.3, 0.75, 0.95, 0.05):
        n = 6000
        x = np.rint(rng.laplace(0, 20, n)).astype(np.int64) % (1 << W)
        x[rng.random(n) < p0] = 0
        pieces.append(x)
    x = np.concatenate(pieces + [np.zeros(3000, np.int64), np.ones(100, np.int64), np.zeros(5000, np.int64)])
    w = x.astype(dtype)
    ts_short = TableSet(W, [ClassSpec(2, RANGE, W, 0), ClassSpec(2, ZRUN, 0, 0), ClassSpec(2, ZRUN, 2, 0),
                            ClassSpec(2, ZRUN, 5, 0)])
    ts_long = TableSet(W, [ClassSpec(1, RANGE, W, 0), ClassSpec(2, ZRUN, 0, 0), ClassSpec(3, ZRUN, 1, 0),
                           ClassSpec(3, ZRUN, 12, 0)])          # long runs' codes exceed 32 bits
    checked = 0
    for ts in (ts_short, ts_long, best_tableset(w, W)):
        for S in (64, 100, 1000, 4096):
            enc = StripeEncoder(ts, S)
            if not enc.has_zrun:
                continue
            pay, sw = enc.encode(w)
            p, ref, sw_n = _numba_stripes(enc, w, S)
            assert np.array_equal(pay, ref) and np.array_equal(sw, sw_n), (S, ts.classes)
            back = decode_stripes(pay, sw, w.size, S, ts, kernel="c")
            assert np.array_equal(back.astype(w.dtype), w)
            checked += 1
    assert checked >= 8
    # an uncovered non-zero word inside a zero-rich stripe: the same index as the numba coder
    ts_hole = TableSet(W, [ClassSpec(1, RANGE, W - 1, 0), ClassSpec(2, ZRUN, 0, 0), ClassSpec(2, ZRUN, 3, 0)])
    w2 = np.zeros(3000, dtype)
    w2[::7] = 3
    w2[2345] = 1 << (W - 1)                                     # beyond RANGE(0, W - 1)
    enc = StripeEncoder(ts_hole, 1000)
    p, _, _ = _numba_stripes(enc, w2, 1000)
    assert p == -1 - 2345
    with pytest.raises(TableError, match="word 2345"):
        enc.encode(w2)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_word_loops_agree_with_numba(dtype):
    """The C coder's loops for stripes of few zeros (with ZRUN classes: non-zero stretches up to the bitmap's next
    zero, then the run) and for tables without ZRUN classes (the branch-free bit writer of 8-bit words) write the
    numba coder's words, for stripe lengths around multiples of 64 and runs at stripe ends; an uncovered word is
    reported at the same index."""
    rng = np.random.default_rng(12)
    W = 8 * np.dtype(dtype).itemsize
    n = 70000                           # (8-bit tensors of 65536 words and more are coded a pair of words a step)
    x = np.rint(rng.laplace(0, 9, n)).astype(np.int64) % (1 << W)
    x[rng.random(n) < 0.08] = 0
    x[:70] = 0
    x[-65:] = 0
    w = x.astype(dtype)
    tables = [TableSet(W, [ClassSpec(2, RANGE, W, 0), ClassSpec(2, ZRUN, 0, 0), ClassSpec(1, ZRUN, 2, 0)]),
              TableSet(W, [ClassSpec(1, RANGE, 3, 0), ClassSpec(2, RANGE, W, 0)]),
              # codes of up to 20 bits: pairs of more than 32 bits are coded word by word
              TableSet(W, [ClassSpec(1, RANGE, 2, 0), ClassSpec(12, RANGE, W, 0), ClassSpec(2, ZRUN, 0, 0)]),
              TableSet(W, [ClassSpec(1, RANGE, 2, 0), ClassSpec(12, RANGE, W, 0)]),
              best_tableset(w, W)]
    checked = 0
    for ts in tables:
        for S in (63, 64, 65, 1000, 4096):
            enc = StripeEncoder(ts, S)
            pay, sw = enc.encode(w)
            p, ref, sw_n = _numba_stripes(enc, w, S)
            assert np.array_equal(pay, ref) and np.array_equal(sw, sw_n), (S, ts.classes)
            checked += enc.has_zrun
    assert checked >= 5
    for ts in (TableSet(W, [ClassSpec(1, RANGE, W - 1, 0), ClassSpec(2, ZRUN, 0, 0), ClassSpec(2, ZRUN, 3, 0)]),
               TableSet(W, [ClassSpec(1, RANGE, W - 1, 0)])):
        for bad in (3210, 3211, 69999):                             # first or second of a pair, the last word
            w2 = (np.arange(70000) % 5 + 1).astype(dtype)
            w2[::13] = 0
            w2[bad] = 1 << (W - 1)                                  # beyond RANGE(0, W - 1)
            enc = StripeEncoder(ts, 1000)
            p, _, _ = _numba_stripes(enc, w2, 1000)
            assert p == -1 - bad
            with pytest.raises(TableError, match=f"word {bad}"):
                enc.encode(w2)


def test_uncovered_word_is_a_table_error():
    ts = TableSet(16, [ClassSpec(1, RANGE, 4, 0), ClassSpec(1, ZRUN, 2, 0)])
    w = np.array([0, 0, 3, 15, 16, 2], np.uint16)
    with pytest.raises(lutzip.errors.TableError, match="word 4 .value 0x10"):
        StripeEncoder(ts, 4).encode(w)


def test_files_are_byte_identical_to_the_numba_encoder(numba_kernels, monkeypatch):
    rng = np.random.default_rng(4)
    arrays = {"big": _words(rng, 30_000, "bf16").view(np.int16).reshape(100, 300),
              "sparse": _words(rng, 25_000, "sparse16").view(np.int16),
              "q8": _words(rng, 9_000, "int8").view(np.int8), "bias": np.arange(40, dtype=np.int16),
              "bias8": np.arange(-20, 20, dtype=np.int8)}
    blob_numba = lutzip.compress(arrays)
    monkeypatch.setattr(encoder, "_k", fastenc.kernels)
    monkeypatch.setattr(bitstream, "kernels", fastenc.kernels)
    blob_c = lutzip.compress(arrays)
    assert blob_c == blob_numba
    # and the file decodes bit-exactly with the pure-Python oracle and the C decoder
    from test_codec_oracle import oracle_decode
    c = ct.from_bytes(blob_c)
    streams = {}
    for t in c.tensors:
        streams.setdefault((t.offset, t.table), t)
    assert len(streams) >= 3
    for (off, table), t in streams.items():
        n = int(t.stripe_words.astype(np.int64).sum())
        words = np.asarray(c.payload[off // 4:off // 4 + n])
        numel = t.numel if t.stream_numel is None else int(t.stream_numel)
        ref = decode_stripes(words, t.stripe_words, numel, t.stripe_len, c.tables[table], kernel="c")
        assert np.array_equal(ref, decode_stripes(words, t.stripe_words, numel, t.stripe_len, c.tables[table],
                                                  kernel="numba"))
        if numel < 12_000:
            assert np.array_equal(np.array(oracle_decode(words, t.stripe_words, numel, t.stripe_len, c.tables[table]),
                                           ref.dtype), ref)
    assert {k: v.tolist() for k, v in lutzip.decompress(blob_c).items()} == {k: v.tolist() for k, v in arrays.items()}


def test_compress_does_not_import_numba(tmp_path):
    src = tmp_path / "w.npz"
    np.savez(src, fc=np.random.default_rng(5).standard_normal((20, 28)).astype(np.float32),
             b=np.arange(40, dtype=np.float32))
    code = ("import sys\nfrom lutzip.cli import main\n"
            f"sys.argv = ['lutzip', 'compress', {str(src)!r}, '-o', {str(tmp_path / 'w.lutz')!r}, '--bf16']\n"
            "rc = main()\nprint(rc, 'numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["0", "False"]
    assert (tmp_path / "w.lutz").stat().st_size > 0


def test_numba_fallback_without_the_c_kernels(tmp_path):
    code = ("import numpy as np, lutzip, sys\n"
            "from lutzip.codec import fastenc\n"
            "a = {'x': (np.arange(5000) % 7).astype(np.int16)}\n"
            "b = lutzip.compress(a)\n"
            "assert np.array_equal(lutzip.decompress(b)['x'], a['x'])\n"
            "print(fastenc.why_not(), 'numba' in sys.modules, b.hex()[:64], len(b))\n")
    import os
    env = dict(os.environ, LUTZIP_FASTENC="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("LUTZIP_FASTENC=0 True")
    b = lutzip.compress({"x": (np.arange(5000) % 7).astype(np.int16)})
    assert out.stdout.split()[-2:] == [b.hex()[:64], str(len(b))]


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_give_the_same_bytes(tmp_path, threads, monkeypatch):
    import lutzip.codec.writer as writer
    monkeypatch.setattr(writer, "CHUNK_WORDS", 1 << 14)          # several parts per tensor, several tensors ahead
    rng = np.random.default_rng(6)
    arrays = {"a": _words(rng, 70_000, "bf16").view(np.int16), "s": _words(rng, 50_001, "sparse16").view(np.int16),
              "q": _words(rng, 30_000, "int8").view(np.int8), "b": np.arange(40, dtype=np.int16),
              "e": np.zeros(0, np.int16)}
    one = lutzip.compress(arrays, stripe_len=512)
    assert lutzip.compress(arrays, stripe_len=512, threads=threads) == one
    lutzip.save(tmp_path / "1.lutz", arrays, stripe_len=512)
    lutzip.save(tmp_path / "n.lutz", arrays, stripe_len=512, threads=threads)
    assert (tmp_path / "n.lutz").read_bytes() == (tmp_path / "1.lutz").read_bytes()
    back = lutzip.load(tmp_path / "n.lutz")
    assert all(np.array_equal(back[k], v) for k, v in arrays.items())
    ts = best_tableset(arrays["s"].view(np.uint16), 16)
    p1, sw1 = bitstream.encode_stripes(arrays["s"].view(np.uint16), ts, 100)
    pn, swn = bitstream.encode_stripes(arrays["s"].view(np.uint16), ts, 100, threads=threads)
    assert np.array_equal(p1, pn) and np.array_equal(sw1, swn)


def test_threads_option_and_cli(tmp_path):
    with pytest.raises(lutzip.OptionError, match="threads"):
        lutzip.compress({"a": np.arange(5, dtype=np.int16)}, threads=0)
    src = tmp_path / "w.npy"
    np.save(src, (np.arange(20_000) % 300).astype(np.int16))
    outs = []
    for t in ("1", "2"):
        r = subprocess.run([sys.executable, "-c", "import sys; from lutzip.cli import main; sys.exit(main())",
                            "compress", str(src), "-o", str(tmp_path / f"{t}.lutz"), "--threads", t, "--stripe", "256"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append((tmp_path / f"{t}.lutz").read_bytes())
    assert outs[0] == outs[1]
    r = subprocess.run([sys.executable, "-c", "import sys; from lutzip.cli import main; sys.exit(main())",
                        "compress", str(src), "-o", str(tmp_path / "x.lutz"), "--threads", "0"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "Traceback" not in r.stderr and "thread count" in r.stderr


@pytest.mark.parametrize("kind", ["bf16", "sparse16", "int8"])
def test_trie_tree_agrees_with_numpy(kind, numba_kernels):
    rng = np.random.default_rng(7)
    for n in (1, 50, 5000, 60_000):
        w = _words(rng, n, kind)
        W = 8 * w.dtype.itemsize
        hist = np.bincount(w, minlength=1 << W)
        ref = encoder._trie_tree(hist, W)                       # numpy (the numba kernels are patched in)
        vals = np.flatnonzero(hist)
        h = hist[vals].astype(np.float64)
        got = fastenc.trie_tree(vals, np.r_[0.0, np.cumsum(h)], np.r_[0.0, np.cumsum(h * np.log2(h))], W, 16.0)
        assert len(ref[0]) == len(got[0]) > 0
        for a, b in zip(ref, got):
            assert np.array_equal(a, b)
        # the tree of a subset (the values left when the most frequent go to LUT3), from the whole set's terms
        for t in (0, 1, len(vals) // 3, len(vals) - 1):
            drop = np.argsort(-h, kind="stable")[:t]
            rest = hist.copy()
            rest[vals[drop]] = 0
            if not rest.any():
                continue
            ref = encoder._trie_tree(rest, W)
            keep = np.ones(len(vals), np.uint8)
            keep[drop] = 0
            got = fastenc.trie_tree_sub(vals, h, h * np.log2(h), keep if t else None, W, 16.0)
            assert len(ref[0]) == len(got[0]) > 0
            for a, b in zip(ref, got):
                assert np.array_equal(a, b)


def test_bench_encode_rows():
    from lutzip import bench
    rng = np.random.default_rng(8)
    arrays = {"a": _words(rng, 20_000, "bf16").view(np.int16), "b": np.arange(50, dtype=np.int16)}
    r = bench.encode_speed(arrays, repeat=1, stripe_len=1024, cpus={0, 1})
    assert r["raw"] == 40_100 and 0 < r["lutzip"] < r["raw"]
    assert {"lutzip.compress", "stripe coding", "lutzip.compress, numba kernels (before)",
            "zstd -3 compress"} <= set(r["MBps"]) and all(v > 0 for v in r["MBps"].values())
    text = bench.format_encode_speed("t", {"bf16": r}, repeat=1)
    assert "/ zstd -3" in text and "stripe coding, numba kernel" in text
    with bench.numba_kernels():
        assert encoder._k() is nb
    assert encoder._k() is fastenc


@pytest.mark.parametrize("kind", ["bf16", "sparse16", "int8"])
def test_exact_bits_fast_path_agrees_with_table_cost(kind):
    """encoder.exact_bits (lengths at the present values only) against TableCost.bits over the full 2^W length
    table, for tables designed on other data (some values uncovered: inf), with and without zero-run classes."""
    rng = np.random.default_rng(11)
    W = 8 if kind == "int8" else 16
    sets = []
    for seed_kind in (kind, "sparse16" if kind == "bf16" else "bf16"):
        w = _words(rng, 30_000, seed_kind)
        if W == 8:
            w = (w & 0xFF).astype(np.uint8)
        for L in (4, 8):
            sets.append(encoder.design_tableset(Stats.of(w, W, 256), L)[0])
    sets.append(TableSet(W, [ClassSpec(1, ZRUN, 3), ClassSpec(1, RANGE, W - 4, 16)], np.zeros(0, np.uint16)))
    sets.append(TableSet(W, [ClassSpec(2, ZRUN, 2), ClassSpec(2, ZRUN, 0), ClassSpec(1, RANGE, W, 0)],
                         np.zeros(0, np.uint16)))     # zero also a value: single zeros priced either way
    found = set()
    for n, S in ((5000, 4096), (20_000, 37), (1, 4096)):
        st = Stats.of(_words(rng, n, kind).astype(np.uint8 if W == 8 else np.uint16) & ((1 << W) - 1), W, S)
        for ts in sets:
            want = encoder.TableCost(ts, len(st.runs) - 1)._bits_numpy(st)   # numpy, the full length table
            got = encoder.exact_bits(ts, Stats(st.word_bits, st.hist, st.runs, st.n_stripes, st.stripe_len))
            assert got == want
            found.add(np.isinf(want))
    assert found == {True, False}


def _random_tableset(rng, W):
    """A valid-looking table set of random classes: overlapping RANGE intervals, LUT blocks with repeated values
    (zero among them at times), zero-run classes; code lengths at random (Kraft is not needed for costing)."""
    classes, lut3 = [], []
    for _ in range(int(rng.integers(1, 17))):
        kind = int(rng.choice([0, 1, 1, 2]))
        if kind == 0 and len(lut3) < 4000:
            k = int(rng.integers(0, 6))
            vals = rng.integers(0, 1 << W, 1 << k) if rng.random() < 0.7 else rng.integers(0, 40, 1 << k)
            classes.append(ClassSpec(int(rng.integers(1, 13)), 0, k, len(lut3)))
            lut3 += [int(v) for v in vals]
        elif kind == 2:
            classes.append(ClassSpec(int(rng.integers(1, 13)), ZRUN, int(rng.integers(0, 9))))
        else:
            k = int(rng.integers(0, W + 1))
            base = int(rng.integers(0, (1 << W) >> k)) << k
            classes.append(ClassSpec(int(rng.integers(1, 13)), RANGE, k, base))
    return TableSet(W, classes, np.array(lut3, np.uint16))


@pytest.mark.parametrize("W", [8, 16])
def test_exact_bits_c_agrees_with_numpy_on_random_tables(W):
    """fastenc.exact_bits (segment sums, O(classes + LUT3)) against the numpy costing from the full 2^W length
    table (TableCost._bits_numpy), on random table sets and statistics: covered, uncovered (inf), zero runs."""
    rng = np.random.default_rng(5)
    seen = set()
    for trial in range(400):
        n = int(rng.integers(1, 3000))
        kind = ("bf16", "sparse16", "int8")[trial % 3]
        w = _words(rng, n, kind)
        w = (w & 0xFF).astype(np.uint8) if W == 8 else w.astype(np.uint16)
        if trial % 5 == 0:
            w = w & 0x3F
        st = Stats.of(w, W, int(rng.choice([7, 64, 4096])))
        ts = _random_tableset(rng, W)
        want = encoder.TableCost(ts, len(st.runs) - 1)._bits_numpy(st)
        got = encoder.exact_bits(ts, st)
        assert got == want, (trial, ts)
        assert encoder.TableCost(ts, 1).bits(st) == want
        seen.add(np.isinf(want))
    assert seen == {True, False}


def test_package_merge_small_path_equals_numba():
    """lze_package_merge's stack path (n <= 16, L <= 15: an item's symbol counts in 4-bit fields) = numba's
    _package_merge, and so does the general path above it: skewed weights whose lengths reach the limit L, ties
    (the stable order and the leaves-first merge decide), n 2..40, L from the least that fits to 12."""
    rng = np.random.default_rng(11)
    for trial in range(400):
        n = int(rng.integers(2, 17)) if trial % 4 else int(rng.integers(17, 41))
        kind = trial % 3
        if kind == 0:
            w = rng.integers(1, 6, n).astype(np.float64)               # many ties
        elif kind == 1:
            w = np.floor(2.0 ** rng.uniform(0, 30, n))                 # skewed: lengths at the limit
        else:
            w = rng.integers(1, 1000, n).astype(np.float64)
        L = int(rng.integers(max(1, (n - 1).bit_length()), 13))
        got = fastenc._package_merge(w, L)
        ref = nb._package_merge(w, L)
        assert np.array_equal(got, ref), (trial, n, L)
        assert got.max() <= L and (2.0 ** -got.astype(np.float64)).sum() <= 1.0
