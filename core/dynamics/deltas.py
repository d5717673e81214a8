"""Instantaneous changes of rates (poses unchanged) and how they look from other frames.

:class:`Delta` holds a change; :func:`local_delta_to_global` and
:func:`global_delta_to_local` convert a child's change between its parent's frame and the
world, :func:`parent_delta_to_child` gives what a child inherits from a change of its
parent, :func:`counteract_inherited` the local change that cancels it (the car crash:
passengers keep going), and :func:`linear_impulse` the local change from an impulse.
Every frame is a :class:`DynamicTransform` (the parent's global dynamics); conventions as
in :mod:`hierarchy_inspector.core.dynamics`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, batch_shape
from ._args import _axis_scale, _check_frame, _frame_batch, _inverse_axis_scale, _positive, _require_uniform
from .packed import (
    _ang_apply,
    _ang_bracket,
    _ang_ndim,
    _ang_rotate,
    _ang_rotate_back,
    _ang_to_matrix,
    _angular_input,
    _mtv,
    _mv,
    _vector_input,
)
from .transform import Delta, DynamicTransform

__all__ = [
    "Delta",
    "local_delta_to_global",
    "global_delta_to_local",
    "parent_delta_to_child",
    "counteract_inherited",
    "linear_impulse",
]


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


def _delta_batch(what: str, frame: DynamicTransform, v, a, w, al, **more) -> tuple[int, ...]:
    """:func:`_frame_batch` of a frame and the four (packed) rate changes, plus ``more``."""
    k = _ang_ndim(frame.dim)
    rates = {"velocity": (v, 1), "acceleration": (a, 1), "angular_velocity": (w, k), "angular_acceleration": (al, k)}
    return _frame_batch(what, frame, **rates, **more)


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
    dv_l = _vector_input(velocity, n, "velocity")
    da_l = _vector_input(acceleration, n, "acceleration")
    dw_l = _angular_input(angular_velocity, n, "angular_velocity")
    dal_l = _angular_input(angular_acceleration, n, "angular_acceleration")
    _delta_batch("local_delta_to_global", p, dv_l, da_l, dw_l, dal_l)
    dv = d * dv_l
    dv = _mv(p.rotation, dv)
    da = _mv(p.rotation, d * da_l) + 2.0 * _ang_apply(n, p._w, dv)
    if angular_velocity is not None or angular_acceleration is not None:
        _require_uniform(k, "angular_velocity" if angular_velocity is not None else "angular_acceleration")
    dw = _ang_rotate(n, p.rotation, dw_l)
    dal = _ang_rotate(n, p.rotation, dal_l)
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
    dw_w = _angular_input(angular_velocity, n, "angular_velocity")
    dal_w = _angular_input(angular_acceleration, n, "angular_acceleration")
    _delta_batch("global_delta_to_local", p, dv_w, da_w, dw_w, dal_w)
    dv = _mtv(p.rotation, dv_w) * inv_d
    da = _mtv(p.rotation, da_w - 2.0 * _ang_apply(n, p._w, dv_w)) * inv_d
    if angular_velocity is not None or angular_acceleration is not None:
        _require_uniform(k, "angular_velocity" if angular_velocity is not None else "angular_acceleration")
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
    _delta_batch("parent_delta_to_child", p, dv_p, da_p, dw_p, dal_p, local=(c.scale, 0))
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
    _frame_batch("linear_impulse", p, impulse=(j, 1), mass=(m, 0))
    return global_delta_to_local(p, j / m[..., None], axis_scale=axis_scale)
