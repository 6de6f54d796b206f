"""A simple multi-cycle stand-in for ``lutzip.hdl.core.decoder_core`` (same ports, same stripes, same errors;
about three cycles per word instead of one). Selected explicitly (``get_core("stub")``, ``LUTZIP_CORE=stub``) for
tests and comparisons."""
from myhdl import Signal, always, always_comb, block, enum, intbv, modbv

ST = enum("C_HDR", "C_FETCH", "C_DEC", "C_EMIT", "C_ZERO", "C_ERR", "C_DISCARD")


@block
def core_stub(clk, rst,
              s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
              m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
              tbl_we, tbl_sel, tbl_addr, tbl_wdata,
              err_valid, err_code, busy,
              L=8, W=16, LUT3_DEPTH=4096):
    """Same ports and parameters as :func:`lutzip.hdl.core.decoder_core.decoder_core` (docs/CORE.md)."""
    lut1 = [Signal(intbv(0)[15:]) for _ in range(1 << L)]
    lut2 = [Signal(intbv(0)[23:]) for _ in range(16)]
    lut3 = [Signal(intbv(0)[W:]) for _ in range(LUT3_DEPTH)]
    n_lut3 = Signal(intbv(0)[13:])
    state = Signal(ST.C_HDR)
    acc = Signal(modbv(0)[64:])
    have = Signal(intbv(0)[7:])
    need = Signal(intbv(0)[17:])     # words still to output
    zleft = Signal(intbv(0)[17:])
    in_done = Signal(bool(0))
    code = Signal(intbv(0)[4:])
    e1 = Signal(intbv(0)[15:])
    e2 = Signal(intbv(0)[23:])
    pfx = Signal(intbv(0)[L:])
    cls = Signal(intbv(0)[4:])
    la3 = Signal(intbv(0)[12:])
    v3 = Signal(intbv(0)[W:])

    @always(clk.posedge)
    def tables():
        if tbl_we:
            if tbl_sel == 0:
                lut1[tbl_addr[L:]].next = tbl_wdata[15:0]
            elif tbl_sel == 1:
                lut2[tbl_addr[4:]].next = tbl_wdata[23:0]
            elif tbl_sel == 2:
                lut3[tbl_addr].next = tbl_wdata[W:0]
            else:
                n_lut3.next = tbl_wdata[13:0]

    @always_comb
    def c_pfx():
        pfx.next = acc[64:64 - L]

    @always_comb
    def c_l1():
        e1.next = lut1[pfx]

    @always_comb
    def c_cls():
        cls.next = e1[14:10]

    @always_comb
    def c_l2():
        e2.next = lut2[cls]

    @always_comb
    def c_l3():
        v3.next = lut3[la3]

    @always_comb
    def c_out():
        s_axis_tready.next = state == ST.C_HDR or state == ST.C_DISCARD or (state == ST.C_FETCH)
        busy.next = state != ST.C_HDR

    @always(clk.posedge)
    def fsm():
        err_valid.next = 0
        if rst:
            state.next = ST.C_HDR
            m_axis_tvalid.next = 0
        elif state == ST.C_HDR:
            m_axis_tvalid.next = 0
            if s_axis_tvalid:
                in_done.next = s_axis_tlast
                acc.next = 0
                have.next = 0
                need.next = s_axis_tdata[16:0] + 1
                if s_axis_tdata[32:16] != 0x4C5A:
                    code.next = 1
                    state.next = ST.C_ERR
                elif s_axis_tlast:
                    code.next = 4
                    state.next = ST.C_ERR
                else:
                    state.next = ST.C_FETCH
        elif state == ST.C_FETCH:
            if s_axis_tvalid:
                a = modbv(0)[64:]
                a[:] = s_axis_tdata
                acc.next = acc | (a << (32 - have))
                have.next = have + 32
                in_done.next = s_axis_tlast
                state.next = ST.C_DEC
        elif state == ST.C_DEC:
            tot = intbv(0)[6:]
            tot[:] = e1[6:0]
            c = intbv(0)[4:]
            c[:] = e1[10:6]
            k = intbv(0)[5:]
            k[:] = e2[21:16]
            if have <= 32 and not in_done:
                state.next = ST.C_FETCH
            elif not e1[14]:
                code.next = 3
                state.next = ST.C_ERR
            elif tot > have:
                code.next = 4
                state.next = ST.C_ERR
            else:
                t = modbv(0)[64:]
                t[:] = acc << c
                ix = intbv(0)[16:]
                if k != 0:
                    ix[:] = t >> (64 - k)
                acc.next = acc << tot
                have.next = have - tot
                kind = intbv(0)[2:]
                kind[:] = e2[23:21]
                if kind == 0:
                    ad = intbv(0)[17:]
                    ad[:] = e2[16:0] + ix
                    if ad >= n_lut3:
                        code.next = 5
                        state.next = ST.C_ERR
                    else:
                        la3.next = ad[12:0]
                        state.next = ST.C_EMIT
                        m_axis_tvalid.next = 0
                elif kind == 1:
                    rv = modbv(0)[W:]
                    rv[:] = e2[16:0] + ix
                    m_axis_tdata.next = rv
                    m_axis_tvalid.next = 1
                    m_axis_tlast.next = need == 1
                    m_axis_tuser.next = 0
                    state.next = ST.C_EMIT
                else:
                    if ix + 1 > need:
                        code.next = 6
                        state.next = ST.C_ERR
                    else:
                        zleft.next = ix + 1
                        state.next = ST.C_ZERO
        elif state == ST.C_EMIT:
            if not m_axis_tvalid:
                m_axis_tdata.next = v3
                m_axis_tvalid.next = 1
                m_axis_tlast.next = need == 1
                m_axis_tuser.next = 0
            elif m_axis_tready:
                m_axis_tvalid.next = 0
                need.next = need - 1
                if need == 1:
                    if in_done:
                        state.next = ST.C_HDR
                    else:
                        state.next = ST.C_DISCARD
                else:
                    state.next = ST.C_DEC
        elif state == ST.C_ZERO:
            if not m_axis_tvalid:
                m_axis_tdata.next = 0
                m_axis_tvalid.next = 1
                m_axis_tlast.next = need == 1
                m_axis_tuser.next = 0
            elif m_axis_tready:
                need.next = need - 1
                zleft.next = zleft - 1
                m_axis_tlast.next = need == 2
                if zleft == 1:
                    m_axis_tvalid.next = 0
                    if need == 1:
                        if in_done:
                            state.next = ST.C_HDR
                        else:
                            state.next = ST.C_DISCARD
                    else:
                        state.next = ST.C_DEC
        elif state == ST.C_ERR:
            if not m_axis_tvalid:
                err_valid.next = 1
                err_code.next = code
                m_axis_tdata.next = code
                m_axis_tvalid.next = 1
                m_axis_tlast.next = 1
                m_axis_tuser.next = 1
            elif m_axis_tready:
                m_axis_tvalid.next = 0
                m_axis_tuser.next = 0
                if in_done:
                    state.next = ST.C_HDR
                else:
                    state.next = ST.C_DISCARD
        else:
            if s_axis_tvalid and s_axis_tlast:
                state.next = ST.C_HDR

    return tables, c_pfx, c_l1, c_cls, c_l2, c_l3, c_out, fsm
