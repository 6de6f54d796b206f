"""`.lutz` format version 4 (issue 15): a tensor may be coded in another axis order (docs/FORMAT.md 4.1).

The encoder picks the order from its zero runs (lutzip.codec.layout); the arrays come back the same through
every reader (compress/decompress, save/load, open, the CLI); files that use no axis order stay version 3;
bad axis orders are one-line FormatErrors; the stream (what a board decodes and the verify layer compares) is
the transposed tensor, and the MyHDL core decodes it.
"""
import struct
import zlib

import numpy as np
import pytest

import lutzip
from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.codec import layout
from lutzip.errors import FormatError

pytestmark = pytest.mark.timeout(300)


def _kernel_pruned(o=64, i=64, k=3, seed=0, dtype=np.int8):
    """A conv weight (o, i, k) whose taps 0 and 2 are all zero: in its own order the zeros come in runs of 2
    between single taps; in order (2, 0, 1) they are two runs of o * i words."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-100, 100, (o, i, k)).astype(dtype)
    w[w == 0] = 1
    w[:, :, 0] = 0
    w[:, :, 2] = 0
    return w


def _arrays():
    rng = np.random.default_rng(1)
    dense = rng.integers(-20000, 20000, (96, 80)).astype(np.int16)
    return {"conv.weight": _kernel_pruned(), "fc.weight": dense, "bias": rng.integers(-9, 9, 64).astype(np.int8)}


def test_symbol_bits_sees_the_zero_runs():
    w = _kernel_pruned()
    lits = np.bincount(w[w != 0].view(np.uint8))
    own = layout.symbol_bits(lits[lits > 0], (w != 0).reshape(-1))
    moved = layout.symbol_bits(lits[lits > 0], np.ascontiguousarray((w != 0).transpose(2, 0, 1)).reshape(-1))
    assert moved < 0.8 * own
    assert layout.choose_axes(w) in {(2, 0, 1), (2, 1, 0)}
    # no order for: dense tensors, small ones, 1-D ones, and orders that keep the word order (size-1 axes)
    assert layout.choose_axes(_arrays()["fc.weight"]) is None
    assert layout.choose_axes(_kernel_pruned(4, 4)) is None
    assert layout.choose_axes(np.zeros(8192, np.int8)) is None
    assert layout.choose_axes(_kernel_pruned()[:, :, 1:2]) is None
    assert layout.choose_axes(_kernel_pruned().transpose(2, 0, 1).reshape(3, -1).T) is None   # matrices keep theirs


def test_run_counts_and_sample_block():
    rng = np.random.default_rng(2)
    for _ in range(100):
        mask = rng.random(int(rng.integers(1, 400))) < rng.random()
        runs, r = [], 0
        for v in list(mask) + [True]:
            if v:
                runs += [r] if r else []
                r = 0
            else:
                r += 1
        want = np.bincount(np.array(runs, int))[1:] if runs else np.zeros(0, int)
        assert sorted(layout.run_counts(mask).tolist()) == sorted(want[want > 0].tolist())
    assert layout.run_counts(np.zeros(3 * layout.RUN_CAP + 5, bool)).tolist() == [1, 3]   # 5 once, 4096 three times
    big = np.zeros((512, 256, 5, 1), np.int8)
    blk = layout.sample_block(big)
    assert blk.size <= layout.SAMPLE_WORDS and blk.shape == (64, 64, 5, 1) and np.shares_memory(blk, big)


def test_round_trip_every_reader(tmp_path):
    arrays = _arrays()
    data = lutzip.compress(arrays, states=1)        # one code table: version 4
    assert struct.unpack_from("<H", data, 4)[0] == 4
    c = ct.from_bytes(data)
    assert c.version == 4
    assert c.tensor("conv.weight").axes in {(2, 0, 1), (2, 1, 0)} and c.tensor("fc.weight").axes is None
    back = lutzip.decompress(data)
    for k, a in arrays.items():
        assert back[k].shape == a.shape and back[k].dtype == a.dtype and np.array_equal(back[k], a)
        assert back[k].flags.c_contiguous
    p = tmp_path / "m.lutz"
    lutzip.save(p, arrays, states=1)
    assert p.read_bytes() == data                    # the streamed writer codes the same bytes
    loaded = lutzip.load(p)
    with lutzip.open(p) as f:
        lazy = {k: f[k] for k in arrays}
    for k, a in arrays.items():
        assert np.array_equal(loaded[k], a) and np.array_equal(lazy[k], a) and lazy[k].shape == a.shape
    # the decoder of a container built in memory (no parse) agrees too
    mem = codec.decompress(codec.compress(arrays))
    assert all(np.array_equal(mem[k], a) for k, a in arrays.items())


def test_reorder_buys_bytes_and_can_be_turned_off():
    arrays = _arrays()
    on, off = lutzip.compress(arrays, states=1), lutzip.compress(arrays, reorder=False, states=1)
    assert len(on) < len(off)
    assert struct.unpack_from("<H", off, 4)[0] == 3                 # no axis order: still version 3
    assert all(t.axes is None for t in ct.from_bytes(off).tensors)
    assert np.array_equal(lutzip.decompress(off)["conv.weight"], arrays["conv.weight"])
    with pytest.raises(lutzip.OptionError):
        lutzip.compress(arrays, reorder="yes")


def test_stream_holds_the_transposed_tensor():
    """What a hardware decoder emits (and the board verify layer compares) is the tensor in its coded order."""
    from lutzip.board.verify import expected_words
    arrays = _arrays()
    c = ct.from_bytes(lutzip.compress(arrays, states=1))
    t = c.tensor("conv.weight")
    want = np.ascontiguousarray(arrays["conv.weight"].transpose(t.axes)).reshape(-1).view(np.uint8)
    assert t.stored_shape == arrays["conv.weight"].transpose(t.axes).shape
    assert np.array_equal(expected_words(c, t), want.astype(np.uint16))


def test_core_decodes_a_reordered_stream():
    """The MyHDL core decodes the stream of a reordered tensor word for word (no hardware change)."""
    from lutzip.hdl.flows import model as M
    from lutzip.hdl.flows import simulate as S
    from lutzip.hdl.flows.vectors import Vectors
    w = _kernel_pruned(32, 48)
    c = ct.from_bytes(ct.to_bytes(codec.compress({"w": w}, stripe_len=512, min_stripes=0)))
    t = c.tensor("w")
    assert t.axes is not None and len(t.stripe_words) >= 2
    pk = [[int(v) for v in st] for st in M.split_stripes(c.stripe_payload(t), t.stripe_words)]
    res = S.check(Vectors.from_packets(pk, M.table_ops(c.tables[t.table]), W=8), in_gap=0.2, out_stall=0.2, seed=4)
    want = np.ascontiguousarray(w.transpose(t.axes)).reshape(-1).view(np.uint8)
    assert [d for d, _, _ in res.rows] == [int(v) for v in want]


def _with_meta(data: bytes, meta: bytes, version=None) -> bytes:
    """``data`` with its metadata block replaced (lengths and CRCs recomputed)."""
    magic, ver, flags, meta_len, _, payload_len, reserved, _ = ct.HEADER.unpack_from(data)
    payload = data[ct.HEADER_SIZE + meta_len:]
    head = struct.pack("<4sHHIIQI", magic, ver if version is None else version, flags, len(meta),
                       zlib.crc32(meta), payload_len, reserved)
    return head + struct.pack("<I", zlib.crc32(head)) + meta + payload


def _stored(data: bytes) -> bytes:
    """``data`` with its metadata block stored, not LZMA-compressed (so its bytes can be found and changed)."""
    return ct.to_bytes(ct.from_bytes(data), compress_meta=False)


def _axes_at(data: bytes):
    """``(meta, position)`` of the conv tensor's axis-order bytes in a version-4 file of ``_arrays()``."""
    c = ct.from_bytes(data)
    axes = bytes(c.tensor("conv.weight").axes)
    meta = data[ct.HEADER_SIZE:ct.HEADER_SIZE + struct.unpack_from("<I", data, 8)[0]]
    assert meta.count(axes) == 1
    return meta, meta.index(axes)


@pytest.mark.parametrize("bad, why", [(b"\x00\x00\x01", "not a permutation"), (b"\x00\x01\x03", "not a permutation"),
                                      (b"\x00\x01\x02", "is the identity")])
def test_bad_axis_order_is_a_format_error(bad, why):
    data = _stored(lutzip.compress(_arrays(), states=1))
    meta, i = _axes_at(data)
    with pytest.raises(FormatError, match=why):
        ct.from_bytes(_with_meta(data, meta[:i] + bad + meta[i + 3:]))


def test_axis_flag_needs_version_4():
    data = _stored(lutzip.compress(_arrays(), states=1))
    with pytest.raises(FormatError, match="unknown flags"):
        ct.from_bytes(_with_meta(data, _axes_at(data)[0], version=3))
    c = ct.from_bytes(data)
    for v in (2, 3):
        with pytest.raises(FormatError, match="axis order"):
            ct.to_bytes(c, version=v)
    c.tensors[0].axes = (0, 0, 1)
    with pytest.raises(FormatError, match="not a permutation"):
        ct.to_bytes(c)


def test_cli_info_and_keep_order(tmp_path):
    from lutzip.cli import main
    src = tmp_path / "m.npz"
    np.savez(src, **_arrays())
    assert main(["compress", str(src), "-o", str(tmp_path / "a.lutz"), "--states", "1"]) == 0
    assert main(["compress", str(src), "-o", str(tmp_path / "b.lutz"), "--keep-order", "--states", "1"]) == 0
    a, b = ct.read(tmp_path / "a.lutz"), ct.read(tmp_path / "b.lutz")
    assert a.version == 4 and b.version == 3
    assert (tmp_path / "a.lutz").stat().st_size < (tmp_path / "b.lutz").stat().st_size
    from lutzip.cli.codec import info_dict
    d = info_dict(a)
    conv = next(t for t in d["tensors"] if t["name"] == "conv.weight")
    assert d["version"] == 4 and tuple(conv["axes"]) == a.tensor("conv.weight").axes
    assert main(["decompress", str(tmp_path / "a.lutz"), "-o", str(tmp_path / "back.npz")]) == 0
    back = np.load(tmp_path / "back.npz")
    assert all(np.array_equal(back[k], v) for k, v in _arrays().items())
