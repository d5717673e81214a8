"""``export`` as a user runs it on a scene saved at frame 10: the static export is the
current frame's pose, ``--frames`` exports exact at every frame (glTF) or per-frame TRS
(accumulated), bad ranges exit 2 and write nothing, the input is never changed."""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path

import pytest
from cli_runner import run_cli


def _save(path: Path, rig: bool = True, hidden_rig: bool = False) -> Path:
    """Sheared objects (and the Inherit Scale rig, hidden when asked) saved at frame 10,
    built in this process (inside a Blender binary too)."""
    import bpy
    from hierarchy_inspector.addon.scene.exports import scenes as export_scenes

    bpy.ops.wm.read_factory_settings(use_empty=True)
    export_scenes.sheared_objects(bpy.context.scene)
    if rig:
        export_scenes.inherit_scale_rig(bpy.context.scene).hide_set(hidden_rig)
    bpy.context.scene.frame_set(10)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


@pytest.fixture(scope="module")
def saved_at_10(tmp_path_factory) -> Path:
    return _save(tmp_path_factory.mktemp("export") / "at10.blend")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _relative(stdout: str) -> float:
    return float(re.search(r"relative error ([0-9.e+-]+)", stdout).group(1))


def test_static_gltf_is_the_saved_frame(saved_at_10, tmp_path):
    before = _digest(saved_at_10)
    out = tmp_path / "static.glb"
    result = run_cli("export", saved_at_10, "--target", "gltf", "--out", out)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "frame 10;" in result.stdout and _relative(result.stdout) < 1e-5
    assert _digest(saved_at_10) == before


@pytest.mark.parametrize("frames", ["1:25", "2:24:3", "scene"])
def test_animated_gltf_exact_at_every_frame(saved_at_10, tmp_path, frames):
    out = tmp_path / "anim.glb"
    result = run_cli("export", saved_at_10, "--target", "gltf", "--out", out, "--frames", frames)
    assert result.returncode == 0, result.stderr[-2000:]
    assert _relative(result.stdout) < 1e-5 and out.stat().st_size > 0
    assert "animated helper node(s) (Skewed, Rig > Child FIX_SHEAR" in result.stdout
    half = float(re.search(r"half frames.*relative ([0-9.e+-]+)", result.stdout).group(1))
    assert 0 < half < 0.1
    assert "skinned vertices read back as an engine skins them (1 mesh(es)" in result.stdout  # by its vertices


def test_accumulated_frames_json_and_csv(saved_at_10, tmp_path):
    out, table = tmp_path / "acc.json", tmp_path / "acc.csv"
    result = run_cli(
        "export", saved_at_10, "--target", "accumulated", "--out", out, "--csv", table, "--frames", "1:25:2"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["schema"] == "hierarchy_inspector.accumulated_frames/1" and doc["frames"] == list(range(1, 26, 2))
    tip = next(e for e in doc["nodes"] if e["name"] == "Tip")
    assert len(tip["translation"]) == 13 and max(tip["residual_max_corner"]) > 1e-2  # Tip's world is sheared
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 13 * len(doc["nodes"]) and rows[0]["frame"] == "1"


def test_bad_range_exits_2_and_writes_nothing(saved_at_10, tmp_path):
    out = tmp_path / "x.glb"
    result = run_cli("export", saved_at_10, "--target", "gltf", "--out", out, "--frames", "9:3")
    assert result.returncode == 2 and "END (3) is before START (9)" in result.stderr
    assert not out.exists()


def test_fbx_keeps_sheared_bones_exactly(saved_at_10, tmp_path):
    pytest.importorskip("ufbx")
    out = tmp_path / "rig.fbx"
    before = _digest(saved_at_10)
    result = run_cli("export", saved_at_10, "--target", "fbx", "--out", out, "--frames", "1:25:3")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "6 object(s) and bone(s) given a temporary helper (Skewed, Rig > Child FIX_SHEAR" in result.stdout
    assert "not corrected" not in result.stdout and _relative(result.stdout) < 1e-5
    assert out.exists() and _digest(saved_at_10) == before


def test_fbx_exits_1_when_sheared_bones_cannot_be_kept(tmp_path):
    pytest.importorskip("ufbx")
    blend = _save(tmp_path / "hidden.blend", hidden_rig=True)
    out = tmp_path / "rig.fbx"
    result = run_cli("export", blend, "--target", "fbx", "--out", out, "--frames", "1:25:3")
    assert result.returncode == 1, result.stderr[-2000:]
    assert "not corrected: 'Rig > Child ALIGNED' (armature hidden" in result.stdout
    assert "over the tolerance 1e-05" in result.stderr and out.exists()


def test_fbx_of_objects_is_exact(tmp_path):
    pytest.importorskip("ufbx")
    blend = _save(tmp_path / "objects.blend", rig=False)
    result = run_cli("export", blend, "--target", "fbx", "--out", tmp_path / "o.fbx", "--frames", "1:25")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "1 object(s) and bone(s) given a temporary helper (Skewed)" in result.stdout
    assert float(re.search(r"relative error ([0-9.e+-]+)", result.stdout).group(1)) < 1e-5


@pytest.mark.parametrize("flag", [False, True])
def test_fbx_objects_near_the_euler_pole(tmp_path, flag):
    """The still helpers are printed on their own line and the file is exact; with
    ``--no-pole-helpers`` the file is Blender's, over the tolerance: exit 1."""
    pytest.importorskip("ufbx")
    import bpy
    from hierarchy_inspector.addon.scene.exports import scenes as export_scenes

    bpy.ops.wm.read_factory_settings(use_empty=True)
    export_scenes.euler_pole_objects(bpy.context.scene)
    bpy.context.scene.frame_set(4)
    blend = tmp_path / "pole.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    extra = ["--no-pole-helpers"] if flag else []
    result = run_cli("export", blend, "--target", "fbx", "--out", tmp_path / "o.fbx", "--frames", "1:25", *extra)
    if flag:
        assert result.returncode == 1 and "still helper" not in result.stdout, result.stderr[-2000:]
        assert "over the tolerance 1e-05" in result.stderr
    else:
        assert result.returncode == 0, result.stderr[-2000:]
        assert "2 object(s) given a still helper" in result.stdout and "Pitch, Turntable" in result.stdout
        assert float(re.search(r"relative error ([0-9.e+-]+)", result.stdout).group(1)) < 1e-6
