"""``lutzip bench --startup``: fresh processes, the output checked, a failing command reported."""
import sys

import pytest

from lutzip import bench_startup


def test_startup_rows_and_check():
    res = bench_startup.startup(repeat=1)
    assert res["ok"] is True
    rows = {k: v for k, v in res.items() if isinstance(v, dict)}
    assert set(rows) == {"python -c pass", "import numpy", "lutzip compress", "lutzip decompress"}
    assert rows["import numpy"]["x_numpy_cpu"] == pytest.approx(1.0)
    # lutzip imports numpy and then does work: it cannot be cheaper than the bare interpreter
    assert rows["lutzip compress"]["cpu_s"] > rows["python -c pass"]["cpu_s"]
    text = bench_startup.format_startup(res, None, 1)
    assert "lutzip decompress" in text and "output checked: ok" in text


def test_failing_command_is_an_error():
    with pytest.raises(RuntimeError, match="exited with 3"):
        bench_startup._run([sys.executable, "-c", "import sys; sys.exit(3)"], None, None)
