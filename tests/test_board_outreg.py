"""Block RAM reads through the ECP5 board flow into the DP16KD's own output register. The replay buffer's banks
(firmware/engine/replay_bank.py): the converted Verilog's bank RAMs marked ``no_rw_check`` (firmware/boards/build.py ``mark_no_rw_check``), yosys ``synth_ecp5`` maps each
onto a DP16KD of 18-bit ports (not the 36-bit mode, whose word halves leave on both ports' data pins), and the
output-register pass (hdl/flows/bram_outreg.py) makes every bank's ``ra2`` / ``rb2`` the RAM's own output
register: nothing but flip-flops of the same clock between a RAM and its output register, no fabric flip-flop
left on a RAM's data out. The command ring of the ULX3S build (4096 entries, ``PIPE``: two halves of 2048,
firmware/engine/cmd_ring.py): each half's 4 DP16KDs read into their output register, the halves chosen behind it.
The decoded-word FIFO of the two-domain ULX3S build (256 x 16, ``fifo``'s ``PIPE``): its DP16KD reads into its
output register, all 16 flip-flops absorbed."""
import json

import pytest
from myhdl import Signal, block, intbv, modbv

from lutzip.firmware.boards.build import mark_no_rw_check
from lutzip.firmware.engine.cmd_ring import cmd_ring
from lutzip.firmware.engine.fifo import fifo
from lutzip.firmware.engine.replay_bank import replay_bank
from lutzip.hdl.flows import synth as sy
from lutzip.hdl.flows.bram_outreg import absorb_bram_outregs
from lutzip.hdl.flows.convert import convert_block

NB = 2


@block
def ring_top(clk, rst, we, wdata, commit, rollback, tdata, tvalid, tready, free, empty):
    return cmd_ring(clk, rst, we, wdata, commit, rollback, tdata, tvalid, tready, free, empty, DEPTH=4096, PIPE=True)


@block
def fifo_top(clk, rst, sd, sv, sr, md, mv, mr):
    return fifo(clk, rst, sd, sv, sr, md, mv, mr, DEPTH=256, FULL_REG=True, PIPE=True)


@block
def two_banks(clk, we, wa, wd, ra, q0, q1):
    return [replay_bank(clk, we, wa, wd, ra, q, BANK=b, DEPTH=1024) for b, q in enumerate((q0, q1))]


def test_replay_banks_read_through_the_dp16kd_output_register(tmp_path):
    if not sy.find_tool("yosys", required=False):
        pytest.skip("yosys not installed")
    clk, we = Signal(bool(0)), Signal(bool(0))
    wa, ra = Signal(modbv(0)[15:]), Signal(intbv(0)[15:])
    wd, q0, q1 = Signal(intbv(0)[33:]), Signal(intbv(0)[33:]), Signal(intbv(0)[33:])
    v = convert_block(two_banks(clk, we, wa, wd, ra, q0, q1), tmp_path, "two_banks", "verilog")
    assert mark_no_rw_check(v) == 2 * NB
    assert v.read_text().count("(* no_rw_check *)") == 2 * NB
    netlist, ys = sy.run_yosys(v, "ecp5", "two_banks", tmp_path)
    ports, moved = absorb_bram_outregs(netlist, "two_banks")
    cells = json.loads(netlist.read_text())["modules"]["two_banks"]["cells"]
    rams = {k: c for k, c in cells.items() if c["type"] == "DP16KD"}
    assert len(rams) == 2 * NB and ports == 2 * NB and moved == 33 * NB
    for c in rams.values():
        p = c["parameters"]
        assert int(p["DATA_WIDTH_B"], 2) == 18 and int(p["DATA_WIDTH_A"], 2) == 18, p
        assert (p["REGMODE_A"], p["REGMODE_B"]) == ("NOREG", "OUTREG")
    # left: per bank 33 rq flip-flops (zeroed unless selected) and the two select flip-flops
    assert sum(c["type"] == "TRELLIS_FF" for c in cells.values()) == (33 + 2) * NB


def test_split_ring_reads_through_the_dp16kd_output_register(tmp_path):
    if not sy.find_tool("yosys", required=False):
        pytest.skip("yosys not installed")
    clk, rst, we, commit, rollback, tvalid, tready, empty = [Signal(bool(0)) for _ in range(8)]
    wdata, tdata = Signal(intbv(0)[35:]), Signal(intbv(0)[35:])
    free = Signal(intbv(0, min=0, max=4097))
    v = convert_block(ring_top(clk, rst, we, wdata, commit, rollback, tdata, tvalid, tready, free, empty), tmp_path,
                      "ring_top", "verilog")
    assert mark_no_rw_check(v) == 2
    netlist, ys = sy.run_yosys(v, "ecp5", "ring_top", tmp_path)
    ports, moved = absorb_bram_outregs(netlist, "ring_top")
    cells = json.loads(netlist.read_text())["modules"]["ring_top"]["cells"]
    rams = [c for c in cells.values() if c["type"] == "DP16KD"]
    assert len(rams) == 8 and ports == 8 and moved == 2 * 35
    assert all(c["parameters"]["REGMODE_B"] == "OUTREG" for c in rams)


def test_pipe_fifo_reads_through_the_dp16kd_output_register(tmp_path):
    if not sy.find_tool("yosys", required=False):
        pytest.skip("yosys not installed")
    clk, rst, sv, sr, mv, mr = [Signal(bool(0)) for _ in range(6)]
    sd, md = Signal(intbv(0)[16:]), Signal(intbv(0)[16:])
    v = convert_block(fifo_top(clk, rst, sd, sv, sr, md, mv, mr), tmp_path, "fifo_top", "verilog")
    assert mark_no_rw_check(v) == 1
    netlist, ys = sy.run_yosys(v, "ecp5", "fifo_top", tmp_path)
    ports, moved = absorb_bram_outregs(netlist, "fifo_top")
    cells = json.loads(netlist.read_text())["modules"]["fifo_top"]["cells"]
    rams = [c for c in cells.values() if c["type"] == "DP16KD"]
    assert len(rams) == 1 and ports == 1 and moved == 16
    assert rams[0]["parameters"]["REGMODE_B"] == "OUTREG"
