"""``SimDevice``: a ``pynq.Device`` whose programmable logic is the simulated ``lutzip_axi`` design.

The real pynq package runs on it unmodified (``Overlay``, ``DefaultIP``, ``MMIO``, ``pynq.lib.dma.DMA``,
``allocate``), the way PYNQ's own tests run on mock devices: the device answers register reads and writes
(capability ``REGISTER_RW``) by address -- the DMA's registers go to :class:`AxiDmaModel`, the core's to the
AXI top simulator -- and hands out buffers with physical addresses. Buffers are not coherent: the host's view
and the "DDR" the DMA sees are separate copies, joined only by ``flush`` / ``invalidate`` (a driver that
forgets one gets stale data, as on a board). Every register access is counted per IP (:attr:`accesses`), and
the wall time spent inside the simulator is summed (:attr:`sim_seconds`), so the host's own overhead can be
told apart from simulation time.
"""
from __future__ import annotations

import collections
import itertools
import time
from pathlib import Path

import numpy as np

from lutzip.board.base import BoardError
from lutzip.board.pynq_sim import hwh as H
from lutzip.board.pynq_sim.dma import AxiDmaModel

try:
    import pynq
    from pynq.buffer import PynqBuffer
except ImportError as e:      # pragma: no cover - checked by lutzip.board.pynq before it imports this module
    raise BoardError(f"the simulated PYNQ device needs the pynq package (pip install 'lutzip[pynq]'): {e}") from None

#: Where the simulated DDR starts handing out buffers (page aligned, inside the HP0 window of the .hwh).
ALLOC_BASE = 0x10000000
PAGE = 4096
#: The Zynq-7000 SLCR (clock registers pynq's ``Clocks`` uses): base, size and reset values of a PYNQ-Z2
#: (50 MHz PS reference clock, IO PLL x20 = 1000 MHz, FCLK0 = IO PLL / 10 / 1 = 100 MHz).
SLCR_BASE, SLCR_SIZE = 0xF8000000, 0x1000
SLCR_RESET = {0x100: 40 << 12, 0x104: 32 << 12, 0x108: 20 << 12,           # ARM, DDR, IO PLL feedback dividers
              0x170: (1 << 20) | (10 << 8), 0x180: (1 << 20) | (10 << 8),   # FPGA0..3_CLK_CTRL: IO PLL / 10
              0x190: (1 << 20) | (10 << 8), 0x1A0: (1 << 20) | (10 << 8)}


class _Memory:
    """The simulated DDR: allocated buffers by physical address (the DMA's view of them)."""

    def __init__(self):
        self.regions = {}          # bo -> [phys, bytearray (device copy), weakref-less host array]
        self.next_addr = ALLOC_BASE
        self.bos = itertools.count(1)

    def find(self, addr, nbytes):
        for bo, (base, dev, _host) in self.regions.items():
            if base <= addr and addr + nbytes <= base + len(dev):
                return bo, addr - base
        raise KeyError(addr)

    def read(self, addr, nbytes) -> bytes:
        bo, off = self.find(addr, nbytes)
        return bytes(self.regions[bo][1][off:off + nbytes])

    def write(self, addr, data):
        bo, off = self.find(addr, len(data))
        self.regions[bo][1][off:off + len(data)] = data


class SimDevice(pynq.Device):
    """A pynq device backed by a simulator of the AXI top and a model of AXI DMA (see the module docstring).

    Parameters
    ----------
    sim : object
        The AXI top simulator (``lutzip.firmware.axi.sim.AxiSim`` or anything with its API).
    length_width : int, optional
        Bits of the DMA's length register (``c_sg_length_width``; default: the PYNQ-Z2 design's, 26).
    tag : str
        pynq's device tag.
    """

    def __init__(self, sim, length_width=None, tag="lutzip_sim"):
        super().__init__(tag)
        self.name = "lutzip-sim"
        self.capabilities = {"REGISTER_RW": True}
        length_width = H.dma_length_width() if length_width is None else int(length_width)
        self.sim = _Timed(sim, self)
        self.sim_seconds = 0.0
        self.mem = _Memory()
        self.dma_model = AxiDmaModel(self.sim, self.mem, length_width)
        self.length_width = length_width
        self.accesses = collections.Counter()   # ("dma"|"core"|"slcr", "read"|"write") -> count
        self.slcr = dict(SLCR_RESET)             # the PS clock registers: pynq's Clocks runs on them
        self.arch = "armv7l"                     # a Zynq-7000 (PYNQ-Z2): pynq picks its Zynq clock driver
        self.timestamp = ""
        self.bitfile_name = None

    # ---------------------------------------------------------------------------------------- registers
    def _target(self, address, length):
        if length != 4 or address % 4:
            raise BoardError(f"simulated PYNQ device: {length}-byte access at {address:#x} (32-bit registers only)")
        if H.DMA_BASE <= address < H.DMA_BASE + H.IP_RANGE:
            return "dma", address - H.DMA_BASE
        if H.CORE_BASE <= address < H.CORE_BASE + H.IP_RANGE:
            return "core", address - H.CORE_BASE
        if SLCR_BASE <= address < SLCR_BASE + SLCR_SIZE:
            return "slcr", address - SLCR_BASE
        raise BoardError(f"simulated PYNQ device: no IP at address {address:#x}")

    def read_registers(self, address, length):
        """Read ``length`` bytes of registers at physical ``address`` (pynq's REGISTER_RW capability)."""
        ip, off = self._target(address, length)
        self.accesses[ip, "read"] += 1
        if ip == "slcr":
            v = self.slcr.get(off, 0)
        else:
            v = self.dma_model.read(off) if ip == "dma" else self.sim.read_reg(off)
        return int(v & 0xFFFFFFFF).to_bytes(4, "little")

    def write_registers(self, address, data):
        """Write the bytes ``data`` to the registers at physical ``address`` (one 32-bit register at a time)."""
        data = bytes(data)
        for k in range(0, len(data), 4):
            ip, off = self._target(address + k, len(data[k:k + 4]))
            self.accesses[ip, "write"] += 1
            v = int.from_bytes(data[k:k + 4], "little")
            if ip == "slcr":
                self.slcr[off] = v
            elif ip == "dma":
                self.dma_model.write(off, v)
            else:
                self.sim.write_reg(off, v)

    def register_accesses(self, ip=None) -> int:
        """Register accesses so far (of ``"dma"``, ``"core"`` or ``"slcr"`` only, or all)."""
        return sum(n for (i, _k), n in self.accesses.items() if ip is None or i == ip)

    # ------------------------------------------------------------------------------------------ memory
    def allocate(self, shape, dtype, **kwargs):
        """A non-coherent buffer with a physical address in the simulated DDR (``pynq.allocate``)."""
        n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        host = bytearray(max(n, 1))
        buf = PynqBuffer(shape, dtype, buffer=host, device=self, device_address=self.mem.next_addr,
                         bo=next(self.mem.bos), coherent=False)
        self.mem.regions[buf.bo] = [self.mem.next_addr, bytearray(len(host)), host]
        self.mem.next_addr += -(-len(host) // PAGE) * PAGE
        return buf

    def flush(self, bo, offset, vaddr, length):
        """Copy the host's view of a buffer range to the simulated DDR."""
        _base, dev, host = self.mem.regions[bo]
        dev[offset:offset + length] = host[offset:offset + length]

    def invalidate(self, bo, offset, vaddr, length):
        """Copy a buffer range from the simulated DDR to the host's view."""
        _base, dev, host = self.mem.regions[bo]
        host[offset:offset + length] = dev[offset:offset + length]

    def free(self, buf):
        """Forget a buffer (its address range is not reused)."""
        self.mem.regions.pop(getattr(buf, "bo", None), None)

    # ---------------------------------------------------------------------------------------- bitstream
    def get_bitfile_metadata(self, bitfile_name, partial=False):
        """Parse the ``.hwh`` beside ``bitfile_name`` the way pynq parses a board's (pynqmetadata)."""
        hwh = Path(bitfile_name).with_suffix(".hwh")
        if not hwh.is_file():
            raise BoardError(f"no {hwh.name} beside {bitfile_name}")
        try:
            from pynqmetadata.frontends import Metadata
            from pynq.pl_server.embedded_device import RuntimeMetadataParser
        except ImportError:             # pynq before 3.0: the HWH parser of pynq itself
            from pynq.pl_server.hwh_parser import HWH
            return HWH(hwh_data=hwh.read_text(encoding="utf-8"))
        parser = RuntimeMetadataParser(Metadata(input=hwh))
        if hasattr(parser, "refresh_hierarchy_dict"):
            parser.refresh_hierarchy_dict()
        return parser

    def download(self, bitstream, parser=None):
        """"Program" the simulated logic: only the bookkeeping pynq does after a download."""
        self.bitfile_name = bitstream.bitfile_name
        self.post_download(bitstream, parser, self.name)

    def fclk_mhz(self, idx=0, ref_mhz=50.0) -> float:
        """FCLK``idx`` as the SLCR registers set it (IO PLL source)."""
        ctrl = self.slcr.get(0x170 + 0x10 * idx, 0)
        d0, d1 = (ctrl >> 8) & 0x3F, (ctrl >> 20) & 0x3F
        return ref_mhz * ((self.slcr.get(0x108, 0) >> 12) & 0x7F) / max(d0 * d1, 1)

    def close(self):
        """Stop the simulator."""
        sim, self.sim = self.sim, None
        if sim is not None:
            sim.close()


class _Timed:
    """The simulator with the wall time of its register accesses and transfers added to ``dev.sim_seconds``."""

    def __init__(self, sim, dev):
        self._sim, self._dev = sim, dev
        self.params = getattr(sim, "params", {})

    def _timed(self, f, *a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            self._dev.sim_seconds += time.perf_counter() - t

    def read_reg(self, off):
        return self._timed(self._sim.read_reg, off)

    def write_reg(self, off, val):
        return self._timed(self._sim.write_reg, off, val)

    def transfer(self, *a, **k):
        return self._timed(self._sim.transfer, *a, **k)

    @property
    def words_sent(self):
        return self._sim.words_sent

    def close(self):
        self._sim.close()


def write_overlay_files(directory, sim_params: dict, length_width=None) -> Path:
    """``lutzip.bit`` + ``lutzip.hwh`` for a simulated top of parameters ``sim_params`` (see :mod:`.hwh`)."""
    keys = {"L": "L", "W": "W", "LUT3_DEPTH": "lut3_depth", "OUT_BYTES": "out_bytes", "CLK_HZ": "clk_hz",
            "LANES": "lanes"}
    return H.write_overlay(directory, dma_length_width=length_width,
                           **{keys[k]: v for k, v in sim_params.items() if k in keys})
