"""The scene scan: every object and bone of a scene read and inspected in one pass,
and what the advice, the cause groups and the scan filter need beyond the matrices
(:func:`annotate`: the scale channels the user typed, object types, and per bone its
Inherit Scale mode and Deform option; the optional fields of
:class:`~..model.nodes.Nodes`), read in bulk where Blender allows it (about a
millisecond for a 700-bone rig).
"""

from __future__ import annotations

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


def annotate(nodes: Nodes, objects=None) -> Nodes:
    """Fill ``channel_scale``, ``types``, ``inherit_scale`` and ``deform`` of ``nodes``
    (in place; returns it). ``objects``: the collection ``nodes`` was read from (its
    objects are the first nodes, in order: read in bulk), else objects are looked up by
    name. Nodes whose object or bone no longer exists keep the defaults ("unknown")."""
    n = len(nodes)
    channel = np.full((n, 3), np.nan)
    deform = np.zeros(n, dtype=bool)
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
    for armature_name, index in bones.items():
        arm = bpy.data.objects.get(armature_name)
        if arm is None or arm.type != "ARMATURE" or arm.pose is None:
            continue
        pose_bones = arm.pose.bones
        if 4 * len(index) < len(pose_bones):  # a chain: look its few bones up
            for bone_name, i in index.items():
                pb = pose_bones.get(bone_name)
                if pb is not None:
                    channel[i] = tuple(pb.scale)
                    nodes.inherit_scale[i] = pb.bone.inherit_scale
                    deform[i] = pb.bone.use_deform
            continue
        scales = _scales(pose_bones, len(pose_bones))
        for k, pb in enumerate(pose_bones):
            i = index.get(pb.name)
            if i is None:
                continue
            bone = pb.bone
            channel[i] = scales[k]
            nodes.inherit_scale[i] = bone.inherit_scale
            deform[i] = bone.use_deform
    nodes.channel_scale, nodes.deform = channel, deform
    return nodes


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
    nodes = read_nodes(objects, verify, bones=chain_bones(context, key, objects))
    annotate(nodes)
    return nodes, chain_indices(nodes, key)
