"""The portable decoder core (docs/CORE.md): stripes of docs/FORMAT.md in, one decoded word per cycle out.

Pipeline (each box a file of :mod:`lutzip.hdl`)::

    s_axis -> F front (window or vector; + lut1_table: the only 1-cycle loop) -> S2 lut2_stage
           -> S3 index_stage -> C count_stage -> symbol FIFO -> X expand_stage (+ lut3_ram) -> out FIFO -> m_axis

* ``FRONT``: ``"window"`` (:mod:`lutzip.hdl.fronts.window.front_window`: a 4-word input FIFO, ``s_axis_tready`` =
  not full (registered count), and the 64-bit bit window loop) or ``"vector"``
  (:mod:`lutzip.hdl.fronts.vector.front_vector`: next positions precomputed per word, a select-only loop).
* ``STEP`` (window front): ``"adder"`` steps by ``ptr + (c+k)`` and a shifter (small), ``"onehot"`` by AND-OR
  selects with LUT1's one-hot ``c+k`` (faster, ~1500 LUT4 more); the one-hot step applies with the block-RAM
  LUT1 and L <= 11, elsewhere the adder step is built
  (:func:`lutzip.hdl.fronts.window.front_window.window_step`). Ports, words, errors and latency are the same.
* F issues one symbol token per cycle. After ``n`` symbols it moves straight on to the next stripe (header
  and window words taken in the same cycle as the n-th symbol; ``n`` travels with the first symbol token),
  so consecutive stripes follow without a bubble. With zero runs it may run speculatively past a stripe's end and is flushed by C (``flush``);
  the zero-run expansion downstream hides those cycles while the symbol FIFO holds entries.
* Flow control is credit based and uses registered counters only: F issues while the tokens in flight
  plus the symbol FIFO entries are below ``SF_DEPTH - 1``; X issues while the words in flight plus the output
  FIFO entries are below ``OF_DEPTH - 1``. ``m_axis_tready`` low therefore only fills the output FIFO; the
  rate is one word per cycle as long as it is ready.
* Errors become one marker word (tuser = 1, tlast = 1, tdata = code) and an ``err_valid`` pulse; the input is
  discarded through tlast and the next packet is parsed as a header. No state waits on anything but input
  words and output space, so garbage never hangs the core.

* ``STATES``: 1, or 2 code tables (format version 5; L <= 11): LUT1 gets 2^(L+1) entries and a next-state
  bit, the window loop a state register (:mod:`lutzip.hdl.fronts.window.loop_window_adder`), the vector front
  TL copies and next-position vectors per state and the state beside its pointer
  (:mod:`lutzip.hdl.fronts.vector.loop_vector`).

* ``MIRROR``: 1 adds the row stripes of docs/FORMAT.md section 3.1 (docs/CORE.md section 7):
  :mod:`lutzip.hdl.stages.row_header` in front of F (takes a row stripe's two extra words off the input, checks
  them, gives F a plain header) and :mod:`lutzip.hdl.stages.row_mirror` after the output FIFO (outputs the mirrored
  rows' tails from a row buffer of ``MAX_N / 2`` words); ``err_valid`` / ``err_code`` then come from
  ``row_mirror``, with each marker word. ``MIRROR=0`` (the default) builds the core as before, text for text.

Tables: ``tbl_sel`` 0 LUT1 (addr < 2^L; STATES=2: addr < 2^(L+1), state << L | prefix), 1 LUT2 (addr < 16), 2 LUT3 (addr < LUT3_DEPTH), 3 config (addr 0 =
number of valid LUT3 entries, clipped to LUT3_DEPTH; with ``MIRROR=1`` addr 1 bit 0 = the table set has 8-bit
words); other addresses are ignored. Tables and config survive
``rst``.

* ``TBL_REG``: 1 registers the decoded table writes (write enables, addresses, data) inside the core: every LUT
  write lands one cycle after its ``tbl_we`` cycle, and a RAM's write and read enables come straight from a
  flip-flop (the ECP5 vector-front build: LUT1's decode fanned out to 64 TL block RAMs, 2026-12-07 night). Tables
  are written only while the core is idle, and the first stripe word after a write reaches LUT1 / TL later than
  that. ``TBL_REG=0`` (the default) builds the core as before, text for text.
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.hdl.core.ports import check_mirror, check_states, check_tbl_reg
from lutzip.hdl.fronts.vector.front_vector import front_vector
from lutzip.hdl.fronts.window.front_window import front_window, window_step
from lutzip.hdl.fronts.window.loop_window_onehot import onehot_width
from lutzip.hdl.stages.count_stage import SF_WIDTH, count_stage
from lutzip.hdl.stages.expand_stage import expand_stage
from lutzip.hdl.stages.index_stage import index_stage
from lutzip.hdl.stages.lut1_table import lut1_table
from lutzip.hdl.stages.lut2_stage import lut2_stage
from lutzip.hdl.stages.lut3_ram import lut3_ram
from lutzip.hdl.stages.row_header import row_header
from lutzip.hdl.stages.row_mirror import row_mirror
from lutzip.hdl.stages.sync_fifo import sync_fifo

SF_DEPTH = 16          # symbol-FIFO entries (window front): C decides and writes in two cycles; 8 lost ~0.04 % of cycles on zero-run streams
SF_DEPTH_VECTOR = 32  # the vector front's token pipeline is two stages longer: 16 lost 0.06-0.2 % at stripe ends (2026-12-07)
TAG_BITS = 4
OF_DEPTH = 8


@block
def decoder_core(clk, rst,
                 s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                 m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                 tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                 err_valid, err_code, busy,
                 L=8, W=16, LUT3_DEPTH=4096, LUT1_RAM="block", FRONT="window", STEP="adder", STATES=1, MIRROR=0,
                 MAX_N=512, TBL_REG=0):
    # every parameter checked up front (UnsupportedError names the parameter)
    if LUT1_RAM not in ("block", "distributed"):
        raise UnsupportedError(f"LUT1_RAM = {LUT1_RAM!r}: 'block' or 'distributed'")
    if FRONT not in ("window", "vector"):
        raise UnsupportedError(f"FRONT = {FRONT!r}: 'window' or 'vector'")
    if not 1 <= L <= 12:
        raise UnsupportedError(f"L = {L}: LUT1 address bits must be 1..12")
    if W not in (8, 16):
        raise UnsupportedError(f"W = {W}: output words are 8 or 16 bits")
    if not 1 <= LUT3_DEPTH <= 4096:
        raise UnsupportedError(f"LUT3_DEPTH = {LUT3_DEPTH}: must be 1..4096")
    check_states(STATES, L, FRONT)
    check_mirror(MIRROR, MAX_N)
    check_tbl_reg(TBL_REG)
    lut1_sync = LUT1_RAM == "block"
    vector = FRONT == "vector"
    # the window front's decode step: STEP="onehot" where it applies (block-RAM LUT1, L <= 11), else the adder
    # step; the vector front has no step (STEP is checked, then ignored)
    step = window_step(STEP, lut1_sync, L, STATES)
    onehot = step == "onehot" and not vector
    sf_depth = SF_DEPTH_VECTOR if vector else SF_DEPTH
    abits = max(1, (LUT3_DEPTH - 1).bit_length())
    # LUT1: 2^L entries valid|class|c|c+k; with two code tables (STATES=2) 2^(L+1) entries addressed by
    # state << L | prefix, each with the next state in bit 15 (docs/FORMAT.md section 2.1)
    lut1_ab = L + STATES - 1
    lut1_dw = 14 + STATES
    n_lut1 = 1 << lut1_ab

    # ---------------------------------------------------------------- table writes
    lut1_we = Signal(bool(0))
    lut1_wa = Signal(intbv(0)[lut1_ab:])
    lut1_wd = Signal(intbv(0)[lut1_dw:])
    lut2_we = Signal(bool(0))
    lut2_wa = Signal(intbv(0)[4:])
    lut2_wd = Signal(intbv(0)[23:])
    lut3_we = Signal(bool(0))
    lut3_wa = Signal(intbv(0)[abits:])
    lut3_wd = Signal(intbv(0)[W:])
    n_lut3 = Signal(intbv(0)[13:])

    if TBL_REG:
        # the decoded write enables, addresses and data from flip-flops: each table written one cycle later
        # (tables are written only while the core is idle), no decode logic between a flip-flop and a RAM's enable
        @always(clk.posedge)
        def tbl_decode():
            lut1_we.next = tbl_we and tbl_sel == 0 and tbl_addr < n_lut1
            lut2_we.next = tbl_we and tbl_sel == 1 and tbl_addr < 16
            lut3_we.next = tbl_we and tbl_sel == 2 and tbl_addr < LUT3_DEPTH
            lut1_wa.next = tbl_addr[lut1_ab:0]
            lut2_wa.next = tbl_addr[4:0]
            lut3_wa.next = tbl_addr[abits:0]
            lut1_wd.next = tbl_wdata[lut1_dw:0]
            lut2_wd.next = tbl_wdata[23:0]
            lut3_wd.next = tbl_wdata[W:0]
    else:
        @always_comb
        def tbl_decode():
            lut1_we.next = tbl_we and tbl_sel == 0 and tbl_addr < n_lut1
            lut2_we.next = tbl_we and tbl_sel == 1 and tbl_addr < 16
            lut3_we.next = tbl_we and tbl_sel == 2 and tbl_addr < LUT3_DEPTH
            lut1_wa.next = tbl_addr[lut1_ab:0]
            lut2_wa.next = tbl_addr[4:0]
            lut3_wa.next = tbl_addr[abits:0]
            lut1_wd.next = tbl_wdata[lut1_dw:0]
            lut2_wd.next = tbl_wdata[23:0]
            lut3_wd.next = tbl_wdata[W:0]
    # the vector front's TL copies take their c+k (and next-state) bits beside LUT1's write
    tl_wdata = lut1_wd if TBL_REG else tbl_wdata

    @always(clk.posedge)
    def tbl_config():
        if tbl_we and tbl_sel == 3 and tbl_addr == 0:
            if tbl_wdata > LUT3_DEPTH:
                n_lut3.next = LUT3_DEPTH
            else:
                n_lut3.next = tbl_wdata[13:0]

    if MIRROR:
        cfg_w8 = Signal(bool(0))

        @always(clk.posedge)
        def tbl_config_rows():
            if tbl_we and tbl_sel == 3 and tbl_addr == 1:
                cfg_w8.next = tbl_wdata[0]

        # row_header in front of F: F reads f_tdata .. instead of the input port
        f_tdata = Signal(intbv(0)[32:])
        f_tvalid, f_tready, f_tlast = [Signal(bool(0)) for _ in range(3)]
        rd_err = Signal(intbv(0)[4:])
        rd_rows = Signal(bool(0))
        rd_neg = Signal(intbv(0)[2:])
        rd_nm1 = Signal(intbv(0)[16:])
        rd_modes = Signal(intbv(0)[32:])
        rd_valid, rd_ready, rh_busy = [Signal(bool(0)) for _ in range(3)]
        rhead = row_header(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                           f_tdata, f_tvalid, f_tready, f_tlast, rd_err, rd_rows, rd_neg, rd_nm1, rd_modes,
                           rd_valid, rd_ready, cfg_w8, rh_busy, W=W, MAX_N=MAX_N)

    # ---------------------------------------------------------------- F: front end -> tokens t1_*
    sf_credit = Signal(bool(0))
    flush = Signal(bool(0))
    # stripe tags: more values than stripes F can start while a flush is on its way, so a late flush of an
    # earlier stripe is never taken for the current one
    flush_tag = Signal(intbv(0)[TAG_BITS:])
    t1_valid, t1_hdr = Signal(bool(0)), Signal(bool(0))
    t1_ferr = Signal(intbv(0)[4:])
    t1_sym = Signal(intbv(0)[32:])
    t1_cls = Signal(intbv(0)[4:])
    t1_c = Signal(intbv(0)[4:])
    f_idle = Signal(bool(0))
    t1_first, t2_first, t3_first = [Signal(bool(0)) for _ in range(3)]
    t1_n, t2_n = [Signal(intbv(0)[16:]) for _ in range(2)]
    t3_n = Signal(intbv(0)[17:])   # n itself (S3 adds the 1 to the header's n - 1)
    t1_tag, t2_tag, t3_tag = [Signal(intbv(0)[TAG_BITS:]) for _ in range(3)]
    lut1_addr = Signal(intbv(0)[lut1_ab:])
    lut1_q = Signal(intbv(0)[lut1_dw:])
    tok_issued = Signal(bool(0))   # F issued a token last cycle (counted against the symbol-FIFO credits)
    f_inflight = Signal(bool(0))   # tokens between F and S2 (vector front)
    # the one-hot step reads a one-hot c+k stored beside each LUT1 entry (loop_window_onehot)
    n_oh = onehot_width(L) if onehot else 0
    lut1_oh = Signal(intbv(0)[n_oh:]) if n_oh else None
    lut1_re = Signal(bool(1)) if n_oh else None
    lut1_t2 = Signal(intbv(0)[6:]) if n_oh else None   # a second copy of c+k (the one-hot step's yw adder)
    lut1 = lut1_table(clk, lut1_we, lut1_wa, lut1_wd, lut1_addr, lut1_q, lut1_oh, lut1_re, lut1_t2, L=lut1_ab,
                      SYNC=lut1_sync, OH=n_oh, WIDTH=lut1_dw)
    if vector and MIRROR:
        front = front_vector(clk, rst, f_tdata, f_tvalid, f_tready, f_tlast,
                              lut1_we, lut1_wa, tl_wdata, lut1_addr, lut1_q, sf_credit, flush, flush_tag,
                              t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n, t1_tag, f_idle,
                              tok_issued, f_inflight, L=L, LUT1_SYNC=lut1_sync,
                              **({"STATES": STATES} if STATES != 1 else {}))
    elif MIRROR:
        front = front_window(clk, rst, f_tdata, f_tvalid, f_tready, f_tlast,
                              lut1_addr, lut1_q, sf_credit, flush, flush_tag,
                              t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n, t1_tag, f_idle,
                              tok_issued, f_inflight, lut1_oh=lut1_oh, lut1_re=lut1_re, lut1_t2=lut1_t2, L=L,
                              LUT1_SYNC=lut1_sync, STEP=step, STATES=STATES)
    elif vector:
        front = front_vector(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                              lut1_we, lut1_wa, tl_wdata, lut1_addr, lut1_q, sf_credit, flush, flush_tag,
                              t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n, t1_tag, f_idle,
                              tok_issued, f_inflight, L=L, LUT1_SYNC=lut1_sync,
                              **({"STATES": STATES} if STATES != 1 else {}))
    else:
        front = front_window(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                              lut1_addr, lut1_q, sf_credit, flush, flush_tag,
                              t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c, t1_first, t1_n, t1_tag, f_idle,
                              tok_issued, f_inflight, lut1_oh=lut1_oh, lut1_re=lut1_re, lut1_t2=lut1_t2, L=L,
                              LUT1_SYNC=lut1_sync, STEP=step, STATES=STATES)

    # ---------------------------------------------------------------- S2, S3
    t2_valid, t2_hdr = Signal(bool(0)), Signal(bool(0))
    t2_ferr = Signal(intbv(0)[4:])
    t2_sh = Signal(modbv(0)[32:])
    t2_kind = Signal(intbv(0)[2:])
    t2_k = Signal(intbv(0)[5:])
    t2_param = Signal(intbv(0)[16:])
    s2 = lut2_stage(clk, rst, lut2_we, lut2_wa, lut2_wd, t1_valid, t1_hdr, t1_ferr, t1_sym, t1_cls, t1_c,
                    t1_first, t1_n, t1_tag, t2_valid, t2_hdr, t2_ferr, t2_sh, t2_kind, t2_k, t2_param,
                    t2_first, t2_n, t2_tag)
    t3_valid, t3_hdr = Signal(bool(0)), Signal(bool(0))
    t3_ferr = Signal(intbv(0)[4:])
    t3_kind = Signal(intbv(0)[2:])
    t3_cnt = Signal(intbv(0)[17:])
    t3_val = Signal(intbv(0)[17:])
    t3_l3err = Signal(bool(0))
    s3 = index_stage(clk, rst, n_lut3, t2_valid, t2_hdr, t2_ferr, t2_sh, t2_kind, t2_k, t2_param,
                     t2_first, t2_n, t2_tag, t3_valid, t3_hdr, t3_ferr, t3_kind, t3_cnt, t3_val, t3_l3err,
                     t3_first, t3_n, t3_tag)

    # ---------------------------------------------------------------- C + symbol FIFO
    c_push = Signal(bool(0))
    c_data = Signal(intbv(0)[SF_WIDTH:])
    c_drop = Signal(bool(0))
    c_active = Signal(bool(0))
    if MIRROR:
        # errors are reported by row_mirror, with each marker word it outputs
        c_err_valid = Signal(bool(0))
        c_err_code = Signal(intbv(0)[4:])
        cnt = count_stage(clk, rst, t3_valid, t3_hdr, t3_ferr, t3_kind, t3_cnt, t3_val, t3_l3err, t3_first, t3_n,
                          t3_tag, c_push, c_data, c_drop, flush, flush_tag, c_err_valid, c_err_code, c_active)
    else:
        cnt = count_stage(clk, rst, t3_valid, t3_hdr, t3_ferr, t3_kind, t3_cnt, t3_val, t3_l3err, t3_first, t3_n,
                          t3_tag, c_push, c_data, c_drop, flush, flush_tag, err_valid, err_code, c_active)
    sf_pop = Signal(bool(0))
    sf_rdata = Signal(intbv(0)[SF_WIDTH:])
    sf_count = Signal(intbv(0, min=0, max=sf_depth + 1))
    sf_nonempty = Signal(bool(0))
    sf_used = Signal(intbv(0, min=0, max=sf_depth + 1))
    sym_fifo = sync_fifo(clk, rst, c_push, c_data, sf_pop, sf_rdata, sf_count, DEPTH=sf_depth)

    sf_credit_r = Signal(bool(0))
    reg_credit = vector or n_oh > 0   # fronts whose control starts from flip-flops
    sf_pop_q = Signal(bool(0))
    sf_pop_c = Signal(bool(0))

    @always_comb
    def sf_flags():
        sf_nonempty.next = sf_count != 0
        if reg_credit:
            # registered (one cycle late, so one entry more of margin): F's control starts from flip-flops
            sf_credit.next = sf_credit_r
        else:
            sf_credit.next = sf_used < sf_depth - 1

    @always_seq(clk.posedge, reset=rst)
    def sf_credit_reg():
        sf_credit_r.next = sf_used < sf_depth - 2

    @always_seq(clk.posedge, reset=rst)
    def sf_credits():
        # tokens issued by F (counted from F's token register) minus tokens dropped by C minus entries popped by X
        # (vector front: X's pops counted one cycle late, from a register: conservative, and no path from the
        # symbol FIFO's head through X's pop decision into this counter)
        if tok_issued:
            if c_drop and sf_pop_c:
                sf_used.next = sf_used - 1
            elif not c_drop and not sf_pop_c:
                sf_used.next = sf_used + 1
        else:
            if c_drop and sf_pop_c:
                sf_used.next = sf_used - 2
            elif c_drop or sf_pop_c:
                sf_used.next = sf_used - 1

    @always_seq(clk.posedge, reset=rst)
    def sf_pop_reg():
        sf_pop_q.next = sf_pop

    @always_comb
    def sf_pop_count():
        if vector:
            sf_pop_c.next = sf_pop_q
        else:
            sf_pop_c.next = sf_pop

    # ---------------------------------------------------------------- X + LUT3 + output FIFO
    lut3_raddr = Signal(intbv(0)[abits:])
    lut3_q = Signal(intbv(0)[W:])
    lut3 = lut3_ram(clk, lut3_we, lut3_wa, lut3_wd, lut3_raddr, lut3_q, DEPTH=LUT3_DEPTH)
    of_credit = Signal(bool(0))
    x_push = Signal(bool(0))
    x_data = Signal(intbv(0)[W + 2:])
    x1_valid = Signal(bool(0))
    xs = expand_stage(clk, rst, sf_rdata, sf_nonempty, sf_pop, of_credit, lut3_raddr, lut3_q,
                      x_push, x_data, x1_valid, W=W)
    of_pop = Signal(bool(0))
    of_rdata = Signal(intbv(0)[W + 2:])
    of_count = Signal(intbv(0, min=0, max=OF_DEPTH + 1))
    of_used = Signal(intbv(0, min=0, max=OF_DEPTH + 1))
    out_fifo = sync_fifo(clk, rst, x_push, x_data, of_pop, of_rdata, of_count, DEPTH=OF_DEPTH)
    m_valid = Signal(bool(0))

    @always_comb
    def of_flags():
        of_credit.next = of_used < OF_DEPTH - 1

    @always_seq(clk.posedge, reset=rst)
    def of_valid():
        # m_axis_tvalid from a flip-flop: the output FIFO holds an entry next cycle
        m_valid.next = x_push or of_count > 1 or (of_count == 1 and not of_pop)

    @always_comb
    def of_handshake():
        # not gated by rst (everything it drives is reset then anyway), so it is not derived from the
        # m_axis_tvalid output, whose logic sits beside the port
        of_pop.next = m_valid and m_axis_tready

    @always_comb
    def m_side():
        m_axis_tvalid.next = m_valid and not rst
        m_axis_tdata.next = of_rdata[W:0]
        m_axis_tlast.next = of_rdata[W]
        m_axis_tuser.next = of_rdata[W + 1]

    @always_seq(clk.posedge, reset=rst)
    def of_credits():
        if x1_valid and not of_pop:
            of_used.next = of_used + 1
        elif of_pop and not x1_valid:
            of_used.next = of_used - 1

    @always_seq(clk.posedge, reset=rst)
    def busy_flag():
        busy.next = (not f_idle) or c_active or f_inflight or t1_valid or t2_valid or t3_valid or c_push or sf_used != 0 or of_used != 0

    if not MIRROR:
        return (tbl_decode, tbl_config, lut1, front, s2, s3, cnt, sf_flags,
                sf_credits, sf_pop_reg, sf_pop_count, sf_credit_reg, sym_fifo, lut3, xs, out_fifo, of_flags, of_valid,
                of_handshake, m_side, of_credits, busy_flag)

    # ---------------------------------------------------------------- MIRROR=1: row_mirror after the output FIFO
    # (m_side, of_handshake and busy_flag above stay unused: their outputs are replaced below)
    r_tdata = Signal(intbv(0)[W:])
    r_tvalid, r_tready, r_tlast, r_tuser, rm_busy, core_busy = [Signal(bool(0)) for _ in range(6)]

    @always_comb
    def of_handshake_rows():
        of_pop.next = m_valid and r_tready

    @always_comb
    def m_side_rows():
        r_tvalid.next = m_valid
        r_tdata.next = of_rdata[W:0]
        r_tlast.next = of_rdata[W]
        r_tuser.next = of_rdata[W + 1]

    rmir = row_mirror(clk, rst, r_tdata, r_tvalid, r_tready, r_tlast, r_tuser,
                      rd_err, rd_rows, rd_neg, rd_nm1, rd_modes, rd_valid, rd_ready,
                      m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                      err_valid, err_code, rm_busy, MAX_N=MAX_N)

    @always_seq(clk.posedge, reset=rst)
    def busy_flag_rows():
        core_busy.next = (not f_idle) or c_active or f_inflight or t1_valid or t2_valid or t3_valid or c_push or \
            sf_used != 0 or of_used != 0

    @always_comb
    def busy_rows():
        busy.next = core_busy or rh_busy or rm_busy

    return (tbl_decode, tbl_config, tbl_config_rows, rhead, lut1, front, s2, s3, cnt, sf_flags,
            sf_credits, sf_pop_reg, sf_pop_count, sf_credit_reg, sym_fifo, lut3, xs, out_fifo, of_flags, of_valid,
            of_handshake_rows, m_side_rows, of_credits, busy_flag_rows, busy_rows, rmir)

