"""The protocol engine behind a board's byte link (docs/PROTOCOL.md).

Port convention of every block in ``lutzip.firmware`` (as in the decoder core, docs/CORE.md):

* a stream is AXI-Stream-like: ``tdata``/``tvalid``/``tready`` (and ``tlast``/``tuser`` where used); a word
  moves in a cycle where ``tvalid and tready``;
* a block's input stream is ``s_axis_*``, its output stream ``m_axis_*``; a block with more than one stream of
  the same direction names each by role: ``m_axis_data_*`` / ``m_axis_desc_*`` (result path),
  ``s_axis_data_*`` / ``s_axis_desc_*`` (response framer);
* monitor inputs that only watch another block's stream carry that stream's name with the block in front
  (``core_s_axis_tvalid``: perf_counters watching the core's input);
* write ports without back pressure are ``<x>_we`` / ``<x>_wdata`` (the core's table port, the command ring);
* the tops keep flat ports: ``proto_engine`` (byte streams ``s_axis_*`` in, ``m_axis_*`` out), ``uart_top`` and
  the board tops (pins).
"""
