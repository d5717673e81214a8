"""Class 4 of issue 12: when Blender's own exporter fails (a hierarchy deeper than its
recursion, values that overflow), the command says so in one line, exit 2, no file."""

from __future__ import annotations

import blend_factory
import pytest
from cli_runner import run_cli


@pytest.fixture(scope="module")
def deep_blend(tmp_path_factory):
    return blend_factory.deep_chain(tmp_path_factory.mktemp("deep") / "deep.blend")


def test_a_hierarchy_too_deep_for_the_gltf_exporter_is_one_line(deep_blend, tmp_path):
    out = tmp_path / "deep.glb"
    result = run_cli("export", deep_blend, "--target", "gltf", "--out", out)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "hierarchy_inspector: Blender's glTF exporter failed: RecursionError: " + lines[0].split(": ", 3)[-1]
    ]
    assert "maximum recursion depth" in lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    assert list(tmp_path.iterdir()) == []  # no partial file, no temporary left


def test_values_that_overflow_are_named_before_the_exporter_runs(tmp_path):
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    cube.name = "Huge cube"
    cube.scale = (1e38, 1e38, 1.0)
    holder = bpy.data.objects.new("Holder", None)
    bpy.context.scene.collection.objects.link(holder)
    holder.scale = (1e38, 1.0, 1.0)
    cube.parent = holder
    blend = blend_factory.save(tmp_path / "huge.blend")
    out = tmp_path / "huge.glb"
    result = run_cli("export", blend, "--target", "gltf", "--out", out)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "hierarchy_inspector: object 'Huge cube': its world matrix holds NaN or infinity although its own values "
        "are finite (a scale too large for Blender's float32 matrices, a constraint or a driver)"
    ]
    assert not out.exists()
