"""One lane's part of the N-lane replay unit (:func:`lutzip.firmware.engine.replay_lanes.replay_lanes`,
docs/PROTOCOL.md section 6.1): the lane's region of the replay buffer, its length, and the feed that reads the
region ``passes`` times into the lane's input stream.

The region is ``DEPTH`` words (``REPLAY_WORDS / LANES``) in banks of :func:`lutzip.firmware.engine.replay_bank.
replay_bank` (two block RAMs each, read every cycle from a registered address, 0 unless addressed;
:func:`feed_banks`), two registered OR stages and a counted prefetch into a
:data:`lutzip.firmware.engine.replay.PIPE_FIFO`-word FIFO: the pipelined feed of ``replay_unit`` with ``PIPE``, one
word per cycle, no block-RAM read data meets logic before a flip-flop.

The region's length is the lane's own: one past the last word a load wrote into the region (the host loads a
region from its first word on, so its last write is its last word; kept through RESET, like the words). A pass
reads words ``0 .. length - 1``; its last word is given ``tlast`` whatever was loaded, so garbage ends in decode
errors, never in a lane that waits for a packet end. A region never written since power-up (length 0) gives no
words (the run then ends by the replay unit's watchdog, its passes bad).
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv

from lutzip.firmware.engine.replay import PIPE_FIFO
from lutzip.firmware.engine.replay_bank import replay_bank
from lutzip.firmware.engine.replay_pipe import replay_pipe


def feed_banks(depth):
    """The banks of a region of ``depth`` words: ``(bank words, banks, banks per OR group)``.

    Each bank is two block RAMs whatever its depth (:func:`lutzip.firmware.engine.replay_bank.replay_bank`), so
    the banks are as large as they may be: 1024 words (two DP16KDs of 1024 x 18 on the ECP5), 8 to an OR group;
    a region of at most 1024 words is one bank (two DP16KDs, where 8 banks of ``depth / 8`` words took 16), one
    of 2 K .. 8 K words 2 .. 8 banks in one group. The pipeline (six stages from address to FIFO) is the same
    in every case (an OR of one bank is a register stage).
    """
    bd = min(1024, depth)
    nb = depth // bd
    return bd, nb, min(8, nb)


@block
def replay_feed(clk, rst, we, wa, wd, start, active, k_pass, tdata, tvalid, tready, tlast, reading, flight,
                psum_in, psum_out, pk_in, pk_out, hs_in, hs_out, st_in, st_out, LANE=0, DEPTH=1024):
    """Lane ``LANE``'s region of the replay buffer and its feed.

    Parameters
    ----------
    clk, rst : Signal
        Clock, synchronous reset (stops the feed; the words and the length stay).
    we, wa, wd : Signal
        The buffer's write port (global address: its high bits are the lane, the low ones the region's word;
        33-bit data: a stripe-end bit and 32 data bits).
    start, active : Signal
        The run's start pulse, the run is in progress.
    k_pass : Signal
        Passes of the run.
    tdata, tvalid, tready, tlast : Signal
        The lane's input stream (32 bits).
    reading : Signal
        The feed still has words of the run to read from the region.
    flight : Signal
        Words read and not yet taken by the lane.
    psum_in, psum_out : Signal
        The packets of pass 1 the lanes before this one took (None for lane 0), and with this lane's.
    pk_in, pk_out : Signal
        Every lane before this one took its pass 1's last word (None for lane 0), and this one too.
    hs_in, hs_out : Signal
        A lane before this one took a word in this cycle (None for lane 0), or this one.
    st_in, st_out : Signal
        A lane before this one waits for a word (ready, no word) in this cycle (None for lane 0), or this one.
    LANE, DEPTH : int
        This lane, its region's words (a power of two, >= 32).
    """
    AW = len(wa)
    RW = (DEPTH - 1).bit_length()
    assert 1 << RW == DEPTH and AW > RW and DEPTH >= 32
    BD, NB, GS = feed_banks(DEPTH)          # groups of GS banks: an OR per group, then an OR of the groups
    AB = RW + 1 if NB == 1 else RW         # the banks' address: one bank gets a high bit 0 (its BANK number)
    we_l = Signal(bool(0))
    wa_l = Signal(intbv(0)[AB:])
    length = Signal(intbv(0)[RW + 1:])      # one past the last word written to the region
    n_m1 = Signal(modbv(0)[RW:])
    raddr = Signal(intbv(0)[AB:])           # the banks' read address (a flip-flop)
    rq = [Signal(intbv(0)[33:]) for _ in range(NB)]
    cnt = Signal(intbv(0, min=0, max=PIPE_FIFO + 1))   # words read and not yet taken by the lane
    fo = Signal(intbv(0)[34:])
    go = Signal(bool(0))                    # the run starts and the region has words (else the feed stays idle)
    npk = Signal(intbv(0)[RW + 1:])         # packets of pass 1 taken by the lane (at most one per word)
    pk = Signal(bool(0))                    # the lane took its pass 1's last word
    u_banks = [replay_bank(clk, we_l, wa_l, wd, raddr, rq[b], BANK=b, DEPTH=BD) for b in range(NB)]
    u_pipe = replay_pipe(clk, rst, go, active, n_m1, k_pass, raddr, rq, reading, cnt, fo, tvalid, tready,
                         DEPTH=PIPE_FIFO, GROUP=GS)

    @always_comb
    def c_wsel():
        we_l.next = we and wa[AW:RW] == LANE
        wa_l.next = wa[RW:0]
        n_m1.next = length[RW:0] - 1
        go.next = start and length != 0

    if LANE == 0:
        @always_comb
        def c_chain():
            psum_out.next = npk
            pk_out.next = pk
            hs_out.next = tvalid and tready
            st_out.next = tready and not tvalid
    else:
        @always_comb
        def c_chain():
            psum_out.next = psum_in + npk
            pk_out.next = pk_in and pk
            hs_out.next = hs_in or (tvalid and tready)
            st_out.next = st_in or (tready and not tvalid)

    @always(clk.posedge)
    def c_pass1():
        """Pass 1's input packets (the output side's pass length) and its end."""
        if rst or start:
            npk.next = 0
            pk.next = 0
        elif tvalid and tready and not pk:
            if fo[32] or fo[33]:
                npk.next = npk + 1
            if fo[33]:
                pk.next = 1

    @always(clk.posedge)
    def c_len():
        if we_l:
            length.next = wa_l + 1

    @always_comb
    def c_out():
        tdata.next = fo[32:0]
        tlast.next = fo[32] or fo[33]
        flight.next = cnt != 0

    return u_banks, u_pipe, c_wsel, c_chain, c_pass1, c_len, c_out
