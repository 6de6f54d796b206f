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


# ------------------------------------------------------------------------------------ issue 14, items 13-15
def _npy_bytes(shape, dtype="<i2", data=b""):
    """An .npy header for ``shape`` (written here with numpy's own header writer) followed by ``data``."""
    import io
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": dtype, "fortran_order": False, "shape": shape})
    return f.getvalue() + data


def _traced_peak(fn):
    import tracemalloc
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("shape", [(10**12,), (10**6, 10**6), (2**40, 2**20), (3, 5)])
def test_npy_header_claiming_more_than_the_file_holds(tmp_path, shape):
    p = tmp_path / "big.npy"
    p.write_bytes(_npy_bytes(shape, data=b"\0" * 16))
    with pytest.raises(FormatError, match="claims shape") as e:
        assert _traced_peak(lambda: loaders.load(p)) is None
    assert str(p) in str(e.value)
    assert _traced_peak(lambda: pytest.raises(FormatError, loaders.load, p)) < 1 << 20


def _npy_header_bytes(shape, dtype="<i2"):
    """An .npy header written by hand (numpy's writer refuses a negative dimension)."""
    import struct
    d = ("{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (dtype, shape)).encode()
    d += b" " * ((64 - (10 + len(d) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d


@pytest.mark.parametrize("case,match", [
    ("negative", "a negative dimension"),            # numpy would infer (-1, 4) as (8, 4)
    ("two negative", "a negative dimension"),
    ("leftover", r"the data has 64 bytes \(a damaged header"),     # numpy would drop the last 32 bytes
    ("appended", "more arrays appended"),             # np.save twice into one file: the second was lost
])
def test_npy_shape_must_account_for_every_byte(tmp_path, capsys, case, match):
    """The loader, the streamed writer's .npy source (what lutzip compress reads) and an .npz member alike."""
    import io
    import zipfile
    from lutzip import cli
    from lutzip.codec import writer
    data = np.arange(32, dtype="<i2").tobytes()
    if case == "appended":
        f = io.BytesIO()
        np.save(f, np.arange(5, dtype=np.int16))
        np.save(f, np.arange(7, dtype=np.int8))
        raw = f.getvalue()
    else:
        raw = _npy_header_bytes({"negative": (-1, 4), "two negative": (-2, -16), "leftover": (16,)}[case]) + data
    p = tmp_path / "w.npy"
    p.write_bytes(raw)
    for read in (loaders.load, writer.file_source):
        with pytest.raises(FormatError, match=match):
            read(p)
    assert cli.main(["compress", str(p), "-o", str(tmp_path / "o.lutz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lutzip: error:") and err.count("\n") == 1 and not (tmp_path / "o.lutz").exists(), err
    z = tmp_path / "w.npz"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("w.npy", raw)
    with pytest.raises(FormatError, match="member 'w.npy' claims shape"):
        loaders.load(z)


@pytest.mark.parametrize("compression", ["stored", "deflated"])
def test_npz_member_header_claiming_more_than_the_member_holds(tmp_path, compression):
    import zipfile
    p = tmp_path / "big.npz"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED if compression == "stored" else zipfile.ZIP_DEFLATED) as z:
        z.writestr("w.npy", _npy_bytes((10**12,), data=b"\0" * 64))
        z.writestr("ok.npy", _npy_bytes((4,), data=b"\1\0" * 4))
    assert _traced_peak(lambda: pytest.raises(FormatError, loaders.load, p)) < 1 << 20
    with pytest.raises(FormatError, match="member 'w.npy' claims shape"):
        loaders.load(p)


def test_npz_member_whose_zip_sizes_lie(tmp_path):
    """The zip directory claims a 4 GB member from 300 compressed bytes: refused before inflating."""
    import struct
    import zipfile
    p = tmp_path / "lie.npz"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("w.npy", _npy_bytes((2**31 - 100,), "|u1", b"\0" * 256))
    data = bytearray(p.read_bytes())
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        i = data.index(sig)
        struct.pack_into("<I", data, i + off, 0xFFFFFF00)
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="claims 4294967040 bytes from"):
        loaders.load(p)


def test_npz_with_damaged_deflate_data(tmp_path):
    p = tmp_path / "m.npz"
    np.savez_compressed(p, w=np.arange(20000, dtype=np.int16), v=np.ones(10, np.int8))
    good = p.read_bytes()
    hits = 0
    for pos in range(200, len(good) - 200, 97):
        bad = bytearray(good)
        bad[pos] ^= 0x5A
        p.write_bytes(bytes(bad))
        try:
            got = loaders.load(p)
        except FormatError as e:
            assert "\n" not in str(e) and str(p) in str(e)
            hits += 1
            continue
        assert set(got) == {"w", "v"}                      # a byte that did not matter: the same arrays
        assert np.array_equal(got["w"], np.arange(20000, dtype=np.int16))
    assert hits > 5


def test_npz_duplicate_and_foreign_members(tmp_path):
    import warnings
    import zipfile
    p = tmp_path / "dup.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                    # zipfile warns about the duplicate name
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("w.npy", _npy_bytes((1,), data=b"\1\0"))
            z.writestr("w.npy", _npy_bytes((1,), data=b"\2\0"))
    with pytest.raises(FormatError, match="'w' appears twice"):
        loaders.load(p)
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("w.npy", _npy_bytes((1,), data=b"\1\0"))
        z.writestr("notes.txt", b"hello")
    with pytest.raises(FormatError, match="'notes.txt' is not an .npy"):
        loaders.load(p)
    np.save(tmp_path / "o.npy", np.array([object()]), allow_pickle=True)
    with pytest.raises(FormatError, match="pickle"):
        loaders.load(tmp_path / "o.npy")


def _safetensors(path, header: dict, data: bytes):
    import json
    import struct
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)


@pytest.mark.parametrize("header,match", [
    ('{"a":{"dtype":"I16","shape":[2],"data_offsets":[0,4]},"a":{"dtype":"I16","shape":[1],"data_offsets":[4,6]}}',
     "'a' appears twice"),
    ('{"a":{"dtype":"I16","shape":[2]}}', "data_offsets"),
    ('{"a":{"dtype":"I16","shape":[-2],"data_offsets":[0,4]}}', "data_offsets"),
    ('{"a":{"dtype":"I16","shape":[2],"data_offsets":[0,400]}}', "offsets"),
    ('{"a":[1,2]}', "data_offsets"),
    ('[1]', "JSON object"),
    ('{"a":' * 50000 + '1' + '}' * 50000, "not JSON"),
])
def test_safetensors_hostile_headers(tmp_path, header, match):
    import struct
    p = tmp_path / "h.safetensors"
    h = header.encode()
    p.write_bytes(struct.pack("<Q", len(h)) + h + b"\0" * 8)
    with pytest.raises(FormatError, match=match):
        loaders.load(p)
    with pytest.raises(FormatError, match=match):
        loaders._safetensors_raw(str(p))


def _onnx_model(path, dims, raw: bytes, data_type=None):
    onnx = pytest.importorskip("onnx")
    t = onnx.TensorProto()
    t.name, t.data_type = "w", data_type or onnx.TensorProto.INT16
    t.dims.extend(dims)
    t.raw_data = raw
    g = onnx.helper.make_graph([], "g", [], [], initializer=[t])
    onnx.save(onnx.helper.make_model(g), str(path))


@pytest.mark.parametrize("dims,raw", [((4, 4), b"\0" * 6), ((2**40, 2**20), b"\0" * 32), ((3,), b"\0" * 8),
                                      ((2**62, 2**62), b"")])
def test_onnx_data_not_matching_dims(tmp_path, dims, raw):
    p = tmp_path / "m.onnx"
    _onnx_model(p, dims, raw)
    with pytest.raises(FormatError, match="tensor 'w'") as e:
        loaders.load(p)
    assert "\n" not in str(e.value)
    _onnx_model(p, (2, 2), b"\1\0\2\0\3\0\4\0")
    assert np.array_equal(loaders.load(p)["w"], np.array([[1, 2], [3, 4]], np.int16))


@pytest.mark.parametrize("w,why", [
    ([[1e300, -2e299], [3, 1e-300]], "outside the normal float32 range"),           # scale would be inf
    ([[1e-300, -2e-301], [3e-302, 0]], "outside the normal float32 range"),         # scale would be 0
    ([[1e-41, 0], [0, 0]], "outside the normal float32 range"),                     # scale subnormal
    ([3.0, np.inf], "NaN or infinite"), ([np.nan, 1.0], "NaN or infinite"), (-np.inf, "NaN or infinite"),
])
@pytest.mark.parametrize("dt", ["int16", "int8"])
def test_quantize_refuses_what_it_cannot_represent(w, why, dt):
    a = np.array(w, np.float64)
    with pytest.raises(UnsupportedError, match=why) as e:
        quantize.quantize_int(a, dt, name="fc.w")
    assert "'fc.w'" in str(e.value)
    with pytest.raises(UnsupportedError, match="'fc.w'.*--skip-unsupported"):
        quantize.prepare({"fc.w": a, "b": np.ones(3, np.float32)}, quantize=dt)
    warned = []
    out, attrs = quantize.prepare({"fc.w": a, "b": np.ones(3, np.float32)}, quantize=dt, skip_unsupported=True,
                                  warn=warned.append)
    assert list(out) == ["b"] and len(warned) == 1 and "'fc.w'" in warned[0] and why in warned[0]


def test_quantize_float64_in_float32_range_still_works():
    a = np.array([[1e30, -2e29], [3, 1e-30]])
    q, attrs = quantize.quantize_int(a, "int16")
    assert np.isfinite(attrs["scale"]) and attrs["scale"] > 0 and q[0, 0] == 32767
    assert np.allclose(quantize.dequantize(q, attrs)[0], a[0], rtol=1e-4)
    a = np.array([1e-30, -3e-31])                          # tiny but the scale is a normal float32
    q, attrs = quantize.quantize_int(a, "int16")
    assert q.tolist() == [32767, -9830] and attrs["scale"] > 0


def test_bf16_of_float64_beyond_its_range_is_refused():
    with pytest.raises(UnsupportedError, match="'big'.*bfloat16 range"):
        quantize.prepare({"big": np.array([1e300, 1.0])}, bf16=True)
    b, _ = quantize.to_bfloat16(np.array([np.inf, -np.inf, np.nan, 1e-300], np.float64))   # kept as they are
    f = b.astype(np.float32)
    assert f[0] == np.inf and f[1] == -np.inf and np.isnan(f[2]) and f[3] == 0


def test_cli_quantize_errors_and_skip_name_the_tensor(tmp_path, capsys):
    from lutzip import cli
    src = tmp_path / "m.npz"
    np.savez(src, **{"big": np.array([[1e300, -2e299], [3, 1e-300]]), "logits.min": np.array(-np.inf, np.float32),
                     "fc.weight": np.ones((4, 4), np.float32)})
    out = tmp_path / "m.lutz"
    rc = cli.main(["compress", str(src), "-o", str(out), "--quantize", "int16"])
    err = capsys.readouterr().err
    assert rc == 2 and "'big'" in err and err.count("\n") == 1 and not out.exists()
    rc = cli.main(["compress", str(src), "-o", str(out), "--quantize", "int16", "--skip-unsupported"])
    err = capsys.readouterr().err
    assert rc == 0 and "'big'" in err and "'logits.min'" in err and err.count("warning") == 2
    assert [t.name for t in ct.read(out).tensors] == ["fc.weight"]


@pytest.mark.parametrize("field,value", [("flag_bits", 0x20), ("flag_bits", 0x40), ("flag_bits", 0x01),
                                         ("version", 109)])
def test_npz_member_flags_zipfile_cannot_read(tmp_path, field, value):
    """Patched data (flag bit 5), strong encryption (bit 6), encryption (bit 0), an unknown 'version needed':
    zipfile raised NotImplementedError (a traceback; found by the long input fuzzer)."""
    import struct
    p = tmp_path / "odd.npz"
    np.savez_compressed(p, w=np.arange(100, dtype=np.int16))
    data = bytearray(p.read_bytes())
    for sig, version_at, flags_at in ((b"PK\x03\x04", 4, 6), (b"PK\x01\x02", 6, 8)):
        i = data.index(sig)
        if field == "flag_bits":
            struct.pack_into("<H", data, i + flags_at, struct.unpack_from("<H", data, i + flags_at)[0] | value)
        else:
            struct.pack_into("<H", data, i + version_at, value)
    p.write_bytes(bytes(data))
    with pytest.raises(FormatError) as e:
        loaders.load(p)
    assert "\n" not in str(e.value) and str(p) in str(e.value)


def _onnx_constants(path, nodes):
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    g = helper.make_graph(nodes, "g", [], [])
    onnx.save(helper.make_model(g), str(path))


def test_onnx_constants_of_every_kind_come_back(tmp_path):
    pytest.importorskip("onnx")
    from onnx import helper
    p = tmp_path / "c.onnx"
    _onnx_constants(p, [helper.make_node("Constant", [], ["f"], value_float=1.5),
                        helper.make_node("Constant", [], ["fs"], value_floats=[1.0, -2.0]),
                        helper.make_node("Constant", [], ["i"], value_int=7),
                        helper.make_node("Constant", [], ["is"], value_ints=[1, 2, 3]),
                        helper.make_node("Constant", [], ["s"], value_strings=[b"a", b"bc"])])
    got = loaders.load(p)
    assert list(got) == ["f", "fs", "i", "is", "s"]                   # none silently left out
    assert got["f"].dtype == np.float32 and got["f"].shape == () and got["f"] == 1.5
    assert got["fs"].tolist() == [1.0, -2.0] and got["is"].dtype == np.int64 and got["is"].tolist() == [1, 2, 3]
    assert got["s"].tolist() == [b"a", b"bc"]
    warned = []
    out, _ = quantize.prepare(got, quantize="int16", skip_unsupported=True, warn=warned.append)
    assert sorted(out) == ["f", "fs"] and len(warned) == 3             # int64 and strings: reported, skipped


def test_onnx_constant_without_a_value_is_an_error_naming_it(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    p = tmp_path / "c.onnx"
    node = helper.make_node("Constant", [], ["mask"], value_float=1.0)
    node.attribute[0].name = "valu"                                    # the fuzzer's bit flip: 'value' -> 'valu'
    _onnx_constants(p, [node])
    with pytest.raises(FormatError, match=r"Constant 'mask' holds no value \(attributes: 'valu'\)"):
        loaders.load(p)
    sparse = helper.make_node("Constant", [], ["sp"], sparse_value=helper.make_sparse_tensor(
        helper.make_tensor("v", onnx.TensorProto.FLOAT, [1], [1.0]),
        helper.make_tensor("i", onnx.TensorProto.INT64, [1], [0]), [4]))
    _onnx_constants(p, [sparse])
    with pytest.raises(UnsupportedError, match="Constant 'sp' holds a sparse tensor"):
        loaders.load(p)
