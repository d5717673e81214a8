"""FBX export exact at every frame, in the same four steps as the glTF one: Blender's
worlds and the scene's facts read (:func:`..frames.read_frames`, :func:`.fbx_facts.read_facts`),
a Blender-free plan made from them (:func:`...model.exports.fbx.exact.plan_exact`: which
objects and bones get a helper and their keys, the Euler-pole turns, what is muted and
what is left out and why), Blender's own exporter run on the scene changed as the plan
says for the length of the export (:func:`..edits.fbx_copy.export_ready`: one
transaction, put back in reverse), and the file read back with ufbx (an independent FBX
reader, in its own process: :mod:`...model.exports.fbx_check`) and compared with Blender
at every exported frame; skinned meshes by their vertices (:mod:`.skinned`).

Blender's FBX exporter has no hook to add nodes, so the helpers live in the scene for
the length of the export (an *export-ready copy*) and nowhere after it. When the file
misses the tolerance, Blender's plain export is read back as well and the plan made
again without the helpers that made a node worse than it
(:func:`...model.exports.fbx.exact.without_worse`).

Not corrected (listed by name): linked objects and rigid bodies, bones of linked, shared
or hidden armatures or of armatures whose active action is blended over NLA tracks, and
objects and bones whose constraints read a node that gets a helper in a local space (or
run an IK chain through a bone that gets one: the read-back shows by how much, and the
command exits 1 when it is over the tolerance). Collection instances are written by
Blender's exporter as they are (``FbxResult.not_checked``).
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

import bpy
import numpy as np

from ...model.errors import ExportError, InspectorError
from ...model.exports.animated_gltf import CHECK_TOLERANCE, check_scale, within_tolerance
from ...model.exports.choices import BLENDER_AXES, EVERYTHING, ExportChoice, FbxAxes
from ...model.exports.fbx.copy_plan import CopyPlan
from ...model.exports.fbx.exact import plan_exact, without_worse
from ...model.exports.fbx_check import FbxError, compare, fbx_unit_meters, prepare_next, read_fbx, start_reader
from ...model.exports.verdicts.plain import worse_nodes
from ...model.exports.verdicts.skinned import SkinCheck
from ...model.frames import FrameRange
from ...model.outputs import check_writable, write_with
from ...model.thresholds import DEFAULT, Thresholds
from ..blender_output import run_exporter
from ..edits.fbx_copy import export_ready
from ..frames import read_frames, timeline_range
from .fbx_facts import read_facts
from .gltf_hook import THROUGH_JOINTS
from .scope import deform_kept, objects_read
from .skinned import EvaluatedVertices, check_fbx, deformed_meshes


class FbxResult(NamedTuple):
    error: FbxError | None  #: the file read back with ufbx (None: ufbx is not installed)
    frames: list
    helpers: list  #: labels of the objects and bones given a temporary helper for their shear
    pole_helpers: list  #: labels of the objects given one only to keep their FBX rotation off the Euler pole
    not_corrected: list  #: (label, why) nodes whose local shear the file drops
    not_checked: list  #: (name, why): meshes checked through their joints, collection instances not corrected
    seconds: dict
    skins: SkinCheck | None = None  #: the skinned meshes' vertices as the file's clusters place them
    plain: FbxError | None = None  #: Blender's plain export read back (when the file missed the tolerance)
    worse_than_plain: dict = {}  #: label -> (this file's error, the plain file's): nodes still worse


#: The exporter's unit settings (its defaults, said here so that the read-back knows
#: them): Apply Unit on, Scale 1 (:func:`unit_meters`).
APPLY_UNIT_SCALE = True
GLOBAL_SCALE = 1.0


def unit_meters(scene) -> float:
    """Metres per scene unit in the files :func:`export_fbx` writes (the scene's unit
    scale, :func:`..model.exports.fbx_check.fbx_unit_meters`): the read-back converts
    the file back to scene units with it."""
    units = scene.unit_settings
    return fbx_unit_meters(units.scale_length, units.system, APPLY_UNIT_SCALE, GLOBAL_SCALE)


def export_fbx(filepath: str, frame_range: FrameRange | None, options: dict | None = None) -> None:
    """Blender's FBX exporter; with ``frame_range`` the scene's timeline baked at every
    frame of it (no simplification), else the current frame's pose; a range of one
    frame is that frame's pose; ``options``: more of the exporter's options (which
    objects and bones, axes, Apply Scalings). The scene's range and frame are restored."""
    scene = bpy.context.scene
    with timeline_range(scene, frame_range):
        if frame_range is not None and frame_range.start == frame_range.end:
            scene.frame_set(frame_range.start)  # one frame: the exporter writes the pose it is on
        run_exporter(
            "FBX",
            bpy.ops.export_scene.fbx,
            filepath=filepath,
            apply_unit_scale=APPLY_UNIT_SCALE,
            global_scale=GLOBAL_SCALE,
            bake_anim=frame_range is not None,
            bake_anim_step=float(frame_range.step if frame_range else 1),
            bake_anim_simplify_factor=0.0,
            bake_anim_use_all_actions=False,
            bake_anim_use_nla_strips=False,
            bake_anim_force_startend_keying=True,
            add_leaf_bones=False,
            **(options or {}),
        )


def file_axes(axes: FbxAxes) -> np.ndarray:
    """``(3, 3)`` the turn Blender's FBX exporter applies to the scene for ``axes``
    (Blender's Z up to the file's axes; :data:`...model.exports.euler_pole.FBX_GLOBAL`
    for its defaults)."""
    from bpy_extras.io_utils import axis_conversion

    conversion: Any = axis_conversion(to_forward=axes.forward, to_up=axes.up)  # a Matrix (the stubs say None)
    return np.array(conversion, dtype=np.float64)


def write_fbx(
    scene,
    out: str,
    frame_range: FrameRange | None,
    thresholds: Thresholds = DEFAULT,
    *,
    again: bool = True,
    pole_helpers: bool = True,
    choice: ExportChoice = EVERYTHING,
    axes: FbxAxes = BLENDER_AXES,
) -> FbxResult:
    """Export ``scene`` to the .fbx ``out`` through the export-ready copy (see the
    module docstring) and read it back. Written whole or not at all. ``again``: start
    the ufbx reader of the next export now (a session that exports again; the command
    line, which exports once, says False). ``pole_helpers`` False: objects that need no
    split are written as Blender writes them, also near the Euler pole (the file keeps
    the scene's hierarchy there; the read-back shows what that costs). ``choice``: which
    objects and bones the file holds (only those are read, corrected and compared);
    ``axes``: its axes and Apply Scalings (the read-back converts them back)."""
    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    reader = start_reader()  # its start-up overlaps the frames read and the export
    try:
        return _write_fbx(scene, out, frame_range, thresholds, reader, pole_helpers, choice, axes)
    finally:
        if reader is not None:
            reader.close()
        if again:
            prepare_next()


def _write_fbx(
    scene,
    out: str,
    frame_range: FrameRange | None,
    thresholds: Thresholds,
    reader,
    pole_helpers: bool,
    choice: ExportChoice = EVERYTHING,
    axes: FbxAxes = BLENDER_AXES,
) -> FbxResult:
    seconds: dict[str, float] = {"blender_export": 0.0, "edits": 0.0, "check": 0.0}
    t0 = time.perf_counter()
    # 1. Blender read: the worlds at the exported frames and the current one, the
    # skinned meshes' vertices in the same pass, the facts the plan needs.
    frames = frame_range.frames() if frame_range else [scene.frame_current]
    frames_read = sorted({*frames, scene.frame_current})
    objects = objects_read(scene, choice)
    in_file = None if objects is None else {obj.name for obj in objects}
    meshes = [obj for obj in deformed_meshes(scene) if in_file is None or obj.name in in_file]
    vertices = EvaluatedVertices(meshes, len(frames_read))
    series = read_frames(scene, frames_read, objects=objects, each_frame=vertices.read if vertices.objects else None)
    keep = [frames_read.index(f) for f in frames]
    facts = read_facts(scene, series.keys)
    bones_in_file = deform_kept(series.keys) if choice.deform_only else None
    # 2. The plan, Blender-free.
    plan = plan_exact(
        series,
        keep,
        frames_read.index(scene.frame_current),
        facts,
        thresholds,
        pole_helpers,
        file_axes(axes),
        bones_in_file,
        selected=choice.objects == "SELECTED",
    )
    options = {**choice.fbx(), **axes.fbx()}
    world = series.world[keep]
    skip, turns = facts.skip(), facts.turns()
    times = np.asarray(frames, dtype=np.float64) / series.fps
    meters = unit_meters(scene)
    seconds["prepare"] = time.perf_counter() - t0
    checked: dict = {}

    def attempt(tmp: str, copy: CopyPlan, reader) -> None:
        """3. Blender's exporter on the scene changed as ``copy`` says, the file read
        back (into ``checked``) while the scene is put back."""
        t1 = time.perf_counter()
        with export_ready(copy, scene):
            t2 = time.perf_counter()
            export_fbx(tmp, frame_range, options)
            exported = time.perf_counter() - t2
            if reader is not None:  # ufbx reads while the edits are undone
                reader.request(tmp, times, skinned=list(vertices.objects), unit_meters=meters)
        t3 = time.perf_counter()
        seconds["blender_export"] += exported
        seconds["edits"] += t3 - t1 - exported
        try:  # a reader failure is raised once the file is written, as before
            checked["read"] = reader.result() if reader is not None else None
        except InspectorError as exc:
            checked["failed"] = exc
        seconds["check"] += time.perf_counter() - t3

    def write(tmp: str) -> None:
        attempt(tmp, plan.copy, reader)
        checked["plan"] = plan
        read = checked.get("read")
        if read is None or not plan.split or "failed" in checked:
            return
        error = compare(read, series.keys, world, skip, turns)
        if within_tolerance(error.relative):
            return
        plain = _plain_error(tmp, frame_range, times, series.keys, world, skip, turns, options)
        checked["plain"] = plain
        theirs = plain.per_node if plain is not None else {}
        again = without_worse(plan, error.per_node, theirs, CHECK_TOLERANCE * check_scale(world))
        if again is None:
            return
        second = start_reader()
        try:
            attempt(tmp, again.copy, second)
        finally:
            if second is not None:
                second.close()
        checked["plan"] = again

    write_with(out, write)
    if "failed" in checked:
        raise checked["failed"]
    # 4. The read-back against Blender.
    t4 = time.perf_counter()
    read, done = checked.get("read"), checked["plan"]
    error = compare(read, series.keys, world, skip, turns) if read is not None else None
    skins = check_fbx(read.skinned, vertices, frames, keep) if read is not None else None
    plain = checked.get("plain")
    tolerance = CHECK_TOLERANCE * check_scale(world)
    still = worse_nodes(error.per_node, plain.per_node, tolerance) if plain and error is not None else {}
    seconds["check"] += time.perf_counter() - t4
    deformed = sorted({series.keys[i][0] for i in skip} - set(skins.meshes if skins is not None else ()))
    not_checked = [*facts.instances, *((name, THROUGH_JOINTS) for name in deformed)]
    return FbxResult(
        error,
        frames,
        done.helper_labels(),
        done.pole_labels(),
        done.not_corrected,
        not_checked,
        seconds,
        skins,
        plain,
        still,
    )


def _plain_error(tmp: str, frame_range, times, keys, world, skip, turns, options=None) -> FbxError | None:
    """Blender's plain export of the scene (beside ``tmp``, removed after; the same
    exporter ``options``), read back and compared as the corrected file is; None
    without ufbx."""
    plain = tmp + ".plain.fbx"
    try:
        export_fbx(plain, frame_range, options)
        read = read_fbx(plain, times, unit_meters=unit_meters(bpy.context.scene))
    finally:
        if os.path.exists(plain):
            os.remove(plain)
    return None if read is None else compare(read, keys, world, skip, turns)
