"""Shared by the benchmark scripts: random forests and a best-of-N timer."""

from __future__ import annotations

import math
import time

import numpy as np


def random_forest(rng, n: int, depth: int = 100, shuffle: bool = True) -> np.ndarray:
    """Forest of depth ``depth``: 1% roots, every other node's parent on the level above;
    with ``shuffle`` the nodes are stored in random order (parents not before children)."""
    roots = max(1, n // 100)
    inner = rng.integers(1, depth, size=n - roots)
    inner[: depth - 1] = np.arange(1, depth)  # every level populated
    level = np.concatenate([np.zeros(roots, dtype=np.int64), np.sort(inner)])
    starts = np.searchsorted(level, np.arange(depth + 1))
    parents = np.full(n, -1)
    for d in range(1, depth):
        a, b = starts[d], starts[d + 1]
        parents[a:b] = rng.integers(starts[d - 1], starts[d], size=b - a)
    if shuffle:
        perm = rng.permutation(n)
        inv = np.argsort(perm)
        parents = np.where(parents[perm] >= 0, inv[np.maximum(parents[perm], 0)], -1)
    return parents


def best_ms(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in milliseconds."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def markdown_table(headers, rows) -> str:
    """A Markdown table of string cells."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
