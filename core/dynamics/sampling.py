"""Rates of sampled animation: velocity, acceleration, angular velocity and angular
acceleration from three affine matrices by central differences
(:func:`dynamics_from_samples`, :class:`SampledDynamics`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError, as_array, batch_shape, first_index, where
from ..rotations import matrix_to_quat, norm
from ._args import UNIFORM_TOLERANCE, _positive
from .packed import _cross, _perp, _t
from .transform import DynamicTransform

__all__ = ["SampledDynamics", "dynamics_from_samples"]


class SampledDynamics(NamedTuple):
    """Dynamics estimated from three samples (:func:`dynamics_from_samples`); batch ``B``.

    translation ``(B, n)``, rotation ``(B, n, n)`` and signed per-axis scale ``(B, n)`` at
    the middle sample; velocity, acceleration ``(B, n)``; omega, alpha: angular velocity
    and acceleration in the matrices' parent basis (world basis for world matrices,
    spatial convention ``dR/dt = hat(omega) R``), 3D ``(B, 3)``, 2D ``(B,)``.
    """

    translation: np.ndarray
    rotation: np.ndarray
    scale: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray

    def to_dynamic_transform(self) -> DynamicTransform:
        """As a :class:`DynamicTransform`; needs a uniform scale (raises naming the index)."""
        k = self.scale
        spread = k.max(axis=-1) - k.min(axis=-1) if k.size else np.zeros(k.shape[:-1])
        bad = spread > UNIFORM_TOLERANCE * np.abs(k).max(axis=-1, initial=0.0)
        if bad.any():
            idx = first_index(bad)
            values = ", ".join(f"{float(v):.6g}" for v in k[idx])
            raise InputError(
                f"scale{where(idx)} = ({values}): not uniform; a DynamicTransform has one scale factor "
                "(points still convert exactly: point_to_global / point_to_local with axis_scale)",
                "scale",
                idx,
            )
        n = k.shape[-1]
        w, al = (x[..., None] if n == 2 else x for x in (self.omega, self.alpha))
        return DynamicTransform(self.translation, self.rotation, k[..., 0], self.velocity, self.acceleration, w, al)


def _rotation_and_scale(lin: np.ndarray, what: str):
    """Rotation (Gram-Schmidt of the columns) and signed per-axis scale of ``(..., n, n)``.

    A negative determinant is Blender's convention in 3D (all three scales negative);
    in 2D the Y scale is negative.
    """
    n = lin.shape[-1]
    det = np.linalg.det(lin) if lin.size else np.zeros(lin.shape[:-2])
    sign = np.where(det < 0.0, -1.0, 1.0)
    cols = lin.copy()
    if n == 3:
        cols *= sign[..., None, None]
    else:
        cols[..., :, 1] *= sign[..., None]
    lengths = np.sqrt(np.einsum("...ij,...ij->...j", cols, cols))
    u0_len = lengths[..., 0]
    rot = np.empty(lin.shape)
    bad = ~(u0_len > 1e-12 * np.maximum(1.0, lengths.max(axis=-1)))
    if n == 3:
        u0 = cols[..., :, 0] / np.where(bad, 1.0, u0_len)[..., None]
        c1 = cols[..., :, 1]
        w1 = c1 - np.einsum("...i,...i->...", c1, u0)[..., None] * u0
        w1_len = norm(w1)
        bad |= ~(w1_len > 1e-12 * np.maximum(1.0, lengths.max(axis=-1)))
        u1 = w1 / np.where(bad, 1.0, w1_len)[..., None]
        rot[..., :, 0], rot[..., :, 1], rot[..., :, 2] = u0, u1, _cross(u0, u1)
    else:
        u0 = cols[..., :, 0] / np.where(bad, 1.0, u0_len)[..., None]
        rot[..., :, 0], rot[..., :, 1] = u0, _perp(u0)
    if bad.any():
        idx = first_index(bad)
        raise InputError(
            f"{what}{where(idx)}: singular linear part (a zero or parallel column): no rotation", what, idx
        )
    scale = lengths.copy()
    if n == 3:
        scale *= sign[..., None]
    else:
        scale[..., 1] *= sign
    return rot, scale


def _log_rotation(rel: np.ndarray) -> np.ndarray:
    """Rotation vector (3D, ``(..., 3)``) or angle (2D, ``(...)``) of rotations, angle <= pi."""
    if rel.shape[-1] == 2:
        return np.arctan2(rel[..., 1, 0], rel[..., 0, 0])
    q = matrix_to_quat(rel)  # w >= 0
    vec = q[..., 1:]
    nv = norm(vec)
    small = nv < 1e-8
    factor = np.where(
        small, 2.0 / np.where(small, q[..., 0], 1.0), 2.0 * np.arctan2(nv, q[..., 0]) / np.where(small, 1.0, nv)
    )
    return vec * factor[..., None]


def dynamics_from_samples(prev, now, next, dt) -> SampledDynamics:
    """Velocity, acceleration, angular velocity and acceleration by central differences.

    Parameters
    ----------
    prev, now, next : array_like, shape (..., n+1, n+1)
        Affine matrices (``(N, 4, 4)`` in 3D, ``(N, 3, 3)`` in 2D) sampled at ``t - dt``,
        ``t``, ``t + dt``: world matrices (rates then in the world basis) or local ones
        (rates in the parent's basis). Rotation with a per-axis scale (non-uniform
        allowed; negative as Blender: a mirrored matrix has all three scales negative).
        Only the top n rows are read.
    dt : float or array_like, shape (...)
        Sample spacing in seconds, > 0 (e.g. ``1 / fps``).

    Returns
    -------
    SampledDynamics
        ``velocity = (t+ - t-) / 2 dt``, ``acceleration = (t+ - 2 t0 + t-) / dt^2``;
        with ``xi(+-) = log(R(t +- dt) R(t)^T)`` (rotation vectors of the relative
        rotations, via quaternions): ``omega = (xi+ - xi-) / 2 dt`` and
        ``alpha = (xi+ + xi-) / dt^2``, spatial convention ``dR/dt = hat(omega) R``.

    Notes
    -----
    Accuracy O(dt^2) for all four (``xi(h)`` is a smooth function with ``xi(0) = 0``,
    ``xi'(0) = W`` and ``xi''(0) = A``, so these are ordinary central differences);
    exact for quadratic translations and for rotations about a fixed axis at constant
    angular acceleration. Rotations between samples must stay below 180 degrees.
    The rotation is the Gram-Schmidt frame of the columns (X column kept), which does
    not depend on positive column scales: animated scale does not disturb the angular
    rates, and the matrices need not be uniformly scaled. With shear (a rotated child
    of a non-uniformly scaled parent) the rates are those of that Gram-Schmidt frame.
    """
    mats = [as_array(m, name, (None, None)) for m, name in ((prev, "prev"), (now, "now"), (next, "next"))]
    k = mats[1].shape[-1]
    if mats[1].shape[-2] != k or k not in (3, 4):
        raise InputError(f"now: expected (..., 4, 4) (3D) or (..., 3, 3) (2D) matrices, got {mats[1].shape}", "now")
    for m, name in zip(mats, ("prev", "now", "next"), strict=True):
        if m.shape[-2:] != (k, k):
            raise InputError(f"{name}: expected (..., {k}, {k}) like now, got shape {m.shape}", name)
    h = _positive(dt, "dt")
    shape = batch_shape("dynamics_from_samples", *((m, 2) for m in mats), (h, 0))
    mats = [np.broadcast_to(m, shape + (k, k)) for m in mats]
    n = k - 1
    t0, t1, t2 = (m[..., :n, n] for m in mats)
    r0, _ = _rotation_and_scale(mats[0][..., :n, :n], "prev")
    r1, scale = _rotation_and_scale(mats[1][..., :n, :n], "now")
    r2, _ = _rotation_and_scale(mats[2][..., :n, :n], "next")
    xi_plus = _log_rotation(r2 @ _t(r1))
    xi_minus = _log_rotation(r0 @ _t(r1))
    h1 = h[..., None]
    ha = h1 if n == 3 else h
    return SampledDynamics(
        np.array(t1, copy=True),
        r1,
        scale,
        (t2 - t0) / (2.0 * h1),
        (t2 - 2.0 * t1 + t0) / (h1 * h1),
        (xi_plus - xi_minus) / (2.0 * ha),
        (xi_plus + xi_minus) / (ha * ha),
    )
