"""Instances through the command line: the report, the glTF export's note and the audit
count them (a scene with 241 instances is no longer reported as 4 nodes)."""

from __future__ import annotations

import json

import pytest
from cli_runner import run_cli
from instance_scenes import collection_instance, scatter

bpy = pytest.importorskip("bpy")


@pytest.fixture(scope="module")
def instanced_blend(tmp_path_factory):
    path = tmp_path_factory.mktemp("instances") / "instanced.blend"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scatter(scene, 240)
    collection_instance(scene)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return path


def test_report_counts_instances(instanced_blend):
    result = run_cli("report", instanced_blend, "--json", "-")
    assert result.returncode == 0, result.stderr
    kinds = [e["kind"] for e in json.loads(result.stdout)["nodes"]]
    assert kinds.count("object") == 3 and kinds.count("instance") == 241


@pytest.mark.parametrize("target", ["gltf", "fbx"])
def test_exports_say_what_happens_to_instances(instanced_blend, tmp_path, target):
    """Both exporters write instances as nodes of their own: each export says so and names
    the collection instance it does not correct (FBX said nothing before)."""
    if target == "fbx":
        pytest.importorskip("ufbx")
    result = run_cli(
        "export", instanced_blend, "--target", target, "--out", tmp_path / f"i.{'glb' if target == 'gltf' else 'fbx'}"
    )
    assert result.returncode == 0, result.stderr
    assert "instances: 241 exported by Blender's exporter as they are (not corrected); 0 lose shear at frame" in (
        result.stdout
    )
    assert "not checked: the objects 'Spawner' instances" in result.stdout  # the instancer's own node is checked
    assert "instances (a collection instance: written as Blender's exporter writes them, neither corrected" in (
        result.stdout
    )
    assert "not checked as a node: 'Spawner'" not in result.stdout


def test_audit_counts_instances(instanced_blend, tmp_path):
    result = run_cli("audit", instanced_blend, "--out", tmp_path / "a", "--jobs", "1")
    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "a" / "audit.jsonl").read_text())
    assert record["instances"] == 241 and record["objects"] == 3 and record["nodes"] == 244
    assert record["flagged"] >= 241


@pytest.mark.parametrize("over_time", [["--frames", "1:3"], ["--dynamics"]])
def test_ranges_and_rates_leave_instances_out_and_say_so(instanced_blend, tmp_path, over_time):
    """Instances are read at one frame: a range or rates work on the other nodes, and
    the command says instances were left out (it used to refuse the whole scene)."""
    result = run_cli("report", instanced_blend, *over_time, "--json", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert "instances are inspected at one frame only" in result.stderr
    kinds = {e["kind"] for e in json.loads((tmp_path / "r.json").read_text())["nodes"]}
    assert "instance" not in kinds and kinds
