# Block design for PYNQ-Z2 (xc7z020clg400-1): PS7, AXI DMA 7.1 in simple mode (no scatter-gather, 26-bit
# length register), HP0 for the DMA's memory side, GP0 for the registers, FCLK0 = lutzip_fclk_mhz (100).
# Sourced by run.tcl after package_ip.tcl (variables: lutzip_part, lutzip_board_part, lutzip_vlnv,
# lutzip_ip_dir, lutzip_fclk_mhz, lutzip_proj).
create_project -force $lutzip_proj ./proj -part $lutzip_part
set_property board_part $lutzip_board_part [current_project]
set_property ip_repo_paths [list $lutzip_ip_dir] [current_project]
update_ip_catalog
create_bd_design $lutzip_proj
set ps [create_bd_cell -type ip -vlnv xilinx.com:ip:processing_system7:5.5 processing_system7_0]
apply_bd_automation -rule xilinx.com:bd_rule:processing_system7 \
    -config {make_external "FIXED_IO, DDR" apply_board_preset "1" Master "Disable" Slave "Disable"} $ps
set_property -dict [list CONFIG.PCW_USE_S_AXI_HP0 {1} CONFIG.PCW_USE_M_AXI_GP0 {1} \
    CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ $lutzip_fclk_mhz CONFIG.PCW_EN_CLK0_PORT {1}] $ps
set dma [create_bd_cell -type ip -vlnv xilinx.com:ip:axi_dma:7.1 axi_dma_0]
set_property -dict [list CONFIG.c_include_sg {0} CONFIG.c_sg_length_width {26} \
    CONFIG.c_sg_include_stscntrl_strm {0} CONFIG.c_m_axi_mm2s_data_width {32} \
    CONFIG.c_m_axis_mm2s_tdata_width {32} CONFIG.c_m_axi_s2mm_data_width {32} \
    CONFIG.c_s_axis_s2mm_tdata_width {32} CONFIG.c_mm2s_burst_size {64} CONFIG.c_s2mm_burst_size {64}] $dma
set lz [create_bd_cell -type ip -vlnv $lutzip_vlnv lutzip_axi_0]
connect_bd_intf_net [get_bd_intf_pins axi_dma_0/M_AXIS_MM2S] [get_bd_intf_pins lutzip_axi_0/s_axis]
connect_bd_intf_net [get_bd_intf_pins lutzip_axi_0/m_axis] [get_bd_intf_pins axi_dma_0/S_AXIS_S2MM]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Master "/processing_system7_0/M_AXI_GP0" Clk "Auto"} [get_bd_intf_pins axi_dma_0/S_AXI_LITE]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Master "/processing_system7_0/M_AXI_GP0" Clk "Auto"} [get_bd_intf_pins lutzip_axi_0/s_axi_ctrl]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Slave "/processing_system7_0/S_AXI_HP0" Clk "Auto"} [get_bd_intf_pins axi_dma_0/M_AXI_MM2S]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Slave "/processing_system7_0/S_AXI_HP0" Clk "Auto"} [get_bd_intf_pins axi_dma_0/M_AXI_S2MM]
# the stream side runs on FCLK0 with the peripheral reset of the automation's reset block
set rstblk [get_bd_cells -filter {VLNV =~ "*proc_sys_reset*"}]
connect_bd_net -net fclk0 [get_bd_pins processing_system7_0/FCLK_CLK0] [get_bd_pins lutzip_axi_0/aclk]
connect_bd_net [get_bd_pins [lindex $rstblk 0]/peripheral_aresetn] [get_bd_pins lutzip_axi_0/aresetn]
assign_bd_address
validate_bd_design
save_bd_design
