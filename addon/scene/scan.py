"""The scene scan: every object and bone of a scene read and inspected in one pass,
and what the advice, the cause groups and the scan filter need beyond the matrices
(:func:`annotate`: the scale channels the user typed, object types, and per bone its
Inherit Scale mode and Deform option; the optional fields of
:class:`~..model.nodes.Nodes`), read in bulk where Blender allows it (about a
millisecond for a 700-bone rig).
"""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from ..model.inspection import Inspection, inspect, inspect_valid
from ..model.nodes import Nodes
from ..model.thresholds import DEFAULT, Thresholds
from .instances import with_instances
from .reading import active_key, chain_bones, chain_indices, chain_objects, read_nodes


def scan_scene(scene, thresholds: Thresholds = DEFAULT, progress=None, instances: bool = False) -> Inspection:
    """Inspect every object of ``scene`` and every pose bone of its armatures; with
    ``instances``, also every collection / geometry-nodes / particle instance, as a node
    under its instancer (:mod:`.instances`; evaluated for the current view layer).

    ``progress(fraction, message)`` is called between phases (reading, analysing).
    Raises :class:`~..model.errors.SceneDataError` naming the object or bone and the
    property where a value is NaN or infinite.
    """
    return scan_scene_valid(scene, thresholds, progress, instances, strict=True)[0]


def scan_scene_valid(
    scene, thresholds: Thresholds = DEFAULT, progress=None, instances: bool = False, strict: bool = False
) -> tuple[Inspection, list[str]]:
    """:func:`scan_scene` that goes on where one object is bad: the inspection of every
    node with finite values, and one message per place where NaN or infinity starts
    (with ``strict``, those raise instead)."""
    if progress:
        progress(0.0, "reading the scene")
    nodes = annotate(read_nodes(scene.objects), scene.objects)
    if instances:
        layer = bpy.context.view_layer if scene == bpy.context.scene else scene.view_layers[0]
        nodes = with_instances(
            nodes, layer.depsgraph if layer != bpy.context.view_layer else bpy.context.evaluated_depsgraph_get()
        )
    if progress:
        progress(0.5, f"analysing {len(nodes)} nodes")
    result = (inspect(nodes, thresholds), []) if strict else inspect_valid(nodes, thresholds)
    if progress:
        progress(1.0, "done")
    return result


def _scales(collection, count: int, prop: str = "scale") -> np.ndarray:
    buf = np.empty(count * 3, dtype=np.float32)
    if count:
        collection.foreach_get(prop, buf)
    return buf.reshape(count, 3).astype(np.float64)


#: Constraints that give their owner another node's whole transform: the owner follows
#: that node (:attr:`~..model.nodes.Nodes.follows`).
FOLLOWING = frozenset({"COPY_TRANSFORMS", "CHILD_OF", "ARMATURE"})


def followed_target(constraints) -> tuple[Any, str] | None:
    """``(target object, bone name or "")`` of the first unmuted :data:`FOLLOWING`
    constraint among ``constraints`` (``ARMATURE``: its first target), else None."""
    for con in constraints:
        if con.type not in FOLLOWING or con.mute or con.influence <= 0.0:
            continue
        if con.type == "ARMATURE":
            targets = list(con.targets)
            target, bone = (targets[0].target, targets[0].subtarget) if targets else (None, "")
        else:
            target, bone = con.target, getattr(con, "subtarget", "")
        if target is not None:
            return target, bone or ""
    return None


def _followed(constraints, index: dict) -> int:
    """The node index of :func:`followed_target` (-1 when it is not among the read nodes)."""
    found = followed_target(constraints)
    return -1 if found is None else index.get((found[0].name, found[1]), -1)


def bone_hidden(bone) -> bool:
    """Whether the viewport hides ``bone``: hidden itself, or in bone collections none
    of which shows (a bone in no collection shows)."""
    if bone.hide:
        return True
    collections = getattr(bone, "collections", None)
    if collections is None or not len(collections):
        return False
    return not any(getattr(c, "is_visible_effectively", c.is_visible) for c in collections)


def node_hidden(object_name: str, bone_name: str, view_layer) -> bool:
    """Whether the viewport hides the object or bone (gone counts as hidden)."""
    obj = bpy.data.objects.get(object_name)
    if obj is None or view_layer.objects.get(obj.name) is None or not obj.visible_get(view_layer=view_layer):
        return True
    if not bone_name:
        return False
    bone = obj.data.bones.get(bone_name) if obj.type == "ARMATURE" else None
    return bone is None or bone_hidden(bone)


def annotate(nodes: Nodes, objects=None) -> Nodes:
    """Fill ``channel_scale``, ``types``, ``inherit_scale``, ``deform``, ``follows`` and
    ``hidden`` of ``nodes`` (in place; returns it). ``objects``: the collection ``nodes``
    was read from (its objects are the first nodes, in order: read in bulk), else
    objects are looked up by name. Nodes whose object or bone no longer exists keep the
    defaults ("unknown")."""
    n = len(nodes)
    channel = np.full((n, 3), np.nan)
    deform = np.zeros(n, dtype=bool)
    follows = np.full(n, -1, dtype=np.int64)
    hidden = np.zeros(n, dtype=bool)
    index = nodes.index()
    bones: dict[str, dict[str, int]] = {}
    named: dict[str, list[int]] = {}
    for i, (owner, bone) in enumerate(nodes.keys):
        if bone:
            bones.setdefault(owner, {})[bone] = i
        else:
            named.setdefault(owner, []).append(i)
    n_obj = sum(len(rows) for rows in named.values())
    if objects is not None and hasattr(objects, "foreach_get") and len(objects) == n_obj:
        channel[:n_obj] = _scales(objects, n_obj) * _scales(objects, n_obj, "delta_scale")
        nodes.types[:n_obj] = [o.type for o in objects]
    else:
        for object_name, rows in named.items():
            obj = bpy.data.objects.get(object_name)
            if obj is None:
                continue
            channel[rows] = np.asarray(obj.scale, dtype=np.float64) * np.asarray(obj.delta_scale, dtype=np.float64)
            for i in rows:
                nodes.types[i] = obj.type
    for object_name, rows in named.items():
        obj = bpy.data.objects.get(object_name)
        if obj is None:
            continue
        hidden[rows] = not obj.visible_get()
        if len(obj.constraints):
            follows[rows] = _followed(obj.constraints, index)
    for armature_name, bone_rows in bones.items():
        arm = bpy.data.objects.get(armature_name)
        if arm is None or arm.type != "ARMATURE" or arm.pose is None:
            continue
        pose_bones = arm.pose.bones
        arm_hidden = not arm.visible_get()
        if 4 * len(bone_rows) < len(pose_bones):  # a chain: look its few bones up
            for bone_name, i in bone_rows.items():
                pb = pose_bones.get(bone_name)
                if pb is not None:
                    channel[i] = tuple(pb.scale)
                    _bone_facts(nodes, pb, i, deform, follows, hidden, index, arm_hidden)
            continue
        scales = _scales(pose_bones, len(pose_bones))
        for k, pb in enumerate(pose_bones):
            i = bone_rows.get(pb.name)
            if i is None:
                continue
            channel[i] = scales[k]
            _bone_facts(nodes, pb, i, deform, follows, hidden, index, arm_hidden)
    nodes.channel_scale, nodes.deform, nodes.follows, nodes.hidden = channel, deform, follows, hidden
    return nodes


def _bone_facts(nodes, pb, i, deform, follows, hidden, index, arm_hidden) -> None:
    """A pose bone's Inherit Scale, Deform, the node it follows and whether it shows."""
    bone = pb.bone
    nodes.inherit_scale[i] = bone.inherit_scale
    deform[i] = bone.use_deform
    hidden[i] = arm_hidden or bone_hidden(bone)
    if len(pb.constraints):
        follows[i] = _followed(pb.constraints, index)


def read_chain(context, verify: bool = True) -> tuple[Nodes, list[int]] | None:
    """Nodes of the chain from the root to the active object or pose bone, and the
    chain's indices root to active (None when nothing is active). ``verify``: as in
    :func:`.reading.read_nodes` (the panel always verifies; the benchmark times both).
    The one chain reader: the panel's (:mod:`.live`) and the benchmark's.

    Only the chain's objects and the bones on it are read (:func:`.reading.read_nodes`
    with the chain's bones), so the cost follows the chain, not the rig (see
    ``benchmarks/bench_addon.py``): the same matrices, parents, boxes, notes and
    annotations as the scan gives those nodes.
    """
    key = active_key(context)
    if key is None:
        return None
    objects = chain_objects(context.active_object)
    copied = []  # the bone the active bone's constraints copy: its mechanism
    if key[1] and context.active_object.pose is not None:
        pose_bone = context.active_object.pose.bones.get(key[1])
        found = followed_target(pose_bone.constraints) if pose_bone is not None else None
        if found is not None and found[0] == context.active_object and found[1]:
            copied.append((context.active_object, found[1]))
    nodes = read_nodes(objects, verify, bones=chain_bones(context, key, objects, copied))
    annotate(nodes)
    return nodes, chain_indices(nodes, key)
