# Package the converted lutzip_axi as a Vivado IP (docs/AXI.md). Sourced by run.tcl, which sets:
#   lutzip_part, lutzip_top_file, lutzip_top, lutzip_vendor, lutzip_library, lutzip_name, lutzip_version,
#   lutzip_ip_dir (the IP repository written here)
create_project -force lutzip_ip ./ip_proj -part $lutzip_part
add_files -norecurse $lutzip_top_file
set_property top $lutzip_top [current_fileset]
update_compile_order -fileset sources_1
ipx::package_project -root_dir $lutzip_ip_dir -vendor $lutzip_vendor -library $lutzip_library \
    -taxonomy /UserIP -import_files -set_current true
set core [ipx::current_core]
set_property name $lutzip_name $core
set_property version $lutzip_version $core
set_property display_name "lutzip decoder (AXI DMA)" $core
set_property description "lutzip weight decoder: MM2S words in, S2MM decoded words out, AXI4-Lite registers" $core
set_property vendor_display_name "lutzip" $core
# the three interfaces are inferred from the UG1118 port names; make sure of them and of clock / reset
foreach {busif mode} {s_axis slave m_axis master s_axi_ctrl slave} {
    if {[llength [ipx::get_bus_interfaces $busif -of_objects $core]] == 0} {
        error "lutzip: bus interface $busif was not inferred from the port names"
    }
    ipx::associate_bus_interfaces -busif $busif -clock aclk $core
}
ipx::associate_bus_interfaces -clock aclk -reset aresetn $core
set rst_if [ipx::get_bus_interfaces aresetn -of_objects $core]
set pol [ipx::get_bus_parameters POLARITY -of_objects $rst_if]
if {[llength $pol] == 0} { set pol [ipx::add_bus_parameter POLARITY $rst_if] }
set_property value ACTIVE_LOW $pol
# the register block: 256 bytes (docs/AXI.md)
set mm [ipx::get_memory_maps s_axi_ctrl -of_objects $core]
set blocks [ipx::get_address_blocks -of_objects $mm]
if {[llength $blocks] == 0} { set blocks [ipx::add_address_block reg0 $mm] }
set_property range 256 [lindex $blocks 0]
set_property width 32 [lindex $blocks 0]
ipx::create_xgui_files $core
ipx::update_checksums $core
ipx::check_integrity $core
ipx::save_core $core
close_project
