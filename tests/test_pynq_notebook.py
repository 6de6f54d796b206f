"""The PYNQ notebook (host/notebooks/lutzip_pynq.ipynb) executed headless with papermill against the simulated
PYNQ device (``-p SIM True``); fails on any cell error or a FAIL in its output."""
import json
from importlib import resources

import pytest

pytest.importorskip("pynq", reason="pynq not installed (pip install 'lutzip[pynq]')")
try:                                             # the driver's one-line reason, e.g. pynq with numpy >= 2
    import lutzip.board.pynq  # noqa: E402,F401
except ImportError as e:
    pytest.skip(str(e), allow_module_level=True)
papermill = pytest.importorskip("papermill", reason="papermill not installed (pip install papermill ipykernel)")
pytest.importorskip("ipykernel", reason="ipykernel not installed")

try:
    from lutzip.firmware.axi.sim import AxiSim  # noqa: F401
    BACKEND, LIMIT = "verilator", 0
except ImportError:              # the MyHDL top is slow: the small tensors only
    BACKEND, LIMIT = "myhdl", 1200


def _notebook():
    return resources.files("lutzip") / "notebooks" / "lutzip_pynq.ipynb"


def test_notebook_metadata():
    nb = json.loads(_notebook().read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and "SIM = False" in "".join(tagged[0]["source"])


def test_notebook_runs_headless_on_the_simulated_device(tmp_path):
    out = tmp_path / "out.ipynb"
    with resources.as_file(_notebook()) as src:
        papermill.execute_notebook(str(src), str(out), parameters={"SIM": True, "BACKEND": BACKEND, "LIMIT": LIMIT},
                                   kernel_name="python3", cwd=str(tmp_path), progress_bar=False,
                                   execution_timeout=600)
    nb = json.loads(out.read_text(encoding="utf-8"))
    text = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            assert o.get("output_type") != "error", o.get("evalue")
            text.append("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", "")))
            text.append("".join(o.get("data", {}).get("text/html", "")))
    text = "\n".join(text)
    assert "RESULT: PASS" in text and "FAIL" not in text
    assert "SIMULATION" in text                              # the banner
    assert any("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
