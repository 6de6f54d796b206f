"""The row-symmetry cost model (lutzip.codec.symmetry; not a format): a windowed DFT basis is found as mirrored
rows and sign-pattern copies, exactly, and what a decoder would rebuild from the reduced words (``expand``) is the
tensor bit for bit; a changed word breaks the relation; random tensors have none; negation as a decoder would do
it (two's complement, float sign bit except +0)."""
import numpy as np
import pytest

from lutzip.codec import arrays as codec
from lutzip.codec import symmetry as sy


def dft_basis(N=64, dtype="int8"):
    """A Hann-windowed DFT basis like silero-vad's stft_conv.weight: N/2+1 cosine rows, then N/2+1 sine rows,
    quantised symmetrically (int8 / int16) or rounded to bfloat16."""
    n = np.arange(N)
    fold = np.minimum(n, N - n)                        # angles folded into [0, pi]: exactly symmetric values
    win = 0.5 - 0.5 * np.cos(2 * np.pi * fold / N)
    m = (np.arange(N // 2 + 1)[:, None] * n) % N
    mf = np.minimum(m, N - m)
    sign = np.where(m > N // 2, -1.0, 1.0)
    w = np.concatenate([win * np.cos(2 * np.pi * mf / N), -win * sign * np.sin(2 * np.pi * mf / N)])
    w[np.abs(w) < 1e-12] = 0.0                         # exact zeros, as a basis computed in closed form has
    if dtype == "bfloat16":
        import ml_dtypes
        return w.astype(np.float32).astype(ml_dtypes.bfloat16)
    top = 127 if dtype == "int8" else 32767
    return np.rint(w / np.abs(w).max() * top).astype(dtype)


@pytest.mark.parametrize("dtype", ["int8", "int16", "bfloat16"])
def test_dft_basis_rows_found_and_rebuilt(dtype):
    pytest.importorskip("ml_dtypes") if dtype == "bfloat16" else None
    N = 64
    a = dft_basis(N, dtype)
    words, name = codec.to_words(a)
    kinds = sy.find(words, a.shape, name)
    H = N // 2 + 1
    cos, sin = kinds[:H], kinds[H:]
    # cosine rows k <= N/4 mirrored; the others copies of row N/2 - k with alternating signs
    assert all(kd == sy.MIRROR for kd, _, _ in cos[:N // 4 + 1])
    assert all(kd == sy.COPY and ref == N // 2 - i for i, (kd, ref, _) in enumerate(cos) if i > N // 4)
    # sine row 0 is all zeros (mirrored), rows 1..N/4 negated mirrors, the rest copies
    assert sin[0][0] == sy.MIRROR
    assert all(kd == sy.NEG_MIRROR for kd, _, _ in sin[1:N // 4 + 1])
    assert all(kd == sy.COPY and ref == H + N // 2 - i for i, (kd, ref, _) in enumerate(sin) if i > N // 4)
    r = sy.reduce(words, a.shape, kinds)
    mirrored = sum(kd in (sy.MIRROR, sy.NEG_MIRROR) for kd, _, _ in kinds)
    assert r.size == mirrored * (N // 2 + 1) and r.size < words.size // 3
    assert np.array_equal(sy.expand(r, a.shape, kinds, name), words)
    with pytest.raises(ValueError):
        sy.expand(r[:-1], a.shape, kinds, name)
    # mirrors alone: every row mirrored, half the words
    only = sy.find(words, a.shape, name, allowed=(sy.MIRROR, sy.NEG_MIRROR))
    assert sy.summary(only)["plain"] == 0 and sy.summary(only)["copy"] == 0
    assert np.array_equal(sy.expand(sy.reduce(words, a.shape, only), a.shape, only, name), words)


def test_one_changed_word_breaks_the_relation():
    a = dft_basis(64, "int8")
    a[3, 40] += 1                                      # a mirrored cosine row, in its mirrored half
    words, name = codec.to_words(a)
    kinds = sy.find(words, a.shape, name)
    assert kinds[3][0] == sy.PLAIN
    assert kinds[32 - 3][0] != sy.COPY or kinds[32 - 3][1] != 3          # row 29 no longer copies row 3
    r = sy.reduce(words, a.shape, kinds)
    assert np.array_equal(sy.expand(r, a.shape, kinds, name), words)


def test_copies_with_each_pattern_and_random_rows_plain():
    rng = np.random.default_rng(0)
    a = rng.integers(-100, 100, (12, 32)).astype(np.int8)
    a[5] = -a[2]
    alt = np.where(np.arange(32) % 2, -1, 1)
    a[7] = a[1] * alt
    a[9] = a[4] * -alt
    a[11] = a[0]
    words, name = codec.to_words(a)
    kinds = sy.find(words, a.shape, name)
    assert kinds[5] == (sy.COPY, 2, "-") and kinds[7] == (sy.COPY, 1, "+-")
    assert kinds[9] == (sy.COPY, 4, "-+") and kinds[11] == (sy.COPY, 0, "+")
    assert sum(k[0] == sy.PLAIN for k in kinds) == 8
    assert np.array_equal(sy.expand(sy.reduce(words, a.shape, kinds), a.shape, kinds, name), words)
    # unsigned words are never negated: only the plain copy is found
    u = a.view(np.uint8)
    kinds_u = sy.find(codec.to_words(u)[0], u.shape, "uint8")
    assert kinds_u[11] == (sy.COPY, 0, "+") and kinds_u[5][0] == sy.PLAIN
    assert sy.descriptor_bytes(kinds) == 1 + 1 + 8 + 4                 # sparse: 4 rows x (gap, kind), 4 refs


def test_negation_as_a_decoder():
    assert sy.negate(np.array([0x80, 0x01, 0x00], np.uint16), "int8").tolist() == [0x80, 0xFF, 0x00]
    assert sy.negate(np.array([0x8000, 0x7FFF], np.uint16), "int16").tolist() == [0x8000, 0x8001]
    assert sy.negate(np.array([0x0000, 0x3F80, 0xBF80, 0x8000], np.uint16), "bfloat16").tolist() == \
        [0x0000, 0xBF80, 0x3F80, 0x8000]
    assert sy.negate(np.array([1], np.uint8), "uint8") is None


def test_estimate_smaller_for_a_basis_same_for_random():
    basis = {"stft": dft_basis(128, "int8"), "fc": np.random.default_rng(1).integers(-60, 60, (64, 64)).astype(np.int8)}
    r = sy.estimate(basis)
    assert set(r["tensors"]) == {"stft"}
    assert r["descriptor"] > 0 and r["with_rows"] < 0.6 * r["base"]
    rnd = {"fc": basis["fc"]}
    r2 = sy.estimate(rnd)
    assert r2["tensors"] == {} and r2["with_rows"] == r2["base"]


def test_estimate_keeps_rows_that_do_not_pay_plain():
    """Two equal all-zero rows in a random tensor: a copy is found, but coding the tensor without that row saves
    less than its descriptor, so the estimate leaves the tensor as it is."""
    a = np.random.default_rng(2).integers(-60, 60, (64, 64)).astype(np.int8)
    a[10] = 0
    a[11] = 0
    a[12] = 0
    kinds = sy.find(codec.to_words(a)[0], a.shape, "int8")
    assert sy.summary(kinds)["copy"] == 2
    r = sy.estimate({"fc": a})
    assert r["tensors"] == {} and r["with_rows"] == r["base"] and r["descriptor"] == 0


def test_main_prints_the_table(tmp_path, capsys):
    path = tmp_path / "basis.npz"
    np.savez(path, stft=dft_basis(128, "int8").astype(np.float32), fc=np.random.default_rng(3).normal(0, 1, (64, 64)))
    assert sy.main([str(path), "--cells", "int8:0,int16:90"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[2].startswith(f"| {path} | int8 0 % |") and "| int16 90 % |" in out[3]
    cols = [c.strip() for c in out[2].split("|")[1:-1]]
    base, mirror, both = (int(c) for c in cols[2:5])
    assert both < mirror < base and cols[-1].startswith("stft ")
    assert sy.main([str(path), "--cells", "int4:0"]) == 2
