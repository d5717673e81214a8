"""Decomposition of affine matrices into translation, rotation, scale **and shear**, and
the shear angles themselves.

A 4x4 affine matrix holds 12 numbers; translation / rotation / scale only 9. Blender's
``Matrix.decompose()`` and its exporters take the column lengths as scale and the
normalised columns as rotation, and drop the rest without a word. Here the rest is
returned as a matrix, so that ``M == T @ R @ H @ S`` holds exactly:

- ``scale = sign * column lengths`` with ``sign = sign(det M3)`` on all three axes
  (Blender's convention for negative determinants: a mirrored matrix comes out with
  all three scales negative and the rotation of ``-M3 / lengths``);
- ``rotation`` is the Gram-Schmidt rotation of the signed, normalised columns: the X
  column keeps its direction exactly, Y is made perpendicular to X in their plane, Z
  completes a right-handed frame. With no shear this is simply the rotation;
- ``shear`` ``H = R^T N``, N the signed normalised columns: upper triangular with
  unit-length columns (or zero where the scale is zero), the identity exactly when the
  matrix is a TRS. Where the X and Y columns are parallel or zero (singular input) the
  nearest rotation is used and H is no longer triangular, but the product stays exact.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import InputError, as_array
from .rotations import matrix_to_quat

__all__ = [
    "Decomposition",
    "decompose",
    "shear_angles",
    "linear_part",
    "translation_part",
    "rotation_frames",
    "affine_inverse",
]

_TINY = 1e-12
#: Normalised Y closer than this to X's direction counts as parallel: Gram-Schmidt would
#: cancel catastrophically there, so the nearest (polar) rotation is used instead.
_PARALLEL = 1e-6


class Decomposition(NamedTuple):
    """Result of :func:`decompose`; batch shape ``B``.

    translation ``(B, 3)``, rotation ``(B, 4)`` unit wxyz with w >= 0,
    scale ``(B, 3)``, shear ``(B, 3, 3)`` (identity when there is none).
    ``matrix == T(translation) @ R(rotation) @ shear @ S(scale)`` exactly.
    """

    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray
    shear: np.ndarray

    @property
    def shear_deg(self) -> np.ndarray:
        """Shear angles ``(B, 3)`` in degrees, see :func:`shear_angles`."""
        return shear_angles(self.shear)

    def trs(self):
        """The :class:`~hierarchy_inspector.core.TRS` an exporter writes: shear dropped."""
        from .trs import TRS

        return TRS(self.translation, self.rotation, self.scale)


def _check_matrices(matrices, what: str) -> np.ndarray:
    m = as_array(matrices, what, (None, None))
    if m.shape[-2:] not in ((4, 4), (3, 3)):
        raise InputError(f"{what}: expected shape (..., 4, 4) or (..., 3, 3), got {m.shape}", what)
    return m


def linear_part(matrices, what: str = "matrices") -> np.ndarray:
    """Upper-left 3x3 ``(..., 3, 3)`` of ``(..., 4, 4)`` or ``(..., 3, 3)`` matrices."""
    return _check_matrices(matrices, what)[..., :3, :3]


def translation_part(matrices, what: str = "matrices") -> np.ndarray:
    """Translation column ``(..., 3)``; zeros for 3x3 input."""
    m = _check_matrices(matrices, what)
    return m[..., :3, 3] if m.shape[-1] == 4 else np.zeros(m.shape[:-2] + (3,))


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot product of ``(..., 3)`` vectors (einsum: fast on small axes)."""
    return np.einsum("...i,...i->...", a, b)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of ``(..., 3)`` vectors (faster than ``np.cross``)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def column_lengths(m3: np.ndarray) -> np.ndarray:
    """Lengths ``(..., 3)`` of the X, Y, Z columns of ``(..., 3, 3)`` matrices."""
    return np.sqrt(np.einsum("...ij,...ij->...j", m3, m3))


def _determinant3(m3: np.ndarray) -> np.ndarray:
    return _dot(m3[..., :, 0], _cross(m3[..., :, 1], m3[..., :, 2]))


def _nearest_rotation(n: np.ndarray) -> np.ndarray:
    """Polar rotation of (possibly singular) 3x3 matrices, det +1."""
    u, _, vt = np.linalg.svd(n)
    d = np.sign(np.linalg.det(u @ vt))
    d = np.where(d == 0.0, 1.0, d)
    u[..., :, 2] *= d[..., None]
    return u @ vt


def _gram_schmidt(n: np.ndarray) -> np.ndarray:
    """Right-handed frames ``(..., 3, 3)`` from columns of ``n``, X direction kept.

    Where X is zero or Y is parallel to X (singular input) the nearest rotation is used
    instead: any rotation fits the missing axes, and ``R^T n`` stays exact.
    """
    x = n[..., :, 0]
    y = n[..., :, 1]
    xlen = np.sqrt(_dot(x, x))[..., None]
    u0 = x / np.where(xlen > _TINY, xlen, 1.0)
    w1 = y - _dot(y, u0)[..., None] * u0
    w1len = np.sqrt(_dot(w1, w1))[..., None]
    u1 = w1 / np.where(w1len > _PARALLEL, w1len, 1.0)
    frame = np.empty(n.shape)
    frame[..., :, 0] = u0
    frame[..., :, 1] = u1
    frame[..., :, 2] = _cross(u0, u1)
    bad = (xlen[..., 0] <= _TINY) | (w1len[..., 0] <= _PARALLEL)
    if bad.any():
        frame[bad] = _nearest_rotation(n[bad])
    return frame


def rotation_frames(matrices) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rotation part of :func:`decompose` as matrices, cheaply.

    Returns ``(frame, scale, normalised)``: rotation matrices ``(..., 3, 3)``, signed
    scale ``(..., 3)`` and the signed normalised columns ``(..., 3, 3)``.
    """
    m3 = linear_part(matrices)
    lengths = column_lengths(m3)
    sign = np.where(_determinant3(m3) < 0.0, -1.0, 1.0)
    scale = sign[..., None] * lengths
    safe = np.where(lengths > _TINY, scale, np.inf)  # zero columns normalise to 0
    normalised = m3 / safe[..., None, :]
    return _gram_schmidt(normalised), scale, normalised


def affine_inverse(matrices) -> tuple[np.ndarray, np.ndarray]:
    """Inverses ``(..., 4, 4)`` of affine matrices (bottom row 0, 0, 0, 1), in closed form.

    Returns ``(inverse, singular)``: ``singular (...)`` is True where the 3x3 part has
    no inverse (determinant below 1e-12 of the product of its column lengths); those
    inverses hold zeros in the 3x3 part; callers decide what to do with them.
    Cheaper than ``np.linalg.inv`` for small batches (no LAPACK call) and exact in
    the affine structure.
    """
    m = _check_matrices(matrices, "matrices")
    c0, c1, c2 = m[..., :3, 0], m[..., :3, 1], m[..., :3, 2]
    rows = np.stack((_cross(c1, c2), _cross(c2, c0), _cross(c0, c1)), axis=-2)  # adjugate
    det = _dot(c0, rows[..., 0, :])
    size = np.prod(column_lengths(m[..., :3, :3]), axis=-1)
    singular = np.abs(det) <= 1e-12 * np.maximum(size, 1e-300)
    inv3 = rows / np.where(singular, 1.0, det)[..., None, None]
    inv3[singular] = 0.0
    out = np.zeros(m.shape[:-2] + (4, 4))
    out[..., :3, :3] = inv3
    if m.shape[-1] == 4:
        out[..., :3, 3] = -np.einsum("...ij,...j->...i", inv3, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out, singular


def decompose(matrices) -> Decomposition:
    """Split ``(..., 4, 4)`` (or ``(..., 3, 3)``) matrices into T, R, S and shear.

    Nothing is dropped: ``M == T @ R @ shear @ S`` to round-off, for singular and
    mirrored matrices too (a zero column gives zero scale on that axis).

    >>> import numpy as np
    >>> d = decompose(np.diag([2.0, 3.0, 4.0, 1.0]))
    >>> d.scale.tolist(), d.rotation.tolist(), bool(np.allclose(d.shear, np.eye(3)))
    ([2.0, 3.0, 4.0], [1.0, 0.0, 0.0, 0.0], True)
    >>> sheared = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> np.round(shear_angles(sheared), 6).tolist()  # X and Y meet at 45 degrees
    [45.0, 0.0, 0.0]
    """
    m = _check_matrices(matrices, "matrices")
    frame, scale, normalised = rotation_frames(m)
    shear = np.swapaxes(frame, -1, -2) @ normalised
    return Decomposition(translation_part(m), matrix_to_quat(frame), scale, shear)


def shear_angles(matrices) -> np.ndarray:
    """Shear in degrees ``(..., 3)``: how far the XY, YZ and ZX axis pairs are from 90.

    Positive when a pair leans together (angle below 90 degrees). Mirroring one axis
    flips the sign of the two pairs it belongs to; use ``abs`` for magnitudes. Pairs
    with a zero-length axis have no angle and report 0 (a collapsed axis shows no skew).
    Accepts ``(..., 4, 4)`` or ``(..., 3, 3)``; needs no decomposition, so it is cheap.
    """
    m3 = linear_part(matrices)
    x, y, z = m3[..., :, 0], m3[..., :, 1], m3[..., :, 2]
    sq = np.einsum("...ij,...ij->...j", m3, m3)  # squared lengths of X, Y, Z
    dots = np.stack((_dot(x, y), _dot(y, z), _dot(z, x)), axis=-1)
    denom = np.sqrt(sq * sq[..., [1, 2, 0]])
    cosine = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > _TINY * _TINY)
    return np.degrees(np.arcsin(np.clip(cosine, -1.0, 1.0)))
