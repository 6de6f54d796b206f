"""The decoder path of the public API: stripe CRCs checked inside the compiled decoder, ``threads=`` on
``lutzip.decompress`` / ``load`` / ``open`` and ``--threads`` on ``lutzip decompress``; every result bit-identical
to the numba oracle, every damaged stripe still named."""
import numpy as np
import pytest

import lutzip
from lutzip import cli
from lutzip.codec import container as ct
from lutzip.errors import CorruptError, LutzError


def _arrays():
    rng = np.random.default_rng(7)
    big = np.rint(rng.laplace(0, 20, 50_000)).astype(np.int16)
    big[rng.random(big.size) < 0.6] = 0
    return {"big": big, "b8": np.rint(rng.laplace(0, 9, 30_000)).clip(-128, 127).astype(np.int8),
            **{f"tiny.{i}": rng.integers(-50, 50, int(rng.integers(1, 40))).astype(np.int16) for i in range(30)}}


@pytest.fixture(scope="module")
def data():
    return _arrays(), lutzip.compress(_arrays(), stripe_len=1024)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_give_the_same_arrays(data, threads, tmp_path):
    arrays, blob = data
    out = lutzip.decompress(blob, threads=threads)
    assert list(out) == list(arrays)
    for k, a in arrays.items():
        assert np.array_equal(out[k], a), k
    p = tmp_path / "m.lutz"
    p.write_bytes(blob)
    assert all(np.array_equal(v, arrays[k]) for k, v in lutzip.load(p, threads=threads).items())
    with lutzip.open(p, threads=threads) as f:
        assert np.array_equal(f["big"], arrays["big"]) and np.array_equal(f["tiny.3"], arrays["tiny.3"])


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, 10_000])
def test_bad_thread_counts_are_refused(data, bad):
    with pytest.raises(LutzError, match="threads must be an integer"):
        lutzip.decompress(data[1], threads=bad)


def _flip(blob, tensor, stripe):
    """Flip one payload bit inside ``stripe`` of ``tensor``'s stream."""
    c = ct.from_bytes(blob)
    s = c.stream_of(c.tensor(tensor)) if hasattr(c, "stream_of") else c.tensor(tensor)
    words = np.asarray(s.stripe_words, np.int64)
    payload = ct.HEADER_SIZE + int.from_bytes(blob[8:12], "little")   # header, then meta_len bytes of metadata
    byte = payload + int(s.offset) + 4 * int(words[:stripe].sum()) + 4 * 1 + 2
    b = bytearray(blob)
    b[byte] ^= 0x10
    return bytes(b)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tensor,stripe", [("big", 0), ("big", 37), ("b8", 14), ("tiny.5", 0)])  # b8: 15 stripes
def test_every_damaged_stripe_is_named(data, tensor, stripe, threads):
    blob = _flip(data[1], tensor, stripe)
    with pytest.raises(CorruptError, match=f"stripe {stripe}: CRC mismatch"):
        lutzip.decompress(blob, threads=threads)


def test_cli_threads(data, tmp_path, capsys):
    arrays, blob = data
    p = tmp_path / "m.lutz"
    p.write_bytes(blob)
    assert cli.main(["decompress", str(p), "-o", str(tmp_path / "o.npz"), "--threads", "2"]) == 0
    with np.load(tmp_path / "o.npz") as z:
        assert all(np.array_equal(z[k], a) for k, a in arrays.items())
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main(["decompress", str(p), "-o", str(tmp_path / "x.npz"), "--threads", "0"])
    assert "thread count 0 outside 1..256" in capsys.readouterr().err


def test_decoding_starts_without_numba(data, tmp_path):
    """Reading a container and building the CLI's parser import neither numba (the encoder's JIT) nor myhdl,
    as long as the compiled decoder is there: start-up of a decode is numpy + lutzip."""
    import subprocess
    import sys
    from lutzip.codec import fastdec
    if not fastdec.available():
        pytest.skip(f"no compiled decoder here: {fastdec.why_not()}")
    p = tmp_path / "m.lutz"
    p.write_bytes(data[1])
    code = ("import sys, lutzip; from lutzip import cli; cli.build_parser(); a = lutzip.load(sys.argv[1]); "
            "f = lutzip.open(sys.argv[1]); f['big']; f.close(); "
            "print(len(a), sorted(m for m in ('numba', 'myhdl', 'matplotlib') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == [str(len(data[0])), "[]"], r.stdout
