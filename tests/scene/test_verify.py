"""Recomputing Blender's matrices from raw properties: every parent type, every rotation
mode, deltas; and what is evaluated differently is named, not counted as shear."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from mathutils import Matrix

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.explain import explain  # noqa: E402
from hierarchy_inspector.addon.model.inspection import inspect  # noqa: E402
from hierarchy_inspector.addon.model.report import build_report  # noqa: E402
from hierarchy_inspector.addon.scene import reading, verify  # noqa: E402
from hierarchy_inspector.addon.scene.exports.scenes import new_armature  # noqa: E402

ROTATION_MODES = ("QUATERNION", "XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "AXIS_ANGLE")


def _randomise(obj, rng):
    obj.rotation_mode = str(rng.choice(ROTATION_MODES))
    obj.location = rng.normal(size=3)
    obj.rotation_euler = rng.uniform(-math.pi, math.pi, size=3)
    obj.rotation_quaternion = rng.normal(size=4)
    obj.rotation_axis_angle = (rng.uniform(-3, 3), *rng.normal(size=3))
    obj.scale = rng.uniform(0.4, 1.8, size=3) * rng.choice([-1.0, 1.0], size=3)
    obj.delta_location = rng.normal(size=3) * 0.3
    obj.delta_rotation_euler = rng.normal(size=3) * 0.3
    obj.delta_rotation_quaternion = (1.0, *(rng.normal(size=3) * 0.2))
    obj.delta_scale = rng.uniform(0.7, 1.3, size=3)


def _mesh(name, rng):
    mesh = bpy.data.meshes.new(name)
    verts = rng.normal(size=(6, 3))
    mesh.from_pydata(verts.tolist(), [], [(0, 1, 2), (3, 4, 5)])
    return mesh


def _rig(scene, rng):
    arm = new_armature(scene, "Rig")
    root = arm.data.edit_bones.new("root")
    root.head, root.tail = (0, 0, 0), (0, 0.3, 1.2)
    tip = arm.data.edit_bones.new("tip")
    tip.head, tip.tail, tip.parent = (0, 0.3, 1.2), (0.4, 0.2, 2.0), root
    bpy.ops.object.mode_set(mode="OBJECT")
    arm.data.bones["tip"].inherit_scale = "ALIGNED"
    for pb in arm.pose.bones:
        pb.rotation_mode = "XYZ"
        pb.rotation_euler = rng.normal(size=3) * 0.5
        pb.scale = rng.uniform(0.5, 1.5, size=3)
    return arm


@pytest.mark.parametrize("seed", range(6))
def test_every_parent_type_and_rotation_mode_matches_blender(empty_scene, seed):
    rng = np.random.default_rng(seed)
    scene = empty_scene
    arm = _rig(scene, rng)
    lattice = bpy.data.objects.new("Lattice", bpy.data.lattices.new("Lattice"))
    base = bpy.data.objects.new("Base", _mesh("Base", rng))
    for obj in (lattice, base):
        scene.collection.objects.link(obj)
        _randomise(obj, rng)
    cases = {
        "object": ("OBJECT", base, {}),
        "armature": ("ARMATURE", arm, {}),
        "lattice": ("LATTICE", lattice, {}),
        "bone": ("BONE", arm, {"parent_bone": "tip"}),
        "bone relative": ("BONE", arm, {"parent_bone": "root", "relative": True}),
        "vertex": ("VERTEX", base, {"parent_vertices": (2, 0, 0)}),
        "vertex 3": ("VERTEX_3", base, {"parent_vertices": (0, 1, 2)}),
    }
    for name, (kind, parent, extra) in cases.items():
        obj = bpy.data.objects.new(name, None)
        scene.collection.objects.link(obj)
        _randomise(obj, rng)
        obj.parent = parent
        obj.parent_type = kind
        if "parent_bone" in extra:
            obj.parent_bone = extra["parent_bone"]
            arm.data.bones[extra["parent_bone"]].use_relative_parent = bool(extra.get("relative"))
        if "parent_vertices" in extra:
            obj.parent_vertices = extra["parent_vertices"]
        inverse = np.eye(4)
        inverse[:3, :] += rng.normal(size=(3, 4)) * 0.3  # sheared parent inverses too
        obj.matrix_parent_inverse = Matrix(inverse.tolist())  # (a nested list would be read column-major)
    bpy.context.view_layer.update()
    nodes = reading.read_nodes(scene.objects)
    assert nodes.notes == [""] * len(nodes), [(nodes.label(i), n) for i, n in enumerate(nodes.notes) if n]
    # The check can fail: a wrong parent matrix is caught.
    objects = list(scene.objects)
    index = nodes.index()
    parent_object = np.array([index[(o.parent.name, "")] if o.parent else -1 for o in objects])
    parent_types = [o.parent_type if o.parent else "" for o in objects]
    p, checkable = verify.object_parent_matrices(objects, parent_object, parent_types, nodes.world)
    assert checkable.all()
    assert not np.allclose(p[objects.index(bpy.data.objects["bone"])], nodes.world[nodes.index()[("Rig", "tip")]])


def test_constraints_are_named_and_not_counted_as_shear(empty_scene):
    scene = empty_scene
    target = bpy.data.objects.new("Target", None)
    follower = bpy.data.objects.new("Follower", None)
    for obj in (target, follower):
        scene.collection.objects.link(obj)
    target.location = (3, 0, 0)
    follower.constraints.new("COPY_LOCATION").target = target
    rng = np.random.default_rng(1)
    arm = _rig(scene, rng)
    ik = arm.pose.bones["tip"].constraints.new("DAMPED_TRACK")
    ik.target = target
    bpy.context.view_layer.update()
    nodes = reading.read_nodes(scene.objects)
    notes = {nodes.label(i): n for i, n in enumerate(nodes.notes) if n}
    assert notes == {"Follower": "constraints: Copy Location", "Rig > tip": "bone constraints: Damped Track"}
    result = inspect(nodes)
    i = nodes.index()[("Follower", "")]
    assert result.shear_max[i] == 0.0 and not result.flagged[i]
    assert explain(result, i)[0].startswith("'Follower' is evaluated differently (constraints: Copy Location)")
    report = build_report(result, blender_version="x", file=None, frame=1, fps=24.0)
    entry = next(e for e in report["nodes"] if e["name"] == "Follower")
    assert entry["evaluated_differently"] == "constraints: Copy Location"
    json.dumps(report)


def test_an_ik_chain_is_named_in_plain_words(empty_scene):
    """The bone with the IK constraint is named with Blender's name of it, "Inverse
    Kinematics" (not "Ik"); the bone the chain moves without a constraint of its own says
    why once (not "evaluated differently (evaluated differently (IK ...))")."""
    scene = empty_scene
    target = bpy.data.objects.new("Target", None)
    scene.collection.objects.link(target)
    target.location = (1.5, 0.5, 0.5)
    arm = _rig(scene, np.random.default_rng(2))
    ik = arm.pose.bones["tip"].constraints.new("IK")
    ik.target, ik.chain_count = target, 2
    arm.pose.bones["root"].constraints.new("SPLINE_IK").influence = 0.0  # acts not: not named
    bpy.context.view_layer.update()
    nodes = reading.read_nodes(scene.objects)
    notes = {nodes.label(i): n for i, n in enumerate(nodes.notes) if n}
    assert notes == {
        "Rig > tip": "bone constraints: Inverse Kinematics",
        "Rig > root": "IK from another bone, a driver or an add-on",
    }
    result = inspect(nodes)
    warnings = [w for i in range(len(nodes)) for w in explain(result, i)]
    assert "'Rig > root' is evaluated differently (IK from another bone, a driver or an add-on): " in " ".join(warnings)
    assert not any("differently (evaluated" in w or "Ik" in w.split() or "Ik," in w for w in warnings), warnings
