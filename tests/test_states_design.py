"""Class sets cut for two code tables (lutzip.codec.states_design, ``states.apply(..., redesign=True)``): the cut's
dynamic programme against brute force, the table set's rules (a class never mixes small and large values, F is
the small classes and the ZRUN classes, every value has a class), and files that are smaller than without the
redesign and decode bit for bit with the numba kernel, the C decoder and the pure-Python reference."""
import itertools

import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import fastdec, states
from lutzip.codec import states_design as sd
from lutzip.codec.decode import decode_stripes
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec


def context_tensor(seed=0, rows=192, cols=256, zeros=0.0):
    """int8 rows of alternating spread (Laplace scale 2 or 25 per block of 4 rows): the previous value's magnitude
    says which spread the next one comes from, which one order-0 table cannot use."""
    rng = np.random.default_rng(seed)
    scale = np.where((np.arange(rows) // 4) % 2 == 0, 2.0, 25.0)[:, None]
    a = np.clip(np.rint(rng.laplace(0, 1, (rows, cols)) * scale), -127, 127).astype(np.int8)
    if zeros:
        a[rng.random(a.shape) < zeros] = 0
    return a


def brute_cut(a, b, m, max_k, mu, L):
    """The cheapest cut of the whole list into exactly ``m`` classes of ``2^k`` entries (padded at the end) by
    enumeration, in the cost of :func:`sd._cut`."""
    n = len(a)
    best = np.inf
    for ks in itertools.product(range(max_k + 1), repeat=m):
        pos, cost, ok = 0, 0.0, True
        for k in ks:
            if pos >= n:
                ok = False
                break
            end = min(pos + (1 << k), n)
            sa, sb = float(np.sum(a[pos:end])), float(np.sum(b[pos:end]))
            cost += float(sd._code_cost(sa, mu[0], L)) + float(sd._code_cost(sb, mu[1], L)) + (sa + sb) * k
            pos = end
        if ok and pos == n:
            best = min(best, cost)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mu", [(None, None), (300.0, 500.0)])
def test_cut_matches_brute_force(seed, mu):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 11))
    a = np.sort(rng.integers(0, 200, n))[::-1].astype(np.int64)
    b = rng.integers(0, 200, n).astype(np.int64)
    f, back = sd._cut(a, b, 4, 3, mu, 8)
    for m in range(1, 5):
        want = brute_cut(a, b, m, 3, mu, 8)
        assert np.isclose(f[m, n], want) or (np.isinf(want) and np.isinf(f[m, n])), (m, f[m, n], want)
        if np.isfinite(want):
            cut = sd._classes_of(back, np.arange(n), m, n)
            assert len(cut) == m and [v for _, vs in cut for v in vs] == list(range(n))


@pytest.mark.parametrize("zeros", [0.0, 0.5])
def test_design_rules(zeros):
    w = codec.to_words(context_tensor(zeros=zeros))[0]
    zr = [ClassSpec(4, ZRUN, 2, 0)] if zeros else []
    T = sd.thresholds([w], 1)[0]
    two, bits = sd.design_two([w], zr, T)
    two.validate()
    assert two.lens_b is not None and len(two.classes) <= 16
    mag = np.abs(sd.signed8(np.arange(256)))
    covered = set()
    for j, cl in enumerate(two.classes):
        in_f = bool((two.follow >> j) & 1)
        if cl.kind == LUT:
            vals = two.lut3[cl.param:cl.param + (1 << cl.k)].astype(np.int64)
            small = mag[vals] < T
            assert small.all() == in_f and small.any() == in_f, j        # never small and large in one class
            covered |= set(vals.tolist())
        elif cl.kind == ZRUN:
            assert in_f
        else:
            assert cl.kind == RANGE and cl.k == 8 and not in_f
    assert (0 in covered) == (not zeros)                                  # zero: a value class only without ZRUN
    # the estimate is the bits of the value-level state counts with the set's lengths, within the ideal's reach
    ha, hb = sd.state_counts([w], T)
    assert bits >= sd.ideal_bits(ha, hb) - 1e-6


@pytest.mark.parametrize("zeros", [0.0, 0.6])
def test_redesigned_streams_decode_bit_exact(zeros):
    """The payload :func:`sd.redesign` returns decodes to the words with every decoder, and its size is that
    payload plus the table set's bytes."""
    w = codec.to_words(context_tensor(5, zeros=zeros))[0]
    ts = codec.compress({"a": context_tensor(5, zeros=zeros)}, reorder=False).tables[0]
    S = 4096
    two, coded, size = sd.redesign([w], [S], ts)
    payload, sw = coded[0]
    assert size == 4 * int(np.sum(sw, dtype=np.int64)) + sd.table_cost(two)
    assert sd.table_bytes(two) == len(ct._pack_tables([two], 5))
    if fastdec.available():
        from test_states_fast import agree
        got = agree(payload, sw, w.size, S, two)
    else:
        got = decode_stripes(payload, sw, w.size, S, two)
    assert np.array_equal(np.asarray(got).astype(np.uint8), w)


@pytest.mark.parametrize("zeros", [0.0, 0.6])
def test_apply_redesign_never_larger_and_round_trips(zeros):
    arrays = {"ctx": context_tensor(3, zeros=zeros), "other": context_tensor(4, 64, 128, zeros)}
    c = codec.compress(arrays)
    plain = ct.to_bytes(states.apply(c, L=8))
    rep = []
    data = ct.to_bytes(states.apply(c, L=8, report=rep, redesign=True))
    assert rep and len(data) <= len(plain)
    assert (data == plain) == (not any(r["redesigned"] for r in rep))
    back = codec.decompress(ct.from_bytes(data))
    for k, v in arrays.items():
        assert np.array_equal(back[k].view(np.uint8), v.view(np.uint8)), k


def test_real_tensor_smaller_with_redesign():
    """nudenet model.5.conv.weight, int8 dense: 48 004 B with the two-table rewrite, 47 913 B with the classes cut
    for two states when measured (-0.19 %); decoded bit for bit."""
    from lutzip.weights.models import load_real_model, real_model_path
    from lutzip.weights.quantize import prepare
    if real_model_path("nudenet") is None:
        pytest.skip("nudenet is not installed")
    name = "model.5.conv.weight"
    prep, _ = prepare({name: load_real_model("nudenet")[name]}, quantize="int8", prune_fraction=0.0)
    c = codec.compress(prep)
    plain = ct.to_bytes(states.apply(c, L=8))
    rep = []
    data = ct.to_bytes(states.apply(c, L=8, report=rep, redesign=True))
    assert [r["redesigned"] for r in rep] == [True]
    assert len(data) < len(plain)
    back = codec.decompress(ct.from_bytes(data))
    assert np.array_equal(back[name].view(np.uint8), prep[name].view(np.uint8))


def test_redesign_skips_16_bit_sets():
    a = np.clip(np.rint(np.random.default_rng(0).laplace(0, 300, 20000)), -30000, 30000).astype(np.int16)
    c = codec.compress({"a": a})
    rep = []
    states.apply(c, L=8, report=rep, redesign=True)
    assert not any(r["redesigned"] for r in rep)
    assert sd.redesign([codec.to_words(a)[0]], [4096], c.tables[0]) is None


def sign_tensor(seed=0, n=40000, scale=6.0, flip=0.1):
    """int8 values whose sign persists (a Markov chain flipping with probability ``flip``): the previous value's
    sign, not its magnitude, says what comes next (nudenet's dense 3x3 convolutions, mildly)."""
    rng = np.random.default_rng(seed)
    sign = np.where(np.cumsum(rng.random(n) < flip) % 2 == 0, 1, -1)
    mag = np.minimum(np.rint(np.abs(rng.laplace(0, scale, n))) + 1, 127)
    return (sign * mag).astype(np.int8)


def test_thresholds_from_pair_counts_match_state_counts():
    """:func:`sd.thresholds` (one pass of pair counts) ranks the thresholds exactly as the bits of
    :func:`sd.state_counts` for each, the first word of every array read in state A."""
    words = [codec.to_words(context_tensor(s, 40, 64))[0] for s in range(3)]
    scored = sorted((sd.ideal_bits(*sd.state_counts(words, T)), T) for T in range(1, 65))
    assert sd.thresholds(words, 5) == [T for _, T in scored[:5]]
    joint, first = sd.pair_counts(words)
    assert first.sum() == 3 and joint.sum() == sum(w.size - 1 for w in words)


def test_intervals_are_the_brute_force_best():
    w = [codec.to_words(sign_tensor(1, 6000, 2.0))[0]]
    got = sd.intervals(w, 1)[0]
    vals = sd.signed8(np.arange(256))
    present = sorted(set(sd.signed8(w[0]).tolist()))
    best = min((sd.ideal_bits(*sd.state_counts(w, (vals >= lo) & (vals <= hi))), lo, hi)
               for lo in present for hi in present if lo <= hi and not (lo == present[0] and hi == present[-1]))
    assert got[0] == pytest.approx(best[0])
    assert np.array_equal(got[3], (vals >= got[1]) & (vals <= got[2]))
    assert got[1] >= 0 or got[2] <= 0                   # a sign context: one side of zero only
    ha, hb = sd.state_counts(w, got[3])
    assert sd.ideal_bits(ha, hb) == pytest.approx(got[0])
    mag = min(sd.ideal_bits(*sd.state_counts(w, T)) for T in range(1, 65))
    assert got[0] < 0.97 * mag                          # the sign says more than any magnitude threshold


@pytest.mark.parametrize("zero_in_s", [False, True])
def test_design_rules_with_a_value_set(zero_in_s):
    """A set ``S`` that is not a magnitude threshold: no class mixes values in and out of ``S``, ``F`` is the
    classes of ``S`` and the ZRUN classes exactly when 0 is in ``S``; the streams decode."""
    a = sign_tensor(2, 30000)
    a[np.random.default_rng(3).random(a.size) < 0.3] = 0
    w = codec.to_words(a)[0]
    vals = sd.signed8(np.arange(256))
    S = vals >= (0 if zero_in_s else 1)
    zr = [ClassSpec(4, ZRUN, 2, 0)]
    two, bits = sd.design_two([w], zr, S)
    two.validate()
    for j, cl in enumerate(two.classes):
        in_f = bool((two.follow >> j) & 1)
        if cl.kind == LUT:
            inside = S[two.lut3[cl.param:cl.param + (1 << cl.k)].astype(np.int64)]
            assert inside.all() == in_f and inside.any() == in_f, j
        elif cl.kind == ZRUN:
            assert in_f == zero_in_s
        else:
            assert cl.kind == RANGE and not in_f
    payload, sw, _ = states._encode2(w, 4096, two)
    assert np.array_equal(np.asarray(decode_stripes(payload, sw, w.size, 4096, two)).astype(np.uint8), w)


def test_redesign_with_intervals_beats_thresholds_on_a_sign_context():
    w = codec.to_words(sign_tensor(4, 60000))[0]
    ts = codec.compress({"a": sign_tensor(4, 60000)}, reorder=False).tables[0]
    old = sd.redesign([w], [4096], ts, n_intervals=0)
    new = sd.redesign([w], [4096], ts)
    assert new[2] < 0.98 * old[2]
    payload, sw = new[1][0]
    assert np.array_equal(np.asarray(decode_stripes(payload, sw, w.size, 4096, new[0])).astype(np.uint8), w)


def test_apply_redesign_splits_a_shared_set(monkeypatch):
    """Two tensors that share a one-table set but want different value sets ``S`` (a sign context and a magnitude
    context): with ``redesign`` each gets a table set of its own where that is smaller, and the file decodes."""
    mag = context_tensor(6, 96, 256)
    rng = np.random.default_rng(7)
    v = mag.reshape(-1)                                 # the same values, reordered: runs of one sign, no magnitude
    pos, neg = rng.permutation(v[v >= 0]), rng.permutation(v[v < 0])   # context (so the encoder shares one set)
    out, i, j, side = [], 0, 0, 0
    while i < len(pos) or j < len(neg):
        n = int(rng.geometric(0.1))
        if side == 0:
            out.append(pos[i:i + n])
            i += n
        else:
            out.append(neg[j:j + n])
            j += n
        side ^= 1
    sgn = np.concatenate(out).reshape(mag.shape)
    arrays = {"mag": mag, "sgn": sgn}
    c = codec.compress(arrays, reorder=False)
    if len({t.table for t in c.tensors}) != 1:
        pytest.skip("the one-table encoder did not share one set")
    monkeypatch.setattr(states, "SPLIT_MIN", 1 << 40)
    whole = ct.to_bytes(states.apply(c, L=8, redesign=True))
    monkeypatch.setattr(states, "SPLIT_MIN", 4096)
    rep = []
    c2 = states.apply(c, L=8, redesign=True, report=rep)
    split = ct.to_bytes(c2)
    assert rep[0]["split"] == 2 and len(split) < len(whole)
    assert len({t.table for t in c2.tensors}) == 2 and len(c2.tables) == 2
    back = codec.decompress(ct.from_bytes(split))
    for k, v in arrays.items():
        assert np.array_equal(back[k].view(np.uint8), v.view(np.uint8)), k
