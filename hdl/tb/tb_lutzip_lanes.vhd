-- Test bench of the converted N-lane decoder for GHDL (--std=08).
-- Reads a stimulus file and writes an output file; the formats and the cycle protocol are described in
-- lutzip/hdl/flows/lanes_sim.py. The port map is filled in by lanes_sim.vhdl_bench (one-bit ports of a
-- one-lane build map to element 0 of the vectors below).
-- Shares tb_lutzip_pkg.vhd (stimulus lines, ready pattern, output fields) with tb_lutzip_core.vhd.
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use std.textio.all;
use work.tb_lutzip_pkg.all;

entity tb_lutzip_lanes is
  generic (
    STIM : string   := "stimulus.txt";
    OUTF : string   := "out_ghdl.txt";
    W    : positive := 16;
    N    : positive := 2;
    KB   : positive := 2
  );
end entity;

architecture sim of tb_lutzip_lanes is
  signal clk           : std_logic := '0';
  signal rst           : std_logic := '0';
  signal s_axis_tdata  : unsigned(32 * N - 1 downto 0) := (others => '0');
  signal s_axis_tvalid : unsigned(N - 1 downto 0) := (others => '0');
  signal s_axis_tready : unsigned(N - 1 downto 0);
  signal s_axis_tlast  : unsigned(N - 1 downto 0) := (others => '0');
  signal m_axis_tdata  : unsigned(N * W - 1 downto 0);
  signal m_axis_tkeep  : unsigned(KB - 1 downto 0);
  signal m_axis_tvalid : std_logic;
  signal m_axis_tready : std_logic := '0';
  signal m_axis_tlast  : std_logic;
  signal m_axis_tuser  : std_logic;
  signal tbl_we        : std_logic := '0';
  signal tbl_sel       : unsigned(1 downto 0) := (others => '0');
  signal tbl_addr      : unsigned(11 downto 0) := (others => '0');
  signal tbl_wdata     : unsigned(31 downto 0) := (others => '0');
  signal err_valid     : unsigned(N - 1 downto 0);
  signal err_code      : unsigned(4 * N - 1 downto 0);
  signal err_stripe    : unsigned(32 * N - 1 downto 0);
  signal busy          : std_logic;
  signal done          : boolean := false;
begin
  dut : entity work.decoder_lanes
    port map (
      -- @PORTMAP@
    );

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
    variable n1, n2, n3  : integer;
    variable more        : boolean;
    -- the prefix commands and the lanes' word queues
    type pre_t is record kind : character; a, b : integer; d : std_logic_vector(31 downto 0); end record;
    type pre_arr is array (natural range <>) of pre_t;
    type pre_ptr is access pre_arr;
    type wrd_t is record w : std_logic_vector(31 downto 0); last, gap : integer; end record;
    type wrd_arr is array (natural range <>) of wrd_t;
    type wrd_ptr is access wrd_arr;
    type lanes_t is array (0 to N - 1) of wrd_ptr;
    type nat_arr is array (0 to N - 1) of natural;
    variable pre, pre_old : pre_ptr := new pre_arr(0 to 255);
    variable npre        : natural := 0;
    variable q           : lanes_t;
    variable nq          : nat_arr := (others => 0);
    variable idx, wt     : nat_arr := (others => 0);
    variable wold        : wrd_ptr;
    variable pi          : natural := 0;
    variable left        : natural := 0;
    variable stream      : boolean := false;
    variable ended       : boolean;
    variable quiet       : natural := 0;
    variable k           : natural := 0;
    variable cmd_done    : boolean;
    variable lv          : unsigned(N - 1 downto 0);
    variable rdy         : unsigned(N - 1 downto 0);
    variable mv, mr, bz  : std_logic;
    variable armed       : boolean := false;   -- reset has been applied: no metavalues allowed from now on

    procedure lanes_drive is
    begin
      for j in 0 to N - 1 loop
        if idx(j) < nq(j) and wt(j) = 0 then
          lv(j) := '1';
          s_axis_tdata(32 * j + 31 downto 32 * j) <= unsigned(q(j)(idx(j)).w);
          if q(j)(idx(j)).last /= 0 then s_axis_tlast(j) <= '1'; else s_axis_tlast(j) <= '0'; end if;
        else
          lv(j) := '0';
          s_axis_tdata(32 * j + 31 downto 32 * j) <= (others => '0');
          s_axis_tlast(j) <= '0';
        end if;
      end loop;
      s_axis_tvalid <= lv;
    end procedure;

    procedure load is
    begin
      rst <= '0'; tbl_we <= '0'; tbl_sel <= (others => '0'); tbl_addr <= (others => '0');
      tbl_wdata <= (others => '0');
      if pi >= npre then
        stream := true;
        for j in 0 to N - 1 loop
          if nq(j) > 0 then wt(j) := q(j)(0).gap; else wt(j) := 0; end if;
        end loop;
        lanes_drive;
        return;
      end if;
      case pre(pi).kind is
        when 'R' | 'I' =>
          left := pre(pi).a;
          if pre(pi).kind = 'R' then rst <= '1'; end if;
        when others =>
          tbl_we <= '1'; tbl_sel <= to_unsigned(pre(pi).a, 2); tbl_addr <= to_unsigned(pre(pi).b, 12);
          tbl_wdata <= unsigned(pre(pi).d);
      end case;
      pi := pi + 1;
    end procedure;

    impure function b2i(b : std_logic) return integer is
    begin
      if b = '1' then return 1; elsif b = '0' or not armed then return 0; end if;
      report "metavalue on an output" severity failure;
      return 0;
    end function;

    procedure push_pre(p : pre_t) is
    begin
      if npre > pre'high then
        pre_old := pre;
        pre := new pre_arr(0 to 2 * pre_old'length - 1);
        pre(0 to pre_old'high) := pre_old.all;
        deallocate(pre_old);
      end if;
      pre(npre) := p;
      npre := npre + 1;
    end procedure;

    procedure push_word(j : natural; x : wrd_t) is
    begin
      if q(j) = null then
        q(j) := new wrd_arr(0 to 1023);
      elsif nq(j) > q(j)'high then
        wold := q(j);
        q(j) := new wrd_arr(0 to 2 * wold'length - 1);
        q(j)(0 to wold'high) := wold.all;
        deallocate(wold);
      end if;
      q(j)(nq(j)) := x;
      nq(j) := nq(j) + 1;
    end procedure;
  begin
    file_open(fin, STIM, read_mode);
    file_open(fout, OUTF, write_mode);
    loop
      next_line(fin, li, more);
      exit when not more;
      read(li, c);
      case c is
        when 'C' =>
          read_c(li, max_cycles, drain, STIM);
          read(li, n3, ok);
          assert ok and n3 = N report "bad C line in " & STIM severity failure;
        when 'Y' =>
          read_y(li, ready, plen, STIM);
        when 'R' | 'I' =>
          read(li, n1, ok);
          assert ok and n1 >= 1 report "bad R/I line in " & STIM severity failure;
          push_pre((c, n1, 0, (others => '0')));
        when 'T' =>
          read(li, n1, ok); read(li, n2, ok); hread(li, v32, ok);
          assert ok report "bad T line in " & STIM severity failure;
          push_pre(('T', n1, n2, v32));
        when 'L' =>
          read(li, n1, ok); hread(li, v32, ok); read(li, n2, ok); read(li, n3, ok);
          assert ok and n1 < N report "bad L line in " & STIM severity failure;
          push_word(n1, (v32, n2, n3));
        when others =>
          report "unknown stimulus command '" & c & "' in " & STIM severity failure;
      end case;
    end loop;
    ready_default(ready, plen);
    load;
    m_axis_tready <= ready(0);
    loop
      wait until rising_edge(clk);
      mv := m_axis_tvalid; mr := m_axis_tready; bz := busy; rdy := s_axis_tready;
      if b2i(mv) = 1 and mr = '1' then
        write(lo, string'("O "));
        hwrite(lo, std_logic_vector(m_axis_tdata));
        wint(lo, to_integer(m_axis_tkeep)); wint(lo, b2i(m_axis_tlast)); wint(lo, b2i(m_axis_tuser)); wint(lo, k);
        writeline(fout, lo);
      end if;
      for j in 0 to N - 1 loop
        if b2i(err_valid(j)) = 1 then
          write(lo, string'("E"));
          wint(lo, j); wint(lo, to_integer(err_code(4 * j + 3 downto 4 * j)));
          write(lo, character'(' '));
          hwrite(lo, std_logic_vector(err_stripe(32 * j + 31 downto 32 * j)));
          wint(lo, k);
          writeline(fout, lo);
        end if;
      end loop;
      if rst = '1' then armed := true; end if;
      if not stream then
        cmd_done := true;
        if pre(pi - 1).kind = 'R' or pre(pi - 1).kind = 'I' then
          left := left - 1;
          cmd_done := left = 0;
        end if;
        if cmd_done then load; end if;
      else
        ended := true;
        for j in 0 to N - 1 loop
          if idx(j) < nq(j) then ended := false; end if;
        end loop;
        for j in 0 to N - 1 loop
          if lv(j) = '1' and rdy(j) = '1' then
            idx(j) := idx(j) + 1;
            if idx(j) < nq(j) then wt(j) := q(j)(idx(j)).gap; else wt(j) := 0; end if;
          elsif wt(j) > 0 then
            wt(j) := wt(j) - 1;
          end if;
        end loop;
        lanes_drive;
        if ended then
          if b2i(mv) = 1 or b2i(bz) = 1 then quiet := 0; else quiet := quiet + 1; end if;
          if quiet >= drain then
            write_end(fout, lo, 'Z', k);
            exit;
          end if;
        end if;
      end if;
      if k + 1 >= max_cycles then
        write_end(fout, lo, 'X', k);
        exit;
      end if;
      m_axis_tready <= ready((k + 1) mod plen);
      k := k + 1;
    end loop;
    file_close(fout);
    done <= true;
    wait;
  end process;
end architecture;
