"""A generated Rigify human rig (about 700 bones, every Inherit Scale mode) after two
squash-and-stretch edits: the scan groups by cause, filters and selects in Pose mode,
the panel reads only the active chain, and the bone advice holds when applied."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.advice.actions import advice  # noqa: E402
from hierarchy_inspector.addon.model.exports.accumulated import accumulated_locals  # noqa: E402
from hierarchy_inspector.addon.scene import live  # noqa: E402
from hierarchy_inspector.addon.scene.scan import read_chain, scan_scene  # noqa: E402
from hierarchy_inspector.addon.scene.selection import is_bone_selected  # noqa: E402
from hierarchy_inspector.addon.ui.lists import visible  # noqa: E402

EDITS = {"torso": (1.3, 1.0, 0.7), "upper_arm_fk.L": (1.0, 1.4, 0.8)}


@pytest.fixture(scope="module")
def rig_file(tmp_path_factory):
    import addon_utils

    bpy.ops.wm.read_factory_settings(use_empty=True)
    if not addon_utils.enable("rigify", default_set=True):
        pytest.skip("Blender's Rigify add-on is not available")
    bpy.ops.object.armature_human_metarig_add()
    bpy.ops.pose.rigify_generate()
    rig = bpy.context.view_layer.objects.active
    for bone, scale in EDITS.items():
        rig.pose.bones[bone].scale = scale
    bpy.context.view_layer.update()
    path = str(tmp_path_factory.mktemp("rig") / "rigify.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path, copy=True)
    return path


@pytest.fixture
def rig(addon, rig_file):
    bpy.ops.wm.open_mainfile(filepath=rig_file)
    return bpy.data.objects["rig"]


def _mechanism(rig, name: str) -> list[str]:
    """``name`` and the bones above it, each step to the bone its constraints copy
    (Copy Transforms, Child Of, Armature) or else to its parent."""
    from hierarchy_inspector.addon.scene.scan import followed_target

    out: list[str] = []
    pb = rig.pose.bones.get(name)
    while pb is not None and pb.name not in out:
        out.append(pb.name)
        found = followed_target(pb.constraints)
        pb = rig.pose.bones.get(found[1]) if found is not None and found[0] == rig and found[1] else pb.parent
    return out


def test_two_edits_give_two_cause_groups_and_the_filters_split_them(rig):
    assert bpy.ops.hierarchy_inspector.scan() == {"FINISHED"}
    settings = bpy.context.scene.hierarchy_inspector
    items = list(settings.scan_items)
    assert len(rig.pose.bones) > 600 and len(items) > 300
    groups = {(g.object_name, g.bone_name): g for g in settings.scan_groups}
    assert {("rig", "torso"), ("rig", "upper_arm_fk.L")} <= groups.keys()
    assert groups[("rig", "torso")].label == "torso (1.3, 1, 0.7)"
    # Every other group holds nodes with no scaled node above them (constraints copy the
    # edit from elsewhere): no third edit is invented.
    assert all(g.object_name == "" for key, g in groups.items() if key not in {("rig", b) for b in EDITS})
    assert sum(g.count for g in settings.scan_groups) == len(items)
    # The biggest group is the torso's; its members all lie below the torso bone, up
    # their parents or up the bone their constraints copy (Rigify's DEF- bones copy tweaks).
    torso = next(k for k, g in enumerate(settings.scan_groups) if g.bone_name == "torso")
    for it in items:
        if it.group == torso and it.bone_name:
            assert "torso" in _mechanism(rig, it.bone_name), it.bone_name
    # Kind filters: objects, deform bones, all bones, and the cause filter.
    settings.scan_kind = "DEFORM"
    deform = [it for it in items if visible(it, settings)]
    assert deform and all(rig.data.bones[it.bone_name].use_deform for it in deform)
    assert len(deform) == sum(1 for it in items if it.bone_name and rig.data.bones[it.bone_name].use_deform)
    settings.scan_kind = "OBJECTS"
    assert all(not it.bone_name for it in items if visible(it, settings))
    settings.scan_kind = "BONES"
    settings.scan_by_cause = True
    settings.scan_group_index = next(k for k, g in enumerate(settings.scan_groups) if g.bone_name == "upper_arm_fk.L")
    arm = [it for it in items if visible(it, settings)]
    assert 0 < len(arm) == settings.scan_groups[settings.scan_group_index].count


def test_click_and_select_flagged_in_pose_mode(rig):
    bpy.ops.hierarchy_inspector.scan()
    settings = bpy.context.scene.hierarchy_inspector
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    items = list(settings.scan_items)
    k = next(j for j, it in enumerate(items) if it.bone_name)
    settings.scan_index = k
    assert rig.mode == "POSE" and rig.data.bones.active.name == items[k].bone_name
    assert is_bone_selected(rig, items[k].bone_name)
    assert sum(is_bone_selected(rig, b.name) for b in rig.pose.bones) == 1
    assert bpy.ops.hierarchy_inspector.select_flagged() == {"FINISHED"}
    flagged = {it.bone_name for it in items if it.bone_name}
    selected = {b.name for b in rig.pose.bones if is_bone_selected(rig, b.name)}
    assert selected == flagged
    # An object row while in Pose mode: back to Object mode, the object selected.
    j = next((j for j, it in enumerate(items) if not it.bone_name), None)
    if j is not None:
        settings.scan_index = j
        assert bpy.context.view_layer.objects.active.name == items[j].object_name
        assert bpy.context.mode == "OBJECT"


def test_the_panel_reads_the_chain_not_the_rig(rig):
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    bone = rig.pose.bones["DEF-forearm.L.001"]
    with bpy.context.temp_override(active_pose_bone=bone):
        nodes, chain = read_chain(bpy.context)
        expected = ["rig", *[f"rig > {b.name}" for b in reversed(bone.parent_recursive)], "rig > DEF-forearm.L.001"]
        assert [nodes.label(i) for i in chain] == expected
        # Beside the chain, only the chain of the bone it copies (its mechanism) is read.
        copied = rig.pose.bones[bone.constraints["Copy Transforms"].subtarget]
        mechanism = {f"rig > {b.name}" for b in (copied, *copied.parent_recursive)}
        assert {nodes.label(i) for i in range(len(nodes))} == set(expected) | mechanism
        assert len(nodes) < 40  # nothing else of the 700 bones is read
        full = scan_scene(bpy.context.scene).nodes
        index = full.index()
        rows = [index[k] for k in nodes.keys]
        assert np.allclose(full.world[rows], nodes.world)
        assert [full.notes[r] for r in rows] == nodes.notes
        assert np.allclose(full.channel_scale[rows], nodes.channel_scale)
        assert [full.inherit_scale[r] for r in rows] == nodes.inherit_scale


def test_a_turned_torso_scans_and_the_chain_equals_the_scan(rig):
    """Turning the torso leaves float32 round-off in the bottom row of some constrained
    bones' pose matrices (w = 1 - 6e-8 on the lip bones): Blender's matrices are read
    as the affine matrices they are, the scan and the panel go on."""
    torso = rig.pose.bones["torso"]
    torso.rotation_mode = "XYZ"
    seen_off = 0.0
    for turn in (0.01, 0.02, 0.3):
        torso.rotation_euler[2] = turn
        bpy.context.view_layer.update()
        seen_off = max(seen_off, max(abs(pb.matrix[3][3] - 1.0) for pb in rig.pose.bones))
        result = scan_scene(bpy.context.scene)
        assert (result.nodes.world[:, 3, :] == (0.0, 0.0, 0.0, 1.0)).all()
    assert seen_off > 0.0  # the case really occurred (it does in Blender 5.0)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    with bpy.context.temp_override(active_pose_bone=rig.pose.bones["lip.B.R.001"]):
        view = live.chain_view(bpy.context)
        assert view is not None
        index = result.nodes.index()
        rows = [index[view.inspection.nodes.keys[i]] for i in view.chain]
        assert np.allclose(
            result.analysis.matrix_model_deviation.max_corner[rows],
            view.inspection.analysis.matrix_model_deviation.max_corner[view.chain],
            atol=1e-9,
        )


def test_after_every_torso_turn_the_panel_chain_shows_the_scan_numbers(rig):
    """What the panel computes per change (its kept rest offsets, small joined batches,
    the chain's own fold order) equals the scan's rows for every number it shows: the
    notes and flags exactly, the numbers to round-off."""
    from hierarchy_inspector.addon.model.views import accumulated_export_residual

    torso = rig.pose.bones["torso"]
    torso.rotation_mode = "XYZ"
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    for bone in ("DEF-forearm.L.001", "DEF-spine.003", "hand_ik.R"):
        for turn in (0.05, -0.2):
            torso.rotation_euler[2] = turn
            bpy.context.view_layer.update()
            scan = scan_scene(bpy.context.scene)
            with bpy.context.temp_override(active_pose_bone=rig.pose.bones[bone]):
                view = live.chain_view(bpy.context)
            chain = view.inspection
            rows = [scan.nodes.index()[k] for k in chain.nodes.keys]
            assert chain.nodes.keys[view.active] == ("rig", bone)
            assert [scan.nodes.notes[r] for r in rows] == chain.nodes.notes
            for name in ("flagged", "sheared", "lossy_local"):
                assert (getattr(scan, name)[rows] == getattr(chain, name)).all(), (bone, name)
            a, b = scan.analysis, chain.analysis
            pairs = {
                "box_min": (scan.nodes.box_min, chain.nodes.box_min),
                "box_max": (scan.nodes.box_max, chain.nodes.box_max),
                "worst_corner": (scan.worst_corner, chain.worst_corner),
                "shear": (a.shear_deg, b.shear_deg),
                "local shear": (scan.local_shear_deg, chain.local_shear_deg),
                "local scale": (a.local.scale, b.local.scale),
                "matrix model": (a.world_matrix_model, b.world_matrix_model),
                "matrix moved": (a.matrix_model_deviation.position, b.matrix_model_deviation.position),
                "accumulated": (a.accumulated_matrix, b.accumulated_matrix),
                "accumulated turned": (a.accumulated_deviation.rotation_deg, b.accumulated_deviation.rotation_deg),
                "lossy scale": (a.lossy_scale, b.lossy_scale),
                "residual": (accumulated_export_residual(scan), view.residual),
            }
            for name, (whole, part) in pairs.items():
                np.testing.assert_allclose(whole[rows], part, rtol=1e-9, atol=1e-9, err_msg=f"{bone} {name}")


def test_bone_advice_holds_on_the_rig(rig, rig_file, tmp_path):
    before = scan_scene(bpy.context.scene)
    limit = before.thresholds.corner
    given: dict = {}
    for i in np.flatnonzero(before.flagged):
        for a in advice(before, int(i)):
            given.setdefault((a.action, before.nodes.keys[a.target]), []).append(before.nodes.keys[int(i)])
    actions = {action for action, _t in given}
    assert {
        "INHERIT_ALIGNED",
        "UNIFORM_SCALE",
        "EXPORT_FBX_ACCUMULATED",
        "EXPORT_FBX_EXACT",
        "EXPORT_GLTF_EXACT",
    } <= actions
    assert not actions & {"INSERT_HELPERS", "CLEAR_PARENT_INVERSE", "BAKE"}  # bones only on this rig
    residual = accumulated_locals(before)[1].max_corner
    from hierarchy_inspector.addon.model.views import accumulated_export_residual
    from hierarchy_inspector.addon.scene.exports.fbx_accumulated import write_fbx_accumulated

    assert np.allclose(accumulated_export_residual(before), residual, atol=1e-9)  # what the panel shows
    index = before.nodes.index()
    # Export FBX (accumulated), written and read back, accumulated as Unreal (locals) and Ogre do.
    written = write_fbx_accumulated(bpy.context.scene, str(tmp_path / "accumulated.fbx"), None, again=False)
    assert written.error is not None and written.error.relative < 1e-5
    for (action, _target), keys in given.items():
        if action == "EXPORT_FBX_ACCUMULATED":
            for obj, bone in keys:
                assert residual[index[(obj, bone)]] <= limit
                assert written.skew[f"{obj} > {bone}" if bone else obj] <= limit, (obj, bone)
    # Inherit Scale Aligned on the three worst advised bones, one at a time.
    aligned = [t for (action, t) in given if action == "INHERIT_ALIGNED"]
    aligned.sort(key=lambda t: -before.worst_corner[index[t]])
    for key in aligned[:3]:
        bpy.ops.wm.open_mainfile(filepath=rig_file)
        bpy.data.objects[key[0]].data.bones[key[1]].inherit_scale = "ALIGNED"
        bpy.context.view_layer.update()
        after = scan_scene(bpy.context.scene)
        i = after.nodes.index()[key]
        assert not after.sheared[i] and accumulated_locals(after)[1].max_corner[i] <= limit, key
    # A uniform scale on the edited bone clears every node that advice was given for.
    for (action, target), keys in given.items():
        if action != "UNIFORM_SCALE":
            continue
        bpy.ops.wm.open_mainfile(filepath=rig_file)
        bpy.data.objects[target[0]].pose.bones[target[1]].scale = (1.0, 1.0, 1.0)
        bpy.context.view_layer.update()
        after = scan_scene(bpy.context.scene)
        still = [k for k in keys if after.flagged[after.nodes.index()[k]]]
        assert not still, (target, still[:5], len(still))


def _drawn_colours(style) -> np.ndarray:
    """Every colour the overlay can draw (the skew ramp sampled, the axis shades)."""
    from hierarchy_inspector.addon.model.overlay_geometry import skew_colours

    ramp = skew_colours(np.linspace(0.2, 40.0, 9), style)[:, :3]
    fixed = np.array([style.colour_blender, style.colour_accumulated])[:, :3]
    return np.vstack([ramp, fixed])


def test_overlay_palette_keeps_clear_of_theme_and_rigify_bone_colours(rig):
    from hierarchy_inspector.addon.scene import settings

    theme = bpy.context.preferences.themes[0]
    bone_colours = [tuple(getattr(s, a)) for s in theme.bone_color_sets for a in ("normal", "select", "active")]
    view = theme.view_3d
    bone_colours += [tuple(view.bone_pose)[:3], tuple(view.bone_pose_active)[:3], tuple(view.bone_solid)[:3]]
    rigify = {tuple(b.color.custom.normal) for b in rig.pose.bones if b.color.palette == "CUSTOM"}
    rigify |= {tuple(b.color.custom.normal) for b in rig.data.bones if b.color.palette == "CUSTOM"}
    assert len(rigify) >= 4  # Rigify's IK / FK / tweak / special colours
    reference = np.array(bone_colours + sorted(rigify))[:, :3]
    drawn = _drawn_colours(settings.overlay_style(bpy.context))
    # Axis shades as the overlay builds them: drawn for a flagged node.
    from hierarchy_inspector.addon.model.overlay_geometry import overlay_lines

    scan = scan_scene(bpy.context.scene)
    worst = scan.worst_first()[:1]
    _coords, colours = overlay_lines(scan, worst, settings.overlay_style(bpy.context), axes=True)
    drawn = np.vstack([drawn, np.unique(colours[:, :3], axis=0)])
    distance = np.linalg.norm(drawn[:, None, :] - reference[None, :, :], axis=-1).min()
    assert distance > 0.25, distance


def test_overlay_draws_no_cage_and_at_most_the_worst_n(rig):
    from hierarchy_inspector.addon.model.overlay_geometry import overlay_indices

    scan = scan_scene(bpy.context.scene)
    index = scan.nodes.index()
    arm = index[("rig", "")]
    assert not scan.flagged[arm]
    chain = scan.nodes.chain(index[("rig", "DEF-forearm.L.001")])
    shown = overlay_indices(scan, chain)
    assert arm not in shown and len(shown) == len(chain) - 1
    flagged = np.flatnonzero(scan.flagged)
    worst = overlay_indices(scan, flagged, 25)
    assert list(worst) == sorted(scan.worst_first(flagged)[:25].tolist())
    per_cause = overlay_indices(scan, flagged, 25, per_cause=True)
    settings = bpy.context.scene.hierarchy_inspector
    bpy.ops.hierarchy_inspector.scan()
    assert len(per_cause) == len(settings.scan_groups)
    assert {scan.nodes.keys[i] for i in per_cause} == {
        (it.object_name, it.bone_name)
        for it in (next(x for x in settings.scan_items if x.group == g) for g in range(len(settings.scan_groups)))
    }
