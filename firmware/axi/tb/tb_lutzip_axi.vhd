-- Test bench of the converted lutzip_axi for GHDL (--std=08); lutzip.firmware.axi.ghdl writes the stimulus and
-- reads the output. Stimulus lines (hex fields, 8 digits):
--   W OFF VAL      AXI4-Lite write (wstrb 0xF)          R OFF      AXI4-Lite read -> output "R VAL"
--   T N            an MM2S transfer of the next N lines (one word each, tlast on the last), tvalid and
--                  tready always high; every accepted output beat -> output "B DATA KEEP LAST"; ends at the
--                  output's tlast or after 2000 idle cycles -> output "E CYCLES"
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use std.textio.all;

entity tb_lutzip_axi is
  generic (
    STIM      : string   := "stimulus.txt";
    OUTF      : string   := "out_ghdl.txt";
    OUT_BYTES : positive := 4
  );
end entity;

architecture sim of tb_lutzip_axi is
  signal aclk          : std_logic := '0';
  signal aresetn       : std_logic := '0';
  signal s_axis_tdata  : std_logic_vector(31 downto 0) := (others => '0');
  signal s_axis_tvalid : std_logic := '0';
  signal s_axis_tready : std_logic;
  signal s_axis_tlast  : std_logic := '0';
  signal m_axis_tdata  : std_logic_vector(8 * OUT_BYTES - 1 downto 0);
  signal m_axis_tkeep  : std_logic_vector(OUT_BYTES - 1 downto 0);
  signal m_axis_tvalid : std_logic;
  signal m_axis_tready : std_logic := '0';
  signal m_axis_tlast  : std_logic;
  signal awaddr, araddr : std_logic_vector(7 downto 0) := (others => '0');
  signal wdata, rdata  : std_logic_vector(31 downto 0) := (others => '0');
  signal wstrb         : std_logic_vector(3 downto 0) := (others => '1');
  signal awvalid, awready, wvalid, wready, bvalid, bready : std_logic := '0';
  signal arvalid, arready, rvalid, rready : std_logic := '0';
  signal bresp, rresp  : std_logic_vector(1 downto 0);
  signal done          : boolean := false;
begin
  dut : entity work.lutzip_axi
    port map (
      aclk => aclk, aresetn => aresetn,
      s_axis_tdata => s_axis_tdata, s_axis_tvalid => s_axis_tvalid, s_axis_tready => s_axis_tready,
      s_axis_tlast => s_axis_tlast,
      m_axis_tdata => m_axis_tdata, m_axis_tkeep => m_axis_tkeep, m_axis_tvalid => m_axis_tvalid,
      m_axis_tready => m_axis_tready, m_axis_tlast => m_axis_tlast,
      s_axi_ctrl_awaddr => awaddr, s_axi_ctrl_awvalid => awvalid, s_axi_ctrl_awready => awready,
      s_axi_ctrl_wdata => wdata, s_axi_ctrl_wstrb => wstrb, s_axi_ctrl_wvalid => wvalid,
      s_axi_ctrl_wready => wready, s_axi_ctrl_bresp => bresp, s_axi_ctrl_bvalid => bvalid,
      s_axi_ctrl_bready => bready, s_axi_ctrl_araddr => araddr, s_axi_ctrl_arvalid => arvalid,
      s_axi_ctrl_arready => arready, s_axi_ctrl_rdata => rdata, s_axi_ctrl_rresp => rresp,
      s_axi_ctrl_rvalid => rvalid, s_axi_ctrl_rready => rready);

  aclk <= not aclk after 5 ns when not done else aclk;

  driver : process
    file fin  : text;
    file fout : text;
    variable li, lo, wl : line;
    variable c          : character;
    variable a, v, n32  : std_logic_vector(31 downto 0);
    variable n, idle, cyc : natural;
    variable got_last   : boolean;
    variable inhs, ouths : boolean;
    type words_t is array (natural range <>) of std_logic_vector(31 downto 0);
    variable words      : words_t(0 to 65535);
    variable i          : natural;
  begin
    file_open(fin, STIM, read_mode);
    file_open(fout, OUTF, write_mode);
    for k in 0 to 3 loop
      wait until rising_edge(aclk);
    end loop;
    wait for 1 ns;
    aresetn <= '1';
    wait until rising_edge(aclk);
    wait for 1 ns;
    while not endfile(fin) loop
      readline(fin, li);
      next when li'length = 0;
      read(li, c);
      if c = 'W' then
        hread(li, a);
        hread(li, v);
        awaddr <= a(7 downto 0); wdata <= v; wstrb <= "1111";
        awvalid <= '1'; wvalid <= '1'; bready <= '1';
        loop
          wait until rising_edge(aclk);
          exit when awready = '1';
        end loop;
        wait for 1 ns;
        awvalid <= '0'; wvalid <= '0';
        loop
          if bvalid = '1' then
            wait until rising_edge(aclk);
            exit;
          end if;
          wait until rising_edge(aclk);
          wait for 1 ns;
        end loop;
        wait for 1 ns;
        bready <= '0';
      elsif c = 'R' then
        hread(li, a);
        araddr <= a(7 downto 0); arvalid <= '1'; rready <= '1';
        loop
          wait until rising_edge(aclk);
          exit when arready = '1';
        end loop;
        wait for 1 ns;
        arvalid <= '0';
        loop
          if rvalid = '1' then
            v := rdata;
            wait until rising_edge(aclk);
            exit;
          end if;
          wait until rising_edge(aclk);
          wait for 1 ns;
        end loop;
        wait for 1 ns;
        rready <= '0';
        write(lo, string'("R "));
        hwrite(lo, v);
        writeline(fout, lo);
      elsif c = 'T' then
        hread(li, n32);
        n := to_integer(unsigned(n32));
        for k in 0 to n - 1 loop
          readline(fin, wl);
          hread(wl, words(k));
        end loop;
        i := 0; idle := 0; cyc := 0; got_last := false;
        m_axis_tready <= '1';
        while not got_last and idle < 2000 loop
          if i < n then
            s_axis_tvalid <= '1';
            s_axis_tdata <= words(i);
            if i = n - 1 then s_axis_tlast <= '1'; else s_axis_tlast <= '0'; end if;
          else
            s_axis_tvalid <= '0';
          end if;
          wait for 1 ns;
          inhs := i < n and s_axis_tready = '1';
          ouths := m_axis_tvalid = '1';
          if ouths then
            write(lo, string'("B "));
            hwrite(lo, m_axis_tdata);
            write(lo, string'(" "));
            hwrite(lo, "0000" & m_axis_tkeep);
            if m_axis_tlast = '1' then
              write(lo, string'(" 1"));
              got_last := true;
            else
              write(lo, string'(" 0"));
            end if;
            writeline(fout, lo);
          end if;
          wait until rising_edge(aclk);
          wait for 1 ns;
          cyc := cyc + 1;
          if inhs then i := i + 1; end if;
          if inhs or ouths then idle := 0; else idle := idle + 1; end if;
        end loop;
        s_axis_tvalid <= '0';
        m_axis_tready <= '0';
        write(lo, string'("E "));
        write(lo, cyc);
        writeline(fout, lo);
      end if;
    end loop;
    file_close(fout);
    done <= true;
    wait;
  end process;
end architecture;
