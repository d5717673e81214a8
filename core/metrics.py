"""How far apart two sets of world transforms are, in numbers an artist recognises:
position distance, rotation angle, and how far the corners of each node's box move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .decompose import rotation_frames
from .errors import InputError, as_array, batch_shape

__all__ = ["Deviation", "deviation", "box_corners", "corner_distance", "box_corner_distance", "rotation_angle_deg"]

#: Unit cube corners ``(8, 3)`` in {0, 1}^3, X varying fastest.
_UNIT_CORNERS = np.array([[(i >> 0) & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=np.float64)


class Deviation(NamedTuple):
    """Per-node differences ``(N,)``: position distance and largest corner distance in
    scene units, rotation angle in degrees."""

    position: np.ndarray
    rotation_deg: np.ndarray
    max_corner: np.ndarray


def box_corners(box_min, box_max) -> np.ndarray:
    """Corners ``(..., 8, 3)`` of axis-aligned local boxes given by ``(..., 3)`` bounds."""
    lo = as_array(box_min, "box_min", (3,))
    hi = as_array(box_max, "box_max", (3,))
    return lo[..., None, :] + _UNIT_CORNERS * (hi - lo)[..., None, :]


def corner_distance(world_a, world_b, corners) -> np.ndarray:
    """Largest distance ``(...)`` between local ``corners (..., K, 3)`` placed by
    ``world_a`` and by ``world_b`` (``(..., 4, 4)`` each)."""
    a = as_array(world_a, "world_a", (4, 4))
    b = as_array(world_b, "world_b", (4, 4))
    c = as_array(corners, "corners", (None, 3))
    batch_shape("world_b", (a, 2), (b, 2), (c, 2), names=("world_a", "world_b", "corners"))
    diff = b - a
    moved = np.swapaxes(diff[..., :3, :3] @ np.swapaxes(c, -1, -2), -1, -2) + diff[..., None, :3, 3]
    return np.sqrt(np.einsum("...ki,...ki->...k", moved, moved).max(axis=-1))


def box_corner_distance(world_a, world_b, box_min, box_max) -> np.ndarray:
    """Largest distance ``(...)`` between the 8 corners of local boxes placed by
    ``world_a`` and by ``world_b``; the same as :func:`corner_distance` on
    :func:`box_corners`, without building the corners."""
    a = as_array(world_a, "world_a", (4, 4))
    b = as_array(world_b, "world_b", (4, 4))
    lo = as_array(box_min, "box_min", (3,))
    hi = as_array(box_max, "box_max", (3,))
    batch_shape("world_b", (a, 2), (b, 2), (lo, 1), (hi, 1), names=("world_a", "world_b", "box_min", "box_max"))
    return _box_corner_distance(a, b, lo, hi)


def _box_corner_distance(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """:func:`box_corner_distance` of checked float64 arrays."""
    diff = b - a
    d3 = diff[..., :3, :3]
    base = np.einsum("...ij,...j->...i", d3, lo) + diff[..., :3, 3]  # the (min, min, min) corner
    size = hi - lo
    # The corners as base + edges (how each box edge moves), built in three sums: every
    # corner adds one more edge to corners already built.
    corners = np.empty((8,) + base.shape)
    corners[0] = base
    np.add(base, d3[..., :, 0] * size[..., 0, None], out=corners[1])
    np.add(corners[0:2], d3[..., :, 1] * size[..., 1, None], out=corners[2:4])
    np.add(corners[0:4], d3[..., :, 2] * size[..., 2, None], out=corners[4:8])
    return np.sqrt(np.einsum("k...i,k...i->k...", corners, corners).max(axis=0))


def rotation_angle_deg(frames_a, frames_b) -> np.ndarray:
    """Angle in degrees ``(...)`` of the rotation between rotation matrices ``(..., 3, 3)``.

    ``atan2(sin, cos)`` of the relative rotation: accurate near 0 and near 180 degrees.
    """
    rel = np.swapaxes(frames_a, -1, -2) @ frames_b
    cos = 0.5 * (rel[..., 0, 0] + rel[..., 1, 1] + rel[..., 2, 2] - 1.0)
    sx = rel[..., 2, 1] - rel[..., 1, 2]
    sy = rel[..., 0, 2] - rel[..., 2, 0]
    sz = rel[..., 1, 0] - rel[..., 0, 1]
    sin = 0.5 * np.sqrt(sx * sx + sy * sy + sz * sz)
    return np.degrees(np.arctan2(sin, cos))


def deviation(world_a, world_b, box_min=None, box_max=None, *, frames_a=None, frames_b=None) -> Deviation:
    """Compare world matrices ``(..., 4, 4)`` node by node.

    ``position``: distance between origins. ``rotation_deg``: angle between the
    rotations of :func:`decompose` (shear excluded; see :func:`shear_angles` for it).
    ``max_corner``: largest distance between corners of the node's local box
    ``[box_min, box_max]`` placed by ``a`` and by ``b``; with no box given, the unit
    cube centred on the origin (``[-1, 1]^3``) is used. ``frames_a`` / ``frames_b``:
    the rotation matrices of the decompositions, when already known (skips the work).
    """
    a = as_array(world_a, "world_a", (4, 4))
    b = as_array(world_b, "world_b", (4, 4))
    if a.shape != b.shape:
        raise InputError(f"world_b: shape {b.shape} differs from world_a {a.shape}", "world_b")
    batch = a.shape[:-2]
    lo = (
        -np.ones(batch + (3,)) if box_min is None else np.broadcast_to(as_array(box_min, "box_min", (3,)), batch + (3,))
    )
    hi = np.ones(batch + (3,)) if box_max is None else np.broadcast_to(as_array(box_max, "box_max", (3,)), batch + (3,))
    frames_a = rotation_frames(a)[0] if frames_a is None else frames_a
    frames_b = rotation_frames(b)[0] if frames_b is None else frames_b
    return _deviation(a, b, lo, hi, frames_a, frames_b)


def _deviation(a, b, lo, hi, frames_a, frames_b) -> Deviation:
    """:func:`deviation` of checked float64 arrays: ``a``, ``b`` ``(..., 4, 4)``, boxes
    ``(..., 3)`` and the rotation matrices ``(..., 3, 3)``, all of one batch shape."""
    offset = a[..., :3, 3] - b[..., :3, 3]
    position = np.sqrt(np.einsum("...i,...i->...", offset, offset))
    rotation = rotation_angle_deg(frames_a, frames_b)
    return Deviation(position, rotation, _box_corner_distance(a, b, lo, hi))
