-- What the GHDL test benches of the converted designs share (tb_lutzip_core.vhd: the decoder core,
-- tb_lutzip_lanes.vhd: the N-lane decoder): the stimulus file's lines and its C / Y header lines, the m_axis
-- ready pattern, and the output file's fields and end lines. The file formats are described in
-- lutzip/hdl/flows/simulate.py; the Verilator harnesses share tb_lutzip_common.h in the same way.
library ieee;
use ieee.std_logic_1164.all;
use std.textio.all;

package tb_lutzip_pkg is
  -- the m_axis_tready pattern (Y lines), repeated over the run
  type ready_t is array (0 to 4095) of std_logic;

  -- the next command line into li, skipping comments and blank lines; ok is false at the end of the file
  procedure next_line(file f : text; li : inout line; ok : out boolean);
  -- the rest of a C line: the cycle limit and the drain (quiet cycles before the end)
  procedure read_c(li : inout line; max_cycles, drain : out natural; stim : string);
  -- the rest of a Y line: 32 ready bits (first cycle in the MSB) appended to ready(0 to plen - 1)
  procedure read_y(li : inout line; ready : inout ready_t; plen : inout natural; stim : string);
  -- no Y line: ready in every cycle
  procedure ready_default(ready : inout ready_t; plen : inout natural);
  -- " n" appended to an output line
  procedure wint(lo : inout line; n : integer);
  -- the output file's last line: "Z k" (drained) or "X k" (cycle limit)
  procedure write_end(file f : text; lo : inout line; tag : character; k : natural);
end package;

package body tb_lutzip_pkg is
  procedure next_line(file f : text; li : inout line; ok : out boolean) is
  begin
    while not endfile(f) loop
      readline(f, li);
      if li'length > 0 and li.all(li'low) /= '#' then
        ok := true;
        return;
      end if;
    end loop;
    ok := false;
  end procedure;

  procedure read_c(li : inout line; max_cycles, drain : out natural; stim : string) is
    variable n1, n2 : integer;
    variable ok1, ok2 : boolean;
  begin
    read(li, n1, ok1);
    read(li, n2, ok2);
    assert ok1 and ok2 report "bad C line in " & stim severity failure;
    max_cycles := n1; drain := n2;
  end procedure;

  procedure read_y(li : inout line; ready : inout ready_t; plen : inout natural; stim : string) is
    variable v32 : std_logic_vector(31 downto 0);
    variable ok  : boolean;
  begin
    hread(li, v32, ok);
    assert ok report "bad Y line in " & stim severity failure;
    assert plen + 32 <= ready_t'length report "ready pattern too long in " & stim severity failure;
    for b in 31 downto 0 loop
      ready(plen) := v32(b);
      plen := plen + 1;
    end loop;
  end procedure;

  procedure ready_default(ready : inout ready_t; plen : inout natural) is
  begin
    if plen = 0 then
      for b in 0 to 31 loop ready(b) := '1'; end loop;
      plen := 32;
    end if;
  end procedure;

  procedure wint(lo : inout line; n : integer) is
  begin
    write(lo, character'(' '));
    write(lo, n);
  end procedure;

  procedure write_end(file f : text; lo : inout line; tag : character; k : natural) is
  begin
    write(lo, tag);
    wint(lo, k);
    writeline(f, lo);
  end procedure;
end package body;
