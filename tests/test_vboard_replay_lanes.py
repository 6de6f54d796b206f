"""Replay through the N-lane decoder (docs/PROTOCOL.md, section 6.1): a board built with ``LANES`` = 4 replays
from one buffer region per lane through the N-lane core; every pass's CRC is checked against the software
decoder and the rate is ``LANES`` words per cycle. Verilator (the fast-mode virtual board with ``LANES=4``).
"""
import shutil

import numpy as np
import pytest

from lutzip.board.base import BoardError
from lutzip.board.uart import UartBoard
from lutzip.board.verify import format_replay, lane_sequence, replay_container
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import UnsupportedError
from lutzip.link import protocol as link

needs_verilator = pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
pytestmark = [pytest.mark.timeout(1800)]

LANES = 4


@pytest.fixture(scope="module")
def vboard():
    if shutil.which("verilator") is None:
        pytest.skip("verilator not installed")
    from lutzip.vboard import VirtualBoard
    vb = VirtualBoard(mode="fast", params={"LANES": LANES}).start()
    yield vb
    vb.stop()


def _digits():
    """The bundled digits CNN, int16-quantised (a real model)."""
    from lutzip.bench import load_model
    from lutzip.weights.quantize import prepare
    _, arrays = load_model("digits")
    prep, attrs = prepare(arrays, quantize="int16", skip_unsupported=True)
    return ct.from_bytes(ct.to_bytes(codec.compress(prep, attrs=attrs)))


def _one_tensor(n=6000, seed=4, stripe_len=1024):
    a = np.rint(np.random.default_rng(seed).laplace(0, 25, n)).astype(np.int16)
    return ct.from_bytes(ct.to_bytes(codec.compress({"w": a}, stripe_len=stripe_len)))


@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 7, 8])
@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_lane_sequence_gives_every_lane_every_stripe_once(p, n):
    seq = lane_sequence(p, n)
    assert len(seq) % n == 0
    for j in range(n):
        mine = seq[j::n]                                  # the decoder's "rr" rule: position i -> lane i mod n
        assert sorted(mine) == list(range(p)), (j, mine)
    assert lane_sequence(p, 1) == list(range(p))


def test_ident_reports_the_lanes_in_flags_bits_7_6():
    from lutzip.firmware.engine.resp_framer import ident_flags
    for states in (1, 2):
        for lanes in (1, 2, 4, 8):
            idn = link.Ident(2, 8, 16, 4096, 4096, 1024, 125_000_000, 0, 65536, 100_000_000, states,
                             lanes=lanes)
            flags = link.ident_flags(idn)
            assert flags == ident_flags(states, LANES=lanes)
            back = link.parse_ident(link.FrameParser().feed(
                link.encode_frame(link.IDENT, 0, link.encode_ident(idn), flags=flags))[0])
            assert (back.states, back.lanes) == (states, lanes)
    assert ident_flags(1) == 0 and ident_flags(1, LANES=4) == 0x80 and ident_flags(2, LANES=8) == 0xC1
    assert ident_flags(2, 1, 512, 1) == 0x4 | 4 << 3 | 1     # the row-stream fields below bits 7..6


def test_lanes_parameter_is_checked():
    from lutzip.firmware.engine import proto_engine as pe
    stub = pe.get_core("stub")
    for bad, kw in ((3, {"REPLAY_WORDS": 4096}), (2, {}), (True, {"REPLAY_WORDS": 4096}),
                    (0, {"REPLAY_WORDS": 4096}), ("4", {"REPLAY_WORDS": 4096})):
        with pytest.raises(UnsupportedError, match="LANES|REPLAY_WORDS"):
            pe.proto_engine(**pe.ports(), core=stub, LANES=bad, **kw)


def test_a_lane_region_is_in_as_few_banks_as_the_block_rams_allow():
    """Each bank is two block RAMs whatever its depth: a region of <= 1 K words is one bank (2 DP16KD, not 8 banks
    of 16), 2 K .. 8 K words 2 .. 8 banks of 1024 in one OR group, more in groups of 8 (as ``replay_unit``)."""
    from lutzip.firmware.engine.replay_feed import feed_banks
    assert feed_banks(32) == (32, 1, 1) and feed_banks(1024) == (1024, 1, 1)
    assert feed_banks(2048) == (1024, 2, 2) and feed_banks(8192) == (1024, 8, 8)
    assert feed_banks(16384) == (1024, 16, 8) and feed_banks(65536) == (1024, 64, 8)


class _Built(Exception):
    pass


def test_board_build_with_lanes_takes_the_registry_lanes_build(tmp_path):
    """``board build --lanes 4`` on the ULX3S: the registry's lanes parameters over the board's (STATES 1, MIRROR 0,
    LUT3_DEPTH 2048, a 512-entry ring, 1024 lane rows, a 4 K-word buffer), the caller's over both; without
    ``LANES`` the board's defaults as before."""
    from lutzip.firmware.boards import build as fb
    seen = []

    def top(*ports, **kw):          # a stand-in uart_top that records its parameters and stops the build
        seen.append(kw)
        raise _Built

    for extra in ({"LANES": 4}, {"LANES": 4, "LANES_ROWS": 512, "STATES": 2}, {}):
        with pytest.raises(_Built):
            fb.build("ulx3s", out=tmp_path, top=top, pack=False, **extra)
    four, mine, plain = seen
    assert four["LANES"] == 4 and four["LUT3_DEPTH"] == 2048 and four["REPLAY_WORDS"] == 4096
    assert (four["STATES"], four["MIRROR"], four["RING_DEPTH"], four["LANES_ROWS"]) == (1, 0, 512, 1024)
    assert (mine["LANES_ROWS"], mine["STATES"], mine["LUT3_DEPTH"]) == (512, 2, 2048)
    assert "LANES" not in plain and "LANES_ROWS" not in plain and "RING_DEPTH" not in plain
    assert (plain["LUT3_DEPTH"], plain["REPLAY_WORDS"], plain["STATES"], plain["MIRROR"]) == (4096, 32768, 2, 1)


def test_the_board_flow_marks_the_lane_buffers_no_rw_check(tmp_path):
    from lutzip.firmware.boards.build import mark_no_rw_check
    v = tmp_path / "t.v"
    v.write_text("reg [68:0] top_replay_lanes0_decoder_lanes0_decoder_lane2_lane_buffer2_mem [0:1024-1];\n"
                 "reg [68:0] top_lane_buffer_mem_x [0:3];\n")
    assert mark_no_rw_check(v) == 1
    assert v.read_text().startswith("(* no_rw_check *)\nreg [68:0] top_replay_lanes0")


@needs_verilator
def test_replay_on_4_lanes_is_bit_exact_at_4_words_per_cycle(vboard):
    """The digits CNN's largest tensor (a real model), 32 passes through 4 lanes: CRCs, counters and the rate
    (>= 0.99 x LANES words per cycle: cycle counts of the simulated chip, deterministic, not wall time). The
    passes amortise the N-lane decoder's one-time output lag at a run's start (docs/CORE.md 6.5: about 3/4 of a
    stripe's length in cycles with 4 lanes; 4 passes of this tensor give 3.82 words per cycle)."""
    d = _digits()
    big = max((t for t in d.tensors if t.numel), key=lambda t: t.numel)
    with UartBoard(vboard.port, timeout=60, simulated=True) as b:
        info = b.identify()
        assert info.lanes == LANES and info.replay_words == 65536
        r = replay_container(b, d, 32, names={big.name})
    t = r["tensors"][0]
    print("\n" + format_replay(r))
    assert r["ok"] and r["lanes"] == LANES and t["weights"] == big.numel
    assert r["words"] == 32 * LANES * big.numel and r["busy"] <= r["cycles"]
    assert r["weights_per_cycle"] >= 0.99 * LANES, r["weights_per_cycle"]


@needs_verilator
def test_every_tensor_of_a_model_and_uneven_stripes_replay_bit_exact(vboard):
    """All tensors of the digits CNN (one-stripe tensors among them) and a tensor whose last stripe is short,
    in pieces smaller than a lane's region: every pass's CRC is the software decoder's."""
    d = _digits()
    c = _one_tensor(7000, stripe_len=1024)                  # 7 stripes, the last 856 weights
    longest = max(len(st) for st in c.stripes(c.stream_of(c.tensors[0])))
    with UartBoard(vboard.port, timeout=60, simulated=True) as b:
        r = replay_container(b, d, 2)
        assert r["ok"] and r["words"] == 2 * LANES * sum(t.numel for t in d.tensors if t.numel)
        r = replay_container(b, c, 3, capacity=LANES * 3 * longest)     # pieces of <= 3 stripes
        row = r["tensors"][0]
        assert r["ok"] and row["pieces"] >= 3 and row["weights"] == 7000 and r["words"] == 3 * LANES * 7000


class _Corrupting:
    """A board whose replay buffer gets one payload word changed in one stripe (what a faulty pass looks like to
    the host: the software decoder's CRC is of the good stripes)."""

    def __init__(self, board, flip):
        self.board, self.flip = board, flip

    def __getattr__(self, name):
        return getattr(self.board, name)

    def replay_piece(self, tables, stripes, passes, **kw):
        bad = [st.copy() for st in stripes]
        bad[1][self.flip] ^= np.uint32(0x5A5A5A5A)
        return self.board.replay_piece(tables, bad, passes, **kw)


@needs_verilator
def test_a_corrupted_pass_is_reported_not_ok(vboard):
    c = _one_tensor()
    with UartBoard(vboard.port, timeout=60, simulated=True) as b:
        b.identify()
        good = replay_container(b, c, 2)
        assert good["ok"]
        for flip in (200, -1):                              # a payload word, the stripe's last word
            r = replay_container(_Corrupting(b, flip), c, 2)
            assert not r["ok"] and r["tensors"][0]["detail"], r
            assert "REPLAY: FAIL" in format_replay(r)
        assert replay_container(b, c, 2)["ok"]              # and the board is fine afterwards


@needs_verilator
def test_a_layout_against_the_rule_ends_by_the_watchdog_and_the_board_recovers(vboard):
    """Lane 0 gets two stripes, the other lanes one: the lane order waits for a stripe lane 1 never gets. The run
    ends (no hang), its passes bad; the next replay passes."""
    c = _one_tensor()
    t = c.tensors[0]
    stripes = list(c.stripes(c.stream_of(t)))
    with UartBoard(vboard.port, timeout=60, simulated=True) as b:
        info = b.identify()
        region = info.replay_words // LANES
        with pytest.raises(BoardError, match="multiple of 4"):
            b.replay_piece(c.tables[t.table], stripes[:5], 2)
        frames = b.table_frames(c.tables[t.table])
        for j, mine in enumerate([stripes[0:2], stripes[2:3], stripes[3:4], stripes[4:5]]):
            frames += [(link.REPLAY_LOAD, p, f)
                       for p, f in link.replay_load_payloads(mine, j * region, b._payload_limit())]
        frames.append((link.REPLAY_RUN, link.run_payload(100, 3), 0))
        box = {}

        def on_frame(fr):
            assert fr.type == link.REPLAY_DONE
            box["r"] = link.parse_replay(fr)
            return True

        b.reset(False)
        b.session.exchange(frames, on_frame, lambda: "r" in box, missing=lambda: "REPLAY_DONE")
        v = box["r"]
        assert v["passes"] + v["bad_passes"] >= 3 and v["passes"] < 3, v
        assert replay_container(b, c, 2)["ok"]


@needs_verilator
def test_cli_stream_replay_json_on_4_lanes(vboard, tmp_path, capsys):
    """``lutzip stream FILE --replay K --json`` on the 4-lane board: key ``replay`` with ok, weights_per_cycle,
    weights_per_s and the lanes; the streamed words (the single-lane path) are checked as always."""
    import json

    from lutzip import cli
    c = _one_tensor(5000, stripe_len=1024)
    path = tmp_path / "x.lutz"
    ct.write(path, c)
    assert cli.main(["stream", str(path), "--port", vboard.port, "--replay", "8", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    rp = r["replay"]
    assert r["ok"] and rp["ok"] and rp["lanes"] == LANES and rp["words"] == 8 * LANES * 5000
    assert LANES * 0.8 < rp["weights_per_cycle"] <= LANES and rp["weights_per_s"] > 0
    assert cli.main(["stream", str(path), "--port", vboard.port, "--replay", "2"]) == 0
    out = capsys.readouterr().out
    assert "on 4 lanes" in out and "REPLAY: PASS" in out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
def test_replay_on_2_lanes_on_the_ghdl_virtual_board_runs_the_vhdl():
    """The converted VHDL of the 2-lane replay unit (GHDL virtual board, single clock domain, 4 K-word buffer)."""
    from lutzip.vboard import VirtualBoard
    c = _one_tensor(3000, stripe_len=1024)
    params = {"REPLAY_WORDS": 4096, "RING_DEPTH": 1024, "LANES": 2, "LANES_ROWS": 256}
    with VirtualBoard(hdl="vhdl", mode="fast", params=params) as vb:
        with UartBoard(vb.port, timeout=300, simulated=True) as b:
            assert b.identify().lanes == 2
            r = replay_container(b, c, 2)
    assert r["ok"] and r["lanes"] == 2 and r["words"] == 2 * 2 * 3000 and r["busy"] <= r["cycles"]


@pytest.mark.slow
@needs_verilator
def test_the_ulx3s_lanes_build_replays_at_4_words_per_cycle_in_one_bank_regions():
    """The ULX3S 4-lane build's parameters (the registry's ``lanes_params``: 1024 words per lane, one bank of two
    block RAMs each; 1024 lane rows; STATES 1, LUT3_DEPTH 2048, a 512-entry ring) on the Verilator virtual board:
    the int8 digits CNN (real model, default 4096-weight stripes, each a piece of its own) bit-exact, 32 passes at
    >= 0.97 x 4 words per cycle (the N-lane decoder's start lag is paid once per piece; 3.91 measured)."""
    from lutzip.bench import load_model
    from lutzip.firmware.boards.registry import get_board
    from lutzip.vboard import VirtualBoard
    from lutzip.weights.quantize import prepare
    params = dict(get_board("ulx3s").lanes_params[LANES], LANES=LANES)
    _, arrays = load_model("digits")
    prep, attrs = prepare(arrays, quantize="int8", skip_unsupported=True)
    d = ct.from_bytes(ct.to_bytes(codec.compress(prep, attrs=attrs)))
    big = max((t for t in d.tensors if t.numel), key=lambda t: t.numel)
    with VirtualBoard(mode="fast", params=params) as vb:
        with UartBoard(vb.port, timeout=300, simulated=True) as b:
            info = b.identify()
            assert info.lanes == LANES and info.replay_words == 4096 and info.states == 1
            r = replay_container(b, d, 32, names={big.name})
            assert r["ok"] and not r["skipped"] and r["tensors"][0]["pieces"] == 4, r
            assert r["words"] == 32 * LANES * big.numel and r["weights_per_cycle"] >= 0.97 * LANES, r
            r = replay_container(b, d, 2)
            assert r["ok"] and r["words"] == 2 * LANES * sum(t.numel for t in d.tensors if t.numel)
