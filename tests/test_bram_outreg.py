"""The ECP5 netlist pass that folds a flip-flop after a block-RAM read into the RAM's output register."""
import json

from lutzip.hdl.flows.bram_outreg import absorb_bram_outregs

CLK = 2


def _ram(do_bits, regmode="NOREG", oce="1"):
    conn = {"CLKA": [CLK], "CLKB": [CLK], "OCEA": ["1"], "OCEB": [oce], "RSTA": ["0"], "RSTB": ["0"]}
    dirs = {k: "input" for k in conn}
    for i, b in enumerate(do_bits):
        conn[f"DOB{i}"] = [b]
        dirs[f"DOB{i}"] = "output"
    return {"type": "DP16KD", "parameters": {"REGMODE_A": "NOREG", "REGMODE_B": regmode},
            "port_directions": dirs, "connections": conn}


def _ff(d, q, ce=None, lsr="0", cemux="1 "):
    conn = {"CLK": [CLK], "DI": [d], "LSR": [lsr], "Q": [q]}
    if ce is not None:
        conn["CE"] = [ce]
    return {"type": "TRELLIS_FF", "parameters": {"CEMUX": cemux if ce is None else "CE", "CLKMUX": "CLK",
                                                  "LSRMUX": "LSR", "REGSET": "RESET"},
            "port_directions": {"CLK": "input", "DI": "input", "LSR": "input", "CE": "input", "Q": "output"},
            "connections": conn}


def _lut(a, z):
    return {"type": "LUT4", "parameters": {}, "port_directions": {"A": "input", "Z": "output"},
            "connections": {"A": [a], "Z": [z]}}


def _netlist(tmp_path, cells):
    p = tmp_path / "n.json"
    p.write_text(json.dumps({"modules": {"top": {"ports": {"clk": {"direction": "input", "bits": [CLK]}},
                                                 "cells": cells, "netnames": {}}}}))
    return p


def test_plain_register_after_ram_is_absorbed(tmp_path):
    cells = {"ram": _ram([10, 11]), "ff0": _ff(10, 20), "ff1": _ff(11, 21), "use": _lut(20, 30)}
    p = _netlist(tmp_path, cells)
    assert absorb_bram_outregs(p, "top") == (1, 2)
    out = json.loads(p.read_text())["modules"]["top"]["cells"]
    assert set(out) == {"ram", "use"}
    assert out["ram"]["parameters"]["REGMODE_B"] == "OUTREG"
    assert out["ram"]["connections"]["DOB0"] == [20] and out["ram"]["connections"]["DOB1"] == [21]


def test_registers_that_are_not_plain_are_left_alone(tmp_path):
    cells = {
        "r_ce": _ram([10]), "f_ce": _ff(10, 20, ce=99),                     # clock enable from logic
        "r_rst": _ram([11]), "f_rst": _ff(11, 21, lsr=98),                  # set/reset from logic
        "r_two": _ram([12]), "f_two": _ff(12, 22), "l_two": _lut(12, 32),   # read data also used elsewhere
        "r_oce": _ram([13], oce=97), "f_oce": _ff(13, 23),                  # output enable not tied high
        "r_mix": _ram([14, 15]), "f_mix": _ff(14, 24), "l_mix": _lut(15, 35),  # one bit goes to logic
    }
    p = _netlist(tmp_path, cells)
    before = json.loads(p.read_text())
    assert absorb_bram_outregs(p, "top") == (0, 0)
    assert json.loads(p.read_text()) == before
