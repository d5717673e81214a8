"""``report --engine`` and ``export --target fbx --engine``: the engine paths on the
command line, with real exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

jsonschema = pytest.importorskip("jsonschema")
REPORT_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())


def test_report_engine_gates_on_that_path_only(demo_dir, tmp_path):
    demo = demo_dir / "demo.blend"
    every = run_cli("report", demo, "--json", tmp_path / "all.json")
    assert every.returncode == 0, every.stderr  # no gate asked for
    report = json.loads((tmp_path / "all.json").read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    by_engine = report["summary"]["flagged_by_engine"]
    assert set(by_engine) == {"matrix_model", "unreal_fbx", "unreal_interchange", "accumulated"}
    # The piston's slider moves along a squashed root: Ogre and Unreal from locals put it
    # off, Unreal's animated bones and glTF do not; so those paths flag more.
    assert by_engine["accumulated"] > by_engine["matrix_model"]
    unreal = run_cli("report", demo, "--engine", "unreal", "--json", tmp_path / "unreal.json")
    assert unreal.returncode == 1 and "flagged for Unreal FBX (--engine)" in unreal.stderr
    gated = json.loads((tmp_path / "unreal.json").read_text())
    assert gated["thresholds"]["engines"] == ["unreal_fbx"]
    assert gated["summary"]["flagged"] == by_engine["unreal_fbx"]
    bad = run_cli("report", demo, "--engine", "cryengine")
    assert bad.returncode == 2 and "cryengine" in bad.stderr


def test_export_fbx_for_accumulating_engines(demo_dir, tmp_path):
    out = tmp_path / "acc.fbx"
    run = run_cli("export", demo_dir / "demo.blend", "--target", "fbx", "--engine", "ogre", "--out", out)
    assert run.returncode == 0, run.stderr
    assert "accumulated as Unreal (from locals) and Ogre do" in run.stdout
    assert "keep Blender's own skew" in run.stdout and out.stat().st_size > 0
    wrong = run_cli(
        "export", demo_dir / "demo.blend", "--target", "gltf", "--engine", "ogre", "--out", tmp_path / "x.glb"
    )
    assert wrong.returncode == 2 and "--engine is for --target fbx" in wrong.stderr
