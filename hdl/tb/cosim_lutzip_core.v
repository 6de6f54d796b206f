// Icarus Verilog wrapper of the converted decoder core for MyHDL cosimulation: the Python test bench of
// lutzip/hdl/flows/simulate.py drives the inputs ($from_myhdl) and samples the outputs ($to_myhdl).
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

  // After the first reset no output may be x/z (MyHDL would read them as numbers): report them in the
  // file named by +xlog=<path>, which the Python runner checks.
  reg armed = 1'b0;
  integer xlog = 0;
  reg [1023:0] xlog_name;
  initial if ($value$plusargs("xlog=%s", xlog_name)) xlog = $fopen(xlog_name, "w");
  always @(posedge clk) begin
    if (rst) armed <= 1'b1;
    else if (armed && xlog != 0) begin
      if (^{m_axis_tvalid, s_axis_tready, err_valid, busy} === 1'bx)
        $fdisplay(xlog, "x/z on a control output at time %0t", $time);
      if (m_axis_tvalid === 1'b1 && ^{m_axis_tdata, m_axis_tlast, m_axis_tuser} === 1'bx)
        $fdisplay(xlog, "x/z on m_axis data/last/user at time %0t", $time);
      if (err_valid === 1'b1 && ^err_code === 1'bx)
        $fdisplay(xlog, "x/z on err_code at time %0t", $time);
      $fflush(xlog);
    end
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
