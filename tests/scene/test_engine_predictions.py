"""Every prediction of a plain export composes what Blender's exporters write: the
engine paths run on the inspection's file (Blender's ``Matrix.decompose()`` of each
local) agree with Blender's own plain glTF and FBX exports read back by independent
readers (pygltflib through ``gltf_reader``, ufbx), node by node; and the same paths run
on the file as read back agree with the inspection's predictions."""

from __future__ import annotations

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from gltf_reader import EngineView  # noqa: E402
from hierarchy_inspector import core  # noqa: E402
from hierarchy_inspector.addon.model.engines import paths  # noqa: E402
from hierarchy_inspector.addon.model.engines.files import read_back_file  # noqa: E402
from hierarchy_inspector.addon.model.engines.predict import engine_worlds  # noqa: E402
from hierarchy_inspector.addon.model.exports.fbx_check import read_fbx  # noqa: E402
from hierarchy_inspector.addon.scene import demo_scenes, gltf_export  # noqa: E402
from hierarchy_inspector.addon.scene.exports.fbx_export import export_fbx  # noqa: E402
from hierarchy_inspector.addon.scene.scan import scan_scene  # noqa: E402

#: Float32 files of a scene about 40 units across.
TOLERANCE = 2e-4


@pytest.fixture
def scene(addon):
    """The demo, and a plain child of the keep-transform child (its parent's local
    holds 33 degrees of shear, which the exporters' decomposition turns into a rotation
    that every descendant follows)."""
    scene = demo_scenes.build_demo_scene(bpy.context.scene)
    kept = bpy.data.objects["Kept child"]
    grandchild = bpy.data.objects.new("Grandchild", bpy.data.meshes.new("Grandchild"))
    grandchild.data.from_pydata([(x, y, z) for x in (-0.3, 0.3) for y in (-0.3, 0.3) for z in (-0.3, 0.3)], [], [])
    scene.collection.objects.link(grandchild)
    grandchild.parent = kept
    grandchild.location = (1.5, 0.5, 0.2)
    bpy.context.view_layer.update()
    return scene


def _old_model(ins) -> np.ndarray:
    """The matrix model with the X-keeping rotation (what the report composed before)."""
    local = core.TRS.from_decomposition(core.decompose(ins.local_matrices, rotation="gram-schmidt"))
    return ins.hierarchy.world_matrices(local.to_matrix())


def test_the_plain_gltf_is_the_predicted_matrix_model(scene, tmp_path):
    ins = scan_scene(scene)
    path = str(tmp_path / "plain.glb")
    gltf_export.write_gltf(scene, path, y_up=False, helpers=False)
    view = EngineView(path)
    names = view.names()
    file_world = view.worlds(0.0)
    predicted = ins.engine_worlds[paths.MATRIX]
    compared = 0
    for i, (obj, bone) in enumerate(ins.nodes.keys):
        name = bone or obj
        if name not in names or ins.nodes.types[i] == "ARMATURE":
            continue
        got = file_world[names.index(name)]
        assert np.abs(got - predicted[i]).max() < TOLERANCE, (name, np.abs(got - predicted[i]).max())
        compared += 1
    assert compared >= 20
    # The grandchild shows why: the X-keeping rotation puts it far from the file.
    g = ins.nodes.index()[("Grandchild", "")]
    old = _old_model(ins)[g]
    assert np.abs(old - file_world[names.index("Grandchild")]).max() > 0.1


def test_the_plain_fbx_is_the_predicted_matrix_model_and_unreal_reads_it_as_predicted(scene, tmp_path):
    ins = scan_scene(scene)
    path = str(tmp_path / "plain.fbx")
    export_fbx(path, None)
    read = read_fbx(path, [scene.frame_current / scene.render.fps])
    assert read is not None
    column = read.index()
    file_unreal = engine_worlds(read_back_file(read.parents, read.worlds[0]), (paths.UNREAL_FBX,))[paths.UNREAL_FBX]
    compared = 0
    for i, (obj, bone) in enumerate(ins.nodes.keys):
        k = column.get((obj, bone) if bone else ("", obj))
        if k is None or ins.nodes.types[i] in ("ARMATURE", "CAMERA", "LIGHT"):
            continue
        size = max(1.0, float(np.abs(ins.nodes.world[i]).max()))
        assert np.abs(read.worlds[0, k] - ins.engine_worlds[paths.MATRIX][i]).max() < TOLERANCE * size, (obj, bone)
        # Unreal's classic importer run on the file as ufbx reads it: the inspection's prediction.
        assert np.abs(file_unreal[k] - ins.engine_worlds[paths.UNREAL_FBX][i]).max() < TOLERANCE * size, (obj, bone)
        compared += 1
    assert compared >= 20
