"""What the FBX export-ready copy changes (:class:`Plan`): the nodes split, the bones per
armature, the split's factors, the constraint readers of the split nodes (they read a
node that the copy rebuilds) and the IK chains muted with their owners; and why a
helper is left out where the file would be worse than Blender's plain export
(:func:`worse_reason`, the choice itself in :mod:`...model.exports.verdicts.plain`)."""

from __future__ import annotations

from typing import Any, NamedTuple

import bpy
import numpy as np

from ...model.exports.animated_split import continuous_split
from ...model.exports.euler_pole import turned
from ...model.nodes import node_label
from . import fbx_bones
from .fbx_pole import written_turns


def worse_reason(worse: dict) -> str:
    """Why a helper was left out: the node it made worse than Blender's plain export."""
    label, (ours, theirs) = max(worse.items(), key=lambda item: np.nan_to_num(item[1][0], nan=np.inf))
    return (
        f"its helper put '{label}' {ours:.1e} units off where Blender's plain export is {theirs:.1e}: "
        "written as Blender writes it"
    )


class Plan(NamedTuple):
    """What the export-ready copy changes: the nodes split (scene indices), the bones
    per armature, the split's factors, the objects and their turned factors, the
    constraint readers of the split nodes, and what is not corrected."""

    split: list
    bones: dict  #: armature name -> [(bone name, column of outer / inner)]
    outer: Any
    inner: Any
    objects: list  #: scene indices of the split objects
    outer_objects: Any
    inner_objects: Any
    readers: dict  #: split node -> scene indices of the nodes whose constraints read it or span it
    chains: dict  #: split bone -> scene indices of the bones its IK poses (muted in the copy)
    not_corrected: list


def plan_copy(series, local: np.ndarray, split: list[int], not_corrected: list, global_turn=None) -> Plan:
    """The copy's edits for the nodes ``split`` (scene indices) of ``series``, whose
    local matrices ``(T, N, 4, 4)`` at the exported frames are ``local``; ``global_turn``:
    the file's axes (:func:`.fbx_pole.fbx_global`; None: Blender's defaults)."""
    keys = series.keys
    index = {node_label(*key): i for i, key in enumerate(keys)}
    bones: dict[str, list[tuple[str, int]]] = {}
    for k, i in enumerate(split):
        if keys[i][1]:
            bones.setdefault(keys[i][0], []).append((keys[i][1], k))
    listed = list(not_corrected)
    readers: dict[int, list[int]] = {}
    for rig_name, rig_bones in bones.items():  # constraints that would read the copy's rebuilt bones
        for reader, bone, why in fbx_bones.reader_pairs(bpy.data.objects[rig_name], {b for b, _k in rig_bones}):
            listed.append((node_label(rig_name, reader), why))
            readers.setdefault(index[node_label(rig_name, bone)], []).append(index[node_label(rig_name, reader)])
    chains: dict[int, list[int]] = {}
    for rig_name, rig_bones in bones.items():
        for bone, chain in fbx_bones.ik_chains(bpy.data.objects[rig_name], [b for b, _k in rig_bones]).items():
            chains[index[node_label(rig_name, bone)]] = [index[node_label(rig_name, b)] for b in chain]
    for label, target, why in object_readers(bpy.context.scene, {keys[i][0] for i in split if not keys[i][1]}):
        listed.append((label, why))
        if label in index:
            readers.setdefault(index[target], []).append(index[label])
    outer, inner = continuous_split(local[:, split], small_inner=True)  # away from Euler gimbal lock
    columns = [k for k, i in enumerate(split) if not keys[i][1]]
    objects = [split[k] for k in columns]
    turned_objects = [bpy.data.objects[keys[i][0]] for i in objects]
    before, after = written_turns(turned_objects) if global_turn is None else written_turns(turned_objects, global_turn)
    outer_objects, inner_objects = turned(outer[:, columns], inner[:, columns], before, after)
    return Plan(list(split), bones, outer, inner, objects, outer_objects, inner_objects, readers, chains, listed)


def object_readers(scene, split: set[str]) -> list[tuple[str, str, str]]:
    """``(label, target, why)`` for the objects and bones whose constraints read an object ``target`` of
    ``split`` in a local space: in the export-ready copy that object hangs under a helper
    with another local matrix (the same world matrix, which world-space readers see)."""
    if not split:
        return []
    out = []
    for obj in scene.objects:
        owners = [(obj.name, obj.constraints)]
        if obj.type == "ARMATURE" and obj.pose is not None:
            owners += [(f"{obj.name} > {pb.name}", pb.constraints) for pb in obj.pose.bones]
        for label, constraints in owners:
            for con in constraints:
                target = getattr(con, "target", None)
                if con.mute or target is None or target.name not in split or getattr(con, "subtarget", ""):
                    continue
                if getattr(con, "target_space", "WORLD") in fbx_bones.LOCAL_SPACES:
                    why = f"constraint '{con.name}' reads '{target.name}' in local space, which gets a helper"
                    out.append((label, target.name, why))
                    break
    return out
