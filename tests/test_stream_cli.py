"""``lutzip stream`` / ``lutzip demo`` end to end, and their clear errors."""
import json
import shutil

import numpy as np
import pytest

from lutzip import cli
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct

needs_verilator = pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")


@pytest.fixture
def lutz(tmp_path):
    rng = np.random.default_rng(3)
    p = tmp_path / "m.lutz"
    ct.write(p, codec.compress({"w": np.rint(rng.laplace(0, 12, 20000)).astype(np.int16)}))
    return p


def test_missing_file_and_bad_port_are_clear_errors(lutz, tmp_path, capsys):
    assert cli.main(["stream", str(tmp_path / "nope.lutz"), "--port", "/dev/null"]) == 2
    assert "nope.lutz" in capsys.readouterr().err
    assert cli.main(["stream", str(lutz), "--port", str(tmp_path / "ttyNONE"), "--timeout", "1"]) == 2
    assert "cannot open" in capsys.readouterr().err
    junk = tmp_path / "junk.lutz"
    junk.write_bytes(b"not a container at all" * 3)
    assert cli.main(["stream", str(junk), "--port", "/dev/null"]) == 2
    assert "error" in capsys.readouterr().err


@needs_verilator
@pytest.mark.timeout(600)
def test_stream_sim_json(lutz, capsys):
    assert cli.main(["stream", str(lutz), "--sim", "--json", "--verify", "full"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and rep["weights"] == 20000 and rep["counters"]["words"] == 20000
    assert rep["first_mismatch"] is None and rep["board"]["W"] == 16


@needs_verilator
@pytest.mark.timeout(600)
def test_demo_passes(capsys):
    assert cli.main(["demo", "--model", "digits", "--throughput", "100000"]) == 0
    out = capsys.readouterr().out
    assert "demo PASSED" in out and "int16, 75 % pruned" in out and "bf16" in out
    assert out.count("words bit-exact") == 2 and "xz -9e" in out and "% smaller" in out
    assert "weights per busy cycle" in out and "every word back" in out and "CRC per stripe" in out
    assert "M weights/s through the virtual board" in out


def _row(label, words, busy, cycles, rx, tx, ok=True):
    def rep(mode):
        cn = {"words": words, "busy": busy, "cycles": cycles, "starved": 0, "blocked": 0, "rx_bytes": rx,
              "tx_bytes": tx if mode == "full" else 8}
        return {"ok": ok, "first_mismatch": None if ok else {"tensor": "t", "index": 3}, "counters": cn,
                "weights_per_cycle": words / cycles, "weights_per_busy_cycle": words / busy,
                "weights_per_s_wall": 1e6, "weights": words}
    return {"label": label, "sizes": {"raw": 200, "lutzip": 50, "xz -9e": 100, "zstd -19": 120, "weights": words},
            "full": rep("full"), "crc": rep("crc")}


def test_demo_summary_separates_core_and_link():
    from lutzip.board.base import BoardInfo
    from lutzip.cli.board import demo_summary
    info = BoardInfo("uart-sim", 8, 16, 4096, 100_000_000)
    text = "\n".join(demo_summary([_row("a", 1000, 1000, 1010, 300, 2000), _row("b", 1000, 1400, 1500, 1400, 2000)],
                                   info))
    assert "75.00%" in text and "50.0 % smaller" in text and text.count("PASS, 1000 words bit-exact") == 2
    assert "core: 1.000 weights per busy cycle (a, CRC mode" in text and "= 100 M weights/s at 100 MHz" in text
    assert "CRC per stripe 0.667 (line 0.714)" in text      # b: the input line carries 1000/1400 weights/cycle
    text = "\n".join(demo_summary([_row("b", 1000, 1400, 1500, 1400, 2000, ok=False)], info))
    assert "limited by the link" in text and "FAIL {'tensor': 't', 'index': 3}" in text
