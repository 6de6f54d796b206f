"""The decoder core with ``MIRROR=1`` (docs/CORE.md section 7) on row streams (docs/FORMAT.md section 3.1) made by
the reference encoder (``lutzip.codec.arrays.compress``): bit-exact against the software decoder in MyHDL, GHDL,
Icarus and Verilator, all four to the clock cycle, with random source pauses and sink stalls; bad row stripes
(a row longer than the row buffer, reserved bits, a mode 3, ``n`` not the rows' coded words, a packet ending before
its symbols, a flipped symbol bit) give the reference's error markers and pulses and the core resynchronises.
The expected words: the stages' models (tests/row_mirror_cases.py) around the core's reference model, checked
equal to the software decoder's output on every good file."""
import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import UnsupportedError
from lutzip.hdl.core.decoder_core import decoder_core
from lutzip.hdl.flows import model as M
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.vectors import Vectors

from row_mirror_cases import basis, header_model, model

SIMS = ("myhdl", "ghdl", "icarus", "verilator")


def row_file(dtype, R, N, rs=6):
    """A ``.lutz`` file holding one row stream of ``rs`` rows a stripe: ``(container, tensor entry, the software
    decoder's words)``."""
    a = basis(R, N, dtype)
    data = ct.to_bytes(codec.compress({"stft": a}, stripe_len=rs * N, group_below=64))
    c = ct.from_bytes(data)
    t = c.tensor("stft")
    assert c.version == 6 and t.rows
    out = codec.decompress(c)["stft"]
    assert np.array_equal(np.asarray(out).view(a.dtype), a)   # the software decoder's round trip
    words = np.ascontiguousarray(out).view(np.uint8 if a.dtype.itemsize == 1 else np.uint16).ravel()
    return c, t, words.astype(np.int64)


def core_expected(stripes, ops, L, W, MAX_N, w8=0):
    """What the MIRROR=1 core outputs: row_header's model, the core's reference model on what the front gets,
    row_mirror's model (their specifications: tests/row_mirror_cases.py)."""
    front, descs = header_model([[int(x) for x in s] for s in stripes], W, MAX_N, w8)
    packets, cur = [], []
    for w, last in front:
        cur.append(w)
        if last:
            packets.append(np.array(cur, np.uint32))
            cur = []
    rows = M.expected_outputs(packets, ops, L, 4096, W, 1)
    out, errs = model([tuple(int(x) for x in r) for r in rows], descs)
    return np.array(out, np.int64).reshape(-1, 3)


def vectors(dtype, R, N, MAX_N=64, corrupt=None, software=True):
    c, t, words = row_file(dtype, R, N)
    ts = c.tables[t.table]
    W = ts.word_bits
    stripes = [np.array(s, np.uint32) for s in c.stripes(t)]
    if corrupt:
        stripes = corrupt(stripes)
    # the tables and config word 0, then config word 1 (MIRROR=1: bit 0 = 8-bit words; 0 after configuration of a
    # device, X in a Verilog simulation until written, as word 0)
    ops = M.table_ops(ts, 8) + [(M.SEL_CONFIG, 1, int(W == 8))]
    exp = core_expected(stripes, ops, 8, W, MAX_N)
    if software:
        # bit-exact against the software decoder: the expected words are the decoded file's
        assert np.array_equal(exp[:, 0], words) and not exp[:, 2].any()
        assert int(exp[:, 1].sum()) == len(stripes)
    return Vectors(ops, stripes, exp, {"L": 8, "W": W, "MIRROR": 1, "MAX_N": MAX_N}), words


def need(sim):
    why = S.available(sim)
    if why:
        pytest.skip(f"{sim} not usable here: {why}")


def _bad_stripes(st):
    """Good stripes with bad ones between them: every row stripe error, then the good one again (resync)."""
    good = st[-1]
    bad = []
    b = good.copy()
    b[1] |= 1 << 25                                        # reserved descriptor bit
    bad.append(b)
    b = good.copy()
    b[2] |= 3 << 2                                         # mode 3 on row 1
    bad.append(b)
    b = good.copy()
    b[0] -= 1                                              # n one too small
    bad.append(b)
    bad.append(good[:2].copy())                            # ends before its symbols: error 4
    b = good.copy()
    b[5] ^= 1 << 7                                         # a flipped symbol bit (whatever the reference says)
    bad.append(b)
    out = []
    for x in bad:
        out += [x, good]
    return st[:1] + out


CASES = {  # name: (dtype, R, N, in_gap, out_stall, corrupt)
    "int16_odd": ("int16", 20, 17, 0.2, 0.3, None),
    "bf16_even_errors": ("bfloat16", 18, 16, 0.1, 0.2, _bad_stripes),
}


def default_run_excludes(item):
    """Default run: the two cases in all four simulators (about 40 s with warm builds), the buffer-size error and the
    parameter checks; -m slow: more word types and lengths, the rate (MyHDL, about 20 s each)."""
    return item.originalname in ("test_row_stream_myhdl_more", "test_rate_with_mirrors")


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("sim", SIMS)
def test_row_stream_four_simulators(case, sim, tmp_path, hdl_cache):
    need(sim)
    dtype, R, N, gap, stall, corrupt = CASES[case]
    vec, words = vectors(dtype, R, N, corrupt=corrupt, software=corrupt is None)
    if corrupt:
        codes = set(vec.expected[vec.expected[:, 2] == 1, 0].tolist())
        assert {4, 10} <= codes
    stim = S.make_stimulus(vec, in_gap=gap, out_stall=stall, seed=3)
    out = S.run(sim, stim, tmp_path, vec.params, build_dir=hdl_cache)
    S.assert_matches(out, vec.expected)
    # the same clock cycles in every simulator: MyHDL's run is the reference
    key = (case, "myhdl")
    if sim == "myhdl":
        _RUNS[key] = out
    elif key in _RUNS:
        assert S.first_cycle_difference(out, _RUNS[key]) is None


_RUNS = {}


@pytest.mark.parametrize("dtype,N", [("int8", 64), ("float16", 33), ("int16", 65)])
def test_row_stream_myhdl_more(dtype, N, tmp_path, hdl_cache):
    # more word types and lengths in MyHDL (N = 65 = MAX_N + 1: the longest row the 64-row buffer takes)
    vec, _ = vectors(dtype, 10, N)
    stim = S.make_stimulus(vec, in_gap=0.3, out_stall=0.3, seed=5)
    S.assert_matches(S.run("myhdl", stim, tmp_path, vec.params, build_dir=hdl_cache),
                     vec.expected)


def test_row_longer_than_buffer_is_an_error(tmp_path, hdl_cache):
    # N = 33 > MAX_N + 1 = 17: every row stripe is error 10, one marker each, no hang; a plain stripe still decodes
    vec, _ = vectors("int16", 20, 33, MAX_N=16, software=False)
    codes = vec.expected[vec.expected[:, 2] == 1, 0].tolist()
    assert codes == [10] * len(vec.stripes)
    stim = S.make_stimulus(vec, in_gap=0.1, out_stall=0.2, seed=7)
    out = S.run("myhdl", stim, tmp_path, vec.params, build_dir=hdl_cache)
    S.assert_matches(out, vec.expected)
    assert out.error_codes == [10] * len(vec.stripes)


def test_rate_with_mirrors(tmp_path, hdl_cache):
    # never-pausing source, never-stalling sink: the output rate over the stream (replays included)
    vec, words = vectors("int16", 32, 64)
    stim = S.make_stimulus(vec)
    out = S.run("myhdl", stim, tmp_path, vec.params, build_dir=hdl_cache)
    S.assert_matches(out, vec.expected)
    cyc = out.out_cycles
    span = int(cyc[-1] - cyc[0]) + 1
    print(f"MIRROR=1 core: {len(cyc)} words in {span} cycles, rate {len(cyc) / span:.4f}")
    assert span == len(cyc)


def test_mirror_parameters_checked():
    from lutzip.hdl.core.ports import core_signals
    for kw, match in (({"MIRROR": 2}, "MIRROR"), ({"MIRROR": 1, "MAX_N": 100}, "MAX_N")):
        with pytest.raises(UnsupportedError, match=match):
            decoder_core(**core_signals(16), **kw)
