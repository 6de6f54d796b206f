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
    """A 1.17 M-word stream (the bench's length) of equal stripes: 8 lanes at 4096 words stay below 0.99 per lane
    (the wait of the first stripes), at the host's length for 8 lanes above it."""
    M = 1_168_384
    assert LM.host_stripe_len(8) == 1024 and LM.host_stripe_len(4) == LM.host_stripe_len(1) == 4096
    assert LM.rate_model([4096] * (M // 4096), 8)["per_lane"] < 0.99
    assert LM.rate_model([LM.host_stripe_len(8)] * (M // 1024), 8)["per_lane"] > 0.99
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
