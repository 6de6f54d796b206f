"""The simulated PYNQ device: the real pynq package on x86, with the ``lutzip_axi`` design simulated behind it.

* :mod:`.hwh` -- the simulated overlay's ``lutzip.hwh`` (from :mod:`lutzip.firmware.axi.regs`) and ``lutzip.bit``;
* :mod:`.dma` -- a model of AXI DMA 7.1 in simple mode (PG021 registers) in front of the AXI top simulator;
* :mod:`.device` -- ``SimDevice``, a ``pynq.Device`` (imports pynq; ``pip install 'lutzip[pynq]'``).
"""
