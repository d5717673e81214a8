"""three.js (npm ``three``, run under node: GLTFLoader, AnimationMixer, SkinnedMesh) reading
the exact glTF exports of the demo scene, the Inherit Scale rig and an animated generated
Rigify rig with an auto-weighted mesh, compared with Blender at every exported frame:

- every node's ``matrixWorld`` against Blender's world matrix (objects by name, bones by
  their armature's skin; in the file's axes), relative 1e-5 as the export's own check;
- every skinned vertex three.js places (``SkinnedMesh.getVertexPosition``: its own
  skinning, the first JOINTS / WEIGHTS set, 4 influences) against Blender's evaluated
  mesh, 1e-5 of the mesh's bounding-box diagonal, at the vertices a 4-influence skin
  carries (at most 4 deform bones, none a B-Bone with segments); the others are measured.

Blender's plain exports of the same scenes are read the same way: off where the scenes
are sheared, which shows that the comparison can fail."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

import js_clients  # noqa: E402
from hierarchy_inspector.addon.model.frames import FrameRange  # noqa: E402
from hierarchy_inspector.addon.scene import demo_scenes, gltf_export  # noqa: E402
from hierarchy_inspector.addon.scene.exports import gltf_animated  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402
from hierarchy_inspector.addon.scene.timeline import animated  # noqa: E402
from scipy.spatial import cKDTree  # noqa: E402

TOLERANCE = 1e-5
#: The objects whose node the glTF exporter writes with its own fixed turn (not C @ W @ C^-1).
TURNED = {"CAMERA", "LIGHT"}


@pytest.fixture(autouse=True, scope="module")
def _node_available():
    why = js_clients.missing()
    if why is not None:
        pytest.fail(f"three.js cannot run: {why}", pytrace=False)


def _blender_worlds(scene, frame) -> dict[tuple[str, str], np.ndarray]:
    """Blender's world matrices at ``frame``: ``(object, '')`` and ``(armature, bone)``."""
    scene.frame_set(frame)
    out = {}
    for obj in scene.objects:
        if obj.type in TURNED:
            continue
        world = np.array(obj.matrix_world)
        out[(obj.name, "")] = world
        if obj.type == "ARMATURE":
            for pb in obj.pose.bones:
                out[(obj.name, pb.name)] = world @ np.array(pb.matrix)
    return out


def _file_nodes(gltf) -> dict[tuple[str, str], int]:
    """``(object, '')`` or ``(armature, bone)`` -> glTF node index (joints through their skin)."""
    out = {}
    joints = set()
    for skin in gltf.get("skins", []):
        for j in skin["joints"]:
            out[(skin["name"], gltf["nodes"][j]["name"])] = j
            joints.add(j)
    for j, node in enumerate(gltf["nodes"]):
        if j not in joints:
            out.setdefault((node.get("name", ""), ""), j)
    return out


def _gltf_json(path) -> dict:
    from hierarchy_inspector.addon.model.exports.gltf_file import Gltf

    return Gltf.load(str(path)).doc


def node_error(scene, path, frames, skip=()) -> tuple[float, int]:
    """three.js's node worlds against Blender's at ``frames``: the largest entry difference
    over the largest entry of Blender's matrices (at least 1), and the nodes compared."""
    fps = scene.render.fps / scene.render.fps_base
    times = np.float32(np.asarray(frames) / fps).astype(np.float64)  # the file's key times
    read = js_clients.three_read(path, times)
    index = _file_nodes(_gltf_json(path))
    c = gltf_export.gltf_conversion(True)
    worst, scale, compared = 0.0, 1.0, set()
    for t, frame in enumerate(frames):
        for key, world in _blender_worlds(scene, frame).items():
            if key[0] in skip or key not in index:
                continue
            expected = c @ world if key[1] else c @ world @ np.linalg.inv(c)
            got = read.worlds[t, index[key]]
            assert np.isfinite(got).all(), f"three.js left {key} out of the scene"
            worst = max(worst, float(np.abs(got - expected).max()))
            scale = max(scale, float(np.abs(world).max()))
            compared.add(key)
    return worst / scale, len(compared)


class VertexError(dict):
    """Per skinned mesh: the largest error over the mesh's diagonal at the vertices a
    4-influence skin carries (``carried``), at those weighted to more than 4 deform bones
    (``over_4``) and at those on B-Bones with segments (``bbone``), and how many of each
    (``n_carried``...) among the file's vertices."""


def _influences(obj) -> tuple[np.ndarray, np.ndarray]:
    """Per Blender vertex: how many deform bones weigh it, and whether one of them is a
    B-Bone with segments (what the Armature modifier deforms with)."""
    rig = next(m.object for m in obj.modifiers if m.type == "ARMATURE")
    names = {g.index: g.name for g in obj.vertex_groups}
    count, bbone = [], []
    for v in obj.data.vertices:
        bones = [rig.data.bones.get(names[g.group]) for g in v.groups if g.weight > 0]
        bones = [b for b in bones if b is not None and b.use_deform]
        count.append(len(bones))
        bbone.append(any(b.bbone_segments > 1 for b in bones))
    return np.array(count), np.array(bbone, dtype=bool)


def _evaluated_world(obj) -> np.ndarray:
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    co = np.empty(len(evaluated.data.vertices) * 3)
    evaluated.data.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    m = np.array(evaluated.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


def vertex_error(scene, path, frames) -> VertexError:
    """three.js's skinned vertices against Blender's evaluated meshes at ``frames``."""
    fps = scene.render.fps / scene.render.fps_base
    times = np.float32(np.asarray(frames) / fps).astype(np.float64)
    read = js_clients.three_read(path, times)
    gltf = _gltf_json(path)
    c3 = gltf_export.gltf_conversion(True)[:3, :3]
    out = VertexError()
    for skin in read.skins:
        obj = scene.objects[gltf["nodes"][skin.node]["name"]]
        base = np.empty(len(obj.data.vertices) * 3)
        obj.data.vertices.foreach_get("co", base)
        base = base.reshape(-1, 3) @ c3.T  # the exporter writes object-space positions, glTF axes
        distance, match = cKDTree(base).query(skin.rest)  # the exporter splits and reorders vertices
        count, bbone = _influences(obj)
        parts = {"carried": (count <= 4) & ~bbone, "over_4": (count > 4) & ~bbone, "bbone": bbone}
        expected = []
        for frame in frames:
            scene.frame_set(frame)
            expected.append(_evaluated_world(obj) @ c3.T)
        expected = np.array(expected)
        diagonal = float(np.linalg.norm(expected.max(axis=(0, 1)) - expected.min(axis=(0, 1))))
        assert distance.max() < 1e-5 * diagonal, "three.js's rest positions are not the mesh's"
        error = np.linalg.norm(skin.placed - expected[:, match], axis=-1).max(axis=0) / diagonal  # per file vertex
        entry = out.setdefault(obj.name, {**dict.fromkeys(parts, 0.0), **{f"n_{p}": 0 for p in parts}})
        for part, mask in parts.items():
            if mask[match].any():
                entry[part] = max(entry[part], float(error[mask[match]].max()))
            entry[f"n_{part}"] += int(mask[match].sum())
    return out


def _report(name, **numbers) -> None:
    print(
        f"three.js {name}: "
        + ", ".join(f"{k} {v:.2e}" if isinstance(v, float) else f"{k} {v}" for k, v in numbers.items())
    )


def test_demo_exact_export_in_three_js(empty_scene, tmp_path):
    scene = empty_scene
    demo_scenes.build_demo_scene(scene)
    bpy.context.window.scene = scene
    frame = scene.frame_current
    exact, plain = tmp_path / "demo_fixed.glb", tmp_path / "demo_plain.glb"
    result = gltf_animated.write_gltf_frames(scene, str(exact), None)
    assert result.error.relative < TOLERANCE
    gltf_export.export_gltf(str(plain))
    ours, compared = node_error(scene, exact, [frame])
    theirs, _ = node_error(scene, plain, [frame])
    _report("demo", exact=ours, plain=theirs, nodes=compared)
    assert compared >= 20
    assert ours < TOLERANCE
    assert theirs > 1e-2  # Blender's plain export drops the demo's shear: three.js shows it


@pytest.fixture(scope="module")
def inherit_scale_files(tmp_path_factory):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    export_scenes.inherit_scale_rig(scene)
    scene.frame_set(10)
    return _export_both(scene, tmp_path_factory.mktemp("inherit_scale"), FrameRange(1, 25, 1))


def _export_both(scene, folder, frames: FrameRange):
    """Our exact export (``exact.glb``, its own check passed) and Blender's plain one
    (``plain.glb``) of ``frames``: ``(scene, folder, the frames)``."""
    result = gltf_animated.write_gltf_frames(scene, str(folder / "exact.glb"), frames, half_frames=False)
    assert result.error.relative < TOLERANCE
    gltf_animated.export_gltf_frames(str(folder / "plain.glb"), frames)
    return scene, folder, frames.frames()


def test_inherit_scale_rig_nodes_in_three_js(inherit_scale_files):
    scene, folder, frames = inherit_scale_files
    ours, compared = node_error(scene, folder / "exact.glb", frames, skip={"Skin"})
    theirs, _ = node_error(scene, folder / "plain.glb", frames, skip={"Skin"})
    _report("Inherit Scale rig nodes", exact=ours, plain=theirs, nodes=compared, frames=len(frames))
    assert compared == 8  # the rig, its root and six children
    assert ours < TOLERANCE and theirs > 1e-2


def test_inherit_scale_rig_skinned_vertices_in_three_js(inherit_scale_files):
    scene, folder, frames = inherit_scale_files
    ours = vertex_error(scene, folder / "exact.glb", frames)["Skin"]
    theirs = vertex_error(scene, folder / "plain.glb", frames)["Skin"]
    _report("Inherit Scale rig vertices", exact=ours["carried"], plain=theirs["carried"], vertices=ours["n_carried"])
    assert ours["n_carried"] >= 48 and ours["n_over_4"] == ours["n_bbone"] == 0  # one bone per vertex
    assert ours["carried"] < TOLERANCE and theirs["carried"] > 1e-2


@pytest.fixture(scope="module")
def rigify_files(tmp_path_factory):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    rig = animated.stretchy_rigify(scene, frames=20, wiggle=True)  # the torso stretched at 15
    export_scenes.auto_weighted_body(scene, rig)
    return _export_both(scene, tmp_path_factory.mktemp("rigify"), FrameRange(9, 20, 1))


def test_rigify_nodes_in_three_js(rigify_files):
    scene, folder, frames = rigify_files
    ours, compared = node_error(scene, folder / "exact.glb", frames, skip={"Body"})
    theirs, _ = node_error(scene, folder / "plain.glb", frames, skip={"Body"})
    _report("Rigify nodes", exact=ours, plain=theirs, nodes=compared, frames=len(frames))
    assert compared > 800
    assert ours < TOLERANCE and theirs > 1e-2


def test_rigify_skinned_vertices_in_three_js(rigify_files):
    scene, folder, frames = rigify_files
    ours = vertex_error(scene, folder / "exact.glb", frames)["Body"]
    theirs = vertex_error(scene, folder / "plain.glb", frames)["Body"]
    _report("Rigify vertices exact", **ours)
    _report("Rigify vertices plain", **theirs)
    assert ours["n_carried"] > 500 and ours["n_over_4"] > 5 and ours["n_bbone"] > 1000
    assert ours["carried"] < TOLERANCE
    assert theirs["carried"] > 1e-2
