"""Row streams (format version 6, mirrored rows) and the board layer: on a board whose core is built with MIRROR=0
(docs/CORE.md section 7; IDENT without the MIRROR bit) the verify layer refuses such a file in one line before
anything reaches it, and the same tensor compressed with ``rows=False`` (``--no-rows``) is accepted (boards with
MIRROR=1: tests/test_board_mirror.py)."""
import numpy as np
import pytest

import lutzip
from lutzip.board import verify as vf
from lutzip.codec import container as ct
from lutzip.errors import UnsupportedError

from board_doubles import MemBoard
from row_mirror_cases import exact_basis_int8


@pytest.mark.parametrize("rows", [True, False])
def test_row_stream_refused_before_the_board_plain_file_accepted(rows):
    weights = {"basis": exact_basis_int8(), "other": np.arange(-64, 64, dtype=np.int8).repeat(20)}
    c = ct.from_bytes(lutzip.compress(weights, rows=rows))
    has_rows = any(s.rows for s in c.streams)
    assert has_rows == rows                     # the encoder takes the row stream only where asked (and smaller)
    with MemBoard(2) as b:     # two tables and MIRROR=0, so only the row check can refuse
        if rows:
            with pytest.raises(UnsupportedError) as e:
                vf.stream_container(b, c)
            msg = str(e.value)
            assert "\n" not in msg and "'basis'" in msg and "--no-rows" in msg
            assert not b.loaded                 # nothing was sent
        else:
            with pytest.raises(RuntimeError, match="streamed"):
                vf.stream_container(b, c)
            assert b.loaded
