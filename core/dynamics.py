"""Dynamics of transforms: velocities and accelerations converted between frames.

The algebra of the seed article on transform dynamics (``spec/dynamics.md``), in any
dimension n (2D and 3D tested, 4D too), batched over leading dimensions.

Conventions
-----------
A :class:`DynamicTransform` ``X = (t, R, s)`` maps child coordinates to parent
coordinates, ``x_parent = s R x_child + t`` (column vectors, uniform scale ``s``,
constant in time). Its rates are expressed **in the parent's basis and units**:

- ``velocity v = dt/dt`` and ``acceleration a = d2t/dt2``, shape ``(..., n)``;
- ``angular_velocity W`` and ``angular_acceleration A = dW/dt``, skew ``(..., n, n)``,
  in the **spatial convention** ``dR/dt = W R`` (W in the parent's basis; the body
  convention would be ``dR/dt = R Omega`` with ``Omega = R^T W R``).

In 3D ``W = hat(omega)`` (``W x = omega x x``) and in 2D ``W = w J`` with
``J = [[0, -1], [1, 0]]``; :attr:`DynamicTransform.omega` / :attr:`~DynamicTransform.alpha`
give these 3-vectors ``(..., 3)`` / scalars ``(...)``. Units: whatever the translations
use per second (per second squared); angles in radians.

Composition ``C = P @ L`` (``L``'s rates in ``P``'s basis and units) is associative and
has an identity and inverses, so a hierarchy of dynamic transforms folds exactly like a
hierarchy of static ones (:func:`local_to_global`, no recursion, any depth).

Internally 3D angular rates are handled as 3-vectors and 2D ones as scalars (cross and
perpendicular products instead of 3x3 matrix products); other n use the matrices.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import InputError, as_array, batch_shape, first_index, where
from .group import Transform, check_rotation, inverse_scale
from .hierarchy import Hierarchy
from .rotations import hat, matrix_to_quat, norm, vee

__all__ = [
    "DynamicTransform",
    "Delta",
    "InertialAccelerations",
    "PointMotion",
    "SampledDynamics",
    "local_to_global",
    "global_to_local",
    "local_delta_to_global",
    "global_delta_to_local",
    "parent_delta_to_child",
    "counteract_inherited",
    "linear_impulse",
    "inertial_accelerations",
    "point_to_global",
    "point_to_local",
    "dynamics_from_samples",
]

#: Largest ``|W + W^T|`` entry, relative to ``max(1, |W|)``, accepted as skew-symmetric.
SKEW_TOLERANCE = 1e-6
#: Relative spread of a per-axis scale below which it counts as uniform.
UNIFORM_TOLERANCE = 1e-9

_RATE_NAMES = ("velocity", "acceleration", "angular_velocity", "angular_acceleration")

# -- small batched helpers ---------------------------------------------------------------


def _mv(m, x):
    """``m @ x`` for matrices ``(..., n, n)`` and vectors ``(..., n)``."""
    return np.einsum("...ij,...j->...i", m, x)


def _mtv(m, x):
    """``m^T @ x``."""
    return np.einsum("...ji,...j->...i", m, x)


def _t(m):
    return np.swapaxes(m, -1, -2)


def _cross(a, b):
    """Row-wise cross product of ``(..., 3)`` vectors (faster than ``np.cross``)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _perp(x):
    """2D perpendicular ``(-y, x)`` = ``J x``."""
    out = np.empty(x.shape)
    out[..., 0] = -x[..., 1]
    out[..., 1] = x[..., 0]
    return out


# -- angular rates in packed form ----------------------------------------------------------
# 3D: vectors (..., 3); 2D: scalars (...); other n: skew matrices (..., n, n).


def _ang_ndim(n: int) -> int:
    return 1 if n == 3 else 0 if n == 2 else 2


def _ang_zeros(n: int, shape=()) -> np.ndarray:
    return np.zeros(tuple(shape) + ((3,) if n == 3 else () if n == 2 else (n, n)))


def _ang_apply(n: int, w, x):
    """``W x``."""
    if n == 3:
        return _cross(w, x)
    if n == 2:
        return w[..., None] * _perp(x)
    return _mv(w, x)


def _ang_rotate(n: int, r, w):
    """``R W R^T`` (2D rotations commute with W)."""
    if n == 3:
        return _mv(r, w)
    if n == 2:
        return w + np.zeros(r.shape[:-2])
    return r @ w @ _t(r)


def _ang_rotate_back(n: int, r, w):
    """``R^T W R``."""
    if n == 3:
        return _mtv(r, w)
    if n == 2:
        return w + np.zeros(r.shape[:-2])
    return _t(r) @ w @ r


def _ang_bracket(n: int, a, b):
    """Commutator ``[A, B] = AB - BA`` (3D: cross product; 2D: zero)."""
    if n == 3:
        return _cross(a, b)
    if n == 2:
        return np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)))
    return a @ b - b @ a


def _ang_to_matrix(n: int, w) -> np.ndarray:
    if n == 3:
        return hat(w)
    if n == 2:
        return hat(np.asarray(w)[..., None])
    return np.array(w, copy=True)


def _ang_view(n: int, w, what: str) -> np.ndarray:
    if n not in (2, 3):
        raise InputError(f"{what}: only 2D and 3D angular rates have a vector / scalar form; this is {n}-d", what)
    return w


def _check_skew(m: np.ndarray, what: str) -> np.ndarray:
    if not m.size:
        return m
    err = np.abs(m + _t(m)).max(axis=(-2, -1))
    bound = SKEW_TOLERANCE * np.maximum(1.0, np.abs(m).max(axis=(-2, -1)))
    bad = err > bound
    if bad.any():
        idx = first_index(bad)
        raise InputError(
            f"{what}{where(idx)}: not skew-symmetric (|W + W^T| = {float(err[idx]):.3g}); angular rates are "
            "skew (..., n, n) matrices in the parent's basis (dR/dt = W R)",
            what,
            idx,
        )
    return 0.5 * (m - _t(m))


def _angular_input(value, n: int, what: str) -> np.ndarray:
    """Validate an angular rate and return it packed (see the section comment above)."""
    if value is None:
        return _ang_zeros(n)
    arr = as_array(value, what)
    if arr.ndim >= 2 and arr.shape[-2:] == (n, n):
        m = _check_skew(arr, what)
        return vee(m) if n == 3 else m[..., 1, 0] if n == 2 else m
    if n == 3 and arr.ndim >= 1 and arr.shape[-1] == 3:
        return arr
    if n == 2 and (arr.ndim == 0 or arr.shape[-1] == 1):
        return arr if arr.ndim == 0 else arr[..., 0]
    forms = f"skew (..., {n}, {n}) matrices"
    if n == 3:
        forms += " or (..., 3) vectors"
    elif n == 2:
        forms += " or (..., 1) rates or a scalar (a batch of 2D rates w is w[..., None])"
    raise InputError(f"{what}: expected {forms} for {n}-d transforms, got shape {arr.shape}", what)


def _vector_input(value, n: int, what: str) -> np.ndarray:
    if value is None:
        return np.zeros(n)
    arr = as_array(value, what, (None,))
    if arr.shape[-1] != n:
        raise InputError(f"{what}: expected (..., {n}) vectors for {n}-d transforms, got shape {arr.shape}", what)
    return arr


# -- the group on packed tuples (t, R, s, v, a, w, alpha) ---------------------------------


def _compose_packed(n: int):
    """The associative compose ``C = P o L`` on packed tuples, for :meth:`Hierarchy.fold`."""

    def compose(p, c):
        tp, rp, sp, vp, ap, wp, alp = p
        tl, rl, sl, vl, al, wl, all_ = c
        sp1 = sp[..., None]
        r = sp1 * _mv(rp, tl)
        u = sp1 * _mv(rp, vl)
        wr = _ang_apply(n, wp, r)
        w_rot = _ang_rotate(n, rp, wl)
        t = tp + r
        v = vp + wr + u
        # a_p + A_p r + W_p^2 r + 2 W_p u + s_p R_p a_l
        acc = ap + _ang_apply(n, alp, r) + _ang_apply(n, wp, wr + 2.0 * u) + sp1 * _mv(rp, al)
        w = wp + w_rot
        alpha = alp + _ang_rotate(n, rp, all_) + _ang_bracket(n, wp, w_rot)
        return t, rp @ rl, sp * sl, v, acc, w, alpha

    return compose


def _inverse_packed(n: int, x, what: str = "scale"):
    t, r, s, v, a, w, al = x
    inv = inverse_scale(s, what)
    i1 = inv[..., None]
    wt = _ang_apply(n, w, t)
    return (
        -_mtv(r, t) * i1,
        np.array(_t(r), copy=True),
        inv,
        _mtv(r, wt - v) * i1,
        # R^T (A t - W^2 t + 2 W v - a) / s
        _mtv(r, _ang_apply(n, al, t) - _ang_apply(n, w, wt - 2.0 * v) - a) * i1,
        -_ang_rotate_back(n, r, w),
        -_ang_rotate_back(n, r, al),
    )


def _relative_packed(n: int, p, c, inv_sp):
    """``L = P^-1 o C`` directly (spec "Global to local"); ``inv_sp = 1 / s_p``."""
    tp, rp, sp, vp, ap, wp, alp = p
    tc, rc, sc, vc, ac, wc, alc = c
    i1 = inv_sp[..., None]
    r = tc - tp
    wr = _ang_apply(n, wp, r)
    q = vc - vp - wr  # = s_p R_p v_l
    acc = ac - ap - _ang_apply(n, alp, r) - _ang_apply(n, wp, wr + 2.0 * q)
    return (
        _mtv(rp, r) * i1,
        _t(rp) @ rc,
        sc * inv_sp,
        _mtv(rp, q) * i1,
        _mtv(rp, acc) * i1,
        _ang_rotate_back(n, rp, wc - wp),
        _ang_rotate_back(n, rp, alc - alp - _ang_bracket(n, wp, wc)),
    )


def _identity_packed(n: int, shape=()):
    shape = tuple(shape)
    return (
        np.zeros(shape + (n,)),
        np.broadcast_to(np.eye(n), shape + (n, n)).copy(),
        np.ones(shape),
        np.zeros(shape + (n,)),
        np.zeros(shape + (n,)),
        _ang_zeros(n, shape),
        _ang_zeros(n, shape),
    )


def _core_ndims(n: int) -> tuple[int, ...]:
    k = _ang_ndim(n)
    return (1, 2, 0, 1, 1, k, k)


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
        parts = (
            self.translation,
            self.rotation,
            self.scale,
            self.velocity + _vector_input(delta.velocity, n, "delta.velocity"),
            self.acceleration + _vector_input(delta.acceleration, n, "delta.acceleration"),
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


def _broadcast_parts(n: int, parts, *, shape=None, copy: bool = False):
    cores = _core_ndims(n)
    if shape is None:
        shape = batch_shape("DynamicTransform", *zip(parts, cores, strict=True))
    out = []
    for part, k in zip(parts, cores, strict=True):
        b = np.broadcast_to(part, tuple(shape) + part.shape[part.ndim - k :])
        out.append(b.copy() if copy else b)
    return tuple(out)


# -- hierarchies --------------------------------------------------------------------------


def _check_hierarchy_input(hierarchy, x, what: str) -> DynamicTransform:
    if not isinstance(hierarchy, Hierarchy):
        raise InputError(f"hierarchy: expected a Hierarchy, got {type(hierarchy).__name__}", "hierarchy")
    if not isinstance(x, DynamicTransform):
        raise InputError(f"{what}: expected a DynamicTransform, got {type(x).__name__}", what)
    if x.shape != (len(hierarchy),):
        raise InputError(f"{what}: expected shape ({len(hierarchy)},) (one per node), got {x.shape}", what)
    return x


def local_to_global(hierarchy: Hierarchy, local: DynamicTransform) -> DynamicTransform:
    """Global (world) dynamics of every node from local ones: ``C = P o L`` root to leaf.

    Parameters
    ----------
    hierarchy : Hierarchy
        N nodes, any order, any depth.
    local : DynamicTransform, shape (N,)
        Each node relative to its parent (roots: relative to the world), rates in the
        parent's basis and units.

    Returns
    -------
    DynamicTransform, shape (N,)
        Each node relative to the world, rates in the world basis.

    Uses :meth:`Hierarchy.fold` with the associative composition: batched, no
    recursion, a chain a million deep costs about two million compositions.
    """
    x = _check_hierarchy_input(hierarchy, local, "local")
    return DynamicTransform._trusted(hierarchy.fold(x._packed(), _compose_packed(x.dim)))


def _parent_globals(hierarchy: Hierarchy, x: DynamicTransform, what: str):
    n = x.dim
    ident = _identity_packed(n)
    parent = tuple(hierarchy.parent_values(part, root) for part, root in zip(x._packed(), ident, strict=True))
    zero = (parent[2] == 0.0) & (hierarchy.parents >= 0)
    if zero.any():
        i = int(np.flatnonzero(zero)[0])
        p = int(hierarchy.parents[i])
        raise InputError(
            f"{what}.scale[{p}]: zero scale has no inverse, needed for the local dynamics of its child node {i}"
            + (f" ({hierarchy.names[i]!r})" if hierarchy.names is not None else ""),
            f"{what}.scale",
            (p,),
        )
    return parent


def global_to_local(hierarchy: Hierarchy, global_: DynamicTransform) -> DynamicTransform:
    """Local dynamics of every node from global ones: ``L = P^-1 o C`` per node.

    Parameters
    ----------
    hierarchy : Hierarchy
    global_ : DynamicTransform, shape (N,)
        Each node relative to the world.

    Returns
    -------
    DynamicTransform, shape (N,)
        Each node relative to its parent (roots: ``L = C``), rates in the parent's
        basis and units. Inverse of :func:`local_to_global`.

    One vectorised step (the parent's global is gathered per node); a zero parent
    scale raises :class:`InputError` naming the parent and the child.
    """
    x = _check_hierarchy_input(hierarchy, global_, "global_")
    parent = _parent_globals(hierarchy, x, "global_")
    return DynamicTransform._trusted(_relative_packed(x.dim, parent, x._packed(), 1.0 / parent[2]))


# -- instantaneous changes ----------------------------------------------------------------


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


def _make_delta(n: int, v, a, w, al) -> Delta:
    shape = batch_shape("Delta", (v, 1), (a, 1), (w, _ang_ndim(n)), (al, _ang_ndim(n)))
    v = np.broadcast_to(v, shape + (n,)).copy()
    a = np.broadcast_to(a, shape + (n,)).copy()
    return Delta(
        v,
        a,
        np.broadcast_to(_ang_to_matrix(n, w), shape + (n, n)).copy(),
        np.broadcast_to(_ang_to_matrix(n, al), shape + (n, n)).copy(),
    )


def _check_frame(frame, what: str = "frame") -> DynamicTransform:
    if not isinstance(frame, DynamicTransform):
        raise InputError(f"{what}: expected a DynamicTransform, got {type(frame).__name__}", what)
    return frame


def _axis_scale(frame: DynamicTransform, axis_scale):
    """Per-axis scale ``d (..., n) = s * axis_scale`` of the frame's linear map ``R diag(d)``."""
    n = frame.dim
    s = frame.scale[..., None]
    if axis_scale is None:
        return s, None
    k = as_array(axis_scale, "axis_scale", (None,))
    if k.shape[-1] != n:
        raise InputError(
            f"axis_scale: expected (..., {n}) per-axis scales for {n}-d frames, got shape {k.shape}", "axis_scale"
        )
    return s * k, k


def _inverse_axis_scale(d: np.ndarray, axis_scale) -> np.ndarray:
    zero = (d == 0.0).any(axis=-1)
    if zero.any():
        idx = first_index(zero)
        what = "frame.scale" if axis_scale is None else "frame.scale * axis_scale"
        raise InputError(f"{what}{where(idx)}: zero scale has no inverse", what, idx)
    return 1.0 / d


def _require_uniform(axis_scale, what: str) -> None:
    if axis_scale is None or not axis_scale.size:
        return
    spread = axis_scale.max(axis=-1) - axis_scale.min(axis=-1)
    bad = spread > UNIFORM_TOLERANCE * np.abs(axis_scale).max(axis=-1)
    if bad.any():
        idx = first_index(bad)
        values = ", ".join(f"{float(v):.6g}" for v in axis_scale[idx])
        raise InputError(
            f"{what}: cannot convert angular rates through the non-uniformly scaled frame "
            f"axis_scale{where(idx)} = ({values}): a rotation seen through a non-uniform scale is sheared and "
            "has no angular velocity or acceleration. Linear velocities and accelerations of points do convert "
            "(point_to_global, point_to_local, inertial_accelerations).",
            what,
            idx,
        )


def local_delta_to_global(
    frame: DynamicTransform,
    velocity=None,
    acceleration=None,
    angular_velocity=None,
    angular_acceleration=None,
    *,
    axis_scale=None,
) -> Delta:
    """A child's global change caused by a change of its local rates (the seed's
    ``TransformDelta*``).

    Parameters
    ----------
    frame : DynamicTransform, shape (...)
        ``P``, the parent's global dynamics (unchanged).
    velocity, acceleration : array_like, shape (..., n), optional
        Local changes ``dv_l``, ``da_l`` (parent's basis and units); default zero.
    angular_velocity, angular_acceleration : array_like, optional
        Local changes ``dW_l``, ``dA_l`` (forms as in :class:`DynamicTransform`).
    axis_scale : array_like, shape (..., n), optional
        Extra constant per-axis scale of the parent frame (its linear map is then
        ``s R diag(axis_scale)``). Linear changes convert exactly; angular ones raise
        :class:`InputError` where it is not uniform.

    Returns
    -------
    Delta
        ``dv = s R dv_l``; ``da = s R da_l + 2 W_p s R dv_l`` (a local velocity change
        changes the world acceleration through the parent's rotation: Coriolis);
        ``dW = R dW_l R^T``; ``dA = R dA_l R^T + [W_p, R dW_l R^T]``.
    """
    p = _check_frame(frame)
    n = p.dim
    d, k = _axis_scale(p, axis_scale)
    dv = d * _vector_input(velocity, n, "velocity")
    dv = _mv(p.rotation, dv)
    da = _mv(p.rotation, d * _vector_input(acceleration, n, "acceleration")) + 2.0 * _ang_apply(n, p._w, dv)
    if angular_velocity is not None or angular_acceleration is not None:
        _require_uniform(k, "angular_velocity" if angular_velocity is not None else "angular_acceleration")
    dw = _ang_rotate(n, p.rotation, _angular_input(angular_velocity, n, "angular_velocity"))
    dal = _ang_rotate(n, p.rotation, _angular_input(angular_acceleration, n, "angular_acceleration"))
    dal = dal + _ang_bracket(n, p._w, dw)
    return _make_delta(n, dv, da, dw, dal)


def global_delta_to_local(
    frame: DynamicTransform,
    velocity=None,
    acceleration=None,
    angular_velocity=None,
    angular_acceleration=None,
    *,
    axis_scale=None,
) -> Delta:
    """The local change that produces a given global change of a child (inverse of
    :func:`local_delta_to_global`).

    Parameters
    ----------
    frame : DynamicTransform, shape (...)
        ``P``, the parent's global dynamics (unchanged).
    velocity, acceleration : array_like, shape (..., n), optional
        Global changes ``dv``, ``da`` of the child (world basis); default zero.
    angular_velocity, angular_acceleration : array_like, optional
        Global changes ``dW``, ``dA``.
    axis_scale : array_like, shape (..., n), optional
        As in :func:`local_delta_to_global`.

    Returns
    -------
    Delta
        ``dv_l = R^T dv / s``; ``da_l = R^T (da - 2 W_p dv) / s`` -- an impulse with no
        change of world acceleration still changes the *local* acceleration (Coriolis);
        ``dW_l = R^T dW R``; ``dA_l = R^T (dA - [W_p, dW]) R``.
    """
    p = _check_frame(frame)
    n = p.dim
    d, k = _axis_scale(p, axis_scale)
    inv_d = _inverse_axis_scale(d, k)
    dv_w = _vector_input(velocity, n, "velocity")
    da_w = _vector_input(acceleration, n, "acceleration")
    dv = _mtv(p.rotation, dv_w) * inv_d
    da = _mtv(p.rotation, da_w - 2.0 * _ang_apply(n, p._w, dv_w)) * inv_d
    if angular_velocity is not None or angular_acceleration is not None:
        _require_uniform(k, "angular_velocity" if angular_velocity is not None else "angular_acceleration")
    dw_w = _angular_input(angular_velocity, n, "angular_velocity")
    dal_w = _angular_input(angular_acceleration, n, "angular_acceleration")
    dw = _ang_rotate_back(n, p.rotation, dw_w)
    dal = _ang_rotate_back(n, p.rotation, dal_w - _ang_bracket(n, p._w, dw_w))
    return _make_delta(n, dv, da, dw, dal)


def parent_delta_to_child(
    frame: DynamicTransform,
    local: DynamicTransform,
    velocity=None,
    acceleration=None,
    angular_velocity=None,
    angular_acceleration=None,
) -> Delta:
    """A child's global change when its parent's global rates change and its local
    rates do not.

    Parameters
    ----------
    frame : DynamicTransform, shape (...)
        ``P``, the parent's global dynamics *before* the change.
    local : DynamicTransform, shape (...)
        ``L``, the child relative to the parent (unchanged).
    velocity, acceleration, angular_velocity, angular_acceleration : optional
        The parent's global change ``dv_p, da_p, dW_p, dA_p`` (world basis).

    Returns
    -------
    Delta
        With ``r = s_p R_p t_l``, ``u = s_p R_p v_l``, ``W' = W_p + dW_p``:
        ``dv = dv_p + dW_p r``; ``da = da_p + dA_p r + (W'^2 - W_p^2) r + 2 dW_p u``;
        ``dW = dW_p``; ``dA = dA_p + [dW_p, R_p W_l R_p^T]``. Exact (not linearised).
    """
    p = _check_frame(frame)
    c = _check_frame(local, "local")
    n = p.dim
    if c.dim != n:
        raise InputError(f"local: {c.dim}-d child of a {n}-d frame", "local")
    dv_p = _vector_input(velocity, n, "velocity")
    da_p = _vector_input(acceleration, n, "acceleration")
    dw_p = _angular_input(angular_velocity, n, "angular_velocity")
    dal_p = _angular_input(angular_acceleration, n, "angular_acceleration")
    sp = p.scale[..., None]
    r = sp * _mv(p.rotation, c.translation)
    u = sp * _mv(p.rotation, c.velocity)
    w_new = p._w + dw_p
    dv = dv_p + _ang_apply(n, dw_p, r)
    da = (
        da_p
        + _ang_apply(n, dal_p, r)
        + _ang_apply(n, w_new, _ang_apply(n, w_new, r))
        - _ang_apply(n, p._w, _ang_apply(n, p._w, r))
        + 2.0 * _ang_apply(n, dw_p, u)
    )
    dal = dal_p + _ang_bracket(n, dw_p, _ang_rotate(n, p.rotation, c._w))
    return _make_delta(n, dv, da, dw_p, dal)


def counteract_inherited(
    frame: DynamicTransform,
    local: DynamicTransform,
    velocity=None,
    acceleration=None,
    angular_velocity=None,
    angular_acceleration=None,
) -> Delta:
    """The local change that keeps a child moving in the world as before while its
    parent's global rates change (the car crash: passengers keep going).

    Parameters
    ----------
    frame : DynamicTransform, shape (...)
        ``P``, the parent's global dynamics *before* the change.
    local : DynamicTransform, shape (...)
        ``L``, an immediate child of that parent.
    velocity, acceleration, angular_velocity, angular_acceleration : optional
        The parent's global change.

    Returns
    -------
    Delta
        To add to the child's local rates (``local.add_delta(...)``): the new local is
        ``P_new^-1 o (P o L)``, so the child's global dynamics are unchanged. Velocity
        part: ``-R_p^T (dv_p + dW_p r) / s_p``, ``dW_l = -R_p^T dW_p R_p``. Only the
        immediate children need it: grandchildren inherit the correction through the
        hierarchy.
    """
    p = _check_frame(frame)
    inherited = parent_delta_to_child(p, local, velocity, acceleration, angular_velocity, angular_acceleration)
    new_parent = p.add_delta(
        Delta(
            _vector_input(velocity, p.dim, "velocity"),
            _vector_input(acceleration, p.dim, "acceleration"),
            _ang_to_matrix(p.dim, _angular_input(angular_velocity, p.dim, "angular_velocity")),
            _ang_to_matrix(p.dim, _angular_input(angular_acceleration, p.dim, "angular_acceleration")),
        )
    )
    return global_delta_to_local(new_parent, *(-np.asarray(x) for x in inherited))


def linear_impulse(frame: DynamicTransform, impulse, mass=1.0, *, axis_scale=None) -> Delta:
    """Local change of a child's rates from a linear impulse ``J`` (world basis).

    ``dv = J / m`` globally; locally ``dv_l = R^T dv / s`` and, because the local
    acceleration depends on the local velocity, ``da_l = -2 R^T W_p dv / s`` (the
    Coriolis term; zero when the parent does not rotate). ``frame`` is the parent's
    global dynamics; ``impulse (..., n)``; ``mass (...)`` > 0.
    """
    p = _check_frame(frame)
    j = _vector_input(impulse, p.dim, "impulse")
    m = _positive(mass, "mass")
    return global_delta_to_local(p, j / m[..., None], axis_scale=axis_scale)


def _positive(value, what: str) -> np.ndarray:
    arr = as_array(value, what)
    bad = ~(arr > 0.0)
    if bad.any():
        idx = first_index(bad)
        raise InputError(f"{what}{where(idx)}: must be positive, got {float(arr[idx])!r}", what, idx)
    return arr


# -- points and Newtonian forces -------------------------------------------------------------


class PointMotion(NamedTuple):
    """Position, velocity and acceleration of points, ``(..., n)`` each."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


def point_to_global(
    frame: DynamicTransform, position, velocity=None, acceleration=None, *, axis_scale=None
) -> PointMotion:
    """World motion of points given in a moving frame.

    Parameters
    ----------
    frame : DynamicTransform, shape (...)
        The frame's global dynamics ``(t, R, s, v_F, a_F, W, A)``.
    position, velocity, acceleration : array_like, shape (..., n)
        The point's coordinates and rates in the frame (local units); rates default 0.
    axis_scale : array_like, shape (..., n), optional
        Constant per-axis scale of the frame: its linear map is ``L = s R diag(axis_scale)``
        (a Blender object scaled non-uniformly). Exact for points: non-uniform scale
        only breaks *angular* quantities of things parented to the frame.

    Returns
    -------
    PointMotion
        With ``r = L x``, ``u = L v``: ``x_w = t + r``, ``v_w = v_F + W r + u``,
        ``a_w = a_F + A r + W^2 r + 2 W u + L a`` (frame, Euler, centripetal, Coriolis,
        relative).
    """
    p = _check_frame(frame)
    n = p.dim
    d, _ = _axis_scale(p, axis_scale)
    x = _vector_input(position, n, "position")
    r = _mv(p.rotation, d * x)
    u = _mv(p.rotation, d * _vector_input(velocity, n, "velocity"))
    wr = _ang_apply(n, p._w, r)
    acc = (
        p.acceleration
        + _ang_apply(n, p._alpha, r)
        + _ang_apply(n, p._w, wr + 2.0 * u)
        + _mv(p.rotation, d * _vector_input(acceleration, n, "acceleration"))
    )
    return _point_motion(p.translation + r, p.velocity + wr + u, acc)


def _point_motion(x, v, a) -> PointMotion:
    shape = np.broadcast_shapes(x.shape, v.shape, a.shape)
    return PointMotion(*(np.broadcast_to(y, shape).copy() for y in (x, v, a)))


def point_to_local(
    frame: DynamicTransform, position, velocity=None, acceleration=None, *, axis_scale=None
) -> PointMotion:
    """Motion of world points as seen from a moving frame (inverse of :func:`point_to_global`).

    ``position``, ``velocity``, ``acceleration`` ``(..., n)`` in the world; returns them
    in the frame's coordinates and units: with ``r = x_w - t``, ``q = v_w - v_F - W r``:
    ``x = L^-1 r``, ``v = L^-1 q``, ``a = L^-1 (a_w - a_F - A r - W^2 r - 2 W q)``,
    ``L = s R diag(axis_scale)``. A zero scale raises :class:`InputError`.
    """
    p = _check_frame(frame)
    n = p.dim
    d, k = _axis_scale(p, axis_scale)
    inv_d = _inverse_axis_scale(d, k)
    r = _vector_input(position, n, "position") - p.translation
    wr = _ang_apply(n, p._w, r)
    q = _vector_input(velocity, n, "velocity") - p.velocity - wr
    acc = (
        _vector_input(acceleration, n, "acceleration")
        - p.acceleration
        - _ang_apply(n, p._alpha, r)
        - _ang_apply(n, p._w, wr + 2.0 * q)
    )
    return _point_motion(_mtv(p.rotation, r) * inv_d, _mtv(p.rotation, q) * inv_d, _mtv(p.rotation, acc) * inv_d)


class InertialAccelerations(NamedTuple):
    """Local acceleration of a body in a moving frame and its parts, ``(..., n)`` each,
    in the frame's basis and units: ``local = applied + linear + centrifugal + coriolis + euler``.

    applied
        ``R^T (f / m) / s``: the force seen from the frame.
    linear
        ``-R^T a_F / s``: the frame's own acceleration.
    centrifugal
        ``-Omega_b^2 x`` (3D ``-omega_b x (omega_b x x)``, 2D ``w^2 x``).
    coriolis
        ``-2 Omega_b v`` (3D ``-2 omega_b x v``, 2D ``-2 w perp(v)``).
    euler
        ``-alpha_b x`` (3D ``-alpha_b x x``, 2D ``-alpha perp(x)``).

    ``Omega_b = R^T W R`` and ``alpha_b = R^T A R`` are the frame's angular velocity and
    acceleration in its own basis.
    """

    local: np.ndarray
    applied: np.ndarray
    linear: np.ndarray
    centrifugal: np.ndarray
    coriolis: np.ndarray
    euler: np.ndarray


def inertial_accelerations(
    frame: DynamicTransform, position, velocity, force=None, mass=1.0, *, axis_scale=None, form: str = "auto"
) -> InertialAccelerations:
    """Newton in a non-inertial frame: a body's local acceleration and the inertial terms.

    Parameters
    ----------
    frame : DynamicTransform, shape (...)
        The parent's global dynamics (relative to an inertial world).
    position, velocity : array_like, shape (..., n)
        The body's local position ``x`` and velocity ``v`` in the frame.
    force : array_like, shape (..., n), optional
        Total applied force, world basis (``None``: no force, free motion).
    mass : array_like, shape (...), default 1
        Positive. (A known world acceleration ``a_w`` is ``force=a_w`` with ``mass=1``.)
    axis_scale : array_like, shape (..., n), optional
        Constant per-axis scale of the frame (its linear map ``s R diag(axis_scale)``);
        every term stays exact, each is ``diag(axis_scale)^-1`` of the uniform one
        applied to the scaled position / velocity.
    form : {"auto", "matrix", "vector"}
        ``"matrix"``: n x n skew matrices (any n); ``"vector"``: 3D cross products / 2D
        perpendicular vectors (n = 2, 3 only; faster). ``"auto"``: vector where possible.
        They agree to rounding.

    Returns
    -------
    InertialAccelerations
        ``local`` and its five parts, each ``(..., n)``, in the frame's basis and units.
        ``local`` equals ``point_to_local(frame, ...).acceleration`` of the body.
    """
    p = _check_frame(frame)
    n = p.dim
    if form not in ("auto", "matrix", "vector"):
        raise InputError(f"form: expected 'auto', 'matrix' or 'vector', got {form!r}", "form")
    if form == "vector" and n not in (2, 3):
        raise InputError(f"form: 'vector' needs 2D or 3D, this frame is {n}-d", "form")
    vector = form == "vector" or (form == "auto" and n in (2, 3))
    d, k = _axis_scale(p, axis_scale)
    inv_d = _inverse_axis_scale(d, k)
    x = d * _vector_input(position, n, "position")  # scaled: the offset in the frame's rotated basis
    v = d * _vector_input(velocity, n, "velocity")
    rot = p.rotation
    if force is None:
        applied = np.zeros(n)
    else:
        f = _vector_input(force, n, "force")
        m = _positive(mass, "mass")
        applied = _mtv(rot, f / m[..., None]) * inv_d
    linear = -_mtv(rot, p.acceleration) * inv_d
    if vector:
        w_b = _ang_rotate_back(n, rot, p._w)
        al_b = _ang_rotate_back(n, rot, p._alpha)
        wx = _ang_apply(n, w_b, x)
        centrifugal = -_ang_apply(n, w_b, wx) * inv_d
        coriolis = -2.0 * _ang_apply(n, w_b, v) * inv_d
        euler = -_ang_apply(n, al_b, x) * inv_d
    else:
        w_b = _t(rot) @ p.angular_velocity @ rot
        al_b = _t(rot) @ p.angular_acceleration @ rot
        centrifugal = -_mv(w_b, _mv(w_b, x)) * inv_d
        coriolis = -2.0 * _mv(w_b, v) * inv_d
        euler = -_mv(al_b, x) * inv_d
    # "+ 0.0" copies and turns the -0.0 of negated zero terms into 0.0 for reports.
    parts = [y + 0.0 for y in np.broadcast_arrays(applied, linear, centrifugal, coriolis, euler)]
    return InertialAccelerations(parts[0] + parts[1] + parts[2] + parts[3] + parts[4], *parts)


# -- finite differences of sampled animation ---------------------------------------------------


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
