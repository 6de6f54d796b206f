"""A lutzip board on a Zynq through AXI DMA (PYNQ): the ``lutzip_axi`` overlay of docs/AXI.md.

The host lays each tensor into one MM2S buffer (a descriptor word before every stripe, docs/AXI.md), starts
one S2MM and one MM2S transfer, waits (bounded) for both, and reads the top's status and counters: a fixed
number of register accesses per tensor whatever its stripe count. A tensor is split, at stripe boundaries,
only when a buffer would exceed the DMA's length register. The decoded words land in the S2MM buffer, so
both verify modes have every word; ``crc`` mode also checks the top's OUT_CRC against the received bytes.

Runs on a board image (pynq 3.x / 4.x; ``Overlay("lutzip.bit")``) and on x86 against the simulated device
(:mod:`lutzip.board.pynq_sim`, the converted top in Verilator behind a model of AXI DMA).

Example
-------
>>> from lutzip.board.pynq import open_board
>>> from lutzip.board.verify import stream_container, format_report
>>> with open_board(sim=True) as b:                              # doctest: +SKIP
...     print(format_report(stream_container(b, container, "full")))
"""
from __future__ import annotations

import shutil
import tempfile
import time
import warnings
import zlib
from dataclasses import dataclass

import numpy as np

from lutzip.board.base import BoardBase, BoardError, BoardInfo, BoardProtocolError, LinkError, StreamResult, \
    StripeResult, check_states
from lutzip.board.pynq_sim import dma as D          # PG021's register map (pure Python; no simulator)
from lutzip.firmware.axi import regs as R
from lutzip.link.protocol import words_crc

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # "No devices found, is the XRT environment sourced?" on x86
        import pynq
        from pynq import DefaultIP
except ImportError as _e:                        # the chooser turns this into a one-line BoardError
    raise ImportError(f"pynq is not installed (pip install 'lutzip[pynq]'): {_e}") from None
#: pynq releases this driver runs on (tested: 3.1.2 and 4.0.0, on the simulated device).
PYNQ_MIN = (3, 0)
if tuple(int(x) for x in pynq.__version__.split(".")[:2] if x.isdigit()) < PYNQ_MIN:
    raise ImportError(f"pynq {pynq.__version__} is too old for lutzip's PYNQ driver (needs >= 3.0: the .hwh "
                      f"parser pynqmetadata and Device.allocate); pip install 'lutzip[pynq]'")
try:        # pynq's buffers set ndarray.device, read-only since numpy 2.0 (hence pynq's numpy<2 pin)
    pynq.buffer.PynqBuffer((1,), np.uint8, device=None)
except AttributeError:
    raise ImportError(f"pynq {pynq.__version__} cannot allocate buffers with numpy {np.__version__} (it needs "
                      f"numpy < 2): pip install 'lutzip[pynq]' in its own environment") from None

#: The DMA registers the driver reads itself (pynq's channels start the transfers): status, S2MM length.
_SR = {"MM2S": D.MM2S + D.DMASR, "S2MM": D.S2MM + D.DMASR}
_S2MM_LENGTH = D.S2MM + D.LENGTH


class DmaError(LinkError):
    """The AXI DMA reported an error (DMASR error bits) or did not finish a transfer in time."""


class LutzipAxi(DefaultIP):
    """pynq driver of the ``lutzip_axi`` IP (bound by its VLNV): registers of docs/AXI.md."""

    bindto = [R.VLNV]

    def __init__(self, description):
        super().__init__(description=description)

    def reg(self, offset: int) -> int:
        """Read the 32-bit register at ``offset``."""
        return int(self.mmio.read(offset))

    def set(self, offset: int, value: int):
        """Write the 32-bit register at ``offset``."""
        self.mmio.write(offset, int(value) & 0xFFFFFFFF)

    def control(self, bits: int):
        """Write CONTROL (SOFT_RESET, CLEAR_COUNTERS, CLEAR_ERROR, NO_DISCARD bits)."""
        self.set(R.CONTROL, bits)

    def status(self) -> dict:
        """STATUS decoded (``busy``, ``error``, ``in_reset``, ``code``)."""
        return R.decode_status(self.reg(R.STATUS))

    def write_tables(self, ops):
        """Table writes ``(sel, addr, data)`` as :func:`lutzip.firmware.axi.regs.table_writes` orders them."""
        for off, value in R.table_writes(ops):
            self.set(off, value)

    def counters(self) -> dict:
        """The top's counters (raw register names, lower case)."""
        return {name.lower(): self.reg(off) for name, off in
                (("CYC_TOTAL", R.CYC_TOTAL), ("CYC_BUSY", R.CYC_BUSY), ("CYC_STARVED", R.CYC_STARVED),
                 ("CYC_BLOCKED", R.CYC_BLOCKED), ("WORDS_OUT", R.WORDS_OUT), ("STRIPES", R.STRIPES))}


@dataclass(frozen=True)
class PynqInfo(BoardInfo):
    """:class:`~lutzip.board.base.BoardInfo` and what the overlay adds.

    Attributes
    ----------
    regmap : str
        The top's register-map version (``major.minor``, docs/AXI.md).
    out_bytes : int
        S2MM data width in bytes.
    dma_max_bytes : int
        Longest DMA transfer (the length register).
    overlay : str
        The bitstream the overlay came from.
    simulator : str
        What simulates the logic on the simulated device (``""`` on a board).
    """

    regmap: str = ""
    out_bytes: int = 4
    dma_max_bytes: int = 0
    overlay: str = ""
    simulator: str = ""

    def link_text(self) -> str:
        return (f"AXI DMA simple mode, {8 * self.out_bytes}-bit S2MM, <= {self.dma_max_bytes} bytes per transfer"
                + (f" (simulated PYNQ device, {self.simulator})" if self.simulated else ""))


def _find(overlay, vlnv_prefix, what):
    names = [k for k, v in overlay.ip_dict.items() if str(v.get("type", "")).startswith(vlnv_prefix)]
    if not names:
        raise BoardError(f"the overlay has no {what} (IP {vlnv_prefix}); its IPs: {', '.join(overlay.ip_dict)}")
    return getattr(overlay, names[0])


class PynqBoard(BoardBase):
    """The decoder behind AXI DMA on a Zynq (or the simulated PYNQ device).

    Parameters
    ----------
    overlay : pynq.Overlay
        The loaded overlay with ``lutzip_axi`` and an AXI DMA (simple mode).
    timeout : float
        Seconds a DMA transfer may take before it fails with :class:`DmaError`.
    simulated : bool
        The device is the simulated one (kind ``"pynq-sim"``).
    device : object, optional
        The pynq device (closed with the board when simulated).
    """

    def __init__(self, overlay, timeout=5.0, simulated=False, device=None):
        super().__init__()
        self.overlay = overlay
        self.timeout = float(timeout)
        self.kind = "pynq-sim" if simulated else "pynq"
        self.device = device
        self.port = str(getattr(overlay, "bitfile_name", "overlay"))
        self.core = _find(overlay, R.VLNV, "lutzip_axi core")
        if not isinstance(self.core, LutzipAxi):
            raise BoardError(f"pynq bound {type(self.core).__name__} to {R.VLNV}, not the lutzip driver")
        self.dma = _find(overlay, D.DMA_VLNV, "AXI DMA")
        if self.dma.sendchannel is None or self.dma.recvchannel is None:
            raise BoardError("the AXI DMA needs both channels (MM2S and S2MM)")
        if getattr(self.dma, "_sg", False):
            raise BoardError("the AXI DMA is in scatter-gather mode; lutzip's design uses simple mode")
        self.max_bytes = int(self.dma.buffer_max_size)
        self._in = self._out = None
        self._tables = None
        self.transfers = 0
        self.recoveries = 0

    # --------------------------------------------------------------------------------------- interface
    def identify(self) -> PynqInfo:
        """Read ID, VERSION, PARAMS (L, W, LANES, OUT_BYTES, STATES, MIRROR), LUT3, CLK_HZ; raise :class:`BoardProtocolError` if it is no lutzip top."""
        ident = self.core.reg(R.ID)
        if ident != R.ID_VALUE:
            raise BoardProtocolError(f"the IP at {self.core.mmio.base_addr:#x} reads ID {ident:#010x}, "
                                     f"not lutzip_axi's {R.ID_VALUE:#010x}")
        ver = self.core.reg(R.VERSION)
        if ver >> 16 != R.VERSION_MAJOR:
            raise BoardProtocolError(f"lutzip_axi register map {ver >> 16}.{ver & 0xFFFF}, this host speaks "
                                     f"{R.VERSION_MAJOR}.x")
        p = self.core.reg(R.PARAMS)
        f = {k: R.field("PARAMS", k, p) for k in R.FIELDS["PARAMS"]}
        states = R.params_states(p)
        max_n = R.params_mirror(p)       # bit 22 and log2(MAX_N) in bits 27:24 (0: no row stripes)
        if f["W"] not in (8, 16) or not 1 <= f["L"] <= 12 or f["OUT_BYTES"] not in (4, 8) or states > 2 \
                or (states == 2 and f["L"] > 11) or max_n == 1 or max_n == 2 or max_n > 32768:
            raise BoardProtocolError(f"lutzip_axi reports an impossible core (PARAMS {p:#010x})")
        self.info = PynqInfo(self.kind, f["L"], f["W"], self.core.reg(R.LUT3), self.core.reg(R.CLK_HZ),
                             f["LANES"] or 1, states, int(max_n > 0), max_n, regmap=f"{ver >> 16}.{ver & 0xFFFF}", out_bytes=f["OUT_BYTES"],
                             dma_max_bytes=self.max_bytes, overlay=self.port,
                             simulator=getattr(self.device, "simulator", "") if self.kind == "pynq-sim" else "")
        return self.info

    def load_tables(self, tables):
        """Write a :class:`~lutzip.codec.tables.TableSet` through TBL_ADDR / TBL_DATA (the core must be idle)."""
        from lutzip.hdl.flows.model import table_ops
        info = self.info or self.identify()
        if len(tables.lut3) > info.lut3_depth:
            raise BoardError(f"table set has {len(tables.lut3)} LUT3 entries, the core holds {info.lut3_depth}")
        if tables.word_bits > info.W:
            raise BoardError(f"{tables.word_bits}-bit tables on a {info.W}-bit core")
        check_states(tables, info)
        # with MIRROR=1 (PARAMS bit 22) also config word 1, the table set's word width (docs/AXI.md)
        self.core.write_tables(table_ops(tables, info.L, states=info.states, mirror=info.mirror))
        self._tables = tables

    def read_counters(self) -> dict:
        """The top's counters under the host's names (since the driver last cleared them, i.e. the last run)."""
        return self._host_counters(self.core.counters(), self.core.reg(R.ERR_COUNT))

    @staticmethod
    def _host_counters(c, errors):
        # cycles: a transfer in flight; busy: neither starved of input nor blocked on output
        return {"cycles": c["cyc_total"], "busy": max(0, c["cyc_total"] - c["cyc_starved"] - c["cyc_blocked"]),
                "starved": c["cyc_starved"], "blocked": c["cyc_blocked"], "words": c["words_out"],
                "stripes": c["stripes"], "decode_errors": errors, "beats": c["cyc_busy"]}

    def link_report(self, result: StreamResult) -> dict:
        s = result.stats
        return {k: s[k] for k in ("transfers", "register_accesses_per_transfer", "table_register_accesses",
                                  "host_overhead_s_per_transfer") if k in s}

    def _close(self):
        self._free(self._in)
        self._free(self._out)
        self._in = self._out = None
        if self.device is not None and self.kind == "pynq-sim":
            self.device.close()

    # ------------------------------------------------------------------------------------------ stream
    def runs(self, stripes, W=None):
        """Split a tensor's stripes into runs of whole stripes that fit one DMA transfer each way.

        Returns
        -------
        list of (int, int)
            ``(first, stop)`` stripe index ranges.
        """
        W = W or (self.info or self.identify()).W
        ob = (self.info or self.identify()).out_bytes
        out, a, in_b, n_w = [], 0, 0, 0
        for i, s in enumerate(stripes):
            sb = 4 * (len(s) + 1)
            nw = _n_words(s)
            if sb > self.max_bytes or _cap(nw, W, ob) > self.max_bytes:
                raise BoardError(f"stripe {i} needs {max(sb, _cap(nw, W, ob))} bytes in one DMA transfer; the "
                                 f"DMA's length register allows {self.max_bytes} (c_sg_length_width too small)")
            if i > a and (in_b + sb > self.max_bytes or _cap(n_w + nw, W, ob) > self.max_bytes):
                out.append((a, i))
                a, in_b, n_w = i, 0, 0
            in_b += sb
            n_w += nw
        if len(stripes):
            out.append((a, len(stripes)))
        return out

    def _buffers(self, in_words, out_bytes):
        """Contiguous DMA buffers at least this large (kept between calls; a smaller one is freed first)."""
        if self._in is None or self._in.shape[0] < in_words:
            self._free(self._in)
            self._in = pynq.allocate((max(in_words, 1024),), np.uint32, target=self._target())
        if self._out is None or self._out.nbytes < out_bytes:
            self._free(self._out)
            self._out = pynq.allocate((max(out_bytes, 4096),), np.uint8, target=self._target())

    @staticmethod
    def _free(buf):
        if buf is not None:
            try:
                buf.freebuffer()
            except Exception:        # a buffer pynq already released
                pass

    def _target(self):
        return self.device if self.device is not None else getattr(self.overlay, "device", None)

    def stream(self, tensors, words=False, progress=None) -> StreamResult:
        """Decode ``[(name, TableSet, [uint32 stripe arrays])]``: one DMA transfer per tensor each way.

        Parameters
        ----------
        tensors : list of (str, TableSet, list of numpy.ndarray)
            Each tensor's table set and stripes (header word first).
        words : bool
            Put every decoded word into the results (otherwise only a CRC32 per stripe).
        progress : callable(int), optional
            Called with the number of stripes finished.

        Returns
        -------
        StreamResult
            One :class:`StripeResult` per stripe; the counters summed over the transfers; ``stats`` with the
            transfers, register accesses and host time per transfer.
        """
        from lutzip.firmware.axi.buffer import descriptor
        info = self.info or self.identify()
        W, ob = info.W, info.out_bytes
        plan = []
        for name, tables, stripes in tensors:
            for a, b in self.runs(stripes, W):
                plan.append((name, tables, stripes, a, b))
        if not plan:
            return StreamResult([], {k: 0 for k in ("cycles", "busy", "starved", "blocked", "words", "stripes",
                                                     "decode_errors", "beats")}, 0.0, 0, 0, 0, 1, {"transfers": 0})
        need_in = max(sum(len(s) + 1 for s in st[a:b]) for _n, _t, st, a, b in plan)
        need_out = max(_cap(sum(_n_words(s) for s in st[a:b]), W, ob) for _n, _t, st, a, b in plan)
        self._buffers(need_in, need_out)
        results, total = [], {}
        acc0 = self._accesses()
        sim0 = getattr(self.device, "sim_seconds", 0.0)
        t0 = time.perf_counter()
        tbl_acc = 0
        tbl_s = 0.0
        wire = pay = 0
        for name, tables, stripes, a, b in plan:
            if tables is not self._tables:
                a0, s0, tt = self._accesses(), getattr(self.device, "sim_seconds", 0.0), time.perf_counter()
                self.load_tables(tables)
                tbl_acc += self._accesses() - a0
                tbl_s += (time.perf_counter() - tt) - (getattr(self.device, "sim_seconds", 0.0) - s0)
            run = stripes[a:b]
            ns = [_n_words(s) for s in run]
            parts = []
            for s, n in zip(run, ns):
                parts.append(np.array([descriptor(n, len(s) - 1)], np.uint32))
                parts.append(np.asarray(s, np.uint32))
            buf = np.concatenate(parts)
            self._in[:len(buf)] = buf
            out, st, cn, crc = self._transfer(len(buf), sum(ns) * (W // 8), _cap(sum(ns), W, ob))
            wire += 4 * len(buf)
            pay += 4 * sum(len(s) for s in run)
            for k, v in cn.items():
                total[k] = total.get(k, 0) + v
            data = np.frombuffer(out, "<u2" if W == 16 else np.uint8)
            if crc != zlib.crc32(out) & 0xFFFFFFFF:
                raise DmaError(f"tensor {name!r}: the top's OUT_CRC {crc:#010x} differs from the CRC32 of the "
                               f"S2MM buffer ({zlib.crc32(out) & 0xFFFFFFFF:#010x}): the DMA path corrupted data")
            p = 0
            for k, (s, n) in enumerate(zip(run, ns)):
                w = data[p:p + n]
                p += n
                err = st["code"] if st["error"] and st["stripe"] == k else 0
                results.append(StripeResult(name, a + k, len(w), err, words_crc(w, W), w.copy() if words else None))
            if progress:
                progress(len(run))
        elapsed = time.perf_counter() - t0
        sim_s = getattr(self.device, "sim_seconds", 0.0) - sim0
        nacc = self._accesses() - acc0 - tbl_acc
        n_tr = len(plan)
        stats = {"transfers": n_tr, "register_accesses": nacc, "table_register_accesses": tbl_acc,
                 "recoveries": self.recoveries}
        if self.device is not None and hasattr(self.device, "register_accesses"):
            # simulated device: accesses are counted, and the simulator's own time is left out of the host's
            stats["register_accesses_per_transfer"] = nacc / n_tr
            stats["host_overhead_s_per_transfer"] = max(0.0, elapsed - sim_s - tbl_s) / n_tr
            stats["simulator_s"] = sim_s
        return StreamResult(results, total, elapsed, wire, pay, 0, 1, stats)

    def _accesses(self):
        f = getattr(self.device, "register_accesses", None)
        return f() if f else 0

    def _transfer(self, n_in, nbytes_out, capacity):
        """One transfer each way: ``n_in`` words out of the MM2S buffer, ``nbytes_out`` bytes expected back
        (the S2MM buffer is ``capacity`` bytes, whole beats; the last beat's TKEEP drops the bytes beyond).
        Returns (output bytes, error status, host counters, OUT_CRC)."""
        core, dma = self.core, self.dma
        core.control(R.CTRL_CLEAR_COUNTERS | R.CTRL_CLEAR_ERROR)
        dst = self._out[:capacity]
        dma.recvchannel.transfer(dst)
        dma.sendchannel.transfer(self._in[:n_in])
        self._wait()
        got = int(dma.mmio.read(_S2MM_LENGTH))
        dst.invalidate()
        dst = dst[:nbytes_out]
        if got != nbytes_out:
            self._recover()
            raise DmaError(f"S2MM received {got} bytes, the top must send {nbytes_out}")
        s = self.core.reg(R.STATUS)
        st = R.decode_status(s)
        st["stripe"] = core.reg(R.ERR_STRIPE) if st["error"] else None
        errors = core.reg(R.ERR_COUNT) if st["error"] else 0
        cn = self._host_counters(core.counters(), errors)
        crc = core.reg(R.OUT_CRC)
        self.transfers += 1
        return bytes(dst), st, cn, crc

    def _wait(self):
        """Poll both channels' DMASR until both are idle, raising on any error bit.

        Bounded by ``timeout``; sleeps between polls grow from 20 us to 2 ms. S2MM is read first (it finishes
        last); a successful transfer costs one read of each status register.
        """
        deadline = time.monotonic() + self.timeout
        nap = 20e-6
        pending = ["S2MM", "MM2S"]
        while True:
            for ch in list(pending):
                sr = int(self.dma.mmio.read(_SR[ch]))
                bad = [txt for bit, txt in D.SR_ERROR_TEXT.items() if sr & bit]
                if bad:
                    self._recover()
                    raise DmaError(f"AXI DMA {ch} error, DMASR {sr:#06x}: {'; '.join(bad)} (DMA and core reset)")
                if sr & D.SR_IDLE:
                    pending.remove(ch)
                elif ch == "S2MM" and "MM2S" in pending:
                    continue          # still look at MM2S's error bits in this round
                else:
                    break
            if not pending:
                return
            if time.monotonic() > deadline:
                status = self.core.reg(R.STATUS)
                self._recover()
                raise DmaError(f"AXI DMA {' and '.join(pending)} transfer not finished after {self.timeout:g} s "
                               f"(DMASR {sr:#06x}, core STATUS {status:#06x}); DMA and core reset")
            time.sleep(nap)
            nap = min(2 * nap, 2e-3)

    def _recover(self):
        """Return everything to idle: the core's soft reset (without discarding input) and a DMA reset."""
        self.recoveries += 1
        self.core.control(R.CTRL_SOFT_RESET | R.CTRL_NO_DISCARD)
        self.dma.mmio.write(D.MM2S + D.DMACR, D.CR_RESET)      # resets both channels
        deadline = time.monotonic() + self.timeout
        while int(self.dma.mmio.read(D.MM2S + D.DMACR)) & D.CR_RESET:
            if time.monotonic() > deadline:
                raise DmaError("AXI DMA reset did not complete")
            time.sleep(1e-4)
        self.dma.sendchannel.start()
        self.dma.recvchannel.start()
        while self.core.reg(R.STATUS) & R.ST_IN_RESET:       # a few core cycles (SOFT_RESET_CYCLES)
            if time.monotonic() > deadline:
                raise DmaError("lutzip_axi stays in reset after SOFT_RESET")
            time.sleep(1e-5)

    def soft_reset(self):
        """CONTROL SOFT_RESET: the top back to idle (tables kept); DMA channels reset too."""
        self._recover()


def _n_words(stripe) -> int:
    """Decoded words of a stripe, from its header's count field (the tensor index agrees for a valid file); a row
    stripe (format version 6, marker 0x4C5B) outputs ``R x N`` words, from its row descriptor (word 1)."""
    if not len(stripe):
        return 1
    from lutzip.codec.rows import ROW_MARKER
    h = int(stripe[0])
    if h & 0xFFFF0000 == ROW_MARKER and len(stripe) > 1:
        d = int(stripe[1])
        return (((d >> 16) & 0xF) + 1) * ((d & 0xFFFF) + 1)
    return (h & 0xFFFF) + 1


def _cap(n_words, W, out_bytes):
    nb = n_words * (W // 8)
    return -(-nb // out_bytes) * out_bytes


# ------------------------------------------------------------------------------------------ opening
def load_overlay(bitfile, download=True, device=None):
    """``pynq.Overlay(bitfile)`` with the known pynq pitfalls handled.

    pynq 4.0.0 with pynqmetadata 0.2.0 reads the UltraScale+ clock parameter from a Zynq-7000 ``.hwh``, so the
    frequency is None and ``Overlay(download=True)`` fails with a TypeError in ``Clocks.set_pl_clk``. Then the
    bitstream is downloaded without the clock step and FCLK0 is set from the ``.hwh``'s
    ``PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ``.

    Parameters
    ----------
    bitfile : str or Path
        The ``.bit`` file; its ``.hwh`` must be beside it (same basename).
    download : bool
        Program the PL (False: the bitstream is already loaded).
    device : pynq.Device, optional
        The device (default: pynq's active device).

    Returns
    -------
    pynq.Overlay

    Raises
    ------
    BoardError
        No ``.hwh``, or pynq cannot load the overlay (e.g. "No Devices Found" off a board).
    """
    from pathlib import Path
    if not Path(bitfile).with_suffix(".hwh").is_file():
        raise BoardError(f"no {Path(bitfile).with_suffix('.hwh').name} beside {bitfile} (pynq needs both)")
    kw = {} if device is None else {"device": device}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="No devices found")      # pynq's XRT hint; we say it below
        return _load_overlay(bitfile, download, kw)


def _load_overlay(bitfile, download, kw):
    from pathlib import Path
    try:
        try:
            return pynq.Overlay(str(bitfile), download=download, **kw)
        except TypeError as e:
            if "set_pl_clk" not in _tb_names(e) or not download:
                raise
        ov = pynq.Overlay(str(bitfile), download=False, **kw)
        pynq.Bitstream.download(ov, ov.parser)
    except RuntimeError as e:          # "No Devices Found" off a board, a bitstream the PL rejects, ...
        raise BoardError(f"pynq cannot load {bitfile}: {e} (off a board use --sim)") from None
    mhz = _hwh_fclk0(Path(bitfile).with_suffix(".hwh"))
    from pynq.ps import Clocks
    Clocks.fclk0_mhz = mhz
    return ov


def _tb_names(e):
    names, tb = [], e.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return names


def _hwh_fclk0(hwh) -> float:
    import re
    m = re.search(r'NAME="PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ" VALUE="([0-9.]+)"', hwh.read_text(encoding="utf-8"))
    return float(m.group(1)) if m else 100.0


def open_sim_device(length_width=None, backend="verilator", **params):
    """The simulated PYNQ device with its overlay files: ``(SimDevice, bit path, temporary directory)``.

    Parameters
    ----------
    length_width : int, optional
        The DMA's ``c_sg_length_width`` (26 by default).
    backend : {"verilator", "myhdl"} or object
        The AXI top simulator: the converted top in Verilator (``lutzip.firmware.axi.sim.AxiSim``), the
        MyHDL top (slow; small tests), or an object with the AxiSim API.
    **params
        ``lutzip_axi`` parameters (L, W, LUT3_DEPTH, OUT_BYTES, CLK_HZ, ...).
    """
    from lutzip.board.pynq_sim import hwh as H
    from lutzip.board.pynq_sim.device import SimDevice, write_overlay_files
    if backend == "verilator":
        try:
            from lutzip.firmware.axi.sim import AxiSim
        except ImportError as e:
            raise BoardError(f"the Verilator simulator of lutzip_axi is not available: {e}") from None
        sim = AxiSim(**params)
    elif backend == "myhdl":
        from lutzip.firmware.axi.mysim import MyhdlAxi
        sim = MyhdlAxi(**params)
    elif hasattr(backend, "transfer"):
        sim = backend
    else:
        raise BoardError(f"unknown simulator backend {backend!r} (verilator, myhdl)")
    lw = H.dma_length_width() if length_width is None else int(length_width)
    dev = SimDevice(sim, length_width=lw)
    dev.simulator = backend if isinstance(backend, str) else type(backend).__name__
    d = tempfile.mkdtemp(prefix="lutzip-pynq-sim-")
    sim_params = dict(getattr(sim, "params", {}) or params)
    return dev, write_overlay_files(d, sim_params, lw), d


class _RemoveDir:
    def __init__(self, d):
        self.d = d

    def stop(self):
        shutil.rmtree(self.d, ignore_errors=True)


def open_board(*, sim=False, timeout=5.0, overlay=None, length_width=None, backend="verilator", **options):
    """Open the PYNQ board (the chooser's entry, :func:`lutzip.board.open_board` with ``transport="pynq"``).

    Parameters
    ----------
    sim : bool
        Use the simulated PYNQ device (x86, CI) instead of the board's PL.
    timeout : float
        Seconds a DMA transfer may take.
    overlay : str, optional
        The bitstream (``lutzip.bit`` with ``lutzip.hwh`` beside it); on a board the default is
        ``lutzip.bit`` in the current directory. Ignored with ``sim`` (the simulated overlay is generated).
    length_width, backend, **options
        Simulation only: :func:`open_sim_device` (DMA length register bits, simulator, core parameters).

    Returns
    -------
    PynqBoard
    """
    if not sim:
        if options:
            raise BoardError(f"options {', '.join(sorted(options))} apply to the simulated PYNQ device only")
        return PynqBoard(load_overlay(overlay or "lutzip.bit"), timeout=timeout)
    options.setdefault("STATES", 2)     # as the Zynq builds (firmware.axi.build.ZYNQ_BOARDS): format version 5 too
    options.setdefault("MIRROR", 1)     # and format version 6 (row streams)
    dev, bit, d = open_sim_device(length_width, backend, **options)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ov = pynq.Overlay(str(bit), download=False, device=dev)
        board = PynqBoard(ov, timeout=timeout, simulated=True, device=dev)
    except BaseException:
        dev.close()
        shutil.rmtree(d, ignore_errors=True)
        raise
    board.attach(_RemoveDir(d))
    return board
