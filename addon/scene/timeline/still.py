"""What cannot change between the frames of a range, so that :func:`..frames.read_frames`
reads it once (at the first frame, and again at the last to check): boxes of plain
meshes, the box of an unconstrained root armature (round-off only), poses nothing
animates, objects nothing moves. Every rule is off while a Python handler runs during
frame changes (:func:`scripts_may_edit`): only a script can change these in between.

Reading less between two frames matters twice: the reads themselves, and Blender's next
evaluation, which is slower after a read that walks every object (on the Rigify scene,
222 objects' world matrices read after each frame: 55 us, and the next ``frame_set``
about 70 us slower).
"""

from __future__ import annotations

import bpy
import numpy as np

from .... import core

#: Modifiers whose result depends on the mesh and their own settings only (no other
#: object, no time): with nothing animating them, the evaluated box is the same at every
#: frame (Rigify's widgets carry a Subdivision Surface).
_SELF_CONTAINED_MODIFIERS = frozenset({"SUBSURF", "TRIANGULATE", "BEVEL", "SOLIDIFY", "EDGE_SPLIT", "WELD"})


def box_may_change(obj) -> bool:
    """Whether ``obj``'s local box can differ between frames: anything but a mesh, and a
    mesh with shape keys, animated mesh data, or modifiers other than self-contained
    ones nothing animates (no animation data on the object, no handler script): a plain
    mesh's evaluated geometry is its data, which nothing animates. Empties' display size
    is read every frame anyway."""
    if obj.type == "EMPTY":
        return False
    if obj.type != "MESH":
        return True
    data = obj.data
    if data.shape_keys is not None or data.animation_data is not None:
        return True
    if not len(obj.modifiers):
        return False
    self_contained = all(m.type in _SELF_CONTAINED_MODIFIERS for m in obj.modifiers)
    return not self_contained or obj.animation_data is not None or scripts_may_edit()


def box_is_round_off(obj) -> bool:
    """Whether ``obj``'s box cannot change what a range reports beyond float32 round-off:
    an armature object with no parent and no constraints. Its world matrix is then its
    own translation, rotation and scale (no shear, up to Blender's float32 round-off),
    which both engine models reproduce; its box enters only its own two corner
    distances, which stay float32 round-off (about 1e-7 of the box's size) whatever the
    box. Blender recomputes an armature's box from its pose (and custom shapes) on every
    read, about 45 us per armature and frame on a Rigify rig: :func:`..frames.read_frames` reads
    such boxes at the first frame only. What the range loses: after the first frame,
    that node's box (``FrameSeries.box_min``/``box_max``) is the first frame's, and its
    two round-off corner distances are computed with it (on an armature off the origin,
    rotated and scaled, they differ from the per-frame box's in the 8th decimal: 2.5e-8
    units, both under 7e-8; at the origin unscaled both are exactly 0)."""
    return obj.type == "ARMATURE" and obj.parent is None and not len(obj.constraints)


def scripts_may_edit() -> bool:
    """Whether a Python handler runs while Blender changes frames (``frame_change_pre``,
    ``frame_change_post``, ``depsgraph_update_pre``, ``depsgraph_update_post``): only
    such a script can add or remove objects, or pose bones nothing animates, between
    two frames of an unattended read."""
    handlers = bpy.app.handlers
    lists = (handlers.frame_change_pre, handlers.frame_change_post)
    return any(len(h) for h in (*lists, handlers.depsgraph_update_pre, handlers.depsgraph_update_post))


def pose_is_static(arm) -> bool:
    """Whether nothing Blender evaluates can change the pose of armature object ``arm``
    between frames (its bones in armature space; the object's own motion is read every
    frame anyway): no animation data (action, NLA tracks, drivers) on the object or its
    armature, no bone constraints, and no handler script (:func:`scripts_may_edit`).
    A Rigify metarig kept beside its rig is one. :func:`..frames.read_frames` reads such a pose
    at the first frame only, and again at the last to check."""
    if scripts_may_edit():
        return False
    for block in (arm, arm.data):
        anim = block.animation_data
        if anim is not None and (anim.action is not None or len(anim.nla_tracks) or len(anim.drivers)):
            return False
    return not any(len(bone.constraints) for bone in arm.pose.bones)


def objects_that_stay(objects) -> np.ndarray:
    """``(n,)`` bool: the objects of the list nothing Blender evaluates can move: no
    animation data (action, NLA tracks, drivers), no constraints, no rigid body, and
    either no parent or a parent of type Object that is itself one of them and not a
    curve (a curve with path animation moves its children); no handler script. A
    parent outside the list counts as moving. Rigify's widget objects are such objects."""
    n = len(objects)
    if scripts_may_edit():
        return np.zeros(n, dtype=bool)
    position = {o.session_uid: i for i, o in enumerate(objects)}
    stays = np.zeros(n, dtype=bool)
    parents = np.full(n, -1, dtype=np.int64)
    for i, obj in enumerate(objects):
        anim = obj.animation_data
        animated = anim is not None and (anim.action is not None or len(anim.nla_tracks) or len(anim.drivers))
        stays[i] = not (animated or len(obj.constraints) or obj.rigid_body is not None)
        parent = obj.parent
        if parent is not None:
            k = position.get(parent.session_uid, -1)
            if k < 0 or obj.parent_type != "OBJECT" or parent.type == "CURVE":
                stays[i] = False
            else:
                parents[i] = k
    if (parents >= 0).any():  # a moving ancestor moves everything under it
        stays = core.Hierarchy(parents).fold((stays,), lambda p, c: (p[0] & c[0],))[0]
    return stays
