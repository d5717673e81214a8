"""The seed's N-dimensional transform group: translation, rotation matrix, uniform scale.

``X(x) = s R x + t`` maps child coordinates to parent coordinates (scale first, then
rotate, then translate). With a single scale factor these transforms form a group under
composition, closed and associative, with identity and inverse in closed form. Works in
any dimension n >= 1 (2D and 3D are the tested cases), batched over leading dimensions.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError, as_array, batch_shape, first_index, where

__all__ = ["Transform", "rotation_2d"]

#: Largest ``|R^T R - I|`` entry accepted as a rotation (float32 input passes).
ORTHONORMAL_TOLERANCE = 1e-5


def rotation_2d(angle) -> np.ndarray:
    """2D rotation matrices ``(..., 2, 2)`` of angles in radians ``(...)`` (counter-clockwise)."""
    angle = as_array(angle, "angle")
    c, s = np.cos(angle), np.sin(angle)
    return np.stack((np.stack((c, -s), -1), np.stack((s, c), -1)), -2)


def check_rotation(rotation, what: str = "rotation") -> np.ndarray:
    """Validate proper rotation matrices ``(..., n, n)``: orthonormal, det +1."""
    r = as_array(rotation, what, (None, None))
    if r.shape[-1] != r.shape[-2]:
        raise InputError(f"{what}: expected square (..., n, n) matrices, got {r.shape}", what)
    n = r.shape[-1]
    err = np.abs(np.swapaxes(r, -1, -2) @ r - np.eye(n)).max(axis=(-2, -1)) if r.size else np.zeros(r.shape[:-2])
    bad = err > ORTHONORMAL_TOLERANCE
    if bad.any():
        idx = first_index(bad)
        raise InputError(f"{what}{where(idx)}: not orthonormal (|R^T R - I| = {float(err[idx]):.3g})", what, idx)
    if n and r.size:
        det = np.linalg.det(r)
        bad = det < 0.0
        if bad.any():
            idx = first_index(bad)
            raise InputError(f"{what}{where(idx)}: a reflection (det = -1), not a rotation", what, idx)
    return r


class Transform:
    """Batch of n-dimensional similarity transforms ``x -> s R x + t``.

    Parameters
    ----------
    translation : array_like, shape (..., n)
    rotation : array_like, shape (..., n, n)
        Proper rotation matrices (checked: orthonormal to 1e-5, det +1).
    scale : array_like, shape (...), default 1
        Uniform scale, finite; zero is legal until an inverse is asked for.

    ``a @ b`` is the composition "b first, then a": ``(a @ b)(x) == a(b(x))``.
    """

    __slots__ = ("translation", "rotation", "scale")

    def __init__(self, translation, rotation, scale=1.0):
        t = as_array(translation, "translation", (None,))
        r = check_rotation(rotation)
        s = as_array(scale, "scale")
        if r.shape[-1] != t.shape[-1]:
            raise InputError(
                f"rotation: {r.shape[-1]}x{r.shape[-1]} matrices do not match {t.shape[-1]}-d translations", "rotation"
            )
        shape = batch_shape("Transform", (t, 1), (r, 2), (s, 0))
        n = t.shape[-1]
        self.translation = np.broadcast_to(t, shape + (n,)).copy()
        self.rotation = np.broadcast_to(r, shape + (n, n)).copy()
        self.scale = np.broadcast_to(s, shape).copy()

    @classmethod
    def _trusted(cls, translation, rotation, scale):
        out = object.__new__(cls)
        out.translation, out.rotation, out.scale = translation, rotation, scale
        return out

    @classmethod
    def identity(cls, n: int, shape: tuple[int, ...] | int = ()):
        """Identity transforms in ``n`` dimensions with the given batch shape."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return cls._trusted(np.zeros(shape + (n,)), np.broadcast_to(np.eye(n), shape + (n, n)).copy(), np.ones(shape))

    @property
    def dim(self) -> int:
        """Spatial dimension n."""
        return self.translation.shape[-1]

    @property
    def shape(self) -> tuple[int, ...]:
        """Batch shape."""
        return self.scale.shape

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a single Transform")
        return self.shape[0]

    def __getitem__(self, index):
        if not self.shape:
            raise IndexError("a single Transform cannot be indexed")
        return Transform._trusted(self.translation[index], self.rotation[index], self.scale[index])

    def _check_other(self, other, op: str):
        if not isinstance(other, Transform):
            return NotImplemented
        if other.dim != self.dim:
            raise InputError(f"{op}: cannot combine {self.dim}-d and {other.dim}-d transforms", "other")
        return other

    def __matmul__(self, other):
        other = self._check_other(other, "compose")
        if other is NotImplemented:
            return NotImplemented
        batch_shape("other", (self.scale, 0), (other.scale, 0), names=("self", "other"))
        return Transform._trusted(*compose_parts(self, other))

    def inverse(self):
        """``X^-1 = (-R^T t / s, R^T, 1/s)``; zero scale raises naming the node."""
        inv_s = inverse_scale(self.scale)
        rt = np.swapaxes(self.rotation, -1, -2)
        return Transform._trusted(-np.einsum("...ij,...j->...i", rt, self.translation) * inv_s[..., None], rt, inv_s)

    def apply_point(self, points) -> np.ndarray:
        """``s R x + t`` for points ``(..., n)``."""
        return self.apply_vector(points) + self.translation

    __call__ = apply_point

    def apply_vector(self, vectors) -> np.ndarray:
        """``s R v``: directions and displacements, no translation."""
        v = as_array(vectors, "vectors", (self.dim,))
        batch_shape("vectors", (self.scale, 0), (v, 1), names=("transform", "vectors"))
        return self.scale[..., None] * np.einsum("...ij,...j->...i", self.rotation, v)

    def apply_normal(self, normals) -> np.ndarray:
        """Normals by the inverse transpose of the linear part: ``R n / s``."""
        v = as_array(normals, "normals", (self.dim,))
        batch_shape("normals", (self.scale, 0), (v, 1), names=("transform", "normals"))
        return np.einsum("...ij,...j->...i", self.rotation, v) * inverse_scale(self.scale)[..., None]

    def linear(self) -> np.ndarray:
        """Linear part ``s R`` ``(..., n, n)`` (the Jacobian; a change of basis)."""
        return self.scale[..., None, None] * self.rotation

    def normal_matrix(self) -> np.ndarray:
        """Inverse transpose of the linear part: ``R / s``."""
        return self.rotation * inverse_scale(self.scale)[..., None, None]

    def to_matrix(self) -> np.ndarray:
        """Augmented matrices ``(..., n+1, n+1)`` ``[[s R, t], [0, 1]]``."""
        n = self.dim
        out = np.zeros(self.shape + (n + 1, n + 1))
        out[..., :n, :n] = self.linear()
        out[..., :n, n] = self.translation
        out[..., n, n] = 1.0
        return out

    def __repr__(self) -> str:
        return f"Transform(dim={self.dim}, shape={self.shape})"


def compose_parts(a: Transform, b: Transform):
    """Translation, rotation and scale of ``a @ b`` (b first, then a)."""
    t = a.translation + a.scale[..., None] * np.einsum("...ij,...j->...i", a.rotation, b.translation)
    return t, a.rotation @ b.rotation, a.scale * b.scale


def inverse_scale(scale: np.ndarray, what: str = "scale") -> np.ndarray:
    """``1 / scale``; a zero scale has no inverse and raises naming its index."""
    zero = scale == 0.0
    if np.any(zero):
        idx = first_index(np.asarray(zero))
        raise InputError(f"{what}{where(idx)}: zero scale has no inverse", what, idx)
    return 1.0 / scale
