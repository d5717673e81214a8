"""Bake the part of a world matrix no TRS can hold into the mesh (like 3ds Max's Reset
XForm), so the hierarchy becomes shear-free and accumulating engines show it exactly.

For a sheared object with world ``W = T R H S`` (see :func:`core.decompose`), the new
world is ``W' = T R S`` and the mesh gets ``K = inverse(W') @ W`` (pure linear, the
shear expressed in the object's own axes): every vertex keeps its world position,
``W' (K v) == W v``. The object keeps its loc / rot / scale channels; its parent
inverse absorbs the change, and the parent inverses of its children are recomputed so
they stay where they were. Exact at the current frame.

Refuses, before changing anything: linked or library-override data, meshes used by
several objects, sheared objects of other types than mesh and empty, and zero scales.
"""

from __future__ import annotations

from typing import cast

import bpy
import numpy as np
from mathutils import Matrix

from .. import core
from .inspection import Inspection

#: World shear (degrees) above which an object is baked.
BAKE_SHEAR_DEG = 1e-3
BAKEABLE = {"MESH", "EMPTY"}


class BakeError(Exception):
    """The scene cannot be baked as asked; nothing was changed."""


def _m(a: np.ndarray) -> Matrix:
    return Matrix([[float(v) for v in row] for row in a])


def _np(m) -> np.ndarray:
    return np.asarray(m, dtype=np.float64)


def bake_plan(inspection: Inspection) -> tuple[list[str], list[str]]:
    """(objects to bake, sheared bones that cannot be baked) by name, root first."""
    nodes = inspection.nodes
    order = np.argsort(inspection.hierarchy.depth, kind="stable")
    sheared = inspection.shear_max > BAKE_SHEAR_DEG
    objects = [nodes.keys[i][0] for i in order if sheared[i] and nodes.kind(int(i)) == "object"]
    bones = [nodes.label(int(i)) for i in order if sheared[i] and nodes.kind(int(i)) == "bone"]
    return objects, bones


def validate(names: list[str]) -> list[bpy.types.Object]:
    """The objects to bake, or :class:`BakeError` naming the first problem."""
    objects: list[bpy.types.Object] = []
    for name in names:
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise BakeError(f"object '{name}' no longer exists: inspect again")
        if obj.library is not None or obj.override_library is not None:
            raise BakeError(f"object '{name}' is linked from a library: make it local first")
        if obj.type not in BAKEABLE:
            raise BakeError(f"object '{name}' is a {obj.type.lower()}: only meshes and empties can be baked")
        data = obj.data
        if data is not None:
            if data.library is not None or data.override_library is not None:
                raise BakeError(f"mesh '{data.name}' of '{name}' is linked from a library: make it local first")
            if data.users > 1:
                raise BakeError(
                    f"mesh '{data.name}' is used by {data.users} objects; baking '{name}' would change them all "
                    "(make it single user first: Object > Relations > Make Single User)"
                )
        if abs(np.linalg.det(_np(obj.matrix_local)[:3, :3])) < 1e-12:
            raise BakeError(f"object '{name}' has zero scale: its parent matrix cannot be recovered")
        objects.append(obj)
    return objects


def _parent_matrix(obj) -> np.ndarray:
    """Blender's current parent matrix P of ``obj`` (``matrix_world = P @ matrix_local``)."""
    return _np(obj.matrix_world) @ np.linalg.inv(_np(obj.matrix_local))


def _set_world_keep_channels(obj, world: np.ndarray) -> None:
    """Make ``obj.matrix_world == world`` through its parent inverse only."""
    p = _parent_matrix(obj)
    obj.matrix_parent_inverse = _m(np.linalg.inv(p) @ world @ np.linalg.inv(_np(obj.matrix_basis)))


def bake_residual(inspection: Inspection, context=None) -> list[str]:
    """Bake every sheared object (see the module docstring). Returns the baked names.

    Bones cannot be baked; they are left as they are (see :func:`bake_plan`).
    """
    context = context or bpy.context
    names, _bones = bake_plan(inspection)
    targets = validate(names)
    if not targets:
        return []
    target_names = {o.name for o in targets}
    # Every object's world before anything changes: children must keep theirs.
    worlds = {o.name: _np(o.matrix_world) for o in context.scene.objects}
    children = {o.name: [c for c in o.children if c.name in worlds and c.name not in target_names] for o in targets}
    by_depth = sorted(targets, key=lambda o: _depth(o))
    view_layer = context.view_layer
    for obj in by_depth:
        view_layer.update()
        world = worlds[obj.name]
        parts = core.decompose(world)
        clean = parts.trs().to_matrix()
        residual = np.linalg.inv(clean) @ world
        residual[:3, 3] = 0.0
        residual[3] = (0.0, 0.0, 0.0, 1.0)
        if obj.data is not None:
            mesh = cast(bpy.types.Mesh, obj.data)  # validated: meshes and empties only
            mesh.transform(_m(residual), shape_keys=True)
            mesh.update()
        _set_world_keep_channels(obj, clean)
        view_layer.update()
        for child in children[obj.name]:
            _set_world_keep_channels(child, worlds[child.name])
    view_layer.update()
    return [o.name for o in by_depth]


def _depth(obj) -> int:
    d = 0
    while obj.parent is not None:
        obj = obj.parent
        d += 1
    return d


def world_vertices(obj) -> np.ndarray:
    """World positions ``(V, 3)`` of a mesh object's vertices."""
    mesh = obj.data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3).astype(np.float64)
    w = _np(obj.matrix_world)
    return co @ w[:3, :3].T + w[:3, 3]
