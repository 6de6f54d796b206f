"""The decoder core, bit-exact against the reference decoder in MyHDL, GHDL, Icarus (cosimulation) and Verilator.

Every stream runs through all four levels with the same stimulus file; each level must produce the reference
model's words (``lutzip.hdl.flows.model``) and all levels must agree to the clock cycle. Set ``LUTZIP_TEST_STANDIN=1`` to run
the multi-simulator tests on the stand-in core below instead of ``lutzip.hdl.core.decoder_core`` (harness work), or
``LUTZIP_TEST_CORE=package.module:function`` to test another core (e.g. a snapshot of a committed version).
"""
import functools
import importlib
import os
from dataclasses import dataclass

import numpy as np
import pytest
from myhdl import Signal, always_comb, always_seq, block, intbv

from lutzip.codec import bitstream as bs
from lutzip.hdl.flows import bench as B
from lutzip.hdl.flows import model as M
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.vectors import make_vectors
from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec, TableSet, raw_tableset


# ------------------------------------------------------------------------------------------ stand-in core
@block
def standin_core(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                 m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                 tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy, L=8, W=16, LUT3_DEPTH=4096,
                 BROKEN=False, UNDRIVEN=False):
    """The core's ports, trivial behaviour: each payload word's low W bits come out as one word.

    Header checks and error markers as the real core (bad header -> code 1, tlast before n words -> code 4).
    ``BROKEN`` flips bit 0 of every 16th output word; ``UNDRIVEN`` drives ``busy`` from a never-written register
    (0 in MyHDL, a metavalue in converted HDL) -- both for the harness' self-tests.
    """
    st = Signal(intbv(0, min=0, max=4))  # 0 header, 1 data, 2 discard, 3 error marker pending
    cnt = Signal(intbv(0)[17:])
    ov = Signal(bool(0))
    od = Signal(intbv(0)[W:])
    ol = Signal(bool(0))
    ou = Signal(bool(0))
    nlut3 = Signal(intbv(0)[13:])
    bad = 1 if BROKEN else 0
    ghost = Signal(bool(0))  # a register written only by a config write that never comes: no reset value
    use_ghost = 1 if UNDRIVEN else 0

    @always_comb
    def comb():
        s_axis_tready.next = (st != 3) and (not ov or m_axis_tready)
        m_axis_tvalid.next = ov
        m_axis_tdata.next = od
        m_axis_tlast.next = ol
        m_axis_tuser.next = ou
        if use_ghost == 1:
            busy.next = ghost   # direct: MyHDL's VHDL bool() would read a 'U' inside an expression as 0
        else:
            busy.next = (st != 0) or ov

    @always_seq(clk.posedge, reset=None)
    def seq():
        err_valid.next = 0
        if rst:
            st.next = 0
            ov.next = 0
            cnt.next = 0
        else:
            if tbl_we and tbl_sel == 3:
                nlut3.next = tbl_wdata[13:]
                if use_ghost == 1 and tbl_addr == 4095:
                    ghost.next = 1
            if ov and m_axis_tready:
                ov.next = 0
            if st == 3:
                if not ov or m_axis_tready:
                    ov.next = 1
                    od.next = 4
                    ol.next = 1
                    ou.next = 1
                    err_valid.next = 1
                    err_code.next = 4
                    st.next = 0
            elif s_axis_tvalid and (not ov or m_axis_tready):
                if st == 0:
                    if s_axis_tdata[32:16] != 0x4C5A:
                        ov.next = 1
                        od.next = 1
                        ol.next = 1
                        ou.next = 1
                        err_valid.next = 1
                        err_code.next = 1
                        if not s_axis_tlast:
                            st.next = 2
                    else:
                        cnt.next = s_axis_tdata[16:] + 1
                        if s_axis_tlast:
                            st.next = 3
                        else:
                            st.next = 1
                elif st == 1:
                    ov.next = 1
                    if bad == 1 and cnt[4:0] == 5:
                        od.next = s_axis_tdata[W:] ^ 1
                    else:
                        od.next = s_axis_tdata[W:]
                    ou.next = 0
                    ol.next = cnt == 1
                    cnt.next = cnt - 1
                    if cnt == 1:
                        if s_axis_tlast:
                            st.next = 0
                        else:
                            st.next = 2
                    elif s_axis_tlast:
                        st.next = 3
                else:
                    if s_axis_tlast:
                        st.next = 0

    return comb, seq


def standin_expected(stripes, W):
    """What the stand-in outputs for ``stripes``."""
    rows = []
    for s in stripes:
        h = int(s[0])
        if h >> 16 != 0x4C5A:
            rows.append((1, 1, 1))
            continue
        n = (h & 0xFFFF) + 1
        pay = [int(x) & ((1 << W) - 1) for x in s[1:1 + n]]
        rows += [(v, int(i == n - 1), 0) for i, v in enumerate(pay)]
        if len(pay) < n:
            rows.append((4, 1, 1))
    return np.array(rows, np.int64).reshape(-1, 3)


USE_STANDIN = os.environ.get("LUTZIP_TEST_STANDIN") == "1"
if USE_STANDIN:
    CORE, expected_of = standin_core, (lambda vec: standin_expected(vec.stripes, vec.params["W"]))
elif os.environ.get("LUTZIP_TEST_CORE"):   # "package.module:function", e.g. a snapshot of the core
    _mod, _fn = os.environ["LUTZIP_TEST_CORE"].split(":")
    CORE, expected_of = getattr(importlib.import_module(_mod), _fn), (lambda vec: vec.expected)
else:
    CORE, expected_of = None, (lambda vec: vec.expected)   # None: lutzip.hdl.core.decoder_core

if CORE is None:   # both front ends of the real core (docs/CORE.md): window (default) and vector, and the window
    # front's one-hot step (what `hdl synth` builds for the iCE40 HX8K); as core parameters
    CORES = {"window": {}, "vector": {"FRONT": "vector"}, "onehot": {"STEP": "onehot"}}
else:
    CORES = {"core": {}}


@dataclass(frozen=True)
class Core:
    """The core under test: a block (None: lutzip.hdl.core.decoder_core) and the parameters that pick its variant."""
    name: str
    block: object
    params: dict

    def run(self, sim, stim, workdir, vec, build_dir=None):
        """``S.run`` of this core with ``vec``'s parameters."""
        return S.run(sim, stim, workdir, {**vec.params, **self.params}, core=self.block, build_dir=build_dir)


@pytest.fixture(params=list(CORES))
def core(request):
    """The core under test: each front end of lutzip.hdl.core.decoder_core (or the stand-in / LUTZIP_TEST_CORE)."""
    return Core(request.param, CORE, CORES[request.param])


def need(sim):
    why = S.available(sim)
    if why:
        pytest.skip(f"{sim} not usable here: {why}")


# ------------------------------------------------------------------------------------------------ vectors
def _zero_table():
    # incomplete code (prefix 111 unused): zero runs of up to 32, 8 small values, raw residual
    return TableSet(16, [ClassSpec(1, ZRUN, 5, 0), ClassSpec(2, LUT, 3, 0), ClassSpec(3, RANGE, 16, 0)],
                    np.array([0, 1, 0xFFFF, 2, 0xFFFE, 3, 0xFFFD, 4], np.uint16))


def stream(name, n, seed=0):
    """``(TableSet, words, stripe_len)`` of a named stream type."""
    rng = np.random.default_rng(seed)
    if name == "lut_int8":       # Laplace int8 weights, greedy LUT classes
        ts, w = B.streams(n, seed)["lut_int8"]
        return ts, w, 700
    if name == "zero_run":       # 90 % zeros, long runs, zero-run class
        w = rng.integers(-3, 4, n).astype(np.int16)
        w[rng.random(n) < 0.9] = 0
        w[n // 3: n // 3 + min(300, n // 4)] = 0
        return _zero_table(), w.view(np.uint16), 500
    if name == "residual":       # uniform 16-bit: nearly every symbol a raw residual
        w = rng.integers(0, 1 << 16, n).astype(np.uint16)
        return raw_tableset(16), w, 333
    if name == "bf16_mixed":     # RANGE classes by exponent byte, LUT, residual, zero run
        w = (rng.normal(0, 0.02, n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        w[rng.random(n) < 0.2] = 0
        hi = np.bincount(w >> 8, minlength=256).argsort()[::-1][:3]
        cls = [ClassSpec(2, RANGE, 8, int(hi[0]) << 8), ClassSpec(2, RANGE, 8, int(hi[1]) << 8),
               ClassSpec(3, RANGE, 8, int(hi[2]) << 8), ClassSpec(4, ZRUN, 4, 0), ClassSpec(5, LUT, 1, 0),
               ClassSpec(5, RANGE, 16, 0)]
        return TableSet(16, cls, np.array([0x3C00, 0xBC00], np.uint16)), w, 1000
    raise KeyError(name)


def error_vectors(n=2400, seed=5):
    """Stripes with every error the core detects, between good stripes (resynchronisation)."""
    rng = np.random.default_rng(seed)
    ts = _zero_table()
    w = rng.integers(-3, 4, n).astype(np.int16)
    w[rng.random(n) < 0.85] = 0
    w[::97] = 4            # LUT3 entry 7: out of range once the config says 7 entries
    w[1200:1400] = 0       # an all-zero stripe (stripe 6 of 200 words)
    w = w.view(np.uint16)

    def corrupt(st):
        st[1][0] ^= 0x00400000                      # bad header marker
        st[3] = st[3][:len(st[3]) // 2]             # truncated: symbols run past tlast
        st[4][1] = 0xFFFFFFFF                       # prefix 111: not a class code
        st[6][0] -= 1                               # header n one too small: zero run overflows
        st[8] = st[8][:1]                           # header only
        st[9][2] ^= 0x00010000                      # random bit flip (whatever the reference says)
        return st

    return make_vectors(ts, w, 200, corrupt=corrupt, n_lut3=7)


# ------------------------------------------------------------------------------------- harness unit tests
def test_stimulus_roundtrip(tmp_path):
    ts, w, sl = stream("zero_run", 500)
    vec = make_vectors(ts, w, sl)
    st = S.make_stimulus(vec, in_gap=0.3, out_stall=0.4, seed=2)
    back = S.Stimulus.read(st.write(tmp_path / "s.txt"))
    assert back.commands == st.commands and back.ready == st.ready and back.max_cycles == st.max_cycles
    assert sum(1 for c in st.commands if c[0] == "S") == vec.n_in
    assert any(c[0] == "I" for c in st.commands) and 0 < sum(st.ready) < len(st.ready)
    (tmp_path / "bad.txt").write_text("C 10 2\nS zz 1\n")
    with pytest.raises(S.SimulationError, match="line 2"):
        S.Stimulus.read(tmp_path / "bad.txt")


def test_reference_error_markers():
    vec = error_vectors()
    codes = set(vec.expected[vec.expected[:, 2] == 1, 0].tolist())
    assert {bs.ERR_BAD_HEADER, bs.ERR_INVALID_PREFIX, bs.ERR_OVERRUN, bs.ERR_LUT3_RANGE,
            bs.ERR_ZRUN_OVERFLOW} <= codes
    # one last-flagged word per stripe, and good stripes decode to the reference
    assert int(vec.expected[:, 1].sum()) == len(vec.stripes)
    words, code = M.stripe_output(vec.stripes[0], M.tables_from_ops(M.table_ops(_zero_table())))  # all of LUT3
    assert code == 0 and len(words) == 200


def test_compare_reports_first_difference():
    exp = np.array([[1, 0, 0], [2, 0, 0], [3, 1, 0]])
    out = S.Outputs(np.array([[1, 0, 0, 10], [2, 0, 0, 11], [3, 1, 0, 12]]), np.zeros((0, 2), np.int64), 20, False, "x")
    assert S.first_difference(out, exp) is None
    out.words[1, 0] = 7
    assert "word 1 (cycle 11)" in S.first_difference(out, exp)
    out.words[1, 0] = 2
    assert "2 words out, 3 expected" not in (S.first_difference(out, exp[:2]) or "")
    assert "3 words out, 2 expected" in S.first_difference(out, exp[:2])


def test_harness_catches_a_broken_core(tmp_path, hdl_cache):
    """The stand-in and a deliberately broken copy: the harness must pass the first and flag the second."""
    ts, w, sl = stream("residual", 600)
    vec = make_vectors(ts, w, sl)
    exp = standin_expected(vec.stripes, 16)
    stim = S.make_stimulus(vec, in_gap=0.2, out_stall=0.3, seed=1)
    good = S.run("myhdl", stim, tmp_path / "good", vec.params, core=standin_core, build_dir=hdl_cache)
    assert S.first_difference(good, exp) is None
    broken = functools.partial(standin_core, BROKEN=True)
    bad = S.run("myhdl", stim, tmp_path / "bad", vec.params, core=broken, build_dir=hdl_cache)
    msg = S.first_difference(bad, exp)
    i = int(np.nonzero((exp[:, 0] != bad.words[:len(exp), 0]))[0][0]) if len(bad.words) >= len(exp) else -1
    assert msg and i >= 0 and f"word {i} (cycle {bad.words[i, 3]})" in msg


@pytest.mark.parametrize("sim", ["ghdl", "icarus"])
def test_harness_catches_metavalues(sim, tmp_path, hdl_cache):
    """An output that is U/X after reset in converted HDL is an error, even if the words come out right."""
    need(sim)
    ts, w, sl = stream("residual", 200)
    vec = make_vectors(ts, w, sl)
    stim = S.make_stimulus(vec)
    core = functools.partial(standin_core, UNDRIVEN=True)
    core.srcfile = standin_core.srcfile
    with pytest.raises(S.SimulationError, match="metavalue|x/z"):
        S.run(sim, stim, tmp_path, vec.params, core=core, build_dir=hdl_cache)
    ok = S.run(sim, stim, tmp_path / "ok", vec.params, core=standin_core, build_dir=hdl_cache)
    assert S.first_difference(ok, standin_expected(vec.stripes, 16)) is None


# --------------------------------------------------------------------------------- four simulators, quick
QUICK = {  # name: (words, in_gap, out_stall); 2-3 stripes each (bigger streams: test_bit_exact_big, -m slow)
    "lut_int8": (1500, 0.15, 0.25),
    "zero_run": (1500, 0.25, 0.4),
    "residual": (800, 0.1, 0.5),
    "bf16_mixed": (1200, 0.0, 0.0),
}


def default_run_excludes(item):
    """Default-run budget (every distinct HDL build costs a minute on CI's fresh cache): the window core (the
    default) runs every quick case, reset mid-stripe and the throughput check in all four simulators; the
    vector front and the one-hot step run in MyHDL by default (tests/test_core_myhdl.py: random table sets,
    bit flips, resynchronisation) and their converted HDL here with ``-m slow``."""
    p = getattr(item, "callspec", None) and item.callspec.params
    return bool(p) and p.get("core") not in (None, "window", "core")


_myhdl_runs = {}


def _quick_case(name):
    if name == "errors":
        vec = error_vectors()
        stim = S.make_stimulus(vec, in_gap=0.2, out_stall=0.3, seed=11)
    else:
        n, gap, stall = QUICK[name]
        ts, w, sl = stream(name, n, seed=len(name))
        vec = make_vectors(ts, w, sl)
        stim = S.make_stimulus(vec, in_gap=gap, out_stall=stall, seed=len(name) + 1)
    return vec, stim


@pytest.fixture(scope="module")
def quick_cases():
    return {name: _quick_case(name) for name in [*QUICK, "errors"]}


def _myhdl_run(name, core, quick_cases, hdl_cache, tmp_path_factory):
    """The MyHDL run of a quick case (once per module and core): the cycle-exact yardstick of the converted HDL."""
    key = (name, core.name)
    if key not in _myhdl_runs:
        vec, stim = quick_cases[name]
        _myhdl_runs[key] = core.run("myhdl", stim, tmp_path_factory.mktemp(f"myhdl-{name}"), vec, hdl_cache)
    return _myhdl_runs[key]


@pytest.mark.parametrize("sim", S.SIMULATORS)
@pytest.mark.parametrize("name", [*QUICK, "errors"])
def test_bit_exact(name, sim, core, quick_cases, tmp_path, tmp_path_factory, hdl_cache):
    need(sim)
    vec, stim = quick_cases[name]
    ref = _myhdl_run(name, core, quick_cases, hdl_cache, tmp_path_factory)
    out = ref if sim == "myhdl" else core.run(sim, stim, tmp_path, vec, hdl_cache)
    msg = S.first_difference(out, expected_of(vec))
    assert msg is None, msg
    if sim != "myhdl":   # converted HDL: same words in the same cycles as the MyHDL description
        diff = S.first_cycle_difference(ref, out)
        assert diff is None, diff


@pytest.mark.parametrize("sim", S.SIMULATORS)
def test_reset_mid_stripe(sim, core, tmp_path, hdl_cache):
    """rst in the middle of a stripe: the rest of that packet is garbage (marker), tables survive, the next
    stripes decode exactly; before the reset the core has output a prefix of the expected words."""
    need(sim)
    if USE_STANDIN:
        pytest.skip("needs the real core")
    ts, w, sl = stream("zero_run", 1500, seed=9)
    vec = make_vectors(ts, w, sl)
    stim = S.make_stimulus(vec, in_gap=0.1, out_stall=0.3, seed=9)
    j, m = 1, len(vec.stripes[1]) // 2
    pos = [i for i, c in enumerate(stim.commands) if c[0] == "S"][sum(map(len, vec.stripes[:j])) + m]
    stim.commands.insert(pos, ("R", 3))
    before = M.expected_outputs(vec.stripes[:j + 1], vec.table_ops)
    after = M.expected_outputs([vec.stripes[j][m:]] + vec.stripes[j + 1:], vec.table_ops)
    assert after[0, 2] == 1   # the tail of the cut stripe is rejected
    out = core.run(sim, stim, tmp_path, vec, hdl_cache)
    got = out.words[:, :3]
    head = len(got) - len(after)
    assert 0 <= head <= len(before), f"{len(got)} words out: {len(before)} + {len(after)} at most"
    assert np.array_equal(got[:head], before[:head]), "words before the reset differ from the reference"
    tail = S.Outputs(out.words[head:], out.errors[-int(after[:, 2].sum()):] if after[:, 2].any() else
                     out.errors[:0], out.end_cycle, out.timed_out, sim)
    msg = S.first_difference(tail, after)
    assert msg is None, msg


# ------------------------------------------------------------------------------------------- throughput
def test_verilator_throughput(core, tmp_path, hdl_cache):
    """>= 100 k weights per stream type, source always valid, sink always ready: ~one weight per cycle."""
    need("verilator")
    if USE_STANDIN:
        pytest.skip("throughput is a property of the real core")
    res = B.run(100_000, 4096, "verilator", workdir=tmp_path, core=core.block, **core.params)
    assert len(res) == 3
    for name, r in res.items():
        assert r["bit_exact"], r["mismatch"]
        assert r["weights"] >= 100_000
        assert r["weights_per_cycle"] > 0.9, f"{name}: {r['weights_per_cycle']:.3f} weights/cycle"


# ------------------------------------------------------------------------------------------------ slow
def assert_all_sims_agree(vec, stim, tmp_path, hdl_cache, core):
    """Run ``stim`` in every simulator: each bit-exact against the reference, each converted HDL cycle-exact
    against the MyHDL run."""
    outs = {}
    for sim in S.SIMULATORS:
        need(sim)
        outs[sim] = core.run(sim, stim, tmp_path / sim, vec, hdl_cache)
        msg = S.first_difference(outs[sim], expected_of(vec))
        assert msg is None, msg
        if sim != "myhdl":
            diff = S.first_cycle_difference(outs["myhdl"], outs[sim])
            assert diff is None, diff


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", [*QUICK])
def test_bit_exact_big(name, seed, core, tmp_path, hdl_cache):
    """Bigger streams, harder backpressure and source gaps, all four levels cycle-exact."""
    ts, w, sl = stream(name, 20_000, seed=seed)
    vec = make_vectors(ts, w, sl * 3)
    stim = S.make_stimulus(vec, in_gap=0.45, out_stall=0.6, ready_len=4096, seed=seed)
    assert_all_sims_agree(vec, stim, tmp_path, hdl_cache, core=core)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_random_corruption_all_sims(seed, core, tmp_path, hdl_cache):
    """Random bit flips, truncations and header damage on many stripes: same words and markers everywhere."""
    rng = np.random.default_rng(100 + seed)
    name = ["lut_int8", "zero_run", "residual", "bf16_mixed"][seed % 4]
    ts, w, sl = stream(name, 6000, seed=seed)

    def corrupt(st):
        for i in rng.choice(len(st), size=len(st) // 2, replace=False):
            s = st[i]
            kind = rng.integers(0, 4)
            if kind == 0:
                s[rng.integers(0, len(s))] ^= np.uint32(1 << int(rng.integers(0, 32)))
            elif kind == 1:
                st[i] = s[:int(rng.integers(1, len(s)))]
            elif kind == 2:
                s[0] = (s[0] & 0xFFFF0000) | (int(rng.integers(0, sl)) & 0xFFFF)
            else:
                s[1:] = rng.integers(0, 1 << 32, len(s) - 1, dtype=np.uint64).astype(np.uint32)
        return st

    vec = make_vectors(ts, w, sl, corrupt=corrupt)
    stim = S.make_stimulus(vec, in_gap=0.2, out_stall=0.4, seed=seed)
    assert_all_sims_agree(vec, stim, tmp_path, hdl_cache, core=core)


@pytest.mark.slow
@pytest.mark.parametrize("L,W,depth", [(12, 16, 4096), (6, 8, 1024)])
def test_other_core_parameters(L, W, depth, core, tmp_path, hdl_cache):
    """Other LUT1 sizes / word widths / LUT3 depths: converted HDL still bit-exact and cycle-exact."""
    from lutzip.codec.encoder import greedy_tableset
    rng = np.random.default_rng(L)
    if L == 12:   # codes of every length 1..12 (Kraft sum 1), classes drawn uniformly: long codes are common
        cls = [ClassSpec(1, LUT, 2, 0), ClassSpec(2, RANGE, 8, 0x100), ClassSpec(3, ZRUN, 6, 0)]
        cls += [ClassSpec(c, RANGE, 4, 0x1000 * c) for c in range(4, 12)]
        cls += [ClassSpec(12, RANGE, 16, 0), ClassSpec(12, LUT, 3, 4)]
        ts = TableSet(16, cls, np.array([100, 200, 300, 400, 7, 0xFFFF, 0x8000, 9, 10, 11, 12, 13], np.uint16))
        parts = []
        for j in rng.integers(0, len(cls), 6000):
            c = cls[j]
            if c.kind == ZRUN:
                parts.append(np.zeros(int(rng.integers(1, 80)), np.uint16))
            elif c.kind == LUT:
                parts.append(ts.lut3[c.param + rng.integers(0, 1 << c.k, 1)])
            else:
                parts.append(np.array([c.param + int(rng.integers(0, 1 << c.k))], np.uint16))
        w = np.concatenate(parts).astype(np.uint16)
    else:
        w = np.round(rng.standard_t(3, 8000) * 6).astype(np.int8).view(np.uint8)
        ts = greedy_tableset(w, W, L=L, lut3_max=depth)
    assert ts.max_code_len == L
    vec = make_vectors(ts, w, 900, L=L, lut3_depth=depth)
    stim = S.make_stimulus(vec, in_gap=0.2, out_stall=0.4, seed=L)
    assert_all_sims_agree(vec, stim, tmp_path, hdl_cache, core=core)
