"""Scenes whose local matrices hold animated shear, for the export tests and benchmark.

- :func:`sheared_objects`: a parent rotated and with animated non-uniform scale; a
  child parented to it "keep transform" at a stretched frame (its parent inverse holds
  shear) and rotating; a grandchild box under the child.
- :func:`two_takes`: :func:`sheared_objects` with two actions on the parent and NLA
  tracks, for the glTF exporter's per-animation modes.
- :func:`inherit_scale_rig`: an armature whose root bone animates non-uniform scale and
  rotation, with a rotated child bone in every Inherit Scale mode, and a mesh skinned to
  the bones.
- :func:`skin_boxes`: a box fully weighted to each deform bone of a rig (one influence).
- :func:`auto_weighted_body`: a body roughed out around a Rigify rig's deform bones,
  weighted by Blender's automatic weights (several influences near joints).
"""

from __future__ import annotations

import math
from typing import Any

import bpy
import mathutils
from mathutils import Matrix

from ..timeline.animated import _key_stretch, _linear, stretchy_rigify

INHERIT_SCALE_MODES = ("FULL", "FIX_SHEAR", "ALIGNED", "AVERAGE", "NONE", "NONE_LEGACY")


def _box(name: str, size: float = 0.5):
    mesh = bpy.data.meshes.new(name)
    s = size
    verts = [(x, y, z) for x in (-s, s) for y in (-s, s) for z in (-s, s)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(verts, [], faces)
    return mesh


def sheared_objects(scene, start: int = 1, end: int = 25):
    """``Stretch`` (an empty: rotated 30 deg about Y, X scale animated 1 -> 2.5 -> 0.8),
    ``Skewed`` (a box parented to it with the parent inverse of the stretched frame,
    so its local matrix is sheared at every frame; rotating about Z) and ``Tip`` (a box
    under ``Skewed``, offset). Linear keys; the scene range is ``start .. end``."""
    parent = bpy.data.objects.new("Stretch", None)
    child = bpy.data.objects.new("Skewed", _box("Skewed box"))
    tip = bpy.data.objects.new("Tip", _box("Tip box", 0.2))
    for obj in (parent, child, tip):
        scene.collection.objects.link(obj)
    parent.rotation_euler = (0.0, math.radians(30.0), 0.0)
    parent.scale = (2.0, 1.0, 0.5)
    bpy.context.view_layer.update()
    child.parent = parent
    child.matrix_parent_inverse = parent.matrix_world.inverted()
    child.location = (1.0, 0.5, 0.0)
    tip.parent = child
    tip.location = (0.0, 1.5, 0.3)
    mid = (start + end) // 2
    for frame, sx, angle in ((start, 1.0, 0.0), (mid, 2.5, 50.0), (end, 0.8, 120.0)):
        parent.scale = (sx, 1.0, 0.5)
        parent.keyframe_insert("scale", frame=frame)
        child.rotation_euler = (0.0, 0.0, math.radians(angle))
        child.keyframe_insert("rotation_euler", frame=frame)
    _linear(parent)
    _linear(child)
    scene.frame_start, scene.frame_end = start, end
    return parent, child, tip


def two_takes(scene):
    """:func:`sheared_objects` (frames 1 .. 25) whose ``Stretch`` has two actions,
    ``Grow`` (its keys there, active) and ``Shrink`` (frames 5 .. 15: other scales,
    turning about Y, and the custom property ``squash``, 0.5 otherwise), and ``Skewed``
    one, ``Spin`` (its keys there). NLA tracks:
    ``Stretch`` has ``Grow`` (strip ``Grow`` at 1) and ``Shrink`` (strip ``Shrink`` at
    5), ``Skewed`` has ``Grow`` (strip ``Spin`` at 1). Replace blending, linear keys.
    Returns ``(Stretch, Skewed, Tip)``."""
    parent, child, tip = sheared_objects(scene)
    grow = parent.animation_data.action
    grow.name = "Grow"
    spin = child.animation_data.action
    spin.name = "Spin"
    parent.animation_data.action = None
    for frame, scale, angle, squash in ((5, (0.6, 1.5, 0.5), 30.0, 0.2), (15, (1.8, 0.7, 0.5), -20.0, 0.9)):
        parent.scale = scale
        parent.keyframe_insert("scale", frame=frame)
        parent.rotation_euler = (0.0, math.radians(angle), 0.0)
        parent.keyframe_insert("rotation_euler", frame=frame)
        parent["squash"] = squash  # a custom property only Shrink keys (a rig's switch, say)
        parent.keyframe_insert('["squash"]', frame=frame)
    _linear(parent)
    shrink = parent.animation_data.action
    shrink.name = "Shrink"
    for obj, strips in ((parent, (("Grow", 1, grow), ("Shrink", 5, shrink))), (child, (("Grow", 1, spin),))):
        obj.animation_data.action = None
        for name, start, action in strips:
            track = obj.animation_data.nla_tracks.new()
            track.name = name
            track.strips.new(action.name, start, action)
    parent.animation_data.action = grow
    child.animation_data.action = spin
    parent["squash"] = 0.5  # its value while Grow plays
    return parent, child, tip


def rig_two_takes(scene):
    """:func:`inherit_scale_rig` (frames 1 .. 25) with two actions: ``Bend`` (its keys
    there, active) and ``Twist`` (frames 4 .. 16: ``Root`` scaled (1.6, 0.8, 1) ->
    (0.6, 1.5, 1.2), turning about Z; the children not keyed), on NLA tracks ``Bend``
    (strip at 1) and ``Twist`` (strip at 4). Returns the armature object."""
    rig = inherit_scale_rig(scene)
    bend = rig.animation_data.action
    bend.name = "Bend"
    rig.animation_data.action = None
    root = rig.pose.bones["Root"]
    for frame, scale, angle in ((4, (1.6, 0.8, 1.0), 0.0), (16, (0.6, 1.5, 1.2), 40.0)):
        root.scale = scale
        root.keyframe_insert("scale", frame=frame)
        root.rotation_euler = (0.0, 0.0, math.radians(angle))
        root.keyframe_insert("rotation_euler", frame=frame)
    _linear(rig)
    twist = rig.animation_data.action
    twist.name = "Twist"
    rig.animation_data.action = None
    for name, start, action in (("Bend", 1, bend), ("Twist", 4, twist)):
        track = rig.animation_data.nla_tracks.new()
        track.name = name
        track.strips.new(action.name, start, action)
    rig.animation_data.action = bend
    return rig


def new_armature(scene, name: str):
    """A new armature object ``name`` (data of the same name) linked to ``scene``, made
    active and in Edit Mode."""
    rig = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    scene.collection.objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    return rig


def ik_rig(scene, start: int = 1, end: int = 25):
    """``IKRig``: bone ``Base`` (scale animated (1,1,1) -> (1.8, 0.7, 1.2) -> (0.8, 1.3, 1)),
    ``Upper`` (its child, rest turned 35 deg about Z) and ``Lower`` (``Upper``'s
    connected child) with an IK constraint (chain of 2) reaching for ``Goal``, an
    empty moving in a loop; ``Hand`` (``Lower``'s child) copies ``Upper``'s rotation in
    local space. Linear keys; the scene range is ``start .. end``. Returns the armature."""
    rig = new_armature(scene, "IKRig")
    arm = rig.data
    base = arm.edit_bones.new("Base")
    base.head, base.tail = (0, 0, 0), (0, 0, 0.5)
    upper = arm.edit_bones.new("Upper")
    upper.parent = base
    upper.head, upper.tail = (0, 0, 0.5), (0, 0, 1.5)
    upper.matrix = Matrix.Translation((0, 0, 0.5)) @ Matrix.Rotation(math.radians(35.0), 4, "Z")
    lower = arm.edit_bones.new("Lower")
    lower.parent = upper
    lower.head, lower.tail = upper.tail, upper.tail + (upper.tail - upper.head)
    lower.use_connect = True
    hand = arm.edit_bones.new("Hand")
    hand.parent = lower
    hand.head, hand.tail = lower.tail, lower.tail + (lower.tail - lower.head) * 0.3
    bpy.ops.object.mode_set(mode="OBJECT")
    goal = bpy.data.objects.new("Goal", None)
    scene.collection.objects.link(goal)
    ik: Any = rig.pose.bones["Lower"].constraints.new("IK")
    ik.target, ik.chain_count = goal, 2
    copy: Any = rig.pose.bones["Hand"].constraints.new("COPY_ROTATION")
    copy.target, copy.subtarget = rig, "Upper"
    copy.target_space = copy.owner_space = "LOCAL"
    pose_base = rig.pose.bones["Base"]
    mid = (start + end) // 2
    for frame, scale, goal_at in (
        (start, (1, 1, 1), (0.8, 0.2, 1.4)),
        (mid, (1.8, 0.7, 1.2), (-0.6, 0.5, 1.2)),
        (end, (0.8, 1.3, 1.0), (0.3, -0.7, 1.8)),
    ):
        pose_base.scale = scale
        pose_base.keyframe_insert("scale", frame=frame)
        goal.location = goal_at
        goal.keyframe_insert("location", frame=frame)
    _linear(rig)
    _linear(goal)
    scene.frame_start, scene.frame_end = start, end
    return rig


def inherit_scale_rig(scene, start: int = 1, end: int = 25):
    """``Rig``: bone ``Root`` (scale animated (1,1,1) -> (2, 0.6, 1.3) -> (0.7, 1.4, 1),
    rotating about X) with one child bone per Inherit Scale mode (``Child FULL`` ...),
    each rotated 35 deg about Z in its rest pose and animated about X; ``Skin``, a box
    per child bone deformed by the armature (vertex groups, Armature modifier).
    Linear keys; the scene range is ``start .. end``. Returns the armature object."""
    rig = new_armature(scene, "Rig")
    arm = rig.data
    root = arm.edit_bones.new("Root")
    root.head, root.tail = (0, 0, 0), (0, 0, 1)
    for k, mode in enumerate(INHERIT_SCALE_MODES):
        b = arm.edit_bones.new(f"Child {mode}")
        b.parent = root
        b.head = (0.4 * (k - 2.5), 0.0, 1.0)
        b.tail = b.head[0], 0.0, 2.0
        b.matrix = b.matrix @ Matrix.Rotation(math.radians(35.0), 4, "Z")
        setattr(b, "inherit_scale", mode)  # noqa: B010 (a str, the stubs want a Literal)
    bpy.ops.object.mode_set(mode="OBJECT")
    mesh = bpy.data.meshes.new("Skin")
    verts: list[tuple[float, float, float]] = []
    faces: list[tuple[int, ...]] = []
    for k in range(len(INHERIT_SCALE_MODES)):
        x0 = 0.4 * (k - 2.5)
        base = len(verts)
        verts += [(x0 + x, y, z) for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (1.2, 1.8)]
        faces += [tuple(base + i for i in f) for f in ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6))]
    mesh.from_pydata(verts, [], faces)
    skin = bpy.data.objects.new("Skin", mesh)
    scene.collection.objects.link(skin)
    skin.parent = rig
    for k, mode in enumerate(INHERIT_SCALE_MODES):
        group = skin.vertex_groups.new(name=f"Child {mode}")
        group.add(list(range(8 * k, 8 * k + 8)), 1.0, "REPLACE")
    modifier: Any = skin.modifiers.new("Armature", "ARMATURE")  # an ArmatureModifier
    modifier.object = rig
    mid = (start + end) // 2
    pose_root = rig.pose.bones["Root"]
    for frame, scale, angle in ((start, (1, 1, 1), 0.0), (mid, (2.0, 0.6, 1.3), 25.0), (end, (0.7, 1.4, 1.0), -20.0)):
        pose_root.scale = scale
        pose_root.keyframe_insert("scale", frame=frame)
        pose_root.rotation_mode = "XYZ"
        pose_root.rotation_euler = (math.radians(angle), 0.0, 0.0)
        pose_root.keyframe_insert("rotation_euler", frame=frame)
        for mode in INHERIT_SCALE_MODES:
            bone = rig.pose.bones[f"Child {mode}"]
            bone.rotation_mode = "XYZ"
            bone.rotation_euler = (math.radians(-angle), 0.0, 0.0)
            bone.keyframe_insert("rotation_euler", frame=frame)
    _linear(rig)
    scene.frame_start, scene.frame_end = start, end
    return rig


def skin_boxes(scene, rig, prefix: str = "DEF-", size: float = 0.03):
    """``Body``: a small box at the head of every deform bone of ``rig`` (names starting
    with ``prefix``), each fully weighted to its bone (vertex groups, Armature
    modifier). Returns the mesh object."""
    bones = [b for b in rig.data.bones if b.name.startswith(prefix) and b.use_deform]
    verts: list[tuple[float, float, float]] = []
    faces: list[tuple[int, ...]] = []
    world = rig.matrix_world
    for b in bones:
        head = world @ b.head_local
        base = len(verts)
        verts += [
            (head.x + x, head.y + y, head.z + z) for x in (-size, size) for y in (-size, size) for z in (-size, size)
        ]
        faces += [tuple(base + i for i in f) for f in ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6))]
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata(verts, [], faces)
    body = bpy.data.objects.new("Body", mesh)
    scene.collection.objects.link(body)
    body.parent = rig
    for k, b in enumerate(bones):
        body.vertex_groups.new(name=b.name).add(list(range(8 * k, 8 * k + 8)), 1.0, "REPLACE")
    modifier: Any = body.modifiers.new("Armature", "ARMATURE")  # an ArmatureModifier
    modifier.object = rig
    return body


#: The deform bones of a Rigify human :func:`auto_weighted_body` wraps (no face,
#: fingers or palms: their bones are too close together for a rough mesh).
BODY_BONES = ("spine", "pelvis", "breast", "shoulder", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")


def _join_pieces(verts: list, edges: list) -> None:
    """Add to ``edges`` the shortest edge between the piece holding vertex 0 and any
    other piece, until every vertex of ``verts`` is in one piece (bone heat weighs
    one piece; the chains of a Rigify rig's deform bones are parented through other
    bones)."""
    points = [mathutils.Vector(v) for v in verts]
    piece = list(range(len(verts)))

    def root(k: int) -> int:
        while piece[k] != k:
            k = piece[k]
        return k

    for a, b in edges:
        piece[root(a)] = root(b)
    while len({root(k) for k in range(len(verts))}) > 1:
        main = {k for k in range(len(verts)) if root(k) == root(0)}
        a, b = min(
            ((i, j) for i in main for j in range(len(verts)) if j not in main),
            key=lambda pair: (points[pair[0]] - points[pair[1]]).length,
        )
        edges.append((a, b))
        piece[root(b)] = root(a)


def auto_weighted_body(
    scene, rig, prefix: str = "DEF-", parts: tuple = BODY_BONES, radius: float = 0.05, levels: int = 2
):
    """``Body``: a mesh around the deform bones of ``rig`` (names ``prefix`` + one of
    ``parts`` + a suffix) as an artist roughs out a character: a vertex at every bone's head and
    tail, an edge per bone (and one from each chain's first head to its wrapped
    ancestor: one piece, as bone heat needs), Blender's Skin modifier (``radius``) and Subdivision
    (``levels``) applied, then parented to the rig With Automatic Weights (bone heat:
    vertices near joints weighted to several bones, B-Bones deforming as Blender
    deforms them). Returns the mesh object."""
    bones = [
        b
        for b in rig.data.bones
        if b.use_deform and b.name.startswith(prefix) and b.name[len(prefix) :].split(".")[0] in parts
    ]
    world = rig.matrix_world
    verts: list[tuple[float, float, float]] = []
    index: dict[tuple, int] = {}
    edges = []
    for b in bones:
        ends = []
        for point in (world @ b.head_local, world @ b.tail_local):
            key = tuple(round(v, 4) for v in point)
            if key not in index:
                index[key] = len(verts)
                verts.append(tuple(point))
            ends.append(index[key])
        if ends[0] != ends[1]:
            edges.append(tuple(ends))
    _join_pieces(verts, edges)
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata(verts, edges, [])
    body = bpy.data.objects.new("Body", mesh)
    scene.collection.objects.link(body)
    skin: Any = body.modifiers.new("Skin", "SKIN")  # makes the mesh's skin radii
    skin.use_smooth_shade = True
    for v in mesh.skin_vertices[0].data:
        v.radius = (radius, radius)
    subdivision: Any = body.modifiers.new("Subdivision", "SUBSURF")
    subdivision.levels = levels
    view_layer = bpy.context.view_layer
    for obj in view_layer.objects:
        obj.select_set(False)
    view_layer.objects.active = body
    body.select_set(True)
    for name in ("Skin", "Subdivision") if levels else ("Skin",):
        bpy.ops.object.modifier_apply(modifier=name)  # type: ignore[attr-defined]
    rig.select_set(True)
    view_layer.objects.active = rig
    collections = list(rig.data.collections_all)  # bone heat weighs visible bones only (Rigify hides DEF)
    shown = [c.is_visible for c in collections]
    for c in collections:
        c.is_visible = True
    try:
        bpy.ops.object.parent_set(type="ARMATURE_AUTO")  # type: ignore[attr-defined]
    finally:
        for c, visible in zip(collections, shown, strict=True):
            c.is_visible = visible
    return body


def euler_pole_objects(scene, start: int = 1, end: int = 25):
    """Objects whose rotation passes the Euler pole, no shear in any local matrix:
    ``Base`` (scaled 3, 1, 0.5), under it ``Pitch`` pitching about Y from 85 to 95.05
    degrees (at the middle frame 0.025 degrees past the pole) with ``Far`` 40 units
    along its Y; ``Turntable`` (no parent) turning about Z from 85 to 95.05 degrees (the
    pole in the FBX file's Y-up axes) with ``Rim`` 30 units along its Y; and ``Square``
    (no parent) turned exactly 90 degrees about Z, still, with ``Corner`` 10 units along
    its Y (Blender's exporter writes an exact 90 degrees well). Linear keys; the scene
    range is ``start .. end``; returns the objects by name."""
    names = ("Base", "Pitch", "Far", "Turntable", "Rim", "Square", "Corner")
    objects = {name: bpy.data.objects.new(name, None) for name in names}
    for obj in objects.values():
        scene.collection.objects.link(obj)
    objects["Base"].scale = (3.0, 1.0, 0.5)
    for child, parent in (("Pitch", "Base"), ("Far", "Pitch"), ("Rim", "Turntable"), ("Corner", "Square")):
        objects[child].parent = objects[parent]
    objects["Far"].location = (0.0, 40.0, 0.0)
    objects["Rim"].location = (0.0, 30.0, 0.0)
    objects["Corner"].location = (0.0, 10.0, 0.0)
    objects["Square"].rotation_euler = (0.0, 0.0, math.radians(90.0))
    for frame, angle in ((start, 85.0), (end, 95.05)):
        objects["Pitch"].rotation_euler = (0.3, math.radians(angle), -0.2)
        objects["Pitch"].keyframe_insert("rotation_euler", frame=frame)
        objects["Turntable"].rotation_euler = (0.0, 0.0, math.radians(angle))
        objects["Turntable"].keyframe_insert("rotation_euler", frame=frame)
    _linear(objects["Pitch"])
    _linear(objects["Turntable"])
    scene.frame_start, scene.frame_end = start, end
    return objects


#: The rigger's rig (:func:`rigger_rig`): the torso squashed most at frame 20, the left
#: forearm's tweak stretched most at frame 25.
TORSO_SQUASH = ((10, 20, 30), (1.3, 1.0, 0.7))
FOREARM_STRETCH = ((15, 25, 35), (0.8, 1.5, 0.8))


def rigger_rig(scene, frames: int = 40):
    """A rigger's test scene: a generated Rigify human (``rig``, its ``metarig`` hidden,
    Rigify's 220 widgets in the excluded collection ``WGTS_rig``), the torso squashed
    (:data:`TORSO_SQUASH`), ``forearm_tweak.L`` stretched (:data:`FOREARM_STRETCH`),
    every control bone's rotation keyed every 5 frames over ``frames`` frames, and a
    skinned mesh ``Body`` (a box at every deform bone, weighted to it). Returns the rig."""
    (torso_frames, torso_scale), (arm_frames, arm_scale) = TORSO_SQUASH, FOREARM_STRETCH
    rig = stretchy_rigify(scene, frames, "torso", wiggle=True, stretch=torso_frames, stretch_scale=torso_scale)
    _key_stretch(rig.pose.bones["forearm_tweak.L"], frames, arm_frames, arm_scale)
    _linear(rig)
    skin_boxes(scene, rig)
    scene.frame_set(1)
    return rig
