"""The board seam (lutzip.board.base), the chooser (lutzip.board.open_board) and the verify-and-report layer
(lutzip.board.verify), against an in-memory board: no simulator needed."""
import json
import subprocess
import sys

import numpy as np
import pytest

from lutzip import cli
from lutzip.board import base, open_board
from lutzip.board import verify as vf
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.link.protocol import words_crc


class MemoryBoard(base.BoardBase):
    """A perfect board made from the software decoder; ``tamper`` hooks change what it reports."""

    kind = "memory-sim"

    def __init__(self, c, flip=None, err=None, drop_last=False):
        super().__init__()
        job = vf._job_names(c, c.streams)           # one job per stream: a tensor's name or a group's
        self.truth = {job[s.index]: vf.stream_words(c, s) for s in c.streams}
        self.S = {job[s.index]: s.stripe_len for s in c.streams}
        self.flip, self.err, self.drop_last = flip, err, drop_last
        self.loaded, self.closed, self.ticks = [], 0, 0

    def identify(self):
        self.info = base.BoardInfo(self.kind, 8, 16, 4096, 100_000_000)
        return self.info

    def load_tables(self, tables):
        self.loaded.append(tables)

    def stream(self, tensors, words=False, progress=None):
        out = []
        n = 0
        for name, tables, stripes in tensors:
            self.load_tables(tables)
            S = self.S[name]
            for i, _ in enumerate(stripes):
                w = self.truth[name][i * S:(i + 1) * S].copy()
                if self.flip and self.flip[0] == name and i * S <= self.flip[1] < (i + 1) * S:
                    w[self.flip[1] - i * S] ^= 1
                e = self.err[1] if self.err and self.err[0] == (name, i) else 0
                out.append(base.StripeResult(name, i, len(w), e, words_crc(w, 16), w if words else None))
                n += len(w)
                if progress:
                    progress(1)
        if self.drop_last:
            out.pop()
        cn = {"cycles": 2 * n, "busy": n, "starved": 0, "blocked": 0, "words": n, "stripes": len(out),
              "decode_errors": 0}
        return base.StreamResult(out, cn, 0.5, 10, 8)

    def read_counters(self):
        return {k: 0 for k in base.COUNTERS}

    def _close(self):
        self.closed += 1


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(7)
    a = np.rint(rng.laplace(0, 20, 9000)).astype(np.int16)
    b = np.rint(rng.laplace(0, 3, 3000)).clip(-128, 127).astype(np.int8)
    return ct.from_bytes(ct.to_bytes(codec.compress({"a": a, "b": b}, stripe_len=1024)))


@pytest.mark.parametrize("mode", ["crc", "full"])
def test_verify_passes_a_correct_board(model, mode):
    b = MemoryBoard(model)
    ticks = []
    r = vf.stream_container(b, model, mode, progress=ticks.append)
    assert r["ok"] and [t["status"] for t in r["tensors"]] == ["pass", "pass"]
    assert r["weights"] == 12000 and r["counters"]["words"] == 12000 and sum(ticks) == 9 + 3
    assert r["weights_per_cycle"] == 0.5 and r["weights_per_busy_cycle"] == 1.0
    assert r["weights_per_s_board"] == 50e6 and r["weights_per_s_wall"] == 24000
    assert r["kind"] == "memory-sim" and r["simulated"] and r["board"]["W"] == 16
    json.dumps(r)                         # the report is JSON as it is
    text = vf.format_report(r)
    assert "RESULT: PASS" in text and "1.000 weights per busy cycle" in text and "SIMULATION" in text


def test_full_mode_names_the_first_differing_word(model):
    r = vf.stream_container(MemoryBoard(model, flip=("b", 2100)), model, "full")
    assert not r["ok"]
    assert [t["status"] for t in r["tensors"]] == ["pass", "fail"]
    mm = r["first_mismatch"]
    assert mm["tensor"] == "b" and mm["index"] == 2100 and mm["got"] == mm["expected"] ^ 1
    assert "word 2100" in r["tensors"][1]["detail"]
    assert "RESULT: FAIL" in vf.format_report(r)


def test_crc_mode_catches_a_wrong_word(model):
    r = vf.stream_container(MemoryBoard(model, flip=("a", 5000)), model, "crc")
    assert not r["ok"] and r["first_mismatch"] == {"tensor": "a", "stripe": 4,
                                                   "problem": r["tensors"][0]["detail"]}
    assert "CRC32" in r["tensors"][0]["detail"]


def test_decode_error_and_missing_stripe_fail(model):
    r = vf.stream_container(MemoryBoard(model, err=(("a", 3), 4)), model, "crc")
    assert not r["ok"] and "decode error 4" in r["tensors"][0]["detail"]
    r = vf.stream_container(MemoryBoard(model, drop_last=True), model, "crc")
    assert r["tensors"][1]["status"] == "fail" and "2 stripe results for 3 stripes" in r["tensors"][1]["detail"]


def test_names_select_tensors_and_bad_mode_is_an_error(model):
    r = vf.stream_container(MemoryBoard(model), model, "crc", names={"b"})
    assert [t["name"] for t in r["tensors"]] == ["b"] and r["weights"] == 3000
    with pytest.raises(vf.LutzError, match="verify mode"):
        vf.stream_container(MemoryBoard(model), model, "all")


def test_control_characters_in_names_are_escaped():
    c = codec.compress({"x\x1b[2J": np.arange(100, dtype=np.int16)})
    r = vf.stream_container(MemoryBoard(c), c, "crc")
    assert "\x1b" not in vf.format_report(r) and "\\x1b[2J" in vf.format_report(r)


def test_close_stops_attached_even_if_the_transport_fails(model):
    class Stopper:
        stopped = 0

        def stop(self):
            Stopper.stopped += 1

    class Broken(MemoryBoard):
        def _close(self):
            raise OSError("port vanished")

    b = Broken(model)
    b.attach(Stopper())
    with pytest.raises(OSError):
        b.close()
    assert Stopper.stopped == 1
    with MemoryBoard(model) as m:
        m.attach(Stopper())
    assert m.closed == 1 and Stopper.stopped == 2


def test_base_is_abstract_and_imports_no_backend():
    with pytest.raises(TypeError):
        base.BoardBase()
    code = ("import sys, lutzip.board.base, lutzip.board.verify; "
            "bad = [m for m in sys.modules if m in ('lutzip.board.uart', 'lutzip.board.pynq', 'serial')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_chooser_errors(monkeypatch, tmp_path, capsys):
    with pytest.raises(base.BoardError, match="--port"):
        open_board()
    with pytest.raises(base.BoardError, match="unknown board transport 'usb'"):
        open_board(transport="usb")
    monkeypatch.setitem(__import__("lutzip.board").board.TRANSPORTS, "pynq", "lutzip.board._no_such_driver")
    with pytest.raises(base.BoardError, match="the PYNQ board driver is not installed/available: "):
        open_board(transport="pynq")
    p = tmp_path / "m.lutz"
    ct.write(p, codec.compress({"w": np.arange(50, dtype=np.int16)}))
    assert cli.main(["stream", str(p), "--pynq"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the PYNQ board driver is not installed/available" in err
    assert cli.main(["stream", str(p), "--sim", "--port", "/dev/null"]) == 2
    assert "not both" in capsys.readouterr().err


def test_old_driver_import_path_still_works():
    from lutzip.board.driver import Board, LinkError
    from lutzip.board.uart import UartBoard
    assert Board is UartBoard and LinkError is base.LinkError and issubclass(LinkError, base.BoardError)


# ------------------------------------------------------------------ version 3: group streams (issue 15)
@pytest.fixture(scope="module")
def grouped():
    """A big tensor and 40 small ones of two word widths: two group streams spanning several 256-word stripes."""
    rng = np.random.default_rng(9)
    arrays = {"big": np.rint(rng.laplace(0, 20, 3000)).astype(np.int16)}
    for i in range(40):
        dt = np.int8 if i % 2 else np.int16
        arrays[f"layer{i}.bias"] = np.rint(rng.laplace(0, 5, 1 + 13 * i % 97)).clip(-128, 127).astype(dt)
    c = ct.from_bytes(ct.to_bytes(codec.compress(arrays, stripe_len=256)))
    assert sum(s.grouped for s in c.streams) == 2 and len(c.streams) == 3
    return c


@pytest.mark.parametrize("mode", ["crc", "full"])
def test_group_streams_are_one_job_each_and_every_tensor_is_reported(grouped, mode):
    b = MemoryBoard(grouped)
    jobs = []
    real = b.stream
    b.stream = lambda tensors, **kw: (jobs.extend(j[0] for j in tensors), real(tensors, **kw))[1]
    r = vf.stream_container(b, grouped, mode)
    assert r["ok"] and [t["name"] for t in r["tensors"]] == [t.name for t in grouped.tensors]
    assert len(jobs) == 3 and jobs[0] == "big" and all(j.startswith("<group") for j in jobs[1:])
    assert sum(t["grouped"] for t in r["tensors"]) == 40 and r["weights"] == sum(t.numel for t in grouped.tensors)
    assert "group streams holding 40 small tensors" in vf.format_report(r)


def test_group_stream_full_mode_blames_only_the_tensor_with_the_wrong_word(grouped):
    s = grouped.streams[1]
    job = vf._job_names(grouped, grouped.streams)[s.index]
    victim = grouped.tensors[s.members[5]]
    r = vf.stream_container(MemoryBoard(grouped, flip=(job, victim.word_offset + 1)), grouped, "full")
    bad = [t["name"] for t in r["tensors"] if t["status"] == "fail"]
    assert bad == [victim.name]
    assert r["first_mismatch"]["tensor"] == victim.name and r["first_mismatch"]["index"] == 1
    # crc mode cannot split a stripe's CRC: every tensor with words in that stripe fails, the others pass
    r = vf.stream_container(MemoryBoard(grouped, flip=(job, victim.word_offset + 1)), grouped, "crc")
    stripe = (victim.word_offset + 1) // int(s.stripe_len)
    for t, rep in zip(grouped.tensors, r["tensors"]):
        hit = t.grouped and t.stream == s.index and t.stripe_range()[0] <= stripe < t.stripe_range()[1]
        assert (rep["status"] == "fail") == hit, t.name
    assert victim.name in [t["name"] for t in r["tensors"] if t["status"] == "fail"]


def test_group_stream_decode_error_and_names(grouped):
    s = grouped.streams[2]
    job = vf._job_names(grouped, grouped.streams)[s.index]
    r = vf.stream_container(MemoryBoard(grouped, err=((job, 0), 4)), grouped, "crc")
    first = grouped.tensors[s.members[0]]
    assert not r["ok"] and "decode error 4" in next(t["detail"] for t in r["tensors"] if t["name"] == first.name)
    r = vf.stream_container(MemoryBoard(grouped), grouped, "crc", names={first.name})
    assert [t["name"] for t in r["tensors"]] == [first.name] and r["ok"] and len(r["streams"]) == 1


@pytest.mark.parametrize("mode", ["crc", "full"])
def test_verifying_more_than_the_memory_holds_is_refused_before_streaming(model, mode, monkeypatch):
    """A small file that declares billions of zero-run words: refused from the index (issue 14, item 8), not a
    MemoryError after the board decoded them."""
    from lutzip.codec import arrays
    from lutzip.errors import OutputLimitError
    need = 2 * 9000 + (2 * 12000 if mode == "full" else 0)
    b = MemoryBoard(model)
    monkeypatch.setattr(arrays, "available_memory", lambda: need - 1)
    with pytest.raises(OutputLimitError, match=f"needs {need} bytes of decoded words"):
        vf.stream_container(b, model, mode, progress=False)
    assert b.loaded == []                                   # nothing was streamed
    monkeypatch.setattr(arrays, "available_memory", lambda: need)
    assert vf.stream_container(b, model, mode, progress=False)["ok"]
