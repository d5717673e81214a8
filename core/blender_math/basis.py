"""``matrix_basis`` of objects and pose bones from their raw properties: every rotation
mode, and the delta transforms of objects (``BKE_object_to_mat4`` / ``BKE_pchan_to_mat4``).
"""

from __future__ import annotations

import numpy as np

from ..rotations import EULER_ORDERS, axis_angle_to_matrix, euler_to_matrix, quat_normalize, quat_to_matrix
from ._common import _batch, _codes
from .codes import _AXIS_ANGLE, _QUATERNION, ROTATION_MODES

__all__ = ["rotation_matrices", "basis_matrices"]

# -- rotations and basis matrices ---------------------------------------------------------


def rotation_matrices(rotation_mode, rotation_quaternion, rotation_euler, rotation_axis_angle) -> np.ndarray:
    """Rotation part ``(N, 3, 3)`` of Blender's basis, per node in its own rotation mode.

    Mirrors ``BKE_pchan_rot_to_mat3`` (and ``BKE_object_rot_to_mat3`` without deltas):
    Euler modes use ``rotation_euler`` in their order, QUATERNION the normalised
    ``rotation_quaternion`` (all zero gives 180 degrees about X), AXIS_ANGLE
    ``rotation_axis_angle`` stored as ``(angle, x, y, z)`` with the axis normalised (a
    zero axis gives the identity). Values of the other modes are ignored.

    Parameters
    ----------
    rotation_mode : (N,) int codes into :data:`ROTATION_MODES`, or identifiers
    rotation_quaternion : (N, 4) wxyz
    rotation_euler : (N, 3) radians
    rotation_axis_angle : (N, 4) angle in radians, then the axis
    """
    quat = _batch(rotation_quaternion, "rotation_quaternion", (4,), None)
    n = quat.shape[0]
    modes = _codes(rotation_mode, ROTATION_MODES, "rotation_mode", n)
    euler = _batch(rotation_euler, "rotation_euler", (3,), n)
    axis_angle = _batch(rotation_axis_angle, "rotation_axis_angle", (4,), n)
    out = np.empty((n, 3, 3))
    for code in np.unique(modes).tolist():
        sel = modes == code
        if code == _QUATERNION:
            out[sel] = quat_to_matrix(quat_normalize(quat[sel], zero="blender", what="rotation_quaternion"))
        elif code == _AXIS_ANGLE:
            out[sel] = axis_angle_to_matrix(axis_angle[sel, 1:], axis_angle[sel, 0])
        else:
            out[sel] = euler_to_matrix(euler[sel], EULER_ORDERS[code - 1])
    return out


def basis_matrices(
    location,
    rotation_mode,
    rotation_quaternion,
    rotation_euler,
    rotation_axis_angle,
    scale,
    delta_location=None,
    delta_rotation_euler=None,
    delta_rotation_quaternion=None,
    delta_scale=None,
) -> np.ndarray:
    """Blender's ``matrix_basis`` ``(N, 4, 4)`` of objects (with deltas) or pose bones.

    ``T(location + delta_location) @ R_delta @ R @ S(scale * delta_scale)``, mirroring
    ``BKE_object_to_mat4`` (``BKE_pchan_to_mat4`` for pose bones, which have no deltas).
    ``R`` is :func:`rotation_matrices`. The delta rotation follows the rotation mode:
    Euler modes use ``delta_rotation_euler`` in the object's own Euler order, QUATERNION
    the normalised ``delta_rotation_quaternion`` (all zero gives 180 degrees about X),
    and AXIS_ANGLE uses **no** delta rotation (Blender's axis-angle delta is not exposed to
    Python and is the identity; checked in Blender 5.0.1: both Python deltas are ignored).

    For a connected pose bone Blender's ``matrix_basis`` has zero translation;
    :func:`pose_matrices` takes care of that, so pass the bone's location unchanged.

    Parameters
    ----------
    location, scale : (N, 3)
    rotation_mode : (N,) int codes into :data:`ROTATION_MODES`, or identifiers
    rotation_quaternion : (N, 4) wxyz; rotation_euler : (N, 3) radians;
    rotation_axis_angle : (N, 4) ``(angle, x, y, z)`` as Blender stores it
    delta_location, delta_rotation_euler, delta_scale : (N, 3), optional
    delta_rotation_quaternion : (N, 4), optional

    Returns
    -------
    (N, 4, 4) float64
    """
    loc = _batch(location, "location", (3,), None)
    n = loc.shape[0]
    modes = _codes(rotation_mode, ROTATION_MODES, "rotation_mode", n)
    size = _batch(scale, "scale", (3,), n)
    quat = _batch(rotation_quaternion, "rotation_quaternion", (4,), n)
    rot = rotation_matrices(modes, quat, rotation_euler, rotation_axis_angle)
    if delta_location is not None:
        loc = loc + _batch(delta_location, "delta_location", (3,), n)
    if delta_scale is not None:
        size = size * _batch(delta_scale, "delta_scale", (3,), n)
    if delta_rotation_euler is not None or delta_rotation_quaternion is not None:
        d_euler = np.zeros((n, 3)) if delta_rotation_euler is None else delta_rotation_euler
        d_quat = (
            np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)) if delta_rotation_quaternion is None else delta_rotation_quaternion
        )
        d_euler = _batch(d_euler, "delta_rotation_euler", (3,), n)
        d_quat = _batch(d_quat, "delta_rotation_quaternion", (4,), n)
        # Axis-angle objects get no delta rotation: give them a zero axis (identity).
        d_axis_angle = np.zeros((n, 4))
        delta = rotation_matrices(modes, d_quat, d_euler, d_axis_angle)
        rot = delta @ rot
    out = np.zeros((n, 4, 4))
    out[:, :3, :3] = rot * size[:, None, :]
    out[:, :3, 3] = loc
    out[:, 3, 3] = 1.0
    return out
