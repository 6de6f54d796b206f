"""MM2S buffer layout of ``lutzip_axi`` (docs/AXI.md) and the top's expected output: one implementation for
the host driver, the simulator and the tests.

* :func:`mm2s_words` -- the words of one MM2S transfer: per stripe a descriptor word, then the stripe's words.
* :func:`expected_out_words` -- the decoded words the top emits for those stripes (software decoder).
* :func:`out_bytes` / :func:`out_capacity` -- those words as S2MM bytes / the S2MM buffer size.
* :func:`model_transfer` -- a software model of the top for *any* input (garbage included): output words
  and per-stripe failure codes, from the core's reference model (:mod:`lutzip.hdl.flows.model`).
"""
from __future__ import annotations

import numpy as np

from lutzip.errors import LutzError
from lutzip.firmware.axi import regs as R

MAX_FIELD = 1 << 16  #: n_i and P_i are 1..65536 (16-bit fields holding value - 1)


class BufferError(LutzError):
    """A tensor or stripe run cannot be laid into an MM2S buffer (bad stripe range, field out of range)."""


def descriptor(n: int, p: int) -> int:
    """The descriptor word of one stripe.

    Parameters
    ----------
    n : int
        Decoded words of the stripe (1..65536).
    p : int
        Payload words (header excluded, 1..65536).

    Returns
    -------
    int
        ``((n - 1) << 16) | (p - 1)``.

    Raises
    ------
    BufferError
        If ``n`` or ``p`` is out of range.
    """
    if not (1 <= n <= MAX_FIELD and 1 <= p <= MAX_FIELD):
        raise BufferError(f"stripe of {n} words with {p} payload words does not fit a descriptor (1..65536 each)")
    return ((n - 1) << 16) | (p - 1)


def _unit(container, tensor):
    """What one transfer moves for ``tensor``: the tensor itself when it owns its stripes, else the group
    stream holding it (format version 3: the DMA moves whole stripes; the host splits the words by the index).
    A :class:`~lutzip.codec.container.Stream` is taken as it is."""
    from lutzip.codec.container import TensorEntry
    t = container.tensor(tensor) if isinstance(tensor, str) else tensor
    return container.stream_of(t) if isinstance(t, TensorEntry) and t.grouped else t


def _run(t, stripes):
    ns = len(t.stripe_words)
    if stripes is None:
        return 0, ns
    if isinstance(stripes, range) and stripes.step == 1:
        a, b = stripes.start, stripes.stop
    elif isinstance(stripes, slice):
        a, b, step = stripes.indices(ns)
        if step != 1:
            raise BufferError(f"stripes {stripes!r}: a run of consecutive stripes is needed")
    else:
        idx = [int(i) for i in stripes]
        if not idx or idx != list(range(idx[0], idx[0] + len(idx))):
            raise BufferError(f"stripes {stripes!r}: a non-empty run of consecutive stripes is needed")
        a, b = idx[0], idx[-1] + 1
    if not 0 <= a < b <= ns:
        raise BufferError(f"stripes {a}..{b - 1} are out of range: tensor {t.name!r} has {ns} stripes")
    return a, b


def stripe_sizes(t):
    """Word counts per stripe of a tensor.

    Parameters
    ----------
    t : TensorEntry
        The tensor (its stripe index).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        ``n`` (decoded words, from numel and the stripe length) and ``P`` (payload words) per stripe.
    """
    sw = np.asarray(t.stripe_words, np.int64)
    k = np.arange(len(sw), dtype=np.int64)
    n = np.minimum(int(t.stripe_len), int(t.numel) - k * int(t.stripe_len))
    return n, sw - 1


def mm2s_words(container, tensor, stripes=None) -> np.ndarray:
    """The MM2S buffer of one transfer: for each stripe its descriptor, header and payload words.

    Parameters
    ----------
    container : lutzip.codec.container.Container
        The container (its payload and stripe index).
    tensor : TensorEntry, str or Stream
        The tensor (or its name; a tensor of a group stream stands for that stream), or a stream.
    stripes : range, slice or sequence of int, optional
        A run of consecutive stripe indices (default: all stripes of the tensor or stream).

    Returns
    -------
    numpy.ndarray of uint32
        ``sum(n_words) + number of stripes`` words; the DMA sets ``tlast`` on the last.
    """
    t = _unit(container, tensor)
    a, b = _run(t, stripes)
    n, p = stripe_sizes(t)
    n, p = n[a:b], p[a:b]
    if np.any(n < 1) or np.any(n > MAX_FIELD) or np.any(p < 1) or np.any(p > MAX_FIELD):
        raise BufferError(f"tensor {t.name!r}: a stripe's word counts do not fit a descriptor (1..65536)")
    sw = np.asarray(t.stripe_words, np.int64)
    starts = np.concatenate([[0], np.cumsum(sw)])
    words = container.stripe_payload(t)[starts[a]:starts[b]]
    desc = (((n - 1) << 16) | (p - 1)).astype(np.uint32)
    return np.insert(np.asarray(words, np.uint32), (starts[a:b] - starts[a]).astype(np.int64), desc)


def expected_out_words(container, tensor, stripes=None) -> np.ndarray:
    """The decoded words the top emits for :func:`mm2s_words` of the same arguments (software decoder).

    Returns
    -------
    numpy.ndarray of uint16
        The words of the stripes in order (8-bit tensors zero-extended).
    """
    from lutzip.codec.arrays import row_args
    from lutzip.codec.bitstream import decode_stripes
    t = _unit(container, tensor)
    a, b = _run(t, stripes)
    ts = container.tables[t.table]
    w = decode_stripes(container.stripe_payload(t), t.stripe_words, t.numel, t.stripe_len, ts, t.name,
                       out=np.empty(t.numel, np.uint8 if ts.word_bits == 8 else np.uint16),
                       rows=row_args(container, t)).astype(np.uint16)
    S = int(t.stripe_len)
    return w[a * S:min(b * S, int(t.numel))]


def out_bytes(words, W=16) -> bytes:
    """Decoded words as the S2MM stream carries them.

    Parameters
    ----------
    words : array_like of int
        Decoded words.
    W : int
        Word width, 8 or 16.

    Returns
    -------
    bytes
        Little-endian, ``W / 8`` bytes per word.
    """
    w = np.asarray(words)
    return (w.astype("<u2") if W == 16 else (w & 0xFF).astype(np.uint8)).tobytes()


def out_capacity(n_words: int, W=16, OUT_BYTES=4) -> int:
    """Size of the S2MM buffer.

    Parameters
    ----------
    n_words : int
        Decoded words of the transfer.
    W : int
        Word width, 8 or 16.
    OUT_BYTES : int
        Beat width in bytes.

    Returns
    -------
    int
        Bytes of whole beats holding ``n_words`` words.
    """
    nb = int(n_words) * (W // 8)
    return -(-nb // OUT_BYTES) * OUT_BYTES


def _core_model(ops, L, LUT3_DEPTH, W):
    """``packet -> (words, code)`` of the core's reference model after the table writes ``ops``."""
    from lutzip.hdl.flows.model import stripe_output, tables_from_ops
    tables = tables_from_ops(ops, L, LUT3_DEPTH, W)
    return lambda pk: stripe_output(pk, tables)


def model_transfer(in_words, ops, L=8, W=16, LUT3_DEPTH=4096):
    """What the top emits for one MM2S transfer ``in_words`` (tlast on the last), garbage included.

    Parameters
    ----------
    in_words : sequence of int
        The transfer's words (descriptors and stripe words, or anything).
    ops : list of (sel, addr, data)
        The table writes done before (``lutzip.hdl.flows.model.table_ops``).

    Returns
    -------
    (numpy.ndarray, list of (int, int))
        The output words (uint16) and ``(stripe index, failure code)`` per failed stripe (docs/AXI.md).
    """
    core = _core_model(ops, L, LUT3_DEPTH, W)
    words = [int(v) & 0xFFFFFFFF for v in in_words]
    out, fails = [], []
    i, s = 0, 0
    mask = (1 << W) - 1
    while i < len(words):
        d = words[i]
        i += 1
        n, p1 = (d >> 16) + 1, (d & 0xFFFF) + 1
        if i >= len(words):  # tlast on the descriptor
            out += [0] * n
            fails.append((s, R.ERR_TRUNCATED))
            break
        pk = words[i:i + p1 + 1]
        i += len(pk)
        trunc = len(pk) < p1 + 1
        data, code = core(pk)
        data = [int(v) & mask for v in data]
        mism = len(data) != n and not code
        data = (data + [0] * n)[:n]
        out += data
        c = R.ERR_TRUNCATED if trunc else code if code else R.ERR_MISMATCH if mism else 0
        if c:
            fails.append((s, c))
        s += 1
    return np.array(out, np.uint16), fails
