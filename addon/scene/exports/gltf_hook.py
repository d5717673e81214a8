""" "Keep shear exactly" for a file Blender's glTF exporter has just written with the
user's own settings (File > Export > glTF 2.0): the same animated helpers and read-back
check as ``export --target gltf`` (:mod:`..model.exports.animated_gltf`), applied to
whatever the dialog exported.

What the file holds decides what is compared: a file without animation is the pose
the exporter evaluated (the current frame, or frame 0 when "Use Current Frame" is off:
the exporter is still on that frame when this runs); an animated file is compared at
every key time of its channels (``frame = time * fps``). Nodes the user's settings left
out (selected only, deform bones only) are simply not in the file. Joints exported in
their rest position ("Use Rest Position Armature") are not compared.

The animation mode decides what each glTF animation is. Scene: the timeline (one
animation, or one per object: all compared together). Actions, Active Actions and NLA
Tracks: each animation is an action (or track) played alone; Blender is evaluated that
way per animation (:mod:`.gltf_modes`), each animation corrected with its own split
and checked alone (:mod:`...model.exports.gltf_takes`); the result lists the error of
each animation by name. Broadcast (every action on every object) is left as Blender
wrote it, and the result says so by name.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from ...model.errors import ExportError
from ...model.exports.animated_gltf import (
    CHECK_TOLERANCE,
    FrameError,
    add_animated_helpers,
    animated_error,
    within_tolerance,
)
from ...model.exports.gltf_animation import key_times, world_matrices_at
from ...model.exports.gltf_check import node_index
from ...model.exports.gltf_file import Gltf
from ...model.exports.gltf_takes import add_take_helpers, take_errors, worst
from ...model.exports.verdicts.prune import remove_unused
from ...model.exports.verdicts.skinned import SkinCheck
from ...model.thresholds import DEFAULT, Thresholds
from ..frames import read_frames
from ..gltf_export import gltf_conversion
from .gltf_modes import PER_ANIMATION, AnimationState, evaluate_takes, saved_animation
from .skinned import EvaluatedVertices, check_gltf, deformed_meshes

#: Why a mesh deformed by an armature is not compared as a node (its vertices follow the
#: joints; they are compared themselves where the check can: :mod:`.skinned`).
THROUGH_JOINTS = "deformed by an armature: checked through its joints"
#: Why the objects a collection instance instances are not compared (the instancer's
#: own node is): listed by the instancer's name.
INSTANCED = "a collection instance: written as Blender's exporter writes them, neither corrected nor checked"


def engine_ignored(scene) -> tuple[set[str], list[tuple[str, str]]]:
    """Objects whose node matrix engines ignore (meshes deformed by an armature: their
    vertices follow the joints), and collection instances whose instanced objects the
    check cannot map, as ``(names, [(name, why)])``."""
    skinned = set()
    listed = []
    for obj in scene.objects:
        deformed = obj.parent_type == "ARMATURE" and obj.parent is not None
        deformed |= any(m.type == "ARMATURE" and m.object is not None for m in getattr(obj, "modifiers", ()))
        if deformed:
            skinned.add(obj.name)
        if obj.instance_type == "COLLECTION" and obj.instance_collection is not None:
            listed.append((obj.name, INSTANCED))
    return skinned, listed


class HookSettings(NamedTuple):
    """The exporter's settings that matter here (from its ``export_settings``)."""

    filepath: str
    y_up: bool = True
    animations: bool = False
    animation_mode: str = "ACTIONS"
    slide_to_zero: bool = False
    rest_position_armature: bool = True
    reset_pose_bones: bool = True
    #: the frame of the file's static pose (None: the scene's frame when the file is checked)
    static_frame: int | None = None
    #: the scene's animation state when the export began (None: as the file is checked)
    before: AnimationState | None = None

    @classmethod
    def from_exporter(
        cls, settings: dict, start_frame: int | None = None, before: AnimationState | None = None
    ) -> HookSettings:
        """``start_frame``: the scene's frame when the export began (the exporter's
        sampling leaves the scene on another one; its static pose is that frame with
        "Use Current Frame", else frame 0). ``before``: the scene's animation state
        saved then (the per-animation modes leave properties no playing action keys
        where the last exported action put them: an object with its NLA off keeps
        another action's values; the file's static pose has the values from before)."""
        static = None if start_frame is None else (start_frame if settings.get("gltf_current_frame") else 0)
        return cls(
            filepath=settings["gltf_filepath"],
            y_up=bool(settings.get("gltf_yup", True)),
            animations=bool(settings.get("gltf_animations", False)),
            animation_mode=str(settings.get("gltf_animation_mode", "ACTIONS")),
            slide_to_zero=bool(settings.get("gltf_anim_slide_to_zero", False)),
            rest_position_armature=bool(settings.get("gltf_rest_position_armature", True)),
            reset_pose_bones=bool(settings.get("gltf_export_reset_pose_bones", True)),
            static_frame=static,
            before=before,
        )


class HookResult(NamedTuple):
    corrected: bool  #: False: the file was left as Blender wrote it (``why`` says why)
    why: str
    helpers: list  #: labels of the nodes given a helper
    error: FrameError | None  #: the file read back against Blender at every key
    frames: list
    keys: list = []  #: the scene's nodes as read (``(object, bone)``)
    skip: frozenset = frozenset()  #: scene node indices not compared as nodes
    animations: dict = {}  #: per-animation modes: animation name -> its FrameError
    unconverted: frozenset = frozenset()  #: cameras and lights (:func:`unconverted_objects`)
    parents: Any = None  #: (N,) the scene nodes' parents, -1: none (how file nodes are matched)
    skins: SkinCheck | None = None  #: the skinned meshes' vertices (None: not checked, ``skins_why``)
    skins_why: str = ""

    def message(self) -> str:
        if not self.corrected:
            return f"Keep shear exactly: file left as Blender wrote it ({self.why})"
        err = self.error
        assert err is not None
        verdict = "exact" if within_tolerance(err.relative) else "NOT exact"
        text = (
            f"Keep shear exactly: {len(self.helpers)} helper node(s); read back at {len(self.frames)} frame(s), "
            f"relative error {err.relative:.2e} ({verdict}, tolerance {CHECK_TOLERANCE:g})"
        )
        if self.animations:
            each = ", ".join(
                f"'{name}' {e.relative:.2e}{'' if within_tolerance(e.relative) else ' NOT exact'}"
                for name, e in self.animations.items()
            )
            text += f"; each animation alone: {each}"
        if self.skins is not None and self.skins.summary():
            text += f"; {self.skins.summary()}"
        return text


def keep_shear_in_file(
    scene,
    settings: HookSettings,
    thresholds: Thresholds = DEFAULT,
    wanted: list[int] | None = None,
    objects=None,
) -> HookResult:
    """Add the animated helpers to the .glb the exporter wrote and check it (in place:
    the exporter's own output file, rewritten whole through a temporary file).
    ``wanted``: the frames the file must match (default: what the file holds, see the
    module docstring); ``objects``: the objects to read (default all of the scene's; the
    file's other nodes are left as they are)."""
    path = settings.filepath
    if not path.lower().endswith((".glb", ".gltf")):
        return HookResult(False, "not a .glb or .gltf file", [], None, [])
    gltf = Gltf.load(path)
    fps = scene.render.fps / scene.render.fps_base
    times = key_times(gltf) if wanted is None else np.zeros(0)
    frames: np.ndarray
    if wanted is not None:
        frames = np.asarray(wanted, dtype=np.int64)
        times = frames / fps
    elif settings.animations and len(times):
        if settings.animation_mode == "BROADCAST":
            return HookResult(
                False, "animation mode BROADCAST (every action on every object) is not corrected", [], None, []
            )
        if settings.slide_to_zero:
            return HookResult(
                False, "'Set all glTF Animation starting at 0' moves the keys off the timeline", [], None, []
            )
        if settings.animation_mode in PER_ANIMATION:
            return _per_animation(scene, gltf, settings, fps, thresholds)
        frames_f = times * fps
        frames = np.round(frames_f).astype(np.int64)
        if np.abs(frames_f - frames).max() > 1e-3:
            return HookResult(False, "keys between frames", [], None, [])
    else:
        frames = np.array([scene.frame_current], dtype=np.int64)
        times = frames / fps
    rest_pose = settings.rest_position_armature and not settings.animations
    meshes = [] if rest_pose else deformed_meshes(scene)
    if objects is not None:  # the meshes the file holds
        names = {obj.name for obj in objects}
        meshes = [obj for obj in meshes if obj.name in names]
    vertices = EvaluatedVertices(meshes, len(frames))
    vertices.read_static(scene, scene.frame_current if settings.static_frame is None else settings.static_frame)
    each_frame = vertices.read if vertices.objects else None
    series = read_frames(scene, [int(f) for f in frames], objects=objects, each_frame=each_frame)
    conversion = gltf_conversion(settings.y_up)
    skip = _skipped(scene, series.keys, settings)
    unconverted, parents = unconverted_objects(scene), series.parents
    try:
        helpers = add_animated_helpers(
            gltf,
            series.keys,
            series.world,
            times,
            conversion,
            skip=skip,
            thresholds=thresholds,
            unconverted=unconverted,
            parents=parents,
        )
    except ExportError as exc:
        return HookResult(False, str(exc), [], None, [])
    skins: dict = {}

    def check(done: Gltf) -> FrameError:
        worlds = world_matrices_at(done, times)  # the file's nodes as an engine composes them, once
        index = node_index(done, series.keys, series.parents)
        meshes = {series.keys[i][0]: j for i, j in index.items() if series.keys[i][0] in vertices.objects}
        skins["check"] = check_gltf(done, vertices, frames, times, conversion, file_worlds=worlds, nodes=meshes)
        return animated_error(
            done,
            series.keys,
            series.world,
            times,
            conversion,
            skip,
            unconverted=unconverted,
            parents=parents,
            file_worlds=worlds,
        )

    error = _write_checked(gltf, path, check)
    return HookResult(
        True,
        "",
        helpers,
        error,
        [int(f) for f in frames],
        series.keys,
        frozenset(skip),
        unconverted=unconverted,
        parents=parents,
        skins=skins["check"],
        skins_why="the file holds the armatures' rest pose" if rest_pose else "",
    )


def unconverted_objects(scene) -> frozenset[str]:
    """The objects whose glTF node the exporter does not convert like the others'
    (:func:`...model.exports.animated_gltf.node_frames`): cameras and lights."""
    return frozenset(obj.name for obj in scene.objects if obj.type in ("CAMERA", "LIGHT"))


def _skipped(scene, keys, settings: HookSettings) -> set[int]:
    """Scene node indices not compared as nodes (armature-deformed meshes; joints in
    their rest position in a static file)."""
    skinned, _listed = engine_ignored(scene)
    skip = {i for i, (obj, bone) in enumerate(keys) if not bone and obj in skinned}
    if settings.rest_position_armature and not settings.animations:
        skip |= {i for i, (_obj, bone) in enumerate(keys) if bone}
    return skip


def _per_animation(scene, gltf: Gltf, settings: HookSettings, fps: float, thresholds: Thresholds) -> HookResult:
    """Actions, Active Actions, NLA Tracks: each animation corrected and checked alone."""
    frame = scene.frame_current if settings.static_frame is None else settings.static_frame
    try:
        static, takes = _evaluate(scene, gltf, settings, frame)
    except ExportError as exc:
        return HookResult(False, f"animation mode {settings.animation_mode}: {exc}", [], None, [])
    keys = static.keys
    conversion = gltf_conversion(settings.y_up)
    skip = _skipped(scene, keys, settings)
    unconverted, parents = unconverted_objects(scene), static.parents
    if settings.rest_position_armature:  # joints of an armature a take does not animate: in rest position
        takes = [
            take._replace(held=frozenset(i for i, (obj, bone) in enumerate(keys) if bone and obj not in take.objects))
            for take in takes
        ]
    try:
        helpers = add_take_helpers(
            gltf,
            keys,
            static.world[0],
            takes,
            conversion,
            skip=skip,
            thresholds=thresholds,
            unconverted=unconverted,
            parents=parents,
        )
    except ExportError as exc:
        return HookResult(False, str(exc), [], None, [])
    errors: dict = {}

    def check(done: Gltf) -> FrameError | None:
        errors.update(take_errors(done, keys, takes, conversion, skip, unconverted=unconverted, parents=parents))
        return worst(errors)

    error = _write_checked(gltf, settings.filepath, check)
    frames = sorted({int(round(float(t) * fps)) for take in takes for t in take.times})
    return HookResult(
        True,
        "",
        helpers,
        error,
        frames,
        keys,
        frozenset(skip),
        errors,
        unconverted=unconverted,
        parents=parents,
        skins_why="each animation played alone is checked by its joints only",
    )


def _evaluate(scene, gltf: Gltf, settings: HookSettings, frame: int):
    """The file's static pose (Blender at ``frame``) and its takes, evaluated from the
    scene as the export began (``settings.before``, when given); the scene is left as
    the exporter left it."""
    with saved_animation(scene):
        if settings.before is not None:
            settings.before.restore()
        static = read_frames(scene, [frame])
        takes = evaluate_takes(scene, gltf, static.keys, settings.animation_mode, frame, settings.reset_pose_bones)
    return static, takes


def _write_checked(gltf: Gltf, path: str, check):
    """``gltf`` written beside the exporter's file (its unused parts removed:
    :func:`...model.exports.verdicts.prune.remove_unused`), ``check(read back)`` run on it, then
    renamed over the original; returns what ``check`` returned. A separate .bin (.gltf
    separate) is renamed first: the correction only appends to the buffer, so the old
    .gltf still reads the new .bin if the second rename never happens."""
    tmp = path + ".partial" + os.path.splitext(path)[1]
    separate = gltf.buffer_file()
    bin_path = os.path.join(os.path.dirname(path), separate) if separate else None
    tmp_bin = bin_path + ".partial" if bin_path else None
    try:
        remove_unused(gltf)  # the samplers of the channels the helpers replaced, and what only they held
        gltf.save(tmp, tmp_bin)
        result = check(Gltf.load(tmp, tmp_bin))
        if bin_path and tmp_bin:
            os.replace(tmp_bin, bin_path)
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp_bin):
            if leftover and os.path.exists(leftover):
                os.remove(leftover)
    return result
