"""The byte-level protocol engine: frame parser, command ring, table loader, decoder core, result path,
counters and response framer (docs/PROTOCOL.md). ``uart_top`` puts a UART in front; the virtual board's fast
mode feeds it bytes directly.

Replay buffer: the keyword ``REPLAY_WORDS`` of :func:`proto_engine` (and of ``uart_top`` and the board tops)
gives the words of a replay buffer in block RAM (docs/PROTOCOL.md, section 6;
:func:`lutzip.firmware.engine.replay.replay_unit`): 0 (default) builds none, and the engine then synthesises to
the netlist it did before the buffer existed (``frame_rx`` and ``resp_framer`` keep their replay branches, under a
constant false condition); else a power of two from 256 to 2**22, and the board reports protocol version 2 and
the buffer size in its IDENT frame.

Core input register: the keyword ``CORE_IN_REG`` (default False) puts a two-entry register slice
(:func:`lutzip.firmware.axi.axis_skid.axis_skid`, full throughput, one cycle more latency) in front of the decoder
core's input stream, so that the replay buffer's block-RAM read and its multiplexer end in flip-flops (the
two-domain ULX3S build at 100 MHz); False converts to the HDL of before.

Ring output register: the keyword ``RING_REG`` (default False) puts the same register slice behind the command
ring, so that the ring's block-RAM read data and its read enable see flip-flops instead of the replay unit's and
table loader's handshake logic (one cycle more latency, full throughput; ``ring_empty`` covers the slice too);
False converts to the HDL of before.

Pipelined ring read: the keyword ``RING_PIPE`` (default False; with ``RING_REG`` only) reads the command ring's
block RAM through its output register into a 4-entry FIFO (``cmd_ring``'s ``PIPE``; an entry reaches the ring's
register slice 2 cycles later than without, one per cycle), so that no logic sees the RAM's clock-to-out (the
two-domain ULX3S build at 100 MHz and the virtual board's fast mode); False converts to the HDL of before.

Pipelined replay feed: the keyword ``REPLAY_PIPE`` (default False; with a buffer only) builds the replay buffer
in banks with a registered read multiplexer and a counted prefetch (``replay_unit``'s ``PIPE``), so that no
block-RAM read data meets logic before a flip-flop (the two-domain ULX3S build at 100 MHz and the virtual
board's fast mode); False converts to the HDL of before. With it (one lane) the replay unit and the table loader
(``IDLE_REG``, guarded by the run and its ``done_req``) also take the decoder's idle from a flip-flop (2026-12-07
late night): never 1 where the idle is 0, so what waits for it goes where it went before or a cycle later.

Table port register: the keyword ``TABLE_REG`` (default False) puts a flip-flop stage between the table loader's
table write port and the core (each table write reaches the core one cycle later; the stripe words that follow
it in the ring reach the core no earlier than before plus the core input register's cycle, so they still see
the table written), so that the loader's idle test (a 16-bit compare) does not meet the core's table RAM
enables in the same cycle (the two-domain ULX3S build and the virtual board's fast mode); False converts to the
HDL of before.

Result data register: the keyword ``RESULT_REG`` (default False) puts the register slice between the decoded-word
FIFO (block RAM, read data straight out) and the response framer, whose byte multiplexer and frame CRC then
start from flip-flops (one cycle more latency, full throughput; the two-domain ULX3S build and the virtual
board's fast mode); False converts to the HDL of before. Since 2026-12-04 it also puts one at the decoder
core's output (:func:`lutzip.firmware.engine.core_out_reg.core_out_reg`: the core's output FIFO is LUT RAM read
straight out, and the result path's and the replay unit's CRCs then start from flip-flops; the perf counters,
the result path and the replay unit all see the slice's side, ``busy`` stays the core's: a stripe's words in
the slice are not yet in ``stripes_done``, so the idle tests still wait for them), and
:func:`lutzip.firmware.engine.proto_engine_cdc.proto_engine_cdc` one on the engine's byte output. Since 2026-12-07
it also has the result path write a stripe's end descriptor a cycle after its last word, its CRC from the CRC
register (``result_path``'s ``DESC_REG``: one cycle more per stripe; the descriptor and ``stripes_done`` move
together).

Registered block reset: the keyword ``RST_REG`` (default False) gives every block of the engine except the frame
parser and the response framer its own flip-flop copy of ``rst or soft_rst``
(:func:`lutzip.firmware.engine.reset_reg.reset_reg`, one cycle later), instead of that OR gate fanned out to all
of them (the two-domain ULX3S build at 100 MHz and the virtual board's fast mode). Those blocks are reset one
cycle later than without (2026-12-07): a hard reset lasts at least 3 cycles and the parser needs 7 bytes before
it writes to the ring, so its release one cycle earlier changes nothing; after a RESET frame (``soft_rst`` in
cycle T, the framer reset at the end of T, the ACK requested in T + 1) the blocks run one more cycle (T, while the
framer is in reset and ignores them) and show their state of before the reset in T + 1, where the framer's
barrier and replay-done requests and the descriptor FIFO's valid / ready are gated with a copy of the registered
reset (the framer takes nothing from the blocks in T + 1, as without). The perf counters are cleared at the end
of T + 1 instead of T (their cycle count after a RESET frame is one less). False converts to the HDL of before.

Reset copies: the keywords ``fr_rst`` and ``rx_rst`` (default None: ``rst``) are the resets of the response framer
and the frame parser, each a copy of ``rst`` from a flip-flop of its own (the same value in every cycle), so
that those two blocks' synchronous resets do not wait for the one ``rst`` net across the die
(:func:`lutzip.firmware.engine.proto_engine_cdc.proto_engine_cdc` with ``CORE_RST_REG``, 2026-12-07 afternoon).
None converts to the HDL of before.

Registered full flags: with ``RESULT_REG`` the decoded-word FIFO and the descriptor FIFO also take ``fifo``'s
``FULL_REG`` (their full flag a flip-flop, the same flag cycle for cycle), so that the result path's handshake and
the decoded-word FIFO's write enable start from flip-flops instead of a pointer compare, and the perf counters take
``EVENT_REG`` (the core's stream taps through a flip-flop before they count; the same COUNTERS frames) and the
response framer ``INIT_END`` (its CRCs and byte index set at a frame's end instead of the next one's start: off the
frame start's wide enable), 2026-12-07 afternoon. Since 2026-12-07 (night) the decoded-word FIFO also takes ``fifo``'s
``PIPE`` (its block RAM read through the RAM's output register into 4 flip-flop entries: a word 2 cycles later, full
rate).

Code tables: the keyword ``STATES`` (default 1) is the decoder core's (docs/CORE.md): 2 builds the core that
decodes table sets with two code tables (format version 5) besides one-table sets, LUT1 of ``2^(L+1)`` entries
(the TABLE frames' 12-bit address holds them for ``L <= 11``), and the IDENT frame reports it in its header's
FLAGS byte (docs/PROTOCOL.md, section 3). 1 converts to the HDL of before except the response framer's one
constant-false branch (the same netlist).

Row stripes: the keywords ``MIRROR`` (default 0) and ``MAX_N`` (default 512, with ``MIRROR=1`` only) are the
decoder core's (docs/CORE.md section 7): 1 builds the core that also decodes row streams (format version 6,
mirrored rows of ``N <= MAX_N + 1`` words), and the IDENT frame reports it in its header's FLAGS byte (bit 2, and
``log2(MAX_N) - 5`` in bits 5..3: a board's MAX_N is 32 .. 4096; docs/PROTOCOL.md, section 3). The host then also writes the core's config word 1 (the
table set has 8-bit words) with each table set. 0 converts to the HDL of before.
Replay lanes: the keyword ``LANES`` (default 1; 2, 4 or 8 need a replay buffer) builds the replay unit of an
N-lane board (:func:`lutzip.firmware.engine.replay_lanes.replay_lanes`, docs/PROTOCOL.md section 6.1): the replay
buffer in one region per lane and its own N-lane decoder (:func:`lutzip.hdl.core.decoder_lanes.decoder_lanes`,
``ASSIGN="rr"``, ``ROWS`` = ``LANES_ROWS``, 0: its default), which takes every table write; the streaming path
(STREAM frames, RESULT / DATA) keeps the single-lane core. The IDENT frame reports ``log2(LANES)`` in its header's
FLAGS bits 7..6. With ``MIRROR=1`` the N-lane decoder takes row stripes too (docs/CORE.md section 6.8). 1 converts to the HDL of before.

Link clock: the keyword ``LINK_CLK_HZ`` (default 0) is set by the two-domain top
(:func:`lutzip.firmware.engine.proto_engine_cdc.proto_engine_cdc`, docs/PROTOCOL.md section 7) to the byte
link's clock; the IDENT frame then carries it as a trailing u32 (24 bytes instead of 20). 0 converts to the HDL
of before.
"""
import os

from myhdl import ResetSignal, Signal, always, always_comb, block, intbv, modbv

from lutzip.errors import UnsupportedError
from lutzip.firmware.engine.cmd_ring import cmd_ring
from lutzip.firmware.engine.fifo import fifo
from lutzip.firmware.engine.frame_rx import frame_rx, rx_gap_log2
from lutzip.firmware.engine.perf_counters import CounterPort, perf_counters
from lutzip.firmware.engine.replay import replay_unit
from lutzip.firmware.engine.resp_framer import resp_framer
from lutzip.firmware.engine.result_path import result_path
from lutzip.firmware.engine.table_loader import table_loader

DATA_DEPTH = 256
DESC_DEPTH = 32
CORES = ("real", "stub")


def get_core(name=None):
    """The decoder core block to build in.

    Parameters
    ----------
    name : {"real", "stub"}, optional
        ``"real"``: :func:`lutzip.hdl.core.decoder_core.decoder_core`; ``"stub"``: the multi-cycle stand-in
        :func:`lutzip.firmware.engine.core_stub.core_stub` (tests, comparisons). Default: the environment
        variable ``LUTZIP_CORE``, else ``"real"``.

    Returns
    -------
    callable
        The ``@block`` function.
    """
    name = name or os.environ.get("LUTZIP_CORE") or "real"
    if name == "real":
        from lutzip.hdl.core.decoder_core import decoder_core
        return decoder_core
    if name == "stub":
        from lutzip.firmware.engine.core_stub import core_stub
        return core_stub
    raise UnsupportedError(f"unknown decoder core {name!r}: choose from {', '.join(CORES)}")


def ports():
    """Fresh signals for the ports of :func:`proto_engine`, in order."""
    return dict(clk=Signal(bool(0)), rst=Signal(bool(0)),
                s_axis_tdata=Signal(intbv(0)[8:]), s_axis_tvalid=Signal(bool(0)), s_axis_tready=Signal(bool(0)),
                m_axis_tdata=Signal(intbv(0)[8:]), m_axis_tvalid=Signal(bool(0)), m_axis_tready=Signal(bool(0)),
                idle=Signal(bool(0)))


@block
def proto_engine(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, m_axis_tdata, m_axis_tvalid, m_axis_tready,
                 idle, L=8, W=16, LUT3_DEPTH=4096, RING_DEPTH=4096, MAX_PAYLOAD=1024, CLK_HZ=100_000_000, BAUD=0,
                 core=None, FAST_CRC=False, RX_GAP_LOG2=None, COUNTER_BITS=40, REPLAY_WORDS=0, LINK_CLK_HZ=0,
                 CORE_IN_REG=False, RING_REG=False, REPLAY_PIPE=False, TABLE_REG=False,
                 RESULT_REG=False, RST_REG=False, RING_PIPE=False, fr_rst=None, rx_rst=None, STATES=1, MIRROR=0,
                 MAX_N=512, LANES=1, LANES_ROWS=0):
    """Host frames in, board frames out, one byte per cycle each way.

    Parameters
    ----------
    clk, rst : Signal
        Clock and synchronous reset.
    s_axis_tdata, s_axis_tvalid, s_axis_tready : Signal
        Bytes from the host.
    m_axis_tdata, m_axis_tvalid, m_axis_tready : Signal
        Bytes to the host.
    idle : Signal
        Nothing is in progress (high after 15 quiet cycles).
    L, W, LUT3_DEPTH : int
        Decoder core parameters (docs/CORE.md).
    RING_DEPTH, MAX_PAYLOAD : int
        Command ring entries, longest frame payload (docs/PROTOCOL.md).
    CLK_HZ, BAUD : int
        Reported in IDENT (BAUD 0: no UART).
    core : callable, optional
        The decoder core block (default :func:`get_core`).
    FAST_CRC : bool
        CRCs through table ROMs: faster to simulate, bigger on an FPGA (same results).
    RX_GAP_LOG2 : int, optional
        A partial host frame is dropped after ``2**RX_GAP_LOG2`` .. ``2**(RX_GAP_LOG2 + 1)`` cycles without a
        byte (timed by bit ``RX_GAP_LOG2`` of the ``cycles`` counter, no counter of its own); default
        :func:`lutzip.firmware.engine.frame_rx.rx_gap_log2` of ``CLK_HZ``, ``BAUD``.
    COUNTER_BITS : int
        Width inside the chip of the cycle and byte/word counters (40: 3 hours at 100 MHz; 64 on the wire).
    """
    # REPLAY_WORDS is documented in the module docstring, not here: MyHDL copies this docstring into the HDL,
    # and the build without a buffer must convert to exactly the HDL it did before the buffer existed.
    core = core or get_core()
    # STATES (module docstring): the core's keyword only with two tables, so that any core block builds STATES=1
    core_kw = {"STATES": STATES} if STATES != 1 else {}
    if STATES != 1:
        from lutzip.hdl.core.ports import check_states
        check_states(STATES, L)
        if getattr(core, "__name__", "") == "core_stub":
            raise UnsupportedError("STATES=2 needs the real decoder core (the stub core decodes one code table)")
    # MIRROR (module docstring): the core's keywords only with row stripes, so that any core block builds MIRROR=0
    if MIRROR:
        from lutzip.hdl.core.ports import check_mirror
        check_mirror(MIRROR, MAX_N)
        if getattr(core, "__name__", "") == "core_stub":
            raise UnsupportedError("MIRROR=1 needs the real decoder core (the stub core decodes no row stripes)")
        core_kw.update(MIRROR=1, MAX_N=MAX_N)
    elif MIRROR != 0:
        from lutzip.hdl.core.ports import check_mirror
        check_mirror(MIRROR, MAX_N)
    if REPLAY_WORDS and not (REPLAY_WORDS >= 256 and REPLAY_WORDS & (REPLAY_WORDS - 1) == 0
                             and REPLAY_WORDS <= 1 << 22):
        raise UnsupportedError(f"REPLAY_WORDS must be 0 or a power of two from 256 to 2**22, not {REPLAY_WORDS}")
    if LANES != 1 or isinstance(LANES, bool):
        from lutzip.hdl.core.decoder_lanes import LANE_CHOICES
        if isinstance(LANES, bool) or LANES not in LANE_CHOICES or not REPLAY_WORDS:
            raise UnsupportedError(f"LANES = {LANES!r}: 1, or 2, 4, 8 with a replay buffer (REPLAY_WORDS > 0)")
    AW = (RING_DEPTH - 1).bit_length()
    # parser -> ring (speculative writes) -> table loader
    ring_we, ring_commit, ring_rollback = [Signal(bool(0)) for _ in range(3)]
    ring_wdata = Signal(intbv(0)[35 if REPLAY_WORDS else 34:])
    ring_free = Signal(intbv(0)[AW + 1:])
    ring_tdata = Signal(intbv(0)[35 if REPLAY_WORDS else 34:])
    ring_tvalid, ring_tready, ring_empty = [Signal(bool(0)) for _ in range(3)]
    next_seq = Signal(intbv(0)[8:])
    ack_req, nack_req, ident_req, soft_rst, mode_words, link_err, hunting = [Signal(bool(0)) for _ in range(7)]
    nack_reason = Signal(intbv(0)[3:])
    rst_all = ResetSignal(0, active=1, isasync=False)
    rr_q = []       # RST_REG: the blocks' reset copies (their reset_reg instances are made below)

    def blk_rst():
        """A block's reset: ``rst_all``, or with RST_REG a registered copy of its own."""
        if not RST_REG:
            return rst_all
        rr_q.append(ResetSignal(1, active=1, isasync=False))
        return rr_q[-1]
    # core: input stream (from the table loader), output stream (to the result path), table port
    core_s_tdata = Signal(intbv(0)[32:])
    core_s_tvalid, core_s_tready, core_s_tlast = [Signal(bool(0)) for _ in range(3)]
    core_m_tdata = Signal(intbv(0)[W:])
    core_m_tvalid, core_m_tready, core_m_tlast, core_m_tuser = [Signal(bool(0)) for _ in range(4)]
    tbl_we = Signal(bool(0))
    tbl_sel = Signal(intbv(0)[2:])
    tbl_addr = Signal(intbv(0)[12:])
    tbl_wdata = Signal(intbv(0)[32:])
    # the loader's table port (a tuple: no second name for the core's signals when there is no register)
    if TABLE_REG:
        from lutzip.firmware.engine.table_reg import table_reg
        ld_we, ld_sel, ld_addr, ld_wdata = Signal(bool(0)), Signal(intbv(0)[2:]), Signal(intbv(0)[12:]), \
            Signal(intbv(0)[32:])
        ld_port = (ld_we, ld_sel, ld_addr, ld_wdata)
    else:
        ld_port = (tbl_we, tbl_sel, tbl_addr, tbl_wdata)
    err_valid, busy = Signal(bool(0)), Signal(bool(0))
    err_code = Signal(intbv(0)[4:])
    # result path -> data FIFO (decoded words) / descriptor FIFO -> response framer
    dfi_tdata, dfo_tdata = Signal(intbv(0)[W:]), Signal(intbv(0)[W:])
    qfi_tdata, qfo_tdata = Signal(intbv(0)[64:]), Signal(intbv(0)[64:])
    dfi_tvalid, dfi_tready, dfo_tvalid, dfo_tready = [Signal(bool(0)) for _ in range(4)]
    qfi_tvalid, qfi_tready, qfo_tvalid, qfo_tready = [Signal(bool(0)) for _ in range(4)]
    stripes_done = Signal(modbv(0)[16:])
    res_idle, fr_idle, barrier_req = [Signal(bool(0)) for _ in range(3)]
    credit = Signal(intbv(0)[16:])
    rx_hs, tx_hs = Signal(bool(0)), Signal(bool(0))
    raw_idle = Signal(bool(0))
    quiet = Signal(intbv(0)[4:])
    counters = CounterPort()
    GAP = rx_gap_log2(CLK_HZ, BAUD) if RX_GAP_LOG2 is None else RX_GAP_LOG2
    if not 1 <= GAP < 39:
        raise UnsupportedError(f"RX_GAP_LOG2 must be 1..38, not {GAP}")
    if not GAP + 1 < COUNTER_BITS <= 64:
        raise UnsupportedError(f"COUNTER_BITS must be {GAP + 2}..64 (the inter-byte timeout reads bit {GAP} of "
                               f"the cycle counter), not {COUNTER_BITS}")
    cycles_now = counters.first
    gap_tick = Signal(bool(0))

    if REPLAY_WORDS:
        # the replay unit between the ring and the table loader, around the core (docs/PROTOCOL.md, 6)
        lt_tdata = Signal(intbv(0)[34:])
        lt_tvalid, lt_tready = Signal(bool(0)), Signal(bool(0))
        ld_tdata = Signal(intbv(0)[32:])
        ld_tvalid, ld_tready, ld_tlast = [Signal(bool(0)) for _ in range(3)]
        res_tvalid, res_tready = Signal(bool(0)), Signal(bool(0))
        rp_active, rp_done = Signal(bool(0)), Signal(bool(0))
        rcounters = CounterPort()
        rcounters.idx = counters.idx

        @always_comb
        def glue():
            rst_all.next = rst or soft_rst
            credit.next = ring_free
            rx_hs.next = s_axis_tvalid and s_axis_tready
            tx_hs.next = m_axis_tvalid and m_axis_tready
            raw_idle.next = (hunting and ring_empty and not busy and fr_idle and not s_axis_tvalid and not ack_req
                             and not nack_req and not ident_req and not barrier_req and not soft_rst
                             and not qfi_tvalid and not rp_active and not rp_done)
            idle.next = quiet == 15
            gap_tick.next = cycles_now[GAP]
    else:
        @always_comb
        def glue():
            rst_all.next = rst or soft_rst
            credit.next = ring_free
            rx_hs.next = s_axis_tvalid and s_axis_tready
            tx_hs.next = m_axis_tvalid and m_axis_tready
            raw_idle.next = (hunting and ring_empty and not busy and fr_idle and not s_axis_tvalid and not ack_req
                             and not nack_req and not ident_req and not barrier_req and not soft_rst and not qfi_tvalid)
            idle.next = quiet == 15
            gap_tick.next = cycles_now[GAP]

    @always(clk.posedge)
    def c_quiet():
        # idle only after 15 quiet cycles: covers the latencies between the pipeline's stages
        if rst or not raw_idle:
            quiet.next = 0
        elif quiet != 15:
            quiet.next = quiet + 1

    u_rx = frame_rx(clk, rst if rx_rst is None else rx_rst, s_axis_tdata, s_axis_tvalid, s_axis_tready,
                    ring_we, ring_wdata, ring_commit, ring_rollback, ring_free,
                    next_seq, ack_req, nack_req, nack_reason, ident_req, soft_rst, mode_words, link_err, hunting,
                    gap_tick, MAX_PAYLOAD=MAX_PAYLOAD, FAST_CRC=FAST_CRC, REPLAY_WORDS=REPLAY_WORDS)
    if RING_REG:
        from lutzip.firmware.axi.axis_skid import axis_skid
        q_tdata = Signal(intbv(0)[len(ring_tdata):])
        q_tvalid, q_tready, q_empty = [Signal(bool(0)) for _ in range(3)]
        u_ring = [cmd_ring(clk, blk_rst(), ring_we, ring_wdata, ring_commit, ring_rollback,
                           q_tdata, q_tvalid, q_tready, ring_free, q_empty, DEPTH=RING_DEPTH,
                           **({"PIPE": True} if RING_PIPE else {})),
                  axis_skid(clk, blk_rst(), q_tdata, q_tvalid, q_tready, ring_tdata, ring_tvalid, ring_tready)]

        @always_comb
        def c_ring_empty():
            ring_empty.next = q_empty and not ring_tvalid and q_tready
        u_ring.append(c_ring_empty)
    else:
        u_ring = cmd_ring(clk, blk_rst(), ring_we, ring_wdata, ring_commit, ring_rollback,
                          ring_tdata, ring_tvalid, ring_tready, ring_free, ring_empty, DEPTH=RING_DEPTH)
    if REPLAY_WORDS:
        if LANES > 1:   # the N-lane replay unit (module docstring)
            from lutzip.firmware.engine.replay_lanes import replay_lanes
            rp_block, rp_kw = replay_lanes, dict(
                tbl_we=tbl_we, tbl_sel=tbl_sel, tbl_addr=tbl_addr, tbl_wdata=tbl_wdata, LANES=LANES, ROWS=LANES_ROWS,
                L=L, LUT3_DEPTH=LUT3_DEPTH, STATES=STATES,
                FRONT="vector" if getattr(core, "__name__", "") == "core_vector" else "window",
                **({"MIRROR": 1, "MAX_N": MAX_N} if MIRROR else {}))
        else:
            rp_block, rp_kw = replay_unit, dict(PIPE=REPLAY_PIPE)
        u_rp = rp_block(clk, blk_rst(), ring_tdata, ring_tvalid, ring_tready, lt_tdata, lt_tvalid, lt_tready,
                        ld_tdata, ld_tvalid, ld_tready, ld_tlast,
                        core_s_tdata, core_s_tvalid, core_s_tready, core_s_tlast,
                        core_m_tdata, core_m_tvalid, core_m_tready, core_m_tlast, core_m_tuser,
                        res_tvalid, res_tready, busy, stripes_done, res_idle, rp_active, rp_done, rcounters,
                        REPLAY_WORDS=REPLAY_WORDS, W=W, BITS=COUNTER_BITS, FAST_CRC=FAST_CRC, **rp_kw)
        if REPLAY_PIPE and LANES == 1:
            # the loader's idle registered as the replay unit's (PIPE), guarded by the run and its end
            ld_guard = Signal(bool(0))

            @always_comb
            def c_ld_guard():
                ld_guard.next = rp_active or rp_done
            u_ld = [table_loader(clk, blk_rst(), lt_tdata, lt_tvalid, lt_tready,
                                 ld_tdata, ld_tvalid, ld_tready, ld_tlast,
                                 *ld_port, busy, stripes_done, res_idle, barrier_req, guard=ld_guard,
                                 IDLE_REG=True), c_ld_guard]
        else:
            u_ld = table_loader(clk, blk_rst(), lt_tdata, lt_tvalid, lt_tready,
                                ld_tdata, ld_tvalid, ld_tready, ld_tlast,
                                *ld_port, busy, stripes_done, res_idle, barrier_req)
    else:
        u_ld = table_loader(clk, blk_rst(), ring_tdata, ring_tvalid, ring_tready,
                            core_s_tdata, core_s_tvalid, core_s_tready, core_s_tlast,
                            *ld_port, busy, stripes_done, res_idle, barrier_req)
    if RESULT_REG:    # the core's side of the core output register
        from lutzip.firmware.engine.core_out_reg import core_out_reg
        ko_tdata = Signal(intbv(0)[W:])
        ko_tvalid, ko_tready, ko_tlast, ko_tuser = [Signal(bool(0)) for _ in range(4)]
        ko_port = (ko_tdata, ko_tvalid, ko_tready, ko_tlast, ko_tuser)
    else:
        ko_port = (core_m_tdata, core_m_tvalid, core_m_tready, core_m_tlast, core_m_tuser)
    if CORE_IN_REG:
        from lutzip.firmware.engine.core_in_reg import core_in_reg
        k_tdata = Signal(intbv(0)[32:])
        k_tvalid, k_tready, k_tlast = [Signal(bool(0)) for _ in range(3)]
        u_core = [core_in_reg(clk, blk_rst(), core_s_tdata, core_s_tvalid, core_s_tready, core_s_tlast,
                              k_tdata, k_tvalid, k_tready, k_tlast),
                  core(clk, blk_rst(), k_tdata, k_tvalid, k_tready, k_tlast, *ko_port,
                       tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy,
                       L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, **core_kw)]
    else:
        u_core = core(clk, blk_rst(), core_s_tdata, core_s_tvalid, core_s_tready, core_s_tlast, *ko_port,
                      tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy,
                      L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, **core_kw)
    if RESULT_REG:
        u_core = [u_core, core_out_reg(clk, blk_rst(), *ko_port, core_m_tdata, core_m_tvalid, core_m_tready,
                                       core_m_tlast, core_m_tuser)]
    if TABLE_REG:
        u_core = [u_core, table_reg(clk, blk_rst(), *ld_port, tbl_we, tbl_sel, tbl_addr, tbl_wdata)]
    u_res = result_path(clk, blk_rst(), mode_words,
                        core_m_tdata, res_tvalid if REPLAY_WORDS else core_m_tvalid,
                        res_tready if REPLAY_WORDS else core_m_tready, core_m_tlast, core_m_tuser,
                        dfi_tdata, dfi_tvalid, dfi_tready, qfi_tdata, qfi_tvalid, qfi_tready,
                        stripes_done, W=W, FAST_CRC=FAST_CRC, **({"DESC_REG": True} if RESULT_REG else {}))
    if RESULT_REG:    # the FIFO's side of the result data register (a tuple: no second name without it)
        from lutzip.firmware.axi.axis_skid import axis_skid
        dq_tdata = Signal(intbv(0)[W:])
        dq_tvalid, dq_tready = Signal(bool(0)), Signal(bool(0))
        dq_port = (dq_tdata, dq_tvalid, dq_tready)
    else:
        dq_port = (dfo_tdata, dfo_tvalid, dfo_tready)
    full_reg = {"FULL_REG": True} if RESULT_REG else {}
    u_dfifo = fifo(clk, blk_rst(), dfi_tdata, dfi_tvalid, dfi_tready, *dq_port, DEPTH=DATA_DEPTH, **full_reg,
                   **({"PIPE": True} if RESULT_REG else {}))     # its RAM read through the output register
    if RESULT_REG:
        u_dfifo = [u_dfifo, axis_skid(clk, blk_rst(), *dq_port, dfo_tdata, dfo_tvalid, dfo_tready)]
    u_qfifo = fifo(clk, blk_rst(), qfi_tdata, qfi_tvalid, qfi_tready, qfo_tdata, qfo_tvalid, qfo_tready,
                   DEPTH=DESC_DEPTH, **full_reg)
    u_cnt = perf_counters(clk, blk_rst(), busy, core_s_tvalid, core_s_tready,
                          core_m_tvalid, core_m_tready, core_m_tlast, core_m_tuser,
                          link_err, rx_hs, tx_hs, counters, BITS=COUNTER_BITS,
                          **({"EVENT_REG": True} if RESULT_REG else {}))
    fr_params = dict(L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, RING_DEPTH=RING_DEPTH, MAX_PAYLOAD=MAX_PAYLOAD,
                     CLK_HZ=CLK_HZ, BAUD=BAUD, FAST_CRC=FAST_CRC, LINK_CLK_HZ=LINK_CLK_HZ,
                     **({"INIT_END": True} if RESULT_REG else {}), **core_kw,
                     **({"LANES": LANES} if LANES != 1 else {}))
    fr_in = (barrier_req, qfo_tvalid, qfo_tready)
    if RST_REG:
        from lutzip.firmware.engine.reset_reg import reset_reg
        # the framer takes nothing from the blocks while their registered reset is high (the cycle after
        # soft_rst, when they still show their state of before it; see the module docstring)
        rh = blk_rst()
        f_bar, f_qv, f_qr = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
        fr_in = (f_bar, f_qv, f_qr)
        if REPLAY_WORDS:
            f_rpd = Signal(bool(0))

            @always_comb
            def c_fr_gate():
                f_bar.next = barrier_req and not rh
                f_qv.next = qfo_tvalid and not rh
                qfo_tready.next = f_qr and not rh
                f_rpd.next = rp_done and not rh
        else:
            f_rpd = None

            @always_comb
            def c_fr_gate():
                f_bar.next = barrier_req and not rh
                f_qv.next = qfo_tvalid and not rh
                qfo_tready.next = f_qr and not rh
        u_rr = [reset_reg(clk, rst, soft_rst, q) for q in rr_q] + [c_fr_gate]
    if REPLAY_WORDS:
        fr_params.update(replay_req=f_rpd if RST_REG else rp_done, rcounters=rcounters, REPLAY_WORDS=REPLAY_WORDS)
    u_fr = resp_framer(clk, rst if fr_rst is None else fr_rst, soft_rst, m_axis_tdata, m_axis_tvalid, m_axis_tready,
                       ack_req, nack_req, nack_reason, ident_req, fr_in[0], next_seq, credit,
                       qfo_tdata, fr_in[1], fr_in[2], dfo_tdata, dfo_tvalid, dfo_tready,
                       counters, fr_idle, res_idle, **fr_params)
    if RST_REG:
        u_fr = [u_fr, u_rr]
    if REPLAY_WORDS:
        return glue, c_quiet, u_rx, u_ring, u_rp, u_ld, u_core, u_res, u_dfifo, u_qfifo, u_cnt, u_fr
    return glue, c_quiet, u_rx, u_ring, u_ld, u_core, u_res, u_dfifo, u_qfifo, u_cnt, u_fr
