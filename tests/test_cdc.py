"""Clock-domain crossing blocks (firmware/engine/cdc_*.py) under random clock ratios.

MyHDL: the asynchronous FIFO with write:read clock periods from 1:3 to 3:1 (and equal / near-equal), random
source pauses and sink backpressure: every word in order, no loss, no duplicate; the pulse synchroniser (one
destination pulse per source pulse), the flag and reset synchronisers. Converted: the FIFO in Icarus
(Verilog) and GHDL (VHDL, --std=08) with a hand-written bench at a few ratios (``-m slow``: the sweep).
"""
import random
import shutil
import subprocess
import warnings

import pytest
from myhdl import Signal, Simulation, StopSimulation, delay, instance, intbv

from lutzip.firmware.engine.cdc_fifo import cdc_fifo
from lutzip.firmware.engine.cdc_flag import cdc_flag
from lutzip.firmware.engine.cdc_pulse import cdc_pulse
from lutzip.firmware.engine.cdc_reset import cdc_reset
from lutzip.hdl.flows.convert import convert_block

#: (write period, read period) in ns: equal, near-equal, 1:3 .. 3:1
RATIOS = [(10, 10), (10, 11), (11, 10), (7, 21), (21, 7), (10, 23), (23, 10), (13, 17)]


def _clock(clk, half, phase):
    @instance
    def gen():
        yield delay(phase)
        while True:
            clk.next = not clk
            yield delay(half)
    return gen


def run_fifo(tw, tr, n=300, depth=8, seed=1, p_src=0.3, p_snk=0.3, width=12):
    """The FIFO in MyHDL; returns the words the sink received (the source sends 0 .. n-1)."""
    rnd = random.Random(seed)
    wclk, rclk = Signal(bool(0)), Signal(bool(0))
    arst = Signal(bool(1))
    wrst, rrst = Signal(bool(1)), Signal(bool(1))
    sd, md = Signal(intbv(0)[width:]), Signal(intbv(0)[width:])
    sv, sr, mv, mr = [Signal(bool(0)) for _ in range(4)]
    got = []
    dut = cdc_fifo(wclk, wrst, sd, sv, sr, rclk, rrst, md, mv, mr, DEPTH=depth)
    rs_w = cdc_reset(wclk, arst, wrst)
    rs_r = cdc_reset(rclk, arst, rrst)
    cw = _clock(wclk, tw, rnd.randrange(1, tw))
    cr = _clock(rclk, tr, rnd.randrange(1, tr))

    @instance
    def release():
        yield delay(5 * max(tw, tr))
        arst.next = 0

    @instance
    def src():
        i = 0
        while i < n:
            yield wclk.posedge
            if sv and sr:
                i += 1
            if i < n and (sv and not sr or rnd.random() >= p_src):   # hold a pending word (AXI rule)
                sv.next, sd.next = 1, i
            else:
                sv.next = 0
        yield wclk.posedge
        sv.next = 0

    @instance
    def snk():
        idle = 0
        while idle < 200:
            yield rclk.posedge
            if mv and mr:
                got.append(int(md))
                idle = 0
            else:
                idle += 1
            mr.next = rnd.random() >= p_snk
        raise StopSimulation

    sim = Simulation(dut, rs_w, rs_r, cw, cr, release, src, snk)
    sim.run(quiet=1)
    return got


@pytest.mark.parametrize("tw,tr", RATIOS)
def test_fifo_random_ratios(tw, tr):
    got = run_fifo(tw, tr, seed=tw * 100 + tr)
    assert got == list(range(300))


@pytest.mark.parametrize("depth", [4, 16, 512])
def test_fifo_depths_no_pauses(depth):
    # full speed both sides (fill, then drain at the slower clock): full and empty flags at every depth
    got = run_fifo(10, 13, n=depth * 3, depth=depth, seed=depth, p_src=0.0, p_snk=0.0)
    assert got == list(range(depth * 3))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_fifo_random_ratio_sweep(seed):
    rnd = random.Random(seed)
    tw, tr = rnd.randint(5, 30), rnd.randint(5, 30)
    tw, tr = (tw, max(tr, -(-tw // 3))) if tw > tr else (max(tw, -(-tr // 3)), tr)
    got = run_fifo(tw, tr, n=2000, depth=rnd.choice([4, 8, 16, 64]), seed=seed, p_src=rnd.random() * 0.6,
                   p_snk=rnd.random() * 0.6)
    assert got == list(range(2000))


def test_fifo_catches_a_lost_word():
    # the check can fail: a sink that drops a word is seen
    got = run_fifo(10, 13, n=50, seed=3)
    assert got == list(range(50))
    assert got[:10] + got[11:] != list(range(50))


def test_fifo_bad_depth():
    s = [Signal(bool(0)) for _ in range(8)]
    with pytest.raises(AssertionError):
        cdc_fifo(s[0], s[1], Signal(intbv(0)[8:]), s[2], s[3], s[4], s[5], Signal(intbv(0)[8:]), s[6], s[7],
                 DEPTH=12)


def run_pulse(ts, td, gaps, seed=1):
    """Pulses at the given source-cycle gaps; returns (source pulses sent, destination pulses seen)."""
    rnd = random.Random(seed)
    sclk, dclk, arst, srst, drst = [Signal(bool(0)) for _ in range(5)]
    arst.next = 1
    sp, dp, busy = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    seen = [0]
    dut = cdc_pulse(sclk, srst, sp, dclk, drst, dp, busy)
    r1, r2 = cdc_reset(sclk, arst, srst), cdc_reset(dclk, arst, drst)
    c1, c2 = _clock(sclk, ts, rnd.randrange(1, ts)), _clock(dclk, td, rnd.randrange(1, td))

    @instance
    def src():
        arst.next = 1
        yield delay(5 * max(ts, td))
        arst.next = 0
        for _ in range(6):
            yield sclk.posedge
        for g in gaps:
            sp.next = 1
            yield sclk.posedge
            sp.next = 0
            for _ in range(g):
                yield sclk.posedge
            yield delay(1)
            while busy:
                yield sclk.posedge
                yield delay(1)
        for _ in range(20 * max(ts, td) // ts + 10):
            yield sclk.posedge
        raise StopSimulation

    @instance
    def dst():
        while True:
            yield dclk.posedge
            if dp:
                seen[0] += 1

    Simulation(dut, r1, r2, c1, c2, src, dst).run(quiet=1)
    return len(gaps), seen[0]


@pytest.mark.parametrize("ts,td", [(10, 10), (7, 21), (21, 7), (10, 11)])
def test_pulse_one_per_event(ts, td):
    rnd = random.Random(ts * td)
    sent, seen = run_pulse(ts, td, [rnd.randrange(0, 4) for _ in range(40)], seed=ts + td)
    assert seen == sent == 40


def test_flag_and_reset_sync():
    clk, d, q = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    arst, rst = Signal(bool(0)), Signal(bool(0))
    trace = []
    f = cdc_flag(clk, d, q, STAGES=2)
    r = cdc_reset(clk, arst, rst, STAGES=3)
    c = _clock(clk, 5, 1)

    @instance
    def stim():
        yield clk.negedge
        d.next = 1
        for _ in range(4):
            yield clk.posedge
            yield delay(1)
            trace.append(int(q))
        yield delay(2)
        arst.next = 1                # asynchronous: rst rises before the next clock edge
        yield delay(1)
        trace.append(int(rst))
        yield clk.negedge
        arst.next = 0
        for _ in range(4):
            yield clk.posedge
            yield delay(1)
            trace.append(int(rst))
        raise StopSimulation

    Simulation(f, r, c, stim).run(quiet=1)
    assert trace[:4] == [0, 1, 1, 1]      # two flip-flops: the second edge after d rose
    assert trace[4] == 1                  # asserted at once
    assert trace[5:] == [1, 1, 0, 0]      # released on the third edge


# ---- converted: Icarus (Verilog) and GHDL (VHDL) --------------------------------------------------------------

TB_V = r"""
`timescale 1ns/1ps
module tb;
  parameter TW = 10, TR = 13, N = 2000, SEED = 1, PS = 30, PR = 30;
  reg wclk = 0, rclk = 0, wrst = 1, rrst = 1;
  reg [11:0] sd = 0; reg sv = 0, mr = 0; wire sr, mv; wire [11:0] md;
  integer sent = 0, got = 0, errs = 0, seed = SEED, quiet = 0;
  fifo_t dut(.wclk(wclk), .wrst(wrst), .s_axis_tdata(sd), .s_axis_tvalid(sv), .s_axis_tready(sr),
             .rclk(rclk), .rrst(rrst), .m_axis_tdata(md), .m_axis_tvalid(mv), .m_axis_tready(mr));
  always #(TW) wclk = ~wclk;
  always #(TR) rclk = ~rclk;
  initial begin #(7 * TW + 3); wrst = 0; end
  initial begin #(7 * TR + 5); rrst = 0; end
  always @(posedge wclk) if (!wrst) begin
    if (sv && sr) sent = sent + 1;
    if (sent < N && ((sv && !sr) || ($unsigned($random(seed)) % 100) >= PS)) begin sv <= 1; sd <= sent; end
    else sv <= 0;
  end
  always @(posedge rclk) if (!rrst) begin
    if (mv && mr) begin
      if (md != got[11:0]) errs = errs + 1;
      got = got + 1; quiet = 0;
    end else quiet = quiet + 1;
    mr <= ($unsigned($random(seed)) % 100) >= PR;
    if (quiet > 300) begin
      $display("RESULT got=%0d errs=%0d", got, errs);
      $finish;
    end
  end
endmodule
"""

TB_VHD = r"""
library ieee; use ieee.std_logic_1164.all; use ieee.numeric_std.all; use ieee.math_real.all;
entity tb is generic (TW : natural := 10; TR : natural := 13; N : natural := 2000; SEED : positive := 1); end;
architecture sim of tb is
  signal wclk, rclk, sv, sr, mv, mr : std_logic := '0';
  signal wrst, rrst : std_logic := '1';
  signal sd, md : std_logic_vector(11 downto 0) := (others => '0');
  signal done : boolean := false;
begin
  dut : entity work.fifo_t port map (wclk => wclk, wrst => wrst, s_axis_tdata => sd, s_axis_tvalid => sv,
      s_axis_tready => sr, rclk => rclk, rrst => rrst, m_axis_tdata => md, m_axis_tvalid => mv, m_axis_tready => mr);
  wclk <= not wclk after TW * 1 ns when not done;
  rclk <= not rclk after TR * 1 ns when not done;
  wrst <= '0' after (7 * TW + 3) * 1 ns;
  rrst <= '0' after (7 * TR + 5) * 1 ns;
  src : process (wclk)
    variable s1 : positive := SEED; variable s2 : positive := 7; variable x : real; variable sent : natural := 0;
  begin
    if rising_edge(wclk) and wrst = '0' then
      if sv = '1' and sr = '1' then sent := sent + 1; end if;
      uniform(s1, s2, x);
      if sent < N and ((sv = '1' and sr = '0') or x >= 0.3) then
        sv <= '1'; sd <= std_logic_vector(to_unsigned(sent mod 4096, 12));
      else sv <= '0'; end if;
    end if;
  end process;
  snk : process (rclk)
    variable s1 : positive := SEED + 11; variable s2 : positive := 3; variable x : real;
    variable got, errs, quiet : natural := 0;
  begin
    if rising_edge(rclk) and rrst = '0' then
      if mv = '1' and mr = '1' then
        if to_integer(unsigned(md)) /= got mod 4096 then errs := errs + 1; end if;
        got := got + 1; quiet := 0;
      else quiet := quiet + 1; end if;
      uniform(s1, s2, x);
      if x >= 0.3 then mr <= '1'; else mr <= '0'; end if;
      if quiet > 300 and not done then
        report "RESULT got=" & integer'image(got) & " errs=" & integer'image(errs);
        done <= true;
      end if;
    end if;
  end process;
end;
"""


def _fifo_top(hdl, path, depth=8):
    ps = dict(wclk=Signal(bool(0)), wrst=Signal(bool(0)), s_axis_tdata=Signal(intbv(0)[12:]),
              s_axis_tvalid=Signal(bool(0)), s_axis_tready=Signal(bool(0)), rclk=Signal(bool(0)),
              rrst=Signal(bool(0)), m_axis_tdata=Signal(intbv(0)[12:]), m_axis_tvalid=Signal(bool(0)),
              m_axis_tready=Signal(bool(0)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        extra = {"std_logic_ports": True} if hdl == "vhdl" else {}
        return convert_block(cdc_fifo(**ps, DEPTH=depth), path, "fifo_t", hdl, **extra)


def _result(text):
    line = [x for x in text.splitlines() if "RESULT" in x]
    assert line, text[-2000:]
    kv = dict(p.split("=") for p in line[-1].split("RESULT", 1)[1].split())
    return int(kv["got"]), int(kv["errs"])


def _icarus(tmp_path, ratios, n=2000):
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog not installed")
    v = _fifo_top("verilog", tmp_path)
    (tmp_path / "tb.v").write_text(TB_V)
    for k, (tw, tr) in enumerate(ratios):
        exe = tmp_path / f"sim{k}"
        subprocess.run(["iverilog", "-g2012", "-o", str(exe), f"-Ptb.TW={tw}", f"-Ptb.TR={tr}", f"-Ptb.N={n}",
                        f"-Ptb.SEED={k + 1}", str(tmp_path / "tb.v"), str(v)], check=True, capture_output=True)
        out = subprocess.run(["vvp", "-n", str(exe)], capture_output=True, text=True, timeout=120).stdout
        assert _result(out) == (n, 0), (tw, tr)


def _ghdl(tmp_path, ratios, n=2000):
    if shutil.which("ghdl") is None:
        pytest.skip("ghdl not installed")
    v = _fifo_top("vhdl", tmp_path)
    (tmp_path / "tb.vhd").write_text(TB_VHD)
    pkgs = sorted(str(p) for p in tmp_path.glob("pck_myhdl_*.vhd"))
    f = ["--std=08", "-frelaxed"]
    subprocess.run(["ghdl", "-a", *f, *pkgs, str(v), str(tmp_path / "tb.vhd")], cwd=tmp_path, check=True,
                   capture_output=True)
    subprocess.run(["ghdl", "-e", *f, "tb"], cwd=tmp_path, check=True, capture_output=True)
    for k, (tw, tr) in enumerate(ratios):
        r = subprocess.run(["ghdl", "-r", *f, "tb", f"-gTW={tw}", f"-gTR={tr}", f"-gN={n}", f"-gSEED={k + 1}",
                            "--ieee-asserts=disable"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert "error" not in (r.stdout + r.stderr).lower().replace("errs=", ""), r.stdout + r.stderr
        assert _result(r.stdout + r.stderr) == (n, 0), (tw, tr)


def test_fifo_icarus(tmp_path):
    _icarus(tmp_path, [(10, 10), (7, 21), (21, 7), (10, 11)])


def test_fifo_ghdl(tmp_path):
    _ghdl(tmp_path, [(10, 10), (7, 21), (21, 7)], n=1000)


@pytest.mark.slow
def test_fifo_converted_sweep(tmp_path):
    rnd = random.Random(5)
    ratios = RATIOS + [(rnd.randint(7, 21), rnd.randint(7, 21)) for _ in range(8)]
    (tmp_path / "v").mkdir()
    (tmp_path / "g").mkdir()
    _icarus(tmp_path / "v", ratios, n=5000)
    _ghdl(tmp_path / "g", ratios, n=3000)


@pytest.mark.parametrize("hdl", ["verilog", "vhdl"])
def test_sync_blocks_convert_and_analyse(tmp_path, hdl):
    """Flag, pulse and reset synchronisers convert; the VHDL analyses in GHDL (--std=08), the Verilog in Icarus."""
    tool = "ghdl" if hdl == "vhdl" else "iverilog"
    b = [Signal(bool(0)) for _ in range(7)]
    extra = {"std_logic_ports": True} if hdl == "vhdl" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = [convert_block(cdc_flag(b[0], b[1], b[2], STAGES=3), tmp_path, "flag_t", hdl, **extra),
                 convert_block(cdc_pulse(b[0], b[1], b[2], b[3], b[4], b[5], b[6]), tmp_path, "pulse_t", hdl,
                               **extra),
                 convert_block(cdc_reset(b[0], b[1], b[2], STAGES=3), tmp_path, "reset_t", hdl, **extra)]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    if hdl == "vhdl":
        pkgs = sorted(str(p) for p in tmp_path.glob("pck_myhdl_*.vhd"))
        r = subprocess.run(["ghdl", "-a", "--std=08", *pkgs, *map(str, files)], cwd=tmp_path, capture_output=True,
                           text=True)
    else:
        r = subprocess.run(["iverilog", "-g2012", "-o", str(tmp_path / "a.out"), *map(str, files)],
                           capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
