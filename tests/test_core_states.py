"""Two code tables (format version 5, docs/FORMAT.md section 2.1) in the hardware core: ``STATES=2``.

The table image (``expand_hw(ts, L, states=2)``: LUT1 of 2^(L+1) entries with the next state in bit 15), the
reference model (:mod:`lutzip.hdl.flows.model` with ``STATES=2``) against the software decoder, the parameter
checks, and the core itself on real two-state streams (``lutzip compress --states 2``), random two-state table
sets and symbols, and a corrupt state-B prefix, in MyHDL, GHDL, Icarus and Verilator (cycle-exact), with source
pauses and sink backpressure.
"""
import numpy as np
import pytest

from lutzip import api
from lutzip.codec import bitstream as bs
from lutzip.codec import container as ct
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet, expand_hw
from lutzip.errors import UnsupportedError
from lutzip.hdl.core.ports import CoreParams
from lutzip.hdl.flows import model as M
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.vectors import Vectors, container_vectors, make_vectors, random_stripe, random_tableset

TWO = {"STATES": 2}


def need(sim):
    why = S.available(sim)
    if why:
        pytest.skip(f"{sim} not usable here: {why}")


# ------------------------------------------------------------------------------------------------ vectors
def v5_container(seed=1, n=6000, zeros=0.8, dtype=np.int8, stripe_len=1024):
    """A real two-state container (``compress(states=2)``) of a Laplace tensor with zeros."""
    rng = np.random.default_rng(seed)
    a = np.round(rng.laplace(0, 3 if dtype == np.int8 else 40, n))
    a = np.clip(a, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)
    a[rng.random(n) < zeros] = 0
    c = ct.from_bytes(api.compress({"w": a}, states=2, stripe_len=stripe_len))
    assert c.tables[c.stream_of(c.tensors[0]).table].n_states == 2, "the encoder chose one code table"
    return c, a


def hand_table():
    """Complete state-A code (0: zero run, 10: small value, 11: raw); after a zero run state B, where only
    0 (small value) and 10 (raw) exist: the prefix 11 is invalid in state B, valid in state A."""
    return TableSet(16, [ClassSpec(1, ZRUN, 3, 0), ClassSpec(2, LUT, 2, 0), ClassSpec(2, RANGE, 16, 0)],
                    np.array([1, 2, 0xFFFF, 0xFFFE], np.uint16), lens_b=(0, 1, 2), follow=0b001).validate()


def random_tableset2(rng, W=16, L=8):
    """A random valid two-state table set: random classes, random state-B lengths over a random subset, random
    follow mask."""
    from lutzip.codec.huffman import limited_code_lengths
    ts = random_tableset(rng, W=W, L=L)
    n = len(ts.classes)
    while True:
        inb = rng.random(n) < 0.7
        if inb.any():
            break
    lb = [0] * n
    idx = np.nonzero(inb)[0]
    lens = limited_code_lengths([int(f) for f in rng.integers(1, 1000, len(idx))], L) if len(idx) > 1 else [1]
    for j, c in zip(idx, lens):
        lb[int(j)] = int(c)
    follow = int(rng.integers(1, 1 << n))
    ts.lens_b, ts.follow = tuple(lb), follow
    return ts.validate()


def bad_b_prefix_vectors(**params):
    """Good stripes around three bad ones: a state-B prefix 11 after a zero run (error 3), the same bits read in
    state A after a literal (good), and a header-only stripe."""
    ts = hand_table()

    def pack(bits, n):
        bits += "0" * (-len(bits) % 32)
        return [bs.STRIPE_MARKER | (n - 1)] + [int(bits[i:i + 32], 2) for i in range(0, len(bits), 32)]

    bad = pack("0" + "011" + "11" + "0" * 16, 5)             # ZRUN(4) -> B: "11" is no B code
    good = pack("10" + "01" + "11" + "0" * 15 + "1", 2)      # LUT -> A: "11" is RANGE(raw) 0x0001
    zr = pack("0" + "111" + "0" + "10" + "0" + "0" * 16, 10)  # ZRUN(8) -> B "0" LUT(2) -> A "0" ZRUN(1)
    packets = [zr, bad, good, zr, pack("", 3), good]
    return Vectors.from_packets(packets, M.table_ops(ts, 8, states=2), **{**TWO, **params})


# ------------------------------------------------------------------------------------------ table image
def test_expand_hw_two_tables():
    c, _ = v5_container()
    ts = c.tables[0]
    ops = expand_hw(ts, 8, states=2)
    lut1 = {a: d for s, a, d in ops if s == 0}
    assert sorted(lut1) == list(range(512))
    from lutzip.codec.states import state_lut1
    ref = state_lut1(ts, 8)
    for a, d in lut1.items():
        assert d & 0x7FFF == ref[a]
        cls = (d >> 10) & 15
        assert d >> 15 == ((ts.follow >> cls) & 1 if d >> 14 & 1 else 0)
    assert any(d >> 15 for d in lut1.values())
    # LUT2 / LUT3 as for one table; a one-table set is written the same for either core
    assert [o for o in ops if o[0] != 0] == [o for o in expand_hw(TableSet(ts.word_bits, ts.classes, ts.lut3), 8)
                                             if o[0] != 0]
    one = TableSet(ts.word_bits, ts.classes, ts.lut3)
    assert expand_hw(one, 8, states=2) == expand_hw(one, 8)
    with pytest.raises(UnsupportedError, match="two code tables"):
        expand_hw(ts, 8)
    with pytest.raises(UnsupportedError):
        expand_hw(ts, 8, states=3)


def test_model_matches_software_decoder_v5():
    """The hardware model with STATES=2 decodes a real two-state file as the library does; the one-table
    model reads the same stripes differently (so the state matters in these vectors)."""
    c, a = v5_container(seed=2)
    vec = container_vectors(c, "w", **TWO)
    got = vec.expected
    assert not got[:, 2].any()
    assert np.array_equal(got[:, 0], api.decompress(ct.to_bytes(c))["w"].view(np.uint8).reshape(-1))
    assert np.array_equal(got[:, 0], a.view(np.uint8))
    ops_a = [(s, ad, d & 0x7FFF) for s, ad, d in vec.table_ops if not (s == 0 and ad >= 256)]
    one = M.expected_outputs(vec.stripes, ops_a, 8)
    assert len(one) != len(got) or not np.array_equal(one, got)


def test_parameter_checks():
    assert CoreParams.make(STATES=2).STATES == 2
    for bad, msg in [({"STATES": 3}, "STATES=3"), ({"STATES": True}, "STATES=True"),
                     ({"STATES": 2, "L": 12}, "L <= 11"), ({"STATES": 2, "L": 12, "FRONT": "vector"}, "L <= 11")]:
        with pytest.raises(UnsupportedError, match=msg):
            CoreParams.make(**bad)
    from lutzip.hdl.core.decoder_core import decoder_core
    from lutzip.hdl.core.ports import core_signals
    with pytest.raises(UnsupportedError, match="L <= 11"):
        decoder_core(**core_signals(), STATES=2, L=12)
    # STATES=2 with STEP="onehot" builds the adder step (as L = 12 does)
    from lutzip.hdl.fronts.window.front_window import window_step
    assert window_step("onehot", True, 8, 2) == "adder" and window_step("onehot", True, 8, 1) == "onehot"


# ------------------------------------------------------------------------------------------------- MyHDL
#: the builds under test: the window front with either LUT1 read, the vector front
FRONTS = {"window": {"FRONT": "window"}, "window-dist": {"FRONT": "window", "LUT1_RAM": "distributed"},
          "vector": {"FRONT": "vector"}}
SLOW_VECTOR = pytest.param("vector", marks=pytest.mark.slow)   # default run: the vector front in MyHDL only


@pytest.mark.parametrize("front", ["window", "window-dist", SLOW_VECTOR])
def test_myhdl_real_v5_stream(front):
    c, _ = v5_container(seed=3, n=4000)
    vec = container_vectors(c, "w", **FRONTS[front], **TWO)
    S.check(vec, "myhdl", in_gap=0.15, out_stall=0.25, seed=4)


def test_myhdl_one_table_image_on_two_state_core():
    """A version 2-4 table set on the STATES=2 core: written and decoded as before."""
    rng = np.random.default_rng(7)
    w = np.round(rng.laplace(0, 3, 2500)).astype(np.int8).view(np.uint8)
    w[rng.random(w.size) < 0.6] = 0
    from lutzip.codec.encoder import best_tableset
    ts = best_tableset(w, 8)
    vec = make_vectors(ts, w, 700, **TWO)
    assert vec.table_ops == make_vectors(ts, w, 700).table_ops
    S.check(vec, "myhdl", in_gap=0.1, out_stall=0.3, seed=2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_myhdl_random_two_state_sets(seed):
    """Random two-state table sets (any kinds, random follow masks), random symbols; both fronts, both LUT1
    read styles."""
    rng = np.random.default_rng(seed)
    W = [16, 8][seed % 2]
    ts = random_tableset2(rng, W=W)
    pk, words = [], []
    for _ in range(6):
        p, w = random_stripe(rng, ts, int(rng.integers(1, 150)))
        pk.append(p)
        words += w
    vec = Vectors.from_packets(pk, M.table_ops(ts, 8, states=2), W=W, **list(FRONTS.values())[seed], **TWO)
    assert not vec.expected[:, 2].any() and vec.expected[:, 0].tolist() == words
    S.check(vec, "myhdl", in_gap=0.2, out_stall=0.2, seed=seed)


@pytest.mark.parametrize("front", ["window", "vector"])
def test_myhdl_invalid_state_b_prefix(front):
    vec = bad_b_prefix_vectors(**FRONTS[front])
    codes = vec.expected[vec.expected[:, 2] == 1, 0].tolist()
    assert codes == [bs.ERR_INVALID_PREFIX, bs.ERR_OVERRUN]
    assert vec.expected[:, 1].sum() == 6
    S.check(vec, "myhdl", in_gap=0.2, out_stall=0.3, seed=5)


@pytest.mark.parametrize("front", ["window", "vector"])
def test_myhdl_corrupt_v5_stripes(front):
    """Bit flips, truncations and garbage payloads in a real two-state stream: the words and error markers the
    model gives (state-B prefixes read where the state says), and resynchronisation at the next stripe."""
    rng = np.random.default_rng(21)
    c, _ = v5_container(seed=6, n=2400, stripe_len=200)
    vec = container_vectors(c, "w", W=16, **FRONTS[front], **TWO)
    st = [s.copy() for s in vec.stripes]
    for i in range(0, len(st), 2):
        kind = i // 2 % 3
        if kind == 0:
            st[i][int(rng.integers(1, len(st[i])))] ^= np.uint32(1 << int(rng.integers(0, 32)))
        elif kind == 1:
            st[i] = st[i][:max(1, len(st[i]) // 2)]
        else:
            st[i][1:] = rng.integers(0, 1 << 32, len(st[i]) - 1, dtype=np.uint64).astype(np.uint32)
    bad = Vectors.from_packets(st, vec.table_ops, **vec.params)
    assert bad.expected[:, 2].sum() >= 3
    S.check(bad, "myhdl", in_gap=0.2, out_stall=0.3, seed=6)


# --------------------------------------------------------------------------------- four simulators
_sim_cases = {}


@pytest.fixture(params=["window", SLOW_VECTOR])
def sim_case(request, tmp_path_factory, hdl_cache):
    """A real two-state stream and the invalid state-B prefix vectors with their MyHDL runs (once per front)."""
    front = request.param
    if front in _sim_cases:
        return _sim_cases[front]
    c, _ = v5_container(seed=4, n=3000, zeros=0.75, stripe_len=700)
    vec = container_vectors(c, "w", W=16, **FRONTS[front], **TWO)      # int8 words, zero-extended by the 16-bit core
    stim = S.make_stimulus(vec, in_gap=0.2, out_stall=0.3, seed=8)
    ref = S.run("myhdl", stim, tmp_path_factory.mktemp("myhdl-v5"), vec.params, build_dir=hdl_cache)
    assert S.first_difference(ref, vec.expected) is None
    bvec = bad_b_prefix_vectors(**FRONTS[front])
    bstim = S.make_stimulus(bvec, in_gap=0.3, out_stall=0.3, seed=9)
    bref = S.run("myhdl", bstim, tmp_path_factory.mktemp("myhdl-v5bad"), bvec.params, build_dir=hdl_cache)
    assert S.first_difference(bref, bvec.expected) is None
    _sim_cases[front] = (vec, stim, ref), (bvec, bstim, bref)
    return _sim_cases[front]


@pytest.mark.parametrize("sim", [s for s in S.SIMULATORS if s != "myhdl"])
def test_converted_hdl_v5(sim, sim_case, tmp_path, hdl_cache):
    """Converted VHDL (GHDL --std=08) and Verilog (Icarus, Verilator): bit-exact and cycle-exact against MyHDL on a
    real two-state stream and on the invalid state-B prefix vectors."""
    need(sim)
    for i, (vec, stim, ref) in enumerate(sim_case):
        out = S.run(sim, stim, tmp_path / str(i), vec.params, build_dir=hdl_cache)
        msg = S.first_difference(out, vec.expected)
        assert msg is None, msg
        diff = S.first_cycle_difference(ref, out)
        assert diff is None, diff


@pytest.mark.parametrize("front", ["window", SLOW_VECTOR])
def test_one_table_stream_same_cycles(front, tmp_path, hdl_cache):
    """A version-4 stream (one code table, errors included) gives the same words in the same cycles on the
    STATES=2 core as on the STATES=1 core (Verilator): the second table costs no cycle, latency included."""
    need("verilator")
    rng = np.random.default_rng(12)
    w = np.round(rng.laplace(0, 3, 5000)).astype(np.int8).view(np.uint8)
    w[rng.random(w.size) < 0.7] = 0
    from lutzip.codec.encoder import best_tableset

    def corrupt(st):
        st[2][1] ^= np.uint32(0x80000000)
        st[4] = st[4][:2]
        return st

    outs = []
    for states in (1, 2):
        vec = make_vectors(best_tableset(w, 8), w, 600, corrupt=corrupt, W=16, FRONT=front, STATES=states)
        stim = S.make_stimulus(vec, in_gap=0.2, out_stall=0.3, seed=12)
        outs.append(S.run("verilator", stim, tmp_path / str(states), vec.params, build_dir=hdl_cache))
        assert S.first_difference(outs[-1], vec.expected) is None
    assert S.first_cycle_difference(outs[0], outs[1]) is None


@pytest.mark.parametrize("front", ["window", SLOW_VECTOR])
def test_verilator_throughput_v5_vs_v4(front, tmp_path, hdl_cache):
    """One weight per cycle on a two-state stream as on the one-table stream of the same tensor (source always
    valid, sink always ready): the ratio of the two rates is printed and must be 1 within 1 %."""
    need("verilator")
    rng = np.random.default_rng(11)
    a = np.round(rng.laplace(0, 3, 60_000)).astype(np.int8)
    a[rng.random(a.size) < 0.8] = 0
    rates = {}
    for states in (1, 2):
        c = ct.from_bytes(api.compress({"w": a}, states=states, stripe_len=4096))
        assert c.tables[0].n_states == states
        vec = container_vectors(c, "w", FRONT=front, STATES=2)
        out = S.run("verilator", S.make_stimulus(vec, drain=8), tmp_path / str(states), vec.params,
                    build_dir=hdl_cache)
        assert S.first_difference(out, vec.expected) is None
        oc = out.out_cycles
        rates[states] = (len(oc) - 1) / int(oc[-1] - oc[0])
    print(f"{front}: weights/cycle: v4 {rates[1]:.5f}, v5 {rates[2]:.5f}, ratio {rates[2] / rates[1]:.5f}")
    assert rates[2] > 0.99 * rates[1] and rates[2] > 0.95


# ------------------------------------------------------------------------------------------------- N lanes
@pytest.mark.parametrize("sim,front", [("myhdl", "window"), ("verilator", "window"),
                                       pytest.param("myhdl", "vector", marks=pytest.mark.slow)])
def test_lanes_two_state_stream(sim, front, tmp_path, hdl_cache):
    """Two lanes of STATES=2 cores: random two-state symbols and the invalid state-B prefix stripes, in the order
    one core gives them (docs/CORE.md section 6)."""
    need(sim)
    from lutzip.hdl.flows import lanes_sim as LS
    rng = np.random.default_rng(5)
    bad = bad_b_prefix_vectors(**FRONTS[front])
    good = [random_stripe(rng, hand_table(), int(rng.integers(1, 200)))[0] for _ in range(8)]
    lv = LS.LaneVectors.make(good[:4] + bad.stripes + good[4:], bad.table_ops, 2, **bad.params)
    assert len(lv.errors) == 2
    LS.check(lv, sim, workdir=tmp_path, build_dir=hdl_cache, in_gap=0.2, out_stall=0.3, seed=3)
