"""Instances as nodes: collection and geometry-nodes instances read from the evaluated
depsgraph, under their instancer, checked against matrices composed independently with
mathutils, flagged like objects, named uniquely and stably."""

from __future__ import annotations

import math

import bpy
import numpy as np
from hierarchy_inspector.addon.model.nodes import INSTANCE
from hierarchy_inspector.addon.model.report import build_report
from hierarchy_inspector.addon.scene.scan import scan_scene
from instance_scenes import collection_instance, scatter
from mathutils import Matrix, Vector


def test_collection_instance_is_a_node_under_its_instancer(empty_scene):
    spawner, leaf = collection_instance(empty_scene)
    plain = scan_scene(empty_scene)
    assert [k for k, _ in plain.nodes.keys] == ["Spawner"]  # without instances: the old view
    inspection = scan_scene(empty_scene, instances=True)
    nodes = inspection.nodes
    index = nodes.index()
    i = index[("Spawner / Leaf #0", "")]
    assert nodes.kind(i) == INSTANCE and nodes.instance_of[i] == "Leaf"
    assert nodes.parents[i] == index[("Spawner", "")]
    # Blender composes instancer @ (collection offset) @ object; composed here with mathutils.
    expected = spawner.matrix_world @ Matrix.Translation(-Vector(spawner.instance_collection.instance_offset))
    expected = expected @ leaf.matrix_world
    np.testing.assert_allclose(nodes.world[i], np.array(expected), atol=1e-5)
    assert abs(inspection.shear_max[i] - math.degrees(math.atan(0.75))) < 1e-3  # 36.87 deg
    # Its local matrix (inside the instancer) is clean: glTF keeps it; accumulating engines do not.
    assert inspection.flagged[i] and inspection.sheared[i] and not inspection.lossy_local[i]
    lo, hi = nodes.box_min[i], nodes.box_max[i]
    np.testing.assert_allclose([lo, hi], [[-0.5] * 3, [0.5] * 3], atol=1e-6)


def test_240_geometry_nodes_instances_are_240_nodes(empty_scene):
    points, _tree = scatter(empty_scene, 240)
    inspection = scan_scene(empty_scene, instances=True)
    nodes = inspection.nodes
    inst = sorted(nodes.instance_of)
    assert len(nodes) == 2 + 240 and len(inst) == 240
    assert len({nodes.keys[i] for i in inst}) == 240  # unique names
    parent = nodes.index()[("Points", "")]
    assert all(nodes.parents[i] == parent for i in inst)
    # Each instance sits on its point (the point moved by the instancer's matrix).
    expected = {tuple(np.round(np.array(points.matrix_world @ v.co), 5)) for v in points.data.vertices}
    got = {tuple(np.round(nodes.world[i][:3, 3], 5)) for i in inst}
    assert got == expected
    # Turned 45 deg under a (2, 1, 1) scale: every instance is sheared 36.87 deg.
    np.testing.assert_allclose(inspection.shear_max[inst], math.degrees(math.atan(0.75)), atol=1e-3)
    assert inspection.flagged[inst].all()
    # Stable: the same keys and matrices on another evaluation.
    again = scan_scene(empty_scene, instances=True).nodes
    assert again.keys == nodes.keys
    np.testing.assert_array_equal(again.world, nodes.world)


def test_report_lists_instances_as_their_own_kind(empty_scene):
    collection_instance(empty_scene)
    inspection = scan_scene(empty_scene, instances=True)
    report = build_report(inspection, blender_version=bpy.app.version_string, file="x.blend", frame=1, fps=24.0)
    entries = {e["name"]: e for e in report["nodes"]}
    assert entries["Spawner / Leaf #0"]["kind"] == "instance"
    assert entries["Spawner / Leaf #0"]["parent"] == "Spawner"
    assert entries["Spawner / Leaf #0"]["warnings"]  # explained like any other node


def test_instances_keep_the_scene_nodes_annotations_and_problems():
    """Adding instance nodes keeps what the scan annotated on the others (types, scale
    channels, Inherit Scale, deform) and the NaN diagnostics."""
    from hierarchy_inspector.addon.scene.instances import with_instances
    from hierarchy_inspector.addon.scene.reading import read_nodes
    from hierarchy_inspector.addon.scene.scan import annotate
    from instance_scenes import collection_instance

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    collection_instance(scene)
    nodes = annotate(read_nodes(scene.objects), scene.objects)
    nodes.problems[0] = "location holds NaN or infinity"
    before = list(nodes.types)
    both = with_instances(nodes, bpy.context.evaluated_depsgraph_get())
    assert len(both) > len(nodes)
    assert both.types[: len(nodes)] == before and set(both.types[len(nodes) :]) == {""}
    assert both.problems == {0: "location holds NaN or infinity"}
    assert np.array_equal(both.channel_scale[: len(nodes)], nodes.channel_scale, equal_nan=True)
    assert len(both.inherit_scale) == len(both.deform) == len(both)
