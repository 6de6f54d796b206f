"""Board doubles shared by the board-layer tests (tests/test_board_states.py, tests/test_board_rows.py,
tests/test_board_mirror.py)."""
from lutzip.board import base


class MemBoard(base.BoardBase):
    """A board double: IDENT of ``states`` (and ``max_n``: a core with ``MIRROR=1`` and that row buffer, 0: none);
    records what reaches it."""
    kind = "memory-sim"

    def __init__(self, states, max_n=0):
        super().__init__()
        self.states = states
        self.max_n = max_n
        self.loaded = []

    def identify(self):
        self.info = base.BoardInfo(self.kind, 8, 16, 4096, 100_000_000, states=self.states,
                                   mirror=int(self.max_n > 0), max_n=self.max_n)
        return self.info

    def load_tables(self, tables):
        base.check_states(tables, self.info or self.identify())
        self.loaded.append(tables)

    def stream(self, tensors, words=False, progress=None):
        for _name, tables, _st in tensors:
            self.load_tables(tables)
        raise RuntimeError("streamed")

    def read_counters(self):
        return {k: 0 for k in base.COUNTERS}

    def _close(self):
        pass
