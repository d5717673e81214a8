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
  matrix is a TRS. Where the X column is zero or Y is parallel to X to round-off
  (singular input) the nearest rotation is used and H is no longer triangular, but the
  product stays exact.

Accuracy, for every finite affine matrix: ``T @ R @ H @ S`` reproduces each column of M
to a few units of round-off of that column's length (``|error_j| <= 1e-14 max|M_j|``,
tested in ``tests/core/test_edge_cases.py``), at any magnitude and however close X and
Y are to parallel:

- columns whose squared length would over- or underflow are scaled by powers of two
  (exactly) before their lengths are taken; a column whose length itself exceeds the
  largest float64 (entries near 1.8e308) raises :class:`InputError`, and one shorter
  than the smallest normal float64 (2.2e-308) keeps only the precision of its
  subnormal length;
- where Y is within 30 degrees of X it is made perpendicular to X twice ("twice is
  enough"): one Gram-Schmidt pass leaves about ``eps / sin(angle(X, Y))`` of X's
  direction in it, the second removes that, so R is orthonormal to round-off.

The factors themselves are as well determined as the matrix allows: R's X axis and the
scale are exact to round-off, but when X and Y meet at a small angle ``theta`` the Y
and Z axes of R and H's Y column are those of a direction that the matrix's own
round-off moves by about ``eps / sin(theta)``.

4x4 input must be affine: a bottom row further than :data:`AFFINE_TOLERANCE` from
``(0, 0, 0, 1)`` (a projective matrix) raises :class:`InputError` naming its index
instead of being dropped.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import InputError, as_array, first_index, where
from .rotations import blender_matrix_to_quat, matrix_to_quat, quat_to_matrix

__all__ = [
    "Decomposition",
    "decompose",
    "shear_angles",
    "linear_part",
    "translation_part",
    "rotation_frames",
    "affine_inverse",
    "AFFINE_TOLERANCE",
    "ROTATION_RULES",
]

#: How :func:`decompose` picks the rotation of a matrix whose columns are not
#: perpendicular: ``"gram-schmidt"`` keeps the X column's direction exactly (the shear
#: factor is then upper triangular); ``"blender"`` is what Blender's ``Matrix.decompose()``
#: and so its glTF and FBX exporters give (:func:`~.rotations.blender_matrix_to_quat` of
#: the normalised columns). Both are the rotation itself when there is no shear.
ROTATION_RULES = ("gram-schmidt", "blender")

_TINY = 1e-12
#: Largest ``|bottom row - (0, 0, 0, 1)|`` entry of a 4x4 matrix accepted as affine by
#: :func:`decompose` and :func:`affine_inverse` (round-off of inverted matrices; ignored).
AFFINE_TOLERANCE = 1e-9


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


def _check_matrices(matrices, what: str) -> np.ndarray:
    m = as_array(matrices, what, (None, None))
    if m.shape[-2:] not in ((4, 4), (3, 3)):
        raise InputError(f"{what}: expected shape (..., 4, 4) or (..., 3, 3), got {m.shape}", what)
    return m


def _check_affine(m: np.ndarray, what: str) -> np.ndarray:
    """``m`` from :func:`_check_matrices`; 4x4 matrices must have the bottom row ``(0, 0, 0, 1)``."""
    if m.shape[-1] == 4 and m.size:
        off = np.abs(m[..., 3, :] - (0.0, 0.0, 0.0, 1.0))
        if off.max() > AFFINE_TOLERANCE:
            idx = first_index((off > AFFINE_TOLERANCE).any(axis=-1))
            row = ", ".join(f"{float(v):.6g}" for v in m[idx][3])
            raise InputError(
                f"{what}{where(idx)}: bottom row ({row}) is not (0, 0, 0, 1): a projective matrix has no "
                "translation / rotation / scale / shear decomposition, and dropping the row would be silent",
                what,
                idx,
            )
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
    out = np.empty(a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def column_lengths(m3: np.ndarray) -> np.ndarray:
    """Lengths ``(..., 3)`` of the X, Y, Z columns of ``(..., 3, 3)`` matrices."""
    return np.sqrt(np.einsum("...ij,...ij->...j", m3, m3))


def determinant3(m3: np.ndarray) -> np.ndarray:
    """Determinants ``(...)`` of 3x3 matrices ``(..., 3, 3)``: ``x . (y x z)`` of the
    columns (no LAPACK call per matrix: cheaper than ``np.linalg.det`` for batches).
    :class:`InputError` naming ``m3`` for any other shape (NaN gives NaN)."""
    m3 = as_array(m3, "m3", (3, 3), finite=False)
    return _dot(m3[..., :, 0], _cross(m3[..., :, 1], m3[..., :, 2]))


def _nearest_rotation(n: np.ndarray) -> np.ndarray:
    """Polar rotation of (possibly singular) 3x3 matrices, det +1."""
    u, _, vt = np.linalg.svd(n)
    d = np.sign(np.linalg.det(u @ vt))
    d = np.where(d == 0.0, 1.0, d)
    u[..., :, 2] *= d[..., None]
    return u @ vt


def _gram_schmidt(n: np.ndarray) -> np.ndarray:
    """Right-handed frames ``(..., 3, 3)`` from the unit (or zero) columns of ``n``, X
    direction kept.

    Where Y is within 30 degrees of X's direction it is made perpendicular to X twice
    ("twice is enough", Kahan and Parlett): the first pass leaves about
    ``eps / sin(angle(X, Y))`` of X's direction in the result, the second removes it, so
    the frame is orthonormal to round-off however close Y is to X.
    Where X is zero or Y is parallel to X to round-off (the second pass then keeps less
    than half a unit vector) the nearest rotation is used instead: any rotation fits the
    missing axes, and ``R^T n`` stays exact.
    """
    x = n[..., :, 0]
    y = n[..., :, 1]
    xlen = np.sqrt(_dot(x, x))[..., None]
    u0 = x / np.where(xlen > _TINY, xlen, 1.0)
    w1 = y - _dot(y, u0)[..., None] * u0
    w1len = np.sqrt(_dot(w1, w1))[..., None]
    u1 = w1 / np.where(w1len > 0.0, w1len, 1.0)
    bad = np.array(xlen[..., 0] <= _TINY)  # an array also for a single matrix
    near = w1len[..., 0] < 0.5  # elsewhere one pass leaves at most 2 eps of X in u1
    if near.any():
        v, x0 = u1[near], u0[near]
        w2 = v - _dot(v, x0)[..., None] * x0
        w2len = np.sqrt(_dot(w2, w2))[..., None]
        u1[near] = w2 / np.where(w2len > 0.5, w2len, 1.0)
        bad[near] |= ~(w2len[..., 0] > 0.5)
    frame = np.empty(n.shape)
    frame[..., :, 0] = u0
    frame[..., :, 1] = u1
    frame[..., :, 2] = _cross(u0, u1)
    if bad.any():
        frame[bad] = _nearest_rotation(n[bad])
    return frame


def _pow2_columns(m3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns scaled exactly by powers of two so that their largest entry is in [0.5, 1).

    Returns ``(scaled, exponents)``, ``m3[..., :, j] == ldexp(scaled[..., :, j], exponents[..., j])``;
    zero columns stay zero. Squares of the scaled columns neither overflow nor lose
    anything that matters to underflow, and each term of a determinant (one entry per
    column) is the original term times one power of two, so its sign is kept.
    """
    _, exponents = np.frexp(np.abs(m3).max(axis=-2))
    return np.ldexp(m3, -exponents[..., None, :]), exponents


def _safe_columns(m3: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """``(columns, exponents, squared lengths)`` of ``(..., 3, 3)`` matrices, safe to square.

    Matrices whose squared column lengths all lie in [1e-150, 1e150] (products of two
    of them, and of three entries, then stay far from float64's limits) are returned as
    they are; the others, scaled by :func:`_pow2_columns`. ``exponents`` (``(..., 3)``
    ints, zero for the unscaled) is ``None`` when no matrix needed scaling. Results
    computed from the scaled columns are the same numbers times powers of two.
    """
    sq = np.einsum("...ij,...ij->...j", m3, m3)  # einsum sets no floating-point warnings: no errstate
    if not sq.size or (sq.min() >= 1e-150 and sq.max() <= 1e150):
        return m3, None, sq
    extreme = ~((sq >= 1e-150) & (sq <= 1e150)).all(axis=-1)  # over- or underflow, or a zero column
    m3 = m3.copy()
    exponents = np.zeros(sq.shape, dtype=np.int32)
    m3[extreme], exponents[extreme] = _pow2_columns(m3[extreme])
    sq[extreme] = np.einsum("...ij,...ij->...j", m3[extreme], m3[extreme])
    return m3, exponents, sq


def rotation_frames(matrices, *, rotation: str = "gram-schmidt") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rotation part of :func:`decompose` as matrices, cheaply.

    Returns ``(frame, scale, normalised)``: rotation matrices ``(..., 3, 3)``, signed
    scale ``(..., 3)`` and the signed normalised columns ``(..., 3, 3)`` (zero where a
    column is exactly zero). ``rotation`` one of :data:`ROTATION_RULES`. Any magnitude; a
    column longer than the largest float64 raises :class:`InputError`.
    """
    return _rotation_frames(linear_part(matrices), _rule(rotation))


def _rule(rotation: str) -> bool:
    """True for Blender's rotation rule; :class:`InputError` for an unknown one."""
    if rotation not in ROTATION_RULES:
        raise InputError(f"rotation: expected one of {', '.join(ROTATION_RULES)}, got {rotation!r}", "rotation")
    return rotation == "blender"


def _rotation_frames(m3: np.ndarray, blender=False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rotation_frames` of the 3x3 parts ``(..., 3, 3)`` of checked (finite)
    matrices; ``blender`` (a bool, or bool per matrix) where Blender's rotation rule applies."""
    cols, exponents, sq = _safe_columns(m3)
    col_lengths = np.sqrt(sq)
    sign = np.where(determinant3(cols) < 0.0, -1.0, 1.0)
    lengths = col_lengths
    if exponents is not None:
        with np.errstate(over="ignore"):
            lengths = np.ldexp(col_lengths, exponents)
        if not np.isfinite(lengths).all():
            bad = ~np.isfinite(lengths)
            idx = first_index(bad.any(axis=-1))
            column = "XYZ"[int(np.flatnonzero(bad[idx])[0])]
            raise InputError(
                f"matrices{where(idx)}: its {column} column is longer than the largest float64 (entries near "
                "1.8e308), so its scale cannot be represented",
                "matrices",
                idx,
            )
    scale = sign[..., None] * lengths
    safe = np.where(col_lengths > 0.0, sign[..., None] * col_lengths, np.inf)  # zero columns normalise to 0
    normalised = cols / safe[..., None, :]
    return _frames(normalised, blender), scale, normalised


def _frames(normalised: np.ndarray, blender) -> np.ndarray:
    """Rotation frames ``(..., 3, 3)`` of signed normalised columns: Blender's rule where
    ``blender`` (a bool or a bool per matrix) holds, Gram-Schmidt elsewhere."""
    pick = np.broadcast_to(np.asarray(blender, dtype=bool), normalised.shape[:-2])
    if not pick.any():
        return _gram_schmidt(normalised)
    if pick.all():
        return quat_to_matrix(blender_matrix_to_quat(normalised))
    frames = np.empty(normalised.shape)
    frames[pick] = quat_to_matrix(blender_matrix_to_quat(normalised[pick]))
    frames[~pick] = _gram_schmidt(normalised[~pick])
    return frames


def affine_inverse(matrices) -> tuple[np.ndarray, np.ndarray]:
    """Inverses ``(..., 4, 4)`` of affine matrices (bottom row 0, 0, 0, 1), in closed form.

    Returns ``(inverse, singular)``: ``singular (...)`` is True where the 3x3 part has
    no inverse (determinant below 1e-12 of the product of its column lengths) or where
    the inverse exceeds float64; those inverses hold zeros in the 3x3 part; callers
    decide what to do with them. Cheaper than ``np.linalg.inv`` for small batches (no
    LAPACK call), exact in the affine structure, and at any magnitude (extreme columns
    are scaled by powers of two first). A 4x4 whose bottom row is not ``(0, 0, 0, 1)``
    (within :data:`AFFINE_TOLERANCE`) raises :class:`InputError` naming its index.
    """
    m = _check_affine(_check_matrices(matrices, "matrices"), "matrices")
    # M3 = C diag(2^e), so inv(M3) = diag(2^-e) inv(C): row j of inv(C) times 2^-e_j.
    c, exponents, sq = _safe_columns(m[..., :3, :3])
    c0, c1, c2 = c[..., :, 0], c[..., :, 1], c[..., :, 2]
    rows = np.stack((_cross(c1, c2), _cross(c2, c0), _cross(c0, c1)), axis=-2)  # adjugate
    det = _dot(c0, rows[..., 0, :])
    size = np.prod(np.sqrt(sq), axis=-1)
    singular = np.abs(det) <= 1e-12 * np.maximum(size, 1e-300)
    inv3 = rows / np.where(singular, 1.0, det)[..., None, None]
    out = np.zeros(m.shape[:-2] + (4, 4))
    if exponents is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            inv3 = np.ldexp(inv3, -exponents[..., :, None])
    if m.shape[-1] == 4:  # (einsum and negation set no floating-point warnings)
        out[..., :3, 3] = -np.einsum("...ij,...j->...i", inv3, m[..., :3, 3])
    if not (np.isfinite(inv3).all() and np.isfinite(out[..., :3, 3]).all()):  # beyond float64
        singular |= ~(np.isfinite(inv3).all(axis=(-2, -1)) & np.isfinite(out[..., :3, 3]).all(axis=-1))
    inv3[singular] = 0.0
    out[singular, :3, 3] = 0.0
    out[..., :3, :3] = inv3
    out[..., 3, 3] = 1.0
    return out, singular


def decompose(matrices, *, rotation: str = "gram-schmidt") -> Decomposition:
    """Split ``(..., 4, 4)`` (or ``(..., 3, 3)``) matrices into T, R, S and shear.

    Nothing is dropped: ``M == T @ R @ shear @ S`` to round-off (each column to a few
    units of round-off of its length), for singular and mirrored matrices too (a zero
    column gives zero scale on that axis), at any magnitude and however close the X and
    Y columns are to parallel (see the module's notes on accuracy). Raises
    :class:`InputError` naming the index for a 4x4 whose bottom row is not
    ``(0, 0, 0, 1)`` and for a column longer than the largest float64.

    ``rotation`` (:data:`ROTATION_RULES`) picks R where the columns lean: by default X
    keeps its direction and ``shear`` is upper triangular; ``"blender"`` gives the
    rotation Blender's ``Matrix.decompose()`` and its exporters write (``shear`` is then
    ``R^T`` times the normalised columns, not triangular). Translation, scale and the
    shear angles are the same under both.

    >>> import numpy as np
    >>> d = decompose(np.diag([2.0, 3.0, 4.0, 1.0]))
    >>> d.scale.tolist(), d.rotation.tolist(), bool(np.allclose(d.shear, np.eye(3)))
    ([2.0, 3.0, 4.0], [1.0, 0.0, 0.0, 0.0], True)
    >>> sheared = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> np.round(shear_angles(sheared), 6).tolist()  # X and Y meet at 45 degrees
    [45.0, 0.0, 0.0]
    """
    return decompose_with_frames(matrices, rotation=rotation)[0]


def decompose_with_frames(matrices, *, rotation="gram-schmidt") -> tuple[Decomposition, np.ndarray]:
    """:func:`decompose`, and its rotations as matrices ``(..., 3, 3)`` too (the frames
    the quaternions were taken from), for callers that need both. ``rotation`` may also
    be a bool array of the batch shape: True where Blender's rule applies."""
    m = _check_affine(_check_matrices(matrices, "matrices"), "matrices")
    blender = _rule(rotation) if isinstance(rotation, str) else rotation
    frame, scale, normalised = _rotation_frames(m[..., :3, :3], blender)
    shear = np.swapaxes(frame, -1, -2) @ normalised
    translation = m[..., :3, 3] if m.shape[-1] == 4 else np.zeros(m.shape[:-2] + (3,))
    return Decomposition(translation, matrix_to_quat(frame), scale, shear), frame


def shear_angles(matrices) -> np.ndarray:
    """Shear in degrees ``(..., 3)``: how far the XY, YZ and ZX axis pairs are from 90.

    Positive when a pair leans together (angle below 90 degrees). Mirroring one axis
    flips the sign of the two pairs it belongs to; use ``abs`` for magnitudes. Pairs
    with a zero axis (all three entries exactly 0) have no angle and report 0 (a
    collapsed axis shows no skew). Any magnitude: matrices with a squared column length
    outside [1e-150, 1e150] are measured on their columns scaled by powers of two (the
    angles do not change). Accepts ``(..., 4, 4)`` or ``(..., 3, 3)``; needs no
    decomposition, so it is cheap.
    """
    return _shear_angles(linear_part(matrices))


def _shear_angles(m3: np.ndarray) -> np.ndarray:
    """:func:`shear_angles` of the 3x3 parts ``(..., 3, 3)`` of checked (finite) matrices."""
    m3, _, sq = _safe_columns(m3)  # sq: squared lengths of X, Y, Z
    x, y, z = m3[..., :, 0], m3[..., :, 1], m3[..., :, 2]
    dots = np.stack((_dot(x, y), _dot(y, z), _dot(z, x)), axis=-1)
    denom = np.sqrt(sq * sq[..., [1, 2, 0]])
    cosine = np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0.0)
    return np.degrees(np.arcsin(np.clip(cosine, -1.0, 1.0)))


#: :func:`affine_pseudo_inverse`: singular values below this fraction of the largest are
#: zero (the scale :func:`~.decompose.affine_inverse` calls singular, about 1e-12).
SINGULAR_RCOND = 1e-12


def affine_pseudo_inverse(matrices) -> tuple[np.ndarray, np.ndarray]:
    """:func:`affine_inverse` of affine matrices ``(..., 4, 4)``, and where
    it has none (``singular (...)`` True) the affine pseudo-inverse
    ``[pinv(A), -pinv(A) t; 0, 0, 0, 1]`` of ``[A, t; 0, 0, 0, 1]``.

    The bottom row is exactly ``(0, 0, 0, 1)``: the pseudo-inverse of the whole 4x4 is
    not affine once ``t`` is not zero (a parent collapsed away from the origin mixes its
    translation into the bottom row, and :func:`~.decompose.decompose` refuses the
    local). ``inverse @ W`` is the least-squares affine local ``L`` of a child world ``W``
    (the smallest ``L`` minimising ``|M L - W|``): exact wherever ``W`` is in reach of
    the parent, the child's own component along the collapsed axis dropped elsewhere.
    Singular values below :data:`SINGULAR_RCOND` of the largest count as zero (a parent
    called singular is inverted as collapsed, not through a scale of 1e-13 that would
    blow its child's float32 round-off up to any size). Returns ``(inverse, singular)``.
    """
    inverse, singular = affine_inverse(matrices)
    if singular.any():
        m = np.asarray(matrices, dtype=np.float64)[singular]
        with np.errstate(over="ignore", invalid="ignore"):
            pinv3 = np.linalg.pinv(m[..., :3, :3], rcond=SINGULAR_RCOND)
            fixed = np.zeros(m.shape)
            fixed[..., :3, :3] = pinv3
            fixed[..., :3, 3] = -np.einsum("...ij,...j->...i", pinv3, m[..., :3, 3])
        fixed[..., 3, 3] = 1.0
        inverse[singular] = fixed
    return inverse, singular
