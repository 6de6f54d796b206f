"""Choosing table sets: which classes, of which kinds and sizes, and what goes into LUT3.

``greedy_tableset`` is the published scheme (classes of equal rounded code length, power-of-two sizes,
raw residual) and serves as the baseline.
"""
from __future__ import annotations

import math

import numpy as np

from .huffman import limited_code_lengths
from .tables import LUT, MAX_CLASSES, MAX_LUT3, RANGE, ClassSpec, TableSet


def histogram(words: np.ndarray, word_bits: int) -> np.ndarray:
    return np.bincount(np.asarray(words, np.int64).reshape(-1), minlength=1 << word_bits)


def _assign_lengths(freqs, L):
    lens = limited_code_lengths([max(int(f), 1) for f in freqs], L)
    return lens


def greedy_tableset(words: np.ndarray, word_bits: int, L: int = 8, lut3_max: int = MAX_LUT3) -> TableSet:
    """The published greedy grouping: a baseline, not the best the format can do."""
    hist = histogram(words, word_bits)
    total = int(hist.sum())
    order = np.argsort(-hist, kind="stable")
    order = order[hist[order] > 0]
    lut3, classes, freqs = [], [], []
    i = 0
    while i < len(order) and len(classes) < MAX_CLASSES - 1:
        p = hist[order[i]] / total
        bits = round(-math.log2(p))
        j = i
        while j < len(order) and round(-math.log2(hist[order[j]] / total)) == bits:
            j += 1
        size = 1 << math.ceil(math.log2(j - i)) if j - i > 1 else 1
        if len(lut3) + size > lut3_max:
            break
        members = order[i:i + size]
        k = int(math.log2(size))
        classes.append([LUT, k, len(lut3)])
        freqs.append(int(hist[members].sum()))
        lut3.extend(int(v) for v in members)
        lut3.extend([int(members[-1])] * (size - len(members)))
        i += len(members)
    # raw residual class covers everything, including values already in LUT3 (cheaper symbols win)
    classes.append([RANGE, word_bits, 0])
    freqs.append(int(hist[order[i:]].sum()) if i < len(order) else 0)
    lens = _assign_lengths(freqs, L)
    return TableSet(word_bits, [ClassSpec(lens[j], kind, k, param) for j, (kind, k, param) in enumerate(classes)],
                    np.array(lut3, np.uint16)).validate()


def best_tableset(words: np.ndarray, word_bits: int, L: int = 8, lut3_max: int = MAX_LUT3) -> TableSet:
    """The encoder's default choice of table set (for now: the greedy baseline)."""
    return greedy_tableset(words, word_bits, L, lut3_max)
