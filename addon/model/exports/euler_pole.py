"""Keeping FBX rotations away from the Euler pole.

Blender's FBX exporter writes every node's rotation as Euler XYZ angles, computed in
single precision from a single-precision quaternion (``rot.to_euler('XYZ', ...)``).
Near a middle angle of +-90 degrees (the pole, gimbal lock) the first and last angles
come from entries of size ``cos(middle)``, each off by about float32 epsilon, so the
rotation written is off by about ``2 eps / cos(middle)`` radians: 1.8e-4 rad at 0.06
degrees from the pole (measured on the 300-object benchmark: Blender's own export is
3.4e-5 relative off there; with those rotations exact, 3.2e-6).

A node's rotation written to the file (``before @ R @ after``, the exporter's own
conversions: :data:`FBX_GLOBAL` on nodes without a parent in the file, :data:`LIGHT_TURN`
and :data:`CAMERA_TURN` on lights and cameras) can be moved off the pole with a node
above it: ``outer @ inner`` becomes ``(outer @ C) (C.T @ inner)`` for one of the 24
rotations ``C`` that map axes to axes, constant in time. Both factors stay one TRS
(``S @ C == C @ S'`` with ``S'`` the permuted scale) and their product is unchanged.

Shapes: ``(T, K)`` TRS (time first), rotations ``(..., 3, 3)``; column vectors;
quaternions ``(w, x, y, z)``. Numpy only.
"""

from __future__ import annotations

import numpy as np

from .... import core
from .animated_split import continuous_quaternions

#: Blender's axes (Z up, Y forward) to the FBX exporter's defaults (Y up, -Z forward),
#: ``axis_conversion(to_forward='-Z', to_up='Y')``: applied by the exporter to the
#: rotation of nodes without a parent in the file.
FBX_GLOBAL = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
#: The exporter's turn of lights (90 degrees about X) and cameras (90 about Y), applied
#: after their own rotation.
LIGHT_TURN = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
CAMERA_TURN = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])

#: Nodes whose written rotation comes this close to the pole (degrees) at some frame
#: are candidates for a turned helper even when they need no split (float32 error up
#: to about 2.7e-6 rad at the limit); :func:`pole_turns` keeps those whose estimated
#: error in the file (:func:`pole_errors`) exceeds the caller's budget.
POLE_DEG = 5.0
#: float32 epsilon: the precision of the exporter's Euler angles and of FBX curves.
EPS32 = float(np.finfo(np.float32).eps)
#: Blender's float32 Euler conversion takes its gimbal branch below ``cos(middle) =
#: 16 eps32``; the float32 quaternion moves ``cos`` by about ``eps32``, so below 12 the
#: branch is sure (the error about ``eps32``) and from 12 on the estimate counts the
#: other branch's ``eps32 / cos`` (up to 1/12 rad: a node within 1e-6 rad of the pole
#: but not on it is written with an error of that size; measured 7.3e-2 at 2e-6).
GIMBAL_COS = 12.0 * EPS32
#: |sin| of the middle angle above which a helper that exists anyway is turned.
TURN_ABOVE = np.sin(np.radians(60.0))


def _axis_turns() -> np.ndarray:
    """The 24 rotations that map axes to axes ``(24, 3, 3)``, the identity first."""
    turns = []
    for perm in ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2)):
        for signs in np.array(np.meshgrid([1, -1], [1, -1], [1, -1], indexing="ij")).reshape(3, -1).T:
            c = np.zeros((3, 3))
            c[list(perm), [0, 1, 2]] = signs
            if np.linalg.det(c) > 0:
                turns.append(c)
    return np.array(turns)


TURNS = _axis_turns()


def _written(rotation: np.ndarray, before, after) -> np.ndarray:
    """``before @ rotation @ after`` for ``rotation (T, K, 3, 3)`` and constant
    ``before``, ``after`` (``(K, 3, 3)`` or None: the identity)."""
    if before is not None:
        rotation = np.einsum("kij,tkjl->tkil", before, rotation)
    if after is not None:
        rotation = np.einsum("tkij,kjl->tkil", rotation, after)
    return rotation


def middle_sine(rotation: np.ndarray, before=None, after=None) -> np.ndarray:
    """``(T, K)`` ``|sin|`` of the Euler XYZ middle angle of the written rotation
    ``before @ rotation @ after`` (``R = Rz Ry Rx``: ``sin(middle) = -R[2, 0]``)."""
    return np.abs(_written(rotation, before, after)[..., 2, 0])


def axis_turns(outer: core.TRS, inner: core.TRS, before=None, after=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each column of the split ``outer, inner (T, K)``: the axis rotation (index
    into :data:`TURNS`, ``(K,)``) that keeps both written rotations' middle angle
    farthest from the pole over the frames, the worst ``|sin|`` of the middle angle
    over the frames and both factors with it, and the same unturned ``(K,)``.
    ``before`` applies to the outer factor's written rotation, ``after`` to the
    inner's (see :func:`middle_sine`)."""
    r1 = _written(core.quat_to_matrix(outer.rotation), before, None)  # (T, K, 3, 3)
    r2 = _written(core.quat_to_matrix(inner.rotation), None, after)
    # For R1 @ C: row 2 of R1 dot column 0 of C; for C.T @ R2: column 2 of C dot column 0 of R2.
    sin1 = np.abs(np.einsum("tki,ci->ctk", r1[..., 2, :], TURNS[:, :, 0])).max(axis=1)  # (24, K)
    sin2 = np.abs(np.einsum("tki,ci->ctk", r2[..., :, 0], TURNS[:, :, 2])).max(axis=1)
    score = np.maximum(sin1, sin2)
    best = score.argmin(axis=0)
    return best, score[best, np.arange(score.shape[1])], score[0]


def apply_turns(outer: core.TRS, inner: core.TRS, turns: np.ndarray) -> tuple[core.TRS, core.TRS]:
    """The split ``outer, inner (T, K)`` with column ``k``'s helper frame turned by
    ``TURNS[turns[k]]`` (``C``): ``outer @ C`` and ``C.T @ inner``, the same product,
    each still one TRS, quaternions continuous in time."""
    moved = np.flatnonzero(turns)
    if not len(moved):
        return outer, inner
    c = TURNS[turns[moved]]  # (M, 3, 3)
    qc = core.matrix_to_quat(c)
    perm = np.abs(c).argmax(axis=-2)  # perm[m, i]: the axis column i of C takes
    rotation, scale = outer.rotation.copy(), outer.scale.copy()
    rotation[:, moved] = continuous_quaternions(core.quat_multiply(outer.rotation[:, moved], qc))
    scale[:, moved] = np.take_along_axis(scale[:, moved], np.broadcast_to(perm, scale[:, moved].shape), axis=-1)
    translation_in, rotation_in = inner.translation.copy(), inner.rotation.copy()
    translation_in[:, moved] = np.einsum("mji,tmj->tmi", c, inner.translation[:, moved])
    rotation_in[:, moved] = continuous_quaternions(
        core.quat_multiply(core.quat_conjugate(qc), inner.rotation[:, moved])
    )
    return core.TRS(outer.translation, rotation, scale), core.TRS(translation_in, rotation_in, inner.scale)


def turned(outer: core.TRS, inner: core.TRS, before=None, after=None) -> tuple[core.TRS, core.TRS]:
    """The split ``outer, inner (T, K)`` with each helper's frame turned
    (:func:`apply_turns`) by the axis rotation that keeps both factors farthest from
    the pole (:func:`axis_turns`); columns whose worst ``|sin|`` of the middle angle is
    at most :data:`TURN_ABOVE` (60 degrees) keep ``C = I``."""
    best, _score, unturned = axis_turns(outer, inner, before, after)
    return apply_turns(outer, inner, np.where(unturned > TURN_ABOVE, best, 0))


def _ancestor_pairs(parents: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(a, d)`` of a node ``a`` with ``wanted[a]`` and a node ``d`` of its
    subtree (itself included): ``(ancestors (P,), descendants (P,))``. One vectorised
    step per level (no recursion)."""
    nodes = np.arange(len(parents))
    up, down = [nodes[wanted]], [nodes[wanted]]
    current, below = parents.copy(), nodes
    while True:
        alive = current >= 0
        current, below = current[alive], below[alive]
        if not len(current):
            break
        hit = wanted[current]
        up.append(current[hit])
        down.append(below[hit])
        current = parents[current]
    return np.concatenate(up), np.concatenate(down)


def _skew(a: np.ndarray) -> np.ndarray:
    """``[a]x (..., 3, 3)``, the cross product with ``a (..., 3)`` as a matrix."""
    z = np.zeros(a.shape[:-1])
    rows = [z, -a[..., 2], a[..., 1], a[..., 2], z, -a[..., 0], -a[..., 1], a[..., 0], z]
    return np.stack(rows, axis=-1).reshape(a.shape[:-1] + (3, 3))


def pole_errors(world: np.ndarray, parents: np.ndarray, nodes: np.ndarray, sine: np.ndarray, before=None) -> np.ndarray:
    """``(M,)`` the estimated largest error (scene units, world matrix entries) that
    writing the rotations of ``nodes (M,)`` as float32 Euler angles causes in them and
    their subtrees over the frames of ``world (T, N, 4, 4)`` (``parents (N,)``, -1 for
    none; ``sine (T, M)``: :func:`middle_sine` of their written rotations).

    Near the pole the first and last angles are off by about ``eps32 / cos(middle)``
    each, and both turn about the same axis there: the file's z of the node's parent
    (``before.T @ z`` in Blender's axes). An error ``w`` about that axis ``a`` moves a
    point ``x`` of the subtree by ``P [a]x P^-1 (x - o) w`` (``P`` the parent's world
    3x3, ``o`` the node's origin) and turns its axes by ``P [a]x P^-1 X``. Both are
    computed for every node of every subtree at every frame (the pairs in blocks), with
    ``w = 2 eps32 / cos(middle)`` while ``cos`` is over :data:`GIMBAL_COS`; below it
    Blender's conversion takes its gimbal branch (``cy <= 16 FLT_EPSILON``), where the
    angles are off by about ``eps32`` (an object turned exactly 90 degrees is written
    well), and ``w = 2 eps32``. On the 300-object benchmark this estimate was
    0.96-3.4x the error measured in Blender's file, node by node (the ten whose error showed above
    the 2.9e-6 that float32 worlds leave)."""
    world = np.asarray(world, dtype=np.float64)
    t, m = sine.shape
    if not m:
        return np.zeros(0)
    axis = np.broadcast_to([0.0, 0.0, 1.0], (m, 3)) if before is None else before[:, 2, :]  # before.T @ z
    has = parents[nodes] >= 0
    parent3 = np.where(has[None, :, None, None], world[:, np.maximum(parents[nodes], 0), :3, :3], np.eye(3))
    cos = np.sqrt(1.0 - np.minimum(sine, 1.0) ** 2)
    rate = 2.0 * EPS32 / np.where(cos > GIMBAL_COS, cos, 1.0)  # (T, M) radians
    # P [a]x P^-1 == P P^T [P a]x / det(P) (from M^T [M a]x M == det(M) [a]x): no inverse.
    det = core.determinant3(parent3)
    scale = np.divide(rate, det, out=np.zeros_like(rate), where=det != 0.0)
    turn = (parent3 @ np.swapaxes(parent3, -1, -2)) @ _skew(np.einsum("tmij,mj->tmi", parent3, axis))
    turn *= scale[..., None, None]  # (T, M, 3, 3): the move per unit of position and axis
    wanted = np.zeros(len(parents), dtype=bool)
    wanted[nodes] = True
    column = np.full(len(parents), -1, dtype=np.int64)
    column[nodes] = np.arange(m)
    up, down = _ancestor_pairs(np.asarray(parents, dtype=np.int64), wanted)
    out = np.zeros(m)
    step = max(1, (1 << 16) // max(t, 1))
    for lo in range(0, len(up), step):
        k, j = column[up[lo : lo + step]], down[lo : lo + step]
        moved = world[:, j, :3, :]  # (T, P, 3, 4) copy: the axes, and the position from the node's origin
        moved[..., 3] -= world[:, nodes[k]][..., :3, 3]
        along = turn[:, k]
        effect = along[..., :, 0, None] * moved[..., 0, None, :]
        for c in (1, 2):  # per column: numpy's stacked small matmul is slower
            effect += along[..., :, c, None] * moved[..., c, None, :]
        np.maximum.at(out, k, np.abs(effect).reshape(t, len(j), 12).max(axis=(0, 2)))
    return out


def pole_turns(
    local: np.ndarray,
    before=None,
    after=None,
    *,
    world: np.ndarray,
    parents: np.ndarray,
    nodes: np.ndarray,
    budget: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The nodes ``nodes (K,)`` (their local matrices ``local (T, K, 4, 4)``, in the
    scene ``world (T, N, 4, 4)``, ``parents (N,)``) whose written rotation comes within
    :data:`POLE_DEG` of the pole at some frame, whose estimated error in the file
    (:func:`pole_errors`) is over ``budget`` (scene units), and that an axis turn moves
    farther from the pole: ``(columns (M,), turns (M, 3, 3))``. A constant helper with
    rotation ``C = turns[m]`` above the node (in the file: ``before @ C``) and the
    node's local matrix ``C.T @ local`` (written ``C.T @ R @ after``) have the same
    product. The node's own animation stays: only its parent changes (Blender:
    ``matrix_parent_inverse`` becomes ``C.T @`` it)."""
    m = np.asarray(local, dtype=np.float64)
    sine = _written_sine(m[..., :3, :3], before, after)
    limit = np.cos(np.radians(POLE_DEG))
    near = np.flatnonzero(sine.max(axis=0) > limit)
    if len(near):
        errors = pole_errors(world, parents, np.asarray(nodes)[near], sine[:, near], _rows(before, near))
        near = near[errors > budget]
    if not len(near):
        return near, np.zeros((0, 3, 3))
    shape = (len(m), len(near))
    identity = core.TRS(np.zeros((*shape, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (*shape, 1)), np.ones((*shape, 3)))
    node = core.TRS(np.zeros((*shape, 3)), core.decompose(m[:, near]).rotation, np.ones((*shape, 3)))
    best, score, _unturned = axis_turns(identity, node, _rows(before, near), _rows(after, near))
    helps = score < limit  # a turn that leaves it near the pole (it turns every way) is not made
    return near[helps], TURNS[best[helps]]


def _written_sine(columns: np.ndarray, before, after) -> np.ndarray:
    """:func:`middle_sine` of shear-free 3x3 parts ``(T, K, 3, 3)`` without their
    rotation: each is its columns over their lengths (up to a sign, which ``|sin|``
    ignores); ``(before @ R @ after)[2, 0]`` in one pass, no ``(T, K, 3, 3)`` copy."""
    k = columns.shape[1]
    row = np.broadcast_to([0.0, 0.0, 1.0], (k, 3)) if before is None else np.asarray(before)[:, 2, :]
    col = np.broadcast_to([1.0, 0.0, 0.0], (k, 3)) if after is None else np.asarray(after)[:, :, 0]
    lengths = np.sqrt(np.einsum("tkij,tkij->tkj", columns, columns))
    weights = col[None] / np.where(lengths > 0.0, lengths, 1.0)  # (T, K, 3)
    return np.abs(np.einsum("ki,tkij,tkj->tk", row, columns, weights))


def _rows(a, rows: np.ndarray):
    return None if a is None else np.asarray(a)[rows]
