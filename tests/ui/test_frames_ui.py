"""The frame-range UI in real Blender: the range scan operator (list, worst frames, the
frame restored), timeline markers, jumping to a worst frame, the dynamics kept from a
chain scan or sampled at the current frame, and refusals that change nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.text import Units  # noqa: E402
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
    assert {(m.name, m.frame) for m in scene.timeline_markers} == {("mine", 3), ("HI: Parent stretch f21", 21)}
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
    # In the scene's units, as the rest of the panel (a centimetre scene: 0.8 units are 0.8 cm... in m).
    metric = dynamics_sections(dynamics, t, i, "Table", Units("METRIC", 0.01))
    rows = {(s.title, label): value for s in metric for label, value in s.rows}
    assert rows[("Inertial terms of 'Table'", "Coriolis")] == "(0.000, -0.008, 0.000) m/s²"
    assert rows[("Global (world)", "Angular velocity")].endswith(" rad/s")
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


def test_jump_to_worst_frame_leaves_no_adjust_last_operation_panel(addon):
    """Blender shows Adjust Last Operation for operators registered for redo."""
    from hierarchy_inspector.addon.ui.operators_frames import HI_OT_jump_to_frame

    assert "REGISTER" not in HI_OT_jump_to_frame.bl_options and "UNDO" in HI_OT_jump_to_frame.bl_options


def test_a_chain_scan_reads_the_chain_and_keeps_the_scene_results(pair):
    """Before: Scan chain on a bone scanned the whole armature and replaced the scene's
    list. Now the scene's list stays, the chain's result is one line, its nodes the chain."""
    scene, _parent, child = pair
    bpy.ops.hierarchy_inspector.scan_range(scope="SCENE")
    fs = scene.hierarchy_inspector_frames
    before = [(i.object_name, i.worst_frame) for i in fs.range_items]
    extra = bpy.data.objects.new("Elsewhere", None)
    scene.collection.objects.link(extra)
    bpy.context.view_layer.objects.active = child
    assert bpy.ops.hierarchy_inspector.scan_range(scope="CHAIN") == {"FINISHED"}
    assert [(i.object_name, i.worst_frame) for i in fs.range_items] == before
    assert live_frames.last_range().series.keys == [("Parent", ""), ("Child", "")]
    assert live_frames.last_chain().series.keys == [("Parent", ""), ("Child", "")]
    assert fs.range_chain.startswith("Chain of 'Child' (2 nodes): worst f21,")


def test_rigify_range_list_groups_by_cause_with_visible_bones_first(rigger_blend, addon):
    """The rigger's rig over 40 frames. Before: one flat list of 668 rows topped by
    hidden DEF- and ORG- bones, 20 markers stacked on one frame. Now cause groups like the
    scene scan's (the squashed torso at frame 20, the stretched forearm tweak at 25), the
    kind filter, the bones the viewport shows first, one marker per cause."""
    from hierarchy_inspector.addon.ui.lists import RANGE_FILTERS, visible

    bpy.ops.wm.open_mainfile(filepath=rigger_blend)
    scene = bpy.context.scene
    assert bpy.ops.hierarchy_inspector.scan_range(scope="SCENE") == {"FINISHED"}
    fs = scene.hierarchy_inspector_frames
    labels = [g.label for g in fs.range_groups]
    assert "torso (1.3, 1, 0.7) f20" in labels, labels
    forearm_label = next(label for label in labels if label.startswith("forearm_tweak.L ("))
    forearm_frame = int(forearm_label.rsplit(" f", 1)[1])
    assert 15 < forearm_frame < 35  # while the tweak is stretched
    assert sum(g.count for g in fs.range_groups) == len(fs.range_items) > 600
    items = list(fs.range_items)
    shown = [not it.hidden for it in items]
    assert shown[0] and shown == sorted(shown, reverse=True), "visible nodes first"
    assert any(it.bone_name.startswith(("ORG-", "MCH-", "DEF-")) and it.hidden for it in items)
    assert not any(it.bone_name.startswith(("ORG-", "MCH-")) for it in items[:10])
    fs.range_kind = "DEFORM"
    deform = [it for it in items if visible(it, fs, RANGE_FILTERS)]
    assert deform and all(it.deform and it.bone_name.startswith("DEF-") for it in deform)
    fs.range_kind, fs.range_by_cause = "ALL", True
    fs.range_group_index = labels.index(forearm_label)
    forearm = {it.bone_name for it in items if visible(it, fs, RANGE_FILTERS)}
    assert "forearm_tweak.L" in forearm and "torso" not in forearm
    fs.show_markers = True
    markers = {(m.name, m.frame) for m in scene.timeline_markers if m.name.startswith(live_frames.MARKER_PREFIX)}
    assert ("HI: torso squash f20", 20) in markers
    assert (f"HI: forearm_tweak.L stretch f{forearm_frame}", forearm_frame) in markers
    assert len(markers) <= len(fs.range_groups) + 5
    hidden = next(it for it in items if it.hidden and it.bone_name)
    rig = scene.objects["rig"]
    active = bpy.context.view_layer.objects.active
    assert bpy.ops.hierarchy_inspector.jump_to_frame(
        frame=hidden.worst_frame, object_name="rig", bone_name=hidden.bone_name
    ) == {"FINISHED"}
    assert scene.frame_current == hidden.worst_frame and bpy.context.view_layer.objects.active == active
    assert rig.mode == "OBJECT"
