"""Scenes with instances for the tests (real Blender): a collection instance and a
geometry-nodes scatter, both under non-uniformly scaled instancers."""

from __future__ import annotations

import math

import bpy


def _cube(name: str, size: float = 0.5):
    mesh = bpy.data.meshes.new(name)
    s = size
    verts = [(x, y, z) for x in (-s, s) for y in (-s, s) for z in (-s, s)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(verts, [], faces)
    return bpy.data.objects.new(name, mesh)


def collection_instance(scene):
    """``Spawner`` (scaled (2, 1, 1)) instancing collection ``Prop``, whose ``Leaf`` is
    turned 45 deg about Z: the instance is sheared 36.87 deg. ``Prop`` is not in the scene."""
    prop = bpy.data.collections.new("Prop")
    leaf = _cube("Leaf")
    leaf.rotation_euler = (0.0, 0.0, math.radians(45))
    leaf.location = (1.0, 0.0, 0.0)
    prop.objects.link(leaf)
    spawner = bpy.data.objects.new("Spawner", None)
    spawner.instance_type = "COLLECTION"
    spawner.instance_collection = prop
    spawner.scale = (2.0, 1.0, 1.0)
    spawner.location = (0.0, 3.0, 0.0)
    scene.collection.objects.link(spawner)
    bpy.context.view_layer.update()
    return spawner, leaf


def scatter(scene, count: int = 240):
    """``Points`` (``count`` vertices, scaled (2, 1, 1)) with a geometry-nodes modifier
    that puts an instance of ``Tree`` on every point, turned 45 deg about Z."""
    tree = _cube("Tree", 0.2)
    scene.collection.objects.link(tree)
    mesh = bpy.data.meshes.new("Points")
    mesh.from_pydata([(i % 20 * 1.0, i // 20 * 1.0, 0.0) for i in range(count)], [], [])
    points = bpy.data.objects.new("Points", mesh)
    points.scale = (2.0, 1.0, 1.0)
    scene.collection.objects.link(points)
    group = bpy.data.node_groups.new("Scatter", "GeometryNodeTree")
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    inp, out = group.nodes.new("NodeGroupInput"), group.nodes.new("NodeGroupOutput")
    on_points = group.nodes.new("GeometryNodeInstanceOnPoints")
    info = group.nodes.new("GeometryNodeObjectInfo")
    info.inputs["Object"].default_value = tree
    info.inputs["As Instance"].default_value = True
    on_points.inputs["Rotation"].default_value = (0.0, 0.0, math.radians(45))
    group.links.new(inp.outputs[0], on_points.inputs["Points"])
    group.links.new(info.outputs["Geometry"], on_points.inputs["Instance"])
    group.links.new(on_points.outputs["Instances"], out.inputs[0])
    modifier = points.modifiers.new("Scatter", "NODES")
    modifier.node_group = group
    bpy.context.view_layer.update()
    return points, tree
