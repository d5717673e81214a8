"""The accumulated FBX: the export right for engines that rebuild a hierarchy from each
node's LOCAL transform (Unreal from locals: objects imported into a level, reference
poses, Interchange before 5.4, "Preserve Local Transform"; Ogre).

Such an engine accumulates the file's locals (translation, rotation and scale combined
separately), so Blender's plain file, whose locals are the exporters' decomposition of
Blender's local matrices, puts every node below a non-uniform scale off. This file holds
instead, at every exported frame, the local TRS whose accumulation lands each node at
Blender's world position and rotation with the world scale Blender shows
(:func:`..model.exports.accumulated_frames.accumulated_frame_locals`): exact wherever
Blender's world holds no skew, the skew itself elsewhere (no TRS holds it).

Blender's FBX exporter has no hook to change what it writes, so the export goes through
an export-ready copy, as the exact FBX does (:mod:`.fbx_export`): for the length of the
export every object's parent inverse is the identity and its transform is keyed with its
accumulated local (a child of a bone: relative to the bone's tail, which the exporter moves
back to its head), every bone of an editable armature gets plain matrix inheritance and
keys that make ``inv(parent pose) @ pose`` its accumulated local
(:func:`.fbx_bones.apply_locals`), constraints and transform drivers muted, delta
transforms zeroed; then every edit is undone. The file is read back with ufbx and run
through the accumulating engine paths (:mod:`..model.engines`), checked against the
accumulated worlds (1e-5 relative) and measured against Blender's (the skew left).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import bpy
import numpy as np

from .... import core
from ...model.engines.files import read_back_file
from ...model.engines.paths import ACCUMULATED, UNREAL_INTERCHANGE
from ...model.engines.predict import engine_worlds
from ...model.errors import ExportError, InspectorError
from ...model.exports.accumulated_frames import accumulated_frame_locals
from ...model.exports.choices import BLENDER_AXES, EVERYTHING, ExportChoice, FbxAxes
from ...model.exports.fbx_check import FbxError, prepare_next, start_reader
from ...model.frames import FrameRange
from ...model.nodes import node_label
from ...model.outputs import check_writable, write_with
from ...model.timeline import FrameSeries
from ..edits.editing import OBJECT_CHANNELS, Parenting, put_back, set_saved, to_blender
from ..frames import read_frames
from . import fbx_bones
from .fbx_export import _key, _mute_transform, export_fbx, turns_of, unit_meters
from .fbx_pole import EXPORTED_TYPES
from .gltf_hook import THROUGH_JOINTS, engine_ignored
from .scope import deform_kept, exported_objects


class AccumulatedFbxResult(NamedTuple):
    error: FbxError | None  #: the file read back, accumulated, against the accumulated worlds (None: no ufbx)
    skew: dict  #: label -> largest corner distance from Blender's world over the frames (its own skew)
    frames: list
    corrected: int  #: nodes written with their accumulated local
    not_corrected: list  #: (label, why)
    not_checked: list  #: (name, why)
    seconds: dict


class _ObjectEdit(NamedTuple):
    obj: object
    parenting: Parenting
    rotation_mode: str
    action: object
    had_anim: bool
    channels: tuple
    changed: list


def _tail_offset(obj) -> np.ndarray:
    """``Translation(0, -length, 0)``: for an object parented to a bone, from the bone's
    tail (Blender's parent matrix) back to its head (the FBX parent node)."""
    out = np.eye(4)
    if obj.parent_type == "BONE" and obj.parent is not None and obj.parent_bone in obj.parent.data.bones:
        out[1, 3] = -obj.parent.data.bones[obj.parent_bone].length
    return out


def _apply_objects(names: list[str], frames: list[int], local: core.TRS) -> list[_ObjectEdit]:
    """Key each object of ``names`` with its column of ``local (T, K)`` as its own local
    transform (parent inverse the identity); undone by :func:`_undo_objects`."""
    edits: list[_ObjectEdit] = []
    try:
        for k, name in enumerate(names):
            obj = bpy.data.objects[name]
            had = obj.animation_data is not None
            channels = tuple(tuple(getattr(obj, c)) for c in OBJECT_CHANNELS)
            changed: list = []
            edits.append(
                _ObjectEdit(
                    obj,
                    Parenting.save(obj),
                    obj.rotation_mode,
                    had and obj.animation_data.action,
                    had,
                    channels,
                    changed,
                )
            )
            _mute_transform(obj, changed)
            obj.matrix_parent_inverse = to_blender(np.eye(4))
            if obj.animation_data:
                obj.animation_data.action = None
                set_saved(changed, obj.animation_data, "action_blend_type", "REPLACE")
                set_saved(changed, obj.animation_data, "action_influence", 1.0)
            # Translation(0, -length, 0) @ T R S: only the translation moves (rotations stay continuous).
            trs = local[:, k]
            _key(obj, frames, core.TRS(trs.translation + _tail_offset(obj)[:3, 3], trs.rotation, trs.scale))
    except BaseException:
        _undo_objects(edits)
        raise
    return edits


def _undo_objects(edits: list[_ObjectEdit]) -> None:
    for e in reversed(edits):
        obj = e.obj
        anim = obj.animation_data  # type: ignore[attr-defined]
        new_action = anim.action if anim else None
        if anim:
            anim.action = e.action or None
            if not e.had_anim:
                obj.animation_data_clear()  # type: ignore[attr-defined]
        if new_action is not None and new_action != e.action:
            bpy.data.actions.remove(new_action)
        e.parenting.restore()
        put_back(e.changed)
        obj.rotation_mode = e.rotation_mode  # type: ignore[attr-defined]
        for name, value in zip(OBJECT_CHANNELS, e.channels, strict=True):
            setattr(obj, name, value)
    if edits:
        bpy.context.view_layer.update()


def _plan(scene, series: FrameSeries, deform_only: bool = False) -> tuple[list[int], dict, list, list, set]:
    """Which nodes get their accumulated local: ``(objects, {armature: [(bone, k)]},
    bone columns, not corrected, skinned meshes)``; ``deform_only``: bones the file
    leaves out are not edited."""
    skinned, _listed = engine_ignored(scene)
    in_file = deform_kept(series.keys) if deform_only else None
    in_series = {obj for obj, bone in series.keys if not bone}
    objects: list[int] = []
    bones: dict[str, list[tuple[str, int]]] = {}
    bone_cols: list[int] = []
    not_corrected: list[tuple[str, str]] = []
    refused: dict[str, str] = {}
    for i, (name, bone) in enumerate(series.keys):
        obj = bpy.data.objects.get(name)
        label = node_label(name, bone)
        if obj is None:
            continue  # an instance: written as the exporter writes it
        if bone and in_file is not None and (name, bone) not in in_file:
            continue
        if bone:
            why = refused.setdefault(name, fbx_bones.editable(obj, bpy.context.view_layer))
            if why:
                not_corrected.append((label, why))
            else:
                bones.setdefault(name, []).append((bone, len(bone_cols)))
                bone_cols.append(i)
            continue
        if name in skinned:
            continue  # its vertices follow the joints, not its node
        if obj.library is not None or obj.override_library is not None:
            not_corrected.append((label, "linked data: left as it is"))
        elif obj.rigid_body is not None:
            not_corrected.append((label, "rigid body (the simulation places it): left as it is"))
        elif obj.type not in EXPORTED_TYPES:
            continue
        elif obj.parent is not None and (obj.parent_type not in ("OBJECT", "BONE") or obj.parent.name not in in_series):
            not_corrected.append((label, f"parented by {obj.parent_type.lower()} or to an object the file lacks"))
        else:
            objects.append(i)
    return objects, bones, bone_cols, not_corrected, skinned


def write_fbx_accumulated(
    scene,
    out: str,
    frame_range: FrameRange | None,
    *,
    again: bool = True,
    choice: ExportChoice = EVERYTHING,
    axes: FbxAxes = BLENDER_AXES,
) -> AccumulatedFbxResult:
    """Export ``scene`` to the .fbx ``out`` with every node's accumulated local (see the
    module docstring), over ``frame_range`` (baked at every frame) or at the current
    frame, read back and checked. Written whole or not at all; the scene is as before.
    ``choice``: which objects and bones the file holds; ``axes``: its axes and scale."""
    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    reader = start_reader()
    try:
        return _write(scene, out, frame_range, reader, choice, axes)
    finally:
        if reader is not None:
            reader.close()
        if again:
            prepare_next()


def _write(
    scene,
    out: str,
    frame_range: FrameRange | None,
    reader,
    choice: ExportChoice = EVERYTHING,
    axes: FbxAxes = BLENDER_AXES,
) -> AccumulatedFbxResult:
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    frames = frame_range.frames() if frame_range else [scene.frame_current]
    objects = None if choice.objects == "ALL" else exported_objects(scene, choice)
    series = read_frames(scene, sorted({*frames, scene.frame_current}), objects=objects)
    keep = [series.frames.tolist().index(f) for f in frames]
    series = FrameSeries(
        series.frames[keep],
        series.keys,
        series.parents,
        series.world[keep],
        series.box_min[keep],
        series.box_max[keep],
        series.fps,
        series.notes,
    )
    local, _residual = accumulated_frame_locals(series)
    written, bones, bone_cols, not_corrected, skinned = _plan(scene, series, choice.deform_only)
    times = np.asarray(frames, dtype=np.float64) / series.fps
    seconds["prepare"] = time.perf_counter() - t0
    checked: dict = {}

    def write(tmp: str) -> None:
        t1 = time.perf_counter()
        edits = _apply_objects([series.keys[i][0] for i in written], frames, local[:, written])
        bone_edits = None
        try:
            if bones:
                bone_edits = fbx_bones.apply_locals(scene, bones, frames, local[:, bone_cols])
            t2 = time.perf_counter()
            export_fbx(tmp, frame_range, {**choice.fbx(), **axes.fbx()})
            seconds["blender_export"] = time.perf_counter() - t2
            if reader is not None:  # read in the scene's units (its Unit Scale)
                reader.request(tmp, times, unit_meters=unit_meters(scene))
        finally:
            if bone_edits is not None:
                fbx_bones.restore(bone_edits)
            _undo_objects(edits)
        t3 = time.perf_counter()
        seconds["edits"] = t3 - t1 - seconds["blender_export"]
        try:
            checked["read"] = reader.result() if reader is not None else None
        except InspectorError as exc:
            checked["failed"] = exc
        seconds["check"] = time.perf_counter() - t3

    write_with(out, write)
    if "failed" in checked:
        raise checked["failed"]
    corrected = {*written, *bone_cols}
    error, skew = _check(checked.get("read"), series, local, corrected, turns_of(series.keys))
    not_checked = [(name, THROUGH_JOINTS) for name in sorted(skinned)]
    return AccumulatedFbxResult(error, skew, frames, len(corrected), not_corrected, not_checked, seconds)


def _check(
    read, series: FrameSeries, local: core.TRS, corrected: set, turns: dict | None = None
) -> tuple[FbxError | None, dict]:
    """The file as an accumulating engine reads it (both paths, at every exported frame)
    against the accumulation of ``local`` (what the file must hold: relative error over
    max(1, the largest entry)), and each node's largest corner distance from Blender's
    world (its skew, which no TRS holds), for the ``corrected`` nodes the file has.
    ``turns``: node -> the rotation Blender's exporter puts after a camera's or a
    light's own (:func:`.fbx_export.turns_of`), on the expected matrix."""
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
    worst = np.zeros(len(nodes))
    skew = np.zeros(len(nodes))
    for t in range(t_count):
        file = read_back_file(read.parents, read.worlds[t])
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
    """A node's key in :meth:`FbxRead.index`: bones under their armature, objects by name."""
    obj, bone = key
    return (obj, bone) if bone else ("", obj)
