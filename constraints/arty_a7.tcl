# Vivado non-project batch build of the lutzip UART board for the Arty A7-35 (XC7A35TICSG324-1L).
# `lutzip board build --board arty_a7 --out DIR` writes board_arty_a7.v, arty_a7.xdc and this script to DIR;
# then, in DIR:   vivado -mode batch -source arty_a7.tcl
# Result: board_arty_a7.bit (+ utilisation and timing reports).
set part  xc7a35ticsg324-1L
set top   board_arty_a7
set here  [file dirname [file normalize [info script]]]

read_verilog [file join $here ${top}.v]
read_xdc     [file join $here arty_a7.xdc]

synth_design -top $top -part $part
opt_design
place_design
phys_opt_design
route_design

report_utilization    -file [file join $here ${top}_utilization.rpt]
report_timing_summary -file [file join $here ${top}_timing.rpt]
if {[get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]] < 0} {
    puts "WARNING: timing not met, see ${top}_timing.rpt"
}
write_bitstream -force [file join $here ${top}.bit]
