"""MyHDL simulation driver and reference model for :func:`lutzip.hdl.core.decoder_core.decoder_core`.

* :func:`expected_words` -- what the core must output for a list of AXI-Stream packets (one stripe each),
  computed with the reference decoder kernel of :mod:`lutzip.codec.bitstream` (the bit format's normative code).
* :func:`simulate` -- run the MyHDL core on packets with optional random input gaps and output backpressure;
  returns the output words, error pulses and cycle counts.
* :func:`packets_from_stripes` -- cut an ``encode_stripes`` payload into packets.

Output words are tuples ``(data, last, user)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from myhdl import ResetSignal, Signal, StopSimulation, block, delay, instance, intbv

from lutzip.codec.bitstream import STRIPE_MARKER, _decode_kernel
from lutzip.errors import DecodeError
from lutzip.codec.tables import SEL_LUT3, TableSet, expand_hw
from lutzip.hdl.core.decoder_core import decoder_core

SEL_CONFIG = 3


def table_ops(tables: TableSet, L: int = 8):
    """All table writes for a table set: :func:`lutzip.codec.tables.expand_hw` plus the LUT3 size (config 0)."""
    return expand_hw(tables, L) + [(SEL_CONFIG, 0, len(tables.lut3))]


def packets_from_stripes(payload, stripe_words):
    """Split back-to-back stripes into a list of packets (lists of ints)."""
    payload = np.asarray(payload, np.uint32)
    out, p = [], 0
    for n in np.asarray(stripe_words, np.int64):
        out.append([int(v) for v in payload[p:p + n]])
        p += int(n)
    return out


def _tables_from_ops(ops, L, lut3_depth=4096):
    lut1 = np.zeros(1 << L, np.int64)
    lut2 = np.zeros(16, np.int64)
    lut3 = {}
    n3 = 0
    for sel, addr, data in ops:
        if sel == 0 and addr < (1 << L):
            lut1[addr] = data & 0x7FFF
        elif sel == 1 and addr < 16:
            lut2[addr] = data & 0x7FFFFF
        elif sel == SEL_LUT3 and addr < lut3_depth:
            lut3[addr] = data
        elif sel == SEL_CONFIG and addr == 0:
            n3 = min(data, lut3_depth)  # the core clips the configured size to its RAM
    l3 = np.array([lut3.get(a, 0) for a in range(n3)], np.uint16)
    kinds = (lut2 >> 21) & 3
    ks = (lut2 >> 16) & 31
    params = lut2 & 0xFFFF
    return lut1, kinds, ks, params, l3


def expected_words(packets, ops, L: int = 8, LUT3_DEPTH: int = 4096):
    """Reference output of the core for ``packets`` after the table writes ``ops`` (list of (d, last, user))."""
    lut1, kinds, ks, params, lut3 = _tables_from_ops(ops, L, LUT3_DEPTH)
    out = []
    for words in packets:
        words = np.asarray(words, np.uint32)
        hdr = int(words[0])
        if hdr >> 16 != STRIPE_MARKER >> 16:
            out.append((1, True, True))
            continue
        n = (hdr & 0xFFFF) + 1
        dec = np.zeros(n, np.uint16)
        err = np.zeros(3, np.int64)
        rc = _decode_kernel(words, np.zeros(1, np.int64), np.array([len(words)], np.int64), n, n, lut1, L,
                            kinds, ks, params, lut3, dec, err)
        if rc in (0, 7, 8):  # leftover words / padding are not errors for the core (it discards to tlast)
            out += [(int(v), i == n - 1, False) for i, v in enumerate(dec)]
        else:
            k = int(err[2])
            out += [(int(v), False, False) for v in dec[:k]]
            out.append((int(rc), True, True))
    return out


@dataclass
class SimResult:
    words: list = field(default_factory=list)      #: (data, last, user) per accepted output word
    out_cycles: list = field(default_factory=list)  #: cycle number of each output handshake
    errors: list = field(default_factory=list)      #: err_code of each err_valid pulse
    cycles: int = 0                                 #: cycles simulated after the table writes
    timed_out: bool = False
    max_busy_idle: int = 0


def simulate(packets, ops, L=8, W=16, LUT3_DEPTH=4096, in_gap=0.0, out_stall=0.0, seed=0,
             max_cycles=None, expect_words=None, trace=False, reset_after_tables=False, LUT1_RAM="block",
             FRONT="window", STEP="adder"):
    """Run the MyHDL core on ``packets`` (lists of u32) after the table writes ``ops``.

    ``in_gap`` / ``out_stall``: probability that ``s_axis_tvalid`` is low / ``m_axis_tready`` is low in a cycle.
    Stops when ``expect_words`` output words were seen and the core is idle, or after ``max_cycles``.
    ``reset_after_tables``: pulse ``rst`` for 3 cycles between the table writes and the stream (tables survive).
    """
    from myhdl import _simulator
    n_signals = len(_simulator._signals)  # MyHDL keeps every Signal ever made in a global list
    rng = np.random.default_rng(seed)
    stream = [(int(w), i == len(p) - 1) for p in packets for i, w in enumerate(p)]
    n_in = len(stream)
    if expect_words is None:
        expect_words = len(expected_words(packets, ops, L, LUT3_DEPTH))
    if max_cycles is None:
        max_cycles = 200 + 4 * (n_in + expect_words) + int(expect_words * 10 * (in_gap + out_stall))
    gaps = rng.random(n_in + max_cycles) < in_gap
    stalls = rng.random(max_cycles + 8) < out_stall
    res = SimResult()

    clk = Signal(bool(0))
    rst = ResetSignal(1, active=1, isasync=False)
    s_tdata = Signal(intbv(0)[32:])
    s_tvalid, s_tready, s_tlast = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    m_tdata = Signal(intbv(0)[W:])
    m_tvalid, m_tready, m_tlast, m_tuser = Signal(bool(0)), Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    tbl_we = Signal(bool(0))
    tbl_sel = Signal(intbv(0)[2:])
    tbl_addr = Signal(intbv(0)[12:])
    tbl_wdata = Signal(intbv(0)[32:])
    err_valid = Signal(bool(0))
    err_code = Signal(intbv(0)[4:])
    busy = Signal(bool(0))

    @block
    def bench():
        dut = decoder_core(clk, rst, s_tdata, s_tvalid, s_tready, s_tlast, m_tdata, m_tvalid, m_tready,
                           m_tlast, m_tuser, tbl_we, tbl_sel, tbl_addr, tbl_wdata, err_valid, err_code, busy,
                           L=L, W=W, LUT3_DEPTH=LUT3_DEPTH, LUT1_RAM=LUT1_RAM, FRONT=FRONT,
                           STEP=STEP)

        @instance
        def clkgen():
            while True:
                yield delay(5)
                clk.next = not clk

        @instance
        def driver():
            yield clk.posedge
            yield clk.posedge
            rst.next = 0
            for sel, addr, data in ops:
                tbl_we.next = 1
                tbl_sel.next = sel
                tbl_addr.next = addr
                tbl_wdata.next = data
                yield clk.posedge
            tbl_we.next = 0
            yield clk.posedge
            if reset_after_tables:
                rst.next = 1
                for _ in range(3):
                    yield clk.posedge
                rst.next = 0
            i = 0
            cyc = 0
            idle_run = 0
            while True:
                # present this cycle's inputs
                if i < n_in and not gaps[i + cyc]:
                    s_tvalid.next = 1
                    s_tdata.next = stream[i][0]
                    s_tlast.next = stream[i][1]
                else:
                    s_tvalid.next = 0
                m_tready.next = not stalls[cyc % len(stalls)]
                yield clk.posedge
                # sample the handshakes of the cycle that just ended
                if s_tvalid and s_tready:
                    i += 1
                if m_tvalid and m_tready:
                    res.words.append((int(m_tdata), bool(m_tlast), bool(m_tuser)))
                    res.out_cycles.append(cyc)
                if err_valid:
                    res.errors.append(int(err_code))
                cyc += 1
                if i >= n_in and len(res.words) >= expect_words:
                    idle_run = idle_run + 1 if not busy else 0
                    if idle_run > 4:
                        break
                if cyc >= max_cycles:
                    res.timed_out = True
                    break
            res.cycles = cyc
            raise StopSimulation

        return dut, clkgen, driver

    tb = bench()
    if trace:
        tb.config_sim(trace=True)
    try:
        tb.run_sim(quiet=True)
    finally:
        tb.quit_sim()
        del _simulator._signals[n_signals:]  # ours only: they die with this call (no leak across runs)
    return res


def check(packets, ops, **kw):
    """Simulate and compare against :func:`expected_words`; raise :class:`DecodeError` on a mismatch."""
    exp = expected_words(packets, ops, kw.get("L", 8), kw.get("LUT3_DEPTH", 4096))
    res = simulate(packets, ops, expect_words=len(exp), **kw)
    got = res.words
    if res.timed_out or got != exp:
        first = next((j for j, (a, b) in enumerate(zip(got, exp)) if a != b), min(len(got), len(exp)))
        raise DecodeError(f"core output differs from the reference at word {first} of {len(exp)} "
                          f"(got {got[first:first + 3]}, expected {exp[first:first + 3]}, "
                          f"{len(got)} words out, timed out: {res.timed_out})")
    return res


# ------------------------------------------------------------------------------------------ random vectors
def random_tableset(rng, W=16, L=8, max_classes=16, complete=True, lut_kmax=6, zrun_kmax=8) -> TableSet:
    """A random valid table set with codes of at most ``L`` bits (``complete=False`` may leave prefixes unused)."""
    from lutzip.codec.huffman import limited_code_lengths
    from lutzip.codec.tables import LUT, RANGE, ZRUN, ClassSpec

    n = int(rng.integers(1, max_classes + 1))
    lens = limited_code_lengths([int(f) for f in rng.integers(1, 1000, n)], L)
    if not complete and n > 1 and rng.random() < 0.7:
        drop = int(rng.integers(n))
        lens = lens[:drop] + lens[drop + 1:]
        n -= 1
    lut3 = []
    classes = []
    for c in lens:
        kind = int(rng.choice([LUT, RANGE, ZRUN], p=[0.45, 0.4, 0.15]))
        if kind == LUT:
            k = int(rng.integers(0, lut_kmax + 1))
            classes.append(ClassSpec(c, LUT, k, len(lut3)))
            lut3 += [int(v) for v in rng.integers(0, 1 << W, 1 << k)]
        elif kind == RANGE:
            k = int(rng.integers(0, W + 1))
            base = int(rng.integers(0, 1 << (W - k))) << k
            classes.append(ClassSpec(c, RANGE, k, base))
        else:
            k = int(rng.choice([int(rng.integers(0, zrun_kmax + 1)), 16], p=[0.9, 0.1]))
            classes.append(ClassSpec(c, ZRUN, k, 0))
    return TableSet(W, classes, np.array(lut3, np.uint16)).validate()


def random_stripe(rng, ts: TableSet, n_max: int, zrun_max=None):
    """One stripe packet of random symbols of ``ts`` (any class, any index) and the words it decodes to.

    Returns ``(packet, words)``; ``n`` (the header count) is at most ``n_max`` and at least 1.
    """
    from lutzip.codec.tables import LUT, RANGE

    codes = ts.codes()
    acc, nbits, words = 0, 0, []
    while len(words) < n_max:
        j = int(rng.integers(len(ts.classes)))
        cl = ts.classes[j]
        idx = int(rng.integers(0, 1 << cl.k))
        if cl.kind == LUT:
            out = [int(ts.lut3[cl.param + idx])]
        elif cl.kind == RANGE:
            out = [cl.param + idx]
        else:
            room = n_max - len(words) if zrun_max is None else min(zrun_max, n_max - len(words))
            if idx + 1 > room:
                idx = int(rng.integers(0, min(room, 1 << cl.k)))
            out = [0] * (idx + 1)
        acc = (acc << cl.total) | (codes[j] << cl.k) | idx
        nbits += cl.total
        words += out
        if rng.random() < 1.0 / max(4, n_max // 2) and words:
            break
    pad = -nbits % 32 if nbits else 32
    acc <<= pad
    nw = (nbits + pad) // 32
    payload = [(acc >> (32 * (nw - 1 - i))) & 0xFFFFFFFF for i in range(nw)]
    return [STRIPE_MARKER | (len(words) - 1)] + payload, words
