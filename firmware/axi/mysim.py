"""``lutzip_axi`` in the MyHDL simulator, stepped cycle by cycle from Python, with the API of
:class:`lutzip.firmware.axi.sim.AxiSim` (``write_reg``, ``read_reg``, ``transfer``, ``soft_reset``,
``load_tables``, ``close``): the reference the converted top is checked against, and the tests' bench.

Slow (a few thousand cycles per second): for small streams only. One instance at a time (MyHDL keeps one
simulation per process).
"""
from __future__ import annotations

import warnings

import numpy as np
from myhdl import Simulation, Signal, block, delay, instance

from lutzip.firmware.axi.lutzip_axi import lutzip_axi, top_signals
from lutzip.firmware.axi.sim import AxiApi


class MyhdlAxi(AxiApi):
    """The MyHDL top behind the AxiSim API (cycle counts are the simulated clock cycles).

    Parameters
    ----------
    **params
        ``lutzip_axi`` parameters (L, W, LUT3_DEPTH, FRONT, STEP, LUT1_RAM, OUT_BYTES, CLK_HZ).
    """

    def __init__(self, **params):
        self.params = dict(params)
        self.W = params.get("W", 16)
        self.OUT_BYTES = params.get("OUT_BYTES", 4)
        self.s = top_signals(self.OUT_BYTES)
        self.cycles = 0
        self._phase = 0
        s = self.s
        sigs = s

        @block
        def bench():
            dut = lutzip_axi(**sigs, **params)

            @instance
            def clkgen():
                while True:
                    yield delay(5)
                    sigs["aclk"].next = not sigs["aclk"]

            return dut, clkgen

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._tb = bench()
            self._sim = Simulation(self._tb)
        s["aresetn"].next = 0
        self._settle()
        for _ in range(4):
            self._edge()
        s["aresetn"].next = 1
        self._settle()
        self._edge()
        self.cycles = 0

    # one clock: inputs are set before _settle(); handshakes are sampled between _settle() and _edge()
    def _settle(self):
        # the clock rises at phase 5 of each 10-unit cycle; settle steps stay before it
        if self._phase >= 4:
            raise RuntimeError("MyhdlAxi: too many settle steps in one cycle")
        self._sim.run(1, quiet=1)
        self._phase += 1

    def _edge(self):
        self._sim.run(10 - self._phase, quiet=1)
        self._phase = 0
        self.cycles += 1

    def _v(self, name):
        return int(self.s[name].val)

    def write_reg(self, off: int, val: int, wstrb: int = 0xF) -> int:
        """AXI4-Lite write; returns the cycles it took."""
        s, c0 = self.s, self.cycles
        s["s_axi_ctrl_awaddr"].next = off
        s["s_axi_ctrl_wdata"].next = int(val) & 0xFFFFFFFF
        s["s_axi_ctrl_wstrb"].next = wstrb
        s["s_axi_ctrl_awvalid"].next = 1
        s["s_axi_ctrl_wvalid"].next = 1
        s["s_axi_ctrl_bready"].next = 1
        aw = False
        for _ in range(1000):
            self._settle()
            if not aw and self._v("s_axi_ctrl_awready"):
                aw = True
                s["s_axi_ctrl_awvalid"].next = 0
                s["s_axi_ctrl_wvalid"].next = 0
                self._edge()
                continue
            if aw and self._v("s_axi_ctrl_bvalid"):
                self._edge()
                s["s_axi_ctrl_bready"].next = 0
                self._settle()
                return self.cycles - c0
            self._edge()
        raise RuntimeError("AXI4-Lite write did not complete")

    def read_reg(self, off: int) -> int:
        """AXI4-Lite read."""
        s = self.s
        s["s_axi_ctrl_araddr"].next = off
        s["s_axi_ctrl_arvalid"].next = 1
        s["s_axi_ctrl_rready"].next = 1
        ar = False
        for _ in range(1000):
            self._settle()
            if not ar and self._v("s_axi_ctrl_arready"):
                ar = True
                s["s_axi_ctrl_arvalid"].next = 0
                self._edge()
                continue
            if ar and self._v("s_axi_ctrl_rvalid"):
                v = self._v("s_axi_ctrl_rdata")
                self._edge()
                s["s_axi_ctrl_rready"].next = 0
                self._settle()
                return v
            self._edge()
        raise RuntimeError("AXI4-Lite read did not complete")

    def transfer(self, in_words, out_bytes_capacity, ready_prob=1.0, valid_prob=1.0, seed=0, max_idle=2000,
                 stop_after_words=None):
        """One MM2S transfer of ``in_words`` (tlast on the last) and the S2MM side until the output's tlast.

        ``stop_after_words``: stop feeding after that many accepted input words (the MM2S side is then
        idle; for soft-reset tests). Returns ``(out bytes, tlast seen, cycles)``; stops after ``max_idle``
        cycles without a handshake (never hangs).
        """
        s, c0 = self.s, self.cycles
        rng = np.random.default_rng(seed)
        words = [int(v) & 0xFFFFFFFF for v in np.asarray(in_words, np.uint64)]
        i, out, last, idle = 0, bytearray(), False, 0
        n_in = len(words) if stop_after_words is None else min(len(words), stop_after_words)
        while not last and idle < max_idle:
            v = i < n_in and rng.random() < valid_prob
            r = rng.random() < ready_prob and len(out) < out_bytes_capacity
            s["s_axis_tvalid"].next = v
            if v:
                s["s_axis_tdata"].next = words[i]
                s["s_axis_tlast"].next = i == len(words) - 1
            s["m_axis_tready"].next = r
            self._settle()
            hs = False
            if v and self._v("s_axis_tready"):
                i += 1
                hs = True
            if r and self._v("m_axis_tvalid"):
                d, k = self._v("m_axis_tdata"), self._v("m_axis_tkeep")
                for b in range(self.OUT_BYTES):
                    if k >> b & 1:
                        out.append(d >> (8 * b) & 0xFF)
                last = bool(self._v("m_axis_tlast"))
                hs = True
            idle = 0 if hs else idle + 1
            self._edge()
        s["s_axis_tvalid"].next = 0
        s["m_axis_tready"].next = 0
        self._settle()
        self.words_sent = i
        return bytes(out), last, self.cycles - c0

    def run_idle(self, n: int):
        """``n`` clock cycles with no handshakes offered."""
        for _ in range(n):
            self._settle()
            self._edge()

    def close(self):
        """End the simulation (releases MyHDL's global simulation state)."""
        try:
            self._sim.quit()
        except Exception:
            pass
