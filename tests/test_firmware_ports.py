"""firmware/: one stream-port convention, the counter bank's read port, the choice of decoder core."""
import importlib
import inspect
import pkgutil
import re

import pytest
from myhdl import Signal, block, delay, instance

import lutzip.firmware.engine
import lutzip.firmware.uart
from lutzip.errors import UnsupportedError
from lutzip.link.protocol import COUNTER_NAMES

STREAM_PORT = re.compile(r"^(core_)?[sm]_axis_(\w+_)?t(data|valid|ready|last|user)$")
OLD_NAMES = re.compile(r"^(din|dout|dvalid|dready|wr|full|rd_data|rd_valid|rd_ready|wr_en|wr_data|in_t\w+|out_t\w+|"
                       r"m_t\w+|s_t\w+|qdata|qvalid|qready|ddata|cnt\d+|c_\w+)$")


def _blocks():
    """Every @block defined in firmware/engine and firmware/uart: (qualified name, parameter names)."""
    out = []
    for pkg in (lutzip.firmware.engine, lutzip.firmware.uart):
        for m in pkgutil.iter_modules(pkg.__path__):
            mod = importlib.import_module(f"{pkg.__name__}.{m.name}")
            for name, obj in vars(mod).items():
                if type(obj).__name__ == "block_decorator" and obj.func.__module__ == mod.__name__:
                    out.append((f"{m.name}.{name}", list(inspect.signature(obj).parameters)))
    return out


def test_stream_ports_follow_one_convention():
    blocks = _blocks()
    names = {b for b, _ in blocks}
    assert {"fifo.fifo", "cmd_ring.cmd_ring", "resp_framer.resp_framer", "uart_rx.uart_rx",
            "proto_engine.proto_engine", "result_path.result_path", "table_loader.table_loader"} <= names
    checked = 0
    for name, params in blocks:
        for p in params:
            assert not OLD_NAMES.match(p), f"{name}: port {p!r} has a pre-convention name"
            if re.search(r"_t(data|valid|ready|last|user)$", p):
                assert STREAM_PORT.match(p), f"{name}: stream port {p!r} is not s_axis_*/m_axis_*"
                checked += 1
        # a stream (not a tap) has its data, valid and ready
        for p in params:
            m = re.match(r"^([sm]_axis_(?:\w+_)?)tdata$", p)
            if m:
                assert {m[1] + "tvalid", m[1] + "tready"} <= set(params), f"{name}: {m[1]}* is incomplete"
    assert checked >= 40


@block
def _bank_tb(pulses, got):
    """Drive the counter bank with known events, then read every counter through the read port."""
    from lutzip.firmware.engine.perf_counters import CounterPort, perf_counters
    clk, rst = Signal(bool(0)), Signal(bool(1))
    ev = {k: Signal(bool(0)) for k in ("busy", "s_tvalid", "s_tready", "m_tvalid", "m_tready", "m_tlast",
                                       "m_tuser", "lerr", "rx", "tx")}
    rd = CounterPort()
    dut = perf_counters(clk, rst, ev["busy"], ev["s_tvalid"], ev["s_tready"], ev["m_tvalid"], ev["m_tready"],
                        ev["m_tlast"], ev["m_tuser"], ev["lerr"], ev["rx"], ev["tx"], rd)

    @instance
    def run():
        yield delay(1)
        clk.next = 1
        yield delay(1)
        clk.next = 0
        rst.next = 0
        for cycle in pulses:
            for k in ev:
                ev[k].next = k in cycle
            yield delay(1)
            clk.next = 1
            yield delay(1)
            clk.next = 0
        for k in ev:
            ev[k].next = 0
        yield delay(1)
        got.append(int(rd.first))
        for i in range(len(COUNTER_NAMES) - 1):
            rd.idx.next = i
            yield delay(1)
            got.append(int(rd.nxt))

    return dut, run


def test_counter_bank_read_port_in_counter_names_order():
    pulses = ([{"busy", "s_tready"}] * 3 + [{"busy", "s_tvalid", "s_tready"}] * 2 + [{"m_tvalid"}] * 4
              + [{"m_tvalid", "m_tready"}] * 6 + [{"m_tvalid", "m_tready", "m_tlast"}]
              + [{"m_tvalid", "m_tready", "m_tuser", "m_tlast"}] * 2 + [{"lerr"}] * 7 + [{"rx"}] * 8
              + [{"tx", "rx"}] * 9)
    expect = {"cycles": len(pulses), "busy": 5, "stall_in": 3, "stall_out": 4, "words": 7, "stripes": 3,
              "link_errors": 7, "decode_errors": 2, "rx_bytes": 17, "tx_bytes": 9}
    got = []
    t = _bank_tb(pulses, got)
    try:
        t.run_sim(quiet=1)
    finally:
        t.quit_sim()
    assert dict(zip(COUNTER_NAMES, got)) == expect


def test_framer_sends_every_counter():
    from lutzip.firmware.engine.resp_framer import COUNTERS_LEN
    from lutzip.link.protocol import COUNTERS_STRUCT
    assert COUNTERS_LEN == COUNTERS_STRUCT.size == 8 * len(COUNTER_NAMES)


def test_core_choice(monkeypatch):
    from lutzip.firmware.engine.core_stub import core_stub
    from lutzip.firmware.engine.proto_engine import get_core
    from lutzip.hdl.core.decoder_core import decoder_core
    monkeypatch.delenv("LUTZIP_CORE", raising=False)
    assert get_core() is decoder_core and get_core("real") is decoder_core and get_core("stub") is core_stub
    monkeypatch.setenv("LUTZIP_CORE", "stub")
    assert get_core() is core_stub
    with pytest.raises(UnsupportedError, match="unknown decoder core 'auto'"):
        get_core("auto")


def test_convert_rejects_unknown_top_and_hdl(tmp_path):
    from lutzip.firmware.convert import convert
    with pytest.raises(UnsupportedError, match="unknown top 'board'"):
        convert(top="board", path=tmp_path)
    with pytest.raises(UnsupportedError, match="unknown HDL 'edif'"):
        convert(top="uart_top", hdl="edif", path=tmp_path, core="stub", CLK_HZ=8, BAUD=2)
    assert not any(tmp_path.iterdir())


def test_counter_width_must_hold_the_timeout_bit():
    """COUNTER_BITS below the inter-byte timeout's cycle-counter bit is a one-line configuration error."""
    from lutzip.firmware.engine.frame_rx import rx_gap_log2
    from lutzip.firmware.engine.proto_engine import get_core, ports, proto_engine
    stub = get_core("stub")
    k = rx_gap_log2(12_000_000, 1_000_000)
    with pytest.raises(UnsupportedError, match="COUNTER_BITS"):
        proto_engine(*ports().values(), CLK_HZ=12_000_000, BAUD=1_000_000, COUNTER_BITS=k + 1, core=stub)
    proto_engine(*ports().values(), CLK_HZ=12_000_000, BAUD=1_000_000, COUNTER_BITS=36, core=stub)
