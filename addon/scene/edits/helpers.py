"""Helper empties: an object whose local matrix holds shear gets an empty above it so
that glTF / FBX, which write one TRS per node, keep it exactly (:func:`core.split_to_trs`:
the helper takes the outer TRS, the object keeps its own loc / rot / scale channels).
Which objects: :func:`..model.exports.fix_plans.helper_plan` (the threshold policy).
"""

from __future__ import annotations

from typing import NamedTuple

import bpy
import numpy as np

from .... import core
from ...model.errors import FixError
from ...model.exports.fix_plans import helper_plan, lossy_bones
from ...model.inspection import Inspection
from .editing import DEFORMABLE, DEFORMING_PARENTS, Parenting, as_np, check_editable, parent_matrix, to_blender


class HelperResult(NamedTuple):
    inserted: list[tuple[str, str]]  #: (helper, object) names
    skipped: list[tuple[str, str]]  #: (object, why) for sheared objects left as they are
    saved: list  #: parenting to restore and helpers to delete (see :func:`remove_helpers`)
    bones: list[str]  #: labels of the bones whose local shear stays (helper joints come with the exact exports)


def insert_helpers(inspection: Inspection) -> HelperResult:
    """Insert a helper empty above every object whose local matrix holds shear.

    The helper gets the outer TRS of the exact split (in its parent inverse, its own
    channels stay clean); the object is re-parented to it and keeps its loc / rot /
    scale, its world matrix and its children. Exact at the current frame.

    Objects deformed through their parent (parent type Armature or Lattice) are skipped
    and listed: re-parenting them would drop the deformation. Everything is validated
    first, and a failure while inserting restores what was done: on an error nothing
    has changed.
    """
    nodes = inspection.nodes
    plan: list[tuple[int, bpy.types.Object]] = []
    skipped: list[tuple[str, str]] = []
    for i in helper_plan(inspection):
        name = nodes.keys[i][0]
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise FixError(f"object '{name}' no longer exists: inspect again")
        if obj.parent_type in DEFORMING_PARENTS and obj.type in DEFORMABLE:
            skipped.append((name, f"deformed by its {obj.parent_type.lower()} parent"))
            continue
        check_editable(obj, FixError, "inserting a helper")
        plan.append((i, obj))
    saved: list = []
    try:
        for i, obj in plan:
            _insert_helper(inspection, i, obj, saved)
        bpy.context.view_layer.update()
        for i, obj in plan:
            after = as_np(obj.matrix_world)
            before = nodes.world[i]
            if np.abs(after - before).max() > 1e-4 * max(1.0, np.abs(before).max()):
                raise FixError(f"inserting a helper above '{obj.name}' would move it; nothing was changed")
    except BaseException:
        remove_helpers(saved)
        raise
    inserted = [(helper.name, state.obj.name) for state, helper in saved]
    return HelperResult(inserted, skipped, saved, lossy_bones(inspection))


def _insert_helper(inspection: Inspection, i: int, obj, saved: list) -> None:
    nodes = inspection.nodes
    outer, inner = core.split_to_trs(inspection.local_matrices[i])
    helper_world = nodes.world[nodes.parents[i]] @ outer.to_matrix()
    p = parent_matrix(obj)
    basis = as_np(obj.matrix_basis)
    state = Parenting.save(obj)
    helper = bpy.data.objects.new(f"{obj.name} (shear helper)", None)
    saved.append((state, helper))
    helper.empty_display_type = "PLAIN_AXES"
    helper.empty_display_size = 0.25
    for coll in list(obj.users_collection) or [bpy.context.scene.collection]:
        coll.objects.link(helper)
    helper.parent = obj.parent
    helper.parent_type = obj.parent_type
    if obj.parent_type == "BONE":
        helper.parent_bone = obj.parent_bone
    elif obj.parent_type in {"VERTEX", "VERTEX_3"}:
        helper.parent_vertices = obj.parent_vertices
    helper.matrix_parent_inverse = to_blender(np.linalg.inv(p) @ helper_world)
    obj.parent = helper
    obj.parent_type = "OBJECT"
    obj.matrix_parent_inverse = to_blender(inner.to_matrix() @ np.linalg.inv(basis))


def remove_helpers(saved: list) -> None:
    """Undo :func:`insert_helpers`: restore each object's parenting, delete the helpers."""
    for state, helper in reversed(saved):
        state.restore()
        bpy.data.objects.remove(helper)
    if saved:
        bpy.context.view_layer.update()
