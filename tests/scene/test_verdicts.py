"""Read-back verdicts on scenes built the way users build them (tests/user_scenes.py):
no false alarm on cameras, lights, unit scales and instanced characters; no missed
error on skinned vertices; never worse than Blender's plain export; files without
unused parts. Every file is read back independently (ufbx, pygltflib) as well."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import user_scenes  # noqa: E402
from gltf_reader import EngineView  # noqa: E402
from hierarchy_inspector.addon.model.exports.animated_gltf import CHECK_TOLERANCE  # noqa: E402
from hierarchy_inspector.addon.model.exports.gltf_file import Gltf  # noqa: E402
from hierarchy_inspector.addon.model.frames import FrameRange  # noqa: E402
from hierarchy_inspector.addon.scene import gltf_export  # noqa: E402
from hierarchy_inspector.addon.scene.exports import gltf_animated, gltf_hook  # noqa: E402


def _fbx():
    pytest.importorskip("ufbx")
    from hierarchy_inspector.addon.scene.exports import fbx_export

    return fbx_export


# -- false alarms ---------------------------------------------------------------------------


@pytest.mark.parametrize("frames", [None, FrameRange(1, 10, 1)])
def test_fbx_cameras_and_lights_read_back_with_the_exporters_turn(empty_scene, tmp_path, frames):
    """Blender's FBX exporter turns cameras (90 deg about Y) and lights (90 about X):
    compared without the turn every camera and light was off by 0.2 relative. Their
    child is written without the turn undone (a real error of the exporter's file, 1
    unit here): named, not hidden."""
    fbx_export = _fbx()
    user_scenes.cameras_and_lights(empty_scene, animated=frames is not None)
    result = fbx_export.write_fbx(empty_scene, str(tmp_path / "c.fbx"), frames, again=False)
    per_node = result.error.per_node
    assert max(per_node[n] for n in ("Cube", "Camera", "Sun", "Spot")) < 1e-5 * 10, per_node
    assert per_node["CamChild"] > 0.5  # the exporter's own misplacement, reported


@pytest.mark.parametrize("scale_length", [0.01, 0.1, 1.0])
def test_fbx_read_back_in_the_scenes_units(empty_scene, tmp_path, scale_length):
    """A scene in centimetres (0.01) or decimetres (0.1): the file is exact once read in
    the scene's units (it was compared in metres: 0.99 and 0.90 relative off)."""
    fbx_export = _fbx()
    user_scenes.unit_scaled(empty_scene, scale_length)
    result = fbx_export.write_fbx(empty_scene, str(tmp_path / "u.fbx"), None, again=False)
    assert result.error.checked == 2 and result.error.relative < 1e-6


@pytest.mark.parametrize(
    "options",
    [
        {"apply_scale_options": "FBX_SCALE_NONE", "global_scale": 2.0},
        {"apply_scale_options": "FBX_SCALE_UNITS", "global_scale": 0.5},
        {"apply_scale_options": "FBX_SCALE_CUSTOM", "global_scale": 3.0},
        {"apply_scale_options": "FBX_SCALE_ALL", "global_scale": 1.5},
        {"apply_scale_options": "FBX_SCALE_NONE", "apply_unit_scale": False},
    ],
)
def test_fbx_unit_meters_follows_every_exporter_scale_option(empty_scene, tmp_path, options):
    """What the file holds in metres per scene unit, for each of Blender's Apply
    Scalings choices, Scale and Apply Unit, on a scene in decimetres: ufbx reads the
    file back onto Blender's scene scaled by exactly that factor."""
    from hierarchy_inspector.addon.model.exports.fbx_check import compare, fbx_unit_meters, read_fbx
    from hierarchy_inspector.addon.scene.frames import read_frames

    pytest.importorskip("ufbx")
    user_scenes.unit_scaled(empty_scene, 0.1)
    out = str(tmp_path / "s.fbx")
    bpy.ops.export_scene.fbx(filepath=out, add_leaf_bones=False, **options)
    units = empty_scene.unit_settings
    meters = fbx_unit_meters(
        units.scale_length, units.system, options.get("apply_unit_scale", True), options.get("global_scale", 1.0)
    )
    series = read_frames(empty_scene, [empty_scene.frame_current])
    expected = 0.1 * options.get("global_scale", 1.0) if options.get("apply_unit_scale", True) else None
    if expected is not None:
        assert meters == pytest.approx(expected)
    read = read_fbx(out, [0.0], unit_meters=meters)
    assert compare(read, series.keys, series.world).relative < 1e-6
    wrong = read_fbx(out, [0.0], unit_meters=meters * 1.5)
    assert compare(wrong, series.keys, series.world).relative > 0.1


def test_gltf_cameras_and_lights_exported_from_the_dialog_are_exact(empty_scene, tmp_path):
    """File > Export > glTF with cameras and lights: the exporter turns their nodes so
    that they keep looking down -Z (and compensates their children); compared as
    converted objects they were 1.3 units off."""
    user_scenes.cameras_and_lights(empty_scene)
    path = str(tmp_path / "cl.glb")
    bpy.ops.export_scene.gltf(
        filepath=path, export_format="GLB", export_cameras=True, export_lights=True, export_current_frame=True
    )
    result = gltf_hook.keep_shear_in_file(empty_scene, gltf_hook.HookSettings(path))
    assert result.corrected and result.error.checked == 5, result.why
    assert result.error.relative < 1e-6, result.error.per_node
    worlds = EngineView(path).worlds(0.0)  # independently: the camera's -Z looks where Blender's does
    view = EngineView(path)
    camera = next(j for j, n in enumerate(view.gltf.nodes) if n.name == "Camera")
    c = gltf_export.gltf_conversion(True)
    blender = np.array(empty_scene.objects["Camera"].matrix_world)
    np.testing.assert_allclose(worlds[camera][:3, 2], (c @ blender)[:3, 2], atol=1e-6)


@pytest.mark.parametrize("excluded", [True, False])
def test_gltf_instanced_character_is_not_matched_to_its_copy(empty_scene, tmp_path, excluded):
    """A character instanced from its collection: the file holds the armature, its bones
    and its mesh twice (the instance's copy under 'Character'); the scene's armature was
    matched to the copy, 3 units away, and its skinned mesh to the copy's (3.3 of its
    size). The instancer is checked as a node, and said to be one; its instanced
    objects are the ones not checked."""
    user_scenes.instanced_character(empty_scene, excluded=excluded)
    result = gltf_animated.write_gltf_frames(empty_scene, str(tmp_path / "i.glb"), None)
    assert result.error.relative < 1e-6 and "Armature > Head" in result.error.per_node
    assert "Character" in result.error.per_node
    assert (("Character", gltf_hook.INSTANCED)) in result.not_checked
    assert result.skins.meshes["Body"].exact  # skinned by the character's own skin, not the copy's


def test_gltf_one_frame_range_is_that_frame(empty_scene, tmp_path):
    """``--frames 3:3``: the exporter writes no animation for one frame, and its static
    pose was the scene's current frame (3.8e-2 units off frame 3)."""
    cube = user_scenes.moving_cube(empty_scene)
    out = tmp_path / "one.glb"
    result = gltf_animated.write_gltf_frames(empty_scene, str(out), FrameRange(3, 3, 1))
    assert empty_scene.frame_current == 1 and result.error.relative < 1e-6
    node = next(j for j, n in enumerate(EngineView(out).gltf.nodes) if n.name == "Cube")
    empty_scene.frame_set(3)
    blender = gltf_export.gltf_conversion(True) @ np.array(cube.matrix_world)
    assert abs(EngineView(out).worlds(3 / 24)[node][0, 3] - blender[0, 3]) < 1e-6


# -- files as validators expect them --------------------------------------------------------


def test_animated_gltf_keeps_no_unused_samplers_and_still_helpers_get_one_key(empty_scene, tmp_path):
    """A sheared child whose shear never changes under a parent that moves: its helper and
    its own channels stay put (one key each), and the samplers of the channels the
    helpers replaced are gone, with the accessors and buffer views only they held."""
    parent = bpy.data.objects.new("Parent", None)
    empty_scene.collection.objects.link(parent)
    parent.rotation_euler, parent.scale = (0.0, 0.0, 0.6), (3.0, 1.0, 1.0)
    for frame, x in ((1, 0.0), (20, 2.0)):
        parent.location = (x, 0.0, 0.0)
        parent.keyframe_insert("location", frame=frame)
    child = bpy.data.objects.new("Child", None)
    empty_scene.collection.objects.link(child)
    empty_scene.frame_set(1)
    child.parent = parent  # Set Parent (keep transform): a sheared parent inverse
    child.matrix_parent_inverse = parent.matrix_world.inverted()
    child.location, child.rotation_euler = (1.0, 0.5, 0.0), (0.0, 0.0, 0.7)
    child.keyframe_insert("location", frame=1)  # the exporter writes it a channel
    out = tmp_path / "still.glb"
    result = gltf_animated.write_gltf_frames(empty_scene, str(out), FrameRange(1, 20, 1), half_frames=False)
    assert result.helpers == ["Child"] and result.error.relative < 1e-6
    doc = Gltf.load(str(out)).doc
    used = {ch["sampler"] for a in doc["animations"] for ch in a["channels"]}
    assert all(len({c["sampler"] for c in a["channels"]}) == len(a["samplers"]) for a in doc["animations"]), used
    referenced = {s[k] for a in doc["animations"] for s in a["samplers"] for k in ("input", "output")}
    referenced |= {v for m in doc.get("meshes", []) for p in m["primitives"] for v in p["attributes"].values()}
    referenced |= {p["indices"] for m in doc.get("meshes", []) for p in m["primitives"] if "indices" in p}
    assert referenced == set(range(len(doc["accessors"])))
    assert {a["bufferView"] for a in doc["accessors"]} == set(range(len(doc["bufferViews"])))
    names = [n.get("name") for n in doc["nodes"]]
    helper, node = names.index("Child (shear helper)"), names.index("Child")
    for a in doc["animations"]:
        for ch in a["channels"]:
            if ch["target"]["node"] in (helper, node):
                assert doc["accessors"][a["samplers"][ch["sampler"]]["output"]]["count"] == 1
    view = EngineView(out)  # independently: the child where Blender has it at every frame
    c = gltf_export.gltf_conversion(True)
    for frame in (1, 7, 20):
        empty_scene.frame_set(frame)
        expected = c @ np.array(child.matrix_world) @ np.linalg.inv(c)
        np.testing.assert_allclose(view.worlds(frame / 24)[node], expected, atol=1e-5)


# -- skinned meshes checked by their vertices -----------------------------------------------


def _blender_vertices(scene, obj, frame) -> np.ndarray:
    scene.frame_set(frame)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return np.array([(evaluated.matrix_world @ v.co)[:] for v in evaluated.data.vertices])


@pytest.mark.parametrize("all_influences", [False, True])
def test_gltf_six_weights_per_vertex(empty_scene, tmp_path, all_influences):
    """Six bones weigh every vertex; Blender's glTF exporter keeps four by default: the
    joints are exact and the vertices are not (it was declared exact). The check names
    the mesh, its worst vertex and why; with every influence written it passes, and
    three.js's view (the first set alone) is measured beside it. Independently:
    tests/gltf_reader.py's loop skinning of the first set gives the check's numbers."""
    from hierarchy_inspector.addon.model.exports.verdicts.skinned import skinned_vertices

    body = user_scenes.six_weights(empty_scene)
    out = tmp_path / "six.glb"
    result = gltf_animated.write_gltf_frames(
        empty_scene, str(out), FrameRange(1, 24, 1), half_frames=False, all_influences=all_influences
    )
    assert result.error.relative < 1e-5
    mesh = result.skins.meshes["Body"]
    if all_influences:
        assert mesh.exact and mesh.relative < 1e-5
        assert mesh.cause.startswith("with the first influence set alone (three.js) 4.7e-03 of its size")
    else:
        assert not mesh.exact and mesh.relative > 1e-3
        assert "6 bones weigh it, the file keeps 4" in mesh.cause
        assert ("Body", gltf_hook.THROUGH_JOINTS) not in result.not_checked
    gltf, view = Gltf.load(str(out)), EngineView(out)
    node = next(j for j, n in enumerate(view.gltf.nodes) if n.name == "Body")
    t = mesh.frame / 24
    from hierarchy_inspector.addon.model.exports.gltf_animation import world_matrices_at

    first, _rest = skinned_vertices(gltf, node, world_matrices_at(gltf, [t]), [t], sets=1)
    np.testing.assert_allclose(first[0], view.skinned_positions(node, t), atol=1e-6)
    # the worst vertex: where the check says, as far as it says, against Blender's own mesh
    placed, _rest = skinned_vertices(gltf, node, world_matrices_at(gltf, [t]), [t])
    c = gltf_export.gltf_conversion(True)
    blender = _blender_vertices(empty_scene, body, mesh.frame) @ c[:3, :3].T
    nearest = np.linalg.norm(placed[0] - blender[mesh.vertex], axis=-1).min()
    assert nearest == pytest.approx(mesh.distance, rel=1e-6, abs=1e-9)


def test_fbx_six_weights_per_vertex_are_exact(empty_scene, tmp_path):
    """FBX clusters hold every weight: the vertices read back through ufbx are exact, and
    checked one by one against Blender's evaluated mesh."""
    fbx_export = _fbx()
    body = user_scenes.six_weights(empty_scene)
    result = fbx_export.write_fbx(empty_scene, str(tmp_path / "six.fbx"), FrameRange(1, 24, 1), again=False)
    mesh = result.skins.meshes["Body"]
    assert mesh.exact and mesh.vertices == len(body.data.vertices)
    assert not any(name == "Body" for name, _why in result.not_checked)


def test_fbx_skinned_check_sees_a_wrong_file(empty_scene, tmp_path):
    """The same check on a file whose skin is wrong (the armature posed differently
    after the export): the worst vertex is named, the error is what Blender's mesh
    shows, not hidden by the joints' own check."""
    from hierarchy_inspector.addon.model.exports.fbx_check import read_fbx
    from hierarchy_inspector.addon.scene.exports.skinned import EvaluatedVertices, check_fbx

    fbx_export = _fbx()
    body = user_scenes.six_weights(empty_scene)
    out = str(tmp_path / "six.fbx")
    fbx_export.export_fbx(out, FrameRange(5, 5, 1))
    empty_scene.frame_set(12)
    vertices = EvaluatedVertices([body], 1)
    vertices.read(0)
    read = read_fbx(out, [5 / 24], skinned=["Body"])
    check = check_fbx(read.skinned, vertices, [12])
    error = check.meshes["Body"]
    assert not error.exact and error.relative > 1e-3
    placed = _blender_vertices(empty_scene, body, 12)
    assert np.linalg.norm(read.skinned["Body"][0][error.vertex] - placed[error.vertex]) == pytest.approx(error.distance)


# -- never worse than Blender's plain export ------------------------------------------------


@pytest.mark.parametrize("hips_scale", [1.0, 1.0002])
def test_ik_legs_are_never_worse_than_blenders_plain_export(empty_scene, tmp_path, hips_scale):
    """IK legs solved by iTaSC: the thighs hold 5e-4 deg of local shear (7.8e-3 with the
    hips scaled 1.0002), the shins none. Helper bones above the thighs made the copy
    solve the shins' IK again: the file was 0.38 relative off (plain: 1.3e-6 and
    2.0e-5). Where the shear moves nothing no helper is added; where it does, the file
    is compared with the plain export and the helpers the IK runs through left out."""
    from hierarchy_inspector.addon.model.exports.fbx_check import compare, read_fbx
    from hierarchy_inspector.addon.scene.exports.fbx_facts import read_facts
    from hierarchy_inspector.addon.scene.frames import read_frames

    fbx_export = _fbx()
    user_scenes.ik_legs(empty_scene, hips_scale)
    result = fbx_export.write_fbx(empty_scene, str(tmp_path / "ik.fbx"), None, again=False)
    if hips_scale == 1.0:
        assert result.helpers == [] and result.plain is None  # nothing to keep, nothing compared
        assert result.error.relative < CHECK_TOLERANCE
    else:
        dropped = dict(result.not_corrected)
        assert "Character > Thigh.L" in dropped and "plain export" in dropped["Character > Thigh.L"]
        assert result.plain is not None and result.worse_than_plain == {}
        for label, error in result.error.per_node.items():  # against the plain file read with the same Blender
            assert error <= max(result.plain.per_node[label], CHECK_TOLERANCE), label
    # independently: Blender's plain export read back against Blender read again (iTaSC
    # keeps state between evaluations: the two readings of Blender differ by 1e-4)
    plain = str(tmp_path / "plain.fbx")
    fbx_export.export_fbx(plain, None)
    series = read_frames(empty_scene, [empty_scene.frame_current])
    turns = read_facts(empty_scene, series.keys).turns()
    theirs = compare(read_fbx(plain, [1 / 24]), series.keys, series.world, turns=turns)
    assert result.error.relative < max(10 * theirs.relative, CHECK_TOLERANCE)


@pytest.mark.parametrize("build", ["units", "cameras"])
def test_accumulated_fbx_reads_back_in_scene_units_with_the_turns(empty_scene, tmp_path, build):
    """The accumulated FBX (``--engine ogre``) goes through the same reader: a scene in
    decimetres was 0.9 relative off, cameras and lights 0.2."""
    pytest.importorskip("ufbx")
    from hierarchy_inspector.addon.scene.exports.fbx_accumulated import write_fbx_accumulated

    if build == "units":
        user_scenes.unit_scaled(empty_scene, 0.1)
    else:
        user_scenes.cameras_and_lights(empty_scene)
        bpy.data.objects.remove(empty_scene.objects["CamChild"])
    result = write_fbx_accumulated(empty_scene, str(tmp_path / "acc.fbx"), None, again=False)
    assert result.error.checked >= 2 and result.error.relative < 1e-6, result.error.per_node
