"""The registered replay build (``RING_REG`` and ``CORE_IN_REG``, as in the two-domain ULX3S top) in MyHDL: the
replay run and every version-1 frame behave as in the plain replay build. A module of its own: MyHDL runs one
simulation at a time, so this engine must not be alive beside tests/test_firmware_replay.py's."""
import pytest
import test_firmware_engine as eng
import test_firmware_replay as rp
from lutzip.firmware.engine.sim_engine import EngineSim


@pytest.fixture(scope="module", params=[False, True, "no_rst_reg"],
                ids=["ring_core_in", "pipelined_feed", "pipelined_no_rst_reg"])
def sim_reg(request):
    """The registered build of the two-domain ULX3S core (ring and core-input register slices), without and
    with the pipelined replay feed, the registered table port and result data and the registered block resets
    (``REPLAY_PIPE``, ``TABLE_REG``, ``RESULT_REG``, ``RST_REG``, ``RING_PIPE``; 512 words: 8 banks of 64, one group). One at a
    time: pytest ends the module fixture of one parameter before it builds the next. The third build is the
    pipelined one without ``RST_REG``, the reference of the RESET test below."""
    full = bool(request.param)
    s = EngineSim(**rp.PARAMS, RING_REG=True, CORE_IN_REG=True, REPLAY_PIPE=full, TABLE_REG=full, RESULT_REG=full,
                  RST_REG=request.param is True, RING_PIPE=full)
    s.variant = request.param
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


_RESET_AMID = {}


@pytest.mark.parametrize("words", [False, True])
def test_reset_frame_amid_results_answers_as_without_rst_reg(sim_reg, words):
    """A RESET frame right behind two stripes, while their RESULT (and DATA) frames are still being made or
    queued (the RESET cuts them): the board's bytes are the same with ``RST_REG`` (the blocks reset a cycle
    later, the framer taking nothing from them in that cycle) as in the same build without it, byte for byte
    (the second of the two pipelined builds to run compares)."""
    import test_firmware_faults as faults
    from lutzip.board.driver import Board
    from lutzip.firmware.engine.sim_engine import SimSerial
    from lutzip.link import protocol as link
    if sim_reg.variant is False:
        pytest.skip("compared between the pipelined builds with and without RST_REG")
    c, _ = faults._container()
    faults.reset(sim_reg)
    # the tables through the host driver (a stream of the same stripes), then the scenario from seq 0
    Board(serial=SimSerial(sim_reg), timeout=60, rto=10, max_payload=128).stream(
        [("a", c.tables[0], list(c.stripes(c.tensors[0])))])
    data = link.encode_frame(link.RESET, 0, link.reset_payload(words))
    seq = 1
    for st in c.stripes(c.tensors[0]):
        w = st.astype("<u4")
        for i in range(0, len(w), 32):
            data += link.encode_frame(link.STREAM, seq, w[i:i + 32].tobytes(), 1 if i + 32 >= len(w) else 0)
            seq += 1
    data += link.encode_frame(link.RESET, 9, link.reset_payload(False)) + link.encode_frame(link.PING, 0)
    out = sim_reg.run(data, max_cycles=40000)
    # the last two frames: the ACKs of the second RESET and of the PING (a frame cut by the RESET may hide the
    # frames behind it from a parser, so parse from the end)
    fr = link.FrameParser().feed(out[-2 * len(link.encode_frame(link.ACK, 0, bytes(4))):])
    assert [f.type for f in fr] == [link.ACK, link.ACK] and link.parse_ack(fr[-1])[0] == 10, fr
    _RESET_AMID.setdefault(words, {})[sim_reg.variant] = out
    if len(_RESET_AMID[words]) == 2:
        assert _RESET_AMID[words][True] == _RESET_AMID[words]["no_rst_reg"]
