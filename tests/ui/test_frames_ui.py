"""The frame-range UI in real Blender: the range scan operator (list, worst frames, the
frame restored), timeline markers, jumping to a worst frame, the dynamics kept from a
chain scan or sampled at the current frame, and refusals that change nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.timeline.arrows import ArrowStyle, arrow_lines, node_arrows  # noqa: E402
from hierarchy_inspector.addon.model.timeline.views import dynamics_sections  # noqa: E402
from hierarchy_inspector.addon.scene.timeline import animated  # noqa: E402
from hierarchy_inspector.addon.scene.timeline import live as live_frames  # noqa: E402


@pytest.fixture
def pair(addon):
    scene = bpy.context.scene
    parent, child = animated.stretch_pair(scene)
    scene.frame_set(4)
    return scene, parent, child


def test_scene_range_scan_lists_worst_frames_and_restores_the_frame(pair):
    scene, _parent, _child = pair
    assert bpy.ops.hierarchy_inspector.scan_range(scope="SCENE") == {"FINISHED"}
    assert scene.frame_current == 4
    fs = scene.hierarchy_inspector_frames
    assert fs.range_done and fs.range_nodes == 2
    assert [(i.object_name, i.worst_frame, i.flagged_frames) for i in fs.range_items] == [("Child", 21, 20)]
    assert fs.range_items[0].shear_deg == pytest.approx(39.725, abs=1e-3)
    assert not [m for m in scene.timeline_markers if m.name.startswith(live_frames.MARKER_PREFIX)]


def test_markers_toggle_marks_worst_frames_and_removes_only_its_own(pair):
    scene, _parent, _child = pair
    scene.timeline_markers.new("mine", frame=3)
    bpy.ops.hierarchy_inspector.scan_range(scope="SCENE")
    fs = scene.hierarchy_inspector_frames
    fs.show_markers = True
    assert {(m.name, m.frame) for m in scene.timeline_markers} == {("mine", 3), ("HI worst: Child", 21)}
    fs.show_markers = False
    assert [m.name for m in scene.timeline_markers] == ["mine"]


def test_jump_to_worst_frame_goes_there_and_selects_the_node(pair):
    scene, _parent, child = pair
    assert bpy.ops.hierarchy_inspector.jump_to_frame(frame=21, object_name="Child") == {"FINISHED"}
    assert scene.frame_current == 21 and bpy.context.view_layer.objects.active == child


def test_a_bad_custom_range_is_refused_and_changes_nothing(pair):
    scene, _parent, _child = pair
    fs = scene.hierarchy_inspector_frames
    fs.use_scene_range, fs.frame_start, fs.frame_end = False, 10, 5
    with pytest.raises(RuntimeError, match=r"end \(5\) is before its start \(10\)"):
        bpy.ops.hierarchy_inspector.scan_range(scope="SCENE")
    assert scene.frame_current == 4 and not fs.range_done


def turntable(scene):
    """Table spinning 2 rad/s about Z; a puck on it sliding outward at 0.2 units/s from
    0.1 (linear keys over one second at 24 fps)."""
    scene.render.fps, scene.render.fps_base = 24, 1.0
    table = bpy.data.objects.new("Table", None)
    puck = bpy.data.objects.new("Puck", None)
    for obj in (table, puck):
        scene.collection.objects.link(obj)
    puck.parent = table
    for frame, angle, x in ((1, 0.0, 0.1), (25, 2.0, 0.3)):
        table.rotation_euler = (0.0, 0.0, angle)
        table.keyframe_insert("rotation_euler", frame=frame)
        puck.location = (x, 0.0, 0.0)
        puck.keyframe_insert("location", frame=frame)
    animated._linear(table)
    animated._linear(puck)
    bpy.context.view_layer.objects.active = puck
    return table, puck


def test_chain_scan_keeps_the_rates_and_inertial_terms_in_closed_form(addon):
    scene = bpy.context.scene
    turntable(scene)
    fs = scene.hierarchy_inspector_frames
    fs.use_scene_range, fs.frame_start, fs.frame_end, fs.frame_step = False, 1, 25, 1
    scene.frame_set(13)
    assert bpy.ops.hierarchy_inspector.scan_range(scope="CHAIN") == {"FINISHED"}
    dynamics, t, i, parent_world, series = live_frames.dynamics_here(bpy.context)
    assert series.keys[i] == ("Puck", "") and series.frames[t] == 13
    x, w, v = 0.2, 2.0, 0.2  # at frame 13, half a second in
    np.testing.assert_allclose(dynamics.local.velocity[t, i], (v, 0, 0), atol=1e-4)
    np.testing.assert_allclose(dynamics.world.omega[t, series.parents[i]], (0, 0, w), atol=1e-4)
    np.testing.assert_allclose(dynamics.centrifugal[t, i], (w * w * x, 0, 0), atol=1e-4)
    np.testing.assert_allclose(dynamics.coriolis[t, i], (0, -2 * w * v, 0), atol=1e-4)
    np.testing.assert_allclose(dynamics.euler[t, i], 0, atol=1e-4)
    rows = {(s.title, label): value for s in dynamics_sections(dynamics, t, i, "Table") for label, value in s.rows}
    assert rows[("Inertial terms of 'Table'", "Coriolis")] == "(0.000, -0.800, 0.000) units/s²"
    # Arrows: relative velocity drawn through the table's rotation (2 rad * 0.5 s = 1 rad).
    vectors = node_arrows(dynamics, t, i, parent_world)
    np.testing.assert_allclose(vectors["relative_velocity"], (v * math.cos(1), v * math.sin(1), 0), atol=1e-4)
    coords, colours = arrow_lines(series.world[t, i, :3, 3], vectors, ArrowStyle(scale=1.0))
    drawn = sum(np.linalg.norm(vec) >= 1e-9 for vec in vectors.values())  # zero vectors draw nothing
    assert drawn >= 6 and len(coords) == 6 * drawn and colours.shape == (len(coords), 4)
    np.testing.assert_allclose(coords[1] - coords[0], vectors["velocity"], atol=1e-6)  # the first shaft


def test_dynamics_sampled_outside_the_range_restore_the_frame(addon):
    scene = bpy.context.scene
    turntable(scene)
    scene.frame_set(7)
    assert live_frames.dynamics_here(bpy.context) is None
    assert bpy.ops.hierarchy_inspector.sample_dynamics() == {"FINISHED"}
    assert scene.frame_current == 7
    dynamics, t, i, _parent_world, series = live_frames.dynamics_here(bpy.context)
    assert list(series.frames) == [6, 7, 8] and t == 1
    np.testing.assert_allclose(dynamics.local.velocity[t, i], (0.2, 0, 0), atol=1e-4)
