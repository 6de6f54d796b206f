"""Register map and interface names of the AXI top ``lutzip_axi`` (docs/AXI.md): the one definition.

Used by the MyHDL top (:mod:`lutzip.firmware.axi.lutzip_axi`), the simulator (:mod:`lutzip.firmware.axi.sim`),
the Vivado Tcl generator and the PYNQ driver / .hwh generator (host side).
"""
from __future__ import annotations

#: IP identity (Vivado ``ipx::package_project`` and PYNQ ``bindto``).
VENDOR, LIBRARY, NAME, IP_VERSION = "lutzip.org", "lutzip", "lutzip_axi", "1.0"
VLNV = f"{VENDOR}:{LIBRARY}:{NAME}:{IP_VERSION}"
TOP_NAME = NAME

ID_VALUE = 0x4C5A4158          #: "LZAX"
VERSION_MAJOR, VERSION_MINOR = 1, 0
VERSION_VALUE = (VERSION_MAJOR << 16) | VERSION_MINOR

ADDR_BITS = 8                  #: AXI4-Lite byte address width
DATA_BITS = 32
ADDR_RANGE = 1 << ADDR_BITS    #: bytes of address space the IP decodes

# register offsets (bytes)
ID = 0x00
VERSION = 0x04
PARAMS = 0x08
LUT3 = 0x0C
CLK_HZ = 0x10
CONTROL = 0x14
STATUS = 0x18
ERR_STRIPE = 0x1C
ERR_COUNT = 0x20
TBL_ADDR = 0x24
TBL_DATA = 0x28
CYC_TOTAL = 0x30
CYC_BUSY = 0x34
CYC_STARVED = 0x38
CYC_BLOCKED = 0x3C
WORDS_OUT = 0x40
STRIPES = 0x44
OUT_CRC = 0x48

#: name -> (offset, access, description); access "R", "W" or "RW". All registers are 32 bits wide.
REGISTERS = {
    "ID": (ID, "R", "0x4C5A4158 (LZAX)"),
    "VERSION": (VERSION, "R", "(major << 16) | minor"),
    "PARAMS": (PARAMS, "R", "L[3:0] | W[8:4] | LANES[15:12] | OUT_BYTES[19:16] | (STATES - 1)[21:20] | MIRROR[22] "
                                 "| log2(MAX_N)[27:24]"),
    "LUT3": (LUT3, "R", "LUT3_DEPTH"),
    "CLK_HZ": (CLK_HZ, "R", "CLK_HZ parameter"),
    "CONTROL": (CONTROL, "W", "bit0 SOFT_RESET, bit1 CLEAR_COUNTERS, bit2 CLEAR_ERROR, bit3 NO_DISCARD"),
    "STATUS": (STATUS, "R", "bit0 BUSY, bit1 ERROR, bit2 IN_RESET, bits 11:8 first error code"),
    "ERR_STRIPE": (ERR_STRIPE, "R", "stripe index of the first error"),
    "ERR_COUNT": (ERR_COUNT, "R", "failed stripes since CLEAR_ERROR"),
    "TBL_ADDR": (TBL_ADDR, "RW", "bits 11:0 address, bits 13:12 select"),
    "TBL_DATA": (TBL_DATA, "W", "table entry write, address auto-increments"),
    "CYC_TOTAL": (CYC_TOTAL, "R", "cycles with BUSY"),
    "CYC_BUSY": (CYC_BUSY, "R", "cycles with an output beat accepted"),
    "CYC_STARVED": (CYC_STARVED, "R", "cycles waiting for input inside an input transfer"),
    "CYC_BLOCKED": (CYC_BLOCKED, "R", "cycles with m_axis_tvalid and not m_axis_tready"),
    "WORDS_OUT": (WORDS_OUT, "R", "decoded words emitted (padding included)"),
    "STRIPES": (STRIPES, "R", "stripes completed"),
    "OUT_CRC": (OUT_CRC, "R", "CRC32 of the output bytes of the last completed transfer"),
}

#: Bit fields: register -> {field: (lsb, width)}.
FIELDS = {
    "PARAMS": {"L": (0, 4), "W": (4, 5), "LANES": (12, 4), "OUT_BYTES": (16, 4), "STATES_M1": (20, 2),
               "MIRROR": (22, 1), "MAX_N_LOG2": (24, 4)},
    "CONTROL": {"SOFT_RESET": (0, 1), "CLEAR_COUNTERS": (1, 1), "CLEAR_ERROR": (2, 1), "NO_DISCARD": (3, 1)},
    "STATUS": {"BUSY": (0, 1), "ERROR": (1, 1), "IN_RESET": (2, 1), "ERR_CODE": (8, 4)},
    "TBL_ADDR": {"ADDR": (0, 12), "SEL": (12, 2)},
}

CTRL_SOFT_RESET = 1 << 0
CTRL_CLEAR_COUNTERS = 1 << 1
CTRL_CLEAR_ERROR = 1 << 2
CTRL_NO_DISCARD = 1 << 3
ST_BUSY = 1 << 0
ST_ERROR = 1 << 1
ST_IN_RESET = 1 << 2
ST_CODE_SHIFT = 8

#: Failure codes of the top beside the core's (docs/AXI.md): descriptor / length mismatch, input ended early.
ERR_MISMATCH = 14
ERR_TRUNCATED = 15

#: Cycles the soft reset holds the core in reset.
SOFT_RESET_CYCLES = 4

#: Ports of the converted top: name -> (direction, width or parameter expression). Widths that depend on
#: OUT_BYTES are given by :func:`ports`.
CLOCK, RESET = "aclk", "aresetn"
INTERFACES = {
    # name: (VLNV of the bus definition, mode, port prefix)
    "s_axis": ("xilinx.com:interface:axis:1.0", "slave", "s_axis_"),
    "m_axis": ("xilinx.com:interface:axis:1.0", "master", "m_axis_"),
    "s_axi_ctrl": ("xilinx.com:interface:aximm:1.0", "slave", "s_axi_ctrl_"),
}


def ports(OUT_BYTES=4):
    """Ports of ``lutzip_axi`` in signature order.

    Parameters
    ----------
    OUT_BYTES : int
        S2MM data width in bytes (4 or 8): ``m_axis_tdata`` has ``8 * OUT_BYTES`` bits, ``m_axis_tkeep``
        ``OUT_BYTES``.

    Returns
    -------
    list of (str, str, int)
        ``(name, direction, width)``, direction ``"in"`` or ``"out"`` as seen from the top.
    """
    ob = OUT_BYTES
    return [
        ("aclk", "in", 1), ("aresetn", "in", 1),
        ("s_axis_tdata", "in", 32), ("s_axis_tvalid", "in", 1), ("s_axis_tready", "out", 1),
        ("s_axis_tlast", "in", 1),
        ("m_axis_tdata", "out", 8 * ob), ("m_axis_tkeep", "out", ob), ("m_axis_tvalid", "out", 1),
        ("m_axis_tready", "in", 1), ("m_axis_tlast", "out", 1),
        ("s_axi_ctrl_awaddr", "in", ADDR_BITS), ("s_axi_ctrl_awvalid", "in", 1), ("s_axi_ctrl_awready", "out", 1),
        ("s_axi_ctrl_wdata", "in", 32), ("s_axi_ctrl_wstrb", "in", 4), ("s_axi_ctrl_wvalid", "in", 1),
        ("s_axi_ctrl_wready", "out", 1), ("s_axi_ctrl_bresp", "out", 2), ("s_axi_ctrl_bvalid", "out", 1),
        ("s_axi_ctrl_bready", "in", 1), ("s_axi_ctrl_araddr", "in", ADDR_BITS), ("s_axi_ctrl_arvalid", "in", 1),
        ("s_axi_ctrl_arready", "out", 1), ("s_axi_ctrl_rdata", "out", 32), ("s_axi_ctrl_rresp", "out", 2),
        ("s_axi_ctrl_rvalid", "out", 1), ("s_axi_ctrl_rready", "in", 1),
    ]


def params_word(L=8, W=16, LANES=1, OUT_BYTES=4, STATES=1, MIRROR=0, MAX_N=512) -> int:
    """The PARAMS register's value.

    Parameters
    ----------
    L, W, LANES, OUT_BYTES, STATES, MIRROR, MAX_N : int
        The top's parameters (docs/AXI.md).

    Returns
    -------
    int
        ``L[3:0] | W[8:4] | LANES[15:12] | OUT_BYTES[19:16] | (STATES - 1)[21:20]``, with ``MIRROR=1`` also
        ``MIRROR[22] | log2(MAX_N)[27:24]`` (``STATES=1``, ``MIRROR=0``: the value of the tops before the fields).
    """
    w = (L & 0xF) | ((W & 0x1F) << 4) | ((LANES & 0xF) << 12) | ((OUT_BYTES & 0xF) << 16) \
        | (((STATES - 1) & 0x3) << 20)
    if MIRROR:
        w |= 1 << 22 | ((int(MAX_N).bit_length() - 1) & 0xF) << 24
    return w


def params_mirror(value: int) -> int:
    """The row buffer ``MAX_N`` of a top built with ``MIRROR=1`` from a PARAMS value (``2 ** MAX_N_LOG2``), 0 when
    bit 22 is 0 (``MIRROR=0``, or a top before the field: no row stripes)."""
    return 1 << field("PARAMS", "MAX_N_LOG2", value) if field("PARAMS", "MIRROR", value) else 0


def params_states(value: int) -> int:
    """The core's ``STATES`` from a PARAMS value (field ``STATES_M1`` plus 1; 1 from a top before the field)."""
    return field("PARAMS", "STATES_M1", value) + 1


def field(reg: str, name: str, value: int) -> int:
    """Extract a bit field.

    Parameters
    ----------
    reg, name : str
        Register and field names of :data:`FIELDS` (e.g. ``"PARAMS"``, ``"W"``).
    value : int
        The register's value.

    Returns
    -------
    int
        The field's value.
    """
    lsb, width = FIELDS[reg][name]
    return (int(value) >> lsb) & ((1 << width) - 1)


def decode_status(value: int) -> dict:
    """Decode STATUS.

    Parameters
    ----------
    value : int
        The STATUS register's value.

    Returns
    -------
    dict
        ``busy``, ``error``, ``in_reset`` (bool) and ``code`` (int: the first failure's code, 0 if none).
    """
    return {"busy": bool(value & ST_BUSY), "error": bool(value & ST_ERROR),
            "in_reset": bool(value & ST_IN_RESET), "code": field("STATUS", "ERR_CODE", value)}


def table_writes(ops):
    """The register writes that load the core's tables.

    Parameters
    ----------
    ops : iterable of (int, int, int)
        Table writes ``(sel, addr, data)`` (``lutzip.hdl.flows.model.table_ops``).

    Returns
    -------
    list of (int, int)
        ``(offset, value)``: TBL_ADDR where the address does not follow on from the previous entry, then
        TBL_DATA per entry (the address auto-increments).
    """
    out, nxt = [], None
    for sel, addr, data in ops:
        sel, addr = int(sel), int(addr)
        if (sel, addr) != nxt:
            out.append((TBL_ADDR, (sel << 12) | addr))
        out.append((TBL_DATA, int(data) & 0xFFFFFFFF))
        nxt = (sel, (addr + 1) & 0xFFF)
    return out
