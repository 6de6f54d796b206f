"""Row streams (format version 6) on a board built with ``MIRROR=1`` and replay lanes (``LANES`` = 2): IDENT reports
both, the replay through the N-lane decoder (docs/PROTOCOL.md section 6.1, docs/CORE.md section 6.8) is bit-exact
against the software decoder on every pass, and the rate is ``LANES`` words per cycle; the streaming path (the
single-lane core) decodes the same file. Verilator (the fast-mode virtual board)."""
import shutil

import numpy as np
import pytest

import lutzip
from lutzip.board.uart import UartBoard
from lutzip.board.verify import format_replay, replay_container, stream_container
from lutzip.codec import container as ct

pytestmark = [pytest.mark.timeout(2400)]

LANES = 2


def _basis(R=48, N=256):
    """A Hann-windowed DFT basis as silero-vad's STFT (cosine rows symmetric, sine rows antisymmetric), int16."""
    n = np.arange(N // 2 + 1)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * n / N)
    out = np.zeros((R, N), dtype=np.int16)
    for k in range(R):
        half = np.round(w * (np.cos if k % 2 == 0 else np.sin)(2 * np.pi * (k // 2) * n / N) * 20000)
        half = half.astype(np.int16)
        out[k, :N // 2 + 1] = half
        out[k, N // 2 + 1:] = (1 if k % 2 == 0 else -1) * half[1:N // 2][::-1]
    return out


@pytest.fixture(scope="module")
def vboard():
    if shutil.which("verilator") is None:
        pytest.skip("verilator not installed")
    from lutzip.vboard import VirtualBoard
    vb = VirtualBoard(mode="fast", params={"LANES": LANES, "MIRROR": 1}).start()
    yield vb
    vb.stop()


def test_row_stream_replays_on_lanes_bit_exact(vboard):
    rng = np.random.default_rng(2)
    weights = {"basis": _basis(), "other": rng.integers(-300, 300, 3000).astype(np.int16)}
    c = ct.from_bytes(lutzip.compress(weights))
    rows = [s for s in c.streams if s.rows]
    assert rows                                              # the basis is a row stream
    with UartBoard(vboard.port, timeout=60, simulated=True) as b:
        info = b.identify()
        assert info.lanes == LANES and info.mirror == 1
        r = replay_container(b, c, 16)
        print("\n" + format_replay(r))
        assert r["ok"], r
        assert r["words"] == 16 * LANES * sum(t.numel for t in c.tensors)
        basis = next(t for t in r["tensors"] if "basis" in t["name"])
        assert basis["weights_per_cycle"] >= 0.95 * LANES, basis
        # the streaming path (the board's single-lane core) decodes the same file
        rep = stream_container(b, c)
        assert rep["ok"], rep["first_mismatch"]
