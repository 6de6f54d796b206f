"""Build the vector front's loop multiplexers from ECP5 slice primitives in the converted Verilog.

The loop of the vector front (:mod:`lutzip.hdl.fronts.vector.loop_vector`, stage F, assembled by
:mod:`lutzip.hdl.fronts.vector.front_vector`) is ``p2 -> six 64:1 selects -> p2``
(:mod:`lutzip.hdl.fronts.vector.select64`). An ECP5 slice builds an 8:1 multiplexer from four LUT4s, two PFUMX and an
L6MUX21 with no routing inside, so a 64:1 is two such levels (two routing hops). yosys' LUT mapping (abc9)
does not find that structure: it spreads each select over four or five LUT levels with a route between
each, and the loop was the longest path of the core. This pass replaces the generic code of every
``select64`` instance in the converted Verilog by an instance of a module built from those primitives:

* level 1, per pair of inputs: a LUT4 as 2:1 on ``s[0]``, a PFUMX on ``s[1]``, an L6MUX21 on ``s[2]``
  (eight 8:1 groups);
* level 2, the eight group outputs: LUT4 on ``s[3]``, PFUMX on ``s[4]``, L6MUX21 on ``s[5]``.

``s = sel ^ INV`` costs nothing: where a bit of ``INV`` is set, that multiplexer's data inputs are swapped.
The behaviour is that of the generic code (proved with yosys' SAT solver in tests/test_ecp5_select.py,
and the core built this way is simulated against the reference decoder there too).

Used by :func:`lutzip.hdl.flows.synth.synth` for ECP5 and by the ECP5 board flow
(:func:`lutzip.firmware.boards.build.build`, since 2026-12-08: before that the ULX3S builds left all 14 selects of
a ``STATES=2`` core to ABC, 4-5 LUT levels each). The simulators (GHDL, Icarus, Verilator) run the generic
converted code; only the synthesised netlist differs.
"""
import re

__all__ = ["map_select64", "MODULE"]

MODULE_NAME = "lutzip_sel64_ecp5"


def _lut_mux_init():
    """INIT of a LUT4 computing ``C ? B : A`` (D unused)."""
    init = 0
    for idx in range(16):
        a, b, c = idx & 1, (idx >> 1) & 1, (idx >> 2) & 1
        if (b if c else a):
            init |= 1 << idx
    return init


def _module():
    init = f"16'h{_lut_mux_init():04x}"

    def level(name, n, prim, bit, src, dst):
        # mux2 of src[2g] (s = 0) and src[2g+1] (s = 1) on s[bit] ^ INV[bit] into dst[g]
        if prim == "LUT4":
            a = f"LUT4 #(.INIT({init})) u (.A({src}[2*g{{}}]), .B({src}[2*g{{}}]), .C(s[{bit}]), .D(1'b0), .Z({dst}[g]));"
            norm, swap = a.format("", "+1"), a.format("+1", "")
        elif prim == "PFUMX":     # Z = C0 ? ALUT : BLUT
            a = f"PFUMX u (.ALUT({src}[2*g{{}}]), .BLUT({src}[2*g{{}}]), .C0(s[{bit}]), .Z({dst}[g]));"
            norm, swap = a.format("+1", ""), a.format("", "+1")
        else:                     # L6MUX21: Z = SD ? D1 : D0
            a = f"L6MUX21 u (.D0({src}[2*g{{}}]), .D1({src}[2*g{{}}]), .SD(s[{bit}]), .Z({dst}[g]));"
            norm, swap = a.format("", "+1"), a.format("+1", "")
        return [f"  generate for (g = 0; g < {n}; g = g + 1) begin: {name}",
                f"    if (INV & {1 << bit}) {swap}",
                f"    else {norm}",
                "  end endgenerate"]

    lines = [f"// the 64:1 select of lutzip.hdl.fronts.vector.select64 from ECP5 slice primitives (lutzip.hdl.flows.ecp5_select)",
             f"module {MODULE_NAME} #(parameter INV = 0) (input [31:0] c, input [31:0] n, input [5:0] s, output q);",
             "  wire [63:0] d = {n, c};",
             "  wire [31:0] l1; wire [15:0] l2; wire [7:0] l3; wire [3:0] l4; wire [1:0] l5; wire [0:0] l6;",
             "  genvar g;"]
    lines += level("m1", 32, "LUT4", 0, "d", "l1")
    lines += level("m2", 16, "PFUMX", 1, "l1", "l2")
    lines += level("m3", 8, "L6MUX21", 2, "l2", "l3")
    lines += level("m4", 4, "LUT4", 3, "l3", "l4")
    lines += level("m5", 2, "PFUMX", 4, "l4", "l5")
    lines += level("m6", 1, "L6MUX21", 5, "l5", "l6")
    lines += ["  assign q = l6[0];", "endmodule", ""]
    return "\n".join(lines)


MODULE = _module()


def _cut(text, pattern, what):
    m = list(re.finditer(pattern, text))
    if len(m) != 1:
        raise ValueError(f"ecp5_select: {what}: found {len(m)} times in the converted Verilog, expected once")
    return m[0]


def _cut_block(text, name):
    """Span of ``always @(...) begin: NAME ... end`` (a MyHDL combinational block)."""
    m = _cut(text, rf"begin: {re.escape(name)}\n", f"block {name}")
    start = text.rindex("always @(", 0, m.start())
    end = text.index("\nend\n", m.end()) + len("\nend\n")
    return start, end


def map_select64(text):
    """Replace each converted ``select64`` in Verilog ``text``; returns ``(new_text, instances)``.

    Raises ``ValueError`` if an instance's code is not in the shape :mod:`lutzip.hdl.fronts.vector.select64` converts to
    (so a change there cannot silently leave a select generic or half replaced)."""
    prefixes = re.findall(r"begin: (\w*?)s64_four\n", text)
    for p in prefixes:
        e = re.escape(p)
        si = _cut(text, rf"assign {e}si = \((\w+) \^ (\d+)\);\n", f"{p}si")
        sel, inv = si.group(1), int(si.group(2))
        c = _cut(text, rf"{e}mc\[j\] = (\w+)\[\(4 \* j\)\];", f"{p}mc").group(1)
        n = _cut(text, rf"{e}mn\[j\] = (\w+)\[\(4 \* j\)\];", f"{p}mn").group(1)
        q = _cut(text, rf"\n\s+(\w+) = {e}qn;", f"{p}qn").group(1)
        inst = f"{MODULE_NAME} #(.INV({inv})) {p}ecp5 (.c({c}), .n({n}), .s({sel}), .q({q}));\n"
        a, b = _cut_block(text, f"{p}s64_four")
        text = text[:a] + inst + text[b:]
        a, b = _cut_block(text, f"{p}s64_two")
        text = text[:a] + text[b:]
        for pat, what in ((rf"assign {e}si = .*;\n", "si"), (rf"assign {e}qc = .*;\n", "qc"),
                          (rf"assign {e}qn = .*;\n", "qn")):
            m = _cut(text, pat, p + what)
            text = text[:m.start()] + text[m.end():]
        for pat in (rf"reg \[7:0\] {e}mc;\n", rf"reg \[7:0\] {e}mn;\n", rf"wire {e}qc;\n", rf"wire {e}qn;\n",
                    rf"wire \[5:0\] {e}si;\n"):
            m = _cut(text, pat, pat)
            text = text[:m.start()] + text[m.end():]
        m = _cut(text, rf"\nreg {re.escape(q)};\n", f"reg {q}")
        text = text[:m.start()] + f"\nwire {q};\n" + text[m.end():]
    if prefixes:
        text = text.rstrip("\n") + "\n\n" + MODULE
    return text, len(prefixes)
