"""MyHDL simulation of the protocol engine driven by bytes (tests and debugging; slow: ~10^4 cycles/s)."""
from myhdl import block, delay, instance

from lutzip.firmware.engine.proto_engine import ports, proto_engine


class EngineSim:
    """Run ``proto_engine`` in the MyHDL simulator: :meth:`run` feeds bytes and returns what came out.

    Use as a context manager (the simulation is quit on exit; only one may exist per process).
    """

    def __init__(self, rx_gap=0, tx_stall=0, **params):
        self.ports = ports()
        self.__dict__.update(self.ports)  # clk, rst, s_axis_*, m_axis_*, idle
        self.params = params
        self.rx_gap = rx_gap
        self.tx_stall = tx_stall
        self.tx = []
        self.feed = []
        self.cycles = 0
        self.top = self._top()
        self.top.config_sim(trace=False)
        self.top.run_sim(duration=10, quiet=1)

    @block
    def _top(self):
        s = self
        dut = proto_engine(**s.ports, **s.params)

        @instance
        def clkgen():
            s.clk.next = 0
            while True:
                yield delay(5)
                s.clk.next = not s.clk

        @instance
        def drive():
            s.rst.next = 1
            s.m_axis_tready.next = 1
            yield s.clk.posedge
            yield s.clk.posedge
            s.rst.next = 0
            gap = 0
            while True:
                yield s.clk.posedge
                s.cycles += 1
                if s.m_axis_tvalid and s.m_axis_tready:
                    s.tx.append(int(s.m_axis_tdata))
                if s.s_axis_tvalid and s.s_axis_tready:
                    s.feed.pop(0)
                    gap = s.rx_gap
                if s.tx_stall:
                    s.m_axis_tready.next = (s.cycles % (s.tx_stall + 1)) == 0
                if s.feed and gap == 0:
                    s.s_axis_tdata.next = s.feed[0]
                    s.s_axis_tvalid.next = 1
                else:
                    s.s_axis_tvalid.next = 0
                    gap = max(0, gap - 1)

        return clkgen, drive, dut

    def run(self, data=b"", max_cycles=200000, until_idle=True):
        """Feed ``data``, run until idle (or ``max_cycles``), return the bytes the engine sent."""
        self.feed.extend(data)
        start = self.cycles
        while self.cycles - start < max_cycles:
            self.top.run_sim(duration=10 * 64, quiet=1)
            if until_idle and not self.feed and self.idle and not self.s_axis_tvalid:
                self.top.run_sim(duration=10 * 8, quiet=1)
                if self.idle:
                    break
        out = bytes(self.tx)
        self.tx.clear()
        return out

    def close(self):
        self.top.quit_sim()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SimSerial:
    """A serial-port look-alike (``write``/``read``/``in_waiting``) in front of an :class:`EngineSim`.

    Each ``read`` advances the simulation by up to ``step`` clock cycles. ``mangle(data) -> data`` may corrupt
    what the host writes (fault injection).
    """

    def __init__(self, sim: EngineSim, step=2000, mangle=None):
        self.sim = sim
        self.step = step
        self.mangle = mangle
        self.rx = bytearray()

    @property
    def in_waiting(self):
        return len(self.rx)

    def write(self, data):
        if self.mangle:
            data = self.mangle(bytes(data))
        self.sim.feed.extend(data)
        return len(data)

    def read(self, n=1):
        if not self.rx:
            self.rx += self.sim.run(max_cycles=self.step)
        out = bytes(self.rx[:n])
        del self.rx[:n]
        return out

    def close(self):
        pass
