"""Class 9 of issue 12: the report, fix --method helpers and fix --method bake agree on
what counts as shear (one Thresholds policy), and each output says which threshold
applied. A real case: 4e-4 deg of local shear, as a Rigify rig carries after edits."""

from __future__ import annotations

import json

import blend_factory
import pytest
from cli_runner import run_cli


@pytest.fixture(scope="module")
def tiny_shear(tmp_path_factory):
    return blend_factory.tiny_local_shear(tmp_path_factory.mktemp("tiny") / "tiny.blend", angle_deg=4e-4)


def test_below_the_threshold_nobody_acts(tiny_shear, tmp_path):
    report = run_cli("report", tiny_shear, "--json", tmp_path / "r.json")
    assert report.returncode == 0
    data = json.loads((tmp_path / "r.json").read_text())
    child = next(e for e in data["nodes"] if e["name"] == "Child")
    assert 3e-4 < max(abs(v) for v in child["local"]["shear_deg"]) < 5e-4  # it is there, and tiny
    assert data["summary"]["flagged"] == 0
    assert "Nothing over the thresholds (shear > 0.1 deg, corners > 0.001 units)" in report.stdout
    helpers = run_cli("fix", tiny_shear, "--method", "helpers", "--out", tmp_path / "h.blend")
    assert helpers.returncode == 0 and "0 helper empties inserted (local shear > 0.1 deg)" in helpers.stdout
    bake = run_cli("fix", tiny_shear, "--method", "bake", "--out", tmp_path / "b.blend")
    assert bake.returncode == 0 and "0 objects baked (world shear > 0.1 deg)" in bake.stdout


def test_over_a_lower_threshold_all_of_them_act(tiny_shear, tmp_path):
    low = ("--shear-threshold", "1e-4")
    report = run_cli("report", tiny_shear, *low, "--json", tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["thresholds"]["shear_deg"] == 1e-4
    assert [e["name"] for e in data["nodes"] if e["flagged"]] == ["Child"]
    assert "(shear > 0.0001 deg, corners > 0.001 units)" in report.stdout
    helpers = run_cli("fix", tiny_shear, "--method", "helpers", *low, "--out", tmp_path / "h.blend")
    assert "1 helper empties inserted (local shear > 0.0001 deg)" in helpers.stdout
