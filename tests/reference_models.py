"""Independent, deliberately naive reference implementations for the tests.

These follow the seed articles line by line: one node at a time, plain Python loops,
4x4 matrices built by hand. They share no code with ``core`` beyond numpy, so a bug in
the batched code cannot hide in both.
"""

from __future__ import annotations

import math

import numpy as np


def qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def qconj(q):
    return np.array([q[0], -q[1], -q[2], -q[3]])


def qrot(q, v):
    """Rotate v by unit q as q * (0, v) * q^-1."""
    return qmul(qmul(q, np.array([0.0, *v])), qconj(q))[1:]


def qmat(q):
    """Rotation matrix whose columns are the rotated basis vectors."""
    return np.stack([qrot(q, e) for e in np.eye(3)], axis=1)


def trs_matrix(t, q, s):
    m = np.eye(4)
    m[:3, :3] = qmat(q) @ np.diag(s)
    m[:3, 3] = t
    return m


def ancestors(parents, i):
    """Chain from the root down to node i (inclusive), by walking up iteratively."""
    chain = [i]
    while parents[chain[-1]] >= 0:
        chain.append(int(parents[chain[-1]]))
    return chain[::-1]


def combine(a, b):
    """The seed's CombineTransforms(a = parent, b = child) on (t, q, s) tuples."""
    at, aq, as_ = a
    bt, bq, bs = b
    return (at + qrot(aq, as_ * bt), qmul(aq, bq), as_ * bs)


def world_transform(parents, local, i):
    """The seed's GetWorldTransform, folded root to leaf along node i's chain."""
    chain = ancestors(parents, i)
    world = local[chain[0]]
    for j in chain[1:]:
        world = combine(world, local[j])
    return world


def world_matrix(parents, local_matrices, i):
    out = np.eye(local_matrices.shape[-1])
    for j in ancestors(parents, i):
        out = out @ local_matrices[j]
    return out


def global_rotation(parents, local, i):
    """The seed's GetGlobalRotation."""
    rotation = local[i][1]
    it = parents[i]
    while it >= 0:
        rotation = qmul(local[it][1], rotation)
        it = parents[it]
    return rotation


def global_position(parents, local, i):
    """The seed's GetGlobalPosition: scale, then rotate, then translate per ancestor."""
    pos = np.array(local[i][0], dtype=float)
    it = parents[i]
    while it >= 0:
        pos = pos * local[it][2]
        pos = qrot(local[it][1], pos)
        pos = pos + local[it][0]
        it = parents[it]
    return pos


def global_rotation_and_scale(parents, local, i):
    """The seed's GetGlobalRotationAndScale (iterative)."""
    rs = qmat(local[i][1]) @ np.diag(local[i][2])
    it = parents[i]
    while it >= 0:
        rs = qmat(local[it][1]) @ np.diag(local[it][2]) @ rs
        it = parents[it]
    return rs


def lossy_scale(parents, local, i):
    """The seed's GetGlobalLossyScale."""
    inv_rotation = qmat(qconj(global_rotation(parents, local, i)))
    scale_and_skew = inv_rotation @ global_rotation_and_scale(parents, local, i)
    return np.diag(scale_and_skew).copy()


def angle_between_deg(a, b):
    return math.degrees(math.acos(max(-1.0, min(1.0, float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))))))


def quat_matrix_formula(q, scale=None):
    """The textbook entries of a quaternion's rotation matrix, batched, each written out
    and rounded exactly as in the formula (``1 - 2 (y^2 + z^2)``, ``2 (x y + w z)``, ...);
    columns times ``scale`` when given. Any (non-unit too) quaternions ``(..., 4)``."""
    q = np.asarray(q, dtype=np.float64)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = (
        (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)),
        (2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)),
        (2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)),
    )
    out = np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)
    return out if scale is None else out * np.asarray(scale, dtype=np.float64)[..., None, :]
