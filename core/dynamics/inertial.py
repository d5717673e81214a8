"""Points in moving frames and Newton in non-inertial frames.

:func:`point_to_global` / :func:`point_to_local` convert the position, velocity and
acceleration of points (:class:`PointMotion`) between a moving frame and the world;
:func:`inertial_accelerations` splits a body's local acceleration into the applied,
linear, centrifugal, Coriolis and Euler terms (:class:`InertialAccelerations`). Frames
may carry a constant per-axis scale (``axis_scale``): exact for points.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ._args import _axis_scale, _check_frame, _frame_batch, _inverse_axis_scale, _positive
from .packed import _ang_apply, _ang_rotate_back, _mtv, _mv, _t, _vector_input
from .transform import DynamicTransform

__all__ = ["PointMotion", "point_to_global", "point_to_local", "InertialAccelerations", "inertial_accelerations"]


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
    vel = _vector_input(velocity, n, "velocity")
    acc_local = _vector_input(acceleration, n, "acceleration")
    _frame_batch("point_to_global", p, position=(x, 1), velocity=(vel, 1), acceleration=(acc_local, 1))
    r = _mv(p.rotation, d * x)
    u = _mv(p.rotation, d * vel)
    wr = _ang_apply(n, p._w, r)
    acc = (
        p.acceleration + _ang_apply(n, p._alpha, r) + _ang_apply(n, p._w, wr + 2.0 * u) + _mv(p.rotation, d * acc_local)
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
    x = _vector_input(position, n, "position")
    vel = _vector_input(velocity, n, "velocity")
    acc_world = _vector_input(acceleration, n, "acceleration")
    _frame_batch("point_to_local", p, position=(x, 1), velocity=(vel, 1), acceleration=(acc_world, 1))
    r = x - p.translation
    wr = _ang_apply(n, p._w, r)
    q = vel - p.velocity - wr
    acc = acc_world - p.acceleration - _ang_apply(n, p._alpha, r) - _ang_apply(n, p._w, wr + 2.0 * q)
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
    pos = _vector_input(position, n, "position")
    vel = _vector_input(velocity, n, "velocity")
    f = None if force is None else _vector_input(force, n, "force")
    m = None if force is None else _positive(mass, "mass")
    _frame_batch(
        "inertial_accelerations",
        p,
        position=(pos, 1),
        velocity=(vel, 1),
        force=(np.zeros(n) if f is None else f, 1),
        mass=(np.ones(()) if m is None else m, 0),
    )
    x = d * pos  # scaled: the offset in the frame's rotated basis
    v = d * vel
    rot = p.rotation
    if f is None or m is None:
        applied = np.zeros(n)
    else:
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
