"""FBX export through an export-ready copy: Blender's FBX exporter has no hook to add
nodes, so for the length of the export every object whose local matrix needs two TRS
at some frame gets a temporary helper empty above it, both keyed at every exported
frame with the continuous exact split (:func:`..model.exports.animated_split.continuous_split`);
Blender's own exporter bakes them; then every edit is undone (helpers and their
actions removed, the objects' parenting, rotation mode and actions put back), so the
user's scene is as it was. The file is then read back with ufbx (an independent FBX
reader) and compared with Blender at every exported frame.

Bones whose local matrix holds shear get a temporary helper BONE above them the same
way (:mod:`.fbx_bones`: edit bones, keyed pose, all undone).

The exporter writes rotations as Euler angles computed in single precision, which lose
precision near the Euler pole (:mod:`..model.exports.euler_pole`): every helper's frame
is turned by a constant axis rotation away from it, and an object that needs no split
but whose rotation comes within :data:`~..model.exports.euler_pole.POLE_DEG` of the pole
gets a still helper empty turned by such a rotation ``C``; the object keeps its own
animation and only its parenting changes (``matrix_parent_inverse`` turned by ``C.T``:
the same world matrix), then is restored (``FbxResult.pole_helpers``).

An object that gets a helper keeps its constraints and transform drivers muted and its
delta transforms zeroed for the export (its keys hold Blender's evaluated result), and
its keys replace what NLA tracks give (Replace at full influence); all put back.

Not corrected (listed by name): linked objects and rigid bodies, bones of linked, shared
or hidden armatures or of armatures whose active action is blended over NLA tracks,
and objects and bones whose constraints read a node that gets a helper in a local space
(or run an IK chain through a bone that gets one: the copy rebuilds that node from a
helper and keys, so the constraint computes something else there; the read-back shows
by how much, and the command exits 1 when it is over the tolerance). Collection
instances are written by Blender's exporter as they are (``FbxResult.not_checked``).

The copy's plan (nodes split, constraint readers, IK chains) is :mod:`.fbx_plan`; the
Euler-pole helpers :mod:`.fbx_pole`. When the file misses the tolerance, Blender's plain
export is read back as well and the helpers that made a node worse than it are left
out (:mod:`...model.exports.verdicts.plain`); skinned meshes are checked by their
vertices (:mod:`.skinned`).
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

import bpy
import numpy as np

from .... import core
from ...model.errors import ExportError, InspectorError
from ...model.exports.animated_gltf import (
    CHECK_TOLERANCE,
    check_scale,
    needs_split,
    parent_inverses,
    subtree_extent,
    within_tolerance,
)
from ...model.exports.choices import BLENDER_AXES, EVERYTHING, ExportChoice, FbxAxes
from ...model.exports.euler_pole import CAMERA_TURN, LIGHT_TURN
from ...model.exports.fbx_check import FbxError, compare, fbx_unit_meters, prepare_next, read_fbx, start_reader
from ...model.exports.verdicts.plain import helpers_to_drop, with_chain_owners, worse_nodes
from ...model.exports.verdicts.skinned import SkinCheck
from ...model.frames import FrameRange
from ...model.nodes import node_label
from ...model.outputs import check_writable, write_with
from ...model.thresholds import DEFAULT, Thresholds
from ..blender_output import run_exporter
from ..edits.editing import (
    DEFORMABLE,
    DEFORMING_PARENTS,
    OBJECT_CHANNELS,
    Parenting,
    parent_matrix,
    put_back,
    set_saved,
    to_blender,
)
from ..frames import read_frames, timeline_range
from . import fbx_bones
from .fbx_plan import Plan, plan_copy, worse_reason
from .fbx_pole import Turn, fbx_global, link_beside, off_pole, turn, unturn
from .gltf_hook import THROUGH_JOINTS, engine_ignored
from .scope import deform_kept, exported_objects
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


class _Edit(NamedTuple):
    obj: object
    helper: object
    parenting: Parenting
    rotation_mode: str
    action: object
    had_anim: bool
    channels: tuple  #: the values of :data:`_CHANNELS` (the delta transforms included) before
    changed: list  #: what :func:`..edits.editing.set_saved` changed (constraints, drivers, blending)


#: The transform channels an edit changes and puts back: the keyed ones, the other
#: rotation modes, and the delta transforms (zeroed for the export: Blender applies them
#: on top of the keys).
_CHANNELS = OBJECT_CHANNELS
_NO_DELTA = {
    "delta_location": (0.0, 0.0, 0.0),
    "delta_rotation_euler": (0.0, 0.0, 0.0),
    "delta_rotation_quaternion": (1.0, 0.0, 0.0, 0.0),
    "delta_scale": (1.0, 1.0, 1.0),
}


def _key(obj, frames, trs: core.TRS) -> None:
    """Key ``obj``'s location, quaternion and scale at ``frames`` (LINEAR): one key per
    channel creates the curves, then they are filled in bulk."""
    obj.rotation_mode = "QUATERNION"
    values = {"location": trs.translation, "rotation_quaternion": trs.rotation, "scale": trs.scale}
    for path, value in values.items():
        setattr(obj, path, value[0].tolist())
        obj.keyframe_insert(path, frame=frames[0])
    fbx_bones.fill_keys(obj.animation_data.action, values, list(frames))


def _apply(
    scene, series, frames, split: list[int], outer: core.TRS, inner: core.TRS, selected: bool = False
) -> list[_Edit]:
    """A helper empty above each object of ``split`` (columns of ``outer`` and ``inner
    (T, K)``), both keyed; ``selected``: the helpers selected (an export of the
    selection writes them). Undone by :func:`_undo`."""
    edits: list[_Edit] = []
    try:
        for k, i in enumerate(split):
            obj = bpy.data.objects[series.keys[i][0]]
            p = int(series.parents[i])
            parent_world = series.world[series.frames.tolist().index(scene.frame_current), p] if p >= 0 else np.eye(4)
            helper = bpy.data.objects.new(f"{obj.name} (shear helper)", None)
            had = obj.animation_data is not None
            channels = tuple(tuple(getattr(obj, name)) for name in _CHANNELS)
            action = had and obj.animation_data.action
            changed: list = []
            edits.append(_Edit(obj, helper, Parenting.save(obj), obj.rotation_mode, action, had, channels, changed))
            _mute_transform(obj, changed)
            link_beside(scene, obj, helper)
            if selected:
                helper.select_set(True)
            if obj.parent is not None:
                helper.matrix_parent_inverse = to_blender(np.linalg.inv(parent_matrix(obj)) @ parent_world)
            obj.parent, obj.parent_type = helper, "OBJECT"
            obj.matrix_parent_inverse = to_blender(np.eye(4))
            if obj.animation_data:
                obj.animation_data.action = None
                # the keys replace whatever the NLA tracks below give (an active action
                # blended Add at half influence over a track put the object 3 units off)
                set_saved(changed, obj.animation_data, "action_blend_type", "REPLACE")
                set_saved(changed, obj.animation_data, "action_influence", 1.0)
            _key(helper, frames, outer[:, k])
            _key(obj, frames, inner[:, k])
    except BaseException:
        _undo(edits)
        raise
    return edits


def _mute_transform(obj, changed: list) -> None:
    """For the length of the export: mute ``obj``'s constraints and the drivers of its
    transform channels and constraints, and zero its delta transforms, so that its keys (Blender's
    evaluated result, constraints and drivers included) are its transform; what was
    changed is recorded in ``changed`` (:func:`..edits.editing.set_saved`)."""
    for con in obj.constraints:
        set_saved(changed, con, "mute", True)
    if obj.animation_data is not None:
        for fc in obj.animation_data.drivers:  # a driven mute or influence would switch a constraint back on
            if fc.data_path in _CHANNELS or fc.data_path.startswith("constraints["):
                set_saved(changed, fc, "mute", True)
    for name, value in _NO_DELTA.items():
        setattr(obj, name, value)


def _undo(edits: list[_Edit]) -> None:
    for e in reversed(edits):
        obj = e.obj
        new_action = obj.animation_data.action if obj.animation_data else None  # type: ignore[attr-defined]
        if obj.animation_data:  # type: ignore[attr-defined]
            obj.animation_data.action = e.action or None  # type: ignore[attr-defined]
            if not e.had_anim:
                obj.animation_data_clear()  # type: ignore[attr-defined]
        if new_action is not None and new_action != e.action:
            bpy.data.actions.remove(new_action)
        e.parenting.restore()
        put_back(e.changed)
        obj.rotation_mode = e.rotation_mode  # type: ignore[attr-defined]
        for name, value in zip(_CHANNELS, e.channels, strict=True):
            setattr(obj, name, value)
        helper_action = e.helper.animation_data.action if e.helper.animation_data else None  # type: ignore[attr-defined]
        bpy.data.objects.remove(e.helper)
        if helper_action is not None:
            bpy.data.actions.remove(helper_action)
    if edits:
        bpy.context.view_layer.update()


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


def turns_of(keys) -> dict[int, np.ndarray]:
    """Scene node index -> the turn Blender's FBX exporter puts after the node's own
    rotation, for the cameras and lights among ``keys`` (``(object, bone)``)."""
    objects = bpy.data.objects
    out: dict[int, np.ndarray] = {}
    for i, (name, bone) in enumerate(keys):
        obj = None if bone else objects.get(name)
        if obj is not None and obj.type in ("CAMERA", "LIGHT"):
            out[i] = CAMERA_TURN if obj.type == "CAMERA" else LIGHT_TURN
    return out


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
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    frames = frame_range.frames() if frame_range else [scene.frame_current]
    if scene.frame_current not in frames:
        frames_read = sorted({*frames, scene.frame_current})
    else:
        frames_read = frames
    objects = None if choice.objects == "ALL" else exported_objects(scene, choice)
    in_file = None if objects is None else {obj.name for obj in objects}
    meshes = [obj for obj in deformed_meshes(scene) if in_file is None or obj.name in in_file]
    vertices = EvaluatedVertices(meshes, len(frames_read))
    series = read_frames(scene, frames_read, objects=objects, each_frame=vertices.read if vertices.objects else None)
    keep = [frames_read.index(f) for f in frames]
    world = series.world
    parent_world, inverse, _singular = parent_inverses(world, series.parents)
    local = (inverse @ world)[keep]
    extent = subtree_extent(world[keep], series.parents)
    needs = needs_split(local, parent_world[keep], thresholds, extent, check_scale(world[keep]))
    skinned, not_checked = engine_ignored(scene)
    split: list[int] = []
    not_corrected: list[tuple[str, str]] = []
    bones_in_file = deform_kept(series.keys) if choice.deform_only else None
    for i in np.flatnonzero(needs):
        obj_name, bone = series.keys[i]
        label = node_label(obj_name, bone)
        obj = bpy.data.objects.get(obj_name)
        if bone and bones_in_file is not None and (obj_name, bone) not in bones_in_file:
            continue  # not in the file (deform bones only)
        if bone:
            why = fbx_bones.editable(obj, bpy.context.view_layer) if obj is not None else "missing"
            if why:
                not_corrected.append((label, why))
            else:
                split.append(int(i))
        elif obj_name in skinned or (
            obj is not None and obj.parent_type in DEFORMING_PARENTS and obj.type in DEFORMABLE
        ):
            continue  # its node matrix does not place its vertices
        elif obj is None or obj.library is not None or obj.override_library is not None:
            not_corrected.append((label, "linked data: left as it is"))
        elif obj.rigid_body is not None:
            not_corrected.append((label, "rigid body (the simulation places it): left as it is"))
        else:
            split.append(int(i))
    global_turn = fbx_global(axes)
    pole, pole_turn = (
        off_pole(series, world[keep], local, needs, skinned, global_turn) if pole_helpers else ([], np.zeros((0, 3, 3)))
    )
    options = {**choice.fbx(), **axes.fbx()}
    selected = choice.objects == "SELECTED"
    seconds["prepare"] = time.perf_counter() - t0

    skip = {i for i, (obj, bone) in enumerate(series.keys) if not bone and obj in skinned}
    times = np.asarray(frames, dtype=np.float64) / series.fps
    turns = turns_of(series.keys)
    scale = check_scale(world[keep])
    checked: dict = {}

    def attempt(tmp: str, plan: Plan, reader) -> None:
        """The copy made for ``plan``, exported to ``tmp`` and read back (into ``checked``)."""
        t1 = time.perf_counter()
        edits = _apply(scene, series, frames, plan.objects, plan.outer_objects, plan.inner_objects, selected)
        turned_edits: list[Turn] = []
        try:
            turned_edits = turn(scene, [bpy.data.objects[series.keys[i][0]] for i in pole], pole_turn, selected)
            bone_edits = fbx_bones.apply(scene, plan.bones, frames, plan.outer, plan.inner) if plan.bones else None
            try:
                t2 = time.perf_counter()
                export_fbx(tmp, frame_range, options)
                exported = time.perf_counter() - t2
                seconds["blender_export"] = seconds.get("blender_export", 0.0) + exported
                if reader is not None:  # ufbx reads while the edits are undone
                    reader.request(tmp, times, skinned=list(vertices.objects), unit_meters=unit_meters(scene))
            finally:
                if bone_edits is not None:
                    fbx_bones.restore(bone_edits)
        finally:
            unturn(turned_edits, update=not edits)  # _undo updates the view layer when it undoes anything
            _undo(edits)
        t3 = time.perf_counter()
        seconds["edits"] = seconds.get("edits", 0.0) + t3 - t1 - exported
        try:  # a reader failure is raised once the file is written, as before
            checked["read"] = reader.result() if reader is not None else None
        except InspectorError as exc:
            checked["failed"] = exc
        seconds["check"] = seconds.get("check", 0.0) + time.perf_counter() - t3

    def write(tmp: str) -> None:
        plan = plan_copy(series, local, split, not_corrected, global_turn)
        attempt(tmp, plan, reader)
        checked["plan"] = plan
        read = checked.get("read")
        if read is None or not plan.split or "failed" in checked:
            return
        error = compare(read, series.keys, world[keep], skip, turns)
        if within_tolerance(error.relative):
            return
        plain = _plain_error(tmp, frame_range, times, series.keys, world[keep], skip, turns, options)
        checked["plain"] = plain
        worse = worse_nodes(error.per_node, plain.per_node, CHECK_TOLERANCE * scale) if plain is not None else {}
        index = {node_label(*key): i for i, key in enumerate(series.keys)}
        blamed = helpers_to_drop([index[w] for w in worse], plan.split, plan.readers, series.parents)
        drop = with_chain_owners(blamed, plan.split, plan.chains)
        if not drop:
            return
        reason = worse_reason(worse)
        owner = "its IK poses a bone left as Blender writes it (its helper's keys would replace that IK): left so too"
        listed = [(node_label(*series.keys[i]), reason if i in blamed else owner) for i in drop]
        kept = [i for i in plan.split if i not in drop]
        again = plan_copy(series, local, kept, not_corrected + listed, global_turn)
        second = start_reader()
        try:
            attempt(tmp, again, second)
        finally:
            if second is not None:
                second.close()
        checked["plan"] = again

    write_with(out, write)
    if "failed" in checked:
        raise checked["failed"]
    t4 = time.perf_counter()
    read, plan = checked.get("read"), checked["plan"]
    error = compare(read, series.keys, world[keep], skip, turns) if read is not None else None
    skins = check_fbx(read.skinned, vertices, frames, keep) if read is not None else None
    plain = checked.get("plain")
    still = worse_nodes(error.per_node, plain.per_node, CHECK_TOLERANCE * scale) if plain and error is not None else {}
    seconds["check"] += time.perf_counter() - t4
    labels = [node_label(*series.keys[i]) for i in plan.split]
    pole_labels = [node_label(*series.keys[i]) for i in pole]
    deformed = sorted({series.keys[i][0] for i in skip} - set(skins.meshes if skins is not None else ()))
    not_checked += [(name, THROUGH_JOINTS) for name in deformed]
    return FbxResult(error, frames, labels, pole_labels, plan.not_corrected, not_checked, seconds, skins, plain, still)


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
