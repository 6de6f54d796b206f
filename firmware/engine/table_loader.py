"""Command executor: feeds stream words to the decoder core and table writes to its table port, in ring order.

Table writes and barriers wait until the core is idle (no stripe in flight, every stripe's result out).
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv


@block
def table_loader(clk, rst, rd_data, rd_valid, rd_ready,
                 s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                 tbl_we, tbl_sel, tbl_addr, tbl_wdata,
                 core_busy, stripes_done, results_idle, barrier_req):
    """``stripes_done`` (16-bit wrapping count of stripes the result path has finished) and ``results_idle``
    (nothing left to send for them) tell when the decoder is idle."""
    tsel = Signal(intbv(0)[2:])
    taddr = Signal(modbv(0)[12:])
    sent = Signal(modbv(0)[16:])
    idle = Signal(bool(0))
    tag = Signal(intbv(0)[2:])
    go = Signal(bool(0))

    @always_comb
    def comb_idle():
        idle.next = (not core_busy) and sent == stripes_done and results_idle
        tag.next = rd_data[34:32]

    @always_comb
    def comb():
        s_axis_tdata.next = rd_data[32:0]
        s_axis_tlast.next = tag == 1
        s_axis_tvalid.next = rd_valid and tag[1] == 0
        tbl_sel.next = tsel
        tbl_addr.next = taddr
        tbl_wdata.next = rd_data[32:0]
        tbl_we.next = rd_valid and tag == 3 and idle
        if tag[1] == 0:
            rd_ready.next = s_axis_tready
        elif tag == 3:
            rd_ready.next = idle
        elif rd_data[8:4] == 1:
            rd_ready.next = idle
        else:
            rd_ready.next = 1

    @always_comb
    def comb_go():
        go.next = rd_valid and tag == 2 and rd_data[8:4] == 1 and idle

    @always(clk.posedge)
    def seq():
        barrier_req.next = 0
        if rst:
            sent.next = 0
            taddr.next = 0
            tsel.next = 0
        else:
            if rd_valid and tag[1] == 0 and s_axis_tready and tag == 1:
                sent.next = sent + 1
            if rd_valid and tag == 2:
                if rd_data[8:4] == 0:
                    tsel.next = rd_data[2:0]
                    taddr.next = rd_data[28:16]
            if rd_valid and tag == 3 and idle:
                taddr.next = taddr + 1
            if go:
                barrier_req.next = 1

    return comb_idle, comb, comb_go, seq
