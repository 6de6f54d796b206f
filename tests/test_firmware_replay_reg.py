"""The registered replay build (``RING_REG`` and ``CORE_IN_REG``, as in the two-domain ULX3S top) in MyHDL: the
replay run and every version-1 frame behave as in the plain replay build. A module of its own: MyHDL runs one
simulation at a time, so this engine must not be alive beside tests/test_firmware_replay.py's."""
import pytest
import test_firmware_engine as eng
import test_firmware_replay as rp
from lutzip.firmware.engine.sim_engine import EngineSim


@pytest.fixture(scope="module", params=[False, True], ids=["ring_core_in", "pipelined_feed"])
def sim_reg(request):
    """The registered build of the two-domain ULX3S core (ring and core-input register slices), without and
    with the pipelined replay feed, the registered table port and result data and the registered block resets
    (``REPLAY_PIPE``, ``TABLE_REG``, ``RESULT_REG``, ``RST_REG``; 512 words: 8 banks of 64, one group). One at a
    time: pytest ends the module fixture of one parameter before it builds the next."""
    s = EngineSim(**rp.PARAMS, RING_REG=True, CORE_IN_REG=True, REPLAY_PIPE=request.param,
                  TABLE_REG=request.param, RESULT_REG=request.param, RST_REG=request.param)
    yield s
    s.close()


def test_registered_ring_and_core_input_keep_replay_and_stream_bit_exact(sim_reg):
    rp.test_replay_run_is_bit_exact_with_consistent_counters(sim_reg)
    eng.test_sequencing_nack_dup_and_malformed(sim_reg)


def test_registered_build_streams_words_chunks_and_decode_errors(sim_reg):
    """Words mode (300-word stripes: two 128-word chunk descriptors and the end descriptor each) and a stripe
    with a decode error, on the registered builds (the pipelined one with ``RESULT_REG``: the end descriptor a
    cycle after its word, ``result_path``'s ``DESC_REG``)."""
    import test_firmware_faults as faults
    faults.reset(sim_reg)
    eng.test_stream_through_engine_matches_reference(sim_reg, True)
    faults.reset(sim_reg)
    eng.test_bad_stripe_reports_error_and_next_stripe_decodes(sim_reg)
