"""The AXI top for Zynq / PYNQ DMA (docs/AXI.md): ``lutzip_axi`` around the portable decoder core."""
