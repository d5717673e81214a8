"""Unreal Engine's ``FTransform`` math as batched numpy models (no engine needed).

What Unreal does with the transforms an FBX import hands it, reproduced in float64 as
Unreal 5 computes (``FTransform`` is double precision since 5.0), for the engine paths
of :mod:`hierarchy_inspector.addon.model.engines`:

- :func:`from_matrix`: ``FTransform(const FMatrix&)`` / ``SetFromMatrix``
  (``Runtime/Core/Public/Math/TransformNonVectorized.h``): scale = the axes' lengths
  (``FMatrix::ExtractScaling``, zero below ``UE_SMALL_NUMBER`` squared length); a
  negative determinant negates the X scale and the X axis (only X, whichever axis the
  mirror was on); rotation = ``FQuat(const FMatrix&)`` (``Quat.h``: the trace method, the
  identity when an axis is nearly zero) of what is left, normalised. A sheared matrix
  loses its shear here: the axes are normalised but not made perpendicular, and the
  trace method takes the rotation from whichever entries its branch reads.
- :func:`multiply`: ``A * B`` (``FTransform::Multiply``: A in B's space). Without a
  negative scale on either side the components combine separately (rotation product,
  scale product, ``B.R (B.S * A.T) + B.T``: the accumulated model); with one,
  ``MultiplyUsingMatrixWithScale``: the matrices multiplied, the scale removed, the
  desired scale's signs put back on the axes, the rotation taken from that, the
  translation the product's.
- :func:`relative`: ``A.GetRelativeTransform(B)`` (``A * B^-1``), the safe reciprocal of
  B's scale (zero where ``|s| <= UE_SMALL_NUMBER``), with the matrix path for negative
  scales (``GetRelativeTransformUsingMatrixWithScale``).
- :func:`to_matrix`: ``ToMatrixWithScale``.

Conventions are this package's, not Unreal's: column vectors (``M @ v``; Unreal's
``FMatrix`` is row-vector, ``M.M[i][j]`` here is ``m[..., j, i]``), quaternions
``(w, x, y, z)`` (``FQuat`` is ``X, Y, Z, W``), Blender's right-handed axes. Unreal's FBX
converter mirrors Y (``FFbxDataConverter::ConvertPos / ConvertRotToQuat``) and scales
uniformly to centimetres; every operation here commutes with that conjugation, so the
models run in the file's own axes. ``tests/model/unreal_reference.py`` transcribes the
C++ line by line (row vectors, XYZW) as an independent check.

A transform is a tuple ``(translation (N, 3), rotation (N, 4), scale (N, 3))``.
"""

from __future__ import annotations

import numpy as np

from .rotations import quat_multiply, quat_rotate, quat_to_matrix

__all__ = [
    "SMALL_NUMBER",
    "KINDA_SMALL_NUMBER",
    "from_matrix",
    "from_linear",
    "to_matrix",
    "multiply",
    "relative",
    "matrix_to_quat",
    "determinant",
    "inverse",
]

#: ``UE_SMALL_NUMBER``: scale tolerances (squared axis lengths, safe reciprocals).
SMALL_NUMBER = 1e-8
#: ``UE_KINDA_SMALL_NUMBER``: ``FVector::IsNearlyZero``'s default (per component).
KINDA_SMALL_NUMBER = 1e-4
#: ``THRESH_QUAT_NORMALIZED``: ``FQuat::IsNormalized`` (``|1 - |q|^2| <`` this).
QUAT_NORMALIZED = 0.01

Transform = tuple[np.ndarray, np.ndarray, np.ndarray]


def matrix_to_quat(m3: np.ndarray) -> np.ndarray:
    """``FQuat(const FMatrix&)`` of 3x3 parts ``(N, 3, 3)`` (column vectors), wxyz, not
    normalised (the constructor does not): the identity where an axis is nearly zero
    (every component within ``KINDA_SMALL_NUMBER``); else, with a positive trace, the
    W branch; otherwise the branch of the largest diagonal entry (ties to the first)."""
    m = np.asarray(m3, dtype=np.float64)
    n = m.shape[0]
    q = np.zeros((n, 4))
    d = np.stack((m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]), axis=1)
    trace = d.sum(axis=1)
    # Unreal's M.M[i][j] is m[j, i]: its "M[j][k] - M[k][j]" is m[k, j] - m[j, k].
    positive = trace > 0.0
    if positive.any():
        mp = m[positive]
        inv_s = 1.0 / np.sqrt(trace[positive] + 1.0)
        s = 0.5 * inv_s
        q[positive, 0] = 0.5 * (1.0 / inv_s)
        q[positive, 1] = (mp[:, 2, 1] - mp[:, 1, 2]) * s
        q[positive, 2] = (mp[:, 0, 2] - mp[:, 2, 0]) * s
        q[positive, 3] = (mp[:, 1, 0] - mp[:, 0, 1]) * s
    rest = np.flatnonzero(~positive)
    if len(rest):
        dr = d[rest]
        i = np.where(dr[:, 1] > dr[:, 0], 1, 0)
        i = np.where(dr[:, 2] > dr[np.arange(len(rest)), i], 2, i)
        j, k = (i + 1) % 3, (i + 2) % 3
        mr = m[rest]
        at = np.arange(len(rest))
        s = mr[at, i, i] - mr[at, j, j] - mr[at, k, k] + 1.0
        inv_s = 1.0 / np.sqrt(s)
        s = 0.5 * inv_s
        out = np.zeros((len(rest), 4))  # x, y, z, w as FQuat's qt[]
        out[at, i] = 0.5 * (1.0 / inv_s)
        out[at, 3] = (mr[at, k, j] - mr[at, j, k]) * s
        out[at, j] = (mr[at, j, i] + mr[at, i, j]) * s
        out[at, k] = (mr[at, k, i] + mr[at, i, k]) * s
        q[rest] = out[:, [3, 0, 1, 2]]
    near_zero = (np.abs(m) <= KINDA_SMALL_NUMBER).all(axis=1).any(axis=1)  # an axis (column) nearly zero
    q[near_zero] = (1.0, 0.0, 0.0, 0.0)
    return q


def determinant(m: np.ndarray) -> np.ndarray:
    """``FMatrix::Determinant`` of ``(N, 4, 4)`` matrices, its cofactor expansion in its
    order of operations (so that the sign of a singular matrix's round-off, which decides
    the mirror and the inverse, is Unreal's)."""
    M = np.swapaxes(np.asarray(m, dtype=np.float64), -1, -2)  # M[..., i, j] is Unreal's M[i][j]

    def e(i, j):
        return M[..., i, j]

    return (
        e(0, 0)
        * (
            e(1, 1) * (e(2, 2) * e(3, 3) - e(2, 3) * e(3, 2))
            - e(2, 1) * (e(1, 2) * e(3, 3) - e(1, 3) * e(3, 2))
            + e(3, 1) * (e(1, 2) * e(2, 3) - e(1, 3) * e(2, 2))
        )
        - e(1, 0)
        * (
            e(0, 1) * (e(2, 2) * e(3, 3) - e(2, 3) * e(3, 2))
            - e(2, 1) * (e(0, 2) * e(3, 3) - e(0, 3) * e(3, 2))
            + e(3, 1) * (e(0, 2) * e(2, 3) - e(0, 3) * e(2, 2))
        )
        + e(2, 0)
        * (
            e(0, 1) * (e(1, 2) * e(3, 3) - e(1, 3) * e(3, 2))
            - e(1, 1) * (e(0, 2) * e(3, 3) - e(0, 3) * e(3, 2))
            + e(3, 1) * (e(0, 2) * e(1, 3) - e(0, 3) * e(1, 2))
        )
        - e(3, 0)
        * (
            e(0, 1) * (e(1, 2) * e(2, 3) - e(1, 3) * e(2, 2))
            - e(1, 1) * (e(0, 2) * e(2, 3) - e(0, 3) * e(2, 2))
            + e(2, 1) * (e(0, 2) * e(1, 3) - e(0, 3) * e(1, 2))
        )
    )


def _normalize(q: np.ndarray) -> np.ndarray:
    """``FQuat::Normalize``: unit where ``|q|^2 >= UE_SMALL_NUMBER``, else the identity."""
    sq = np.einsum("ni,ni->n", q, q)
    ok = sq >= SMALL_NUMBER
    out = np.zeros_like(q)
    out[:, 0] = 1.0
    out[ok] = q[ok] / np.sqrt(sq[ok])[:, None]
    return out


def _remove_scaling(m3: np.ndarray) -> np.ndarray:
    """``FMatrix::RemoveScaling``: each axis divided by its length where its squared
    length is at least ``UE_SMALL_NUMBER`` (left as it is otherwise)."""
    sq = np.einsum("nij,nij->nj", m3, m3)
    factor = np.where(sq - SMALL_NUMBER >= 0.0, 1.0 / np.sqrt(np.maximum(sq, SMALL_NUMBER)), 1.0)
    return m3 * factor[:, None, :]


def from_matrix(m) -> Transform:
    """``FTransform(FMatrix)`` of affine matrices ``(N, 4, 4)``: translation, rotation
    (unit, sign as the trace method gives it) and scale (X negative for a mirror)."""
    m = np.asarray(m, dtype=np.float64)
    q, scale = from_linear(m[:, :3, :3], determinant(m) < 0.0)
    return m[:, :3, 3].copy(), q, scale


def from_linear(m3, mirrored=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`from_matrix`'s rotation ``(N, 4)`` and scale ``(N, 3)`` of 3x3 parts
    ``(N, 3, 3)`` (any strides); ``mirrored (N,)`` bool: Unreal's determinant is negative
    (default: the 3x3 determinant's sign, the same for an affine matrix up to the
    round-off of a singular one)."""
    m3 = np.array(m3, dtype=np.float64)
    sq = np.einsum("nij,nij->nj", m3, m3)
    big = sq > SMALL_NUMBER
    scale = np.where(big, np.sqrt(np.where(big, sq, 1.0)), 0.0)
    if mirrored is None:
        mirrored = np.einsum("ni,ni->n", m3[:, :, 0], np.cross(m3[:, :, 1], m3[:, :, 2])) < 0.0
    m3 = np.where(big[:, None, :], m3 / np.where(big, scale, 1.0)[:, None, :], m3)
    scale[mirrored, 0] *= -1.0
    m3[mirrored, :, 0] *= -1.0
    return _normalize(matrix_to_quat(m3)), scale


def to_matrix(t: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``ToMatrixWithScale``: ``T @ R @ S`` ``(N, 4, 4)``."""
    out = np.zeros((len(t), 4, 4))
    out[:, :3, :3] = quat_to_matrix(q, s)
    out[:, :3, 3] = t
    out[:, 3, 3] = 1.0
    return out


def _negative(*scales: np.ndarray) -> np.ndarray:
    """``Private_AnyHasNegativeScale``: any component of any of the scales below zero."""
    return np.logical_or.reduce([(s < 0.0).any(axis=1) for s in scales])


def _from_product_with_scale(product: np.ndarray, desired: np.ndarray) -> Transform:
    """``ConstructTransformFromMatrixWithDesiredScale``: the rotation of ``product``
    ``(K, 4, 4)`` with its scale removed and ``desired``'s signs put on its axes
    (``GetSignVector``: zero counts as positive), the scale ``desired``, the translation
    the product's."""
    m3 = _remove_scaling(product[:, :3, :3])
    m3 = m3 * np.where(desired >= 0.0, 1.0, -1.0)[:, None, :]
    return product[:, :3, 3].copy(), _normalize(matrix_to_quat(m3)), desired.copy()


def multiply(a: Transform, b: Transform) -> Transform:
    """``A * B`` (``FTransform::Multiply``: ``a`` in ``b``'s space; for a child's local
    ``a`` and its parent's world ``b``, the child's world)."""
    (ta, qa, sa), (tb, qb, sb) = a, b
    t = quat_rotate(qb, sb * ta) + tb
    q = quat_multiply(qb, qa)
    s = sa * sb
    neg = _negative(sa, sb)
    if neg.any():
        product = to_matrix(tb[neg], qb[neg], sb[neg]) @ to_matrix(ta[neg], qa[neg], sa[neg])
        t[neg], q[neg], s[neg] = _from_product_with_scale(product, sa[neg] * sb[neg])
    return t, q, s


def _safe_reciprocal(s: np.ndarray) -> np.ndarray:
    """``GetSafeScaleReciprocal(s, UE_SMALL_NUMBER)``: ``1 / s``, zero where ``|s| <=`` it."""
    small = np.abs(s) <= SMALL_NUMBER
    return np.where(small, 0.0, 1.0 / np.where(small, 1.0, s))


def inverse(m: np.ndarray) -> np.ndarray:
    """``FMatrix::Inverse`` of affine ``(N, 4, 4)``: the identity for a matrix whose three
    axes are all nearly zero (``UE_SMALL_NUMBER``) or whose determinant is exactly zero."""
    out = np.broadcast_to(np.eye(4), m.shape).copy()
    zero_axes = (np.abs(m[:, :3, :3]) <= SMALL_NUMBER).all(axis=1).all(axis=1)
    det = determinant(m)
    ok = ~zero_axes & (det != 0.0)
    a = m[ok, :3, :3]
    # The adjugate over the determinant (what Unreal's cofactor inverse gives for an
    # affine matrix; no pivoting, so a nearly singular matrix inverts as Unreal's does).
    adj = np.empty_like(a)
    for i in range(3):
        for j in range(3):
            r = [k for k in range(3) if k != j]
            c = [k for k in range(3) if k != i]
            minor = a[:, r[0], c[0]] * a[:, r[1], c[1]] - a[:, r[0], c[1]] * a[:, r[1], c[0]]
            adj[:, i, j] = minor if (i + j) % 2 == 0 else -minor
    inv3 = adj / det[ok][:, None, None]
    out[ok, :3, :3] = inv3
    out[ok, :3, 3] = -np.einsum("nij,nj->ni", inv3, m[ok, :3, 3])
    return out


def relative(a: Transform, b: Transform) -> Transform:
    """``A.GetRelativeTransform(B)`` (``A * B^-1``: ``a``'s world in ``b``'s space).
    Identity where ``b``'s rotation is not normalised (as Unreal returns)."""
    (ta, qa, sa), (tb, qb, sb) = a, b
    recip = _safe_reciprocal(sb)
    inverse_q = qb * np.array([1.0, -1.0, -1.0, -1.0])
    t = quat_rotate(inverse_q, ta - tb) * recip
    q = quat_multiply(inverse_q, qa)
    s = sa * recip
    neg = _negative(sa, sb)
    if neg.any():
        am = to_matrix(ta[neg], qa[neg], sa[neg])
        bm = to_matrix(tb[neg], qb[neg], sb[neg])
        t[neg], q[neg], s[neg] = _from_product_with_scale(inverse(bm) @ am, sa[neg] * recip[neg])
    bad = ~neg & (np.abs(1.0 - np.einsum("ni,ni->n", qb, qb)) >= QUAT_NORMALIZED)
    t[bad], q[bad], s[bad] = 0.0, (1.0, 0.0, 0.0, 0.0), 1.0
    return t, q, s
