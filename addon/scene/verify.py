"""Does Blender's evaluated matrix follow from the node's own transform and its parent?

Each object's and bone's world matrix is recomputed through the core's model of
Blender's math (:mod:`..core.blender_math`) from its own transform (Blender's
``matrix_basis``: loc / rot / scale with deltas), parent inverse, parent type, inherit
modes, and its parent's *evaluated* matrix, one step at a time. Where the result
differs from what Blender shows (beyond float32 round-off), something evaluates the
node differently (constraints, IK, physics, an add-on) and the node is marked with the
likely reason instead of being counted as shear.
"""

from __future__ import annotations

import bpy
import numpy as np

from ...core import blender_math as bm

#: Relative difference (largest entry over max(1, largest entry)) above float32 noise.
TOLERANCE = 1e-4


def _read(bulk, prop: str, count: int, width: int) -> np.ndarray:
    buf = np.empty(count * width, dtype=np.float32)
    if count:
        bulk.foreach_get(prop, buf)
    return buf.reshape(count, width).astype(np.float64)


def _finite_rows(*arrays: np.ndarray) -> np.ndarray:
    """``(N,)`` bool: rows finite in every array (first axis N)."""
    ok = np.ones(len(arrays[0]), dtype=bool)
    for a in arrays:
        ok &= np.isfinite(a.reshape(len(a), -1)).all(axis=1)
    return ok


def _neutral(a: np.ndarray) -> np.ndarray:
    """``a`` with NaN / infinity replaced by 0, so the model can run on the other rows;
    the rows that held them are left unchecked (the scene layer names them instead)."""
    finite = np.isfinite(a)
    return a if finite.all() else np.where(finite, a, 0.0)


def _relative_error(model: np.ndarray, blender: np.ndarray) -> np.ndarray:
    """Largest entry difference over the largest entry (at least 1); NaN where a matrix
    is not finite (such nodes are named by the scene layer, not checked here)."""
    with np.errstate(invalid="ignore", over="ignore"):
        scale = np.maximum(1.0, np.abs(blender).max(axis=(-2, -1)))
        return np.abs(model - blender).max(axis=(-2, -1)) / scale


def constraint_names(constraints) -> list[str]:
    """The enabled constraints that act (influence over 0), by Blender's own name of
    their type ("Inverse Kinematics", "Copy Location", "Spline IK")."""
    return [c.bl_rna.properties["type"].enum_items[c.type].name for c in constraints if c.enabled and c.influence > 0]


def object_reason(obj) -> str:
    """Why ``obj`` may be evaluated differently from its own transform (the message
    around it says "evaluated differently": the reason does not)."""
    constraints = constraint_names(obj.constraints)
    if constraints:
        return "constraints: " + ", ".join(constraints)
    if obj.rigid_body is not None:
        return "rigid body simulation"
    if obj.parent is not None and obj.parent_type in {"VERTEX", "VERTEX_3"}:
        return "vertex parent deformed by modifiers"
    return "an add-on, a driver or a handler may change it"


def bone_reason(pose_bone) -> str:
    """Why a pose bone may be evaluated differently from its own transform."""
    constraints = constraint_names(pose_bone.constraints)
    if constraints:
        return "bone constraints: " + ", ".join(constraints)
    return "IK from another bone, a driver or an add-on"


def _vertex_positions(parent, indices: list[int]) -> np.ndarray | None:
    """Local positions of ``indices`` in the parent's evaluated mesh (None: not a mesh)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = parent.evaluated_get(depsgraph)
    mesh = getattr(evaluated, "data", None)
    vertices = getattr(mesh, "vertices", None)
    if vertices is None or any(i >= len(vertices) for i in indices):
        return None
    return np.array([tuple(vertices[i].co) for i in indices], dtype=np.float64)


_PLAIN_PARENTS = {"OBJECT", "ARMATURE", "LATTICE"}


def object_parent_matrices(
    objects, parent_object: np.ndarray, parent_types: list[str], world: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Blender's parent matrix ``P (N, 4, 4)`` per object, from the parents' evaluated
    matrices, and which objects could be checked at all ``(N,)``.

    ``parent_object[i]`` is the node index of object i's parent object (-1: none, or not
    read), ``parent_types[i]`` its ``parent_type`` ("" without a parent). Plain parent
    types are one gather; bone and vertex parents take a few Python steps each.
    """
    n = len(objects)
    p = np.tile(np.eye(4), (n, 1, 1))
    checkable = np.ones(n, dtype=bool)
    plain = np.array([t in _PLAIN_PARENTS for t in parent_types], dtype=bool) & (parent_object >= 0)
    p[plain] = world[parent_object[plain]]
    for i in np.flatnonzero(np.array([t != "" for t in parent_types], dtype=bool) & ~plain):
        obj = objects[i]
        parent = obj.parent
        k = parent_object[i]
        parent_world = world[k] if k >= 0 else np.asarray(parent.matrix_world, dtype=np.float64)
        kind = parent_types[i]
        if kind == "BONE":
            pose_bone = parent.pose.bones.get(obj.parent_bone) if parent.pose else None
            if pose_bone is None:
                checkable[i] = False
                continue
            bone = pose_bone.bone
            p[i] = bm.bone_parent_matrix(
                parent_world,
                np.asarray(pose_bone.matrix, dtype=np.float64)[None],
                bone.length,
                np.asarray(bone.matrix_local, dtype=np.float64)[None],
                bool(bone.use_relative_parent),
            )[0]
        elif kind in {"VERTEX", "VERTEX_3"}:
            count = 1 if kind == "VERTEX" else 3
            verts = _vertex_positions(parent, list(obj.parent_vertices[:count]))
            if verts is None:
                checkable[i] = False
                continue
            p[i] = bm.vertex_parent_matrix(parent_world[None], verts[None] if count == 3 else verts[:1])[0]
        else:  # a plain parent type whose parent object was not read
            p[i] = parent_world
    return p, checkable


def _bases(bulk, count: int) -> np.ndarray:
    """Blender's own ``matrix_basis`` ``(count, 4, 4)`` (loc / rot / scale, with an
    object's deltas, in its rotation mode) in one bulk read: the checks below test what
    comes after it (parenting, inherit modes, constraints); the core's model of the
    basis itself (:func:`..core.blender_math.basis_matrices`) is tested against Blender
    on its own."""
    return _matrix_rows(bulk, "matrix_basis", count)


def _matrix_rows(bulk, prop: str, count: int) -> np.ndarray:
    """Matrices ``(count, 4, 4)`` float64 of a bulk collection or of the chain's short
    list (which reads them as they are: ``matrices``)."""
    if hasattr(bulk, "matrices"):
        return bulk.matrices(prop)
    return _read(bulk, prop, count, 16).reshape(count, 4, 4).transpose(0, 2, 1)


def check_objects(bulk, objects, parent_object, parent_types, world: np.ndarray) -> list[str]:
    """Notes per object: "" where Blender's matrix follows from its own transform.

    ``parent_object`` and ``parent_types`` as in :func:`object_parent_matrices`.
    """
    n = len(objects)
    if not n:
        return []
    basis = _bases(bulk, n)
    parent_inverse = _matrix_rows(bulk, "matrix_parent_inverse", n)
    finite = _finite_rows(basis, parent_inverse, world[:n])
    if any(parent_types):
        p, checkable = object_parent_matrices(objects, parent_object, parent_types, world)
        checkable &= finite & _finite_rows(p)
        has_parent = np.array([t != "" for t in parent_types], dtype=bool)
        model = bm.object_world_matrices(_neutral(p), _neutral(parent_inverse), _neutral(basis), has_parent)
    else:  # roots only (the panel's chain of an armature): the model is the basis itself
        checkable = finite
        model = _neutral(basis)
    bad = (_relative_error(model, world[:n]) > TOLERANCE) & checkable
    return [object_reason(objects[i]) if bad[i] else "" for i in range(n)]


def check_bones(arm, parents: np.ndarray, pose: np.ndarray, bones=None) -> list[str]:
    """Notes per pose bone of ``arm`` (in ``arm.pose.bones`` order); ``parents`` are
    indices within the armature, ``pose`` Blender's evaluated pose matrices.

    ``bones``: a list of pose bones closed under their parents (the panel's chain)
    instead of the whole armature; ``parents`` then index into that list."""
    if bones is None:
        bones = arm.pose.bones
    n = len(bones)
    if hasattr(bones, "foreach_get"):
        basis = _bases(bones, n)
    else:  # the panel's chain: a short list
        basis = np.array([pb.matrix_basis for pb in bones], dtype=np.float64).reshape(n, 4, 4)
    finite = _finite_rows(basis, pose)
    basis = _neutral(basis)
    data = [pb.bone for pb in bones]
    rest = np.array([b.matrix_local for b in data], dtype=np.float64).reshape(n, 4, 4)
    safe_pose = np.where(finite[:, None, None], pose, np.eye(4))
    parent_pose = np.where((parents >= 0)[:, None, None], safe_pose[np.maximum(parents, 0)], np.eye(4))
    finite &= np.where(parents >= 0, finite[np.maximum(parents, 0)], True)
    model = bm.pose_matrices_given_parents(
        parents,
        rest,
        [b.inherit_scale for b in data],
        [b.use_inherit_rotation for b in data],
        [b.use_local_location for b in data],
        [b.use_connect for b in data],
        basis,
        parent_pose,
    )
    bad = (_relative_error(model, pose) > TOLERANCE) & finite
    return [bone_reason(bones[i]) if bad[i] else "" for i in range(n)]
