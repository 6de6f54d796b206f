"""The row header stage (:mod:`lutzip.hdl.stages.row_header`) in MyHDL against its Python model
(:func:`header_model`, docs/FORMAT.md section 3.1): random plain stripes, good row stripes and every kind of bad
row stripe (reserved bits, N < 2, NEG with 8-bit words, mode 3, mode bits above 2R, n not the rows' coded words,
N above the row buffer, packets ending before word 3), garbage headers; random source pauses and front stalls."""
import numpy as np
import pytest
from myhdl import ResetSignal, Signal, block, delay, instance, intbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.stages.row_header import row_header

from row_mirror_cases import coded_words, desc_word, header_model


def random_packets(rng, n, W=16, MAX_N=512):
    pk = []
    for _ in range(n):
        x = rng.random()
        body = [int(v) for v in rng.integers(0, 1 << 32, int(rng.integers(1, 6)))]
        if x < 0.2:
            pk.append([0x4C5A0000 | int(rng.integers(0, 1 << 16))] + body)
            continue
        if x < 0.25:
            pk.append([int(rng.integers(0, 1 << 32))] + body)      # garbage header
            continue
        N = int(rng.integers(2, MAX_N + 2))
        R = int(rng.integers(1, 17))
        neg = int(rng.integers(0, 2)) if W == 16 else 0
        modes = sum(int(rng.integers(0, 3)) << 2 * r for r in range(R))
        n_c = coded_words(N, R, modes)
        d = desc_word(N, R, neg)
        y = rng.random()
        if y < 0.5:
            pass
        else:
            k = int(rng.integers(0, 9))
            if k == 0:
                d |= 1 << int(rng.integers(21, 32))
            elif k == 1:
                d = desc_word(1, R, neg)
            elif k == 2:
                d = desc_word(N, R, 1) if W == 8 else desc_word(N, R, neg)
            elif k == 3:
                modes |= 3 << 2 * int(rng.integers(0, R))
            elif k == 4 and R < 16:
                modes |= 1 << int(rng.integers(2 * R, 32))
            elif k == 5:
                n_c += int(rng.choice([-1, 1]))
            elif k == 6:
                d = desc_word(int(rng.integers(MAX_N + 2, MAX_N + 40)), R, neg)
            elif k == 7:
                pk.append([0x4C5B0000 | (n_c - 1)] + [d, modes][:int(rng.integers(0, 3))])
                continue
            else:
                d |= 1 << 31
        pk.append([0x4C5B0000 | ((n_c - 1) & 0xFFFF), d, modes] + body)
    return pk


def run_header(packets, W=16, MAX_N=512, w8=0, p_gap=0.0, p_stall=0.0, p_dpop=0.0, seed=0):
    rng = np.random.default_rng(seed)
    words = [(w, int(i == len(p) - 1)) for p in packets for i, w in enumerate(p)]
    clk, rst = Signal(bool(0)), ResetSignal(1, active=1, isasync=False)
    s_data, o_data = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    s_valid, s_ready, s_last, o_valid, o_ready, o_last = [Signal(bool(0)) for _ in range(6)]
    d_err, d_neg, d_nm1, d_modes = Signal(intbv(0)[4:]), Signal(intbv(0)[2:]), Signal(intbv(0)[16:]), \
        Signal(intbv(0)[32:])
    d_rows, d_valid, d_ready, w8s, busy = [Signal(bool(0)) for _ in range(5)]
    front, descs = [], []
    cycles = run_header.cycles = []

    @block
    def bench():
        dut = row_header(clk, rst, s_data, s_valid, s_ready, s_last, o_data, o_valid, o_ready, o_last, d_err, d_rows,
                         d_neg, d_nm1, d_modes, d_valid, d_ready, w8s, busy, W=W, MAX_N=MAX_N)

        @instance
        def drive():
            w8s.next = w8
            i = 0
            for _ in range(3):
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(5)
            rst.next = 0
            quiet = 0
            for cyc in range(30 * len(words) + 200):
                if i < len(words) and (s_valid or rng.random() >= p_gap):
                    s_valid.next = 1
                    s_data.next, s_last.next = words[i]
                else:
                    s_valid.next = 0
                o_ready.next = rng.random() >= p_stall
                d_ready.next = rng.random() >= p_dpop
                yield delay(1)
                if s_valid and s_ready:
                    i += 1
                if o_valid and o_ready:
                    front.append((int(o_data), int(o_last)))
                    cycles.append(cyc)
                if d_valid and d_ready:
                    descs.append((int(d_err), int(d_rows), int(d_neg), int(d_nm1), int(d_modes)))
                clk.next = 1
                yield delay(5)
                clk.next = 0
                yield delay(3)
                quiet = quiet + 1 if i == len(words) and not busy and not o_valid else 0
                if quiet > 4:
                    break

        return dut, drive

    inst = bench()
    try:
        inst.run_sim(quiet=True)
    finally:
        inst.quit_sim()
    return front, descs


@pytest.mark.parametrize("W,w8,p_gap,p_stall,p_dpop,seed", [(16, 0, 0.0, 0.0, 0.0, 1), (16, 0, 0.3, 0.4, 0.5, 2),
                                                            (8, 0, 0.2, 0.2, 0.9, 3), (16, 1, 0.5, 0.1, 0.2, 4)])
def test_header_matches_model(W, w8, p_gap, p_stall, p_dpop, seed):
    rng = np.random.default_rng(seed)
    packets = random_packets(rng, 80, W, MAX_N=64)
    exp_front, exp_descs = header_model(packets, W, MAX_N=64, w8=w8)
    errs = {d[0] for d in exp_descs}
    assert {0, 4, 10} <= errs and any(d[1] for d in exp_descs)
    front, descs = run_header(packets, W, MAX_N=64, w8=w8, p_gap=p_gap, p_stall=p_stall, p_dpop=p_dpop, seed=seed)
    # a bad stripe's descriptor carries only its code (its other fields are don't-care, and row_mirror ignores them)
    assert [d if d[0] == 0 else (d[0], d[1], 0, 0, 0) for d in descs] == exp_descs
    assert front == exp_front


def test_plain_stripes_pass_at_full_rate():
    # plain stripes back to back: one word per cycle through (headers included)
    rng = np.random.default_rng(9)
    packets = [[0x4C5A0000 | 9] + [int(v) for v in rng.integers(0, 1 << 32, 9)] for _ in range(20)]
    front, descs = run_header(packets)
    assert front == header_model(packets)[0] and len(descs) == 20
    assert np.all(np.diff(run_header.cycles) == 1)


def test_config_checked():
    def s(w=1):
        return Signal(bool(0)) if w == 1 else Signal(intbv(0)[w:])
    rst = ResetSignal(0, active=1, isasync=False)
    for kw, match in (({"MAX_N": 48}, "MAX_N"), ({"MAX_N": 65536}, "MAX_N"), ({"W": 12}, "W = 12")):
        with pytest.raises(UnsupportedError, match=match):
            row_header(s(), rst, s(32), s(), s(), s(), s(32), s(), s(), s(), s(4), s(), s(2), s(16), s(32), s(), s(),
                       s(), s(), **kw)
