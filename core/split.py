"""Exact replacement of a sheared affine matrix by two TRS nodes.

glTF, Unity and Godot nodes hold only translation / rotation / scale, but they compose
matrices, so a chain of two TRS nodes can hold what one cannot. With the singular value
decomposition ``M3 = U diag(sigma) V^T``:

- outer node (the helper, inserted as the parent): ``T(t) @ R(U) @ S(sigma)``
- inner node (the original node):                 ``R(V^T)`` with unit scale

and ``outer @ inner == M`` to round-off. Reflections are moved into the scale: when
``det U < 0`` its last column and ``sigma[2]`` change sign, when ``det V < 0`` the last
row of ``V^T`` and ``sigma[2]`` do, so both rotations are proper. Two nodes always
suffice, singular matrices included (a zero singular value becomes a zero scale).
Matrices that already are a TRS come back as (that TRS, identity).
"""

from __future__ import annotations

import numpy as np

from .decompose import _check_matrices, decompose
from .rotations import matrix_to_quat
from .trs import TRS

__all__ = ["split_to_trs", "is_trs"]

#: A matrix counts as a TRS when its decomposition's shear is within this of identity.
SHEAR_EPSILON = 1e-12


def is_trs(matrices, tolerance: float = SHEAR_EPSILON) -> np.ndarray:
    """Boolean ``(...)``: True where the matrix is exactly a TRS (shear within tolerance)."""
    shear = decompose(matrices).shear
    return np.abs(shear - np.eye(3)).max(axis=(-2, -1)) <= tolerance


def split_to_trs(matrices) -> tuple[TRS, TRS]:
    """Two TRS batches whose matrix product reproduces ``(..., 4, 4)`` affine matrices.

    Returns ``(outer, inner)`` with ``outer.to_matrix() @ inner.to_matrix() == M``
    (relative error ~1e-15). The bottom row of ``M`` must be ``(0, 0, 0, 1)``.
    """
    m = _check_matrices(matrices, "matrices")
    if m.shape[-1] == 3:
        m4 = np.zeros(m.shape[:-2] + (4, 4))
        m4[..., :3, :3] = m
        m4[..., 3, 3] = 1.0
        m = m4
    d = decompose(m)
    exact = np.abs(d.shear - np.eye(3)).max(axis=(-2, -1)) <= SHEAR_EPSILON

    u, sigma, vt = np.linalg.svd(m[..., :3, :3])
    flip_u = np.linalg.det(u) < 0.0
    flip_v = np.linalg.det(vt) < 0.0
    u[..., :, 2] = np.where(flip_u[..., None], -u[..., :, 2], u[..., :, 2])
    vt[..., 2, :] = np.where(flip_v[..., None], -vt[..., 2, :], vt[..., 2, :])
    sigma[..., 2] = np.where(flip_u ^ flip_v, -sigma[..., 2], sigma[..., 2])

    e = exact[..., None]
    outer = TRS._trusted(
        d.translation.copy(),
        np.where(e, d.rotation, matrix_to_quat(u)),
        np.where(e, d.scale, sigma),
    )
    identity_q = np.broadcast_to([1.0, 0.0, 0.0, 0.0], d.rotation.shape)
    inner = TRS._trusted(
        np.zeros_like(d.translation),
        np.where(e, identity_q, matrix_to_quat(vt)),
        np.ones_like(d.scale),
    )
    return outer, inner
