"""``DynamicTransform``: a batch of n-d transforms ``x -> s R x + t`` with their first two
rates, and its group law (``a @ b``, ``identity``, ``inverse``).

Conventions as in :mod:`hierarchy_inspector.core.dynamics`: rates in the parent's basis
and units, angular rates in the spatial convention ``dR/dt = W R``. The arithmetic is in
:mod:`.packed`; this class validates, broadcasts and wraps it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError, as_array, batch_shape
from ..group import Transform, check_rotation
from .packed import (
    _ang_to_matrix,
    _ang_view,
    _angular_input,
    _broadcast_parts,
    _compose_packed,
    _core_ndims,
    _identity_packed,
    _inverse_packed,
    _vector_input,
)

__all__ = ["Delta", "DynamicTransform"]

_RATE_NAMES = ("velocity", "acceleration", "angular_velocity", "angular_acceleration")


class Delta(NamedTuple):
    """An instantaneous change of rates (poses unchanged); batch shape ``B``.

    velocity, acceleration ``(B, n)``; angular_velocity, angular_acceleration skew
    ``(B, n, n)`` (spatial convention, in the basis of the frame the change is expressed
    in). Pass one to :meth:`DynamicTransform.add_delta`, or unpack it as keywords into
    the ``*_delta_*`` functions: ``global_delta_to_local(frame, **delta._asdict())``.
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray

    @property
    def omega(self) -> np.ndarray:
        """3D: ``(B, 3)`` vectors; 2D: ``(B,)`` rates."""
        n = self.velocity.shape[-1]
        return _ang_view(n, _angular_input(self.angular_velocity, n, "angular_velocity"), "omega")

    @property
    def alpha(self) -> np.ndarray:
        """3D: ``(B, 3)`` vectors; 2D: ``(B,)`` rates."""
        n = self.velocity.shape[-1]
        return _ang_view(n, _angular_input(self.angular_acceleration, n, "angular_acceleration"), "alpha")


class DynamicTransform:
    """Batch of n-dimensional transforms ``x -> s R x + t`` with their first two rates.

    Parameters
    ----------
    translation : array_like, shape (..., n)
        Sets the dimension n.
    rotation : array_like, shape (..., n, n), optional
        Proper rotations (orthonormal to 1e-5, det +1); default identity.
    scale : array_like, shape (...), default 1
        Uniform scale, constant in time. Finite; zero is legal until an inverse is
        needed (then :class:`InputError` names the index). Intended > 0 (a negative
        value is algebraically fine: the formulas are linear in ``s``).
    velocity, acceleration : array_like, shape (..., n), optional
        ``dt/dt`` and ``d2t/dt2`` in the parent's basis and units per second (squared).
    angular_velocity, angular_acceleration : array_like, optional
        ``W`` with ``dR/dt = W R`` and ``A = dW/dt`` (spatial convention: the parent's
        basis), radians per second (squared). Skew ``(..., n, n)`` matrices (checked to
        1e-6 relative, then made exactly skew), or for convenience 3D vectors ``(..., 3)``
        (``W = hat(omega)``) and 2D rates ``(..., 1)`` or scalars (``W = w J``). In 3D
        an input whose last two axes are ``(3, 3)`` is read as matrices: pass a batch
        of three vectors as ``hat(omegas)``.

    All inputs broadcast to one batch shape; rates default to zero.

    Attributes
    ----------
    translation, rotation, scale, velocity, acceleration : ndarray
    angular_velocity, angular_acceleration : ndarray, shape (..., n, n)
        Computed on access (new arrays).
    omega, alpha : ndarray
        3D: angular velocity / acceleration vectors ``(..., 3)``; 2D: scalars ``(...)``.

    ``a @ b`` is the composition "b first, then a" with ``b``'s rates in ``a``'s basis
    and units (spec "Composition C = P o L"); it is associative, ``identity(n)`` is its
    neutral element and ``x.inverse()`` its inverse (``x @ x.inverse()`` is at rest).

    Examples
    --------
    >>> import numpy as np
    >>> turntable = DynamicTransform([0.0, 0.0, 0.0], angular_velocity=[0.0, 0.0, 2.0])
    >>> cup = DynamicTransform([1.0, 0.0, 0.0])  # at rest on the table, 1 m from the axis
    >>> world = turntable @ cup
    >>> world.velocity.tolist(), world.acceleration.tolist()
    ([0.0, 2.0, 0.0], [-4.0, 0.0, 0.0])
    """

    __slots__ = ("translation", "rotation", "scale", "velocity", "acceleration", "_w", "_alpha")

    def __init__(
        self,
        translation,
        rotation=None,
        scale=1.0,
        velocity=None,
        acceleration=None,
        angular_velocity=None,
        angular_acceleration=None,
    ):
        t = as_array(translation, "translation", (None,))
        n = t.shape[-1]
        if rotation is None:
            r = np.eye(n)
        else:
            r = check_rotation(rotation)
            if r.shape[-1] != n:
                raise InputError(
                    f"rotation: {r.shape[-1]}x{r.shape[-1]} matrices do not match {n}-d translations", "rotation"
                )
        parts = (
            t,
            r,
            as_array(scale, "scale"),
            _vector_input(velocity, n, "velocity"),
            _vector_input(acceleration, n, "acceleration"),
            _angular_input(angular_velocity, n, "angular_velocity"),
            _angular_input(angular_acceleration, n, "angular_acceleration"),
        )
        self._set(_broadcast_parts(n, parts, copy=True))

    def _set(self, parts) -> None:
        (self.translation, self.rotation, self.scale, self.velocity, self.acceleration, self._w, self._alpha) = parts

    @classmethod
    def _trusted(cls, parts) -> DynamicTransform:
        out = object.__new__(cls)
        out._set(tuple(parts))
        return out

    def _packed(self):
        return (self.translation, self.rotation, self.scale, self.velocity, self.acceleration, self._w, self._alpha)

    @classmethod
    def identity(cls, n: int, shape: tuple[int, ...] | int = ()) -> DynamicTransform:
        """Identity (at rest) in ``n`` dimensions with the given batch shape."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return cls._trusted(_identity_packed(int(n), shape))

    # -- shape and views ---------------------------------------------------------------

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
            raise TypeError("len() of a single DynamicTransform")
        return self.shape[0]

    def __getitem__(self, index) -> DynamicTransform:
        if not self.shape:
            raise IndexError("a single DynamicTransform cannot be indexed")
        index = index if isinstance(index, tuple) else (index,)
        return DynamicTransform._trusted(
            part[index + (slice(None),) * k] for part, k in zip(self._packed(), _core_ndims(self.dim), strict=True)
        )

    @property
    def transform(self) -> Transform:
        """The static :class:`Transform` ``(t, R, s)`` (shares the arrays)."""
        return Transform._trusted(self.translation, self.rotation, self.scale)

    @property
    def angular_velocity(self) -> np.ndarray:
        """``W`` ``(..., n, n)``, skew, ``dR/dt = W R`` (parent's basis), rad/s."""
        return _ang_to_matrix(self.dim, self._w)

    @property
    def angular_acceleration(self) -> np.ndarray:
        """``A = dW/dt`` ``(..., n, n)``, skew (parent's basis), rad/s^2."""
        return _ang_to_matrix(self.dim, self._alpha)

    @property
    def omega(self) -> np.ndarray:
        """3D: angular velocity vector ``(..., 3)``; 2D: rate ``(...)`` (counter-clockwise)."""
        return _ang_view(self.dim, self._w, "omega")

    @property
    def alpha(self) -> np.ndarray:
        """3D: angular acceleration vector ``(..., 3)``; 2D: scalar ``(...)``."""
        return _ang_view(self.dim, self._alpha, "alpha")

    def replace(self, **changes) -> DynamicTransform:
        """A copy with some constructor arguments replaced (validated like the constructor)."""
        unknown = set(changes) - {"translation", "rotation", "scale", *_RATE_NAMES}
        if unknown:
            raise TypeError(f"replace() got unexpected arguments {sorted(unknown)}")
        n = self.dim
        t = as_array(changes["translation"], "translation", (n,)) if "translation" in changes else self.translation
        r = self.rotation
        if "rotation" in changes:
            r = check_rotation(changes["rotation"])
            if r.shape[-1] != n:
                raise InputError(f"rotation: expected (..., {n}, {n}) rotations, got shape {r.shape}", "rotation")
        parts = (
            t,
            r,
            as_array(changes["scale"], "scale") if "scale" in changes else self.scale,
            _vector_input(changes["velocity"], n, "velocity") if "velocity" in changes else self.velocity,
            _vector_input(changes["acceleration"], n, "acceleration")
            if "acceleration" in changes
            else self.acceleration,
            _angular_input(changes["angular_velocity"], n, "angular_velocity")
            if "angular_velocity" in changes
            else self._w,
            _angular_input(changes["angular_acceleration"], n, "angular_acceleration")
            if "angular_acceleration" in changes
            else self._alpha,
        )
        return DynamicTransform._trusted(_broadcast_parts(n, parts, copy=True))

    def add_delta(self, delta: Delta) -> DynamicTransform:
        """Rates changed instantaneously by ``delta`` (a :class:`Delta` in this transform's
        own terms, i.e. the parent's basis); the pose is unchanged."""
        n = self.dim
        d_w = _angular_input(delta.angular_velocity, n, "delta.angular_velocity")
        d_al = _angular_input(delta.angular_acceleration, n, "delta.angular_acceleration")
        d_v = _vector_input(delta.velocity, n, "delta.velocity")
        d_a = _vector_input(delta.acceleration, n, "delta.acceleration")
        k = _core_ndims(n)[-1]
        batch_shape(
            "delta",
            (self.scale, 0),
            (d_v, 1),
            (d_a, 1),
            (d_w, k),
            (d_al, k),
            names=(
                "self",
                "delta.velocity",
                "delta.acceleration",
                "delta.angular_velocity",
                "delta.angular_acceleration",
            ),
        )
        parts = (
            self.translation,
            self.rotation,
            self.scale,
            self.velocity + d_v,
            self.acceleration + d_a,
            self._w + d_w,
            self._alpha + d_al,
        )
        return DynamicTransform._trusted(_broadcast_parts(n, parts, copy=True))

    # -- group -------------------------------------------------------------------------

    def __matmul__(self, other) -> DynamicTransform:
        if not isinstance(other, DynamicTransform):
            return NotImplemented
        if other.dim != self.dim:
            raise InputError(f"compose: cannot combine {self.dim}-d and {other.dim}-d dynamic transforms", "other")
        n = self.dim
        shape = batch_shape("compose", (self.scale, 0), (other.scale, 0))
        a = _broadcast_parts(n, self._packed(), shape=shape)
        b = _broadcast_parts(n, other._packed(), shape=shape)
        return DynamicTransform._trusted(_compose_packed(n)(a, b))

    def inverse(self) -> DynamicTransform:
        """The parent seen from the child: ``X^-1`` with its rates (spec "Identity and
        inverse"); a zero scale raises :class:`InputError` naming its index."""
        return DynamicTransform._trusted(_inverse_packed(self.dim, self._packed()))

    def __repr__(self) -> str:
        return f"DynamicTransform(dim={self.dim}, shape={self.shape})"
