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
"""

from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

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
from ...model.exports.animated_split import continuous_split
from ...model.exports.euler_pole import CAMERA_TURN, FBX_GLOBAL, LIGHT_TURN, pole_turns, turned
from ...model.exports.fbx_check import FbxError, compare, fbx_unit_meters, prepare_next, read_fbx, start_reader
from ...model.exports.plain_compare import helpers_to_drop, with_chain_owners, worse_nodes
from ...model.exports.skinned_check import SkinCheck
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
    as_np,
    parent_matrix,
    put_back,
    set_saved,
    to_blender,
)
from ..frames import read_frames, timeline_range
from . import fbx_bones
from .gltf_hook import THROUGH_JOINTS, engine_ignored
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


def _apply(scene, series, frames, split: list[int], outer: core.TRS, inner: core.TRS) -> list[_Edit]:
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
            _link_beside(scene, obj, helper)
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
    transform channels, and zero its delta transforms, so that its keys (Blender's
    evaluated result, constraints and drivers included) are its transform; what was
    changed is recorded in ``changed`` (:func:`..edits.editing.set_saved`)."""
    for con in obj.constraints:
        set_saved(changed, con, "mute", True)
    if obj.animation_data is not None:
        for fc in obj.animation_data.drivers:
            if fc.data_path in _CHANNELS:
                set_saved(changed, fc, "mute", True)
    for name, value in _NO_DELTA.items():
        setattr(obj, name, value)


def _link_beside(scene, obj, helper) -> None:
    """Link ``helper`` into ``obj``'s collections (the scene's when it has none) and give
    it ``obj``'s parent, parent type and parent bone: the place a helper above ``obj``
    takes."""
    for coll in list(obj.users_collection) or [scene.collection]:
        coll.objects.link(helper)
    helper.parent, helper.parent_type = obj.parent, obj.parent_type
    if obj.parent_type == "BONE":
        helper.parent_bone = obj.parent_bone


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


def export_fbx(filepath: str, frame_range: FrameRange | None) -> None:
    """Blender's FBX exporter; with ``frame_range`` the scene's timeline baked at every
    frame of it (no simplification), else the current frame's pose; a range of one
    frame is that frame's pose. The scene's range and frame are restored."""
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
        )


def write_fbx(
    scene,
    out: str,
    frame_range: FrameRange | None,
    thresholds: Thresholds = DEFAULT,
    *,
    again: bool = True,
    pole_helpers: bool = True,
) -> FbxResult:
    """Export ``scene`` to the .fbx ``out`` through the export-ready copy (see the
    module docstring) and read it back. Written whole or not at all. ``again``: start
    the ufbx reader of the next export now (a session that exports again; the command
    line, which exports once, says False). ``pole_helpers`` False: objects that need no
    split are written as Blender writes them, also near the Euler pole (the file keeps
    the scene's hierarchy there; the read-back shows what that costs)."""
    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    reader = start_reader()  # its start-up overlaps the frames read and the export
    try:
        return _write_fbx(scene, out, frame_range, thresholds, reader, pole_helpers)
    finally:
        if reader is not None:
            reader.close()
        if again:
            prepare_next()


def _write_fbx(
    scene, out: str, frame_range: FrameRange | None, thresholds: Thresholds, reader, pole_helpers: bool
) -> FbxResult:
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    frames = frame_range.frames() if frame_range else [scene.frame_current]
    if scene.frame_current not in frames:
        frames_read = sorted({*frames, scene.frame_current})
    else:
        frames_read = frames
    vertices = EvaluatedVertices(deformed_meshes(scene), len(frames_read))
    series = read_frames(scene, frames_read, each_frame=vertices.read if vertices.objects else None)
    keep = [frames_read.index(f) for f in frames]
    world = series.world
    parent_world, inverse, _singular = parent_inverses(world, series.parents)
    local = (inverse @ world)[keep]
    extent = subtree_extent(world[keep], series.parents)
    needs = needs_split(local, parent_world[keep], thresholds, extent, check_scale(world[keep]))
    skinned, not_checked = engine_ignored(scene)
    split: list[int] = []
    not_corrected: list[tuple[str, str]] = []
    for i in np.flatnonzero(needs):
        obj_name, bone = series.keys[i]
        label = node_label(obj_name, bone)
        obj = bpy.data.objects.get(obj_name)
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
    pole, pole_turn = (
        _off_pole(series, world[keep], local, needs, skinned) if pole_helpers else ([], np.zeros((0, 3, 3)))
    )
    seconds["prepare"] = time.perf_counter() - t0

    skip = {i for i, (obj, bone) in enumerate(series.keys) if not bone and obj in skinned}
    times = np.asarray(frames, dtype=np.float64) / series.fps
    turns = turns_of(series.keys)
    scale = check_scale(world[keep])
    checked: dict = {}

    def attempt(tmp: str, plan: _Plan, reader) -> None:
        """The copy made for ``plan``, exported to ``tmp`` and read back (into ``checked``)."""
        t1 = time.perf_counter()
        edits = _apply(scene, series, frames, plan.objects, plan.outer_objects, plan.inner_objects)
        turned_edits: list[_Turn] = []
        try:
            turned_edits = _turn(scene, [bpy.data.objects[series.keys[i][0]] for i in pole], pole_turn)
            bone_edits = fbx_bones.apply(scene, plan.bones, frames, plan.outer, plan.inner) if plan.bones else None
            try:
                t2 = time.perf_counter()
                export_fbx(tmp, frame_range)
                exported = time.perf_counter() - t2
                seconds["blender_export"] = seconds.get("blender_export", 0.0) + exported
                if reader is not None:  # ufbx reads while the edits are undone
                    reader.request(tmp, times, skinned=list(vertices.objects), unit_meters=unit_meters(scene))
            finally:
                if bone_edits is not None:
                    fbx_bones.restore(bone_edits)
        finally:
            _unturn(turned_edits, update=not edits)  # _undo updates the view layer when it undoes anything
            _undo(edits)
        t3 = time.perf_counter()
        seconds["edits"] = seconds.get("edits", 0.0) + t3 - t1 - exported
        try:  # a reader failure is raised once the file is written, as before
            checked["read"] = reader.result() if reader is not None else None
        except InspectorError as exc:
            checked["failed"] = exc
        seconds["check"] = seconds.get("check", 0.0) + time.perf_counter() - t3

    def write(tmp: str) -> None:
        plan = _plan(series, local, split, not_corrected)
        attempt(tmp, plan, reader)
        checked["plan"] = plan
        read = checked.get("read")
        if read is None or not plan.split or "failed" in checked:
            return
        error = compare(read, series.keys, world[keep], skip, turns)
        if within_tolerance(error.relative):
            return
        plain = _plain_error(tmp, frame_range, times, series.keys, world[keep], skip, turns)
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
        again = _plan(series, local, kept, not_corrected + listed)
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


def worse_reason(worse: dict) -> str:
    """Why a helper was left out: the node it made worse than Blender's plain export."""
    label, (ours, theirs) = max(worse.items(), key=lambda item: np.nan_to_num(item[1][0], nan=np.inf))
    return (
        f"its helper put '{label}' {ours:.1e} units off where Blender's plain export is {theirs:.1e}: "
        "written as Blender writes it"
    )


class _Plan(NamedTuple):
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


def _plan(series, local: np.ndarray, split: list[int], not_corrected: list) -> _Plan:
    """The copy's edits for the nodes ``split`` (scene indices) of ``series``, whose
    local matrices ``(T, N, 4, 4)`` at the exported frames are ``local``."""
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
    for label, target, why in _object_readers(bpy.context.scene, {keys[i][0] for i in split if not keys[i][1]}):
        listed.append((label, why))
        if label in index:
            readers.setdefault(index[target], []).append(index[label])
    outer, inner = continuous_split(local[:, split], small_inner=True)  # away from Euler gimbal lock
    columns = [k for k, i in enumerate(split) if not keys[i][1]]
    objects = [split[k] for k in columns]
    before, after = _written_turns([bpy.data.objects[keys[i][0]] for i in objects])
    outer_objects, inner_objects = turned(outer[:, columns], inner[:, columns], before, after)
    return _Plan(list(split), bones, outer, inner, objects, outer_objects, inner_objects, readers, chains, listed)


def _plain_error(tmp: str, frame_range, times, keys, world, skip, turns) -> FbxError | None:
    """Blender's plain export of the scene (beside ``tmp``, removed after), read back
    and compared as the corrected file is; None without ufbx."""
    plain = tmp + ".plain.fbx"
    try:
        export_fbx(plain, frame_range)
        read = read_fbx(plain, times, unit_meters=unit_meters(bpy.context.scene))
    finally:
        if os.path.exists(plain):
            os.remove(plain)
    return None if read is None else compare(read, keys, world, skip, turns)


def _object_readers(scene, split: set[str]) -> list[tuple[str, str, str]]:
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


#: Object types Blender's FBX exporter writes by default (its 'OTHER': curves,
#: surfaces, text, metaballs); a parent of another type is not in the file.
EXPORTED_TYPES = frozenset({"EMPTY", "CAMERA", "LIGHT", "ARMATURE", "MESH", "CURVE", "SURFACE", "FONT", "META"})


def _parent_in_file(obj, in_view: set) -> bool:
    """Whether Blender's FBX exporter writes ``obj`` under its parent (else in world
    space): a parent it exports, by object or bone."""
    parent = obj.parent
    return (
        parent is not None
        and obj.parent_type in ("OBJECT", "BONE")
        and parent.type in EXPORTED_TYPES
        and parent.name in in_view
    )


def _written_turns(objects: list) -> tuple[np.ndarray, np.ndarray]:
    """The constant rotations ``(K, 3, 3)`` Blender's FBX exporter applies before and
    after the local rotation of each of ``objects`` and of a helper put above it: the
    file's axes on objects without a parent (identity for those whose parent the file
    lacks: :func:`_off_pole` leaves them out), the light and camera turns."""
    before = np.empty((len(objects), 3, 3))
    after = np.empty((len(objects), 3, 3))
    for k, obj in enumerate(objects):
        before[k] = FBX_GLOBAL if obj.parent is None else np.eye(3)
        after[k] = LIGHT_TURN if obj.type == "LIGHT" else CAMERA_TURN if obj.type == "CAMERA" else np.eye(3)
    return before, after


def _off_pole(series, world, local: np.ndarray, needs: np.ndarray, skinned) -> tuple[list[int], np.ndarray]:
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
        if obj.parent is not None and not _parent_in_file(obj, in_view):
            continue
        if obj.parent_type in DEFORMING_PARENTS and obj.type in DEFORMABLE:
            continue
        if obj_name in in_linked or obj_name in instanced:
            continue
        if obj.parent is not None and obj.parent.instance_type in ("VERTS", "FACES"):
            continue  # instanced by its parent: the helper would be instanced too
        candidates.append(int(i))
        objects.append(obj)
    before, after = _written_turns(objects)
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


class _Turn(NamedTuple):
    obj: Any
    helper: Any
    parenting: Parenting


def _turn(scene, objects: list, turns: np.ndarray) -> list[_Turn]:
    """Put a still empty turned by ``turns[k]`` (``C``) between each of ``objects`` and
    its parent (the empty takes its parenting); the object's parent inverse becomes
    ``C.T @`` it, so its world matrix and its own channels and animation stay. Undone
    by :func:`_unturn`, also on failure."""
    edits: list[_Turn] = []
    try:
        for obj, c in zip(objects, turns, strict=True):
            helper = bpy.data.objects.new(f"{obj.name} (Euler pole helper)", None)
            edits.append(_Turn(obj, helper, Parenting.save(obj)))
            _link_beside(scene, obj, helper)  # (vertex parents are left out by _off_pole)
            helper.rotation_mode = "QUATERNION"
            helper.rotation_quaternion = core.matrix_to_quat(c).tolist()
            inverse = np.eye(4)
            inverse[:3, :3] = c.T
            mpi = inverse @ as_np(obj.matrix_parent_inverse)
            obj.parent, obj.parent_type = helper, "OBJECT"
            obj.matrix_parent_inverse = to_blender(mpi)
    except BaseException:  # (no update here: the exporter evaluates the scene first)
        _unturn(edits)
        raise
    return edits


def _unturn(edits: list[_Turn], update: bool = True) -> None:
    """Undo :func:`_turn`; ``update``: then update the view layer (False when the caller
    updates it anyway)."""
    for e in reversed(edits):
        e.parenting.restore()
    if edits:  # one pass over the file's users for all (objects.remove makes one each)
        bpy.data.batch_remove([e.helper for e in edits])
        if update:
            bpy.context.view_layer.update()
