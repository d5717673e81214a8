"""Animated glTF export exact at every frame: Blender's own glTF exporter (the scene's
timeline as one sampled animation over the asked frames), then helper nodes animated
with the continuous exact split above every node whose local matrix holds shear at some
frame, then the file read back as an engine composes it and compared with Blender at
every frame (and, as a measure, at the half frames between them).

The user's scene is not edited: no helper empties are inserted (the helpers live in the
file only), and the scene's frame range and current frame are put back afterwards.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import NamedTuple

import bpy
import numpy as np

from ...model.errors import ExportError, SceneDataError
from ...model.exports.animated_gltf import FrameError, animated_error
from ...model.exports.choices import EVERYTHING, ExportChoice
from ...model.exports.gltf_file import Gltf
from ...model.exports.verdicts.skinned import SkinCheck
from ...model.frames import FrameRange
from ...model.outputs import check_writable, write_with
from ...model.thresholds import DEFAULT, Thresholds
from ..blender_output import run_exporter
from ..frames import read_frames, timeline_range
from ..gltf_export import export_gltf, gltf_conversion
from .gltf_hook import THROUGH_JOINTS, HookSettings, engine_ignored, keep_shear_in_file
from .gltf_modes import PER_ANIMATION, AnimationState
from .scope import objects_read


def export_gltf_frames(
    filepath: str,
    frame_range: FrameRange,
    *,
    y_up: bool = True,
    animation_mode: str = "SCENE",
    all_influences: bool = False,
    choice: ExportChoice = EVERYTHING,
) -> None:
    """Blender's glTF exporter sampled at ``frame_range`` (keys at ``frame / fps``
    seconds, objects' rest transforms at the current frame). ``animation_mode``: the
    exporter's ``SCENE`` (the timeline as one animation), or ``ACTIONS``,
    ``ACTIVE_ACTIONS``, ``NLA_TRACKS`` (an animation per action or track, each sampled
    over its own frames limited to ``frame_range``). ``choice``: which objects and bones
    (the exporter's own options). ``all_influences``: every bone
    influence of a vertex (JOINTS_1, WEIGHTS_1, ...; the exporter keeps 4 by
    default). In ``SCENE`` mode a range of one
    frame gives no animation (the exporter leaves out one-key channels): the file is
    that frame's pose. The scene's range and frame are restored. A frame handler that
    removes or adds objects during the export is :class:`SceneDataError` naming them and
    the frame (the exporter's own failure says ``StructRNA ... has been removed``)."""
    scene = bpy.context.scene
    before = {o.session_uid: o.name for o in scene.objects}
    with timeline_range(scene, frame_range), _objects_kept(scene, before, "glTF"):
        if frame_range.start == frame_range.end and animation_mode == "SCENE":
            scene.frame_set(frame_range.start)  # the static pose the exporter writes is the frame it is on
        run_exporter(
            "glTF",
            bpy.ops.export_scene.gltf,
            filepath=filepath,
            export_format="GLB",
            export_yup=y_up,
            export_animations=True,
            export_animation_mode=animation_mode,
            export_anim_scene_split_object=False,
            export_force_sampling=True,
            export_frame_step=frame_range.step,
            export_frame_range=animation_mode != "SCENE",  # the actions' and tracks' ranges within the range
            export_anim_slide_to_zero=False,
            export_current_frame=True,
            export_rest_position_armature=False,
            export_apply=False,
            export_all_influences=all_influences,
            **choice.gltf(),
        )


@contextlib.contextmanager
def _objects_kept(scene, before: dict, label: str) -> Iterator[None]:
    """:class:`SceneDataError` naming the objects that left or joined ``scene`` during
    the block (``before``: session uid -> name when it began) and the frame the scene is
    on then, whether the exporter failed on them (its words: "StructRNA of type Object
    has been removed") or wrote a file without them."""
    try:
        yield
    except ExportError:
        _check_objects(scene, before, label, f" by frame {scene.frame_current}")  # where the exporter stopped
        raise
    _check_objects(scene, before, label, "")


def _check_objects(scene, before: dict, label: str, when: str) -> None:
    now = {o.session_uid: o.name for o in scene.objects}
    gone = [name for uid, name in before.items() if uid not in now]
    new = [name for uid, name in now.items() if uid not in before]
    if not gone and not new:
        return
    what = "; ".join(
        f"{', '.join(repr(n) for n in names)} {verb}" for names, verb in ((gone, "removed"), (new, "added")) if names
    )
    raise SceneDataError(
        f"the scene's objects change during the {label} export ({what}{when}; a frame handler "
        "script?): a range needs the same nodes"
    )


class _Subframes:
    """A scene seen through :class:`.frames.FrameReader` with frame numbers that are
    indices into ``times`` (fractional frames): ``frame_set(k)`` goes to ``times[k]``.
    The reader's restore goes back to the real frame it started on."""

    def __init__(self, scene, times):
        self._scene = scene
        self._times = [float(t) for t in times]
        self._start = (scene.frame_current, scene.frame_subframe)
        self.frame_current, self.frame_subframe = -1, 0.0

    def frame_set(self, k, subframe=0.0):
        if k < 0:
            self._scene.frame_set(self._start[0], subframe=self._start[1])
            return
        t = self._times[k]
        self._scene.frame_set(int(np.floor(t)), subframe=float(t - np.floor(t)))

    def __getattr__(self, name):
        return getattr(self._scene, name)


def read_subframes(scene, times, objects=None) -> np.ndarray:
    """Blender's world matrices at fractional frames ``times (M,)``: ``(M, N, 4, 4)``
    (the nodes of :func:`.frames.read_frames` of ``objects``, default all). The scene
    ends on its frame."""
    objects = scene.objects if objects is None else objects
    return read_frames(_Subframes(scene, times), list(range(len(times))), objects=objects).world


class AnimatedResult(NamedTuple):
    error: FrameError  #: the file against Blender at every exported frame
    frames: list  #: the exported frames
    helpers: list  #: labels of the nodes that got a helper (animated when the file is)
    half_frame: FrameError | None  #: the same comparison at the half frames (engine interpolation)
    not_checked: list  #: (name, why): nodes checked through their joints or not corrected
    seconds: dict  #: blender_export, correct (frames read, helpers, check), half_frames
    animations: dict = {}  #: per-animation modes: animation name -> its FrameError
    skins: SkinCheck | None = None  #: the skinned meshes' vertices (None: not checked, ``skins_why``)
    skins_why: str = ""


def write_gltf_frames(
    scene,
    out: str,
    frame_range: FrameRange | None,
    *,
    y_up: bool = True,
    thresholds: Thresholds = DEFAULT,
    half_frames: bool = True,
    animation_mode: str = "SCENE",
    all_influences: bool = False,
    choice: ExportChoice = EVERYTHING,
) -> AnimatedResult:
    """Export ``scene`` to the .glb ``out``, exact at every frame of ``frame_range``
    (None: a static file of the current frame), and check it. The one implementation
    behind the command line, the panel's button and the export dialog's option
    (:func:`.gltf_hook.keep_shear_in_file` corrects and checks the file Blender's
    exporter wrote). The file is written whole or not at all; the scene is unchanged.

    ``animation_mode`` (with ``frame_range``): ``SCENE``, or one of the exporter's
    per-animation modes (``ACTIONS``, ``ACTIVE_ACTIONS``, ``NLA_TRACKS``): then every
    glTF animation is corrected and checked alone, as the export dialog's option does
    (:func:`.gltf_hook.keep_shear_in_file` with the dialog's settings: the scene's
    animation state saved before the export, the static pose at the current frame);
    ``animations`` holds each one's error and no half-frame measure is taken.
    ``all_influences``: every bone influence of a vertex written (see
    :func:`export_gltf_frames`); the skinned vertices are checked with every set the
    file holds.

    ``choice``: which objects and bones the file holds (Blender's exporter's own
    options; only those objects are read and compared)."""
    per_animation = animation_mode in PER_ANIMATION
    if animation_mode != "SCENE" and (not per_animation or frame_range is None):
        raise ExportError(f"animation mode {animation_mode} needs a frame range and is one of SCENE, {PER_ANIMATION}")
    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    seconds: dict[str, float] = {}
    _skinned, not_checked = engine_ignored(scene)
    objects = objects_read(scene, choice)
    result: dict = {}

    def write(tmp: str) -> None:
        t0 = time.perf_counter()
        start_frame = scene.frame_current
        before = AnimationState(scene) if per_animation else None  # as the dialog's option saves it
        if frame_range is None:
            export_gltf(tmp, y_up=y_up, all_influences=all_influences, options=choice.gltf())
        else:
            export_gltf_frames(
                tmp,
                frame_range,
                y_up=y_up,
                animation_mode=animation_mode,
                all_influences=all_influences,
                choice=choice,
            )
        t1 = time.perf_counter()
        settings = HookSettings(
            tmp, y_up, frame_range is not None, animation_mode, False, False, static_frame=start_frame, before=before
        )
        wanted = None if per_animation else frame_range.frames() if frame_range is not None else [start_frame]
        done = keep_shear_in_file(scene, settings, thresholds, wanted, objects)
        if not done.corrected or done.error is None:
            raise ExportError(f"{out!r} could not be corrected: {done.why}")
        seconds.update(blender_export=t1 - t0, correct=time.perf_counter() - t1)
        result["done"] = done

    write_with(out, write)
    done = result["done"]
    frames = done.frames
    skinned = sorted({done.keys[i][0] for i in done.skip if not done.keys[i][1]})
    by_vertices = set(done.skins.meshes) if done.skins is not None else set()
    not_checked += [(name, THROUGH_JOINTS) for name in skinned if name not in by_vertices]
    half = None
    if half_frames and len(frames) > 1 and not per_animation:
        t0 = time.perf_counter()
        fps = scene.render.fps / scene.render.fps_base
        mids = (np.asarray(frames[:-1], dtype=np.float64) + np.asarray(frames[1:])) / 2.0
        world = read_subframes(scene, mids, objects)
        conversion = gltf_conversion(y_up)
        half = animated_error(
            Gltf.load(out), done.keys, world, mids / fps, conversion, done.skip, None, done.unconverted, done.parents
        )
        seconds["half_frames"] = time.perf_counter() - t0
    return AnimatedResult(
        done.error, frames, done.helpers, half, not_checked, seconds, done.animations, done.skins, done.skins_why
    )
