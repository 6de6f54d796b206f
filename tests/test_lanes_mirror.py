"""The N-lane decoder with ``MIRROR=1`` (docs/CORE.md section 6.8): row streams (docs/FORMAT.md section 3.1) made by
the reference encoder decode bit-exact through ``decoder_lanes`` with 2 and 4 lanes, against the software decoder's
words, with random source pauses per lane and sink backpressure: MyHDL and Verilator in the default run, GHDL and
Icarus with ``-m slow``. A row stripe holds whole rows, so each lane's core (its own ``row_header`` /
``row_mirror`` and row buffer) decodes each stripe alone; ``ASSIGN="load"`` counts a row stripe's ``n + 1``.

The expected beats: the single core's words (the row stages' models in tests/row_mirror_cases.py around the core's
reference model, checked equal to the software decoder's words on every good file), cut into beats by
:func:`lutzip.hdl.flows.lanes_model.expected_beats` (``core_rows``)."""
import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import LutzError, UnsupportedError
from lutzip.hdl.flows import lanes_model as LM
from lutzip.hdl.flows import lanes_sim as LS
from lutzip.hdl.flows import model as M
from lutzip.hdl.flows import simulate as S
from lutzip.hdl.lanes.decoder_lane import stripe_weight

from row_mirror_cases import basis, exact_basis_int8, header_model, model

MAX_N = 64


def silero_like(R=24, N=64):
    """An exactly mirrored int8 basis as tests/test_board_rows.py's, shorter rows."""
    return exact_basis_int8(R, N)


def row_file(a, rs=6):
    """``(container, tensor entry, the software decoder's words)`` of a one-tensor file, ``rs`` rows a stripe."""
    N = a.shape[1]
    c = ct.from_bytes(ct.to_bytes(codec.compress({"stft": a}, stripe_len=rs * N, group_below=64)))
    t = c.tensor("stft")
    assert c.version == 6 and t.rows
    out = codec.decompress(c)["stft"]
    assert np.array_equal(np.asarray(out).view(a.dtype), a)
    return c, t, np.ascontiguousarray(out).view(np.uint8 if a.dtype.itemsize == 1 else np.uint16).ravel()


def core_rows(stripes, ops, W):
    """The single MIRROR=1 core's output rows ``(data, last, user)``: row_header's model, the core's reference
    model on what the front gets, row_mirror's model."""
    front, descs = header_model([[int(x) for x in s] for s in stripes], W, MAX_N, 0)
    packets, cur = [], []
    for w, last in front:
        cur.append(w)
        if last:
            packets.append(np.array(cur, np.uint32))
            cur = []
    rows = M.expected_outputs(packets, ops, 8, 4096, W, 1)
    out, _ = model([tuple(int(x) for x in r) for r in rows], descs)
    return np.array(out, np.int64).reshape(-1, 3)


def _bad_stripes(st):
    """Good stripes with bad ones between them (row stripe errors, a symbol error), then the good one again."""
    good = st[-1]
    bad = []
    b = good.copy()
    b[1] |= 1 << 25                                        # reserved descriptor bit: error 10
    bad.append(b)
    b = good.copy()
    b[0] -= 1                                              # n one too small: error 10
    bad.append(b)
    bad.append(good[:2].copy())                            # ends before its symbols: error 4
    b = good.copy()
    b[5] ^= 1 << 7                                         # a flipped symbol bit (whatever the reference says)
    bad.append(b)
    out = list(st[:2])
    for k, x in enumerate(bad):
        out += [x, good] + [good] * (k == 0)    # (one good stripe more: the errors fall on more than one lane)
    return out


def _uneven(st):
    """The file's stripes in an order of uneven weights (its short last stripe between full ones)."""
    full, short = st[:-1], st[-1]
    return [full[0], short, short, full[1], short, full[2], full[0], short, short, short, full[1]]


CASES = {  # name: (tensor, stripe rows, corrupt, in_gap, out_stall)
    "silero_like_int8": (lambda: silero_like(24, 64), 6, None, 0.2, 0.3),
    "int16_odd_uneven": (lambda: basis(20, 17, "int16"), 6, _uneven, 0.1, 0.2),
    "bf16_errors": (lambda: basis(18, 16, "bfloat16"), 6, _bad_stripes, 0.1, 0.2),
}


def lane_vectors(case, lanes, assign="load", rows=0):
    make, rs, corrupt, _, _ = CASES[case]
    c, t, words = row_file(make(), rs)
    ts = c.tables[t.table]
    W = ts.word_bits
    stripes = [np.array(s, np.uint32) for s in c.stripes(t)]
    if corrupt:
        stripes = corrupt(stripes)
    ops = M.table_ops(ts, 8, mirror=1)
    exp = core_rows(stripes, ops, W)
    if corrupt is None:
        # bit-exact against the software decoder: the expected words are the decoded file's
        assert np.array_equal(exp[:, 0], words) and not exp[:, 2].any()
    assert int(exp[:, 1].sum()) == len(stripes)
    vec = LS.LaneVectors.make(stripes, ops, lanes, rows, assign, core_rows=exp, L=8, W=W, MIRROR=1, MAX_N=MAX_N)
    return vec, exp


def need(sim):
    why = S.available(sim)
    if why:
        pytest.skip(f"{sim} not usable here: {why}")


def default_run_excludes(item):
    """Default run: MyHDL on every case with 2 and 4 lanes, Verilator on the silero-like and error cases; -m slow:
    GHDL and Icarus, Verilator on the rest."""
    if item.originalname != "test_row_streams_through_lanes":
        return False
    sim, case = item.callspec.params["sim"], item.callspec.params["case"]
    return sim in ("ghdl", "icarus") or (sim == "verilator" and case == "int16_odd_uneven")


_RUNS = {}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("lanes", [2, 4])
@pytest.mark.parametrize("sim", ["myhdl", "verilator", "ghdl", "icarus"])
def test_row_streams_through_lanes(sim, lanes, case, tmp_path, hdl_cache):
    need(sim)
    vec, exp = lane_vectors(case, lanes)
    if CASES[case][2] is _bad_stripes:
        assert {4, 10} <= set(vec.errors[:, 1].tolist())
        assert len(set(vec.errors[:, 0].tolist())) > 1          # errors on more than one lane
    _, _, _, gap, stall = CASES[case]
    out = LS.check(vec, sim, workdir=tmp_path, build_dir=hdl_cache, in_gap=gap, out_stall=stall, seed=3)
    # the beats' words, in order, are the single core's (for a good file: the software decoder's, lane_vectors)
    assert np.array_equal(LM.beats_words(out.beats, lanes, vec.params["W"]), exp[:, 0])
    key = (case, lanes)
    if sim == "myhdl":
        _RUNS[key] = out
    elif key in _RUNS:
        # the same clock cycles in every simulator (MyHDL's run is the reference)
        assert LS.first_cycle_difference(out, _RUNS[key]) is None


def test_load_rule_counts_row_stripes():
    """With MIRROR=1 a row stripe weighs n + 1 (its coded words + 1), as a plain stripe; without, 1 (an error)."""
    h = 0x4C5B0000 | 99
    assert stripe_weight(h, 1) == 100 and stripe_weight(h) == 1 and stripe_weight(h, 0) == 1
    assert stripe_weight(0x4C5A0000 | 99, 1) == 100 and stripe_weight(0x12345678, 1) == 1
    vec, _ = lane_vectors("int16_odd_uneven", 2)
    # the uneven case really depends on the rule: the lanes differ between the two weights
    assert LM.assign_lanes(vec.stripes, 2, "load", mirror=1)[0] != LM.assign_lanes(vec.stripes, 2, "load")[0]
    with pytest.raises(LutzError, match="core_rows"):
        LM.expected_beats(vec.stripes, vec.table_ops, 2, MIRROR=1)


def test_mirror0_lanes_mark_row_stripes(tmp_path, hdl_cache):
    """A MIRROR=0 two-lane decoder takes a row stripe as a bad header (code 1, weight 1): the plain model's beats."""
    c, t, _ = row_file(basis(12, 16, "int16"), 4)
    stripes = [np.array(s, np.uint32) for s in c.stripes(t)]
    ops = M.table_ops(c.tables[t.table], 8)
    vec = LS.LaneVectors.make(stripes, ops, 2, 0, "load", L=8, W=16)
    assert vec.errors[:, 1].tolist() == [1] * len(stripes)
    LS.check(vec, "myhdl", workdir=tmp_path, build_dir=hdl_cache, in_gap=0.1, out_stall=0.2, seed=1)


def test_small_lane_buffers(tmp_path, hdl_cache):
    """ROWS=8 (the lane buffer full most of the time): the same beats."""
    vec, _ = lane_vectors("silero_like_int8", 2, rows=8)
    LS.check(vec, "myhdl", workdir=tmp_path, build_dir=hdl_cache, in_gap=0.05, out_stall=0.4, seed=9)


def test_mirror_parameters_checked():
    from lutzip.hdl.core.decoder_lanes import decoder_lanes
    from lutzip.hdl.core.ports import lanes_signals
    for kw, match in (({"MIRROR": 2}, "MIRROR"), ({"MIRROR": 1, "MAX_N": 100}, "MAX_N")):
        with pytest.raises(UnsupportedError, match=match) as e:
            decoder_lanes(**lanes_signals(2, 16), LANES=2, **kw)
        assert "\n" not in str(e.value)


@pytest.mark.skipif(__import__("lutzip.weights.models", fromlist=["x"]).real_model_path("silero-vad") is None,
                    reason="silero-vad not installed")
def test_row_stream_benches_are_checked(tmp_path, hdl_cache):
    """``lutzip hdl bench --mirror`` (one lane) and ``--lanes 2 --mirror`` on a short piece of silero-vad's STFT
    basis, in MyHDL: the streams are row streams, every word checked (a wrong expectation would fail them)."""
    from lutzip.hdl.flows import bench
    from lutzip.hdl.flows import lanes_bench as lb
    st = lb.row_streams(2048, 512, ["rows_int8"])["rows_int8"]
    stripes, ops, W, rows = st
    assert W == 8 and len(stripes) == 4 and all(int(x[0]) >> 16 == 0x4C5B for x in stripes)
    assert len(rows) == 2048 and int(rows[:, 1].sum()) == 4
    r1 = bench.run_rows(2048, 512, "myhdl", ["rows_int8"], tmp_path / "one")["rows_int8"]
    r2 = lb.run(2, 2048, 512, "myhdl", ["rows_int8"], workdir=tmp_path / "two", mirror=True)["rows_int8"]
    assert r1["bit_exact"] and r2["bit_exact"], (r1["mismatch"], r2["mismatch"])
    assert r1["weights"] == r2["weights"] == 2048
    assert r1["weights_per_cycle"] > 0.9 and r2["weights_per_cycle"] > 1.0


def test_cli_converts_lanes_with_mirror(tmp_path):
    """``lutzip hdl convert --lanes 2 --mirror`` converts (it refused before): the row marker is in the Verilog."""
    from lutzip import cli
    assert cli.main(["hdl", "convert", "--lanes", "2", "--mirror", "--max-n", "64", "--hdl", "verilog",
                     "--out", str(tmp_path)]) == 0
    text = (tmp_path / "decoder_lanes.v").read_text().lower()
    assert "4c5b" in text or "19547" in text
