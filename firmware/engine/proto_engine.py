"""The byte-level protocol engine: frame parser, command ring, table loader, decoder core, result path,
counters and response framer (docs/PROTOCOL.md). ``uart_top`` puts a UART in front; the virtual board's fast
mode feeds it bytes directly."""
import os

from myhdl import ResetSignal, Signal, always, always_comb, block, intbv, modbv

from lutzip.firmware.engine.cmd_ring import cmd_ring
from lutzip.firmware.engine.fifo import fifo
from lutzip.firmware.engine.frame_rx import frame_rx
from lutzip.firmware.engine.perf_counters import perf_counters
from lutzip.firmware.engine.resp_framer import resp_framer
from lutzip.firmware.engine.result_path import result_path
from lutzip.firmware.engine.table_loader import table_loader

DATA_DEPTH = 256
DESC_DEPTH = 32


def get_core(name=None):
    """The decoder core block: ``"real"`` (lutzip.hdl.core.decoder_core) or ``"stub"`` (firmware.core_stub).

    The default is the environment variable ``LUTZIP_CORE``, else the real core when it can be imported.
    """
    name = name or os.environ.get("LUTZIP_CORE", "auto")
    if name in ("real", "auto"):
        try:
            from lutzip.hdl.core.decoder_core import decoder_core
            return decoder_core
        except ImportError:
            if name == "real":
                raise
    from lutzip.firmware.engine.core_stub import core_stub
    return core_stub


@block
def proto_engine(clk, rst, in_tdata, in_tvalid, in_tready, out_tdata, out_tvalid, out_tready, idle,
                 L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=4096, MAX_PAYLOAD=1024, CLK_HZ=100_000_000, BAUD=0,
                 core=None, FAST_CRC=False):
    """Byte stream in (host frames), byte stream out (board frames); ``idle`` when nothing is in progress.

    ``FAST_CRC`` computes the CRCs through table ROMs: faster to simulate, bigger on an FPGA (same results).
    """
    core = core or get_core()
    AW = (RING_DEPTH - 1).bit_length()
    # parser <-> ring
    ring_we, ring_commit, ring_rollback = [Signal(bool(0)) for _ in range(3)]
    ring_wdata = Signal(intbv(0)[34:])
    ring_free = Signal(intbv(0)[AW + 1:])
    ring_rd = Signal(intbv(0)[34:])
    ring_valid, ring_ready, ring_empty = [Signal(bool(0)) for _ in range(3)]
    next_seq = Signal(intbv(0)[8:])
    ack_req, nack_req, ident_req, soft_rst, mode_words, link_err, hunting = [Signal(bool(0)) for _ in range(7)]
    nack_reason = Signal(intbv(0)[3:])
    rst_all = ResetSignal(0, active=1, isasync=False)
    # core
    s_tdata = Signal(intbv(0)[32:])
    s_tvalid, s_tready, s_tlast = [Signal(bool(0)) for _ in range(3)]
    m_tdata = Signal(intbv(0)[W:])
    m_tvalid, m_tready, m_tlast, m_tuser = [Signal(bool(0)) for _ in range(4)]
    tbl_we = Signal(bool(0))
    tbl_sel = Signal(intbv(0)[2:])
    tbl_addr = Signal(intbv(0)[12:])
    tbl_wdata = Signal(intbv(0)[32:])
    err_valid, busy = Signal(bool(0)), Signal(bool(0))
    err_code = Signal(intbv(0)[4:])
    # result path
    dwr, dfull, qwr, qfull = [Signal(bool(0)) for _ in range(4)]
    dwdata, ddata = Signal(intbv(0)[W:]), Signal(intbv(0)[W:])
    qwdata, qdata = Signal(intbv(0)[64:]), Signal(intbv(0)[64:])
    dvalid, dready, qvalid, qready = [Signal(bool(0)) for _ in range(4)]
    stripes_done = Signal(modbv(0)[16:])
    res_idle, fr_idle, barrier_req = [Signal(bool(0)) for _ in range(3)]
    credit = Signal(intbv(0)[16:])
    rx_hs, tx_hs = Signal(bool(0)), Signal(bool(0))
    raw_idle = Signal(bool(0))
    quiet = Signal(intbv(0)[4:])
    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 = [Signal(intbv(0)[64:]) for _ in range(10)]

    @always_comb
    def glue():
        rst_all.next = rst or soft_rst
        credit.next = ring_free
        rx_hs.next = in_tvalid and in_tready
        tx_hs.next = out_tvalid and out_tready
        raw_idle.next = (hunting and ring_empty and not busy and fr_idle and not in_tvalid and not ack_req
                         and not nack_req and not ident_req and not barrier_req and not soft_rst and not qwr)
        idle.next = quiet == 15

    @always(clk.posedge)
    def c_quiet():
        # idle only after 15 quiet cycles: covers the latencies between the pipeline's stages
        if rst or not raw_idle:
            quiet.next = 0
        elif quiet != 15:
            quiet.next = quiet + 1

    u_rx = frame_rx(clk, rst, in_tdata, in_tvalid, in_tready, ring_we, ring_wdata, ring_commit, ring_rollback,
                    ring_free, next_seq, ack_req, nack_req, nack_reason, ident_req, soft_rst, mode_words,
                    link_err, hunting, MAX_PAYLOAD=MAX_PAYLOAD, FAST_CRC=FAST_CRC)
    u_ring = cmd_ring(clk, rst_all, ring_we, ring_wdata, ring_commit, ring_rollback, ring_rd, ring_valid,
                      ring_ready, ring_free, ring_empty, DEPTH=RING_DEPTH)
    u_ld = table_loader(clk, rst_all, ring_rd, ring_valid, ring_ready, s_tdata, s_tvalid, s_tready, s_tlast,
                        tbl_we, tbl_sel, tbl_addr, tbl_wdata, busy, stripes_done, res_idle, barrier_req)
    u_core = core(clk, rst_all, s_tdata, s_tvalid, s_tready, s_tlast, m_tdata, m_tvalid, m_tready, m_tlast,
                  m_tuser, tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy,
                  L=L, W=W, LUT3_DEPTH=LUT3_DEPTH)
    u_res = result_path(clk, rst_all, mode_words, m_tdata, m_tvalid, m_tready, m_tlast, m_tuser,
                        dwr, dwdata, dfull, qwr, qwdata, qfull, stripes_done, W=W, FAST_CRC=FAST_CRC)
    u_dfifo = fifo(clk, rst_all, dwdata, dwr, ddata, dvalid, dready, dfull, DEPTH=DATA_DEPTH)
    u_qfifo = fifo(clk, rst_all, qwdata, qwr, qdata, qvalid, qready, qfull, DEPTH=DESC_DEPTH)
    u_cnt = perf_counters(clk, rst_all, busy, s_tvalid, s_tready, m_tvalid, m_tready, m_tlast, m_tuser,
                          link_err, rx_hs, tx_hs, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9)
    u_fr = resp_framer(clk, rst, soft_rst, out_tdata, out_tvalid, out_tready,
                       ack_req, nack_req, nack_reason, ident_req, barrier_req, next_seq, credit,
                       qdata, qvalid, qready, ddata, dvalid, dready,
                       c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, fr_idle, res_idle,
                       L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, RING_DEPTH=RING_DEPTH, MAX_PAYLOAD=MAX_PAYLOAD,
                       CLK_HZ=CLK_HZ, BAUD=BAUD, FAST_CRC=FAST_CRC)
    return glue, c_quiet, u_rx, u_ring, u_ld, u_core, u_res, u_dfifo, u_qfifo, u_cnt, u_fr
