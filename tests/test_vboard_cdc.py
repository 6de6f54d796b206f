"""The virtual board's two clock domains (docs/PROTOCOL.md, section 7): the byte link at CLK_HZ, the engine,
replay unit and decoder core at CORE_CLK_HZ (the harness is the PLL's model). The default fast-mode board is
two-domain (100 : 125 MHz), so tests/test_vboard*.py run on it; here: what says so, and replay at the core
clock -- bit-exact, >= 0.99 words per core cycle on a real model tensor. ``-m slow``: a core clock slower than
the link (100 : 40 MHz) with a stream and a replay.
"""
import shutil

import numpy as np
import pytest

from lutzip.board.uart import UartBoard
from lutzip.board.verify import replay_container, stream_container
from lutzip.codec import arrays as codec
from lutzip.vboard import base
from test_vboard_replay import _digits

needs_verilator = pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
pytestmark = [pytest.mark.timeout(900)]


def test_default_fast_board_is_two_domain():
    p = base.DEFAULT_PARAMS["fast"]
    assert base.two_domains("fast", p) and p["CORE_CLK_HZ"] != p["CLK_HZ"]
    assert not base.two_domains("fast", dict(p, CORE_CLK_HZ=p["CLK_HZ"]))      # equal clocks: one domain
    assert not base.two_domains("pin", base.DEFAULT_PARAMS["pin"])
    with pytest.raises(base.VBoardError):
        base.two_domains("pin", dict(base.DEFAULT_PARAMS["pin"], CORE_CLK_HZ=10_000_000))
    assert base.clock_ps(100_000_000) == 10_000 and base.clock_ps(125_000_000) == 8_000


def _replay_rate(params):
    from lutzip.vboard import VirtualBoard
    digits = _digits()
    big = max((t for t in digits.tensors if t.numel), key=lambda t: t.numel)
    with VirtualBoard(mode="fast", params=params) as vb, UartBoard(vb.port, timeout=30, simulated=True) as b:
        ident = b.identify()
        r = replay_container(b, digits, 4, names={big.name})
    return ident, big, r


@needs_verilator
def test_replay_on_the_two_domain_board_is_bit_exact_at_the_core_rate():
    ident, big, r = _replay_rate(None)
    core_hz = base.DEFAULT_PARAMS["fast"]["CORE_CLK_HZ"]
    assert ident.clk_hz == core_hz                    # IDENT CLK_HZ: the clock the counters count
    assert ident.link_clk_hz == base.DEFAULT_PARAMS["fast"]["CLK_HZ"]      # and the link's (24-byte IDENT)
    assert "core at 125 MHz" in ident.link_text()
    assert r["ok"] and r["words"] == 4 * big.numel and r["busy"] <= r["cycles"]
    print(f"\ntwo-domain virtual board (link 100 MHz, core {core_hz / 1e6:g} MHz): {big.name} x 4 passes "
          f"{r['weights_per_cycle']:.4f} words per core cycle")
    assert r["weights_per_cycle"] >= 0.99             # simulated core cycles: deterministic, not wall time


@needs_verilator
@pytest.mark.slow
def test_core_slower_than_the_link():
    ident, big, r = _replay_rate({"CORE_CLK_HZ": 40_000_000})
    assert ident.clk_hz == 40_000_000 and r["ok"] and r["weights_per_cycle"] >= 0.99
    from lutzip.vboard import VirtualBoard
    rng = np.random.default_rng(8)
    c = codec.compress({"w": np.rint(rng.laplace(0, 30, 200_000)).astype(np.int16)})
    with VirtualBoard(mode="fast", params={"CORE_CLK_HZ": 40_000_000}) as vb, \
            UartBoard(vb.port, timeout=30, simulated=True) as b:
        s = stream_container(b, c, "full", progress=False)
    assert s["ok"]


def test_ident_with_and_without_the_link_clock():
    from lutzip.link import protocol as link
    i1 = link.Ident(2, 8, 16, 4096, 4096, 1024, 125_000_000, 0, 65536)
    i2 = link.Ident(2, 8, 16, 4096, 4096, 1024, 125_000_000, 0, 65536, 100_000_000)
    p1, p2 = link.encode_ident(i1), link.encode_ident(i2)
    assert (len(p1), len(p2)) == (20, 24)
    assert link.parse_ident(link.Frame(link.IDENT, 0, 0, p1)) == i1
    assert link.parse_ident(link.Frame(link.IDENT, 0, 0, p2)) == i2
    for bad in (p1[:19], p2 + b"\0", p1 + b"\0\0"):
        with pytest.raises(link.ProtocolError):
            link.parse_ident(link.Frame(link.IDENT, 0, 0, bad))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
def test_ghdl_two_domain_board_runs_the_vhdl():
    """GHDL on the converted VHDL of proto_engine_cdc (the bench drives both clocks, 100 : 125 MHz)."""
    from lutzip.vboard import VirtualBoard
    rng = np.random.default_rng(3)
    c = codec.compress({"w": np.rint(rng.laplace(0, 20, 3000)).astype(np.int16)}, stripe_len=512)
    with VirtualBoard(hdl="vhdl", mode="fast", params={"CORE_CLK_HZ": 125_000_000}) as vb, \
            UartBoard(vb.port, timeout=60, simulated=True) as b:
        ident = b.identify()
        s = stream_container(b, c, "full", progress=False)
        r = replay_container(b, c, 2)
    assert (ident.clk_hz, ident.link_clk_hz) == (125_000_000, 100_000_000)
    assert s["ok"] and r["ok"] and r["words"] == 2 * 3000


@needs_verilator
@pytest.mark.slow
def test_equal_clocks_build_the_single_domain_engine():
    from lutzip.vboard import VirtualBoard
    with VirtualBoard(mode="fast", params={"CORE_CLK_HZ": 100_000_000}) as vb, \
            UartBoard(vb.port, timeout=30, simulated=True) as b:
        ident = b.identify()
    assert (ident.clk_hz, ident.link_clk_hz) == (100_000_000, 0)     # 20-byte IDENT: one domain
