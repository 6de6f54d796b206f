"""The N-lane decoder's rate model (``lutzip.hdl.flows.lanes_model.rate_model``) and the host's stripe length for N
lanes (``host_stripe_len``): the model gives the simulated cycles, and the one-time wait it shows is what sets
the stripe length (docs/log/2026-12-lanes.md, 2026-12-07 late night)."""
import numpy as np
import pytest

from lutzip.errors import LutzError, UnsupportedError
from lutzip.hdl.flows import lanes_model as LM
from lutzip.hdl.flows import lanes_sim as LS
from lutzip.hdl.flows.model import table_ops
from lutzip.hdl.flows.vectors import random_tableset

from test_core_lanes import tensors_stripes


@pytest.mark.parametrize("lanes", [2, 4, 8])
def test_equal_stripes_wait_once(lanes):
    """Stripes of S words on lanes that start in step: the output waits about (N - 1) / N x S cycles, once (on the
    first stripes), then takes one beat per cycle; a longer stream does not wait more."""
    S = 512
    short = LM.rate_model([S] * 8 * lanes, lanes)
    long = LM.rate_model([S] * 32 * lanes, lanes)
    for m, k in ((short, 8), (long, 32)):
        loss = m["cycles"] - (k * lanes * S) // lanes
        assert (lanes - 1) * S // lanes - S // lanes <= loss <= (lanes - 1) * S // lanes + S // lanes, loss
        assert max(m["wait"]) < lanes        # only the first round of stripes waits
    assert long["cycles"] - short["cycles"] == 24 * S     # one beat per cycle after that
    assert long["per_lane"] > short["per_lane"]


def test_one_lane_never_waits():
    m = LM.rate_model([100, 7, 1, 300], 1)
    assert m["wait"] == {} and m["cycles"] == 407


def test_host_stripe_len_meets_the_rate():
    """A 1.17 M-word stream (the plain bench's length) of equal stripes: 8 lanes at 4096 words stay below 0.99 per
    lane (the wait of the first stripes), at the host's length for 8 lanes above it. At 1 M words (issue 16's
    shortest stream; the row bench's 1.06 M) 4 lanes at 4096 words stay below 0.99 too: the host's length for every
    lane count keeps 1 M words at 0.99 and is the longest power of two that does."""
    M = 1_168_384
    assert LM.host_stripe_len(8) == 1024 and LM.host_stripe_len(4) == 2048
    assert LM.host_stripe_len(1) == LM.host_stripe_len(2) == 4096
    assert LM.rate_model([4096] * (M // 4096), 8)["per_lane"] < 0.99
    assert LM.rate_model([LM.host_stripe_len(8)] * (M // 1024), 8)["per_lane"] > 0.99
    M = LM.HOST_MIN_WORDS
    for n in (2, 4, 8):
        S = LM.host_stripe_len(n)
        assert LM.rate_model([S] * (M // S), n)["per_lane"] >= 0.99, n
        if S < 4096:
            assert LM.rate_model([2 * S] * (M // (2 * S)), n)["per_lane"] < 0.99, n
    assert LM.rate_model([4096] * (1_056_768 // 4096), 4)["per_lane"] < 0.99       # the row bench before
    with pytest.raises(UnsupportedError):
        LM.host_stripe_len(3)
    with pytest.raises(LutzError):
        LM.rate_model([5, 0], 2)


def test_model_gives_the_simulated_cycles(tmp_path):
    """MyHDL, 2 lanes, tensors of uneven sizes (short last stripes, one-word stripes): the model's cycles from the
    first beat to the last are the simulator's."""
    rng = np.random.default_rng(3)
    ts = random_tableset(rng, W=16, L=8, zrun_kmax=3)
    stripes = tensors_stripes(ts, rng, (700, 30, 1, 500, 5, 300), 128)
    vec = LS.LaneVectors.make(stripes, table_ops(ts, 8), 2, 64, W=16)
    out = LS.check(vec, "myhdl", workdir=tmp_path)
    oc = out.out_cycles
    m = LM.rate_model([(int(s[0]) & 0xFFFF) + 1 for s in stripes], 2, 64)
    assert m["cycles"] == oc[-1] - oc[0] and m["words"] == vec.n_words
    assert m["wait"]            # the first stripe: the output follows its lane


def test_row_stripe_costs_and_weights():
    """A row stripe's cost in the model is its R x N output words; ASSIGN="load" weighs its coded words: the model
    takes both (``weights``), and different weights move stripes between lanes."""
    import sys
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from lutzip.codec import arrays as codec
    from lutzip.codec import container as ct
    from row_mirror_cases import exact_basis_int8
    c = ct.from_bytes(ct.to_bytes(codec.compress({"t": exact_basis_int8(24, 64)}, stripe_len=6 * 64,
                                                 group_below=64)))
    st = list(c.stripes(c.tensor("t")))
    cost = [LM.stripe_cost(s) for s in st]
    assert all(o == 6 * 64 and w == 6 * 33 == (int(s[0]) & 0xFFFF) + 1 for (o, w), s in zip(cost, st))
    assert LM.stripe_cost([0x4C5A0000 | 99]) == (100, 100)
    ow = [100, 900, 100, 100, 100]
    plain = LM.rate_model(ow, 2)
    assert LM.rate_model(ow, 2, weights=ow) == plain
    odd = LM.rate_model(ow, 2, weights=[100, 1, 100, 100, 100])    # stripe 2 follows the light stripe 1
    assert odd["cycles"] != plain["cycles"]
    with pytest.raises(LutzError):
        LM.rate_model(ow, 2, weights=[1, 2])


def test_host_compress_kw_pins_8_bit_streams():
    """An int8 row stream compressed for 4 lanes (``host_compress_kw``) is cut in stripes of the host's length; the
    encoder's default gives 8-bit streams stripes of twice that (and the model's 4096-word wait)."""
    import sys
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from lutzip.codec import arrays as codec
    from row_mirror_cases import exact_basis_int8
    a = exact_basis_int8(256, 256)
    kw = LM.host_compress_kw(4)
    assert kw == {"stripe_len": 2048, "min_stripes": 0} and LM.host_compress_kw(1) == {}
    pinned = codec.compress({"t": a}, **kw).tensor("t")
    default = codec.compress({"t": a}, stripe_len=2048).tensor("t")
    assert pinned.rows and default.rows
    assert int(pinned.stripe_len) == 2048 and int(default.stripe_len) == 4096


def test_model_gives_the_simulated_cycles_of_row_stripes(tmp_path, hdl_cache):
    """MyHDL, 2 lanes, MIRROR=1, an int8 row stream of exactly mirrored rows (4 stripes of 6 rows of 64), ASSIGN
    "load": the model on the stripes' output words and load weights (``stripe_cost``) gives the simulator's cycles;
    on the coded words (what the bench passed before) it does not."""
    from test_lanes_mirror import lane_vectors
    vec, exp = lane_vectors("silero_like_int8", 2)
    out = LS.check(vec, "myhdl", workdir=tmp_path, build_dir=hdl_cache)
    oc = out.out_cycles
    cost = [LM.stripe_cost(s) for s in vec.stripes]
    m = LM.rate_model([c[0] for c in cost], 2, weights=[c[1] for c in cost])
    assert m["cycles"] == oc[-1] - oc[0] and m["words"] == len(exp)
    assert LM.rate_model([c[1] for c in cost], 2)["cycles"] != m["cycles"]
