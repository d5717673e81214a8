"""What the FBX plans need to know about the scene, read from Blender in one pass into
:class:`...model.exports.fbx.facts.SceneFacts` (arrays and names; the plans that use
them are Blender-free). Per node of a frame series: its object's type, linking, rigid
body, constraints, parenting (type, whether the exporter writes the parent, Blender's
parent matrix and parent inverse at the current frame, the length of a parent bone),
whether its parent deforms it, whether it sits in a linked or instanced collection;
per armature whether it can be edited; every constraint of the scene's objects and
pose bones. About 10 attribute reads per object and per constraint.
"""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from .... import core
from ...model.exports.fbx.facts import EXPORTED_TYPES, ArmatureFacts, ConstraintFacts, SceneFacts
from ..edits.editing import DEFORMABLE, DEFORMING_PARENTS, as_np
from .gltf_hook import engine_ignored


def read_facts(scene, keys: list) -> SceneFacts:
    """The facts of the nodes ``keys`` (``(object, bone)``, a frame series' order) of
    ``scene``, the current one, at its current frame."""
    n = len(keys)
    by_name: dict[str, Any] = {}
    for (
        each
    ) in bpy.data.objects:  # the first of a name, as bpy.data.objects.get (a local override before its library's)
        by_name.setdefault(each.name, each)
    view_layer = bpy.context.view_layer
    in_view = {obj.name for obj in view_layer.objects}
    in_linked = {  # (Object.users_collection scans every collection: once here, not per object)
        obj.name
        for coll in bpy.data.collections
        if coll.library is not None or coll.override_library is not None
        for obj in coll.objects
    }
    instanced = {  # in a collection another object instances: a helper would be instanced too
        obj.name
        for owner in bpy.data.objects
        if owner.instance_type == "COLLECTION" and owner.instance_collection is not None
        for obj in owner.instance_collection.all_objects
    }
    flags = {name: np.zeros(n, dtype=bool) for name in ("exists", "linked", "rigid", "constrained", "written")}
    flags.update({name: np.zeros(n, dtype=bool) for name in ("deformed", "in_linked", "instanced")})
    object_type, parent_name, parent_type = [""] * n, [""] * n, [""] * n
    tail_length = np.zeros(n)
    parent_inverse = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    parented: list[tuple[int, object]] = []
    armatures: dict[str, ArmatureFacts] = {}
    for i, (name, bone) in enumerate(keys):
        obj = by_name.get(name)
        if obj is None:
            continue
        flags["exists"][i] = True
        if bone:
            if name not in armatures:
                armatures[name] = _armature(obj, view_layer)
            continue
        kind = object_type[i] = obj.type
        flags["linked"][i] = obj.library is not None or obj.override_library is not None
        flags["rigid"][i] = obj.rigid_body is not None
        flags["constrained"][i] = len(obj.constraints) > 0
        flags["in_linked"][i] = name in in_linked
        flags["instanced"][i] = name in instanced
        parent = obj.parent
        if parent is None:
            continue
        parent_name[i] = parent.name
        how = parent_type[i] = obj.parent_type
        flags["written"][i] = how in ("OBJECT", "BONE") and parent.type in EXPORTED_TYPES and parent.name in in_view
        flags["deformed"][i] = how in DEFORMING_PARENTS and kind in DEFORMABLE
        flags["instanced"][i] |= parent.instance_type in ("VERTS", "FACES")  # instanced by its parent
        if how == "BONE" and parent.type == "ARMATURE" and obj.parent_bone in parent.data.bones:
            tail_length[i] = parent.data.bones[obj.parent_bone].length
        parent_inverse[i] = as_np(obj.matrix_parent_inverse)
        parented.append((i, obj))
    skinned, instances = engine_ignored(scene)
    return SceneFacts(
        keys=list(keys),
        object_type=object_type,
        exists=flags["exists"],
        linked=flags["linked"],
        rigid_body=flags["rigid"],
        constrained=flags["constrained"],
        parent_name=parent_name,
        parent_type=parent_type,
        parent_written=flags["written"],
        deformed=flags["deformed"],
        in_linked_collection=flags["in_linked"],
        instanced=flags["instanced"],
        tail_length=tail_length,
        parent_frame=_parent_frames(n, parented),
        parent_inverse=parent_inverse,
        armatures=armatures,
        constraints=constraints_of(scene),
        skinned=skinned,
        instances=instances,
    )


def _parent_frames(n: int, parented: list) -> np.ndarray:
    """``(n, 4, 4)`` Blender's parent matrices ``matrix_world @ inv(matrix_local)`` of
    the objects ``parented`` (``(node, object)``), the identity elsewhere (and where
    ``matrix_local`` has no inverse: zero scale)."""
    out = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    if parented:
        nodes = [i for i, _obj in parented]
        world = np.array([obj.matrix_world for _i, obj in parented], dtype=np.float64)
        local = np.array([obj.matrix_local for _i, obj in parented], dtype=np.float64)
        local[:, 3] = (0.0, 0.0, 0.0, 1.0)  # affine: constraints leave float32 noise in w
        inverse, singular = core.affine_inverse(local)
        out[nodes] = np.where(singular[:, None, None], np.eye(4), world @ inverse)
    return out


def _armature(obj, view_layer) -> ArmatureFacts:
    anim = obj.animation_data
    has_action = anim is not None and anim.action is not None
    return ArmatureFacts(
        linked=obj.library is not None,
        overridden=getattr(obj, "override_library", None) is not None,
        data_shared=obj.data.library is not None or obj.data.users > 1,
        hidden=view_layer.objects.get(obj.name) is None or not obj.visible_get(view_layer=view_layer),
        has_action=has_action,
        blend_type=anim.action_blend_type if anim is not None else "REPLACE",
        influence=float(anim.action_influence) if anim is not None else 1.0,
        tracks_play=anim is not None and any(not track.mute for track in anim.nla_tracks),
    )


def constraints_of(scene) -> list[ConstraintFacts]:
    """Every constraint of ``scene``'s objects and their pose bones, in Blender's order."""
    out = []
    for obj in scene.objects:
        owners = [(obj.name, "", obj.constraints, None)]
        if obj.type == "ARMATURE" and obj.pose is not None:
            owners += [(obj.name, pb.name, pb.constraints, pb) for pb in obj.pose.bones if len(pb.constraints)]
        for name, bone, constraints, pb in owners:
            for con in constraints:
                target = getattr(con, "target", None)
                chain: list[str] = []
                if pb is not None and con.type in ("IK", "SPLINE_IK"):
                    up = pb.parent
                    while up is not None and (con.chain_count == 0 or len(chain) < con.chain_count - 1):
                        chain.append(up.name)
                        up = up.parent
                out.append(
                    ConstraintFacts(
                        obj=name,
                        bone=bone,
                        name=con.name,
                        type=con.type,
                        muted=con.mute,
                        enabled=getattr(con, "enabled", True),
                        target=target.name if target is not None else "",
                        subtarget=getattr(con, "subtarget", "") or "",
                        target_space=getattr(con, "target_space", "WORLD"),
                        chain=tuple(chain),
                    )
                )
    return out
