"""Test-only helpers shared by the dynamics tests: a matrix exponential and random skews."""

from __future__ import annotations

import numpy as np


def expm(m):
    """Matrix exponential of (..., n, n) by scaling and squaring + Taylor (test-only)."""
    m = np.asarray(m, dtype=float)
    size = float(np.abs(m).sum(axis=-1).max()) if m.size else 0.0
    k = max(0, int(np.ceil(np.log2(size))) + 2) if size > 0 else 0
    a = m / 2.0**k
    out = np.broadcast_to(np.eye(m.shape[-1]), m.shape).copy()
    term = out.copy()
    for i in range(1, 18):
        term = term @ a / i
        out = out + term
    for _ in range(k):
        out = out @ out
    return out


def random_skew(rng, n, shape=(), scale=1.0):
    a = rng.normal(scale=scale, size=tuple(shape) + (n, n))
    return a - np.swapaxes(a, -1, -2)
