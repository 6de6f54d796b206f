-- Test bench of the converted decoder core for GHDL (--std=08).
-- Reads a stimulus file and writes an output file; the formats and the cycle protocol are described in
-- lutzip/hdl/flows/simulate.py (the Python, VHDL and C++ test benches implement the same protocol).
-- The stimulus lines, the ready pattern and the output fields it shares with tb_lutzip_lanes.vhd are in
-- tb_lutzip_pkg.vhd (analysed first).
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use std.textio.all;
use work.tb_lutzip_pkg.all;

entity tb_lutzip_core is
  generic (
    STIM : string   := "stimulus.txt";
    OUTF : string   := "out_ghdl.txt";
    W    : positive := 16
  );
end entity;

architecture sim of tb_lutzip_core is
  signal clk           : std_logic := '0';
  signal rst           : std_logic := '0';
  signal s_axis_tdata  : unsigned(31 downto 0) := (others => '0');
  signal s_axis_tvalid : std_logic := '0';
  signal s_axis_tready : std_logic;
  signal s_axis_tlast  : std_logic := '0';
  signal m_axis_tdata  : unsigned(W - 1 downto 0);
  signal m_axis_tvalid : std_logic;
  signal m_axis_tready : std_logic := '0';
  signal m_axis_tlast  : std_logic;
  signal m_axis_tuser  : std_logic;
  signal tbl_we        : std_logic := '0';
  signal tbl_sel       : unsigned(1 downto 0) := (others => '0');
  signal tbl_addr      : unsigned(11 downto 0) := (others => '0');
  signal tbl_wdata     : unsigned(31 downto 0) := (others => '0');
  signal err_valid     : std_logic;
  signal err_code      : unsigned(3 downto 0);
  signal busy          : std_logic;
  signal done          : boolean := false;
begin
  dut : entity work.decoder_core
    port map (
      clk => clk, rst => rst,
      s_axis_tdata => s_axis_tdata, s_axis_tvalid => s_axis_tvalid, s_axis_tready => s_axis_tready,
      s_axis_tlast => s_axis_tlast,
      m_axis_tdata => m_axis_tdata, m_axis_tvalid => m_axis_tvalid, m_axis_tready => m_axis_tready,
      m_axis_tlast => m_axis_tlast, m_axis_tuser => m_axis_tuser,
      tbl_we => tbl_we, tbl_sel => tbl_sel, tbl_addr => tbl_addr, tbl_wdata => tbl_wdata,
      err_valid => err_valid, err_code => err_code, busy => busy);

  clk <= not clk after 5 ns when not done else clk;

  driver : process
    file fin  : text;
    file fout : text;
    variable li, lo      : line;
    variable ok          : boolean;
    variable c           : character;
    variable ready       : ready_t;
    variable plen        : natural := 0;
    variable max_cycles  : natural := 0;
    variable drain       : natural := 16;
    variable v32         : std_logic_vector(31 downto 0);
    variable n1, n2      : integer;
    variable more        : boolean;
    -- current command
    variable cur         : character := ' ';
    variable left        : natural := 0;
    variable ended       : boolean := false;
    variable was_ended   : boolean;
    variable quiet       : natural := 0;
    variable k           : natural := 0;
    variable cmd_done    : boolean;
    variable rdy         : std_logic;
    variable pend        : boolean := false;   -- a command line read during the header scan
    variable armed       : boolean := false;   -- reset has been applied and released: no metavalues allowed

    procedure idle_drive is
    begin
      rst <= '0'; tbl_we <= '0'; tbl_sel <= (others => '0'); tbl_addr <= (others => '0');
      tbl_wdata <= (others => '0'); s_axis_tvalid <= '0'; s_axis_tdata <= (others => '0'); s_axis_tlast <= '0';
    end procedure;

    procedure load is
    begin
      idle_drive;
      if not pend then
        next_line(fin, li, more);
        if not more then
          cur := ' '; ended := true;
          return;
        end if;
      end if;
      pend := false;
      read(li, c);
      cur := c;
      case c is
        when 'R' | 'I' =>
          read(li, n1, ok);
          assert ok and n1 >= 1 report "bad R/I line in " & STIM severity failure;
          left := n1;
          if c = 'R' then rst <= '1'; end if;
        when 'T' =>
          read(li, n1, ok);
          assert ok report "bad T line (sel) in " & STIM severity failure;
          read(li, n2, ok);
          assert ok report "bad T line (addr) in " & STIM severity failure;
          hread(li, v32, ok);
          assert ok report "bad T line (data) in " & STIM severity failure;
          tbl_we <= '1'; tbl_sel <= to_unsigned(n1, 2); tbl_addr <= to_unsigned(n2, 12);
          tbl_wdata <= unsigned(v32);
        when 'S' =>
          hread(li, v32, ok);
          assert ok report "bad S line (data) in " & STIM severity failure;
          read(li, n1, ok);
          assert ok report "bad S line (last) in " & STIM severity failure;
          s_axis_tvalid <= '1'; s_axis_tdata <= unsigned(v32);
          if n1 /= 0 then s_axis_tlast <= '1'; else s_axis_tlast <= '0'; end if;
        when others =>
          report "unknown stimulus command '" & c & "' in " & STIM severity failure;
      end case;
    end procedure;

    function b2i(b : std_logic) return integer is
    begin
      if b = '1' then return 1; else return 0; end if;
    end function;
  begin
    file_open(fin, STIM, read_mode);
    file_open(fout, OUTF, write_mode);
    -- header: C and Y lines come before the first command
    loop
      next_line(fin, li, more);
      exit when not more;
      c := li.all(li'low);
      if c = 'C' then
        read(li, c);
        read_c(li, max_cycles, drain, STIM);
      elsif c = 'Y' then
        read(li, c);
        read_y(li, ready, plen, STIM);
      else
        pend := true;
        exit;
      end if;
    end loop;
    assert max_cycles > 0 report "no C header line in " & STIM severity failure;
    ready_default(ready, plen);
    load;
    m_axis_tready <= ready(0);
    rdy := ready(0);

    loop
      wait until rising_edge(clk);
      if rst = '1' then
        armed := true;
      elsif armed then
        assert not (is_x(m_axis_tvalid) or is_x(s_axis_tready) or is_x(err_valid) or is_x(busy))
          report "metavalue on a control output at cycle " & integer'image(k) severity error;
        assert not (m_axis_tvalid = '1' and (is_x(m_axis_tdata) or is_x(m_axis_tlast) or is_x(m_axis_tuser)))
          report "metavalue on m_axis data/last/user at cycle " & integer'image(k) severity error;
        assert not (err_valid = '1' and is_x(err_code))
          report "metavalue on err_code at cycle " & integer'image(k) severity error;
      end if;
      if m_axis_tvalid = '1' and rdy = '1' then
        write(lo, character'('O'));
        wint(lo, to_integer(m_axis_tdata));
        wint(lo, b2i(m_axis_tlast));
        wint(lo, b2i(m_axis_tuser));
        wint(lo, k);
        writeline(fout, lo);
      end if;
      if err_valid = '1' then
        write(lo, character'('E'));
        wint(lo, to_integer(err_code));
        wint(lo, k);
        writeline(fout, lo);
      end if;
      was_ended := ended;
      if not ended then
        cmd_done := false;
        case cur is
          when 'S' => cmd_done := s_axis_tready = '1';
          when 'R' | 'I' =>
            left := left - 1;
            cmd_done := left = 0;
          when others => cmd_done := true;
        end case;
        if cmd_done then
          load;
        end if;
      end if;
      if was_ended then
        if m_axis_tvalid = '1' or busy = '1' then
          quiet := 0;
        else
          quiet := quiet + 1;
        end if;
        if quiet >= drain then
          write_end(fout, lo, 'Z', k);
          exit;
        end if;
      end if;
      if k + 1 >= max_cycles then
        write_end(fout, lo, 'X', k);
        exit;
      end if;
      rdy := ready((k + 1) mod plen);
      m_axis_tready <= rdy;
      k := k + 1;
    end loop;
    file_close(fout);
    file_close(fin);
    done <= true;
    wait;
  end process;
end architecture;
