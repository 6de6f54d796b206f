"""Register file of ``lutzip_axi`` (docs/AXI.md, offsets in :mod:`lutzip.firmware.axi.regs`).

Interface
---------
clk, rst                    clock, synchronous active-high reset (``aresetn`` low)
wr_en, wr_addr, wr_data     register write (word index) from :mod:`axi_lite`
rd_addr, rd_data            read mux: ``rd_data`` = register at word index ``rd_addr`` (combinational)
hold, hold_start            soft reset in progress (SOFT_RESET_CYCLES cycles) / its first cycle
no_discard                  CONTROL bit3 of the soft reset's write
tbl_we, tbl_sel, tbl_addr, tbl_wdata   the core's table port (registered)
busy, in_open, in_reset     STATUS inputs: transfer in flight, input transfer open, soft reset / discard
s_tvalid, s_tready          input handshake (CYC_STARVED)
m_tvalid, m_tready          output handshake (CYC_BUSY, CYC_BLOCKED)
w_emit                      a decoded word went to the packer (WORDS_OUT); with LANES > 1 the number of
                            words that went (0 .. LANES)
done, done_code             a stripe completed, its failure code (STRIPES, error registers)
crc                         OUT_CRC

Counters are 32-bit and wrap. CLEAR_COUNTERS zeroes CYC_*, WORDS_OUT, STRIPES; CLEAR_ERROR zeroes the
sticky error, its code, ERR_STRIPE and ERR_COUNT; a clear wins over an event in the same cycle.
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from lutzip.firmware.axi import regs as R


@block
def axi_regs(clk, rst, wr_en, wr_addr, wr_data, rd_addr, rd_data, hold, hold_start, no_discard,
             tbl_we, tbl_sel, tbl_addr, tbl_wdata,
             busy, in_open, in_reset, s_tvalid, s_tready, m_tvalid, m_tready, w_emit, done, done_code, crc,
             L=8, W=16, LUT3_DEPTH=4096, LANES=1, OUT_BYTES=4, CLK_HZ=100_000_000, STATES=1, MIRROR=0, MAX_N=512):
    A_CONTROL, A_TBL_ADDR, A_TBL_DATA = R.CONTROL // 4, R.TBL_ADDR // 4, R.TBL_DATA // 4
    A_ID, A_VERSION, A_PARAMS, A_LUT3, A_CLK = R.ID // 4, R.VERSION // 4, R.PARAMS // 4, R.LUT3 // 4, R.CLK_HZ // 4
    A_STATUS, A_ERR_STRIPE, A_ERR_COUNT = R.STATUS // 4, R.ERR_STRIPE // 4, R.ERR_COUNT // 4
    A_CYC_TOTAL, A_CYC_BUSY, A_CYC_STARVED = R.CYC_TOTAL // 4, R.CYC_BUSY // 4, R.CYC_STARVED // 4
    A_CYC_BLOCKED, A_WORDS, A_STRIPES, A_CRC = R.CYC_BLOCKED // 4, R.WORDS_OUT // 4, R.STRIPES // 4, R.OUT_CRC // 4
    V_ID, V_VERSION = R.ID_VALUE, R.VERSION_VALUE
    V_PARAMS = R.params_word(L, W, LANES, OUT_BYTES, STATES, MIRROR, MAX_N)
    V_LUT3, V_CLK = int(LUT3_DEPTH), int(CLK_HZ) & 0xFFFFFFFF
    NRST = R.SOFT_RESET_CYCLES
    assert R.ST_CODE_SHIFT == 8 and R.ST_IN_RESET == 4

    hcnt = Signal(intbv(0)[4:])
    nodisc = Signal(bool(0))
    taddr = Signal(modbv(0)[12:])
    tsel = Signal(intbv(0)[2:])
    clr_cnt = Signal(bool(0))
    clr_err = Signal(bool(0))
    c_total, c_busy, c_starved, c_blocked, c_words, c_stripes = [Signal(modbv(0)[32:]) for _ in range(6)]
    e_flag = Signal(bool(0))
    e_code = Signal(intbv(0)[4:])
    e_stripe = Signal(intbv(0)[32:])
    e_count = Signal(modbv(0)[32:])
    status = Signal(intbv(0)[32:])

    @always_comb
    def rg_flags():
        hold.next = hcnt != 0
        hold_start.next = hcnt == NRST
        no_discard.next = nodisc
        clr_cnt.next = wr_en and wr_addr == A_CONTROL and wr_data[1]
        clr_err.next = wr_en and wr_addr == A_CONTROL and wr_data[2]

    @always(clk.posedge)
    def rg_ctrl():
        if rst:
            hcnt.next = 0
            nodisc.next = 0
            taddr.next = 0
            tsel.next = 0
            tbl_we.next = 0
        else:
            tbl_we.next = 0
            if hcnt != 0:
                hcnt.next = hcnt - 1
            if wr_en:
                if wr_addr == A_CONTROL and wr_data[0]:
                    hcnt.next = NRST
                    nodisc.next = wr_data[3]
                elif wr_addr == A_TBL_ADDR:
                    taddr.next = wr_data[12:0]
                    tsel.next = wr_data[14:12]
                elif wr_addr == A_TBL_DATA:
                    tbl_we.next = 1
                    tbl_sel.next = tsel
                    tbl_addr.next = taddr
                    tbl_wdata.next = wr_data
                    taddr.next = taddr + 1

    @always(clk.posedge)
    def rg_count():
        if rst or clr_cnt:
            c_total.next = 0
            c_busy.next = 0
            c_starved.next = 0
            c_blocked.next = 0
            c_stripes.next = 0
        else:
            if busy:
                c_total.next = c_total + 1
            if m_tvalid and m_tready:
                c_busy.next = c_busy + 1
            if m_tvalid and not m_tready:
                c_blocked.next = c_blocked + 1
            if in_open and s_tready and not s_tvalid:
                c_starved.next = c_starved + 1
            if done:
                c_stripes.next = c_stripes + 1

    # WORDS_OUT: w_emit is a strobe with one lane, the number of words that went to the packer (0 .. LANES) with more
    if LANES == 1:
        @always(clk.posedge)
        def rg_words():
            if rst or clr_cnt:
                c_words.next = 0
            elif w_emit:
                c_words.next = c_words + 1
    else:
        @always(clk.posedge)
        def rg_words():
            if rst or clr_cnt:
                c_words.next = 0
            else:
                c_words.next = c_words + w_emit

    @always(clk.posedge)
    def rg_err():
        if rst or clr_err:
            e_flag.next = 0
            e_code.next = 0
            e_stripe.next = 0
            e_count.next = 0
        elif done and done_code != 0:
            e_count.next = e_count + 1
            if not e_flag:
                e_flag.next = 1
                e_code.next = done_code
                e_stripe.next = c_stripes

    @always_comb
    def rg_status():
        status.next = concat(intbv(0)[20:], e_code, intbv(0)[5:], in_reset, e_flag, busy)

    @always_comb
    def rg_read():
        if rd_addr == A_ID:
            rd_data.next = V_ID
        elif rd_addr == A_VERSION:
            rd_data.next = V_VERSION
        elif rd_addr == A_PARAMS:
            rd_data.next = V_PARAMS
        elif rd_addr == A_LUT3:
            rd_data.next = V_LUT3
        elif rd_addr == A_CLK:
            rd_data.next = V_CLK
        elif rd_addr == A_STATUS:
            rd_data.next = status
        elif rd_addr == A_ERR_STRIPE:
            rd_data.next = e_stripe
        elif rd_addr == A_ERR_COUNT:
            rd_data.next = e_count
        elif rd_addr == A_TBL_ADDR:
            rd_data.next = concat(intbv(0)[18:], tsel, taddr)
        elif rd_addr == A_CYC_TOTAL:
            rd_data.next = c_total
        elif rd_addr == A_CYC_BUSY:
            rd_data.next = c_busy
        elif rd_addr == A_CYC_STARVED:
            rd_data.next = c_starved
        elif rd_addr == A_CYC_BLOCKED:
            rd_data.next = c_blocked
        elif rd_addr == A_WORDS:
            rd_data.next = c_words
        elif rd_addr == A_STRIPES:
            rd_data.next = c_stripes
        elif rd_addr == A_CRC:
            rd_data.next = crc
        else:
            rd_data.next = 0

    return rg_flags, rg_ctrl, rg_count, rg_words, rg_err, rg_status, rg_read
