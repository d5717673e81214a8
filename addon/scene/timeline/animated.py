"""Animated scenes for the frame-range tests and benchmark, built in the current session.

- :func:`stretch_pair`: a parent whose X scale animates linearly under a child whose Z
  rotation animates linearly (the child's world shear is known in closed form per frame).
- :func:`animated_forest`: N mesh objects about 10 deep whose parents animate
  non-uniform scale and rotation.
- :func:`stretchy_rigify`: a generated Rigify human rig (Blender ships Rigify) whose
  torso stretches non-uniformly between two frames and is unscaled elsewhere; its root
  may walk and every control bone may wiggle (every bone moving at every frame).
"""

from __future__ import annotations

import math

import bpy
import numpy as np

from ..edits.editing import action_fcurves


def _linear(obj) -> None:
    """Every key of ``obj``'s action linear (closed-form values between keys)."""
    action = obj.animation_data.action if obj.animation_data else None
    for curve in action_fcurves(action):
        for key in curve.keyframe_points:
            key.interpolation = "LINEAR"


def stretch_pair(scene, start: int = 1, end: int = 21, scale_x=(1.0, 3.0), angle_deg=(0.0, 90.0)):
    """``Parent`` scaled ``(sx, 1, 1)`` with ``sx`` linear from ``scale_x[0]`` at
    ``start`` to ``scale_x[1]`` at ``end``; ``Child`` (a unit cube at the parent's
    origin) rotated about Z linearly from ``angle_deg[0]`` to ``angle_deg[1]``.
    Returns ``(parent, child)``."""
    mesh = bpy.data.meshes.new("pair box")
    mesh.from_pydata([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], [], [])
    parent = bpy.data.objects.new("Parent", None)
    child = bpy.data.objects.new("Child", mesh)
    for obj in (parent, child):
        scene.collection.objects.link(obj)
    child.parent = parent
    for frame, sx, angle in ((start, scale_x[0], angle_deg[0]), (end, scale_x[1], angle_deg[1])):
        parent.scale = (sx, 1.0, 1.0)
        parent.keyframe_insert("scale", frame=frame)
        child.rotation_euler = (0.0, 0.0, math.radians(angle))
        child.keyframe_insert("rotation_euler", frame=frame)
    _linear(parent)
    _linear(child)
    scene.frame_start, scene.frame_end = start, end
    return parent, child


def animated_forest(scene, n: int = 2000, frames: int = 250, seed: int = 9) -> None:
    """``n`` mesh objects (a random forest about 10 deep); the quarter of them that have
    children animate non-uniform scale and rotation over ``frames`` frames (keys every
    50 frames), so their rotated children shear at most frames."""
    rng = np.random.default_rng(seed)
    mesh = bpy.data.meshes.new("forest box")
    mesh.from_pydata([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], [], [])
    objects: list[bpy.types.Object] = []
    for i in range(n):
        obj = bpy.data.objects.new(f"F{i}", mesh)
        scene.collection.objects.link(obj)
        if i >= max(1, n // 100):
            obj.parent = objects[int(rng.integers(max(0, i - n // 10), i))]
        obj.location = rng.normal(size=3).tolist()
        obj.rotation_euler = rng.uniform(-math.pi, math.pi, size=3).tolist()
        objects.append(obj)
    parents = {obj.parent.name for obj in objects if obj.parent is not None}
    for obj in objects:
        if obj.name not in parents:
            continue
        for frame in range(1, frames + 1, 50):
            obj.scale = rng.uniform(0.5, 1.8, size=3).tolist()
            obj.keyframe_insert("scale", frame=frame)
            obj.rotation_euler = rng.uniform(-math.pi, math.pi, size=3).tolist()
            obj.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = 1, frames


#: The Rigify torso's stretch: unscaled up to ``STRETCH[0]`` and from ``STRETCH[2]``,
#: most stretched at ``STRETCH[1]``.
STRETCH = (10, 15, 20)
STRETCH_SCALE = (1.0, 1.6, 0.7)


def stretchy_rigify(
    scene,
    frames: int = 30,
    bone: str = "torso",
    period: int | None = None,
    walk: bool = False,
    wiggle: bool = False,
    stretch: tuple[int, int, int] = STRETCH,
    stretch_scale: tuple[float, float, float] = STRETCH_SCALE,
):
    """A generated Rigify human rig (``rig``) whose ``bone`` scales non-uniformly by
    ``stretch_scale`` between frames ``stretch[0]`` and ``stretch[2]`` (linear keys,
    largest at ``stretch[1]``) and is unscaled at every other frame; with ``period``
    the stretch repeats every ``period`` frames. With ``walk`` the rig's ``root`` moves
    at every frame (so every bone moves every frame). With ``wiggle`` every control bone
    (:func:`control_bones`) also rotates: random keys (about 6 degrees) every 5 frames,
    linear between them, so every bone's pose changes at every frame, as in a walk cycle.
    The scene range is ``1 .. frames``. Needs Rigify (shipped with Blender). Returns the
    rig object."""
    import addon_utils

    if not addon_utils.check("rigify")[1]:  # type: ignore[index]
        addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()  # type: ignore[attr-defined]  # Rigify
    metarig = bpy.context.active_object
    bpy.ops.pose.rigify_generate()  # type: ignore[attr-defined]
    rig = next(o for o in scene.objects if o.type == "ARMATURE" and o is not metarig and "rig" in o.name)
    metarig.hide_set(True)
    _key_stretch(rig.pose.bones[bone], frames, stretch, stretch_scale, period)
    if walk:
        root = rig.pose.bones["root"]
        for frame, y in ((1, 0.0), (frames, 0.02 * frames)):
            root.location = (0.0, y, 0.0)
            root.keyframe_insert("location", frame=frame)
    if wiggle:
        _wiggle(rig, frames)
    _linear(rig)
    scene.frame_start, scene.frame_end = 1, frames
    scene.frame_set(1)
    return rig


def _key_stretch(pose_bone, frames: int, stretch, stretch_scale, period: int | None = None) -> None:
    """Key ``pose_bone``'s scale: 1 at frame 1 and at ``stretch[0]`` and ``stretch[2]``,
    ``stretch_scale`` at ``stretch[1]`` (every ``period`` frames when given)."""
    low, peak, high = stretch
    pose_bone.scale = (1.0, 1.0, 1.0)
    pose_bone.keyframe_insert("scale", frame=1)
    for start in range(0, frames, period or frames):
        for frame, scale in ((low, (1.0, 1.0, 1.0)), (peak, stretch_scale), (high, (1.0, 1.0, 1.0))):
            if start + frame <= frames:
                pose_bone.scale = scale
                pose_bone.keyframe_insert("scale", frame=start + frame)


def control_bones(rig) -> list:
    """The pose bones an animator keys: not Rigify's ``ORG-``, ``MCH-``, ``DEF-`` or
    ``VIS`` helpers, not ``root``, and not rotating by axis-angle."""
    helpers = ("ORG-", "MCH-", "DEF-", "VIS")
    return [
        pb
        for pb in rig.pose.bones
        if not pb.name.startswith(helpers) and pb.name != "root" and pb.rotation_mode != "AXIS_ANGLE"
    ]


def _wiggle(rig, frames: int, seed: int = 10) -> None:
    from mathutils import Euler

    rng = np.random.default_rng(seed)
    for frame in range(1, frames + 1, 5):
        for pb in control_bones(rig):
            angles = rng.normal(scale=0.1, size=3).tolist()
            if pb.rotation_mode == "QUATERNION":
                pb.rotation_quaternion = Euler(angles).to_quaternion()
                pb.keyframe_insert("rotation_quaternion", frame=frame)
            else:
                pb.rotation_euler = angles
                pb.keyframe_insert("rotation_euler", frame=frame)
