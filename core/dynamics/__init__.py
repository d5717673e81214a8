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

Modules
-------
- :mod:`.packed`: the algebra on packed tuples ``(t, R, s, v, a, w, alpha)`` (compose,
  inverse, relative, identity), the n-d angular helpers and the input checks;
- :mod:`.transform`: :class:`DynamicTransform` and its group law;
- :mod:`.tree`: :func:`local_to_global` / :func:`global_to_local` over a ``Hierarchy``;
- :mod:`.deltas`: :class:`Delta` and instantaneous changes of rates between frames;
- :mod:`.inertial`: points in moving frames, Newton in non-inertial frames;
- :mod:`.sampling`: rates of sampled animation by central differences.
"""

# The "X as X" imports re-export, outside __all__, what was importable from the single
# module before the split: the tolerances and the packed group law
# (benchmarks/bench_dynamics.py folds with _compose_packed).
from ._args import UNIFORM_TOLERANCE as UNIFORM_TOLERANCE
from .deltas import (
    Delta,
    counteract_inherited,
    global_delta_to_local,
    linear_impulse,
    local_delta_to_global,
    parent_delta_to_child,
)
from .inertial import InertialAccelerations, PointMotion, inertial_accelerations, point_to_global, point_to_local
from .packed import SKEW_TOLERANCE as SKEW_TOLERANCE
from .packed import _compose_packed as _compose_packed
from .packed import _identity_packed as _identity_packed
from .packed import _inverse_packed as _inverse_packed
from .packed import _relative_packed as _relative_packed
from .sampling import SampledDynamics, dynamics_from_samples
from .transform import DynamicTransform
from .tree import global_to_local, local_to_global

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
