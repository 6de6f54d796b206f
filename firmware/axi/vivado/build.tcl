# Synthesis, implementation and bitstream of the block design; writes lutzip.bit and lutzip.hwh with the same
# basename into the output folder (PYNQ looks for the .hwh beside the .bit). Sourced by run.tcl after the
# bd_<board>.tcl script (variables: lutzip_proj, lutzip_jobs).
set bd_file [get_files $lutzip_proj.bd]
make_wrapper -files $bd_file -top
set wrapper [glob -nocomplain ./proj/$lutzip_proj.gen/sources_1/bd/$lutzip_proj/hdl/${lutzip_proj}_wrapper.v \
    ./proj/$lutzip_proj.srcs/sources_1/bd/$lutzip_proj/hdl/${lutzip_proj}_wrapper.v]
add_files -norecurse [lindex $wrapper 0]
set_property top ${lutzip_proj}_wrapper [current_fileset]
update_compile_order -fileset sources_1
generate_target all $bd_file
launch_runs impl_1 -to_step write_bitstream -jobs $lutzip_jobs
wait_on_run impl_1
if {[get_property PROGRESS [get_runs impl_1]] != "100%"} {
    error "lutzip: implementation did not complete (see ./proj/$lutzip_proj.runs/impl_1)"
}
set bit [glob ./proj/$lutzip_proj.runs/impl_1/*.bit]
set hwh [glob -nocomplain ./proj/$lutzip_proj.gen/sources_1/bd/$lutzip_proj/hw_handoff/$lutzip_proj.hwh \
    ./proj/$lutzip_proj.srcs/sources_1/bd/$lutzip_proj/hw_handoff/$lutzip_proj.hwh]
file copy -force [lindex $bit 0] ./lutzip.bit
file copy -force [lindex $hwh 0] ./lutzip.hwh
open_run impl_1
report_utilization -file ./lutzip_utilization.rpt
report_timing_summary -file ./lutzip_timing.rpt
puts "lutzip: wrote lutzip.bit and lutzip.hwh"
