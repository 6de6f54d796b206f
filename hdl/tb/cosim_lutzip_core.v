// Icarus Verilog wrapper of the converted decoder core for MyHDL cosimulation: the Python test bench of
// lutzip/hdl/simulate.py drives the inputs ($from_myhdl) and samples the outputs ($to_myhdl).
`timescale 1ns/1ps
module cosim_lutzip_core;
  parameter W = 16;
  reg clk, rst;
  reg [31:0] s_axis_tdata;
  reg s_axis_tvalid, s_axis_tlast;
  wire s_axis_tready;
  wire [W-1:0] m_axis_tdata;
  wire m_axis_tvalid, m_axis_tlast, m_axis_tuser;
  reg m_axis_tready;
  reg tbl_we;
  reg [1:0] tbl_sel;
  reg [11:0] tbl_addr;
  reg [31:0] tbl_wdata;
  wire err_valid;
  wire [3:0] err_code;
  wire busy;

  initial begin
    $from_myhdl(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tlast, m_axis_tready,
                tbl_we, tbl_sel, tbl_addr, tbl_wdata);
    $to_myhdl(s_axis_tready, m_axis_tdata, m_axis_tvalid, m_axis_tlast, m_axis_tuser,
              err_valid, err_code, busy);
  end

  decoder_core dut (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(s_axis_tready),
    .s_axis_tlast(s_axis_tlast),
    .m_axis_tdata(m_axis_tdata), .m_axis_tvalid(m_axis_tvalid), .m_axis_tready(m_axis_tready),
    .m_axis_tlast(m_axis_tlast), .m_axis_tuser(m_axis_tuser),
    .tbl_we(tbl_we), .tbl_sel(tbl_sel), .tbl_addr(tbl_addr), .tbl_wdata(tbl_wdata),
    .err_valid(err_valid), .err_code(err_code), .busy(busy)
  );
endmodule
