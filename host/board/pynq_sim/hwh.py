"""The simulated overlay's files: a ``lutzip.hwh`` hardware handoff written from the descriptions the Vivado
build uses, and a placeholder ``lutzip.bit`` beside it.

The block design it describes is the PYNQ-Z2 one of docs/AXI.md: a Zynq-7000 PS7 (GP0 master, HP0 slave),
AXI DMA 7.1 in simple mode and ``lutzip_axi`` between the DMA's MM2S and S2MM streams. Its sources are those
of ``lutzip board build --board pynq-z2``: the IP's VLNV, registers, fields, ports and bus interfaces from
:mod:`lutzip.firmware.axi.regs`; part, board part and FCLK0 from :data:`lutzip.firmware.axi.build.ZYNQ_BOARDS`;
the DMA's ``CONFIG.c_*`` values from the block-design Tcl (``firmware/axi/vivado/bd_pynq_z2.tcl``). pynq
parses the file as it parses Vivado's (``Overlay``, ``ip_dict``, ``register_map``, driver binding by VLNV).
"""
from __future__ import annotations

import functools
import re
import struct
from pathlib import Path
from xml.sax.saxutils import quoteattr

from lutzip.board.pynq_sim import dma as D
from lutzip.firmware.axi import regs as R

#: Instance names and base addresses of the design (PYNQ-Z2 address editor defaults).
DMA_NAME, CORE_NAME, PS_NAME = "axi_dma_0", "lutzip_axi_0", "processing_system7_0"
DMA_BASE, CORE_BASE, IP_RANGE = 0x40400000, 0x43C00000, 0x10000
DMA_VLNV = D.DMA_VLNV
PS_VLNV = "xilinx.com:ip:processing_system7:5.5"
#: The Zynq board whose block design is simulated (a Zynq-7000: the simulated PS is a PS7).
BOARD = "pynq-z2"
#: DDR seen by the DMA through HP0 (512 MiB on the PYNQ-Z2).
DDR_BASE, DDR_SIZE = 0x00000000, 0x20000000

#: PG021 register map of the DMA in simple mode (offsets from :mod:`.dma`): name -> (offset, access, text).
DMA_REGISTERS = {
    "MM2S_DMACR": (D.MM2S + D.DMACR, "read-write", "MM2S control: bit0 RS, bit2 Reset, bit12 IOC_IrqEn, "
                                                   "bit14 Err_IrqEn"),
    "MM2S_DMASR": (D.MM2S + D.DMASR, "read-write", "MM2S status: bit0 Halted, bit1 Idle, bit4 DMAIntErr, "
                                                   "bit5 DMASlvErr, bit6 DMADecErr, bit12 IOC_Irq, bit14 Err_Irq"),
    "MM2S_SA": (D.MM2S + D.ADDR, "read-write", "MM2S source address, lower 32 bits"),
    "MM2S_SA_MSB": (D.MM2S + D.ADDR_MSB, "read-write", "MM2S source address, upper 32 bits"),
    "MM2S_LENGTH": (D.MM2S + D.LENGTH, "read-write", "MM2S transfer length in bytes (writing it starts it)"),
    "S2MM_DMACR": (D.S2MM + D.DMACR, "read-write", "S2MM control"),
    "S2MM_DMASR": (D.S2MM + D.DMASR, "read-write", "S2MM status"),
    "S2MM_DA": (D.S2MM + D.ADDR, "read-write", "S2MM destination address, lower 32 bits"),
    "S2MM_DA_MSB": (D.S2MM + D.ADDR_MSB, "read-write", "S2MM destination address, upper 32 bits"),
    "S2MM_LENGTH": (D.S2MM + D.LENGTH, "read-write", "S2MM buffer length in bytes; bytes received at the end"),
}

_ACCESS = {"R": "read-only", "W": "write-only", "RW": "read-write"}


@functools.lru_cache(maxsize=None)
def board_design(board=BOARD) -> dict:
    """What the Vivado build of ``board`` sets: part, board part, FCLK0 and the DMA's ``CONFIG.c_*`` values.

    Returns
    -------
    dict
        ``part``, ``board_part``, ``fclk_mhz``, ``out_bytes`` (from ``ZYNQ_BOARDS``) and ``dma`` (the
        ``c_*`` parameters of the block-design Tcl, as strings).

    Raises
    ------
    UnsupportedError
        A board that is not a Zynq-7000, or a Tcl file that cannot be read.
    """
    from lutzip.errors import UnsupportedError
    from lutzip.firmware.axi.build import VIVADO_DIR, zynq_board
    b = zynq_board(board)
    if not b["part"].startswith("xc7z"):
        raise UnsupportedError(f"the simulated PYNQ device models a Zynq-7000 PS7; {board} is {b['part']}")
    try:
        tcl = (VIVADO_DIR / b["bd"]).read_text(encoding="utf-8")
    except OSError as e:
        raise UnsupportedError(f"cannot read the block design {b['bd']}: {e}") from None
    dma = dict(re.findall(r"CONFIG\.(c_[a-z0-9_]+)\s*\{([^}]*)\}", tcl))
    return {"part": b["part"], "board_part": b["board_part"], "fclk_mhz": float(b["fclk_mhz"]),
            "out_bytes": int(b["OUT_BYTES"]), "dma": dma}


def dma_length_width(board=BOARD) -> int:
    """Bits of the DMA's length register in the board's design (``c_sg_length_width`` of its Tcl)."""
    return int(board_design(board)["dma"]["c_sg_length_width"])


def _e(s) -> str:
    return quoteattr(str(s))


def _params(d: dict, ind: str) -> str:
    return "".join(f'{ind}<PARAMETER NAME={_e(k)} VALUE={_e(v)}/>\n' for k, v in d.items())


def _registers(regs: dict, fields: dict, ind: str) -> str:
    out = []
    for name, (off, access, desc) in regs.items():
        acc = _ACCESS.get(access, access)
        out.append(f"{ind}<REGISTER NAME={_e(name)}>\n"
                   f"{ind}  <PROPERTY NAME=\"DESCRIPTION\" VALUE={_e(desc)}/>\n"
                   f"{ind}  <PROPERTY NAME=\"ADDRESS_OFFSET\" VALUE={_e(hex(off))}/>\n"
                   f"{ind}  <PROPERTY NAME=\"SIZE\" VALUE=\"32\"/>\n"
                   f"{ind}  <PROPERTY NAME=\"ACCESS\" VALUE={_e(acc)}/>\n"
                   f"{ind}  <PROPERTY NAME=\"IS_ENABLED\" VALUE=\"true\"/>\n"
                   f"{ind}  <PROPERTY NAME=\"RESET_VALUE\" VALUE=\"0x0\"/>\n"
                   f"{ind}  <FIELDS>\n")
        flds = fields.get(name) or {name: (0, 32)}
        for fname, (lsb, width) in flds.items():
            out.append(f"{ind}    <FIELD NAME={_e(fname)}>\n"
                       f"{ind}      <PROPERTY NAME=\"DESCRIPTION\" VALUE={_e(fname)}/>\n"
                       f"{ind}      <PROPERTY NAME=\"ADDRESS_OFFSET\" VALUE=\"0\"/>\n"
                       f"{ind}      <PROPERTY NAME=\"ACCESS\" VALUE={_e(acc)}/>\n"
                       f"{ind}      <PROPERTY NAME=\"BIT_OFFSET\" VALUE={_e(lsb)}/>\n"
                       f"{ind}      <PROPERTY NAME=\"BIT_WIDTH\" VALUE={_e(width)}/>\n"
                       f"{ind}    </FIELD>\n")
        out.append(f"{ind}  </FIELDS>\n{ind}</REGISTER>\n")
    return "".join(out)


def _port(name, direction, sigis, left, nets, ind):
    vec = f' LEFT="{left}" RIGHT="0"' if left else ""
    conns = "".join(f'{ind}    <CONNECTION INSTANCE={_e(i)} PORT={_e(p)}/>\n' for i, p in nets)
    body = f"{ind}  <CONNECTIONS>\n{conns}{ind}  </CONNECTIONS>\n" if conns else ""
    return (f'{ind}<PORT DIR="{direction}" NAME={_e(name)} SIGIS="{sigis}" SIGNAME={_e(name)}{vec}>\n'
            f"{body}{ind}</PORT>\n")


def _busif(name, busname, kind, vlnv, params, portmaps, ind, datawidth=None):
    dw = f' DATAWIDTH="{datawidth}"' if datawidth else ""
    pm = "".join(f'{ind}    <PORTMAP LOGICAL={_e(lg)} PHYSICAL={_e(ph)}/>\n' for lg, ph in portmaps)
    return (f'{ind}<BUSINTERFACE BUSNAME={_e(busname)}{dw} NAME={_e(name)} TYPE="{kind}" VLNV={_e(vlnv)}>\n'
            f"{ind}  <PARAMETERS>\n{_params(params, ind + '    ')}{ind}  </PARAMETERS>\n"
            f"{ind}  <PORTMAPS>\n{pm}{ind}  </PORTMAPS>\n{ind}</BUSINTERFACE>\n")


def _axis_params(nbytes, fclk, tkeep=1):
    return {"TDATA_NUM_BYTES": nbytes, "HAS_TREADY": 1, "HAS_TKEEP": tkeep, "HAS_TLAST": 1,
            "FREQ_HZ": int(fclk * 1e6)}


def _lite_params(addr_width, fclk):
    return {"DATA_WIDTH": 32, "PROTOCOL": "AXI4LITE", "ADDR_WIDTH": addr_width, "FREQ_HZ": int(fclk * 1e6)}


def hwh_text(L=8, W=16, lut3_depth=4096, out_bytes=4, clk_hz=100_000_000, lanes=1,
             dma_length_width=None) -> str:
    """The ``.hwh`` of the simulated PYNQ-Z2 design (see the module docstring).

    Parameters
    ----------
    L, W, lut3_depth, out_bytes, clk_hz, lanes : int
        Parameters of ``lutzip_axi`` (docs/AXI.md), written as the IP's PARAMETERS.
    dma_length_width : int, optional
        The DMA's ``c_sg_length_width`` (bits of its length registers; default: the design's).

    Returns
    -------
    str
        The XML text.
    """
    design = board_design()
    fclk = design["fclk_mhz"]
    lw_design = int(design["dma"]["c_sg_length_width"])
    dma_bits = int(design["dma"].get("c_m_axi_mm2s_data_width", 32))
    i = "      "
    core_params = {"L": L, "W": W, "LUT3_DEPTH": lut3_depth, "LANES": lanes, "OUT_BYTES": out_bytes,
                   "CLK_HZ": clk_hz, "Component_Name": f"lutzip_{CORE_NAME}", "EDK_IPTYPE": "PERIPHERAL",
                   "C_BASEADDR": hex(CORE_BASE), "C_HIGHADDR": hex(CORE_BASE + IP_RANGE - 1)}
    # the DMA's configuration as Vivado writes it: the user parameters (CONFIG.c_* of the Tcl, lower case;
    # what pynq's DMA driver reads) and the same values as the HDL model parameters (upper case)
    dma_cfg = {"c_include_sg": 0, "c_micro_dma": 0, "c_include_mm2s": 1, "c_include_s2mm": 1,
               "c_include_mm2s_dre": 0, "c_include_s2mm_dre": 0, "c_addr_width": 32}     # the IP's defaults
    dma_cfg.update(design["dma"])                                                      # what the Tcl sets
    dma_cfg["c_sg_length_width"] = dma_length_width or lw_design
    dma_cfg["c_s_axis_s2mm_tdata_width"] = 8 * out_bytes
    dma_params = {k.upper(): v for k, v in dma_cfg.items()}
    dma_params.update(dma_cfg)
    dma_params.update({"C_BASEADDR": hex(DMA_BASE), "C_HIGHADDR": hex(DMA_BASE + IP_RANGE - 1),
                       "Component_Name": f"lutzip_{DMA_NAME}", "EDK_IPTYPE": "PERIPHERAL"})
    f = f"{fclk:.6f}"
    ps_params = {"PCW_FPGA0_PERIPHERAL_FREQMHZ": f"{fclk:g}", "PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ": f,
                 "PCW_FCLK0_PERIPHERAL_DIVISOR0": 5, "PCW_FCLK0_PERIPHERAL_DIVISOR1": 2,
                 "PCW_FCLK0_PERIPHERAL_CLKSRC": "IO PLL", "PCW_EN_CLK0_PORT": 1, "PCW_FCLK_CLK0_BUF": "TRUE",
                 "PCW_FPGA_FCLK0_ENABLE": 1, "PCW_FPGA_FCLK1_ENABLE": 0, "PCW_FPGA_FCLK2_ENABLE": 0,
                 "PCW_FPGA_FCLK3_ENABLE": 0, "PCW_FCLK1_PERIPHERAL_CLKSRC": "IO PLL",
                 "PCW_FCLK2_PERIPHERAL_CLKSRC": "IO PLL", "PCW_FCLK3_PERIPHERAL_CLKSRC": "IO PLL",
                 "PCW_EN_CLK1_PORT": 0, "PCW_EN_CLK2_PORT": 0, "PCW_EN_CLK3_PORT": 0,
                 "PCW_FPGA1_PERIPHERAL_FREQMHZ": 10, "PCW_FPGA2_PERIPHERAL_FREQMHZ": 10,
                 "PCW_FPGA3_PERIPHERAL_FREQMHZ": 10, "PCW_ACT_FPGA1_PERIPHERAL_FREQMHZ": "10.000000",
                 "PCW_ACT_FPGA2_PERIPHERAL_FREQMHZ": "10.000000", "PCW_ACT_FPGA3_PERIPHERAL_FREQMHZ": "10.000000",
                 "PCW_FCLK1_PERIPHERAL_DIVISOR0": 1, "PCW_FCLK1_PERIPHERAL_DIVISOR1": 1,
                 "PCW_FCLK2_PERIPHERAL_DIVISOR0": 1, "PCW_FCLK2_PERIPHERAL_DIVISOR1": 1,
                 "PCW_FCLK3_PERIPHERAL_DIVISOR0": 1, "PCW_FCLK3_PERIPHERAL_DIVISOR1": 1,
                 "PCW_USE_S_AXI_HP0": 1, "PCW_USE_M_AXI_GP0": 1, "PCW_S_AXI_HP0_DATA_WIDTH": 64,
                 "PCW_UIPARAM_DDR_PARTNO": "MT41K256M16 RE-125", "C_FCLK_CLK0_FREQ": int(fclk * 1e6)}

    # nets: the PS drives the clock and the reset of every block (a sink names its driver, the driver all its
    # sinks); the streams and the AXI4-Lite links are bus interfaces
    clk = [(PS_NAME, "FCLK_CLK0"), (DMA_NAME, "s_axi_lite_aclk"), (CORE_NAME, R.CLOCK)]
    ports_core = []
    for name, direction, width in R.ports(out_bytes):
        d = "I" if direction == "in" else "O"
        if name == R.CLOCK:
            ports_core.append(_port(name, d, "clk", 0, [(PS_NAME, "FCLK_CLK0")], i + "  "))
        elif name == R.RESET:
            ports_core.append(_port(name, d, "rst", 0, [(PS_NAME, "FCLK_RESET0_N")], i + "  "))
        else:        # bus signals: connected through the bus interfaces below
            ports_core.append(_port(name, d, "undef", width - 1 if width > 1 else 0, [], i + "  "))
    core_if = []
    for ifname, (vlnv, mode, prefix) in R.INTERFACES.items():
        pm = [(n[len(prefix):].upper(), n) for n, _d, _w in R.ports(out_bytes) if n.startswith(prefix)]
        if ifname == "s_axi_ctrl":
            core_if.append(_busif(ifname, f"{PS_NAME}_M_AXI_GP0", mode.upper(), vlnv, _lite_params(R.ADDR_BITS, fclk),
                                  pm, i + "  ", 32))
        elif mode == "slave":
            core_if.append(_busif(ifname, f"{DMA_NAME}_M_AXIS_MM2S", "SLAVE", vlnv, _axis_params(4, fclk, 0), pm,
                                  i + "  "))
        else:
            core_if.append(_busif(ifname, f"{CORE_NAME}_{ifname}", "MASTER", vlnv, _axis_params(out_bytes, fclk), pm,
                                  i + "  "))

    def module(inst, vlnv, modtype, params, addrblock, ports, busifs, memmap="", periph=""):
        return (f'    <MODULE FULLNAME="/{inst}" HWVERSION={_e(vlnv.split(":")[-1])} INSTANCE={_e(inst)} '
                f'IPTYPE="PERIPHERAL" IS_ENABLE="1" MODCLASS="PERIPHERAL" MODTYPE={_e(modtype)} VLNV={_e(vlnv)}>\n'
                f"{addrblock}"
                f"{i}<PARAMETERS>\n{_params(params, i + '  ')}{i}</PARAMETERS>\n"
                f"{i}<PORTS>\n{''.join(ports)}{i}</PORTS>\n"
                f"{i}<BUSINTERFACES>\n{''.join(busifs)}{i}</BUSINTERFACES>\n"
                f"{memmap}{periph}    </MODULE>\n")

    def addrblock(ifname, regs, fields):
        return (f"{i}<ADDRESSBLOCKS>\n{i}  <ADDRESSBLOCK ACCESS=\"read-write\" INTERFACE={_e(ifname)} NAME=\"Reg\" "
                f"RANGE=\"{IP_RANGE}\" USAGE=\"register\">\n{i}    <REGISTERS>\n"
                f"{_registers(regs, fields, i + '      ')}{i}    </REGISTERS>\n{i}  </ADDRESSBLOCK>\n"
                f"{i}</ADDRESSBLOCKS>\n")

    def memrange(inst, base, size, master, slave, memtype, block):
        return (f'{i}  <MEMRANGE ADDRESSBLOCK="{block}" BASENAME="C_BASEADDR" BASEVALUE="{base:#010x}" '
                f'HIGHNAME="C_HIGHADDR" HIGHVALUE="{base + size - 1:#010x}" INSTANCE={_e(inst)} IS_DATA="TRUE" '
                f'IS_INSTRUCTION="TRUE" MASTERBUSINTERFACE="{master}" MEMTYPE="{memtype}" '
                f'SLAVEBUSINTERFACE="{slave}"/>\n')

    core_regs = {k: (off, acc, desc) for k, (off, acc, desc) in R.REGISTERS.items()}
    core = module(CORE_NAME, R.VLNV, R.NAME, core_params, addrblock("s_axi_ctrl", core_regs, R.FIELDS),
                  ports_core, core_if)
    dma_ports = [_port("s_axi_lite_aclk", "I", "clk", 0, [(PS_NAME, "FCLK_CLK0")], i + "  "),
                 _port("axi_resetn", "I", "rst", 0, [(PS_NAME, "FCLK_RESET0_N")], i + "  "),
                 _port("mm2s_introut", "O", "INTERRUPT", 0, [], i + "  "),
                 _port("s2mm_introut", "O", "INTERRUPT", 0, [], i + "  ")]
    ax = "xilinx.com:interface:axis:1.0"
    mm = "xilinx.com:interface:aximm:1.0"
    dma_if = [_busif("S_AXI_LITE", f"{PS_NAME}_M_AXI_GP0", "SLAVE", mm, _lite_params(10, fclk), [], i + "  ", 32),
              _busif("M_AXI_MM2S", f"{DMA_NAME}_M_AXI_MM2S", "MASTER", mm,
                     {"DATA_WIDTH": dma_bits, "PROTOCOL": "AXI4", "ADDR_WIDTH": 32}, [], i + "  ", dma_bits),
              _busif("M_AXI_S2MM", f"{DMA_NAME}_M_AXI_S2MM", "MASTER", mm,
                     {"DATA_WIDTH": dma_bits, "PROTOCOL": "AXI4", "ADDR_WIDTH": 32}, [], i + "  ", dma_bits),
              _busif("M_AXIS_MM2S", f"{DMA_NAME}_M_AXIS_MM2S", "INITIATOR", ax, _axis_params(4, fclk), [], i + "  "),
              _busif("S_AXIS_S2MM", f"{CORE_NAME}_m_axis", "TARGET", ax, _axis_params(out_bytes, fclk), [], i + "  ")]
    dma_mem = (f"{i}<MEMORYMAP>\n"
               + memrange(PS_NAME, DDR_BASE, DDR_SIZE, "M_AXI_MM2S", "S_AXI_HP0", "MEMORY", "HP0_DDR_LOWOCM")
               + memrange(PS_NAME, DDR_BASE, DDR_SIZE, "M_AXI_S2MM", "S_AXI_HP0", "MEMORY", "HP0_DDR_LOWOCM")
               + f"{i}</MEMORYMAP>\n{i}<PERIPHERALS>\n{i}  <PERIPHERAL INSTANCE={_e(PS_NAME)}/>\n{i}</PERIPHERALS>\n")
    dma = module(DMA_NAME, DMA_VLNV, "axi_dma", dma_params, addrblock("S_AXI_LITE", DMA_REGISTERS, {}),
                 dma_ports, dma_if, dma_mem)
    ps_ports = [_port("FCLK_CLK0", "O", "clk", 0, clk[1:], i + "  "),
                _port("FCLK_RESET0_N", "O", "rst", 0, [(DMA_NAME, "axi_resetn"), (CORE_NAME, R.RESET)], i + "  ")]
    ps_if = [_busif("M_AXI_GP0", f"{PS_NAME}_M_AXI_GP0", "MASTER", mm,
                    {"DATA_WIDTH": 32, "PROTOCOL": "AXI3", "ADDR_WIDTH": 32}, [], i + "  ", 32),
             _busif("S_AXI_HP0", f"{DMA_NAME}_M_AXI_MM2S", "SLAVE", mm,
                    {"DATA_WIDTH": 64, "PROTOCOL": "AXI3", "ADDR_WIDTH": 32}, [], i + "  ", 64)]
    ps_mem = (f"{i}<MEMORYMAP>\n"
              + memrange(DMA_NAME, DMA_BASE, IP_RANGE, "M_AXI_GP0", "S_AXI_LITE", "REGISTER", "Reg")
              + memrange(CORE_NAME, CORE_BASE, IP_RANGE, "M_AXI_GP0", "s_axi_ctrl", "REGISTER", "Reg")
              + f"{i}</MEMORYMAP>\n{i}<PERIPHERALS>\n{i}  <PERIPHERAL INSTANCE={_e(DMA_NAME)}/>\n"
              f"{i}  <PERIPHERAL INSTANCE={_e(CORE_NAME)}/>\n{i}</PERIPHERALS>\n")
    ps = module(PS_NAME, PS_VLNV, "processing_system7", ps_params, "", ps_ports, ps_if, ps_mem)
    m = re.match(r"xc(7z\d+)([a-z]+\d+)(-\d+)", design["part"])
    dev, pkg, speed = m.groups() if m else ("7z020", "clg400", "-1")
    return ('<?xml version="1.0" encoding="UTF-8" standalone="no" ?>\n'
            '<EDKSYSTEM EDWVERSION="1.2" TIMESTAMP="lutzip simulated overlay" VIVADOVERSION="2022.1">\n'
            f'  <SYSTEMINFO ARCH="zynq" BOARD={_e(design["board_part"])} DEVICE="{dev}" NAME="lutzip" '
            f'PACKAGE="{pkg}" SPEEDGRADE="{speed}"/>\n'
            "  <EXTERNALPORTS/>\n  <EXTERNALINTERFACES/>\n  <MODULES>\n"
            f"{ps}{dma}{core}  </MODULES>\n</EDKSYSTEM>\n")


def bit_bytes(design="lutzip", part="7z020clg400") -> bytes:
    """A placeholder ``.bit`` file: a valid Xilinx bitstream header around a few filler words.

    The simulated device never programs it; pynq reads its header (design name, part) like a real one.
    """
    def field(tag, text):
        data = text.encode("ascii") + b"\0"
        return bytes([tag]) + struct.pack(">H", len(data)) + data
    body = b"\xff" * 32
    return (struct.pack(">H", 9) + bytes(9) + struct.pack(">H", 1)
            + field(0x61, f"{design};UserID=0XFFFFFFFF;Version=2022.1") + field(0x62, part)
            + field(0x63, "2026/01/01") + field(0x64, "00:00:00")
            + b"\x65" + struct.pack(">I", len(body)) + body)


def write_overlay(directory, **params) -> Path:
    """Write ``lutzip.bit`` and ``lutzip.hwh`` (same basename, as pynq expects) into ``directory``.

    Parameters
    ----------
    directory : str or Path
        Where to write (created if missing).
    **params
        Parameters of :func:`hwh_text`.

    Returns
    -------
    Path
        The ``.bit`` path (pass it to ``pynq.Overlay``).
    """
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    bit = d / "lutzip.bit"
    bit.write_bytes(bit_bytes())
    bit.with_suffix(".hwh").write_text(hwh_text(**params), encoding="utf-8")
    return bit
