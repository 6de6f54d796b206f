"""Container fuzzer (issue 14): mutated ``.lutz`` files, with the CRCs recomputed so that the reader's semantic
checks are reached and not only the CRC.

Each case ends in one of two ways: a one-line :class:`LutzError`, or a result consistent with the file -- every
tensor of the index decoded, under its own name, with its own dtype and shape, and exactly the original arrays
whenever the index and payload are the original ones. Never another exception, never more than
:data:`CASE_SECONDS` per case, never more than :data:`MEMORY_CAP` bytes traced (tracemalloc) per case. The CLI
part runs ``lutzip decompress`` / ``info`` on mutated files in a subprocess under ``RLIMIT_AS`` =
:data:`CLI_ADDRESS_SPACE`: exit 0 with every tensor in the ``.npz``, or exit 2 and one ``lutzip: error:`` line.
The default run takes a few seconds per test; ``-m slow`` runs many more cases.
"""
import dataclasses
import os
import struct
import subprocess
import sys
import time
import tracemalloc
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as hst

from lutzip.codec import arrays as codec
from lutzip.codec import container as ct
from lutzip.errors import LutzError

CASE_SECONDS = 10.0             # per case, generous for a loaded 2-core machine (a case takes milliseconds)
MEMORY_CAP = 48 << 20           # bytes traced per case (the decoder is called with MAX_OUTPUT)
MAX_OUTPUT = 16 << 20
CLI_ADDRESS_SPACE = 1536 << 20  # RLIMIT_AS of the CLI subprocesses

pytestmark = pytest.mark.timeout(300)


def _arrays():
    rng = np.random.default_rng(14)
    sparse = np.rint(rng.laplace(0, 40, (24, 33))).astype(np.int16)
    sparse[rng.random(sparse.shape) < 0.7] = 0
    return {
        "fc.weight": sparse,
        "conv": rng.integers(-128, 128, (3, 3, 4, 5)).astype(np.int8),
        "norm": rng.normal(1, 0.1, 40).astype(np.float16),
        "emb": rng.normal(0, 1, (6, 10)).astype(ml_dtypes.bfloat16).view(np.uint16),
        "mask": (rng.random(90) < 0.5).astype(np.uint8),
        "empty": np.zeros((0, 3), np.int16),
        "scalar": np.array(7, np.int8),
    }


ARRAYS = _arrays()
ATTRS = {"fc.weight": {"scale": 0.015625}, "conv": {"scale": 0.1, "source_dtype": "float32"}}
# version 3 with one stream of its own (fc.weight) and two group streams spanning several 64-word stripes
# (its metadata block stored, so that the fuzzer changes the index's own bytes)
GOOD = ct.to_bytes(codec.compress(ARRAYS, stripe_len=64, attrs=ATTRS, group_below=256), compress_meta=False)
GOOD_C = ct.from_bytes(GOOD)
META_LEN = ct.HEADER.unpack_from(GOOD)[3]
META = GOOD[ct.HEADER_SIZE:ct.HEADER_SIZE + META_LEN]
PAYLOAD = GOOD[ct.HEADER_SIZE + META_LEN:]
# the same index as an LZMA2-compressed block (header flags bit 0, reserved = its length): a third seed
META_Z, FLAGS_Z, RAW_Z = ct.pack_meta_block(META, 3, compress=True)
# the same arrays in a version-2 file (the older layout, still read): a second seed of the metadata fuzzer
GOOD_V2 = ct.to_bytes(codec.compress(ARRAYS, stripe_len=64, attrs=ATTRS, group_below=0), version=2)
GOOD_V2_C = ct.from_bytes(GOOD_V2)
META_LEN_V2 = ct.HEADER.unpack_from(GOOD_V2)[3]
META_V2 = GOOD_V2[ct.HEADER_SIZE:ct.HEADER_SIZE + META_LEN_V2]
PAYLOAD_V2 = GOOD_V2[ct.HEADER_SIZE + META_LEN_V2:]


def assemble(meta: bytes, payload: bytes, version=ct.VERSION, flags=0, reserved=0, meta_len=None, payload_len=None):
    """A file around ``meta`` and ``payload`` with every header field and CRC recomputed (or as given)."""
    head = struct.pack("<4sHHIIQI", b"LUTZ", version, flags, len(meta) if meta_len is None else meta_len,
                       zlib.crc32(meta), len(payload) if payload_len is None else payload_len, reserved)
    return head + struct.pack("<I", zlib.crc32(head)) + meta + payload


def uv(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >> 7 else 0))
        v >>= 7
        if not v:
            return bytes(out)


INTERESTING = [0, 1, 2, 3, 4, 7, 8, 15, 16, 63, 64, 65, 127, 128, 255, 256, 4095, 4096, 65535, 65536, 65537,
               2**31, 2**32 - 1, 2**32, 2**62, 2**63 - 1, 2**63, 2**64 - 1]

# a mutation of the metadata block: (kind, position, value)
meta_op = hst.tuples(hst.sampled_from(["flip", "set", "insert", "delete", "varint", "copy"]),
                     hst.integers(0, 10**6), hst.integers(0, 10**6), hst.sampled_from(INTERESTING))


def mutate_meta(meta: bytes, ops) -> bytes:
    m = bytearray(meta)
    for kind, pos, arg, val in ops:
        if not m:
            m = bytearray(b"\0")
        p = pos % len(m)
        if kind == "flip":
            m[p] ^= 1 << (arg % 8)
        elif kind == "set":
            m[p] = val & 0xFF if arg % 2 else arg & 0xFF
        elif kind == "insert":
            m[p:p] = bytes([arg & 0xFF]) * (1 + arg % 5)
        elif kind == "delete":
            del m[p:p + 1 + arg % 8]
        elif kind == "varint":                       # overwrite a varint-sized run with an interesting value
            n = 1
            while p + n - 1 < len(m) and m[p + n - 1] & 0x80 and n < 10:
                n += 1
            m[p:p + n] = uv(val)
        else:                                        # copy a slice (e.g. a tensor record) elsewhere
            q = arg % len(m)
            m[q:q] = m[p:p + 1 + val % 64]
    return bytes(m)


def mutate_payload(ops):
    """The payload with words changed and every stripe CRC recomputed: only the decoder can tell."""
    words = GOOD_C.payload.copy()
    for pos, bit in ops:
        words[pos % len(words)] ^= np.uint32(1 << (bit % 32))
    crcs_at = {}                                  # per stream (the tensors of a group stream share its CRCs)
    for s in GOOD_C.streams:
        lo, crcs, p = s.offset // 4, [], 0
        for n in np.asarray(s.stripe_words, np.int64):
            crcs.append(zlib.crc32(words[lo + p:lo + p + n].astype("<u4").tobytes()))
            p += n
        crcs_at[s.offset] = np.array(crcs, np.uint32)
    tensors = [dataclasses.replace(t, stripe_words=t.stripe_words.copy(), attrs=dict(t.attrs),
                                   stripe_crcs=crcs_at.get(t.offset, t.stripe_crcs) if t.numel else t.stripe_crcs)
               for t in GOOD_C.tensors]
    return ct.to_bytes(ct.Container(GOOD_C.tables, tensors, words)), words


def _index_key(c):
    tables = [(ts.word_bits, [tuple(vars(cl).values()) for cl in ts.classes], ts.lut3.tolist()) for ts in c.tables]
    tensors = [(t.name, t.dtype, t.shape, t.attrs, t.table, t.stripe_len, t.offset, t.stripe_words.tolist(),
                t.stream, t.word_offset, t.stream_numel) for t in c.tensors]
    return tables, tensors


def same_index(c, ref=None) -> bool:
    """The index (tables included: they decide what the stripes decode to) is the original one."""
    return _index_key(c) == _index_key(GOOD_C if ref is None else ref)


def check_case(data: bytes, original_payload: bool = False, ref=None):
    """Decode ``data`` under the time and memory bounds; return the outcome ("error" or "ok")."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        c = ct.parse_index(data)
        out = codec.decompress(c, max_output=MAX_OUTPUT)
    except LutzError as e:
        msg = str(e)
        assert msg and "\n" not in msg, repr(msg)
        return "error"
    finally:
        dt = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert dt < CASE_SECONDS, f"case took {dt:.1f} s"
        assert peak < MEMORY_CAP, f"case traced {peak} bytes"
    names = [t.name for t in c.tensors]
    assert list(out) == names and len(set(names)) == len(names)           # no tensor lost or merged
    for t in c.tensors:
        a = out[t.name]
        assert a.shape == tuple(t.shape) and a.dtype == ct.DTYPES[ct.DTYPE_CODES[t.dtype]][2], t.name
    if same_index(c, ref) and original_payload:
        for k, a in ARRAYS.items():
            assert np.array_equal(out[k], a), k
    return "ok"


def test_the_unmutated_file_decodes_exactly():
    assert check_case(GOOD, original_payload=True) == "ok"


@given(ops=hst.lists(meta_op, min_size=1, max_size=4))
@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_metadata_with_recomputed_crcs(ops):
    """Mutated tables and tensor index, valid header and metadata CRC: only the semantic checks stand."""
    check_case(assemble(mutate_meta(META, ops), PAYLOAD), original_payload=True)


def test_the_unmutated_compressed_block_decodes_exactly():
    assert FLAGS_Z == ct.META_LZMA and RAW_Z == META_LEN
    assert check_case(assemble(META_Z, PAYLOAD, flags=FLAGS_Z, reserved=RAW_Z), original_payload=True) == "ok"


@given(ops=hst.lists(meta_op, min_size=1, max_size=4), raw=hst.sampled_from([0, -1, 1, None]))
@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_compressed_metadata_with_recomputed_crcs(ops, raw):
    """Mutated LZMA2 block (and its length field off by one or not), valid header and metadata CRC."""
    block = mutate_meta(META_Z, ops)
    reserved = RAW_Z + raw if raw is not None else 256 * len(block)
    check_case(assemble(block, PAYLOAD, flags=FLAGS_Z, reserved=reserved), original_payload=True)


def test_the_unmutated_v2_file_decodes_exactly():
    assert ct.HEADER.unpack_from(GOOD_V2)[1] == 2 and not any(t.grouped for t in GOOD_V2_C.tensors)
    assert any(t.grouped for t in GOOD_C.tensors) and any(not t.grouped and t.numel for t in GOOD_C.tensors)
    assert check_case(GOOD_V2, original_payload=True, ref=GOOD_V2_C) == "ok"


@given(ops=hst.lists(meta_op, min_size=1, max_size=4))
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_v2_metadata_with_recomputed_crcs(ops):
    """The version-2 reader under the same mutations (a second seed)."""
    check_case(assemble(mutate_meta(META_V2, ops), PAYLOAD_V2, version=2), original_payload=True, ref=GOOD_V2_C)


@given(ops=hst.lists(hst.tuples(hst.integers(0, 10**6), hst.integers(0, 31)), min_size=1, max_size=6))
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_payload_with_recomputed_stripe_crcs(ops):
    data, _ = mutate_payload(ops)
    check_case(data)


@given(field=hst.sampled_from(["version", "flags", "reserved", "meta_len", "payload_len"]),
       val=hst.sampled_from(INTERESTING), extra=hst.sampled_from([b"", b"\0" * 4, b"\0" * 7]))
@settings(max_examples=120, deadline=None, derandomize=True, database=None)
def test_fuzz_header_fields_with_recomputed_crc(field, val, extra):
    kw = {field: val & {"version": 0xFFFF, "flags": 0xFFFF, "reserved": 0xFFFFFFFF, "meta_len": 0xFFFFFFFF,
                        "payload_len": 2**64 - 1}[field]}
    data = assemble(META, PAYLOAD + extra, **kw)
    outcome = check_case(data, original_payload=True)
    if outcome == "ok":                                   # only the values the format allows are accepted
        assert extra == b"" and (field, kw[field]) in {("version", 3), ("flags", 0), ("reserved", 0),
                                                       ("meta_len", META_LEN), ("payload_len", len(PAYLOAD))}


@given(ops=hst.lists(hst.tuples(hst.sampled_from(["shape", "S", "offset", "words", "table", "dtype", "name", "stream",
                                                  "word_offset", "stream_numel"]),
                                hst.integers(0, 6), hst.sampled_from(INTERESTING)), min_size=1, max_size=3))
@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_index_fields(ops):
    """Whole index fields changed through the writer (well-formed varints, right CRCs): the layout checks."""
    tensors = [dataclasses.replace(t, stripe_words=t.stripe_words.copy(), stripe_crcs=t.stripe_crcs.copy(),
                                   attrs=dict(t.attrs)) for t in GOOD_C.tensors]
    for field, i, val in ops:
        t = tensors[i % len(tensors)]
        if field == "shape":
            t.shape = tuple(t.shape[:-1]) + (val % 2**63,) if t.shape else (val % 2**63,)
        elif field == "S":
            t.stripe_len = val
        elif field == "offset":
            t.offset = val
        elif field == "words" and len(t.stripe_words):
            t.stripe_words = t.stripe_words.astype(np.int64)
            t.stripe_words[val % len(t.stripe_words)] = val % 70
        elif field == "table":
            t.table = val % 4
        elif field == "dtype":
            t.dtype = list(ct.DTYPE_CODES)[val % len(ct.DTYPE_CODES)]
        elif field == "name":
            t.name = tensors[val % len(tensors)].name
        elif field == "stream":
            t.stream = None if val == 2**64 - 1 else val % 5
        elif field == "word_offset":
            t.word_offset = val
        elif field == "stream_numel":
            t.stream_numel = val
    try:
        data = ct.to_bytes(ct.Container(GOOD_C.tables, tensors, GOOD_C.payload))
    except LutzError:
        return                                            # the writer refuses it: nothing to read
    except OverflowError:
        return                                            # a value no varint can carry
    check_case(data, original_payload=True)


# ------------------------------------------------------------------------------------------- the CLI
def _limited():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (CLI_ADDRESS_SPACE, CLI_ADDRESS_SPACE))


def cli_case(tmp_path, data: bytes, i: int):
    src, out = tmp_path / f"c{i}.lutz", tmp_path / f"c{i}.npz"
    src.write_bytes(data)
    code = "import sys; from lutzip import cli; sys.exit(cli.main())"
    for argv in (["decompress", str(src), "-o", str(out)], ["info", str(src), "--json"]):
        r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120,
                           preexec_fn=_limited)
        if r.returncode == 0:
            assert r.stderr == "", r.stderr
            if argv[0] == "decompress":
                idx = ct.parse_index(data)
                with np.load(out) as z:
                    assert sorted(z.files) == sorted(t.name for t in idx.tensors)
        else:
            assert r.returncode == 2 and r.stderr.startswith("lutzip: error:") and r.stderr.count("\n") == 1, \
                (argv, r.returncode, r.stderr[-2000:])
            assert not out.exists() or argv[0] == "info"
        out.unlink(missing_ok=True)


def _cli_cases(n, seed):
    rng = np.random.default_rng(seed)
    for i in range(n):
        ops = [(str(rng.choice(["flip", "set", "insert", "delete", "varint", "copy"])), int(rng.integers(10**6)),
                int(rng.integers(10**6)), int(rng.choice(INTERESTING))) for _ in range(int(rng.integers(1, 4)))]
        yield assemble(mutate_meta(META, ops), PAYLOAD)


def test_fuzz_cli_on_mutated_files(tmp_path):
    """Whole commands in a subprocess with an address-space cap: exit 0 and every tensor, or one error line."""
    for i, data in enumerate(_cli_cases(4, 1)):
        cli_case(tmp_path, data, i)


# ------------------------------------------------------------------------------------------ long runs
@pytest.mark.slow
@given(ops=hst.lists(meta_op, min_size=1, max_size=8))
@settings(max_examples=20000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_fuzz_metadata_long(ops):
    check_case(assemble(mutate_meta(META, ops), PAYLOAD), original_payload=True)


@pytest.mark.slow
@given(ops=hst.lists(hst.tuples(hst.integers(0, 10**6), hst.integers(0, 31)), min_size=1, max_size=12))
@settings(max_examples=5000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_fuzz_payload_long(ops):
    data, _ = mutate_payload(ops)
    check_case(data)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_fuzz_cli_long(tmp_path):
    for i, data in enumerate(_cli_cases(150, int.from_bytes(os.urandom(4), "little"))):
        cli_case(tmp_path, data, i)
