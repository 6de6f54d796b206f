"""The vector front keeps one word per cycle across stripe ends (docs/log/2026-12-lanes.md, 2026-12-07 evening): a
zero-run stripe, whose ``n`` symbols never all come, ends for the front at its overrun token (no wait for the
count stage's flush), and the symbol FIFO (``SF_DEPTH_VECTOR``) covers the front's longer token pipeline.
Before both changes the single vector core lost up to 11 cycles at most stripe starts of such streams."""
import numpy as np
import pytest

from lutzip.hdl.flows import simulate as S
from lutzip.hdl.flows.vectors import make_vectors, random_stripe, random_tableset


def zero_run_vectors(seed, n_stripes=24, stripe_len=256, W=16):
    """Stripes of words with long zero runs and short residual stretches (many stripes end in a zero run)."""
    rng = np.random.default_rng(seed)
    ts = random_tableset(rng, W=W, L=8, zrun_kmax=6)
    words = []
    while len(words) < n_stripes * stripe_len:
        words += random_stripe(rng, ts, 64)[1]
    words = np.array(words[:n_stripes * stripe_len], np.uint16 if W == 16 else np.uint8)
    return make_vectors(ts, words, stripe_len, W=W, FRONT="vector"), words


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_vector_core_no_gap_at_stripe_starts(seed, tmp_path, hdl_cache):
    why = S.available("verilator")
    if why:
        pytest.skip(why)
    vec, words = zero_run_vectors(seed)
    out = S.run("verilator", S.make_stimulus(vec), tmp_path, vec.params, build_dir=hdl_cache)
    assert S.first_difference(out, vec.expected) is None
    oc = out.out_cycles
    assert len(oc) == len(words)
    gaps = np.nonzero(np.diff(oc) != 1)[0]
    assert len(gaps) == 0, f"{len(gaps)} gaps, {int(np.sum(np.diff(oc) - 1))} cycles lost, first after word {gaps[:5]}"
