-- GHDL virtual board (lutzip.vboard.ghdl): the converted top, fed bytes through named pipes in lock step.
-- Each request line is "D<hex bytes>"; the bench feeds them to the design, runs until the design is idle (or
-- MAXC cycles) and answers "<idle 0|1><hex bytes the design sent>". A line "Q" ends the simulation.
-- PIN = false: proto_engine byte ports; PIN = true: uart_top, bytes serialised 8N1 at CPB clocks per bit.
-- CDC = true (fast mode): proto_engine_cdc, the byte link at clk (10 ns) and the engine at core_clk (half period
-- CORE_HALF_PS ps: the PLL's model); a component, so that the single-domain build needs no such entity.
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use std.textio.all;
use work.vboard_pkg.all;

entity vboard_tb is
    generic (FIN : string := "in.fifo"; FOUT : string := "out.fifo"; MAXC : natural := 2000;
             PIN : boolean := false; CPB : natural := 16; CDC : boolean := false;
             CORE_HALF_PS : natural := 5000);
end entity vboard_tb;

architecture sim of vboard_tb is
    signal clk, rst : std_logic := '0';
    signal s_axis_tdata, m_axis_tdata : std_logic_vector(7 downto 0) := (others => '0');
    signal s_axis_tvalid, s_axis_tready, m_axis_tvalid, m_axis_tready, idle : std_logic := '0';
    signal rx_line, tx_line : std_logic := '1';
    signal done : boolean := false;
    signal core_clk : std_logic := '0';
    component proto_engine_cdc is
        port (clk, rst, core_clk : in std_logic;
              s_axis_tdata : in std_logic_vector(7 downto 0); s_axis_tvalid : in std_logic;
              s_axis_tready : out std_logic;
              m_axis_tdata : out std_logic_vector(7 downto 0); m_axis_tvalid : out std_logic;
              m_axis_tready : in std_logic; idle : out std_logic);
    end component;
begin
    clk <= not clk after 5 ns when not done else '0';
    core_clk <= not core_clk after CORE_HALF_PS * 1 ps when CDC and not done else '0';

    g_cdc : if CDC and not PIN generate
        dut : proto_engine_cdc
            port map (clk => clk, rst => rst, core_clk => core_clk,
                      s_axis_tdata => s_axis_tdata, s_axis_tvalid => s_axis_tvalid, s_axis_tready => s_axis_tready,
                      m_axis_tdata => m_axis_tdata, m_axis_tvalid => m_axis_tvalid, m_axis_tready => m_axis_tready,
                      idle => idle);
    end generate;

    g_fast : if not PIN and not CDC generate
        dut : entity work.proto_engine
            port map (clk => clk, rst => rst,
                      s_axis_tdata => s_axis_tdata, s_axis_tvalid => s_axis_tvalid, s_axis_tready => s_axis_tready,
                      m_axis_tdata => m_axis_tdata, m_axis_tvalid => m_axis_tvalid, m_axis_tready => m_axis_tready,
                      idle => idle);
    end generate;

    g_pin : if PIN generate
        dut : entity work.uart_top
            port map (clk => clk, rst => rst, uart_rx => rx_line, uart_tx => tx_line, idle => idle);
    end generate;

    main : process
        file fi : text;
        file fo : text;
        variable li, lo : line;
        variable buf : byte_array(0 to 65535);
        variable n, i, cyc : natural;
        variable c : character;
        variable ok : boolean;
        variable b : natural;
        -- pin mode UART models
        variable txb, txc, rxs, rxc : integer;
        variable txsh, rxsh : natural;
        variable obuf : byte_array(0 to 262143);
        variable nout : natural;
    begin
        rst <= '1';
        m_axis_tready <= '1';
        for k in 0 to 7 loop
            wait until rising_edge(clk);
        end loop;
        rst <= '0';
        file_open(fi, FIN, read_mode);
        file_open(fo, FOUT, write_mode);
        txb := -1; txc := 0; rxs := -1; rxc := 0; txsh := 0; rxsh := 0;
        loop
            exit when endfile(fi);
            readline(fi, li);
            exit when li'length = 0 or li(li'low) = 'Q';
            n := (li'length - 1) / 2;
            for k in 0 to n - 1 loop
                buf(k) := std_logic_vector(to_unsigned(hexval(li(li'low + 1 + 2 * k)) * 16
                                                      + hexval(li(li'low + 2 + 2 * k)), 8));
            end loop;
            deallocate(li);
            i := 0;
            cyc := 0;
            nout := 0;
            loop
                if not PIN then
                    if i < n then
                        s_axis_tvalid <= '1';
                        s_axis_tdata <= buf(i);
                    else
                        s_axis_tvalid <= '0';
                    end if;
                    wait until rising_edge(clk);
                    if s_axis_tvalid = '1' and s_axis_tready = '1' then
                        i := i + 1;
                    end if;
                    if m_axis_tvalid = '1' and m_axis_tready = '1' and nout <= obuf'high then
                        obuf(nout) := m_axis_tdata;
                        nout := nout + 1;
                    end if;
                    wait for 1 ns;
                    exit when i >= n and s_axis_tvalid = '0' and idle = '1';
                else
                    if txb < 0 and i < n then
                        txsh := 512 + to_integer(unsigned(buf(i))) * 2;
                        i := i + 1;
                        txb := 0;
                        txc := 0;
                    end if;
                    if txb < 0 then
                        rx_line <= '1';
                    elsif (txsh / (2 ** txb)) mod 2 = 1 then
                        rx_line <= '1';
                    else
                        rx_line <= '0';
                    end if;
                    wait until rising_edge(clk);
                    wait for 1 ns;
                    if txb >= 0 then
                        txc := txc + 1;
                        if txc = CPB then
                            txc := 0;
                            txb := txb + 1;
                            if txb = 10 then
                                txb := -1;
                            end if;
                        end if;
                    end if;
                    if rxs < 0 then
                        if tx_line = '0' then
                            rxs := 0; rxc := 0; rxsh := 0;
                        end if;
                    else
                        rxc := rxc + 1;
                        if rxc = CPB / 2 + rxs * CPB then
                            if rxs >= 1 and rxs <= 8 and tx_line = '1' then
                                rxsh := rxsh + 2 ** (rxs - 1);
                            end if;
                            if rxs = 9 then
                                if nout <= obuf'high then
                                    obuf(nout) := std_logic_vector(to_unsigned(rxsh, 8));
                                    nout := nout + 1;
                                end if;
                                rxs := -1;
                            else
                                rxs := rxs + 1;
                            end if;
                        end if;
                    end if;
                    exit when i >= n and txb < 0 and rxs < 0 and idle = '1';
                end if;
                cyc := cyc + 1;
                exit when cyc >= MAXC and i >= n;
            end loop;
            if idle = '1' then
                write(lo, character'('1'));
            else
                write(lo, character'('0'));
            end if;
            for k in 0 to nout - 1 loop
                b := to_integer(unsigned(obuf(k)));
                write(lo, hexchar(b / 16));
                write(lo, hexchar(b mod 16));
            end loop;
            writeline(fo, lo);
            flush(fo);
        end loop;
        done <= true;
        wait;
    end process;
end architecture sim;
