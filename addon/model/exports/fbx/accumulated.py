"""The accumulated FBX file's plan and check, Blender-free: the file right for engines
that rebuild a hierarchy from each node's LOCAL transform, accumulated (Unreal from
locals, Interchange before 5.4, "Preserve Local Transform"; Ogre).

Every node the file can hold gets, at every exported frame, the local TRS whose
accumulation lands it at Blender's world position and rotation with the world scale
Blender shows (:func:`..accumulated_frames.accumulated_frame_locals`): objects keyed
with it (parent inverse the identity; a child of a bone relative to the bone's tail,
which the exporter moves back to its head), bones keyed so that ``inv(parent pose) @
pose`` is it (plain matrix inheritance); both muted (:class:`.copy_plan.CopyPlan`).
Left as the exporter writes them: instances (no object of their name), skinned meshes
(their vertices follow the joints), objects of types the exporter does not write; and
named: linked objects, rigid bodies, objects parented other than by object or bone or
to an object the file lacks, bones of armatures that cannot be edited.

The check (:func:`check`): the file read back, run through the accumulating engine
paths (:mod:`...engines`), against the accumulation of the planned locals (what the
file must hold) and against Blender's worlds (the skew no TRS holds).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..... import core
from ...engines.files import read_back_file
from ...engines.paths import ACCUMULATED, UNREAL_INTERCHANGE
from ...engines.predict import engine_worlds
from ...nodes import node_label
from ...timeline import FrameSeries
from ..accumulated_frames import accumulated_frame_locals
from ..fbx_check import FbxError, FbxRead
from .copy_plan import ArmatureEdit, CopyPlan, ObjectEdit
from .facts import EXPORTED_TYPES, SceneFacts


class AccumulatedPlan(NamedTuple):
    copy: CopyPlan  #: what the scene transaction changes
    local: core.TRS  #: (T, N) every node's accumulated local at the exported frames
    corrected: list  #: the nodes written with their accumulated local
    not_corrected: list  #: (label, why)


def plan_accumulated(series: FrameSeries, facts: SceneFacts, bones_in_file: set | None = None) -> AccumulatedPlan:
    """The copy that writes every node of ``series`` (its frames: the exported ones) it
    can with its accumulated local (see the module docstring); ``bones_in_file``: the
    ``(armature, bone)`` keys the file holds (deform bones only; None: every bone), the
    others are not edited."""
    local, _residual = accumulated_frame_locals(series)
    in_series = {obj for obj, bone in series.keys if not bone}
    objects: list[int] = []
    bones: dict[str, list[int]] = {}  # armature -> its bone nodes
    not_corrected: list[tuple[str, str]] = []
    for i, (name, bone) in enumerate(series.keys):
        label = node_label(name, bone)
        if not facts.exists[i]:
            continue  # an instance: written as the exporter writes it
        if bone and bones_in_file is not None and (name, bone) not in bones_in_file:
            continue  # not in the file
        if bone:
            why = facts.armatures[name].refusal()
            if why:
                not_corrected.append((label, why))
            else:
                bones.setdefault(name, []).append(i)
            continue
        parent, kind = facts.parent_name[i], facts.parent_type[i]
        if name in facts.skinned:
            continue  # its vertices follow the joints, not its node
        if facts.linked[i]:
            not_corrected.append((label, "linked data: left as it is"))
        elif facts.rigid_body[i]:
            not_corrected.append((label, "rigid body (the simulation places it): left as it is"))
        elif facts.object_type[i] not in EXPORTED_TYPES:
            continue
        elif parent and (kind not in ("OBJECT", "BONE") or parent not in in_series):
            not_corrected.append((label, f"parented by {kind.lower()} or to an object the file lacks"))
        else:
            objects.append(i)
    frames = [int(f) for f in series.frames]
    edits = [_object_edit(facts, i, local[:, i]) for i in objects]
    armatures = []
    for rig, nodes in bones.items():
        arm = facts.armatures[rig]
        names = [series.keys[i][1] for i in nodes]
        every, replace = arm.tracks_play, arm.tracks_play and not arm.has_action
        armatures.append(ArmatureEdit(rig, names, False, local[:, nodes], every=every, replace=replace))
    corrected = [*objects, *(i for nodes in bones.values() for i in nodes)]
    return AccumulatedPlan(CopyPlan(frames, edits, armatures), local, corrected, not_corrected)


def _object_edit(facts: SceneFacts, i: int, local: core.TRS) -> ObjectEdit:
    """The object node ``i`` keyed with its accumulated ``local (T,)``, parent inverse
    the identity. Under a bone Blender's parent matrix is the bone's tail and the file's
    parent its head: ``Translation(0, -length, 0) @ T R S``, only the translation moves
    (rotations stay continuous)."""
    translation = local.translation + np.array([0.0, -facts.tail_length[i], 0.0])
    keys = core.TRS(translation, local.rotation, local.scale)
    return ObjectEdit(facts.keys[i][0], parent_inverse=np.eye(4), keys=keys, mute=True)


def check(
    read: FbxRead | None, series: FrameSeries, local: core.TRS, corrected, turns: dict | None = None
) -> tuple[FbxError | None, dict]:
    """The file as an accumulating engine reads it (both paths, at every exported frame)
    against the accumulation of ``local`` (what the file must hold: relative error over
    max(1, the largest entry)), and each node's largest corner distance from Blender's
    world (its skew, which no TRS holds), for the ``corrected`` nodes the file has.
    ``turns``: node -> the rotation Blender's exporter puts after a camera's or a
    light's own (:meth:`.facts.SceneFacts.turns`), on the expected matrix. None, {}
    without a read (no ufbx)."""
    if read is None:
        return None, {}
    t_count, n = series.world.shape[:2]
    tiled = core.Hierarchy(series.parents).tile(t_count)
    flat = core.TRS(local.translation.reshape(-1, 3), local.rotation.reshape(-1, 4), local.scale.reshape(-1, 3))
    expected = tiled.accumulate(flat).to_matrix().reshape(t_count, n, 4, 4)
    for i, turn in (turns or {}).items():
        expected[:, i, :, :3] = expected[:, i, :, :3] @ turn
    column = read.index()
    nodes = sorted(i for i in corrected if column.get(_file_key(series.keys[i])) is not None)
    if not nodes:
        return FbxError(0.0, 0.0, {}, 0), {}
    cols = np.array([column[_file_key(series.keys[i])] for i in nodes], dtype=np.int64)
    file_parents = read.parents if read.parents is not None else np.full(len(read.names), -1, dtype=np.int64)
    worst = np.zeros(len(nodes))
    skew = np.zeros(len(nodes))
    for t in range(t_count):
        file = read_back_file(file_parents, read.worlds[t])
        shown = engine_worlds(file, (UNREAL_INTERCHANGE, ACCUMULATED))
        for world in shown.values():
            worst = np.maximum(worst, np.abs(world[cols] - expected[t, nodes]).max(axis=(1, 2)))
        lo, hi = series.box_min[t, nodes], series.box_max[t, nodes]
        skew = np.maximum(skew, core.box_corner_distance(series.world[t, nodes], shown[ACCUMULATED][cols], lo, hi))
    labels = [node_label(*series.keys[i]) for i in nodes]
    scale = max(1.0, float(np.abs(expected[:, nodes]).max()))
    error = FbxError(
        float(worst.max()) / scale, float(worst.max()), dict(zip(labels, worst.tolist(), strict=True)), len(nodes)
    )
    return error, dict(zip(labels, skew.tolist(), strict=True))


def _file_key(key: tuple[str, str]) -> tuple[str, str]:
    """A node's key in :meth:`..fbx_check.FbxRead.index`: bones under their armature,
    objects by name."""
    obj, bone = key
    return (obj, bone) if bone else ("", obj)
