"""Column-wise arithmetic on structure-of-arrays rows for :mod:`.fields`: ``(3, M)``
vectors and ``(9, M)`` 3x3 matrices given as column rows (each row one component of M
matrices), so that every step is one numpy call on long contiguous rows."""

from __future__ import annotations

import numpy as np

_LOW, _HIGH = 1e-150, 1e150


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Column-wise dot products of ``(3, M)`` vectors: ``(M,)``."""
    return np.einsum("im,im->m", a, b)


def _cross(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Column-wise cross products of ``(3, M)`` vectors: ``(3, M)`` (into ``out``)."""
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        np.multiply(a[j], b[k], out=out[i])
        out[i] -= a[k] * b[j]
    return out


def _lin(cols: np.ndarray, v: np.ndarray, out=None) -> np.ndarray:
    """``(3x3 given by column rows cols (9, M)) @ v (3, M)``: ``(3, M)``."""
    return np.einsum("kim,km->im", cols.reshape(3, 3, -1), v, out=out)


def _matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray, rows: str = "kim") -> np.ndarray:
    """Products ``a @ b`` of 3x3 matrices ``(3, 3, m)`` into ``out``, all three given as
    column blocks (column, row, m); ``rows="ikm"``: ``a`` given as row blocks instead.

    One einsum per column of the product: a single einsum for all three
    (``"kim,jkm->jim"``) runs at its speed only where m is a multiple of 8192 (numpy's
    buffer size), and 2 to 4x slower elsewhere; a matrix-vector einsum is as fast at
    every m."""
    for j in range(3):
        np.einsum(f"{rows},km->im", a, b[j], out=out[j])
    return out


def _max_abs_arcsin_deg(cos: np.ndarray) -> np.ndarray:
    """``max_k |degrees(arcsin(cos_k))|`` of ``(3, M)`` cosines (arcsin is monotonic)."""
    return np.degrees(np.arcsin(np.minimum(np.abs(cos).max(axis=0), 1.0)))


def _pair_cosines(cols: np.ndarray, sq: np.ndarray) -> np.ndarray:
    """Cosines ``(3, M)`` of the XY, YZ, ZX column pairs of ``cols (9, M)``; 0 where a
    column is zero (as :func:`~.decompose.shear_angles`)."""
    x, y, z = cols[0:3], cols[3:6], cols[6:9]
    dots = np.empty((3, cols.shape[1]))
    for k, (u, v) in enumerate(((x, y), (y, z), (z, x))):
        np.einsum("im,im->m", u, v, out=dots[k])
    denom = np.sqrt(sq * sq[[1, 2, 0]])
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0.0)


def _squares(cols: np.ndarray) -> np.ndarray:
    """Squared lengths ``(3, M)`` of the X, Y, Z columns of ``cols (9 or 12, M)``."""
    c = cols[0:9].reshape(3, 3, -1)
    return np.einsum("jim,jim->jm", c, c)


def _ordinary(sq: np.ndarray) -> np.ndarray:
    """``(M,)`` bool: every squared column length in ``[1e-150, 1e150]``."""
    return ((sq >= _LOW) & (sq <= _HIGH)).all(axis=0)


def _corner_distance(diff: np.ndarray, lo: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Largest distance ``(M,)`` of the 8 corners of boxes ``lo + [0, size]`` moved by the
    affine difference ``diff (12, M)`` (as :func:`~.metrics.box_corner_distance`)."""
    base = _lin(diff[0:9], lo) + diff[9:12]
    e0, e1, e2 = diff[0:3] * size[0], diff[3:6] * size[1], diff[6:9] * size[2]
    corners = np.empty((8,) + base.shape)
    corners[0] = base
    np.add(base, e0, out=corners[1])
    np.add(base, e1, out=corners[2])
    np.add(corners[1], e1, out=corners[3])
    np.add(corners[0:4], e2, out=corners[4:8])
    return np.sqrt(np.einsum("kim,kim->km", corners, corners).max(axis=0))
