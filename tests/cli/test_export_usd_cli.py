"""``export --target usd`` as a user runs it: the file corrected and read back with
usd-core, one line per kind of node with its limit and the half-precision floor named;
options of other targets refused (exit 2, nothing written); the input never changed."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from cli_runner import run_cli

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.exports.usd.check import usd_available  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402
from hierarchy_inspector.addon.scene.exports.usd_export import usd_exporter_missing  # noqa: E402

pytestmark = [
    pytest.mark.skipif(bool(usd_exporter_missing()), reason=usd_exporter_missing() or "-"),
    pytest.mark.skipif(not usd_available(), reason="usd-core is not installed"),
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    export_scenes.sheared_objects(bpy.context.scene)
    export_scenes.inherit_scale_rig(bpy.context.scene)
    bpy.context.scene.frame_set(10)
    path = tmp_path_factory.mktemp("usd") / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


@pytest.mark.parametrize(("frames", "ext"), [(None, ".usdc"), ("1:25", ".usda"), ("2:24:3", ".usd")])
def test_export_usd_exact(saved, tmp_path, frames, ext):
    before = hashlib.sha256(saved.read_bytes()).hexdigest()
    out = tmp_path / f"out{ext}"
    args = ["export", saved, "--target", "usd", "--out", out] + (["--frames", frames] if frames else [])
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert out.stat().st_size > 0 and hashlib.sha256(saved.read_bytes()).hexdigest() == before
    assert "given a matrix op ('Skewed')" in result.stdout
    objects = float(re.search(r"objects ([0-9.e+-]+) relative", result.stdout).group(1))
    joints = float(re.search(r"joints ([0-9.e+-]+) relative", result.stdout).group(1))
    points = float(re.search(r"'Skin': points ([0-9.e+-]+) of", result.stdout).group(1))
    assert objects < 1e-5 and joints < 1e-3 and points < 1e-3
    if frames:
        assert "5 helper joint(s) (Rig > Child FIX_SHEAR" in result.stdout and "half3" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "usd", "--out", "{tmp}/x.usdz"], "USD output must be one of"),
        (
            ["--target", "gltf", "--out", "{tmp}/x.glb", "--only-deform-bones"],
            "--only-deform-bones is for --target usd",
        ),
        (["--target", "fbx", "--out", "{tmp}/x.fbx", "--xform-op-mode", "MAT"], "--xform-op-mode is for --target usd"),
    ],
)
def test_usd_options_refused_elsewhere(saved, tmp_path, args, message):
    result = run_cli("export", saved, *[a.replace("{tmp}", str(tmp_path)) if isinstance(a, str) else a for a in args])
    assert result.returncode == 2 and message in result.stderr
    assert not any(tmp_path.iterdir())
