"""Bitstream builds for the boards of :mod:`lutzip.firmware.boards.registry` (``lutzip board build``).

iCE40 (iCEBreaker): MyHDL -> Verilog -> yosys synth_ice40 -> nextpnr-ice40 (PCF) -> icepack -> ``.bin``.
ECP5 (ULX3S):       MyHDL -> Verilog -> yosys synth_ecp5  -> nextpnr-ecp5 (LPF)  -> ecppack -> ``.bit``.
Xilinx (Arty A7):   MyHDL -> Verilog + XDC + Vivado batch Tcl in the output folder, plus a yosys
                    ``synth_xilinx`` resource check; the bitstream needs Vivado (``vivado -mode batch
                    -source arty_a7.tcl`` in that folder).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from lutzip.errors import UnsupportedError
from lutzip.hdl.flows import synth as sy
from lutzip.hdl.flows.convert import convert_block
from lutzip.firmware.boards.registry import BOARDS, check_baud, get_board
from lutzip.firmware.axi.build import ZYNQ_BOARDS, build_zynq, format_zynq  # AXI DMA boards (docs/AXI.md)

__all__ = ["build", "format_build", "register"]

#: Boards whose top takes ``CORE_CLK_HZ`` (a PLL and the two-domain top, docs/PROTOCOL.md section 7).
PLL_BOARDS = ("ulx3s", "icebreaker")


def build(board_name, out=None, baud=None, seed=1, L=None, W=None, LUT3_DEPTH=None, top=None, pack=True,
          xilinx_check=True, **top_params):
    """Build ``board_name``'s bitstream into ``out`` (default ``build/board-<name>``); returns a result dict.

    ``top`` replaces ``lutzip.firmware.uart.uart_top.uart_top`` (same signature), e.g. for tests.
    """
    if board_name in ZYNQ_BOARDS:
        return build_zynq(board_name, out, **{k: v for k, v in dict(L=L, W=W, LUT3_DEPTH=LUT3_DEPTH,
                                                                    STATES=top_params.get("STATES"),
                                                                    MIRROR=top_params.get("MIRROR")).items()
                                              if v is not None})
    b = get_board(board_name)
    core = {"L": 8, "W": 16, "LUT3_DEPTH": 4096, **b.core_params}
    L = core["L"] if L is None else L
    W = core["W"] if W is None else W
    if top_params.get("PLL_ONE_DOMAIN") and "COUNTER_BITS" not in top_params:
        top_params["COUNTER_BITS"] = 32     # (iCEBreaker at the PLL clock) 36-bit counters do not fit the UP5K
    lanes_p = dict(b.lanes_params.get(top_params.get("LANES") or 1, {}))   # the board's replay-lanes build
    lut3 = lanes_p.pop("LUT3_DEPTH", core["LUT3_DEPTH"])
    LUT3_DEPTH = lut3 if LUT3_DEPTH is None else LUT3_DEPTH
    top_params = {**b.top_params, **lanes_p, **top_params}
    baud = b.baud if baud is None else baud
    if top_params.get("CORE_CLK_HZ") and b.name not in PLL_BOARDS:
        raise UnsupportedError(f"{b.title}: a core clock of its own (CORE_CLK_HZ, --core-mhz) is supported on "
                               f"{', '.join(PLL_BOARDS)} only")
    baud_err = check_baud(b.clk_hz, baud)
    if top_params.get("PLL_ONE_DOMAIN"):
        if b.name != "icebreaker" or not top_params.get("CORE_CLK_HZ"):
            raise UnsupportedError("PLL_ONE_DOMAIN (the UART at the PLL clock) needs the iCEBreaker and CORE_CLK_HZ")
        baud_err = check_baud(int(round(core_clk_hz(b, top_params))), baud)
    out = Path(out or Path("build") / f"board-{b.name}")
    out.mkdir(parents=True, exist_ok=True)
    if not b.constraints_path.is_file():
        raise UnsupportedError(f"constraints file {b.constraints_path} is missing: the lutzip installation is "
                               "incomplete (they ship as package data lutzip.constraints; reinstall lutzip)")
    ports = b.module().ports()
    inst = b.top()(**ports, BAUD=baud, L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, top=top, **top_params)
    verilog = convert_block(inst, out, b.top_name, "verilog")
    res_keep = keep_reset_copies(verilog)
    res_no_rw = mark_no_rw_check(verilog)
    shutil.copy(b.constraints_path, out / b.constraints)
    res = {"board": b.name, "title": b.title, "part": b.part, "clk_mhz": b.clk_hz / 1e6, "baud": baud,
           "baud_error": round(baud_err, 5), "params": {"L": L, "W": W, "LUT3_DEPTH": LUT3_DEPTH, **top_params},
           "out": str(out), "files": {"verilog": verilog.name, "constraints": b.constraints}}
    if res_keep:
        res["reset_copies"] = res_keep
    if res_no_rw:
        res["no_rw_check"] = res_no_rw
    if b.family == "ecp5":
        # the vector front's loop selects from slice primitives, as `lutzip hdl synth` does (hdl/flows/ecp5_select.py;
        # the generic code stays beside it as <top>.generic.v)
        res["select64_mapped"] = map_select64_file(verilog)

    if b.family == "xilinx":
        shutil.copy(b.constraints_path.parent / b.vivado_tcl, out / b.vivado_tcl)
        res["files"]["vivado_tcl"] = b.vivado_tcl
        res["bitstream"] = None
        res["next_step"] = f"cd {out} && vivado -mode batch -source {b.vivado_tcl}"
        if xilinx_check:
            _, ys = sy.run_yosys(verilog, "xilinx", b.top_name, out)
            res["cells"] = ys["cells"]
            res["resources"] = sy.classify_cells(ys["cells"], "xilinx")
        return res

    yosys_opts = b.yosys_opts
    if top_params.get("PLL_ONE_DOMAIN"):
        # (2026-12-07 evening) ABC9 with -dff did not finish on this netlist in 37 min (load 15-19); without it
        # the design packs into 5217 of 5280 LCs with COUNTER_BITS 32
        yosys_opts = ()
    try:
        netlist, ys = sy.run_yosys(verilog, b.family, b.top_name, out, yosys_opts)
    except sy.ToolError as e:
        if not yosys_opts:
            raise
        # ABC9 of some yosys builds traps on some inputs with -dff: map without the board's extra options (the
        # result says so; on the UP5K that may not fit)
        res["yosys_opts_dropped"] = f"{' '.join(yosys_opts)}: {str(e).splitlines()[0]}"
        netlist, ys = sy.run_yosys(verilog, b.family, b.top_name, out)
    if b.family == "ecp5":
        # flip-flops right after a block RAM read become its output register (as `lutzip hdl synth` does: the
        # decoder core's TL tables read into such a register; hdl/flows/bram_outreg.py, same cycle for cycle)
        from lutzip.hdl.flows.bram_outreg import absorb_bram_outregs
        res["bram_outregs"], moved = absorb_bram_outregs(netlist, b.top_name)
        ys["cells"]["TRELLIS_FF"] = ys["cells"].get("TRELLIS_FF", 0) - moved
    res["memories"] = ys["memories"]
    res["ff_by_block"] = sy.ff_by_block(netlist, b.top_name, prefix="uart_top_cdc0_proto_engine_cdc0_proto_engine0_"
                                        if top_params.get("CORE_CLK_HZ") and not top_params.get("PLL_ONE_DOMAIN")
                                        else "uart_top0_proto_engine0_")
    res["cells"] = ys["cells"]
    res["resources"] = sy.classify_cells(ys["cells"], b.family)
    target = sy.Target(b.name, b.family, b.device_args, b.clk_hz / 1e6, b.part)
    routed = f"{b.top_name}.asc" if b.family == "ice40" else f"{b.top_name}.config"
    pnr = sy.run_nextpnr(out / f"{b.top_name}.json", target, out, freq_mhz=b.clk_hz / 1e6, seed=seed,
                         constraints=b.constraints_path, out_name=routed, top=b.top_name)
    res["pnr"] = pnr
    if not pnr["fits"]:
        raise sy.ToolError(f"{b.title}: {pnr['error']} (yosys cells: {res['resources']}; flip-flops by block: "
                           f"{res['ff_by_block']}; memories mapped to logic: "
                           f"{[k for k, v in res['memories'].items() if v == 'logic']}; see {out})")
    res["files"]["routed"] = routed
    res["meets_clock"] = pnr["fmax_mhz"] is not None and pnr["fmax_mhz"] >= b.clk_hz / 1e6
    if top_params.get("CORE_CLK_HZ"):
        res["clock_domains"] = clock_domains(pnr["fmax_by_clock"], b.clk_hz, core_clk_hz(b, top_params))
        if top_params.get("PLL_ONE_DOMAIN"):    # (iCEBreaker) the UART at the PLL clock too: one domain
            del res["clock_domains"]["link"]
        res["meets_clock"] = all(d["fmax_mhz"] is not None and d["fmax_mhz"] >= d["target_mhz"]
                                 for d in res["clock_domains"].values())
    res["bitstream"] = None
    if pack:
        if b.family == "ice40":
            bit = f"{b.top_name}.bin"
            sy.run_tool(sy.find_tool("icepack") + [routed, bit], out, f"{b.top_name}.icepack.log")
        else:
            bit = f"{b.top_name}.bit"
            sy.run_tool(sy.find_tool("ecppack") + ["--compress", routed, bit], out, f"{b.top_name}.ecppack.log")
        res["bitstream"] = bit
        res["bitstream_bytes"] = (out / bit).stat().st_size
    return res


_KEEP_RE = re.compile(r"^(always @\(posedge [^)]*\) begin: \w+_(?:reset_reg\d*_c_keep|c_keep_\w+))$", re.M)


def map_select64_file(verilog) -> int:
    """Replace the converted ``select64`` instances in ``verilog`` by their ECP5 primitive build
    (:func:`lutzip.hdl.flows.ecp5_select.map_select64`); the generic file is kept as ``<name>.generic.v``.
    Returns how many were replaced (0: the file is unchanged)."""
    from lutzip.hdl.flows.ecp5_select import map_select64
    verilog = Path(verilog)
    text, n = map_select64(verilog.read_text())
    if n:
        shutil.copy(verilog, verilog.with_suffix(".generic.v"))
        verilog.write_text(text)
    return n


def keep_reset_copies(verilog) -> int:
    """Mark the processes of :func:`lutzip.firmware.engine.reset_reg.reset_reg` (``proto_engine``'s
    ``RST_REG``) and those named ``c_keep_*`` (``proto_engine_cdc``'s framer and parser reset copies with
    ``CORE_RST_REG``) with ``(* keep *)`` in the converted Verilog, so that yosys keeps each block's reset
    flip-flop instead of merging the identical copies into one; returns how many were marked (0: the file is
    unchanged).
    """
    verilog = Path(verilog)
    text = verilog.read_text()
    new, n = _KEEP_RE.subn(r"(* keep *)\n\1", text)
    if n:
        verilog.write_text(new)
    return n


# (an instance name can carry a suffix: ``cmd_ring0_0`` when MyHDL met the name before in the process)
_NO_RW_RE = re.compile(r"^(reg \[\d+:0\] \w*(?:replay_bank\d+\w*_mem_(?:lo|hi)|cmd_ring\d+\w*_mem[01]"
                       r"|fifo\d+\w*_mem_p|lane_buffer\d+_mem) \[)", re.M)


def mark_no_rw_check(verilog) -> int:
    """Mark the RAMs of :func:`lutzip.firmware.engine.replay_bank.replay_bank` (``replay_unit``'s ``PIPE``) and
    the two halves of a split :func:`lutzip.firmware.engine.cmd_ring.cmd_ring` (``PIPE``, more than 2048
    entries) and the RAM of a :func:`lutzip.firmware.engine.fifo.fifo` with ``PIPE`` (``mem_p``)
    ``(* no_rw_check *)`` in the converted Verilog, and the lane buffers of a replay-lanes build
    (:func:`lutzip.hdl.flows.synth.mark_lane_buffers`); returns how many were marked (0: the file is unchanged).

    Neither reads an entry whose data is used in the cycle it is written: the replay buffer is written only
    between runs and read only during one; the ring reads committed entries only, and writes only while it is
    not full, so its write address (``ws``) differs from the read address (``rp``) whenever it reads; the same
    holds for the FIFO (a write needs room, a read an entry). Without
    the mark yosys keeps MyHDL's read-before-write meaning for equal addresses with a bypass multiplexer after
    the RAM's data out, which stands between the RAM and the flip-flop that should become its output register
    (as :func:`lutzip.hdl.flows.synth.mark_lane_buffers` for the lane buffers).
    """
    verilog = Path(verilog)
    text = verilog.read_text()
    new, n = _NO_RW_RE.subn(r"(* no_rw_check *)\n\1", text)
    if n:
        verilog.write_text(new)
    return n


def core_clk_hz(b, top_params) -> float:
    """The core clock the board's PLL makes for ``top_params["CORE_CLK_HZ"]`` (Hz; the nearest setting)."""
    from lutzip.firmware.boards.pll import ecp5_pll, ice40_pll
    want = top_params["CORE_CLK_HZ"]
    if b.family == "ecp5":
        return ecp5_pll(b.clk_hz, want).f_out
    if b.family == "ice40":
        return ice40_pll(b.clk_hz, want).f_out
    raise UnsupportedError(f"{b.title}: no PLL in the board top (CORE_CLK_HZ: {', '.join(PLL_BOARDS)})")


def clock_domains(fmax_by_clock, link_hz, core_hz) -> dict:
    """nextpnr's Fmax per clock net grouped into the two domains: ``core`` (the PLL output's net: the PLL block's
    ``clk_out`` on the ULX3S, nextpnr-ecp5 ``$glbnet$pll_ecp50_clk_out``; the top's ``core_clk`` on the iCEBreaker,
    whose SB_PLL40_2_PAD drives the net of that name) and ``link`` (every other clock net: the board clock, on the
    iCEBreaker the PLL's pass-through port A ``clk_ref``). Each: ``fmax_mhz`` (the slowest net of the domain; None
    if nextpnr reported none), ``target_mhz``, ``nets``."""
    dom = {"link": {"target_mhz": round(link_hz / 1e6, 3), "nets": {}},
           "core": {"target_mhz": round(core_hz / 1e6, 3), "nets": {}}}
    for net, f in fmax_by_clock.items():
        dom["core" if re.search(r"pll.*clk_out|core_clk", net.lower()) else "link"]["nets"][net] = f
    for d in dom.values():
        d["fmax_mhz"] = min(d["nets"].values()) if d["nets"] else None
    return dom


def format_build(r) -> str:
    """The result dict of :func:`build` as the lines ``lutzip board build`` prints."""
    if "vlnv" in r:
        return format_zynq(r)
    lines = [f"board    {r['title']} ({r['part']}), {r['clk_mhz']:g} MHz, UART {r['baud']} baud "
             f"(divider error {r['baud_error']:.2%})"]
    if "resources" in r:
        lines.append("cells    " + "  ".join(f"{k.upper()}={v}" for k, v in r["resources"].items() if v))
    if r.get("ff_by_block"):
        lines.append("FFs by   " + "  ".join(f"{k}={v}" for k, v in r["ff_by_block"].items()))
    p = r.get("pnr")
    if p:
        lines.append("placed   " + "  ".join(f"{k}={v}/{p['available'].get(k, '?')}"
                                           for k, v in sorted(p["utilization"].items())))
        if r.get("clock_domains"):
            for name, d in r["clock_domains"].items():
                f = d["fmax_mhz"]
                ok = f is not None and f >= d["target_mhz"]
                lines.append(f"Fmax     {name:4s} {f if f is not None else float('nan'):.1f} MHz at "
                             f"{d['target_mhz']:g} MHz: {'met' if ok else 'NOT MET'}")
        else:
            lines.append(f"Fmax     {p['fmax_mhz']:.1f} MHz at a {r['clk_mhz']:g} MHz board clock: "
                         f"{'met' if r['meets_clock'] else 'NOT MET'}")
    out = Path(r["out"])
    if r.get("bitstream"):
        lines.append(f"bitstream {out / r['bitstream']} ({r['bitstream_bytes']} bytes)")
    elif r.get("next_step"):
        lines.append(f"Vivado   {r['next_step']}")
    else:
        lines.append(f"routed   {out / r['files']['routed']} (not packed)")
    return "\n".join(lines)


def _cmd_build(args) -> int:
    extra = {"RING_DEPTH": args.ring_depth} if args.ring_depth else {}
    if args.states:
        extra["STATES"] = args.states
    if args.mirror is not None:
        extra["MIRROR"] = int(args.mirror)
    if args.core_mhz:
        extra["CORE_CLK_HZ"] = int(round(args.core_mhz * 1e6))
    if args.lanes:
        extra["LANES"] = args.lanes
    if args.one_domain:
        extra["PLL_ONE_DOMAIN"] = True
    r = build(args.board, out=args.out, baud=args.baud, seed=args.seed, L=args.L, W=args.W,
              LUT3_DEPTH=args.lut3_depth, pack=not args.no_pack, **extra)
    print(json.dumps(r, indent=2) if args.json else format_build(r))
    return 0 if r.get("meets_clock", True) else 1


def register(board_subparsers):
    """Add ``build`` to the ``lutzip board`` group (``board_subparsers`` from its add_subparsers)."""
    p = board_subparsers.add_parser("build", help="build a board bitstream (yosys + nextpnr + icepack/ecppack; "
                                    "Vivado files for the Arty)")
    p.add_argument("--board", required=True, choices=sorted(BOARDS) + sorted(ZYNQ_BOARDS))
    p.add_argument("--out", help="output folder (default build/board-NAME)")
    p.add_argument("--baud", type=int, help="UART baud rate (default: the board's)")
    p.add_argument("--seed", type=int, default=1, help="nextpnr seed")
    p.add_argument("--L", type=int, help="LUT1 address bits (default: the board's, usually 8)")
    p.add_argument("--W", type=int, help="word width (default 16)")
    p.add_argument("--lut3-depth", type=int, help="LUT3 entries (default 4096)")
    p.add_argument("--ring-depth", type=int, help="command ring entries (default: the board's / uart_top's)")
    p.add_argument("--states", type=int, choices=(1, 2), help="the core's code tables: 2 decodes --states 2 files "
                   "(format version 5) too (default: the board's, 2 on every board)")
    p.add_argument("--mirror", dest="mirror", action="store_true", default=None,
                   help="the core also decodes row streams (MIRROR=1, format version 6, mirrored rows; default: the "
                        "board's: ULX3S, Arty and the Zynq boards 1, iCEBreaker 0)")
    p.add_argument("--no-mirror", dest="mirror", action="store_false",
                   help="a core without row stripes (MIRROR=0; row-stream files are refused, re-compress with "
                        "--no-rows)")
    p.add_argument("--core-mhz", type=float, help="run the engine and decoder core at this PLL clock (ULX3S, "
                   "iCEBreaker; default: one domain at the board clock)")
    p.add_argument("--one-domain", action="store_true", help="with --core-mhz on the iCEBreaker: the UART at the "
                   "PLL clock too (one clock domain, no crossing; the two-domain design does not fit the UP5K)")
    p.add_argument("--lanes", type=int, choices=(1, 2, 4, 8), help="the replay unit's lanes: --replay decodes "
                   "through the N-lane decoder (boards with a replay buffer; docs/PROTOCOL.md section 6.1; default 1)")
    p.add_argument("--no-pack", action="store_true", help="stop after place and route")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_build)
    return p
