# Block design for the Kria KV260 (Zynq UltraScale+ xck26-sfvc784-2LV-c): PS8, AXI DMA 7.1 in simple mode
# (26-bit length register, 64-bit addresses, 64-bit S2MM stream: lutzip_axi with OUT_BYTES=8), HP0 for the
# DMA's memory side, HPM0_FPD for the registers, pl_clk0 = lutzip_fclk_mhz (100). Sourced by run.tcl after
# package_ip.tcl (same variables as bd_pynq_z2.tcl).
create_project -force $lutzip_proj ./proj -part $lutzip_part
set_property board_part $lutzip_board_part [current_project]
set_property ip_repo_paths [list $lutzip_ip_dir] [current_project]
update_ip_catalog
create_bd_design $lutzip_proj
set ps [create_bd_cell -type ip -vlnv xilinx.com:ip:zynq_ultra_ps_e:3.4 zynq_ultra_ps_e_0]
apply_bd_automation -rule xilinx.com:bd_rule:zynq_ultra_ps_e -config {apply_board_preset "1"} $ps
set_property -dict [list CONFIG.PSU__USE__S_AXI_GP2 {1} CONFIG.PSU__USE__M_AXI_GP0 {1} \
    CONFIG.PSU__USE__M_AXI_GP1 {0} CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ $lutzip_fclk_mhz] $ps
set dma [create_bd_cell -type ip -vlnv xilinx.com:ip:axi_dma:7.1 axi_dma_0]
set_property -dict [list CONFIG.c_include_sg {0} CONFIG.c_sg_length_width {26} CONFIG.c_addr_width {64} \
    CONFIG.c_sg_include_stscntrl_strm {0} CONFIG.c_m_axi_mm2s_data_width {64} \
    CONFIG.c_m_axis_mm2s_tdata_width {32} CONFIG.c_m_axi_s2mm_data_width {64} \
    CONFIG.c_s_axis_s2mm_tdata_width {64} CONFIG.c_mm2s_burst_size {64} CONFIG.c_s2mm_burst_size {64}] $dma
set lz [create_bd_cell -type ip -vlnv $lutzip_vlnv lutzip_axi_0]
connect_bd_intf_net [get_bd_intf_pins axi_dma_0/M_AXIS_MM2S] [get_bd_intf_pins lutzip_axi_0/s_axis]
connect_bd_intf_net [get_bd_intf_pins lutzip_axi_0/m_axis] [get_bd_intf_pins axi_dma_0/S_AXIS_S2MM]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Master "/zynq_ultra_ps_e_0/M_AXI_HPM0_FPD" Clk "Auto"} [get_bd_intf_pins axi_dma_0/S_AXI_LITE]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Master "/zynq_ultra_ps_e_0/M_AXI_HPM0_FPD" Clk "Auto"} [get_bd_intf_pins lutzip_axi_0/s_axi_ctrl]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Slave "/zynq_ultra_ps_e_0/S_AXI_HP0_FPD" Clk "Auto"} [get_bd_intf_pins axi_dma_0/M_AXI_MM2S]
apply_bd_automation -rule xilinx.com:bd_rule:axi4 \
    -config {Slave "/zynq_ultra_ps_e_0/S_AXI_HP0_FPD" Clk "Auto"} [get_bd_intf_pins axi_dma_0/M_AXI_S2MM]
set rstblk [get_bd_cells -filter {VLNV =~ "*proc_sys_reset*"}]
connect_bd_net -net pl_clk0 [get_bd_pins zynq_ultra_ps_e_0/pl_clk0] [get_bd_pins lutzip_axi_0/aclk]
connect_bd_net [get_bd_pins [lindex $rstblk 0]/peripheral_aresetn] [get_bd_pins lutzip_axi_0/aresetn]
assign_bd_address
validate_bd_design
save_bd_design
