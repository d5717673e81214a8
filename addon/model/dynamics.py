"""Velocities, accelerations and inertial terms of every node from world and local
matrices sampled at three neighbouring frames (Blender-free; the scene layer samples).

The core's :func:`~...core.dynamics_from_samples` turns samples into rates (central
differences, accurate to O(dt^2)), for the world matrices and the local matrices
(``inverse(parent world) @ world``); for every node with a parent the four inertial
terms of the parent's motion acting on it come from
:func:`~...core.inertial_accelerations` (linear, centrifugal, Coriolis, Euler), per unit
mass, in the parent's basis. A non-uniformly scaled parent is handled exactly for these
point quantities (``axis_scale``); a sheared one only approximately (its rotation is the
Gram-Schmidt rotation of its axes). Nodes whose matrices are singular at any of the
three frames get ``None``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import core


class FrameSamples(NamedTuple):
    """World and local matrices ``(3, N, 4, 4)`` at frames F-1, F, F+1, which parents
    are singular ``(3, N)``, the parents ``(N,)`` and the frame step ``dt`` (seconds)."""

    world: np.ndarray
    local: np.ndarray
    singular_parent: np.ndarray
    parents: np.ndarray
    dt: float


def _regular(m: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: matrices ``(N, 4, 4)`` whose 3x3 part has a rotation the core can
    take apart: columns far from parallel (determinant above 1e-9 of the product of the
    column lengths) and none collapsed (every column longer than 1e-9 of the largest, and
    of 1 unit: :func:`core.dynamics_from_samples` refuses a column of 1e-13 even when the
    others are as small)."""
    lengths = np.sqrt(np.einsum("nij,nij->nj", m[:, :3, :3], m[:, :3, :3]))
    det = np.linalg.det(m[:, :3, :3])
    shaped = np.abs(det) > 1e-9 * np.maximum(np.prod(lengths, axis=-1), 1e-300)
    return shaped & (lengths.min(axis=-1) > 1e-9 * np.maximum(1.0, lengths.max(axis=-1)))


def _vec(v) -> list:
    return [float(x) + 0.0 for x in v]


def _rates(sampled: core.SampledDynamics, k: int, basis: str) -> dict:
    return {
        "basis": basis,
        "velocity": _vec(sampled.velocity[k]),
        "acceleration": _vec(sampled.acceleration[k]),
        "angular_velocity": _vec(sampled.omega[k]),
        "angular_acceleration": _vec(sampled.alpha[k]),
    }


def dynamics_entries(samples: FrameSamples) -> dict[int, dict]:
    """Per node index, its report ``dynamics`` entry: ``local`` and ``global`` rates
    (velocity, acceleration, angular velocity and acceleration, per second) and the
    ``inertial`` terms of its parent's motion; a part is None where it is undefined."""
    world_prev, world_now, world_next = samples.world
    local_prev, local_now, local_next = samples.local
    dt = samples.dt
    ok_world = _regular(world_prev) & _regular(world_now) & _regular(world_next)
    ok_local = ok_world & ~samples.singular_parent.any(axis=0)
    ok_local &= _regular(local_prev) & _regular(local_now) & _regular(local_next)
    g_idx, l_idx = np.flatnonzero(ok_world), np.flatnonzero(ok_local)
    glob = core.dynamics_from_samples(world_prev[g_idx], world_now[g_idx], world_next[g_idx], dt)
    loc = core.dynamics_from_samples(local_prev[l_idx], local_now[l_idx], local_next[l_idx], dt)
    g_pos = {int(i): k for k, i in enumerate(g_idx)}
    l_pos = {int(i): k for k, i in enumerate(l_idx)}

    # Inertial terms: children whose own local rates and whose parent's global rates exist.
    parents = samples.parents
    children = np.array([i for i in l_idx if parents[i] >= 0 and int(parents[i]) in g_pos], dtype=np.int64)
    inertial = {}
    if len(children):
        pk = np.array([g_pos[int(parents[i])] for i in children])
        ck = np.array([l_pos[int(i)] for i in children])
        frame_dyn = core.DynamicTransform(
            glob.translation[pk],
            glob.rotation[pk],
            1.0,
            glob.velocity[pk],
            glob.acceleration[pk],
            core.hat(glob.omega[pk]),  # skew matrices: a batch of 3 vectors would read as one matrix
            core.hat(glob.alpha[pk]),
        )
        terms = core.inertial_accelerations(frame_dyn, loc.translation[ck], loc.velocity[ck], axis_scale=glob.scale[pk])
        for j, i in enumerate(children):
            inertial[int(i)] = {
                "basis": "parent",
                "linear": _vec(terms.linear[j]),
                "centrifugal": _vec(terms.centrifugal[j]),
                "coriolis": _vec(terms.coriolis[j]),
                "euler": _vec(terms.euler[j]),
            }

    out: dict[int, dict] = {}
    for i in range(len(parents)):
        out[i] = {
            "dt": dt,
            "local": _rates(loc, l_pos[i], "parent") if i in l_pos else None,
            "global": _rates(glob, g_pos[i], "world") if i in g_pos else None,
            "inertial": inertial.get(i),
        }
    return out
