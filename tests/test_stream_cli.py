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
    assert cli.main(["demo", "--throughput", "200000"]) == 0
    out = capsys.readouterr().out
    assert "demo PASSED" in out and "RESULT: PASS" in out and "M weights/s" in out
