"""Objects' ``matrix_world`` (``solve_parenting``) and the parent matrix ``P`` of each parent
type: OBJECT (and whole OBJECT-parented forests), BONE (``ob_parbone``) and VERTEX /
VERTEX_3 (``ob_parvert3``).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, as_array
from ..hierarchy import Hierarchy
from ._common import _affine_inverse, _batch, _check_rigid, _cross, _dot, _flags, _normalize, _per_node

__all__ = ["object_world_matrices", "object_tree_matrices", "bone_parent_matrix", "vertex_parent_matrix"]

# -- objects ------------------------------------------------------------------------------


def object_world_matrices(parent_matrix, matrix_parent_inverse, basis, has_parent=None) -> np.ndarray:
    """``matrix_world = P @ matrix_parent_inverse @ basis`` (``solve_parenting``), batched.

    Parameters
    ----------
    parent_matrix : (..., 4, 4)
        ``P`` by parent type: the parent's ``matrix_world`` for OBJECT / ARMATURE /
        LATTICE parents, :func:`bone_parent_matrix` for BONE parents.
    matrix_parent_inverse : (..., 4, 4)
    basis : (..., 4, 4)
        ``matrix_basis`` (:func:`basis_matrices`). Leading dimensions broadcast.
    has_parent : (...,) bool, optional
        Where False the result is ``basis`` alone: Blender ignores the parent inverse of
        an object without a parent.

    Returns
    -------
    (..., 4, 4)
    """
    p = as_array(parent_matrix, "parent_matrix", (4, 4))
    pinv = as_array(matrix_parent_inverse, "matrix_parent_inverse", (4, 4))
    b = as_array(basis, "basis", (4, 4))
    out = p @ pinv @ b
    if has_parent is not None:
        mask = np.asarray(has_parent, dtype=bool)
        out = np.where(mask[..., None, None], out, b)
    return out


def object_tree_matrices(parents, matrix_parent_inverse, basis) -> np.ndarray:
    """World matrices ``(N, 4, 4)`` of a forest of objects parented with type OBJECT.

    ``world[i] = world[parent[i]] @ matrix_parent_inverse[i] @ basis[i]``, roots
    ``basis[i]`` (their parent inverse is ignored, as in Blender). ``parents`` (N,) int,
    -1 for roots, any order (or a :class:`~.hierarchy.Hierarchy`).
    """
    h = parents if isinstance(parents, Hierarchy) else Hierarchy(parents)
    n = len(h)
    pinv = _batch(matrix_parent_inverse, "matrix_parent_inverse", (4, 4), n)
    b = _batch(basis, "basis", (4, 4), n)
    local = np.where((h.parents >= 0)[:, None, None], pinv @ b, b)
    return h.world_matrices(local)


def bone_parent_matrix(
    armature_world, pose_matrix, bone_length, bone_matrix_local=None, use_relative_parent=False
) -> np.ndarray:
    """``P`` of an object parented to a bone (parent type BONE), mirroring ``ob_parbone``.

    Without relative parenting: ``X = pose_matrix`` with its translation moved to the
    posed tail, ``X.t += X[:, 1] * bone_length`` (column Y carries the bone's scale), and
    ``P = armature_world @ X``. With ``use_relative_parent`` Blender uses the pose
    channel's deformation matrix ``pose_matrix @ inv(bone_matrix_local)`` and no tail offset.

    Parameters
    ----------
    armature_world : (N, 4, 4) or (4, 4)
        The armature object's ``matrix_world``.
    pose_matrix : (N, 4, 4)
        The parent bone's ``pose_bone.matrix`` (armature space, after constraints).
    bone_length : (N,) or scalar
        ``bone.length`` (rest length).
    bone_matrix_local : (N, 4, 4), optional
        ``bone.matrix_local``; required where ``use_relative_parent``.
    use_relative_parent : (N,) bool or bool
        ``bone.use_relative_parent``.

    Returns
    -------
    (N, 4, 4)
    """
    pose = _batch(pose_matrix, "pose_matrix", (4, 4), None)
    n = pose.shape[0]
    arm = as_array(armature_world, "armature_world", (4, 4))
    if arm.ndim > 3 or (arm.ndim == 3 and arm.shape[0] != n):
        raise InputError(f"armature_world: expected shape (4, 4) or ({n}, 4, 4), got {arm.shape}", "armature_world")
    length = _per_node(as_array(bone_length, "bone_length"), n, "bone_length")
    relative = _flags(use_relative_parent, n, "use_relative_parent")
    x = pose.copy()
    x[:, :3, 3] += x[:, :3, 1] * length[:, None]
    if relative.any():
        if bone_matrix_local is None:
            raise InputError("bone_matrix_local: required where use_relative_parent is set", "bone_matrix_local")
        rest = _batch(bone_matrix_local, "bone_matrix_local", (4, 4), n)
        _check_rigid(rest[relative], "bone_matrix_local")
        x[relative] = pose[relative] @ _affine_inverse(rest[relative])
    return arm @ x


def vertex_parent_matrix(parent_world, vertices) -> np.ndarray:
    """``P`` of objects parented to vertices (``ob_parvert3`` / the VERTEX case of
    ``solve_parenting``).

    Parameters
    ----------
    parent_world : (N, 4, 4)
        The parent object's ``matrix_world``.
    vertices : (N, 3) or (N, 3, 3)
        One vertex (VERTEX) or three vertices (VERTEX_3) per object, in the parent's
        local space, from its evaluated mesh.

    VERTEX: ``P = T(parent_world @ v)``, position only. VERTEX_3: ``P = parent_world @
    [F | centroid]`` with F the frame of the triangle (``tri_to_quat``): Z the normal of
    ``(v1 - v2) x (v2 - v3)``, X along ``v2 - v1``, Y = Z x X.
    """
    world = as_array(parent_world, "parent_world", (4, 4))
    verts = as_array(vertices, "vertices", (3,))
    n = world.shape[0]
    if verts.ndim == 2:
        if verts.shape[0] != n:
            raise InputError(f"vertices: expected shape ({n}, 3) or ({n}, 3, 3), got {verts.shape}", "vertices")
        out = np.tile(np.eye(4), (n, 1, 1))
        out[:, :3, 3] = np.einsum("nij,nj->ni", world[:, :3, :3], verts) + world[:, :3, 3]
        return out
    if verts.shape != (n, 3, 3):
        raise InputError(f"vertices: expected shape ({n}, 3) or ({n}, 3, 3), got {verts.shape}", "vertices")
    v1, v2, v3 = verts[:, 0], verts[:, 1], verts[:, 2]
    z = _normalize(_cross(v1 - v2, v2 - v3))[0]
    x = _normalize(v2 - v1)[0]
    x = _normalize(x - _dot(x, z)[:, None] * z)[0]
    frame = np.tile(np.eye(4), (n, 1, 1))
    frame[:, :3, 0] = x
    frame[:, :3, 1] = _cross(z, x)
    frame[:, :3, 2] = z
    frame[:, :3, 3] = (v1 + v2 + v3) / 3.0
    return world @ frame
