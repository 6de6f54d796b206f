"""AXI4-Lite slave protocol of ``lutzip_axi`` (docs/AXI.md): handshakes only, the registers live elsewhere.

Interface
---------
clk, rst                 clock, synchronous active-high reset
s_axi_ctrl_*             the AXI4-Lite slave port (32-bit data, ``len(awaddr)``-bit byte addresses)
wr_en, wr_addr, wr_data  one-cycle write strobe (registered) with the word index (``awaddr[.:2]``) and data;
                         only full-word writes (``wstrb`` = 0xF) strobe, others are answered and dropped
rd_addr                  word index of the read in progress (registered; ``rd_data`` must follow it
                         combinationally)
rd_data                  register value at ``rd_addr``; latched into ``rdata`` at the address handshake's
                         next cycle

The slave waits for both ``awvalid`` and ``wvalid`` before raising ``awready`` / ``wready`` for one cycle;
``bvalid`` follows the handshake and holds until ``bready``. A read raises ``arready`` for one cycle, then
``rvalid`` with the data until ``rready``. Responses are always OKAY. No outstanding transactions beyond
one write and one read.
"""
from myhdl import Signal, always, always_comb, block, intbv


@block
def axi_lite(clk, rst,
             s_axi_ctrl_awaddr, s_axi_ctrl_awvalid, s_axi_ctrl_awready, s_axi_ctrl_wdata, s_axi_ctrl_wstrb,
             s_axi_ctrl_wvalid, s_axi_ctrl_wready, s_axi_ctrl_bresp, s_axi_ctrl_bvalid, s_axi_ctrl_bready,
             s_axi_ctrl_araddr, s_axi_ctrl_arvalid, s_axi_ctrl_arready, s_axi_ctrl_rdata, s_axi_ctrl_rresp,
             s_axi_ctrl_rvalid, s_axi_ctrl_rready,
             wr_en, wr_addr, wr_data, rd_addr, rd_data):
    abits = len(s_axi_ctrl_awaddr)
    awready = Signal(bool(0))
    bvalid = Signal(bool(0))
    arready = Signal(bool(0))
    rvalid = Signal(bool(0))
    rpend = Signal(bool(0))
    rdata = Signal(intbv(0)[32:])

    @always_comb
    def lite_outs():
        s_axi_ctrl_awready.next = awready
        s_axi_ctrl_wready.next = awready
        s_axi_ctrl_bvalid.next = bvalid
        s_axi_ctrl_bresp.next = 0
        s_axi_ctrl_arready.next = arready
        s_axi_ctrl_rvalid.next = rvalid
        s_axi_ctrl_rdata.next = rdata
        s_axi_ctrl_rresp.next = 0

    @always(clk.posedge)
    def lite_write():
        if rst:
            awready.next = 0
            bvalid.next = 0
            wr_en.next = 0
        else:
            wr_en.next = 0
            if awready:  # handshake of both channels in this cycle (valid held by the master)
                awready.next = 0
                bvalid.next = 1
                if s_axi_ctrl_wstrb == 0xF:
                    wr_en.next = 1
                wr_addr.next = s_axi_ctrl_awaddr[abits:2]
                wr_data.next = s_axi_ctrl_wdata
            elif s_axi_ctrl_awvalid and s_axi_ctrl_wvalid and not bvalid:
                awready.next = 1
            if bvalid and s_axi_ctrl_bready:
                bvalid.next = 0

    @always(clk.posedge)
    def lite_read():
        if rst:
            arready.next = 0
            rvalid.next = 0
            rpend.next = 0
        else:
            if arready:  # address handshake
                arready.next = 0
                rpend.next = 1
            elif s_axi_ctrl_arvalid and not rvalid and not rpend:
                arready.next = 1
                rd_addr.next = s_axi_ctrl_araddr[abits:2]
            if rpend:
                rpend.next = 0
                rvalid.next = 1
                rdata.next = rd_data
            if rvalid and s_axi_ctrl_rready:
                rvalid.next = 0

    return lite_outs, lite_write, lite_read
