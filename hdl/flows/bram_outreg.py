"""Move flip-flops that only register an ECP5 block RAM's read data into the RAM's output register.

yosys maps a synchronous RAM read onto a DP16KD without its output register (``REGMODE = NOREG``), so the
RAM's slow clock-to-output (about 5.8 ns at speed grade 6) plus the route to the next flip-flop is one
register-to-register path. When every used data-out bit of a port drives exactly one plain flip-flop -- same
clock, always enabled, no set/reset -- that flip-flop *is* the port's output register: this pass removes the
flip-flops, connects their outputs to the RAM's data-out pins and sets ``REGMODE_<port> = OUTREG``. The
behaviour is the same cycle for cycle (the output register is clocked every cycle: ``OCE`` = 1, ``RST`` = 0).
What ``yosys-ecp5-infer-bram-outreg`` does as a yosys plugin, done here on the JSON netlist.

Used by :func:`lutzip.hdl.flows.synth.synth` for ECP5; the core's TL tables read into a two-register pipeline
(:mod:`lutzip.hdl.fronts.vector.tl_next`) whose first register this absorbs.
"""
import json
from pathlib import Path

__all__ = ["absorb_bram_outregs"]

_ALWAYS_ON = (["1"], [1])


def _const(bits, value):
    return bits == [value]


def absorb_bram_outregs(netlist, top):
    """Rewrite the yosys JSON ``netlist`` (path) in place; returns ``(ports, flip_flops)``: how many RAM ports
    got ``OUTREG`` and how many flip-flops went into them."""
    path = Path(netlist)
    doc = json.loads(path.read_text())
    mod = doc["modules"][top]
    cells = mod["cells"]
    port_bits = {b for p in mod.get("ports", {}).values() for b in p["bits"]}
    sinks = {}
    for name, c in cells.items():
        for pin, bits in c["connections"].items():
            if c.get("port_directions", {}).get(pin) == "input":
                for b in bits:
                    if isinstance(b, int):
                        sinks.setdefault(b, []).append((name, pin))
    done = removed = 0
    for name, c in list(cells.items()):
        if c["type"] != "DP16KD":
            continue
        conn, par = c["connections"], c["parameters"]
        for port in "AB":
            if par.get(f"REGMODE_{port}", "NOREG") != "NOREG":
                continue
            if not (_const(conn.get(f"OCE{port}"), "1") and _const(conn.get(f"RST{port}"), "0")):
                continue
            clk = conn.get(f"CLK{port}")
            moves = []
            ok = True
            for i in range(18):
                bits = conn.get(f"DO{port}{i}")
                if not bits or not isinstance(bits[0], int):
                    continue
                users = sinks.get(bits[0], [])
                if not users and bits[0] not in port_bits:
                    continue                      # unused data bit
                if len(users) != 1 or bits[0] in port_bits:
                    ok = False
                    break
                ff_name, pin = users[0]
                ff = cells[ff_name]
                fc, fp = ff["connections"], ff["parameters"]
                if (ff["type"] != "TRELLIS_FF" or pin != "DI" or fc.get("CLK") != clk
                        or fp.get("CLKMUX", "CLK").strip() != "CLK"
                        or not (fp.get("CEMUX", "").strip() == "1" or fc.get("CE") in _ALWAYS_ON)
                        or not (fc.get("LSR") in (None, ["0"], [0]) or fp.get("LSRMUX", "").strip() == "0")):
                    ok = False
                    break
                moves.append((f"DO{port}{i}", ff_name, fc["Q"]))
            if not ok or not moves:
                continue
            for pin, ff_name, q in moves:
                conn[pin] = q
                del cells[ff_name]
                removed += 1
            par[f"REGMODE_{port}"] = "OUTREG"
            done += 1
    if done:
        path.write_text(json.dumps(doc))
    return done, removed
