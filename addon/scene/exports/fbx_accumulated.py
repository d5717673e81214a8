"""The accumulated FBX: the export right for engines that rebuild a hierarchy from each
node's LOCAL transform (Unreal from locals: objects imported into a level, reference
poses, Interchange before 5.4, "Preserve Local Transform"; Ogre).

Such an engine accumulates the file's locals (translation, rotation and scale combined
separately), so Blender's plain file, whose locals are the exporters' decomposition of
Blender's local matrices, puts every node below a non-uniform scale off. This file holds
instead, at every exported frame, the local TRS whose accumulation lands each node at
Blender's world position and rotation with the world scale Blender shows: exact
wherever Blender's world holds no skew, the skew itself elsewhere (no TRS holds it).

The same four steps as the exact FBX (:mod:`.fbx_export`): Blender's worlds and the
scene's facts read, a Blender-free plan (:func:`...model.exports.fbx.accumulated.plan_accumulated`:
every object keyed with its accumulated local, parent inverse the identity; every bone
of an editable armature given plain matrix inheritance and keys; constraints and
transform drivers muted, delta transforms zeroed), Blender's exporter on the scene
changed as the plan says (:func:`..edits.fbx_copy.export_ready`, put back after), and
the file read back with ufbx, run through the accumulating engine paths
(:func:`...model.exports.fbx.accumulated.check`): checked against the accumulated
worlds (1e-5 relative) and measured against Blender's (the skew left).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import bpy

from ...model.errors import ExportError, InspectorError
from ...model.exports.choices import BLENDER_AXES, EVERYTHING, ExportChoice, FbxAxes
from ...model.exports.fbx.accumulated import check, plan_accumulated
from ...model.exports.fbx_check import FbxError, prepare_next, start_reader
from ...model.frames import FrameRange
from ...model.outputs import check_writable, write_with
from ...model.timeline import FrameSeries
from ..edits.fbx_copy import export_ready
from ..frames import read_frames
from .fbx_export import export_fbx, unit_meters
from .fbx_facts import read_facts
from .gltf_hook import THROUGH_JOINTS
from .scope import deform_kept, objects_read


class AccumulatedFbxResult(NamedTuple):
    error: FbxError | None  #: the file read back, accumulated, against the accumulated worlds (None: no ufbx)
    skew: dict  #: label -> largest corner distance from Blender's world over the frames (its own skew)
    frames: list
    corrected: int  #: nodes written with their accumulated local
    not_corrected: list  #: (label, why)
    not_checked: list  #: (name, why)
    seconds: dict


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
    scene, out: str, frame_range: FrameRange | None, reader, choice: ExportChoice, axes: FbxAxes
) -> AccumulatedFbxResult:
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    frames = frame_range.frames() if frame_range else [scene.frame_current]
    objects = objects_read(scene, choice)
    read_all = read_frames(scene, sorted({*frames, scene.frame_current}), objects=objects)
    keep = [read_all.frames.tolist().index(f) for f in frames]
    series = FrameSeries(
        read_all.frames[keep],
        read_all.keys,
        read_all.parents,
        read_all.world[keep],
        read_all.box_min[keep],
        read_all.box_max[keep],
        read_all.fps,
        read_all.notes,
    )
    facts = read_facts(scene, series.keys)
    plan = plan_accumulated(series, facts, deform_kept(series.keys) if choice.deform_only else None)
    times = series.frames.astype(float) / series.fps
    meters = unit_meters(scene)
    seconds["prepare"] = time.perf_counter() - t0
    checked: dict = {}

    def write(tmp: str) -> None:
        t1 = time.perf_counter()
        with export_ready(plan.copy, scene):
            t2 = time.perf_counter()
            export_fbx(tmp, frame_range, {**choice.fbx(), **axes.fbx()})
            seconds["blender_export"] = time.perf_counter() - t2
            if reader is not None:  # read in the scene's units (its Unit Scale)
                reader.request(tmp, times, unit_meters=meters)
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
    error, skew = check(checked.get("read"), series, plan.local, plan.corrected, facts.turns())
    not_checked = [(name, THROUGH_JOINTS) for name in sorted(facts.skinned)]
    return AccumulatedFbxResult(error, skew, frames, len(plan.corrected), plan.not_corrected, not_checked, seconds)
