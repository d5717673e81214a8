"""The export-ready copy's plan, Blender-free: what ``scene/edits/fbx_copy.py`` changes in
the scene for the length of an FBX export (and puts back after it), and Blender's pose
channels for a bone's local.

Blender's FBX exporter writes each object's local as its ``matrix_local`` decomposed,
and each bone's as ``inv(parent pose) @ pose`` decomposed, with plain matrix
inheritance (InheritType RSrs), which engines evaluate as ``parent @ local``. So a plan
says, per object (:class:`ObjectEdit`): an empty put between it and its parent (keyed,
or still and turned), its parent inverse, its keys; per armature
(:class:`ArmatureEdit`): which bones get plain matrix inheritance, a helper bone above
them, and the local each keyed bone must have relative to its parent's pose at every
frame. Every node that gets keys has its constraints and the drivers of its transform
and constraints muted, so that the keys (Blender's evaluated result) are its transform;
an object's delta transforms are zeroed too.

Shapes: ``(T, K)`` TRS, time first; matrices ``(..., 4, 4)``, column vectors;
quaternions ``(w, x, y, z)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..... import core
from ..animated_split import continuous_quaternions


class ObjectEdit(NamedTuple):
    """What the copy changes on one object."""

    name: str
    #: '' for none; else the name of an empty put between the object and its parent (it
    #: takes the object's parenting and collections; the object hangs under it)
    helper: str = ""
    helper_parent_inverse: np.ndarray | None = None  #: (4, 4) the helper's ``matrix_parent_inverse`` (None: identity)
    helper_rotation: np.ndarray | None = None  #: (4,) a still helper's rotation quaternion
    helper_keys: core.TRS | None = None  #: (T,) the helper's keys
    parent_inverse: np.ndarray | None = None  #: (4, 4) the object's ``matrix_parent_inverse`` (None: as it is)
    #: (T,) its location, quaternion and scale keyed LINEAR at every frame, in a new action
    #: replacing its own (Replace at full influence over its NLA tracks); None: its own animation
    keys: core.TRS | None = None
    mute: bool = False  #: its constraints and transform drivers muted, its delta transforms zeroed


class ArmatureEdit(NamedTuple):
    """What the copy changes on one armature: ``bones`` get plain matrix inheritance
    (Inherit Scale FULL, inheriting rotation, local location, not connected), their
    constraints and the drivers of their transform channels and constraints muted, and
    keys in a temporary copy of the armature's action (from which their own curves are
    removed)."""

    name: str
    bones: list  #: bone names
    helpers: bool  #: each bone gets a helper bone above it (``'<bone> (shear helper)'``: its rest, its old parent)
    #: (T, M) the local of each keyed bone relative to its parent's pose: with ``helpers``
    #: the helpers' (relative to the bones' parents) then the bones' (relative to their
    #: helpers), else the bones' (relative to their parents)
    local: core.TRS
    #: NLA tracks play beneath: every channel of the bones gets a curve (the active
    #: action's curves override a track's, a pose channel would not; helpers have no tracks)
    every: bool
    replace: bool  #: the temporary action blended Replace at full influence (tracks play and no action is active)

    def keyed(self) -> list[tuple[str, bool]]:
        """``(bone, helper?)`` per column of :attr:`local`."""
        return [*((b, True) for b in self.bones if self.helpers), *((b, False) for b in self.bones)]


class CopyPlan(NamedTuple):
    """The export-ready copy: every edit, applied in this order and undone in reverse."""

    frames: list  #: the scene frames keys are set at
    objects: list  #: :class:`ObjectEdit`
    armatures: list  #: :class:`ArmatureEdit`
    selected: bool = False  #: helper objects are selected (the file holds the selected objects)

    def muted(self) -> list[tuple[str, str]]:
        """``(object, bone)`` of every node whose constraints and transform drivers the
        copy mutes (objects: their delta transforms zeroed too)."""
        objects = [(e.name, "") for e in self.objects if e.mute]
        return objects + [(a.name, b) for a in self.armatures for b in a.bones]


#: The pose channels a bone is keyed on, and the TRS field each holds.
KEYED = {"location": "translation", "rotation_quaternion": "rotation", "scale": "scale"}
#: A channel whose values over the frames span at most this times max(1, its largest
#: value) is held at their middle (no curve): two single-precision epsilons, below
#: what the pose channel, the F-curve and the FBX file (all single precision) keep.
HELD = 2.0 * float(np.finfo(np.float32).eps)


class BoneChannels(NamedTuple):
    """Pose channels of ``M`` bones over ``T`` frames (:data:`KEYED` paths)."""

    values: dict  #: path -> (T, M, width) float32, what the curves hold
    held: dict  #: path -> (M, width) bool: no curve, the pose channel set to :attr:`pose`
    pose: dict  #: path -> (M, width) float32, each channel's pose value


def bone_channels(rest_parent: np.ndarray, rest: np.ndarray, local: core.TRS, every=None) -> BoneChannels:
    """The pose channels that give bones the locals ``local (T, M)`` relative to their
    parents' pose, for rest matrices ``rest (M, 4, 4)`` and their parents'
    ``rest_parent (M, 4, 4)`` (armature space; the identity for a root bone): Blender
    poses a bone with plain inheritance as ``pose = parent_pose @ rest_rel @ basis``
    with ``rest_rel = inv(rest_parent) @ rest``, so ``basis = inv(rest_rel) @ local``.
    Quaternions continuous in time. A channel that stays put over the frames
    (:func:`held_channels`) gets no curve, unless its bone is one of ``every (M,)``
    (bool; None: none)."""
    rest_rel = np.linalg.inv(rest_parent) @ rest
    d = core.decompose(np.linalg.inv(rest_rel)[None] @ local.to_matrix())
    basis = core.TRS(d.translation, continuous_quaternions(d.rotation), d.scale)
    values, held, pose = {}, {}, {}
    for path, field in KEYED.items():
        value = getattr(basis, field)
        held[path], pose[path] = held_channels(value)
        if every is not None:
            held[path][np.asarray(every, dtype=bool)] = False
        values[path] = value.astype(np.float32)
    return BoneChannels(values, held, pose)


def held_channels(value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which channels of ``value (T, M, width)`` stay put over the frames ``(M, width)``
    (their span at most :data:`HELD` times max(1, the bone's largest value of that
    channel)), and each channel's pose value ``(M, width)`` float32: the middle of the
    span where held, else the first frame's. Blender evaluates every F-curve at every
    frame of the export (about 3 us each on a Rigify rig: its 2,800 curves made the
    export's frame steps 0.4-0.5 s slower; 1,129 were constant in single precision,
    280 more held within the epsilons)."""
    low, high = value.min(axis=0), value.max(axis=0)
    scale = np.maximum(1.0, np.abs(value).max(axis=(0, 2)))[:, None]
    held = (high - low) <= HELD * scale
    return held, np.where(held, (low + high) / 2.0, value[0]).astype(np.float32)
