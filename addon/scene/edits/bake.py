"""Bake the part of a world matrix no TRS can hold into the mesh (like 3ds Max's Reset
XForm), so the hierarchy becomes shear-free and accumulating engines show it exactly.

For a sheared object with world ``W = T R H S`` (see :func:`core.decompose`), the new
world is ``W' = T R S`` and the mesh gets ``K = inverse(W') @ W`` (pure linear, the
shear expressed in the object's own axes): every vertex keeps its world position,
``W' (K v) == W v``. The object keeps its loc / rot / scale channels; its parent
inverse absorbs the change, and the parent inverses of its children are recomputed so
they stay where they were. Exact at the current frame.

Which objects: :func:`..model.exports.fix_plans.bake_plan` (sheared over the threshold).
Refuses, before changing anything: linked or library-override data, meshes used by
several objects, sheared objects of other types than mesh and empty, and zero scales.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import bpy
import numpy as np

from .... import core
from ...model.errors import FixError
from ...model.exports.fix_plans import bake_plan
from ...model.inspection import Inspection
from .editing import as_np, check_editable, parent_matrix, to_blender

BAKEABLE = {"MESH", "EMPTY"}


def validate(names: list[str]) -> list[bpy.types.Object]:
    """The objects to bake, or :class:`FixError` naming the first problem."""
    objects: list[bpy.types.Object] = []
    for name in names:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise FixError(f"object '{name}' no longer exists: inspect again")
        check_editable(obj, FixError, "baking")
        if obj.type not in BAKEABLE:
            raise FixError(f"object '{name}' is a {obj.type.lower()}: only meshes and empties can be baked")
        data = obj.data
        if data is not None:
            if data.library is not None or data.override_library is not None:
                raise FixError(f"mesh '{data.name}' of '{name}' is linked from a library: make it local first")
            if data.users > 1:
                raise FixError(
                    f"mesh '{data.name}' is used by {data.users} objects; baking '{name}' would change them all "
                    "(make it single user first: Object > Relations > Make Single User)"
                )
        objects.append(obj)
    return objects


class _Step(NamedTuple):
    obj: bpy.types.Object
    parent_inverse: np.ndarray  #: the new matrix_parent_inverse
    mesh_matrix: np.ndarray | None  #: applied to the mesh (baked objects), else None


def plan_bake(targets: list[bpy.types.Object], scene) -> list[_Step]:
    """Every change the bake makes, computed before anything is touched.

    Baked objects get ``W' = T R S`` of their world and their mesh the residual
    ``inverse(W') @ W``; their other children keep their worlds. The parent matrices
    after the change are known in advance: a baked parent's new world for plain parent
    types, unchanged otherwise (bones are never baked, and a baked mesh keeps every
    vertex's world position). Raises :class:`FixError` for what cannot be kept.
    """
    target_names = {o.name for o in targets}
    worlds = {o.name: as_np(o.matrix_world) for o in scene.objects}
    clean = {o.name: core.TRS.from_decomposition(core.decompose(worlds[o.name])).to_matrix() for o in targets}
    children = []
    for obj in targets:
        for child in obj.children:
            if child.name in target_names or child.name not in worlds:
                continue
            if child.parent_type == "VERTEX_3":
                raise FixError(
                    f"'{child.name}' hangs on three vertices of '{obj.name}': baking would turn it; nothing was changed"
                )
            check_editable(child, FixError, f"baking its parent '{obj.name}'")
            children.append(child)
    steps = []
    try:
        for obj in sorted([*targets, *children], key=_depth):
            p = parent_matrix(obj)
            parent = obj.parent
            if parent is not None and parent.name in clean and obj.parent_type in {"OBJECT", "ARMATURE", "LATTICE"}:
                p = clean[parent.name] @ np.linalg.inv(worlds[parent.name]) @ p  # the parent's new world
            new_world = clean.get(obj.name, worlds[obj.name])
            inverse = np.linalg.inv(p) @ new_world @ np.linalg.inv(as_np(obj.matrix_basis))
            mesh = None
            if obj.name in clean and obj.data is not None:
                mesh = np.linalg.inv(clean[obj.name]) @ worlds[obj.name]
                mesh[:3, 3] = 0.0
                mesh[3] = (0.0, 0.0, 0.0, 1.0)
            steps.append(_Step(obj, inverse, mesh))
    except np.linalg.LinAlgError:
        raise FixError(
            f"'{obj.name}' or its parent has zero scale: it cannot be kept in place; nothing was changed"
        ) from None
    return steps


def bake_residual(inspection: Inspection, context=None) -> list[str]:
    """Bake every sheared object (see the module docstring). Returns the baked names.

    Bones cannot be baked; they are left as they are (see :func:`bake_plan`). Every
    check and every matrix is computed first: on :class:`FixError` nothing changed.
    """
    context = context or bpy.context
    names, _bones = bake_plan(inspection)
    targets = validate(names)
    if not targets:
        return []
    for step in plan_bake(targets, context.scene):
        if step.mesh_matrix is not None:
            mesh = cast(bpy.types.Mesh, step.obj.data)  # validated: meshes and empties only
            mesh.transform(to_blender(step.mesh_matrix), shape_keys=True)
            mesh.update()
        step.obj.matrix_parent_inverse = to_blender(step.parent_inverse)
    context.view_layer.update()
    return [o.name for o in sorted(targets, key=_depth)]


def _depth(obj) -> int:
    d = 0
    while obj.parent is not None:
        obj = obj.parent
        d += 1
    return d
