"""The opt-in class redesign for two code tables through the public API and the CLI (option ``redesign``,
``lutzip compress --redesign``): the bytes of ``states.apply(..., redesign=True)``, decoded bit-exact, smaller
than the default two-table file on a tensor where the cut pays, and refused in one line with one code table."""
import subprocess
import sys

import numpy as np
import pytest

import lutzip
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import states

pytestmark = pytest.mark.timeout(600)


def model(seed=3):
    """A dense int8 tensor whose values follow the previous one's sign (an AR(1) walk: the state a redesigned
    class set switches on) and a 90 % sparse fc layer: 29 258 B redesigned, 29 842 B two tables, 30 452 B one."""
    rng = np.random.default_rng(seed)
    x = rng.laplace(0, 6, 40000)
    y = np.empty_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = 0.6 * y[i - 1] + x[i]
    fc = np.clip(np.round(rng.laplace(0, 6, (96, 200))), -127, 127).astype(np.int8)
    fc[rng.random(fc.shape) < 0.9] = 0
    return {"conv.weight": np.clip(np.round(y), -127, 127).astype(np.int8).reshape(250, 160), "fc.weight": fc}


def test_api_redesign_is_apply_redesign_and_decodes(tmp_path):
    arrays = model()
    data = lutzip.compress(arrays, redesign=True)
    assert data == ct.to_bytes(states.apply(codec.compress(arrays), L=8, redesign=True))
    assert len(data) < len(lutzip.compress(arrays)) < len(lutzip.compress(arrays, states=1))
    back = lutzip.decompress(data)
    assert all(np.array_equal(back[k], v) for k, v in arrays.items())
    f = tmp_path / "r.lutz"
    assert lutzip.save(f, arrays, redesign=True) == len(data) and f.read_bytes() == data


def test_redesign_with_one_table_is_refused(tmp_path):
    with pytest.raises(lutzip.OptionError, match="redesign"):
        lutzip.compress(model(), redesign=True, states=1)
    with pytest.raises(lutzip.OptionError, match="redesign"):
        lutzip.compress(model(), redesign=1)
    np.savez(tmp_path / "m.npz", **model())
    r = subprocess.run([sys.executable, "-m", "lutzip.cli", "compress", str(tmp_path / "m.npz"), "-o",
                        str(tmp_path / "m.lutz"), "--redesign", "--states", "1"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0 and "--redesign" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m.lutz").exists()


def test_cli_redesign_writes_the_api_bytes(tmp_path):
    arrays = model()
    np.savez(tmp_path / "m.npz", **arrays)
    r = subprocess.run([sys.executable, "-m", "lutzip.cli", "compress", str(tmp_path / "m.npz"), "-o",
                        str(tmp_path / "m.lutz"), "--redesign"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m.lutz").read_bytes() == lutzip.compress(arrays, redesign=True)
