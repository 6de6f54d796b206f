"""The replay build of the protocol engine (``REPLAY_WORDS`` > 0, docs/PROTOCOL.md section 6) in MyHDL: the
run itself, and every version-1 frame behaving as in the build without a buffer."""
import numpy as np
import pytest

import test_firmware_engine as eng
import test_firmware_faults as faults
from lutzip.board.driver import Board
from lutzip.errors import UnsupportedError
from lutzip.firmware.engine import proto_engine as pe
from lutzip.firmware.engine.sim_engine import EngineSim, SimSerial
from lutzip.link import protocol as link

PARAMS = dict(faults.PARAMS, REPLAY_WORDS=512)


@pytest.fixture(scope="module")
def sim():
    """One replay-build engine for the module (MyHDL elaboration takes seconds); each test resets it."""
    s = EngineSim(**PARAMS)
    yield s
    s.close()


def _names(inst):
    out = []
    for s in inst.subs:
        out.append(s.name)
        if hasattr(s, "subs"):
            out += _names(s)
    return out


def test_buffer_size_is_checked_and_0_builds_no_replay_unit():
    for bad in (100, 128, 3000, 1 << 23):
        with pytest.raises(UnsupportedError, match="REPLAY_WORDS"):
            pe.proto_engine(**pe.ports(), core=pe.get_core("stub"), REPLAY_WORDS=bad)
    plain = _names(pe.proto_engine(**pe.ports(), core=pe.get_core("stub")))
    assert not any("replay" in n for n in plain) and any("frame_rx" in n for n in plain)
    rp = _names(pe.proto_engine(**pe.ports(), core=pe.get_core("stub"), REPLAY_WORDS=256))
    assert {"replay_unit0", "frame_rx0", "resp_framer0"} <= {n.rstrip("_0123456789") + "0" for n in rp}


def test_identify_reports_version_2_and_the_buffer(sim):
    ident = link.parse_ident(eng.one(sim, link.encode_frame(link.IDENTIFY), link.IDENT))
    assert (ident.version, ident.replay_words, ident.ring_depth, ident.clk_hz) == (2, 512, 64, 50_000_000)


def test_replay_run_is_bit_exact_with_consistent_counters(sim):
    c, a = eng._container(n=400, stripe=200)
    t = c.tensors[0]
    b = Board(serial=SimSerial(sim), timeout=60, rto=10, max_payload=128)
    stripes = list(c.stripes(t))
    v = b.replay_piece(c.tables[0], stripes, 3)
    want = link.words_crc(a.view(np.uint16), 16)
    assert v["crc_first"] == v["crc_last"] == want and v["bad_passes"] == 0 and v["passes"] == 3
    assert v["words"] == 3 * 400 and v["stripes"] == 3 * len(stripes) and v["decode_errors"] == 0
    assert v["words"] <= v["busy"] <= v["cycles"] <= v["words"] + 40     # back to back: fill once, no gaps
    # the link still works after the run: a BARRIER answers with the counters, which saw the run's words
    cn = b.read_counters()
    assert cn["words"] == 3 * 400 and cn["link_errors"] == 0


def test_version_1_frames_behave_as_without_the_buffer(sim):
    eng.test_sequencing_nack_dup_and_malformed(sim)


def test_malformed_frames_on_the_replay_build(sim):
    faults.reset(sim)
    for ftype, payload in faults.BAD_OTHERS:
        fr = faults.answer(sim, link.encode_frame(ftype, 1, payload), link.NACK)
        assert link.parse_ack(fr)[:2] == (1, 4), (ftype, payload)
        faults.reset(sim)
    for payload in (np.array([510, 1, 2, 3], "<u4").tobytes(), b"\0\0\0\0"):
        fr = faults.answer(sim, link.encode_frame(link.REPLAY_LOAD, 1, payload), link.NACK)
        assert link.parse_ack(fr)[:2] == (1, 4)
        faults.reset(sim)
    for n, k in ((0, 1), (513, 1), (4, 0)):
        fr = faults.answer(sim, link.encode_frame(link.REPLAY_RUN, 1, link.RUN_STRUCT.pack(n, k)), link.NACK)
        assert link.parse_ack(fr)[:2] == (1, 4), (n, k)
        faults.reset(sim)
    # the refused run's first word was rolled back: a BARRIER is answered at once, nothing ran
    fr = faults.frames(sim, link.encode_frame(link.BARRIER, 1))
    assert [f.type for f in fr] == [link.ACK, link.COUNTERS]
    assert link.parse_counters(fr[1])["busy"] == 0


def test_replay_range_checks_at_their_bounds(sim):
    """The range checks of REPLAY_LOAD (offset + words <= REPLAY_WORDS) and REPLAY_RUN (1 .. REPLAY_WORDS words)
    at their bounds and with the high bits of the offset / word count set (frame_rx splits each check at a bit:
    an OR of the bits above, a short sum / compare of the bits below)."""
    def load(offset, words):
        return link.encode_frame(link.REPLAY_LOAD, 1, np.array([offset] + [7] * words, "<u4").tobytes())

    for offset, words, ok in ((509, 3, True), (511, 1, True), (0, 31, True), (510, 3, False), (512, 1, False),
                              (1023, 1, False), (1024, 1, False), (1 << 16, 1, False), (1 << 31, 2, False),
                              (0xFFFFFFFF, 1, False), (0xFFFFFE00, 1, False)):
        faults.reset(sim)
        fr = faults.answer(sim, load(offset, words), link.ACK if ok else link.NACK)
        assert link.parse_ack(fr)[:2] == ((2, 0) if ok else (1, 4)), (offset, words)
    for n in (1025, 1024 + 512, 1 << 16, (1 << 31) + 1, 0xFFFFFFFF):
        faults.reset(sim)
        fr = faults.answer(sim, link.encode_frame(link.REPLAY_RUN, 1, link.RUN_STRUCT.pack(n, 1)), link.NACK)
        assert link.parse_ack(fr)[:2] == (1, 4), n
    faults.reset(sim)
