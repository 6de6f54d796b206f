"""Jupyter notebooks for PYNQ boards (``pynq get-notebooks lutzip`` delivers this folder via the
``pynq.notebooks`` entry point): ``lutzip_pynq.ipynb`` streams a compressed model through the AXI DMA path."""
