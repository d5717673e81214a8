"""Objects near the Euler pole in the FBX export-ready copy: which objects get a still,
turned helper (:func:`off_pole`), the turns Blender's FBX exporter puts before and after
a node's rotation (:func:`written_turns`), and the helpers put in and taken out
(:func:`turn`, :func:`unturn`). The why: :mod:`...model.exports.euler_pole`."""

from __future__ import annotations

from typing import Any, NamedTuple

import bpy
import numpy as np

from .... import core
from ...model.exports.animated_gltf import CHECK_TOLERANCE
from ...model.exports.choices import FbxAxes
from ...model.exports.euler_pole import CAMERA_TURN, FBX_GLOBAL, LIGHT_TURN, pole_turns
from ..edits.editing import DEFORMABLE, DEFORMING_PARENTS, Parenting, as_np, to_blender


def link_beside(scene, obj, helper) -> None:
    """Link ``helper`` into ``obj``'s collections (the scene's when it has none) and give
    it ``obj``'s parent, parent type and parent bone: the place a helper above ``obj``
    takes."""
    for coll in list(obj.users_collection) or [scene.collection]:
        coll.objects.link(helper)
    helper.parent, helper.parent_type = obj.parent, obj.parent_type
    if obj.parent_type == "BONE":
        helper.parent_bone = obj.parent_bone


#: Object types Blender's FBX exporter writes by default (its 'OTHER': curves,
#: surfaces, text, metaballs); a parent of another type is not in the file.
EXPORTED_TYPES = frozenset({"EMPTY", "CAMERA", "LIGHT", "ARMATURE", "MESH", "CURVE", "SURFACE", "FONT", "META"})


def parent_in_file(obj, in_view: set) -> bool:
    """Whether Blender's FBX exporter writes ``obj`` under its parent (else in world
    space): a parent it exports, by object or bone."""
    parent = obj.parent
    return (
        parent is not None
        and obj.parent_type in ("OBJECT", "BONE")
        and parent.type in EXPORTED_TYPES
        and parent.name in in_view
    )


def fbx_global(axes: FbxAxes) -> np.ndarray:
    """``(3, 3)`` the turn Blender's FBX exporter applies to the scene for ``axes``
    (Blender's Z up to the file's axes; :data:`FBX_GLOBAL` for its defaults)."""
    from bpy_extras.io_utils import axis_conversion

    conversion: Any = axis_conversion(to_forward=axes.forward, to_up=axes.up)  # a Matrix (the stubs say None)
    return np.array(conversion, dtype=np.float64)


def written_turns(objects: list, global_turn: np.ndarray = FBX_GLOBAL) -> tuple[np.ndarray, np.ndarray]:
    """The constant rotations ``(K, 3, 3)`` Blender's FBX exporter applies before and
    after the local rotation of each of ``objects`` and of a helper put above it: the
    file's axes ``global_turn`` (:func:`fbx_global`) on objects without a parent
    (identity for those whose parent the file lacks: :func:`off_pole` leaves them out),
    the light and camera turns."""
    before = np.empty((len(objects), 3, 3))
    after = np.empty((len(objects), 3, 3))
    for k, obj in enumerate(objects):
        before[k] = global_turn if obj.parent is None else np.eye(3)
        after[k] = LIGHT_TURN if obj.type == "LIGHT" else CAMERA_TURN if obj.type == "CAMERA" else np.eye(3)
    return before, after


def off_pole(
    series, world, local: np.ndarray, needs: np.ndarray, skinned, global_turn: np.ndarray = FBX_GLOBAL
) -> tuple[list[int], np.ndarray]:
    """The objects that need no split but whose written rotation comes near the Euler
    pole, and the turn ``C (M, 3, 3)`` of each one's helper
    (:func:`..model.exports.euler_pole.pole_turns`). Left out: bones (a bone near the
    pole would need a helper bone), objects the exporter does not write or writes in
    world space under a parent (a parent it does not write, a vertex parent), objects
    deformed by their parent, constrained, rigid-body, linked or overridden ones,
    objects in a linked collection (the helper could not be linked beside them), and
    instanced ones (in a collection an object instances, or under a vertex or face
    instancer: the helper would be instanced too)."""
    by_name = {obj.name: obj for obj in bpy.data.objects}
    in_view = {obj.name for obj in bpy.context.view_layer.objects}
    in_linked = {  # (Object.users_collection scans every collection: once here, not per object)
        obj.name
        for coll in bpy.data.collections
        if coll.library is not None or coll.override_library is not None
        for obj in coll.objects
    }
    instanced = {  # in a collection another object instances: the helper would be instanced too
        obj.name
        for owner in bpy.data.objects
        if owner.instance_type == "COLLECTION" and owner.instance_collection is not None
        for obj in owner.instance_collection.all_objects
    }
    candidates: list[int] = []
    objects: list = []
    for i in np.flatnonzero(~needs):
        obj_name, bone = series.keys[i]
        obj = None if bone else by_name.get(obj_name)
        if obj is None or obj_name in skinned or obj.type not in EXPORTED_TYPES or obj.constraints:
            continue
        if obj.rigid_body is not None or obj.library is not None or obj.override_library is not None:
            continue
        if obj.parent is not None and not parent_in_file(obj, in_view):
            continue
        if obj.parent_type in DEFORMING_PARENTS and obj.type in DEFORMABLE:
            continue
        if obj_name in in_linked or obj_name in instanced:
            continue
        if obj.parent is not None and obj.parent.instance_type in ("VERTS", "FACES"):
            continue  # instanced by its parent: the helper would be instanced too
        candidates.append(int(i))
        objects.append(obj)
    before, after = written_turns(objects, global_turn)
    budget = POLE_BUDGET * max(1.0, float(np.abs(world).max()))  # the check's own scale
    columns, turns = pole_turns(
        local[:, np.array(candidates, dtype=np.int64)],
        before,
        after,
        world=world,
        parents=series.parents,
        nodes=np.array(candidates, dtype=np.int64),
        budget=budget,
    )
    return [candidates[k] for k in columns], turns


#: The share of the self-check's tolerance an object's Euler angles may cost before it
#: is given a turned helper (the estimate was 0.96-3.4x the error measured in the file).
POLE_BUDGET = CHECK_TOLERANCE / 2


class Turn(NamedTuple):
    obj: Any
    helper: Any
    parenting: Parenting


def turn(scene, objects: list, turns: np.ndarray, selected: bool = False) -> list[Turn]:
    """Put a still empty turned by ``turns[k]`` (``C``) between each of ``objects`` and
    its parent (the empty takes its parenting; ``selected``: it is selected, for an
    export of the selection); the object's parent inverse becomes ``C.T @`` it, so its
    world matrix and its own channels and animation stay. Undone by :func:`_unturn`,
    also on failure."""
    edits: list[Turn] = []
    try:
        for obj, c in zip(objects, turns, strict=True):
            helper = bpy.data.objects.new(f"{obj.name} (Euler pole helper)", None)
            edits.append(Turn(obj, helper, Parenting.save(obj)))
            link_beside(scene, obj, helper)  # (vertex parents are left out by off_pole)
            if selected:
                helper.select_set(True)
            helper.rotation_mode = "QUATERNION"
            helper.rotation_quaternion = core.matrix_to_quat(c).tolist()
            inverse = np.eye(4)
            inverse[:3, :3] = c.T
            mpi = inverse @ as_np(obj.matrix_parent_inverse)
            obj.parent, obj.parent_type = helper, "OBJECT"
            obj.matrix_parent_inverse = to_blender(mpi)
    except BaseException:  # (no update here: the exporter evaluates the scene first)
        unturn(edits)
        raise
    return edits


def unturn(edits: list[Turn], update: bool = True) -> None:
    """Undo :func:`_turn`; ``update``: then update the view layer (False when the caller
    updates it anyway)."""
    for e in reversed(edits):
        e.parenting.restore()
    if edits:  # one pass over the file's users for all (objects.remove makes one each)
        bpy.data.batch_remove([e.helper for e in edits])
        if update:
            bpy.context.view_layer.update()
