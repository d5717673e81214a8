"""``report --dynamics``: velocities, accelerations and inertial terms of every node,
estimated from Blender's animation by central differences over the neighbouring frames.

World matrices are sampled at frames F-1, F, F+1 (``dt = 1 / fps``); the core's
:func:`~..core.dynamics_from_samples` turns them into rates (accurate to O(dt^2)). The
same is done with the local matrices (``inverse(parent world) @ world``), and for every
node with a parent the four inertial terms of the parent's motion acting on it are
computed by :func:`~..core.inertial_accelerations` (linear, centrifugal, Coriolis, Euler),
per unit mass, in the parent's basis. A non-uniformly scaled parent is handled exactly
for these point quantities (``axis_scale``); a sheared one only approximately (its
rotation is the Gram-Schmidt rotation of its axes). Nodes whose matrices are singular
at any of the three frames get ``null``.
"""

from __future__ import annotations

import numpy as np

from .. import core
from .inspection import Inspection, local_matrices
from .reading import read_nodes


def _sample(scene, frame: int) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
    scene.frame_set(frame)
    nodes = read_nodes(scene.objects, verify=False)
    local, singular = local_matrices(nodes)
    return nodes.keys, nodes.world, local, singular


def _regular(m: np.ndarray) -> np.ndarray:
    det = np.linalg.det(m[:, :3, :3])
    size = np.prod(np.sqrt(np.einsum("nij,nij->nj", m[:, :3, :3], m[:, :3, :3])), axis=-1)
    return np.abs(det) > 1e-9 * np.maximum(size, 1e-300)


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


def scene_dynamics(scene, inspection: Inspection) -> dict[int, dict]:
    """Per node index of ``inspection``, its ``dynamics`` report entry (or None)."""
    frame = scene.frame_current
    dt = scene.render.fps_base / scene.render.fps
    try:
        keys_prev, world_prev, local_prev, sing_prev = _sample(scene, frame - 1)
        keys_next, world_next, local_next, sing_next = _sample(scene, frame + 1)
    finally:
        scene.frame_set(frame)
    nodes = inspection.nodes
    if keys_prev != nodes.keys or keys_next != nodes.keys:
        raise ValueError("the scene's objects or bones change between frames: dynamics need the same nodes")
    world_now, local_now = nodes.world, inspection.local_matrices
    ok_world = _regular(world_prev) & _regular(world_now) & _regular(world_next)
    ok_local = ok_world & ~(sing_prev | sing_next | inspection.singular_parent)
    ok_local &= _regular(local_prev) & _regular(local_now) & _regular(local_next)
    g_idx, l_idx = np.flatnonzero(ok_world), np.flatnonzero(ok_local)
    glob = core.dynamics_from_samples(world_prev[g_idx], world_now[g_idx], world_next[g_idx], dt)
    loc = core.dynamics_from_samples(local_prev[l_idx], local_now[l_idx], local_next[l_idx], dt)
    g_pos = {int(i): k for k, i in enumerate(g_idx)}
    l_pos = {int(i): k for k, i in enumerate(l_idx)}

    # Inertial terms: children whose own local rates and whose parent's global rates exist.
    parents = nodes.parents
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
            glob.omega[pk],
            glob.alpha[pk],
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
    for i in range(len(nodes)):
        out[i] = {
            "dt": dt,
            "local": _rates(loc, l_pos[i], "parent") if i in l_pos else None,
            "global": _rates(glob, g_pos[i], "world") if i in g_pos else None,
            "inertial": inertial.get(i),
        }
    return out
