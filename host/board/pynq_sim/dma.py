"""A model of AXI DMA 7.1 in simple (direct register) mode, PG021's register map, in front of an AXI top simulator.

Both channels share one register file (MM2S at 0x00, S2MM at 0x30). Writing a channel's LENGTH starts it;
once both channels are started the MM2S words are read from memory and streamed through the simulator
(``sim.transfer``), the output is written to the S2MM buffer and the received byte count to S2MM_LENGTH.

Status bits (DMASR): bit0 Halted, bit1 Idle, bit4 DMAIntErr, bit5 DMASlvErr, bit6 DMADecErr, bit12 IOC_Irq,
bit14 Err_Irq (write 1 to clear the two interrupt bits). An error halts the channel (RS cleared) until a reset
(DMACR bit2, both channels) and a new RS. Errors modelled as PG021 describes them: a zero length or an S2MM
buffer shorter than the packet (DMAIntErr), an address outside the allocated memory (DMADecErr), and injected
slave errors (``inject_error``). An MM2S transfer the top does not accept, or an S2MM transfer that never sees
TLAST, stays busy: the host's wait has to time out.
"""
from __future__ import annotations

import numpy as np

#: The IP the model stands for, and its PG021 register map (simple mode): the one definition for the model,
#: the .hwh generator and the driver.
DMA_VLNV = "xilinx.com:ip:axi_dma:7.1"
DMACR, DMASR, ADDR, ADDR_MSB, LENGTH = 0x00, 0x04, 0x18, 0x1C, 0x28      # offsets within a channel
MM2S, S2MM = 0x00, 0x30                                                  # channel bases
CR_RS, CR_RESET = 1 << 0, 1 << 2
SR_HALTED, SR_IDLE, SR_INT_ERR, SR_SLV_ERR, SR_DEC_ERR = 1 << 0, 1 << 1, 1 << 4, 1 << 5, 1 << 6
SR_IOC_IRQ, SR_ERR_IRQ = 1 << 12, 1 << 14
SR_ERRORS = SR_INT_ERR | SR_SLV_ERR | SR_DEC_ERR
#: What each DMASR error bit means (PG021).
SR_ERROR_TEXT = {SR_INT_ERR: "DMAIntErr (internal error: zero length, or a packet longer than the S2MM buffer)",
                 SR_SLV_ERR: "DMASlvErr (the memory answered an error)",
                 SR_DEC_ERR: "DMADecErr (invalid address)"}


class _Channel:
    def __init__(self, base):
        self.base = base
        self.reset()

    def reset(self):
        self.cr = 0
        self.sr = SR_HALTED
        self.addr = 0
        self.length = 0
        self.armed = False

    def error(self, bits):
        self.sr = (self.sr | bits | SR_ERR_IRQ | SR_HALTED) & ~SR_IDLE
        self.cr &= ~CR_RS
        self.armed = False

    def done(self):
        self.sr = (self.sr | SR_IDLE | SR_IOC_IRQ) & ~SR_HALTED
        self.armed = False


class AxiDmaModel:
    """PG021 simple-mode register model driving ``sim`` (an ``AxiSim``-like object) with memory ``mem``.

    Parameters
    ----------
    sim : object
        ``transfer(in_words, out_bytes_capacity, ...) -> (bytes, tlast_seen, cycles)``.
    mem : object
        ``read(addr, nbytes) -> bytes`` and ``write(addr, data)``; both raise ``KeyError`` for an address
        range outside the allocated buffers.
    length_width : int
        Bits of the LENGTH registers (``c_sg_length_width``).
    """

    def __init__(self, sim, mem, length_width=26):
        self.sim = sim
        self.mem = mem
        self.length_mask = (1 << length_width) - 1
        self.mm2s = _Channel(MM2S)
        self.s2mm = _Channel(S2MM)
        self.pending_words = None       # MM2S words not yet accepted (a stalled or paused transfer)
        self.inject = {}                # one-shot faults: "mm2s"/"s2mm" -> SR bits; "stall_after_words" -> k
        self.transfers = 0
        self.cycles = 0
        self.s2mm_written = 0           # bytes of the current S2MM transfer written so far

    def _ch(self, offset):
        return (self.mm2s, offset) if offset < S2MM else (self.s2mm, offset - S2MM)

    def read(self, offset: int) -> int:
        ch, off = self._ch(offset)
        if off == DMACR:
            return ch.cr
        if off == DMASR:
            return ch.sr
        if off == ADDR:
            return ch.addr & 0xFFFFFFFF
        if off == ADDR_MSB:
            return ch.addr >> 32
        if off == LENGTH:
            return ch.length
        return 0

    def write(self, offset: int, value: int):
        ch, off = self._ch(offset)
        value &= 0xFFFFFFFF
        if off == DMACR:
            if value & CR_RESET:
                self.mm2s.reset()
                self.s2mm.reset()
                self.pending_words = None
                return
            ch.cr = value & ~CR_RESET
            if value & CR_RS:
                ch.sr &= ~SR_HALTED
            elif not ch.armed:
                ch.sr |= SR_HALTED
        elif off == DMASR:
            ch.sr &= ~(value & (SR_IOC_IRQ | SR_ERR_IRQ))
        elif off == ADDR:
            ch.addr = (ch.addr & ~0xFFFFFFFF) | value
        elif off == ADDR_MSB:
            ch.addr = (ch.addr & 0xFFFFFFFF) | (value << 32)
        elif off == LENGTH:
            self._start(ch, value & self.length_mask)

    def _start(self, ch, nbytes):
        if not ch.cr & CR_RS or ch.sr & SR_HALTED:
            return                                  # a halted channel ignores LENGTH (PG021)
        ch.length = nbytes
        ch.sr &= ~SR_IDLE
        if nbytes == 0:
            ch.error(SR_INT_ERR)
            return
        inj = self.inject.pop("mm2s" if ch is self.mm2s else "s2mm", 0)
        if inj:
            ch.error(inj)
            return
        ch.armed = True
        if ch is self.mm2s:
            try:
                data = self.mem.read(ch.addr, nbytes - nbytes % 4)
            except KeyError:
                ch.error(SR_DEC_ERR)
                return
            self.pending_words = np.frombuffer(data, "<u4").copy()
        if self.mm2s.armed and self.s2mm.armed:
            self._run()

    def _run(self, resume=False):
        words = self.pending_words
        if not resume:
            self.s2mm_written = 0
        cap = self.s2mm.length - self.s2mm_written
        stall = self.inject.pop("stall_after_words", None)
        kw = {} if stall is None else {"stop_after_words": int(stall)}
        out, last, cycles = self.sim.transfer(words, cap, **kw)
        self.transfers += 0 if resume else 1
        self.cycles += cycles
        sent = getattr(self.sim, "words_sent", len(words) if stall is None else int(stall))
        if self.s2mm.armed and out:
            try:
                self.mem.write(self.s2mm.addr + self.s2mm_written, out)
            except KeyError:
                self.s2mm.error(SR_DEC_ERR)
                return
            self.s2mm_written += len(out)
            if last:
                self.s2mm.length = self.s2mm_written
                self.s2mm.done()
            elif len(out) >= cap:
                self.s2mm.error(SR_INT_ERR)         # the packet is longer than the S2MM buffer
        if sent >= len(words):
            self.pending_words = None
            self.mm2s.done()
        else:
            self.pending_words = words[sent:]       # stalled: MM2S stays busy until resumed or reset

    def resume(self):
        """Feed the rest of a stalled MM2S transfer (``inject["stall_after_words"]``), e.g. after the host
        soft-reset the top in discard mode: the MM2S then completes, the S2MM waits for a TLAST."""
        if self.pending_words is not None and self.mm2s.armed:
            self._run(resume=True)
