"""The board path for row streams (issue 15): a core built with ``MIRROR=1`` decodes row streams (format version 6,
mirrored rows, the encoder's default for such tensors) end to end -- IDENT FLAGS bit 2 (and ``log2(MAX_N)`` in bits
5..3, log2(MAX_N) - 5) / AXI PARAMS bit 22 (27:24) report it, the host writes config word 1 (8-bit words) with every table set, a
board without it refuses a row stream in one line naming the tensor and ``--no-rows``, one with it streams the file.

Default run: the fields (protocol, MyHDL framer and engine, AXI PARAMS), ``table_ops``' config word, the verify
layer, the virtual board in Verilator (fast mode: MIRROR=1, the default board) through ``lutzip stream`` on a
silero-vad-like file (DFT-basis tensors in int16, int8, bfloat16 as row streams, a plain conv tensor) bit-exact, pin
mode (MIRROR=0) refusing it, two doubles that must fail (a MIRROR=0 core claimed as MIRROR=1, a host that does not
write config word 1), and the AXI top behind the simulated PYNQ device (MIRROR=1 bit-exact, MIRROR=0 refusing).
``-m slow``: GHDL's VHDL virtual board with a row stream."""
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
from row_mirror_cases import basis

needs_verilator = pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")

#: the row tensors of :func:`_weights` (their dtype, N)
ROWS = {"a_int16": ("int16", 65), "b_int8": ("int8", 256), "c_bf16": ("bfloat16", 64)}


def _weights():
    rng = np.random.default_rng(0)
    return {"a_int16": basis(24, 65, "int16"), "b_int8": basis(48, 256, "int8"),
            "c_bf16": basis(20, 64, "bfloat16", seed=1),
            "conv": np.round(rng.laplace(0, 6, (64, 3, 5))).clip(-128, 127).astype(np.int8)}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``{"rows": (path, container), "plain": ..., "rows2": ...}``: the default encoding (row streams), ``rows=False``,
    and ``states=2`` (row streams, one of them with two code tables)."""
    d = tmp_path_factory.mktemp("mirror")
    out = {}
    for key, rows, states in (("rows", True, 1), ("plain", False, 1), ("rows2", True, 2)):
        data = api.compress(_weights(), rows=rows, states=states)
        c = ct.from_bytes(data)
        got = {c.tensors[s.members[0]].name for s in c.streams if s.rows}
        assert got == (set(ROWS) if rows else set()), got
        if rows:
            assert c.version == 6
            from lutzip.codec.rows import summary
            assert all(summary(c, c.tensor(n))["neg_mirror"] for n in ROWS)     # negated tails in every word type
        if states == 2:
            assert any(s.rows and base.two_tables(c.tables[s.table]) for s in c.streams)
        p = d / f"{key}.lutz"
        p.write_bytes(data)
        out[key] = (p, c)
    return out


def _numel(c):
    return sum(t.numel for t in c.tensors)


# ------------------------------------------------------------------------------------------ IDENT / PARAMS fields
def test_ident_mirror_in_header_flags_old_layout_kept():
    from lutzip.firmware.engine.resp_framer import ident_flags
    one = link.Ident(2, 8, 16, 4096, 4096, 1024, 125_000_000, 0, 65536, 25_000_000)
    for states in (1, 2):
        for max_n in (0, 32, 512, 4096):
            idn = dataclasses.replace(one, states=states, max_n=max_n)
            f = link.ident_flags(idn)
            assert f == ident_flags(states, int(max_n > 0), max_n or 512)       # the framer sends what the host reads
            assert f & 3 == states - 1 and bool(f & 4) == (max_n > 0) and f < 0x40
            assert link.encode_ident(idn) == link.encode_ident(one)           # the payload as before
            fr = link.FrameParser().feed(link.encode_frame(link.IDENT, 0, link.encode_ident(idn), flags=f))[0]
            back = link.parse_ident(fr)
            assert back == idn and back.mirror == int(max_n > 0)
            # a host before the field reads STATES from bits 1..0 only: unchanged
            assert (fr.flags & link.IDENT_STATES_MASK) + 1 == states
    assert ident_flags(1, 0) == 0 and ident_flags(2, 0) == 1 and ident_flags(1, 1, 512) == 0x4 | 4 << 3
    for bad in (16, 8192, 384):    # outside what IDENT carries: refused at build time
        with pytest.raises(UnsupportedError, match="MAX_N"):
            ident_flags(1, 1, bad)
    assert link.parse_ident(dataclasses.replace(fr, flags=0)).max_n == 0         # a board before the field


def test_axi_params_mirror_field():
    w0 = R.params_word(8, 16, 1, 4, STATES=2)
    w1 = R.params_word(8, 16, 1, 4, STATES=2, MIRROR=1, MAX_N=512)
    assert w0 == 0x141108                                    # the value of the tops before the field
    assert w1 == w0 | 1 << 22 | 9 << 24
    assert R.params_mirror(w0) == 0 and R.params_mirror(w1) == 512 and R.params_states(w1) == 2
    assert R.params_mirror(R.params_word(MIRROR=1, MAX_N=4)) == 4
    from lutzip.firmware.axi.lutzip_axi import check_params
    check_params(16, 2, 4, 8, 1, 1)          # the N-lane top takes row stripes too (tests/test_axi_lanes.py)
    with pytest.raises(UnsupportedError, match="MAX_N"):
        check_params(16, 1, 4, 8, 1, 1, 3)


def test_table_ops_config_word_1():
    from lutzip.hdl.flows.model import SEL_CONFIG, table_ops
    from lutzip.codec.tables import raw_tableset
    for bits in (8, 16):
        ts = raw_tableset(bits)
        plain = table_ops(ts, 8)
        assert table_ops(ts, 8, mirror=0) == plain and all(op[:2] != (SEL_CONFIG, 1) for op in plain)
        assert table_ops(ts, 8, mirror=1) == plain + [(SEL_CONFIG, 1, int(bits == 8))]


def test_myhdl_engine_ident_reports_mirror():
    """The protocol engine in MyHDL with the real MIRROR=1 core: IDENT FLAGS bit 2 and log2(MAX_N), payload as
    before."""
    from lutzip.firmware.engine.sim_engine import EngineSim
    s = EngineSim(RING_DEPTH=64, LUT3_DEPTH=256, MAX_PAYLOAD=128, CLK_HZ=50_000_000, MIRROR=1, MAX_N=64)
    try:
        fr = link.FrameParser().feed(s.run(link.encode_frame(link.IDENTIFY)))
    finally:
        s.close()
    assert len(fr) == 1 and fr[0].type == link.IDENT and fr[0].flags == 0x4 | (6 - 5) << 3     # MAX_N 64: log2 - 5 in bits 5..3
    idn = link.parse_ident(fr[0])
    assert (idn.states, idn.mirror, idn.max_n, idn.L, idn.lut3_depth, len(fr[0].payload)) == (1, 1, 64, 8, 256, 20)


def test_stub_core_cannot_build_mirror_defaults():
    from lutzip.firmware.engine import proto_engine as pe
    with pytest.raises(UnsupportedError, match="MIRROR=1 needs the real decoder core"):
        pe.proto_engine(**pe.ports(), core=pe.get_core("stub"), MIRROR=1)
    with pytest.raises(UnsupportedError, match="MIRROR"):
        pe.proto_engine(**pe.ports(), MIRROR=2)
    from lutzip.vboard.base import DEFAULT_PARAMS, board_params
    assert DEFAULT_PARAMS["fast"]["MIRROR"] == 1 and DEFAULT_PARAMS["pin"]["MIRROR"] == 0
    assert board_params(DEFAULT_PARAMS["fast"], None, "stub")["MIRROR"] == 0
    assert board_params(DEFAULT_PARAMS["fast"], None, "real")["MIRROR"] == 1
    assert board_params(DEFAULT_PARAMS["fast"], {"LANES": 4}, "real")["MIRROR"] == 0   # replay lanes: 0 unless
    assert board_params(DEFAULT_PARAMS["fast"], {"LANES": 4, "MIRROR": 1}, "real")["MIRROR"] == 1  # asked
    # MIRROR=1 with replay lanes builds (docs/CORE.md 6.8; tests/test_vboard_replay_lanes_mirror.py runs it)
    pe.proto_engine(**pe.ports(), REPLAY_WORDS=4096, LANES=2, MIRROR=1)
    from lutzip.firmware.boards.registry import BOARDS
    assert {k: b.top_params.get("MIRROR", 0) for k, b in BOARDS.items()} == {"icebreaker": 0, "ulx3s": 1,
                                                                             "arty_a7": 1}


def test_board_build_mirror_options():
    from lutzip.firmware.boards import build as bb
    import argparse
    sub = argparse.ArgumentParser().add_subparsers()
    p = bb.register(sub)
    assert p.parse_args(["--board", "ulx3s"]).mirror is None
    assert p.parse_args(["--board", "ulx3s", "--mirror"]).mirror is True
    assert p.parse_args(["--board", "ulx3s", "--no-mirror"]).mirror is False


def test_hdl_convert_mirror_params():
    from lutzip.hdl.flows import cli as hc
    import argparse
    hsub = argparse.ArgumentParser().add_subparsers()
    hc._add_convert(hsub)
    p = hsub.choices["convert"]
    assert hc.core_params(p.parse_args(["--out", "x"])).MIRROR == 0
    cp = hc.core_params(p.parse_args(["--out", "x", "--mirror", "--max-n", "1024"]))
    assert (cp.MIRROR, cp.MAX_N) == (1, 1024)


# ------------------------------------------------------------------------------------------ host: the verify layer
def test_verify_layer_rows_against_mirror(files):
    _p, c = files["rows"]
    with MemBoard(2) as b, pytest.raises(UnsupportedError) as e:           # MIRROR=0
        vf.stream_container(b, c)
    msg = str(e.value)
    assert "\n" not in msg and "'a_int16'" in msg and "--no-rows" in msg and "MIRROR=0" in msg and not b.loaded
    with MemBoard(2, max_n=512) as b, pytest.raises(RuntimeError, match="streamed"):
        vf.stream_container(b, c)                                             # accepted: it reaches the board
    assert b.loaded
    with MemBoard(1) as b, pytest.raises(RuntimeError, match="streamed"):
        vf.stream_container(b, files["plain"][1])                            # --no-rows: accepted without MIRROR
    # rows longer than the board's row buffer takes (N <= MAX_N + 1): refused in one line
    long = ct.from_bytes(api.compress({"long": basis(8, 1024, "int8")}, states=1))
    assert long.streams[0].rows
    with MemBoard(1, max_n=512) as b, pytest.raises(UnsupportedError, match="1024-word rows") as e:
        vf.stream_container(b, long)
    assert "\n" not in str(e.value) and "MAX_N=512" in str(e.value) and not b.loaded
    with MemBoard(1, max_n=1024) as b, pytest.raises(RuntimeError, match="streamed"):
        vf.stream_container(b, long)


# ------------------------------------------------------------------------------------------ virtual board (Verilator)
@needs_verilator
@pytest.mark.timeout(1200)
def test_lutzip_stream_rows_bit_exact_on_mirror_virtual_board(files, capsys):
    """``lutzip stream --sim`` (fast mode, MIRROR=1, STATES=2): the row-stream file, every word back and compared;
    the ``--states 2`` one (a row stream with two code tables); the same tensors without row streams."""
    for key in ("rows", "rows2", "plain"):
        path, c = files[key]
        assert cli.main(["stream", str(path), "--sim", "--json", "--verify", "full"]) == 0
        rep = json.loads(capsys.readouterr().out)
        assert rep["ok"] and rep["board"]["mirror"] == 1 and rep["board"]["max_n"] == 512
        assert rep["first_mismatch"] is None and rep["weights"] == _numel(c) == rep["counters"]["words"]
        assert all(t["status"] == "pass" for t in rep["tensors"]) and len(rep["tensors"]) == 4


@needs_verilator
@pytest.mark.timeout(1200)
def test_mirror0_virtual_board_refuses_rows_in_one_line(files, capsys):
    """Pin mode (MIRROR=0, as the iCEBreaker): the row-stream file is refused in one line after IDENT, exit 2."""
    assert cli.main(["stream", str(files["rows"][0]), "--sim", "--mode", "pin"]) == 2
    cap = capsys.readouterr()
    err = [x for x in cap.err.strip().splitlines() if not x.startswith("lutzip: building")]
    assert len(err) == 1 and err[0].startswith("lutzip: error: tensor 'a_int16'") and "--no-rows" in err[0] \
        and "MIRROR=0" in err[0] and "Traceback" not in cap.err, cap.err


def _row_failures(r, c=None):
    assert not r["ok"]
    bad = {t["name"] for t in r["tensors"] if t["status"] == "fail"}
    return bad


@needs_verilator
@pytest.mark.timeout(1200)
def test_board_claiming_mirror_without_it_fails(files):
    """The stream test can fail (1): a MIRROR=0 core claimed as MIRROR=1 answers every row stripe with a bad header;
    the row tensors fail, the plain one passes."""
    from lutzip.board import open_board
    with open_board(sim=True, mode="pin", timeout=20) as b:
        info = b.identify()
        assert info.mirror == 0
        b.info = dataclasses.replace(info, mirror=1, max_n=512)
        r = vf.stream_container(b, files["rows"][1], "crc", progress=False)
    assert _row_failures(r, files["rows"][1]) == set(ROWS)


@needs_verilator
@pytest.mark.timeout(1200)
def test_host_ignoring_the_mirror_flag_fails(files, monkeypatch):
    """The stream test can fail (2): a host that ignores IDENT's MIRROR bit in its table loads (no config word 1)
    leaves the core negating with the width it had -- the int8 tensor's or the 16-bit tensors' negated tails come
    out wrong, whatever that width was."""
    from lutzip.board import open_board
    from lutzip.hdl.flows import model
    real = model.table_ops
    monkeypatch.setattr(model, "table_ops", lambda ts, L=8, n_lut3=None, states=1, mirror=0:
                        real(ts, L, n_lut3, states, 0))
    with open_board(sim=True, timeout=20) as b:
        assert b.identify().mirror == 1
        r = vf.stream_container(b, files["rows"][1], "crc", progress=False)
    bad = _row_failures(r, files["rows"][1])
    assert bad and bad <= set(ROWS), bad


# ------------------------------------------------------------------------------------------ the AXI top
@needs_verilator
@pytest.mark.timeout(1500)
def test_axi_top_streams_rows_and_mirror0_top_refuses(files):
    """The AXI top (Verilator) behind the simulated PYNQ device: MIRROR=1 (the Zynq builds' default) reads PARAMS,
    writes config word 1 and decodes the row-stream file bit-exact; a MIRROR=0 top refuses it in one line."""
    pytest.importorskip("pynq", reason="pynq not installed")
    try:
        from lutzip.board.pynq import open_board
    except ImportError as e:
        pytest.skip(str(e))
    c = files["rows"][1]
    with open_board(sim=True, timeout=30.0) as b:
        info = b.identify()
        assert (info.mirror, info.max_n, info.states) == (1, 512, 2)
        assert R.params_mirror(b.core.reg(R.PARAMS)) == 512
        r = vf.stream_container(b, c, "full", progress=False)
        assert r["ok"], vf.format_report(r)
        assert r["counters"]["words"] == _numel(c)
    # the Zynq builds' core: the vector front (ZYNQ_BOARDS), STATES=2, MIRROR=1; the --states 2 file
    with open_board(sim=True, timeout=30.0, FRONT="vector") as b:
        assert b.identify().mirror == 1
        r = vf.stream_container(b, files["rows2"][1], "full", progress=False)
        assert r["ok"], vf.format_report(r)
    with open_board(sim=True, timeout=30.0, MIRROR=0) as b:
        assert b.identify().mirror == 0
        with pytest.raises(UnsupportedError, match="--no-rows") as e:
            vf.stream_container(b, c, "full", progress=False)
        assert "\n" not in str(e.value)
        assert vf.stream_container(b, files["plain"][1], "crc", progress=False)["ok"]


# ------------------------------------------------------------------------------------------ GHDL (slow)
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("ghdl") is None, reason="ghdl not installed")
@pytest.mark.timeout(3600)
def test_ghdl_virtual_board_streams_rows():
    """The converted VHDL of the fast-mode board (MIRROR=1) in GHDL: a small int8 row stream bit-exact."""
    from lutzip.board.uart import UartBoard
    from lutzip.vboard import VirtualBoard
    c = ct.from_bytes(api.compress({"stft": basis(36, 64, "int8")}))
    assert c.version == 6 and c.streams[0].rows
    with VirtualBoard(hdl="vhdl", mode="fast") as vb, UartBoard(vb.port, timeout=60, simulated=True) as b:
        assert b.identify().mirror == 1
        r = vf.stream_container(b, c, "full", progress=False)
    assert r["ok"], vf.format_report(r)
