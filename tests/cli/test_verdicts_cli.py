"""``export`` verdicts a pipeline can gate on, run as a user runs them: exit 0 only when
the file read back is within the tolerance (nodes and skinned vertices), never over it,
never on a NaN; scenes saved the way users save them (tests/user_scenes.py)."""

from __future__ import annotations

import math
import re

import pytest
from cli_runner import run_cli


def _saved(tmp_path, build, name: str = "scene.blend") -> str:
    import bpy
    import user_scenes

    bpy.ops.wm.read_factory_settings(use_empty=True)
    build(bpy.context.scene)
    return user_scenes.save(tmp_path / name)


def test_an_infinite_scale_fails_the_fbx_read_back(tmp_path):
    """A scale of infinity: the file read back is NaN away, which passed as exit 0."""
    pytest.importorskip("ufbx")
    import bpy

    def build(scene):
        broken = bpy.data.objects.new("Broken", None)
        scene.collection.objects.link(broken)
        broken.scale = (math.inf, 1.0, 1.0)

    blend = _saved(tmp_path, build)
    result = run_cli("export", blend, "--target", "fbx", "--out", tmp_path / "inf.fbx")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "read back nan relative from Blender (non-finite values" in result.stderr
    assert "worst 'Broken'" in result.stdout


def test_cameras_and_lights_pass_the_fbx_read_back(tmp_path):
    """The FBX exporter's camera and light turns: exit 1 on every file with a camera or a
    light before; now exit 1 only for what is really off (here: nothing but the child
    the exporter misplaces under the camera, which this scene leaves out)."""
    pytest.importorskip("ufbx")
    import bpy
    import user_scenes

    def build(scene):
        user_scenes.cameras_and_lights(scene, animated=True)
        bpy.data.objects.remove(scene.objects["CamChild"])

    blend = _saved(tmp_path, build)
    for frames in ((), ("--frames", "1:10")):
        result = run_cli("export", blend, "--target", "fbx", "--out", tmp_path / "c.fbx", *frames)
        assert result.returncode == 0, result.stdout + result.stderr


def test_skinned_vertices_decide_the_exit_code(tmp_path):
    """Six bones weigh every vertex: the glTF file keeps four, the command names the mesh,
    its worst vertex and the option that writes them all, and exits 1 (it printed
    'read back 3.3e-07' and exited 0); with --all-influences it exits 0. FBX holds every
    weight: exit 0."""
    import user_scenes

    blend = _saved(tmp_path, user_scenes.six_weights)
    four = run_cli("export", blend, "--target", "gltf", "--frames", "1:24", "--out", tmp_path / "four.glb")
    assert four.returncode == 1, four.stdout + four.stderr
    line = re.search(r"over the tolerance \(1e-05 of its size\): 'Body' vertex (\d+) at frame (\d+)", four.stdout)
    assert line and "6 bones weigh it, the file keeps 4 (--all-influences" in four.stdout
    assert "1 skinned mesh(es) off by more than 1e-05 of their size (worst 'Body' vertex" in four.stderr
    every = run_cli(
        "export", blend, "--target", "gltf", "--frames", "1:24", "--all-influences", "--out", tmp_path / "all.glb"
    )
    assert every.returncode == 0, every.stdout + every.stderr
    assert "skinned vertices read back as an engine skins them (1 mesh(es), 24 frame(s))" in every.stdout
    pytest.importorskip("ufbx")
    fbx = run_cli("export", blend, "--target", "fbx", "--frames", "1:24", "--out", tmp_path / "six.fbx")
    assert fbx.returncode == 0, fbx.stdout + fbx.stderr
    assert "skinned vertices read back as an engine skins them (1 mesh(es), 24 frame(s))" in fbx.stdout


def test_all_influences_is_for_gltf(tmp_path):
    import user_scenes

    blend = _saved(tmp_path, user_scenes.six_weights)
    result = run_cli("export", blend, "--target", "fbx", "--all-influences", "--out", tmp_path / "x.fbx")
    assert result.returncode == 2 and "--all-influences is for --target gltf" in result.stderr
    assert not (tmp_path / "x.fbx").exists()
