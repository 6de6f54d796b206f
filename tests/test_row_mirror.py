"""The row mirror stage (:mod:`lutzip.hdl.stages.row_mirror`) in MyHDL against ``lutzip.codec.symmetry``: random
row stripes (1-16 rows of PLAIN / MIRROR / NEG_MIRROR, int8 / int16 / float words, odd and even N from 2 to
MAX_N + 1) and plain packets, random source pauses (words and descriptors) and sink stalls; bad descriptors and
the core's error markers against the stage's Python model; the rate (one word per cycle, no bubble, over a long
run); the configuration checks.
The converted stage in GHDL, Icarus and Verilator: tests/test_row_mirror_sims.py."""
import numpy as np
import pytest
from myhdl import ResetSignal, Signal, block, delay, instance, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.stages.row_mirror import row_mirror

from row_mirror_cases import MIRROR, NEG_MIRROR, error_case, good_case, model, row_stripe


def run_stage(words, descs, W=16, MAX_N=512, NB=16, p_gap=0.0, p_dgap=0.0, p_stall=0.0, seed=0, max_cycles=None,
              check_ready=True):
    """Simulate the stage: returns ``(outputs [(data, last, user, cycle)], err pulses [(code, cycle)], words
    taken, descriptors taken)``. Sources hold ``valid`` until the handshake (AXI); pauses and stalls random."""
    rng = np.random.default_rng(seed)
    clk, rst = Signal(bool(0)), ResetSignal(1, active=1, isasync=False)
    s_data, m_data = Signal(intbv(0)[W:]), Signal(intbv(0)[W:])
    s_valid, s_ready, s_last, s_user = [Signal(bool(0)) for _ in range(4)]
    d_err, d_neg, d_nm1 = Signal(intbv(0)[4:]), Signal(intbv(0)[2:]), Signal(intbv(0)[NB:])
    d_rows, d_modes = Signal(bool(0)), Signal(intbv(0)[32:])
    d_valid, d_ready = Signal(bool(0)), Signal(bool(0))
    m_valid, m_ready, m_last, m_user = [Signal(bool(0)) for _ in range(4)]
    err_valid, busy = Signal(bool(0)), Signal(bool(0))
    err_code = Signal(intbv(0)[4:])
    out, errs = [], []
    n_taken = [0, 0]
    take_cycles = []
    limit = max_cycles or 20 * (len(words) * 2 + len(descs)) + 500

    @block
    def bench():
        dut = row_mirror(clk, rst, s_data, s_valid, s_ready, s_last, s_user, d_err, d_rows, d_neg, d_nm1, d_modes,
                         d_valid, d_ready,
                         m_data, m_valid, m_ready, m_last, m_user, err_valid, err_code, busy, MAX_N=MAX_N)

        @instance
        def drive():
            i = j = 0
            for _ in range(3):
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(5)
            rst.next = 0
            quiet = 0
            for cyc in range(limit):
                # sources: keep an offered item until it is taken, else offer with probability 1 - gap
                if i < len(words) and (s_valid or rng.random() >= p_gap):
                    s_valid.next = 1
                    s_data.next, s_last.next, s_user.next = words[i]
                else:
                    s_valid.next = 0
                if j < len(descs) and (d_valid or rng.random() >= p_dgap):
                    d_valid.next = 1
                    d_err.next, d_rows.next, d_neg.next, d_nm1.next, d_modes.next = descs[j]
                else:
                    d_valid.next = 0
                m_ready.next = rng.random() >= p_stall
                yield delay(1)
                ready_before = bool(s_ready), bool(d_ready)
                if s_valid and s_ready:
                    i += 1
                    take_cycles.append(cyc)
                if d_valid and d_ready:
                    j += 1
                if m_valid and m_ready:
                    out.append((int(m_data), int(m_last), int(m_user), cyc))
                if err_valid:
                    errs.append((int(err_code), cyc))
                # the ready outputs do not follow m_ready within the cycle
                if check_ready:
                    m_ready.next = not m_ready
                    yield delay(1)
                    assert (bool(s_ready), bool(d_ready)) == ready_before, cyc
                    m_ready.next = not m_ready
                    yield delay(1)
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(3)
                done = i == len(words) and not busy and not m_valid
                quiet = quiet + 1 if done else 0
                if quiet > 4:
                    break
            n_taken[:] = [i, j]

        return dut, drive

    inst = bench()
    try:
        inst.run_sim(quiet=True)
    finally:
        inst.quit_sim()
    run_stage.take_cycles = take_cycles
    return out, errs, n_taken[0], n_taken[1]


@pytest.mark.parametrize("W,p_gap,p_dgap,p_stall,seed,longest", [
    (16, 0.0, 0.0, 0.0, 1, True), (16, 0.3, 0.2, 0.3, 2, False), (16, 0.1, 0.5, 0.6, 3, False),
    (8, 0.3, 0.3, 0.4, 4, True), (16, 0.6, 0.0, 0.1, 5, False)])
def test_rows_match_symmetry(W, p_gap, p_dgap, p_stall, seed, longest):
    rng = np.random.default_rng(seed)
    words, descs, expected = good_case(rng, 16, W, max_n=20)
    # the longest rows MAX_N = 512 takes (odd: h = 257, the buffer's last word read back), the shortest
    for n in (512, 513, 2, 3) if longest else (2, 3):
        d, c, f = row_stripe(rng, W, n=n, r=2, modes=[MIRROR, NEG_MIRROR])
        descs.append(d)
        words += c
        expected += f
    out, errs, n_in, n_d = run_stage(words, descs, W=W, p_gap=p_gap, p_dgap=p_dgap, p_stall=p_stall, seed=seed)
    assert (n_in, n_d) == (len(words), len(descs))
    assert errs == []
    got = [o[:3] for o in out]
    bad = [k for k, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert not bad, (bad[0], got[bad[0]], expected[bad[0]])
    assert len(got) == len(expected)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_errors_match_model(seed):
    rng = np.random.default_rng(seed)
    words, descs, expected, exp_errs = error_case(rng, 30, max_n=40)
    assert any(d[0] for d in descs) and sum(u for _, _, u in words) > sum(1 for d in descs if d[0])
    out, errs, n_in, n_d = run_stage(words, descs, MAX_N=64, NB=16, p_gap=0.3, p_dgap=0.3, p_stall=0.3, seed=seed)
    assert (n_in, n_d) == (len(words), len(descs))
    assert [o[:3] for o in out] == expected
    assert [c for c, _ in errs] == exp_errs


def test_model_against_symmetry():
    # the Python model gives symmetry's rows on good input (so the error tests check against the same reference)
    rng = np.random.default_rng(5)
    words, descs, expected = good_case(rng, 40, 16, max_n=30)
    out, errs = model(words, descs)
    assert out == expected and errs == []


def test_rate_one_word_per_cycle():
    # never-pausing source and never-stalling sink: the output never has a bubble, replays included
    rng = np.random.default_rng(7)
    words, descs, expected = good_case(rng, 30, 16, max_n=40)
    for n in (2, 3, 4, 5):   # the shortest replays (0, 1, 1, 2 words), back to back
        d, c, f = row_stripe(rng, 16, n=n, r=16, modes=[MIRROR, NEG_MIRROR] * 8)
        descs.append(d)
        words += c
        expected += f
    out, errs, _, _ = run_stage(words, descs, check_ready=False)
    assert [o[:3] for o in out] == expected
    cycles = np.array([o[3] for o in out])
    span = int(cycles[-1] - cycles[0]) + 1
    rate = len(out) / span
    print(f"row_mirror: {len(out)} words out ({len(words)} in, {len(out) - len(words)} replayed) in {span} cycles: "
          f"rate {rate:.4f}")
    assert span == len(out)
    assert cycles[0] - run_stage.take_cycles[0] == 4


def test_latency_and_ready_is_registered():
    out, _, _, _ = run_stage([(5, 1, 0)], [(0, 0, 0, 0, 0)])
    assert [o[:3] for o in out] == [(5, 1, 0)]
    assert out[0][3] - run_stage.take_cycles[0] == 4   # taken in cycle t, m_valid in cycle t + 4


def default_run_excludes(item):
    """Default run: one paced and one unpaced seed of each test; -m slow: the other seeds."""
    p = getattr(item, "callspec", None) and item.callspec.params
    return bool(p) and (p.get("seed") in (2, 5, 12, 13))


def _sig(w=1):
    return Signal(bool(0)) if w == 1 else Signal(intbv(0)[w:])


@pytest.mark.parametrize("kw,match", [({"MAX_N": 6}, "MAX_N"), ({"MAX_N": 2}, "MAX_N"),
                                      ({"MAX_N": 1 << 16}, "d_nm1 has"), ({"W": 12}, "W = 12")])
def test_config_checked(kw, match):
    W = kw.pop("W", 16)
    rst = ResetSignal(0, active=1, isasync=False)
    with pytest.raises(UnsupportedError, match=match):
        row_mirror(_sig(), rst, _sig(W), _sig(), _sig(), _sig(), _sig(), _sig(4), _sig(), _sig(2), _sig(16),
                   _sig(32), _sig(), _sig(), _sig(W), _sig(), _sig(), _sig(), _sig(), _sig(), _sig(4), _sig(), **kw)
