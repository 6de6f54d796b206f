"""The protocol engine in its own clock domain: byte streams at the link clock, everything else at the core
clock (docs/PROTOCOL.md, section 7).

The cut is at the engine's two byte streams: an 8-bit dual-clock FIFO each way
(:func:`lutzip.firmware.engine.cdc_fifo.cdc_fifo`), a reset synchroniser for the core domain
(:func:`lutzip.firmware.engine.cdc_reset.cdc_reset`) and the engine's ``idle`` brought back through a flag
synchroniser. The engine (:func:`lutzip.firmware.engine.proto_engine.proto_engine`: frame parser, ring, table
loader, replay unit, decoder core, result path, counters, response framer) is unchanged and runs at the core
clock; its ``CLK_HZ`` is the core clock (IDENT, the cycle counters and the inter-byte timeout count core cycles).
With the engine's ``RESULT_REG`` a register slice (:func:`lutzip.firmware.axi.axis_skid.axis_skid`) sits between
the engine's byte output and the byte FIFO, so that the FIFO's ``tready`` (its full flag and the core reset) does
not meet the response framer's logic in the same cycle; the engine's idle flag then waits for the slice too.
The keyword ``CORE_RST_REG`` (default False; not in the function's docstring, which MyHDL copies into the HDL of
every two-domain top) makes the core domain's reset the synchroniser's output through one more
flip-flop, without the asynchronous set: the synchroniser sits beside its source (the PLL's lock, in a corner of
the die), this flip-flop among the reset's loads. The core domain's reset rises one core cycle after the
synchroniser's (a clock edge is needed: while the PLL is not locked its output still runs) and falls one cycle
later; the whole domain sees the one reset. With it the response framer and the frame parser take their reset
from two more flip-flops of the same input (``proto_engine``'s ``fr_rst`` / ``rx_rst``: the same value in every
cycle, each placed beside its block; the board flow keeps them apart, ``c_keep_*``), 2026-12-07 afternoon.
"""
from myhdl import Signal, always, always_comb, block, intbv

from lutzip.firmware.engine.cdc_fifo import cdc_fifo
from lutzip.firmware.engine.cdc_flag import cdc_flag
from lutzip.firmware.engine.cdc_reset import cdc_reset
from lutzip.firmware.engine.proto_engine import proto_engine

#: Entries of each byte FIFO: covers the synchroniser round trip (about 3 cycles of each clock) so that a
#: byte per link cycle flows without a gap when the core clock is at least the link clock.
BYTE_FIFO_DEPTH = 16


def ports():
    """Fresh signals for the ports of :func:`proto_engine_cdc`, in order."""
    return dict(clk=Signal(bool(0)), rst=Signal(bool(0)), core_clk=Signal(bool(0)),
                s_axis_tdata=Signal(intbv(0)[8:]), s_axis_tvalid=Signal(bool(0)), s_axis_tready=Signal(bool(0)),
                m_axis_tdata=Signal(intbv(0)[8:]), m_axis_tvalid=Signal(bool(0)), m_axis_tready=Signal(bool(0)),
                idle=Signal(bool(0)))


@block
def proto_engine_cdc(clk, rst, core_clk, s_axis_tdata, s_axis_tvalid, s_axis_tready,
                     m_axis_tdata, m_axis_tvalid, m_axis_tready, idle, core_arst=None,
                     CORE_CLK_HZ=100_000_000, **params):
    """:func:`lutzip.firmware.engine.proto_engine.proto_engine` at ``core_clk`` behind link-clock byte streams.

    Parameters
    ----------
    clk, rst : Signal
        Link clock and its synchronous reset (also the source of the core domain's reset).
    core_clk : Signal
        Core clock (a PLL output on a board, a second clock in the simulators).
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        Bytes from the host (``clk``).
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        Bytes to the host (``clk``).
    idle : Signal
        Link domain: the engine is idle and no byte is on its way (for simulators).
    core_arst : Signal, optional
        Extra asynchronous reset of the core domain (e.g. ``not pll_locked``); default ``rst`` alone.
    CORE_CLK_HZ : int
        Frequency of ``core_clk`` (the engine's ``CLK_HZ``).
    **params
        The other :func:`proto_engine` parameters; ``CLK_HZ`` (the link clock) becomes the engine's
        ``LINK_CLK_HZ`` (IDENT reports both clocks), the engine's ``CLK_HZ`` is ``CORE_CLK_HZ``.
    """
    params = dict(params)
    link_hz = params.pop("CLK_HZ", 0)
    rst_reg = params.pop("CORE_RST_REG", False)
    core_rst = Signal(bool(1))
    arst = Signal(bool(1))
    c_sd, c_md = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    c_sv, c_sr, c_mv, c_mr, c_idle = [Signal(bool(0)) for _ in range(5)]
    rx_fill, tx_fill, e_idle_l = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    e_idle_r = Signal(bool(0))
    quiet = Signal(intbv(0)[3:])

    if core_arst is None:
        @always_comb
        def c_arst():
            arst.next = rst
    else:
        @always_comb
        def c_arst():
            arst.next = rst or core_arst

    if rst_reg:
        core_rst_s = Signal(bool(1))
        u_crst_s = cdc_reset(core_clk, arst, core_rst_s)
        fr_rst, rx_rst = Signal(bool(1)), Signal(bool(1))
        params.update(fr_rst=fr_rst, rx_rst=rx_rst)

        @always(core_clk.posedge)
        def c_crst():
            core_rst.next = core_rst_s

        # the framer's and the parser's copies of core_rst (kept apart by the board flow: c_keep_*)
        @always(core_clk.posedge)
        def c_keep_fr():
            fr_rst.next = core_rst_s

        @always(core_clk.posedge)
        def c_keep_rx():
            rx_rst.next = core_rst_s

        u_crst = [u_crst_s, c_crst, c_keep_fr, c_keep_rx]
    else:
        u_crst = cdc_reset(core_clk, arst, core_rst)
    u_rx = cdc_fifo(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready,
                    core_clk, core_rst, c_sd, c_sv, c_sr, rx_fill, DEPTH=BYTE_FIFO_DEPTH)
    if params.get("RESULT_REG"):
        from lutzip.firmware.axi.axis_skid import axis_skid
        e_md = Signal(intbv(0)[8:])
        e_mv, e_mr = Signal(bool(0)), Signal(bool(0))
        u_eng = [proto_engine(core_clk, core_rst, c_sd, c_sv, c_sr, e_md, e_mv, e_mr, c_idle,
                              CLK_HZ=CORE_CLK_HZ, LINK_CLK_HZ=link_hz, **params),
                 axis_skid(core_clk, core_rst, e_md, e_mv, e_mr, c_md, c_mv, c_mr)]

        @always(core_clk.posedge)
        def c_idle_reg():
            e_idle_r.next = c_idle and not core_rst and not c_mv
    else:
        u_eng = proto_engine(core_clk, core_rst, c_sd, c_sv, c_sr, c_md, c_mv, c_mr, c_idle,
                             CLK_HZ=CORE_CLK_HZ, LINK_CLK_HZ=link_hz, **params)

        @always(core_clk.posedge)
        def c_idle_reg():
            e_idle_r.next = c_idle and not core_rst
    u_tx = cdc_fifo(core_clk, core_rst, c_md, c_mv, c_mr,
                    clk, rst, m_axis_tdata, m_axis_tvalid, m_axis_tready, tx_fill, DEPTH=BYTE_FIFO_DEPTH)

    u_idle = cdc_flag(clk, e_idle_r, e_idle_l)

    @always(clk.posedge)
    def c_quiet():
        # idle after 7 link cycles of: engine idle, nothing in the input FIFO, nothing to send
        if rst or not e_idle_l or rx_fill or m_axis_tvalid or s_axis_tvalid:
            quiet.next = 0
        elif quiet != 7:
            quiet.next = quiet + 1

    @always_comb
    def c_out():
        idle.next = quiet == 7

    return c_arst, u_crst, u_rx, u_eng, u_tx, c_idle_reg, u_idle, c_quiet, c_out
