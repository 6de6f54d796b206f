"""Small MyHDL stand-ins with the decoder core's ports (docs/CORE.md), for exercising the synthesis flows.

Not a decoder: a bit bitbuffer, an L-bit LUT1 lookup, a LUT2 lookup and a LUT3 block RAM with a registered
(synchronous) read, which is the structure the real core has. Also checked here: it converts to Verilog.
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from lutzip.hdl.core.ports import core_signals


@block
def standin_core(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                 m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                 tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy,
                 L=8, W=16, LUT3_DEPTH=4096):
    AW = max(1, (LUT3_DEPTH - 1).bit_length())
    lut1 = [Signal(intbv(0)[15:]) for _ in range(2 ** L)]
    lut2 = [Signal(intbv(0)[23:]) for _ in range(16)]
    lut3 = [Signal(intbv(0)[W:]) for _ in range(LUT3_DEPTH)]
    bitbuf = Signal(intbv(0)[64:])
    nbits = Signal(intbv(0, min=0, max=65))
    sym_valid = Signal(bool(0))
    cls = Signal(intbv(0)[4:])
    idx = Signal(intbv(0)[12:])
    lut3_addr = Signal(modbv(0)[AW:])
    lut3_q = Signal(intbv(0)[W:])
    q_valid = Signal(bool(0))
    last_r = Signal(bool(0))
    e1 = Signal(intbv(0)[15:])
    cnt = Signal(intbv(0)[16:])
    stall = Signal(bool(0))
    shifted = Signal(intbv(0)[64:])

    @always_comb
    def comb():
        e1.next = lut1[int(bitbuf[64:64 - L])]
        stall.next = q_valid and not m_axis_tready
        shifted.next = bitbuf << e1[10:6]
        s_axis_tready.next = nbits <= 32 and not (q_valid and not m_axis_tready)

    @always(clk.posedge)
    def tables():
        if tbl_we:
            if tbl_sel == 0:
                lut1[int(tbl_addr[L:])].next = tbl_wdata[15:]
            elif tbl_sel == 1:
                lut2[int(tbl_addr[4:])].next = tbl_wdata[23:]

    @always(clk.posedge)
    def lut3_ram():  # block RAM: write port + registered read
        if tbl_we and tbl_sel == 2:
            lut3[int(tbl_addr[AW:])].next = tbl_wdata[W:]
        if not stall:
            lut3_q.next = lut3[int(lut3_addr)]

    @always(clk.posedge)
    def datapath():
        if rst:
            bitbuf.next = 0
            nbits.next = 0
            sym_valid.next = 0
            q_valid.next = 0
            cnt.next = 0
            last_r.next = 0
        elif not stall:
            b = intbv(0)[64:]
            n = intbv(0, min=0, max=97)
            b[:] = bitbuf
            n[:] = nbits
            if e1[14] and nbits >= e1[6:]:
                b[:] = bitbuf << e1[6:]
                n[:] = nbits - e1[6:]
                sym_valid.next = 1
                cls.next = e1[14:10]
                idx.next = shifted[64:52]
            else:
                sym_valid.next = 0
            if s_axis_tvalid and n <= 32:
                b[:] = b | (s_axis_tdata << (32 - n))
                n[:] = n + 32
            bitbuf.next = b
            nbits.next = n
            e2 = lut2[int(cls)]
            lut3_addr.next = e2[16:] + idx
            q_valid.next = sym_valid
            last_r.next = s_axis_tlast
            if sym_valid:
                cnt.next = cnt + 1

    @always_comb
    def outs():
        m_axis_tdata.next = lut3_q
        m_axis_tvalid.next = q_valid
        m_axis_tlast.next = last_r
        m_axis_tuser.next = 0
        err_valid.next = 0
        err_code.next = 0
        busy.next = cnt != 0

    return comb, tables, lut3_ram, datapath, outs


@block
def standin_uart_top(clk, rst, uart_rx, uart_tx, CLK_HZ=12_000_000, BAUD=1_000_000, L=8, W=16, LUT3_DEPTH=4096,
                     **params):
    """Stand-in for lutzip.firmware.uart.uart_top: a shift register feeds every core input, an XOR-rotate
    accumulator of every output drives ``uart_tx`` (so nothing is optimised away)."""
    sr = Signal(intbv(0)[32:])
    acc = Signal(intbv(0)[W:])
    tx = Signal(bool(1))
    sig = {k: v for k, v in core_signals(W).items() if k not in ("clk", "rst")}   # the core's other ports
    core = standin_core(clk, rst, **sig, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH)
    s_tdata, s_tvalid, s_tlast, m_tready = sig["s_axis_tdata"], sig["s_axis_tvalid"], sig["s_axis_tlast"], \
        sig["m_axis_tready"]
    we, sel, addr, wdata = sig["tbl_we"], sig["tbl_sel"], sig["tbl_addr"], sig["tbl_wdata"]
    m_tdata, m_tvalid, m_tlast, busy = sig["m_axis_tdata"], sig["m_axis_tvalid"], sig["m_axis_tlast"], sig["busy"]
    s_tready = sig["s_axis_tready"]

    @always(clk.posedge)
    def seq():
        sr.next = concat(sr[31:0], uart_rx)
        acc.next = concat(acc[W - 1:0], acc[W - 1]) ^ m_tdata
        tx.next = acc[0] ^ m_tvalid ^ m_tlast ^ busy ^ s_tready

    @always_comb
    def comb():
        s_tdata.next = sr
        s_tvalid.next = sr[30]
        s_tlast.next = sr[29]
        m_tready.next = sr[28]
        we.next = sr[31]
        sel.next = sr[2:]
        addr.next = sr[14:2]
        wdata.next = sr
        uart_tx.next = tx

    return core, seq, comb


def test_standin_converts(tmp_path):
    from lutzip.hdl.flows.convert import convert_core
    v = convert_core(tmp_path, "verilog", core=standin_core, L=6, W=8, LUT3_DEPTH=64, STEP="onehot")
    text = v.read_text()
    assert "module decoder_core" in text and "m_axis_tdata" in text


def test_standin_uart_top_converts(tmp_path):
    from myhdl import ResetSignal

    from lutzip.hdl.flows.convert import convert_block
    top = standin_uart_top(Signal(bool(0)), ResetSignal(0, active=1, isasync=False), Signal(bool(1)),
                           Signal(bool(1)), L=4, W=8, LUT3_DEPTH=16)
    text = convert_block(top, tmp_path, "uart_top").read_text()
    assert "module uart_top" in text and "uart_tx" in text
