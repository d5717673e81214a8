"""The add-on in real Blender: chain reading, panel values, scan, overlay, operators, undo."""

from __future__ import annotations

import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon import cli, ui  # noqa: E402
from hierarchy_inspector.addon.model import overlay_geometry, views  # noqa: E402
from hierarchy_inspector.addon.model.advice.actions import advice  # noqa: E402
from hierarchy_inspector.addon.model.explain import explain  # noqa: E402
from hierarchy_inspector.addon.model.inspection import inspect  # noqa: E402
from hierarchy_inspector.addon.scene import demo_scenes, live, reading, settings  # noqa: E402
from hierarchy_inspector.addon.scene.selection import is_bone_selected, select_node  # noqa: E402
from hierarchy_inspector.addon.ui import overlay  # noqa: E402
from hierarchy_inspector.addon.ui.operators_demo import draw_add_menu  # noqa: E402

DEVIATION = "Off in engines (largest corner)"


@pytest.fixture
def demo(addon):
    scene = demo_scenes.build_demo_scene(bpy.context.scene)
    return scene


def _activate(name: str, bone: str = ""):
    obj = bpy.data.objects[name]
    bpy.context.view_layer.objects.active = obj
    if bone:
        bpy.ops.object.mode_set(mode="POSE")
        obj.data.bones.active = obj.data.bones[bone]
    return obj


def _rows(view, i=None):
    i = view.active if i is None else i
    sections = views.node_sections(view.inspection, i, settings.units(bpy.context))
    return {(s.title, label): value for s in sections for label, value in s.rows}


def test_panel_values_for_rotated_child(demo):
    _activate("Child")
    view = live.chain_view(bpy.context)
    assert [view.inspection.nodes.label(i) for i in view.chain] == ["Parent", "Child"]
    rows = _rows(view)
    assert rows[("Local (what exporters write)", "Rotation")] == "(0.00, 0.00, 45.00)\N{DEGREE SIGN}"
    assert rows[("Blender world", "Shear XY/YZ/ZX")] == "(-36.87, 0.00, 0.00)\N{DEGREE SIGN}"
    assert rows[("Blender world", "Scale")] == "(1.581, 1.581, 1.000)"
    assert rows[("Accumulated world (Unreal, Ogre)", "Scale")] == "(2.000, 1.000, 1.000)"
    assert rows[("What Unity's world getters return", "lossyScale")] == "(1.500, 1.500, 1.000)"
    assert rows[(DEVIATION, "Ogre")] == rows[(DEVIATION, "Unreal locals")] == "1.00 m"  # the scene's metric units
    assert rows[(DEVIATION, "glTF, Unity")] == "0 m"
    warnings = explain(view.inspection, view.active)
    assert any(
        "ancestor 'Parent' is scaled non-uniformly (2, 1, 1)" in w and "rotated 45\N{DEGREE SIGN}" in w
        for w in warnings
    )


def test_panel_values_for_piston_with_slider(demo):
    _activate("B (slider)")
    view = live.chain_view(bpy.context)
    rows = _rows(view)
    # Offsets: the slider copy sits 8 units along -Y; the article's numbers otherwise.
    assert rows[("Blender world", "Location (m)")] == "(4.500, -5.000, 4.500)"
    assert rows[("Accumulated world (Unreal, Ogre)", "Location (m)")] == "(3.500, -5.000, 4.500)"
    assert rows[(DEVIATION, "Ogre")] == rows[(DEVIATION, "Unreal locals")] == "2.24 m"
    assert rows[(DEVIATION, "Ogre moved")] == "1.00 m, 0.0\N{DEGREE SIGN}"


def test_parent_inverse_shear_is_reported_as_lost_on_export(demo):
    _activate("Kept child")
    view = live.chain_view(bpy.context)
    rows = _rows(view)
    lost = [float(v) for v in rows[("Local (what exporters write)", "Shear lost")][1:-2].split(",")]
    assert max(abs(v) for v in lost) > 30
    assert rows[("Blender world", "Shear XY/YZ/ZX")] == "(0.00, 0.00, 0.00)\N{DEGREE SIGN}"
    assert any("holds" in w and "exports drop it" in w for w in explain(view.inspection, view.active))
    actions = {a.action for a in advice(view.inspection, view.active)}
    assert {"INSERT_HELPERS", "CLEAR_PARENT_INVERSE"} <= actions


def test_active_pose_bone_chain_runs_through_the_armature(demo):
    _activate("Inherit scale rig", "FULL.tip")
    view = live.chain_view(bpy.context)
    labels = [view.inspection.nodes.label(i) for i in view.chain]
    assert labels == [
        "Inherit scale rig",
        "Inherit scale rig > FULL.root",
        "Inherit scale rig > FULL.mid",
        "Inherit scale rig > FULL.tip",
    ]
    todo = " ".join(a.text for a in advice(view.inspection, view.active))
    assert "set Inherit Scale of 'FULL.tip' to Aligned" in todo and "Insert helpers" not in todo
    world = np.asarray(bpy.data.objects["Inherit scale rig"].matrix_world) @ np.asarray(
        bpy.data.objects["Inherit scale rig"].pose.bones["FULL.tip"].matrix
    )
    assert np.allclose(view.inspection.nodes.world[view.active], world, atol=1e-6)


def test_object_parented_to_a_bone_continues_through_the_armature(demo):
    rig = bpy.data.objects["Inherit scale rig"]
    prop = bpy.data.objects.new("Prop", None)
    bpy.context.scene.collection.objects.link(prop)
    prop.parent = rig
    prop.parent_type = "BONE"
    prop.parent_bone = "ALIGNED.mid"
    bpy.context.view_layer.update()
    _activate("Prop")
    view = live.chain_view(bpy.context)
    labels = [view.inspection.nodes.label(i) for i in view.chain]
    assert labels == [
        "Inherit scale rig",
        "Inherit scale rig > ALIGNED.root",
        "Inherit scale rig > ALIGNED.mid",
        "Prop",
    ]
    assert np.allclose(view.inspection.nodes.world[view.active], np.asarray(prop.matrix_world), atol=1e-6)


def test_chain_view_follows_edits_frames_renames_deletes(demo):
    child = _activate("Child")
    first = live.chain_view(bpy.context)
    assert live.chain_view(bpy.context) is first  # cached between draws
    bpy.data.objects["Parent"].scale = (1.0, 1.0, 1.0)
    bpy.context.view_layer.update()
    edited = live.chain_view(bpy.context)
    assert edited is not first and edited.inspection.shear_max[edited.active] < 1e-4
    # Animation: the parent's scale keyed, the view follows the frame.
    parent = bpy.data.objects["Parent"]
    parent.scale = (1.0, 1.0, 1.0)
    parent.keyframe_insert("scale", frame=1)
    parent.scale = (3.0, 1.0, 1.0)
    parent.keyframe_insert("scale", frame=10)
    bpy.context.scene.frame_set(10)
    assert live.chain_view(bpy.context).inspection.shear_max[-1] > 30
    bpy.context.scene.frame_set(1)
    assert live.chain_view(bpy.context).inspection.shear_max[-1] < 1e-4
    # Renaming the parent does not change the active key: only the invalidation shows it.
    parent.name = "Renamed parent"
    bpy.context.view_layer.update()
    assert live.chain_view(bpy.context).inspection.nodes.label(0) == "Renamed parent"
    # Deleting the parent: the child becomes a root and the chain shrinks.
    bpy.data.objects.remove(parent)
    bpy.context.view_layer.update()
    view = live.chain_view(bpy.context)
    assert [view.inspection.nodes.label(i) for i in view.chain] == ["Child"]
    bpy.data.objects.remove(child)
    bpy.context.view_layer.update()
    assert live.chain_view(bpy.context) is None


def test_scan_lists_flagged_nodes_sorted_and_selects_on_click(demo):
    assert bpy.ops.hierarchy_inspector.scan() == {"FINISHED"}
    settings = bpy.context.scene.hierarchy_inspector
    items = list(settings.scan_items)
    assert settings.scan_nodes == len(bpy.context.scene.objects) + len(bpy.data.objects["Inherit scale rig"].pose.bones)
    corners = [it.max_corner for it in items]
    assert corners == sorted(corners, reverse=True)
    names = {(it.object_name, it.bone_name) for it in items}
    assert ("B (slider)", "") in names and ("Child", "") in names and ("Kept child", "") in names
    assert ("Inherit scale rig", "FULL.tip") in names
    assert ("Root", "") not in names and ("B", "") not in names  # the published piston is clean
    assert items[0].object_name == "B (slider)" and math.isclose(items[0].max_corner, 2.2360679, rel_tol=1e-5)
    # Clicking a bone row selects the armature and the bone.
    k = next(j for j, it in enumerate(items) if it.bone_name == "FULL.tip")
    settings.scan_index = k
    rig = bpy.data.objects["Inherit scale rig"]
    assert bpy.context.view_layer.objects.active == rig
    assert is_bone_selected(rig, "FULL.tip") and not is_bone_selected(rig, "FULL.root")
    settings.scan_index = 0
    assert bpy.context.view_layer.objects.active.name == "B (slider)"


def test_select_flagged_is_undoable_and_explains_when_unavailable(demo):
    assert not bpy.ops.hierarchy_inspector.select_flagged.poll()
    bpy.ops.hierarchy_inspector.scan()
    for obj in bpy.context.scene.objects:
        obj.select_set(False)
    bpy.ops.ed.undo_push(message="before select")
    # EXEC_DEFAULT with undo=True: the undo step an interactive call would push.
    assert bpy.ops.hierarchy_inspector.select_flagged("EXEC_DEFAULT", True) == {"FINISHED"}
    selected = {o.name for o in bpy.context.selected_objects}
    assert {"B (slider)", "Child", "Kept child", "Inherit scale rig"} <= selected
    assert "Root" not in selected
    bpy.ops.ed.undo()
    assert not bpy.context.selected_objects


def test_build_demo_is_undoable_and_refuses_duplicates(addon):
    bpy.ops.ed.undo_push(message="empty")
    assert bpy.ops.hierarchy_inspector.build_demo("EXEC_DEFAULT", True) == {"FINISHED"}
    assert "Piston" in bpy.data.collections and "Inherit scale rig" in bpy.data.objects
    with pytest.raises(RuntimeError, match="already exist"):
        bpy.ops.hierarchy_inspector.build_demo()
    bpy.ops.ed.undo()
    assert "Piston" not in bpy.data.collections and "Child" not in bpy.data.objects


def test_copy_comparison_text_and_operator(demo):
    # Background Blender has no system clipboard (it reads back ""), so the text itself
    # is checked here and the operator's run; the real-window test reads the clipboard.
    _activate("Child")
    view = live.chain_view(bpy.context)
    text = views.comparison_text(view.inspection, view.active)
    assert text.startswith("Child (object)\nOff in engines (largest corner):")
    assert "  Shear XY/YZ/ZX: (-36.87, 0.00, 0.00)\N{DEGREE SIGN}" in text
    assert "Warnings:\n  - 'Child' is skewed 36.9\N{DEGREE SIGN}" in text and "What to do:" in text
    assert bpy.ops.hierarchy_inspector.copy_comparison() == {"FINISHED"}
    bpy.context.view_layer.objects.active = None
    assert not bpy.ops.hierarchy_inspector.copy_comparison.poll()


def test_overlay_lines_place_boxes_like_blender_and_colour_skew(demo):
    _activate("Child")
    view = live.chain_view(bpy.context)
    prefs = overlay_geometry.OverlayStyle()
    coords, colours = overlay_geometry.overlay_lines(view.inspection, view.chain, prefs, axes=True)
    k = len(view.chain)
    hot = int(view.inspection.flagged[view.chain].sum())  # the engine box and axes: flagged nodes only
    assert hot == 1 and coords.shape == (k * 24 + hot * (24 + 6), 3) and colours.shape == (len(coords), 4)
    child = bpy.data.objects["Child"]
    blender_corners = {
        tuple(np.round(np.asarray(child.matrix_world) @ np.append(c, 1.0), 4)[:3]) for c in child.bound_box
    }
    drawn = {tuple(np.round(p, 4)) for p in coords[24:48].astype(np.float64)}  # the child's Blender box
    assert drawn == blender_corners
    # Parent unsheared: Blender box colour; child sheared 36.9 deg: the strong skew colour.
    assert np.allclose(colours[0], prefs.colour_blender)
    assert np.allclose(colours[24], prefs.colour_skew_high)
    skew = overlay_geometry.skew_colours(np.array([0.0, 15.0, 90.0]), prefs)
    assert np.allclose(skew[1], (np.array(prefs.colour_skew_low) + np.array(prefs.colour_skew_high)) / 2)


def test_reading_the_whole_scene_matches_blender(demo):
    nodes = reading.read_nodes(bpy.context.scene.objects)
    index = nodes.index()
    for obj in bpy.context.scene.objects:
        assert np.allclose(nodes.world[index[(obj.name, "")]], np.asarray(obj.matrix_world), atol=1e-6)
    rig = bpy.data.objects["Inherit scale rig"]
    for pb in rig.pose.bones:
        i = index[(rig.name, pb.name)]
        assert np.allclose(nodes.world[i], np.asarray(rig.matrix_world) @ np.asarray(pb.matrix), atol=1e-6)
        parent = index[(rig.name, pb.parent.name)] if pb.parent else index[(rig.name, "")]
        assert nodes.parents[i] == parent
    empty = index[("Root", "")]
    assert np.allclose(nodes.box_min[empty], -1) and np.allclose(nodes.box_max[empty], 1)
    cube = index[("Child", "")]
    assert np.allclose(nodes.box_min[cube], -1) and np.allclose(nodes.box_max[cube], 1)
    bone = index[(rig.name, "FULL.tip")]
    assert np.allclose(nodes.box_max[bone], [0.04, 0.8, 0.04], atol=1e-6)


def test_register_three_times_leaves_nothing_behind(empty_scene):
    import hierarchy_inspector as package

    handler_lists = [name for name, _ in live.HANDLERS]
    before = {name: len(getattr(bpy.app.handlers, name)) for name in handler_lists}
    for _ in range(3):
        package.register()
        assert hasattr(bpy.types.Scene, "hierarchy_inspector")
        assert hasattr(bpy.types, "HI_PT_inspector")
        assert all(fn in getattr(bpy.app.handlers, name) for name, fn in live.HANDLERS)
        package.unregister()
        assert not hasattr(bpy.types.Scene, "hierarchy_inspector")
        for cls in ui.CLASSES:
            assert not cls.is_registered, cls.__name__
        assert {name: len(getattr(bpy.app.handlers, name)) for name in handler_lists} == before
        assert not overlay.draw_handler_active()
        assert not cli._cli_handle
        assert draw_add_menu not in getattr(bpy.types.VIEW3D_MT_add.draw, "_draw_funcs", [])


def test_details_follow_the_chosen_node_not_a_chain_position(demo):
    _activate("Child")
    settings = bpy.context.scene.hierarchy_inspector
    assert bpy.ops.hierarchy_inspector.show_details(object_name="Parent", bone_name="") == {"FINISHED"}
    view = live.chain_view(bpy.context)
    assert (
        view.inspection.nodes.label(
            views.focus_index(view.inspection, view.chain, (settings.detail_object, settings.detail_bone))
        )
        == "Parent"
    )
    _activate("B (slider)")  # "Parent" is not on this chain: back to the active node
    view = live.chain_view(bpy.context)
    assert (
        view.inspection.nodes.label(
            views.focus_index(view.inspection, view.chain, (settings.detail_object, settings.detail_bone))
        )
        == "B (slider)"
    )


def test_scan_stays_current_when_only_the_selection_changes(demo):
    bpy.ops.hierarchy_inspector.scan()
    assert live.scan_is_current()
    bpy.data.objects["Root"].select_set(True)
    bpy.context.view_layer.objects.active = bpy.data.objects["Root"]
    bpy.context.view_layer.update()
    assert live.scan_is_current()
    bpy.data.objects["Root"].location.x += 1.0
    bpy.context.view_layer.update()
    assert not live.scan_is_current()


def test_scan_stays_current_across_modes_and_bone_selection_but_not_pose_edits(demo):
    arm = bpy.data.objects["Inherit scale rig"]
    bpy.context.view_layer.objects.active = arm
    bpy.ops.hierarchy_inspector.scan()
    assert live.scan_is_current()
    bpy.ops.object.mode_set(mode="POSE")
    bpy.context.view_layer.update()
    assert live.scan_is_current()  # a mode switch changes no matrix
    bpy.ops.pose.select_all(action="DESELECT")
    bpy.context.view_layer.update()
    assert live.scan_is_current()  # selecting bones neither
    arm.pose.bones[0].location.y += 0.5
    bpy.context.view_layer.update()
    assert not live.scan_is_current()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.hierarchy_inspector.scan()
    arm.name = "Renamed rig"
    bpy.context.view_layer.update()
    assert not live.scan_is_current()  # the scan's names are out of date


def test_failed_selection_changes_nothing(demo):
    child = _activate("Child")
    child.select_set(True)
    assert not select_node(bpy.context, "Inherit scale rig", "no such bone")
    assert bpy.context.view_layer.objects.active == child and child.select_get()


def test_fix_tip_for_a_bone_under_a_scaled_armature_object(addon):
    scene = bpy.context.scene
    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.data.edit_bones.new("B")
    bone.head, bone.tail = (0, 0, 0), (0, 0, 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    arm.scale = (2.0, 1.0, 1.0)
    arm.pose.bones["B"].rotation_mode = "XYZ"
    arm.pose.bones["B"].rotation_euler = (0.0, 0.0, 0.5)
    bpy.context.view_layer.update()
    result = inspect(reading.read_nodes(scene.objects))
    i = result.nodes.index()[("Rig", "B")]
    assert result.shear_max[i] > 10
    assert any("apply the scale of 'Rig' (Ctrl+A > Scale)" in a.text for a in advice(result, i))


def test_scan_lists_instances_and_selects_their_instancer(addon):
    from instance_scenes import collection_instance

    spawner, _leaf = collection_instance(bpy.context.scene)
    assert bpy.ops.hierarchy_inspector.scan() == {"FINISHED"}
    settings = bpy.context.scene.hierarchy_inspector
    assert settings.scan_nodes == 2  # the instancer and its instance
    items = list(settings.scan_items)
    k = next(j for j, it in enumerate(items) if it.kind == "instance")
    assert items[k].object_name == "Spawner / Leaf #0" and items[k].instancer == "Spawner"
    settings.scan_index = k
    assert bpy.context.view_layer.objects.active == spawner and spawner.select_get()
    assert bpy.ops.hierarchy_inspector.select_flagged() == {"FINISHED"}
    assert spawner.select_get()
