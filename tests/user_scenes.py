"""Scenes built the way users build them (operators where a user would click, Blender's
defaults elsewhere), for the read-back verdicts: cameras and lights, unit scales, a
character instanced from its collection, IK legs, a character skinned with six weights
per vertex. Each builder fills the current (empty) scene and returns what it made."""

from __future__ import annotations

import math

import bpy
import numpy as np


def cameras_and_lights(scene, animated: bool = False):
    """A cube, a camera aimed at it, a sun and a spot light turned as one turns them,
    and an empty parented to the camera (keep transform); with ``animated`` the camera
    dollies over frames 1..10. Returns the camera."""
    bpy.ops.mesh.primitive_cube_add(location=(0.0, 0.0, 1.0))
    bpy.ops.object.camera_add(location=(7.0, -6.0, 5.0), rotation=(math.radians(63), 0.0, math.radians(46)))
    camera = bpy.context.active_object
    bpy.ops.object.light_add(
        type="SUN", location=(4.0, 1.0, 6.0), rotation=(math.radians(37), math.radians(3), math.radians(106))
    )
    bpy.ops.object.light_add(type="SPOT", location=(-4.0, 1.0, 6.0), rotation=(math.radians(20), 0.0, 0.0))
    child = bpy.data.objects.new("CamChild", None)
    scene.collection.objects.link(child)
    child.location = (7.0, -6.0, 4.0)
    child.parent = camera
    child.matrix_parent_inverse = camera.matrix_world.inverted()
    if animated:
        for frame, location in ((1, (7.0, -6.0, 5.0)), (10, (3.0, -8.0, 4.0))):
            camera.location = location
            camera.keyframe_insert("location", frame=frame)
        scene.frame_start, scene.frame_end = 1, 10
    scene.frame_set(1)
    return camera


def moving_cube(scene):
    """A cube moving along X over frames 1..10 (0 to 0.3), the scene on frame 1."""
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    for frame, x in ((1, 0.0), (10, 0.3)):
        cube.location = (x, 0.0, 0.0)
        cube.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    return cube


def unit_scaled(scene, scale_length: float):
    """The scene's Unit Scale set to ``scale_length`` (metric), a rotated, stretched cube
    and an empty parented to it."""
    scene.unit_settings.system = "METRIC"
    scene.unit_settings.scale_length = scale_length
    bpy.ops.mesh.primitive_cube_add(location=(1.0, 2.0, 3.0), rotation=(0.3, 0.2, 0.1), scale=(2.0, 1.0, 1.0))
    cube = bpy.context.active_object
    empty = bpy.data.objects.new("Tip", None)
    scene.collection.objects.link(empty)
    empty.parent = cube
    empty.location = (0.5, 0.0, 1.0)
    return cube


def _bones(armature, specs) -> None:
    """Edit bones of ``armature`` from ``(name, head, tail, parent, connected)``."""
    for name, head, tail, parent, connected in specs:
        bone = armature.edit_bones.new(name)
        bone.head, bone.tail = head, tail
        if parent:
            bone.parent = armature.edit_bones[parent]
            bone.use_connect = connected


def _armature(scene, name: str, specs, collection=None):
    data = bpy.data.armatures.new(name)
    rig = bpy.data.objects.new(name, data)
    (collection or scene.collection).objects.link(rig)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    _bones(data, specs)
    bpy.ops.object.mode_set(mode="OBJECT")
    return rig


def instanced_character(scene, excluded: bool = True):
    """A collection 'Character' (armature 'Armature' posed, mesh 'Body' skinned to it),
    instanced by the empty 'Character' elsewhere as File > Link does, the collection
    itself excluded from the view layer (``excluded``) or left in the scene too."""
    coll = bpy.data.collections.new("Character")
    scene.collection.children.link(coll)
    specs = [("Hips", (0, 0, 0), (0, 0.05, 0.3), None, False)]
    specs += [
        ("Spine", (0, 0, 0.3), (0, 0.05, 0.6), "Hips", False),
        ("Head", (0, 0, 0.6), (0, 0.05, 0.9), "Spine", False),
    ]
    rig = _armature(scene, "Armature", specs, coll)
    for i, bone in enumerate(rig.pose.bones):
        bone.rotation_mode = "XYZ"
        bone.rotation_euler = (0.2 * i, 0.1, 0.3)
    body = bpy.data.objects.new("Body", bpy.data.meshes.new("Body"))
    coll.objects.link(body)
    body.data.from_pydata([(0, 0, 0), (0.2, 0, 0.5), (0, 0.2, 0.9)], [], [(0, 1, 2)])
    body.parent = rig
    body.modifiers.new("Armature", "ARMATURE").object = rig
    body.vertex_groups.new(name="Spine").add([0, 1, 2], 1.0, "REPLACE")
    instance = bpy.data.objects.new("Character", None)
    scene.collection.objects.link(instance)
    instance.instance_type, instance.instance_collection = "COLLECTION", coll
    instance.location, instance.rotation_euler = (3.0, 0.0, 0.0), (0.0, 0.0, 0.5)
    if excluded:
        bpy.context.view_layer.layer_collection.children["Character"].exclude = True
    return instance


def ik_legs(scene, hips_scale: float = 1.0, solver: str = "ITASC"):
    """'Character': hips, spine and two legs (thigh Inherit Scale Aligned, shin with an
    IK constraint over two bones, a foot), IK targets and knee poles, the hips scaled
    ``(1, hips_scale, 1)``, one foot target moved: the legs bend. The armature's IK
    solver is ``solver`` (iTaSC leaves about 5e-4 deg of local shear in the thighs and
    none in the shins). A prop, a camera and a sun beside it. Returns the armature."""
    specs = [("Hips", (0, 0, 1.0), (0, 0, 1.15), None, False), ("Spine", (0, 0, 1.15), (0, 0, 1.5), "Hips", True)]
    for side, x in (("L", 0.1), ("R", -0.1)):
        specs += [
            (f"Thigh.{side}", (x, 0, 0.95), (x * 1.3, 0.02, 0.52), "Hips", False),
            (f"Shin.{side}", (x * 1.3, 0.02, 0.52), (x * 1.4, -0.02, 0.1), f"Thigh.{side}", True),
            (f"Foot.{side}", (x * 1.4, -0.02, 0.1), (x * 1.4, -0.15, 0.02), f"Shin.{side}", True),
            (f"Foot_IK.{side}", (x * 1.4, -0.02, 0.1), (x * 1.4, -0.15, 0.1), None, False),
            (f"Knee_Pole.{side}", (x * 1.3, -0.6, 0.5), (x * 1.3, -0.7, 0.5), None, False),
        ]
    rig = _armature(scene, "Character", specs)
    rig.pose.ik_solver = solver
    for side in "LR":
        rig.data.bones[f"Thigh.{side}"].inherit_scale = "ALIGNED"
        ik = rig.pose.bones[f"Shin.{side}"].constraints.new("IK")
        ik.target, ik.subtarget, ik.chain_count = rig, f"Foot_IK.{side}", 2
        ik.pole_target, ik.pole_subtarget, ik.pole_angle = rig, f"Knee_Pole.{side}", math.radians(-90)
        rig.pose.bones[f"Foot_IK.{side}"].location = (0.05, 0.1, 0.15)
    hips = rig.pose.bones["Hips"]
    hips.scale, hips.location = (1.0, hips_scale, 1.0), (0.0, 0.0, -0.05)
    bpy.ops.mesh.primitive_cube_add(size=0.1, location=(0.0, 0.0, 1.3))
    bpy.ops.object.camera_add(location=(4.0, -4.0, 2.0), rotation=(math.radians(80), 0.0, math.radians(45)))
    bpy.ops.object.light_add(type="SUN", rotation=(0.5, 0.2, 0.1))
    scene.frame_set(1)
    return rig


def six_weights(scene, frames: int = 24):
    """'Armature': a spine of eight bones bending over frames 1..``frames``; 'Body': a
    subdivided cylinder around it, every vertex weighted to its six nearest bones
    (a smooth falloff, as weight painting leaves it), deformed by an Armature
    modifier. Returns the mesh."""
    specs = [
        (f"Spine.{i:03d}", (0, 0, i * 0.25), (0, 0, (i + 1) * 0.25), f"Spine.{i - 1:03d}" if i else None, i > 0)
        for i in range(8)
    ]
    rig = _armature(scene, "Armature", specs)
    bpy.ops.mesh.primitive_cylinder_add(vertices=16, radius=0.2, depth=2.0, location=(0.0, 0.0, 1.0))
    body = bpy.context.active_object
    body.name = "Body"
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=15)
    bpy.ops.object.mode_set(mode="OBJECT")
    body.parent = rig
    body.modifiers.new("Armature", "ARMATURE").object = rig
    groups = [body.vertex_groups.new(name=name) for name, *_rest in specs]
    centres = (np.arange(8) + 0.5) * 0.25
    for v in body.data.vertices:
        w = np.exp(-((((v.co.z + 1.0) - centres) / 0.3) ** 2))
        for k in np.argsort(-w)[:6]:
            groups[k].add([v.index], float(w[k]), "REPLACE")
    for frame, angle in ((1, 0.0), (frames // 2, 0.35), (frames, -0.2)):
        for i, bone in enumerate(rig.pose.bones):
            bone.rotation_mode = "XYZ"
            bone.rotation_euler = (angle * (1 + 0.1 * i), 0.3 * angle, 0.0)
            bone.keyframe_insert("rotation_euler", frame=frame)
    scene.frame_start, scene.frame_end = 1, frames
    scene.frame_set(1)
    return body


def save(path) -> str:
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, compress=False)
    return str(path)
