"""The replay buffer (docs/PROTOCOL.md, section 6) on the virtual board: the core decodes stripes K times back
to back from block RAM at its own clock; every pass's CRC is checked against the software decoder.

Verilator (fast mode, the default virtual board) in the default run; GHDL on the converted VHDL as a slow test.
"""
import json
import shutil

import numpy as np
import pytest

from lutzip import cli
from lutzip.board.base import BoardError
from lutzip.board.uart import UartBoard
from lutzip.board.verify import expected_words, replay_container, replay_pieces
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.link import protocol as link

needs_verilator = pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
pytestmark = [pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def vboard():
    if shutil.which("verilator") is None:
        pytest.skip("verilator not installed")
    from lutzip.vboard import VirtualBoard
    vb = VirtualBoard(mode="fast").start()
    yield vb
    vb.stop()


def _digits():
    """The bundled digits CNN, int16-quantised (a real model: 4 tensors)."""
    from lutzip.bench import load_model
    from lutzip.weights.quantize import prepare
    _, arrays = load_model("digits")
    prep, attrs = prepare(arrays, quantize="int16", skip_unsupported=True)
    return ct.from_bytes(ct.to_bytes(codec.compress(prep, attrs=attrs)))


@pytest.fixture(scope="module")
def digits():
    return _digits()


def _one_tensor(n=20000, seed=4, stripe_len=2048):
    a = np.rint(np.random.default_rng(seed).laplace(0, 25, n)).astype(np.int16)
    return ct.from_bytes(ct.to_bytes(codec.compress({"w": a}, stripe_len=stripe_len)))


def test_pieces_are_stripe_aligned_and_fit():
    stripes = [np.zeros(n, np.uint32) for n in (5, 7, 3, 9, 2, 12)]
    assert replay_pieces(stripes, 12) == [(0, 2), (2, 4), (4, 5), (5, 6)]
    assert replay_pieces(stripes, 100) == [(0, 6)]
    assert replay_pieces(stripes, 4) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6)]   # too big: alone


def test_load_payloads_mark_stripe_ends():
    st = [np.arange(5, dtype=np.uint32), np.arange(3, dtype=np.uint32)]
    got = link.replay_load_payloads(st, 10, 4 + 8)          # two words per frame
    offs = [int(np.frombuffer(p[:4], "<u4")[0]) for p, _ in got]
    assert offs == [10, 12, 14, 15, 17] and [f for _, f in got] == [0, 0, 1, 0, 1]
    assert b"".join(p[4:] for p, _ in got) == b"".join(s.astype("<u4").tobytes() for s in st)


@needs_verilator
def test_replay_is_bit_exact_and_counts_agree(vboard, digits):
    """Every pass's CRC is the software decoder's; words and stripes are passes x the piece's; busy <= cycles."""
    with UartBoard(vboard.port, timeout=20, simulated=True) as b:
        assert b.identify().replay_words == 65536
        r = replay_container(b, digits, 3)
    assert r["ok"], r
    weights = sum(t.numel for t in digits.tensors if t.numel)
    assert r["words"] == 3 * weights and r["busy"] <= r["cycles"]
    for t in r["tensors"]:
        assert t["ok"] and t["pieces"] >= 1 and t["busy"] <= t["cycles"]


@needs_verilator
def test_replay_rate_on_a_real_model_tensor(vboard, digits):
    """The core's rate from the buffer on the digits CNN's largest tensor (printed); checks the CRCs and
    the counters (words == expected, busy <= cycles), not a timing."""
    big = max((t for t in digits.tensors if t.numel), key=lambda t: t.numel)
    with UartBoard(vboard.port, timeout=20, simulated=True) as b:
        r = replay_container(b, digits, 8, names={big.name})
    t = r["tensors"][0]
    assert r["ok"] and t["weights"] == big.numel and r["words"] == 8 * big.numel
    assert r["busy"] <= r["cycles"]
    print(f"\nreplay on the virtual board: {big.name} ({big.numel} weights x 8 passes): "
          f"{r['weights_per_cycle']:.4f} weights/cycle ({r['weights_per_busy_cycle']:.4f} per busy cycle) = "
          f"{r['weights_per_s'] / 1e6:.1f} M weights/s at {r['clk_hz'] / 1e6:g} MHz")
    assert r["weights_per_cycle"] >= 0.99      # cycle counts of the simulated chip: deterministic, not wall time


@needs_verilator
def test_garbage_in_the_buffer_is_an_error_and_the_next_replay_passes(vboard):
    c = _one_tensor()
    t = c.tensors[0]
    stripes = list(c.stripes(c.stream_of(t)))
    tables = c.tables[t.table]
    bad = [st.copy() for st in stripes[:3]]
    bad[1][0] ^= 0x00010000                 # break stripe 1's header marker
    bad[2][3:] = 0xFFFFFFFF                 # and stripe 2's payload
    with UartBoard(vboard.port, timeout=20, simulated=True) as b:
        b.identify()
        v = b.replay_piece(tables, bad, 4)
        assert v["passes"] == 4 and v["decode_errors"] >= 4 and v["first_error"] != 0
        assert v["stripes"] == 4 * 3 and v["bad_passes"] == 0 and v["busy"] <= v["cycles"]
        # a buffer ending inside a stripe (no tlast loaded): the run still ends (the last word ends each pass)
        cut = [stripes[0][: len(stripes[0]) // 2]]
        v = b.replay_piece(tables, cut, 2)
        assert v["passes"] == 2 and v["decode_errors"] == 2
        r = replay_container(b, c, 2)
    assert r["ok"] and r["words"] == 2 * t.numel


@needs_verilator
def test_a_tensor_larger_than_the_buffer_goes_in_stripe_aligned_pieces(vboard):
    c = _one_tensor(30000, seed=6, stripe_len=1024)          # 30 stripes, the last one short
    t = c.tensors[0]
    longest = max(len(st) for st in c.stripes(c.stream_of(t)))
    with UartBoard(vboard.port, timeout=20, simulated=True) as b:
        r = replay_container(b, c, 3, capacity=3 * longest)
        row = r["tensors"][0]
        assert r["ok"] and row["pieces"] >= 10 and row["weights"] == t.numel and r["words"] == 3 * t.numel
        assert not r["skipped"] and r["busy"] <= r["cycles"]
        # a buffer smaller than a stripe: that stripe is skipped (listed), the others are replayed
        r = replay_container(b, c, 1, capacity=longest - 1)
        n_big = sum(len(st) > longest - 1 for st in c.stripes(c.stream_of(t)))
        assert len(r["skipped"]) == n_big >= 1 and r["ok"] and r["tensors"][0]["weights"] < t.numel


@needs_verilator
def test_malformed_replay_frames_are_nacked(vboard):
    c = _one_tensor(3000)
    stripes = list(c.stripes(c.stream_of(c.tensors[0])))
    with UartBoard(vboard.port, timeout=10, simulated=True) as b:
        cap = b.identify().replay_words
        s = b.session
        for ftype, payload in ((link.REPLAY_LOAD, np.array([cap - 1, 1, 2], "<u4").tobytes()),  # past the end
                               (link.REPLAY_LOAD, b"\0\0\0\0"),                             # no word
                               (link.REPLAY_RUN, link.RUN_STRUCT.pack(0, 1)),                # 0 words
                               (link.REPLAY_RUN, link.RUN_STRUCT.pack(cap + 1, 1)),          # > buffer
                               (link.REPLAY_RUN, link.RUN_STRUCT.pack(4, 0)),                # 0 passes
                               (link.REPLAY_RUN, b"\1\0\0\0")):                             # short
            b.reset()
            with pytest.raises(BoardError, match="malformed"):
                s.exchange([(ftype, payload, 0)], b._unexpected)
        # the board still works
        v = b.replay_piece(c.tables[0], stripes, 2)
        exp = expected_words(c, c.tensors[0])
        assert v["crc_first"] == v["crc_last"] == link.words_crc(exp, 16) and v["bad_passes"] == 0


@needs_verilator
def test_cli_stream_replay_json(vboard, digits, tmp_path, capsys):
    path = tmp_path / "d.lutz"
    ct.write(path, digits)
    assert cli.main(["stream", str(path), "--port", vboard.port, "--replay", "2", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    rp = r["replay"]
    assert r["ok"] and rp["ok"] and rp["passes"] == 2
    assert {"ok", "weights_per_cycle", "weights_per_s"} <= set(rp) and rp["weights_per_s"] > 0
    assert all({"ok", "weights_per_cycle", "weights_per_s"} <= set(t) for t in rp["tensors"])
    assert cli.main(["stream", str(path), "--port", vboard.port, "--replay", "2"]) == 0
    out = capsys.readouterr().out
    assert "silicon:" in out and "REPLAY: PASS" in out and "through the link" in out


class _Version1Board:
    """A serial port behind which a protocol-1 board (no replay buffer) answers IDENTIFY."""

    def __init__(self):
        self.rx = bytearray()
        self.parser = link.FrameParser()

    @property
    def in_waiting(self):
        return len(self.rx)

    def write(self, data):
        for fr in self.parser.feed(bytes(data)):
            if fr.type == link.IDENTIFY:
                idn = link.Ident(1, 8, 16, 4096, 512, 1024, 25_000_000, 1_000_000)
                self.rx += link.encode_frame(link.IDENT, 0, link.encode_ident(idn))
        return len(data)

    def read(self, n=1):
        out = bytes(self.rx[:n])
        del self.rx[:n]
        return out

    def close(self):
        pass


def test_board_without_a_buffer_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    """A protocol-1 board (IDENT replay 0): --replay fails at once, one line, no traceback."""
    from lutzip.cli import board as board_cli
    c = _one_tensor(500, stripe_len=256)
    path = tmp_path / "x.lutz"
    ct.write(path, c)
    with UartBoard(None, serial=_Version1Board(), timeout=5) as b:
        assert b.identify().replay_words == 0 and b.info.version == 1
        with pytest.raises(BoardError, match="no replay buffer"):
            replay_container(b, c, 2)
        with pytest.raises(BoardError, match="no replay buffer"):
            b.replay_piece(c.tables[0], list(c.stripes(c.stream_of(c.tensors[0]))), 2)
    monkeypatch.setattr(board_cli, "_open_board",
                        lambda args, **kw: UartBoard(None, serial=_Version1Board(), timeout=5))
    rc = cli.main(["stream", str(path), "--port", "x", "--replay", "3"])
    err = capsys.readouterr().err
    assert rc == 2 and "no replay buffer" in err and len(err.strip().splitlines()) == 1
    rc = cli.main(["stream", str(path), "--port", "loop://", "--replay", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and "--replay" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
def test_replay_on_the_ghdl_virtual_board_runs_the_vhdl():
    from lutzip.vboard import VirtualBoard
    c = _one_tensor(6000, stripe_len=1024)
    with VirtualBoard(hdl="vhdl", mode="fast", params={"REPLAY_WORDS": 4096, "RING_DEPTH": 1024}) as vb:
        with UartBoard(vb.port, timeout=120, simulated=True) as b:
            assert b.identify().replay_words == 4096
            r = replay_container(b, c, 2)
    assert r["ok"] and r["words"] == 2 * 6000 and r["busy"] <= r["cycles"]


@pytest.mark.slow
@needs_verilator
def test_replay_benchmark_minilm_layer0(vboard):
    """Benchmark (prints): the core's rate from the replay buffer on MiniLM encoder layer 0 (1.77 M weights) as
    int16 75 % pruned (zero runs), bf16 (residual-heavy) and int8 (LUT-heavy); checks CRCs and counters."""
    from lutzip.bench import minilm_path
    from lutzip.cli.board import demo_models
    from lutzip.weights.quantize import prepare
    if minilm_path() is None:
        pytest.skip("all-MiniLM-L6-v2 not installed")
    _, arrays = demo_models("minilm")
    with UartBoard(vboard.port, timeout=60, simulated=True) as b:
        for label, kw in (("int16 75 % pruned", dict(quantize="int16", prune_fraction=0.75)),
                          ("bf16", dict(bf16=True)), ("int8", dict(quantize="int8"))):
            prep, attrs = prepare(arrays, skip_unsupported=True, **kw)
            c = ct.from_bytes(ct.to_bytes(codec.compress(prep, attrs=attrs)))
            r = replay_container(b, c, 4)
            assert r["ok"] and r["busy"] <= r["cycles"]
            assert r["words"] == 4 * sum(t.numel for t in c.tensors if t.numel)
            worst = min(r["tensors"], key=lambda t: t["weights_per_cycle"])
            print(f"\nreplay {label}: {r['words'] // 4} weights x 4 passes, {sum(t['pieces'] for t in r['tensors'])} "
                  f"pieces: {r['weights_per_cycle']:.4f} weights/cycle ({r['weights_per_busy_cycle']:.4f} per busy "
                  f"cycle); slowest tensor {worst['name']} {worst['weights_per_cycle']:.4f}")
