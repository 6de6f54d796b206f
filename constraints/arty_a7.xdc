## Arty A7-35 (Digilent) -- part: Xilinx XC7A35TICSG324-1L, 100 MHz oscillator on E3.
## Ports of lutzip.firmware.board_arty_a7 (top module board_arty_a7).
## USB-UART: FT2232HQ channel B on the fabric; uart_txd_in = FTDI -> FPGA, uart_rxd_out = FPGA -> FTDI.
set_property -dict { PACKAGE_PIN E3  IOSTANDARD LVCMOS33 } [get_ports { CLK100MHZ }]
create_clock -name sys_clk -period 10.000 -waveform {0.000 5.000} [get_ports { CLK100MHZ }]

set_property -dict { PACKAGE_PIN A9  IOSTANDARD LVCMOS33 } [get_ports { uart_txd_in }]
set_property -dict { PACKAGE_PIN D10 IOSTANDARD LVCMOS33 } [get_ports { uart_rxd_out }]

## ck_rst: the red RESET button, active low
set_property -dict { PACKAGE_PIN C2  IOSTANDARD LVCMOS33 } [get_ports { ck_rst }]

set_property -dict { PACKAGE_PIN H5  IOSTANDARD LVCMOS33 } [get_ports { led[0] }]
set_property -dict { PACKAGE_PIN J5  IOSTANDARD LVCMOS33 } [get_ports { led[1] }]
set_property -dict { PACKAGE_PIN T9  IOSTANDARD LVCMOS33 } [get_ports { led[2] }]
set_property -dict { PACKAGE_PIN T10 IOSTANDARD LVCMOS33 } [get_ports { led[3] }]

## asynchronous board I/O: the UART and the button are synchronised in the fabric
set_false_path -from [get_ports { uart_txd_in ck_rst }]
set_false_path -to [get_ports { uart_rxd_out led[*] }]

set_property CFGBVS VCCO [current_design]
set_property CONFIG_VOLTAGE 3.3 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
