"""Loaders for .npy / .npz / .safetensors / .onnx / PyTorch files, and the lossy preparation steps."""
import ml_dtypes
import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.weights import loaders
from lutzip.weights import quantize
from lutzip.errors import FormatError, LutzError, UnsupportedError


def _arrays():
    rng = np.random.default_rng(0)
    return {"w": rng.normal(0, 0.1, (8, 5)).astype(np.float32),
            "q": rng.integers(-100, 100, (3, 4)).astype(np.int16),
            "h": rng.normal(0, 1, 7).astype(np.float16),
            "bf": rng.normal(0, 1, (2, 6)).astype(ml_dtypes.bfloat16)}


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_npy_and_npz(tmp_path):
    a = _arrays()
    np.save(tmp_path / "layer.npy", a["q"])
    got = loaders.load(tmp_path / "layer.npy")
    assert list(got) == ["layer"] and _same(got["layer"], a["q"])
    np.savez(tmp_path / "m.npz", w=a["w"], q=a["q"])
    got = loaders.load(tmp_path / "m.npz")
    assert _same(got["w"], a["w"]) and _same(got["q"], a["q"])


def test_safetensors_including_bf16(tmp_path):
    from safetensors.numpy import save_file
    a = _arrays()
    save_file(a, str(tmp_path / "m.safetensors"))
    got = loaders.load(tmp_path / "m.safetensors")
    assert set(got) == set(a)
    for k in a:
        assert _same(got[k], a[k])
    raw = loaders._safetensors_raw(str(tmp_path / "m.safetensors"))     # the fallback reader agrees
    for k in a:
        assert _same(raw[k], a[k])
    # bf16 is coded losslessly as it is
    c = ct.from_bytes(ct.to_bytes(codec.compress({"bf": got["bf"]})))
    assert c.tensors[0].dtype == "bfloat16"
    assert np.array_equal(codec.decompress(c)["bf"], a["bf"].view(np.uint16))


def test_safetensors_damaged(tmp_path):
    p = tmp_path / "bad.safetensors"
    p.write_bytes(b"\xff" * 8 + b"{}")
    with pytest.raises(FormatError):
        loaders.load(p)
    with pytest.raises(FormatError):
        loaders._safetensors_raw(str(p))


def test_onnx_initializers_and_constants(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper, TensorProto
    a = _arrays()
    init = [numpy_helper.from_array(a["w"], "w"), numpy_helper.from_array(a["q"], "q"),
            numpy_helper.from_array(a["bf"], "bf")]
    const = helper.make_node("Constant", [], ["c_out"], value=numpy_helper.from_array(a["h"], "c"))
    add = helper.make_node("Add", ["x", "w"], ["y"])
    graph = helper.make_graph([const, add], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 5])], init)
    onnx.save(helper.make_model(graph), str(tmp_path / "m.onnx"))
    got = loaders.load(tmp_path / "m.onnx")
    assert _same(got["w"], a["w"]) and _same(got["q"], a["q"]) and _same(got["c_out"], a["h"])
    assert _same(got["bf"], a["bf"])
    (tmp_path / "bad.onnx").write_bytes(b"\x0a\xff\xff\xff")
    with pytest.raises(FormatError):
        loaders.load(tmp_path / "bad.onnx")


def test_torch_state_dict(tmp_path):
    torch = pytest.importorskip("torch")
    sd = {"a": torch.arange(6, dtype=torch.int16).reshape(2, 3), "sub": {"b": torch.ones(3, dtype=torch.bfloat16)}}
    torch.save(sd, tmp_path / "m.pt")
    got = loaders.load(tmp_path / "m.pt")
    assert np.array_equal(got["a"], np.arange(6, dtype=np.int16).reshape(2, 3))
    assert got["sub.b"].dtype == ml_dtypes.bfloat16


def test_torch_missing_is_clear(tmp_path, monkeypatch):
    import builtins
    real = builtins.__import__

    def fake(name, *args, **kw):
        if name == "torch":
            raise ImportError("no torch")
        return real(name, *args, **kw)
    monkeypatch.setattr(builtins, "__import__", fake)
    (tmp_path / "m.pt").write_bytes(b"x")
    with pytest.raises(UnsupportedError, match="torch"):
        loaders.load(tmp_path / "m.pt")


def test_unknown_suffix_and_kind(tmp_path):
    (tmp_path / "m.h5").write_bytes(b"x")
    with pytest.raises(UnsupportedError, match="unknown weight file type"):
        loaders.load(tmp_path / "m.h5")
    with pytest.raises(UnsupportedError):
        loaders.load(tmp_path / "m.h5", kind="pickle")


# ------------------------------------------------------------------------------------------ lossy steps
def test_quantize_int_symmetric_and_scale():
    rng = np.random.default_rng(1)
    w = rng.normal(0, 0.2, 1000).astype(np.float32)
    for dt, qmax in (("int16", 32767), ("int8", 127)):
        q, attrs = quantize.quantize_int(w, dt)
        assert q.dtype == np.dtype(dt) and np.abs(q).max() == qmax
        assert list(attrs) == ["scale"] and repr(attrs["scale"]) == str(np.float32(attrs["scale"]))
        err = np.abs(quantize.dequantize(q, attrs) - w)
        assert err.max() <= 0.5 * attrs["scale"] * (1 + 1e-5) + 1e-7
    with pytest.raises(UnsupportedError):
        quantize.quantize_int(np.array([np.nan], np.float32))
    q, attrs = quantize.quantize_int(np.zeros(5, np.float32))
    assert not q.any()


def test_bf16_round_to_nearest_even():
    # 1 + 2^-8 is exactly half-way between bf16 1.0 and 1 + 2^-7: ties go to the even mantissa (1.0)
    x = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -9, -2.5], np.float32)
    b, _ = quantize.to_bfloat16(x)
    assert list(b.astype(np.float32)) == [1.0, 1 + 2 ** -6, 1.0, -2.5]


def test_prune_fraction():
    rng = np.random.default_rng(2)
    w = rng.normal(0, 1, (100, 10)).astype(np.float32)
    p = quantize.prune(w, 0.75)
    assert abs((p == 0).mean() - 0.75) < 0.01
    assert np.abs(p[p != 0]).min() >= np.abs(w[p == 0]).max()
    assert quantize.prune(w, 0.0) is w
    with pytest.raises(UnsupportedError):
        quantize.prune(w, 1.0)


def test_prepare_rules():
    a = _arrays()
    with pytest.raises(UnsupportedError, match="float32"):
        quantize.prepare(a)
    out, attrs = quantize.prepare(a, quantize="int8", prune_fraction=0.5)
    assert out["w"].dtype == np.int8 and "scale" in attrs["w"]
    assert out["q"].dtype == np.int16 and out["h"].dtype == np.float16   # lossless types pass unchanged
    assert (out["q"] == 0).mean() >= 0.5                                  # but are pruned when asked
    out, attrs = quantize.prepare(a, bf16=True)
    assert out["w"].dtype == ml_dtypes.bfloat16
    with pytest.raises(LutzError):
        quantize.prepare(a, quantize="int8", bf16=True)
    with pytest.raises(UnsupportedError, match="int64"):
        quantize.prepare({"i": np.arange(3)})
    warned = []
    out, _ = quantize.prepare({"i": np.arange(3), "j": np.arange(3, dtype=np.int8)}, skip_unsupported=True,
                              warn=warned.append)
    assert list(out) == ["j"] and warned
