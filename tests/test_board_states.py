"""The board path for two code tables (issue 15): a core built with ``STATES=2`` decodes ``lutzip compress --states
2`` files (format version 5) end to end -- IDENT / PARAMS report ``STATES``, the host loads ``expand_hw(...,
states=board)``, a board with ``STATES=1`` refuses a v5 file in one line, v2-v4 files stream on both.

Default run: the IDENT field (protocol and MyHDL framer), the AXI PARAMS field, the verify layer's refusal, the
virtual board in Verilator (fast mode: STATES=2, the default board; pin mode: STATES=1, the builds the other
virtual-board tests use) through ``lutzip stream`` on the digits CNN, a board that ignores state B failing the same
stream, and the AXI top (simulated PYNQ device, STATES=2 and 1). ``-m slow``: GHDL's VHDL virtual board with a v5
file."""
import dataclasses
import json
import shutil

import numpy as np
import pytest

from lutzip import api, cli
from lutzip.board import base
from lutzip.board import verify as vf
from lutzip.codec import container as ct
from lutzip.errors import UnsupportedError
from lutzip.firmware.axi import regs as R
from lutzip.link import protocol as link
from board_doubles import MemBoard

needs_verilator = pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")


def _digits_bytes(states):
    """The digits CNN, int8, 75 % pruned (18 346 weights): with ``states=2`` a version-5 file whose largest tensor
    (fc1.weight) has two code tables, the small ones one."""
    from lutzip.weights.models import load_digits_cnn
    from lutzip.weights.quantize import prepare
    prep, attrs = prepare(load_digits_cnn(), quantize="int8", prune_fraction=0.75, skip_unsupported=True)
    return api.compress(prep, attrs=attrs, states=states)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("states")
    out = {}
    for states in (1, 2):
        data = _digits_bytes(states)
        c = ct.from_bytes(data)
        two = [s.index for s in c.streams if base.two_tables(c.tables[s.table])]
        if states == 2:
            assert c.version == 5 and two and len(two) < len(c.streams), (c.version, two)
        else:
            assert c.version < 5 and not two
        p = d / f"digits_s{states}.lutz"
        p.write_bytes(data)
        out[states] = (p, c)
    return out


# ------------------------------------------------------------------------------------------ IDENT / PARAMS fields
def test_ident_states_in_header_flags_old_layout_kept():
    for link_hz in (0, 25_000_000):
        one = link.Ident(2, 8, 16, 4096, 4096, 1024, 125_000_000, 0, 65536, link_hz)
        two = dataclasses.replace(one, states=2)
        assert link.ident_flags(one) == 0 and link.ident_flags(two) == 1
        # the payload is the same bytes (length 20 / 24): a host before the field reads every field as before
        assert link.encode_ident(two) == link.encode_ident(one) and len(link.encode_ident(two)) in (20, 24)
        wire = link.encode_frame(link.IDENT, 0, link.encode_ident(two), flags=link.ident_flags(two))
        fr = link.FrameParser().feed(wire)[0]
        assert fr.flags == 1 and link.parse_ident(fr) == two
        old = link.parse_ident(dataclasses.replace(fr, flags=0))      # a board before the field
        assert old == one and old.states == 1
    from lutzip.firmware.engine.resp_framer import ident_flags
    assert ident_flags(1) == 0 and ident_flags(2) == 1


def test_axi_params_states_field():
    w1, w2 = R.params_word(8, 16, 1, 4), R.params_word(8, 16, 1, 4, STATES=2)
    assert w1 == 0x41108                                   # the value of the tops before the field
    assert w2 == w1 | 1 << 20 and R.params_states(w1) == 1 and R.params_states(w2) == 2
    assert {k: R.field("PARAMS", k, w2) for k in ("L", "W", "LANES", "OUT_BYTES")} == \
        {"L": 8, "W": 16, "LANES": 1, "OUT_BYTES": 4}
    from lutzip.firmware.axi.lutzip_axi import check_params
    with pytest.raises(UnsupportedError, match="STATES=2 needs L <= 11"):
        check_params(16, 1, 4, 12, 2)


@pytest.mark.parametrize("states", [pytest.param(1, marks=pytest.mark.slow), 2])   # 1: also the pin-mode test
def test_myhdl_engine_ident_reports_states(states):
    """The protocol engine in MyHDL (real core): its IDENT frame's FLAGS carry STATES - 1, the payload as before."""
    from lutzip.firmware.engine.sim_engine import EngineSim
    s = EngineSim(RING_DEPTH=64, LUT3_DEPTH=256, MAX_PAYLOAD=128, CLK_HZ=50_000_000, STATES=states)
    try:
        fr = link.FrameParser().feed(s.run(link.encode_frame(link.IDENTIFY)))
    finally:
        s.close()
    assert len(fr) == 1 and fr[0].type == link.IDENT and fr[0].flags == states - 1
    idn = link.parse_ident(fr[0])
    assert (idn.states, idn.L, idn.lut3_depth, idn.ring_depth, len(fr[0].payload)) == (states, 8, 256, 64, 20)


def test_stub_core_cannot_build_two_tables():
    from lutzip.firmware.engine import proto_engine as pe
    with pytest.raises(UnsupportedError, match="STATES=2 needs the real decoder core"):
        pe.proto_engine(**pe.ports(), core=pe.get_core("stub"), STATES=2)
    from lutzip.vboard.base import DEFAULT_PARAMS, board_params
    assert DEFAULT_PARAMS["fast"]["STATES"] == 2 and DEFAULT_PARAMS["pin"]["STATES"] == 1
    assert board_params(DEFAULT_PARAMS["fast"], None, "stub")["STATES"] == 1
    assert board_params(DEFAULT_PARAMS["fast"], None, "real")["STATES"] == 2


# ------------------------------------------------------------------------------------------ host: the refusal
def test_verify_layer_refuses_v5_on_states1_only(files):
    _p, c = files[2]
    with MemBoard(1) as b, pytest.raises(UnsupportedError) as e:
        vf.stream_container(b, c)
    msg = str(e.value)
    assert "\n" not in msg and "two code tables" in msg and "STATES=1" in msg and "memory-sim" in msg
    assert not b.loaded
    with MemBoard(2) as b, pytest.raises(RuntimeError, match="streamed"):
        vf.stream_container(b, c)                          # accepted: it reaches the board
    assert any(base.two_tables(t) for t in b.loaded)
    with MemBoard(1) as b, pytest.raises(RuntimeError, match="streamed"):
        vf.stream_container(b, files[1][1])                # a v4 file on a STATES=1 board: accepted
    with pytest.raises(UnsupportedError, match="STATES=1"):
        base.check_states(c.tables[c.streams[[base.two_tables(c.tables[s.table]) for s in c.streams].index(True)]
                                   .table], base.BoardInfo("uart", 8, 16, 4096, 1))


# ------------------------------------------------------------------------------------------ virtual board (Verilator)
@needs_verilator
@pytest.mark.timeout(900)
def test_lutzip_stream_v5_bit_exact_on_states2_virtual_board(files, capsys):
    """``lutzip stream --sim`` (fast mode, STATES=2): the v5 digits CNN, every word back and compared, then the
    v4 file on the same build."""
    for states in (2, 1):
        assert cli.main(["stream", str(files[states][0]), "--sim", "--json", "--verify", "full"]) == 0
        rep = json.loads(capsys.readouterr().out)
        assert rep["ok"] and rep["board"]["states"] == 2 and rep["first_mismatch"] is None
        assert rep["weights"] == 18346 and rep["counters"]["words"] == 18346
        assert all(t["status"] == "pass" for t in rep["tensors"])


@needs_verilator
@pytest.mark.timeout(900)
def test_states1_virtual_board_refuses_v5_in_one_line(files, capsys):
    """Pin mode (STATES=1, a board of one code table): the v5 file is refused in one line after IDENT, exit 2 (v4 files on
    pin mode: tests/test_vboard.py::test_pin_mode_uart, and below with -m slow)."""
    assert cli.main(["stream", str(files[2][0]), "--sim", "--mode", "pin"]) == 2
    cap = capsys.readouterr()
    err = [x for x in cap.err.strip().splitlines() if not x.startswith("lutzip: building")]   # a first build says so
    assert len(err) == 1 and err[0].startswith("lutzip: error: tensor ") and "two code tables" in err[0] \
        and "STATES=1" in err[0] and "Traceback" not in cap.err, cap.err



@needs_verilator
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_states1_virtual_board_streams_v4(files, capsys):
    assert cli.main(["stream", str(files[1][0]), "--sim", "--mode", "pin", "--json", "--timeout", "20"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and rep["board"]["states"] == 1


@needs_verilator
@pytest.mark.timeout(900)
def test_board_ignoring_state_b_fails_the_v5_stream(files):
    """The test above can fail: a STATES=1 core told it has two tables (the host loads the two-table image; the core
    drops the state-B half and the next-state bits) decodes the two-table tensor wrong, and the check says so."""
    from lutzip.board import open_board
    with open_board(sim=True, mode="pin", timeout=20) as b:
        info = b.identify()
        assert info.states == 1
        b.info = dataclasses.replace(info, states=2)
        r = vf.stream_container(b, files[2][1], "crc", progress=False)
    assert not r["ok"]
    bad = [t for t in r["tensors"] if t["status"] == "fail"]
    two = {files[2][1].tensors[s.members[0]].name for s in files[2][1].streams
           if base.two_tables(files[2][1].tables[s.table])}
    assert bad and {t["name"] for t in bad} <= two, (bad, two)


# ------------------------------------------------------------------------------------------ the AXI top
@needs_verilator
@pytest.mark.timeout(900)
def test_axi_top_streams_v5_and_states1_top_refuses(files):
    """The AXI top (Verilator) behind the simulated PYNQ device: STATES=2 (the Zynq builds' default) reads PARAMS,
    loads ``table_ops(states=2)`` and decodes the v5 file bit-exact; a STATES=1 top refuses it in one line."""
    pytest.importorskip("pynq", reason="pynq not installed")
    try:
        from lutzip.board.pynq import open_board
    except ImportError as e:
        pytest.skip(str(e))
    with open_board(sim=True, timeout=30.0) as b:
        assert b.identify().states == 2
        assert R.params_states(b.core.reg(R.PARAMS)) == 2
        r = vf.stream_container(b, files[2][1], "full", progress=False)
        assert r["ok"], vf.format_report(r)
        assert r["counters"]["words"] == 18346
    with open_board(sim=True, timeout=30.0, STATES=1) as b:
        assert b.identify().states == 1
        with pytest.raises(UnsupportedError, match="STATES=1") as e:
            vf.stream_container(b, files[2][1], "full", progress=False)
        assert "\n" not in str(e.value)
        assert vf.stream_container(b, files[1][1], "crc", progress=False)["ok"]


# ------------------------------------------------------------------------------------------ GHDL (slow)
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
@pytest.mark.timeout(3600)
def test_ghdl_virtual_board_streams_v5():
    """The converted VHDL of the fast-mode board (STATES=2) in GHDL: a small v5 file bit-exact."""
    from lutzip.board.uart import UartBoard
    from lutzip.vboard import VirtualBoard
    rng = np.random.default_rng(1)
    a = np.round(rng.laplace(0, 3, 3000)).clip(-128, 127).astype(np.int8)
    a[rng.random(a.size) < 0.8] = 0                         # (tests/test_core_states.py's v5 recipe)
    c = ct.from_bytes(api.compress({"g": a}, states=2, stripe_len=1024))
    assert c.version == 5 and base.two_tables(c.tables[c.streams[0].table])
    with VirtualBoard(hdl="vhdl", mode="fast") as vb, UartBoard(vb.port, timeout=60, simulated=True) as b:
        assert b.identify().states == 2
        r = vf.stream_container(b, c, "full", progress=False)
    assert r["ok"], vf.format_report(r)
