"""Animated glTF export exact at every frame: Blender's own glTF exporter (the scene's
timeline as one sampled animation over the asked frames), then helper nodes animated
with the continuous exact split above every node whose local matrix holds shear at some
frame, then the file read back as an engine composes it and compared with Blender at
every frame (and, as a measure, at the half frames between them).

The user's scene is not edited: no helper empties are inserted (the helpers live in the
file only), and the scene's frame range and current frame are put back afterwards.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import bpy
import numpy as np

from ..model.errors import ExportError
from ..model.exports.animated_gltf import FrameError, add_animated_helpers, animated_error
from ..model.exports.gltf_file import Gltf
from ..model.frames import FrameRange
from ..model.outputs import check_writable, write_with
from ..model.thresholds import DEFAULT, Thresholds
from .frames import read_frames
from .gltf_export import gltf_conversion


def export_gltf_frames(filepath: str, frame_range: FrameRange, *, y_up: bool = True) -> None:
    """Blender's glTF exporter with the scene's timeline sampled at ``frame_range``
    (one animation, keys at ``frame / fps`` seconds, objects' rest transforms at the
    current frame). The scene's range and frame are restored."""
    scene = bpy.context.scene
    saved = (scene.frame_start, scene.frame_end, scene.frame_current, scene.frame_subframe)
    try:
        scene.frame_start, scene.frame_end = frame_range.start, frame_range.end
        bpy.ops.export_scene.gltf(
            filepath=filepath,
            export_format="GLB",
            export_yup=y_up,
            export_animations=True,
            export_animation_mode="SCENE",
            export_anim_scene_split_object=False,
            export_force_sampling=True,
            export_frame_step=frame_range.step,
            export_frame_range=False,
            export_anim_slide_to_zero=False,
            export_current_frame=True,
            export_rest_position_armature=False,
            export_apply=False,
        )
    finally:
        scene.frame_start, scene.frame_end = saved[0], saved[1]
        scene.frame_set(saved[2], subframe=saved[3])


def engine_ignored(scene) -> tuple[set[str], list[tuple[str, str]]]:
    """Objects whose node matrix engines ignore (meshes deformed by an armature: their
    vertices follow the joints), and collection instances the check cannot map, as
    ``(names, [(name, why)])``."""
    skinned = set()
    listed = []
    for obj in scene.objects:
        deformed = obj.parent_type == "ARMATURE" and obj.parent is not None
        deformed |= any(m.type == "ARMATURE" and m.object is not None for m in getattr(obj, "modifiers", ()))
        if deformed:
            skinned.add(obj.name)
        if obj.instance_type == "COLLECTION" and obj.instance_collection is not None:
            listed.append((obj.name, "collection instance: its instanced objects are not corrected"))
    return skinned, listed


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


def read_subframes(scene, times) -> np.ndarray:
    """Blender's world matrices at fractional frames ``times (M,)``: ``(M, N, 4, 4)``
    (the nodes of :func:`.frames.read_frames`). The scene ends on its frame."""
    return read_frames(_Subframes(scene, times), list(range(len(times))), objects=scene.objects).world


class AnimatedResult(NamedTuple):
    error: FrameError  #: the file against Blender at every exported frame
    frames: list  #: the exported frames
    helpers: list  #: labels of the nodes that got an animated helper
    half_frame: FrameError | None  #: the same comparison at the half frames (engine interpolation)
    not_checked: list  #: (name, why): nodes checked through their joints or not corrected
    seconds: dict  #: blender_export, read, helpers, check, half_frames


def write_gltf_frames(
    scene,
    out: str,
    frame_range: FrameRange,
    *,
    y_up: bool = True,
    thresholds: Thresholds = DEFAULT,
    half_frames: bool = True,
) -> AnimatedResult:
    """Export ``scene`` over ``frame_range`` to the .glb ``out`` exact at every frame and
    check it (see the module docstring). The file is written whole or not at all."""
    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    frames = frame_range.frames()
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    series = read_frames(scene, frames)
    seconds["read"] = time.perf_counter() - started
    fps = series.fps
    times = series.frames / fps
    conversion = gltf_conversion(y_up)
    skinned, not_checked = engine_ignored(scene)
    skip = {i for i, (obj, bone) in enumerate(series.keys) if not bone and obj in skinned}
    not_checked += [(name, "deformed by an armature: checked through its joints") for name in sorted(skinned)]
    result: dict = {}

    def write(tmp: str) -> None:
        t0 = time.perf_counter()
        export_gltf_frames(tmp, frame_range, y_up=y_up)
        t1 = time.perf_counter()
        gltf = Gltf.load(tmp)
        result["helpers"] = add_animated_helpers(
            gltf, series.keys, series.world, times, conversion, skip=skip, thresholds=thresholds
        )
        gltf.save(tmp)
        t2 = time.perf_counter()
        result["error"] = animated_error(Gltf.load(tmp), series.keys, series.world, times, conversion, skip)
        seconds.update(blender_export=t1 - t0, helpers=t2 - t1, check=time.perf_counter() - t2)
        result["gltf"] = gltf

    write_with(out, write)
    half = None
    if half_frames and len(frames) > 1:
        t0 = time.perf_counter()
        mids = (np.asarray(frames[:-1], dtype=np.float64) + np.asarray(frames[1:])) / 2.0
        world = read_subframes(scene, mids)
        half = animated_error(result["gltf"], series.keys, world, mids / fps, conversion, skip)
        seconds["half_frames"] = time.perf_counter() - t0
    return AnimatedResult(result["error"], frames, result["helpers"], half, not_checked, seconds)
