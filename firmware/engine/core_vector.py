"""The decoder core with the vector front (docs/CORE.md: ``FRONT="vector"``), as a core block for
:func:`lutzip.firmware.engine.proto_engine.proto_engine` (``core=``): the front that places at 125 MHz and more
on the ECP5 (the default window front's LUT1 loop: about 45-60 MHz). The two-domain ULX3S build uses it, with the
core's table writes registered (``TBL_REG=1``: the LUT1 write decode fanned out to the TL block RAMs was the
critical path at 100 MHz with ``STATES=2``; the engine's ``CORE_IN_REG`` keeps stream words a cycle behind)."""
from myhdl import block

from lutzip.hdl.core.decoder_core import decoder_core


@block
def core_vector(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy, L=8, W=16, LUT3_DEPTH=4096,
                STATES=1, MIRROR=0, MAX_N=512):
    """:func:`lutzip.hdl.core.decoder_core.decoder_core` with ``FRONT="vector"`` (same ports)."""
    u_core = decoder_core(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                          m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast, m_axis_tuser,
                          tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy,
                          L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, FRONT="vector", STATES=STATES,
                          TBL_REG=1, **({"MIRROR": MIRROR, "MAX_N": MAX_N} if MIRROR else {}))
    return u_core
