"""The row mirror stage (:mod:`lutzip.hdl.stages.row_mirror`) in MyHDL against ``lutzip.codec.symmetry``: random
rows (PLAIN / MIRROR / NEG_MIRROR of every word type, N from 1 to MAX_N), random source pauses (words and
descriptors) and sink stalls; bad descriptors, upstream error markers and stripes ending inside rows against the
stage's Python model; the rate (one word per cycle, no bubble, over a long run); the configuration checks.
The converted stage in GHDL, Icarus and Verilator: tests/test_row_mirror_sims.py."""
import numpy as np
import pytest
from myhdl import ResetSignal, Signal, block, delay, instance, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.stages.row_mirror import MIRROR, NEG_MIRROR, PLAIN, row_mirror

from row_mirror_cases import error_case, good_case, model, random_rows


def run_stage(words, descs, W=16, MAX_N=512, NB=12, p_gap=0.0, p_dgap=0.0, p_stall=0.0, seed=0, max_cycles=None,
              check_ready=True):
    """Simulate the stage: returns ``(outputs [(data, last, user, cycle)], err pulses [(code, cycle)], words
    taken, descriptors taken)``. Sources hold ``valid`` until the handshake (AXI); pauses and stalls random."""
    rng = np.random.default_rng(seed)
    clk, rst = Signal(bool(0)), ResetSignal(1, active=1, isasync=False)
    s_data, m_data = Signal(intbv(0)[W:]), Signal(intbv(0)[W:])
    s_valid, s_ready, s_last, s_user = [Signal(bool(0)) for _ in range(4)]
    d_mode, d_neg, d_n = Signal(intbv(0)[2:]), Signal(intbv(0)[2:]), Signal(intbv(0)[NB:])
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
        dut = row_mirror(clk, rst, s_data, s_valid, s_ready, s_last, s_user, d_mode, d_neg, d_n, d_valid, d_ready,
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
                    d_mode.next, d_neg.next, d_n.next = descs[j]
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


@pytest.mark.parametrize("W,p_gap,p_dgap,p_stall,seed", [
    (16, 0.0, 0.0, 0.0, 1), (16, 0.3, 0.2, 0.3, 2), (16, 0.1, 0.5, 0.6, 3), (8, 0.3, 0.3, 0.4, 4),
    (16, 0.6, 0.0, 0.1, 5)])
def test_rows_match_symmetry(W, p_gap, p_dgap, p_stall, seed):
    rng = np.random.default_rng(seed)
    rows = random_rows(rng, 80, W, max_n=40)
    rows += random_rows(rng, 3, W, max_n=512, modes=(MIRROR, NEG_MIRROR))   # up to MAX_N
    words, descs, expected = good_case(rows, 4, rng)
    assert {r[0] for r in rows} == {PLAIN, MIRROR, NEG_MIRROR}
    out, errs, n_in, n_d = run_stage(words, descs, W=W, p_gap=p_gap, p_dgap=p_dgap, p_stall=p_stall, seed=seed)
    assert (n_in, n_d) == (len(words), len(descs))
    assert errs == []
    got = [o[:3] for o in out]
    assert len(got) == len(expected)
    bad = [k for k, (g, e) in enumerate(zip(got, expected)) if g != e]
    assert not bad, (bad[0], got[bad[0]], expected[bad[0]])


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_errors_match_model(seed):
    rng = np.random.default_rng(seed)
    words, descs, expected, exp_errs = error_case(rng, max_n=64)
    assert exp_errs and any(u for _, _, u in words)   # bad descriptors and upstream markers both present
    out, errs, n_in, n_d = run_stage(words, descs, MAX_N=64, NB=8, p_gap=0.3, p_dgap=0.3, p_stall=0.3, seed=seed)
    assert (n_in, n_d) == (len(words), len(descs))
    assert [o[:3] for o in out] == expected
    assert [c for c, _ in errs] == exp_errs


def test_model_against_symmetry():
    # the Python model gives symmetry's rows on good input (so the error tests check against the same reference)
    rng = np.random.default_rng(5)
    rows = random_rows(rng, 50, 16, max_n=30)
    words, descs, expected = good_case(rows, 3, rng)
    out, errs, n_in, n_d = model(words, descs)
    assert out == expected and errs == [] and (n_in, n_d) == (len(words), len(descs))


def test_rate_one_word_per_cycle():
    # never-pausing source and never-stalling sink: the output never has a bubble, replays included
    rng = np.random.default_rng(7)
    rows = random_rows(rng, 120, 16, max_n=48, modes=(PLAIN, MIRROR, NEG_MIRROR, MIRROR))
    rows += random_rows(rng, 6, 16, max_n=4, modes=(MIRROR, NEG_MIRROR))    # N = 2 and 4: the shortest replays
    words, descs, expected = good_case(rows, 5, rng)
    out, errs, _, _ = run_stage(words, descs, check_ready=False)
    assert [o[:3] for o in out] == expected
    cycles = np.array([o[3] for o in out])
    span = int(cycles[-1] - cycles[0]) + 1
    rate = len(out) / span
    print(f"row_mirror: {len(out)} words out ({len(words)} in, {len(out) - len(words)} replayed) in {span} cycles: "
          f"rate {rate:.4f}")
    assert span == len(out)
    assert cycles[0] - run_stage.take_cycles[0] == 3


def test_latency_and_ready_is_registered():
    out, _, _, _ = run_stage([(5, 1, 0)], [(PLAIN, 0, 1)])
    assert [o[:3] for o in out] == [(5, 1, 0)]
    assert out[0][3] - run_stage.take_cycles[0] == 3   # taken in cycle t, m_valid in cycle t + 3


def _sig(w=1):
    return Signal(bool(0)) if w == 1 else Signal(intbv(0)[w:])


@pytest.mark.parametrize("kw,match", [({"MAX_N": 6}, "MAX_N"), ({"MAX_N": 2}, "MAX_N"), ({"MAX_N": 4096}, "d_n has"),
                                      ({"ERR": 0}, "ERR"), ({"W": 12}, "W = 12")])
def test_config_checked(kw, match):
    W = kw.pop("W", 16)
    rst = ResetSignal(0, active=1, isasync=False)
    with pytest.raises(UnsupportedError, match=match):
        row_mirror(_sig(), rst, _sig(W), _sig(), _sig(), _sig(), _sig(), _sig(2), _sig(2), _sig(12), _sig(), _sig(),
                   _sig(W), _sig(), _sig(), _sig(), _sig(), _sig(), _sig(4), _sig(), **kw)
