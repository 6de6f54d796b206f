"""Length-limited Huffman code lengths (package-merge)."""
from __future__ import annotations

from lutzip.errors import TableError


def limited_code_lengths(freqs, max_len: int) -> list:
    """Optimal code lengths for ``freqs`` with no length above ``max_len`` (package-merge).

    Symbols of frequency 0 get length 0 (no code). A single used symbol gets length 1.
    """
    used = [i for i, f in enumerate(freqs) if f > 0]
    lengths = [0] * len(freqs)
    if not used:
        return lengths
    if len(used) == 1:
        lengths[used[0]] = 1
        return lengths
    if len(used) > (1 << max_len):
        raise TableError(f"{len(used)} classes cannot have codes of at most {max_len} bits")
    leaves = sorted((freqs[i], (i,)) for i in used)
    packages = list(leaves)
    for _ in range(max_len - 1):
        merged = [(packages[j][0] + packages[j + 1][0], packages[j][1] + packages[j + 1][1])
                  for j in range(0, len(packages) - 1, 2)]
        packages = sorted(leaves + merged, key=lambda x: x[0])
    for _, syms in packages[:2 * len(used) - 2]:
        for s in syms:
            lengths[s] += 1
    return lengths
