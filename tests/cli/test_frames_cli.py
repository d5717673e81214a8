"""``report --frames`` as a user runs it: bad ranges exit 2 with one line, the range's
JSON follows the schema, --fail-on-shear applies to the whole range, CSV columns."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_runner import run_cli

jsonschema = pytest.importorskip("jsonschema")
REPORT_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())


@pytest.fixture(scope="module")
def pair_blend(tmp_path_factory) -> Path:
    """The stretch pair (closed-form shear per frame) saved at frame 1, built in this process."""
    import bpy
    from hierarchy_inspector.addon.scene.timeline import animated

    path = tmp_path_factory.mktemp("frames") / "pair.blend"
    bpy.ops.wm.read_factory_settings(use_empty=True)
    animated.stretch_pair(bpy.context.scene)
    bpy.context.scene.frame_set(1)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    return path


@pytest.mark.parametrize(
    "frames, message",
    [
        ("5:1", "END (1) is before START (5)"),
        ("1:5:0", "STEP must be a whole number >= 1"),
        ("1:5:-2", "STEP must be a whole number >= 1"),
        ("1.5:3", "expected a whole number"),
        ("a:b", "expected a whole number"),
        ("1:2147483648", "outside Blender's frames"),
        ("-99999999999:1", "outside Blender's frames"),
        ("1", "expected START:END[:STEP]"),
    ],
)
def test_bad_ranges_exit_2_with_one_line_and_write_nothing(pair_blend, tmp_path, frames, message):
    out = tmp_path / "r.json"
    result = run_cli("report", pair_blend, f"--frames={frames}", "--json", out)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert not out.exists()


def test_range_report_follows_the_schema_and_fail_on_shear_covers_the_range(pair_blend, tmp_path):
    # At frame 1 nothing is sheared: the single-frame gate passes, the range's fails.
    assert run_cli("report", pair_blend, "--frame", "1", "--fail-on-shear", "5").returncode == 0
    out, table = tmp_path / "r.json", tmp_path / "r.csv"
    result = run_cli(
        "report", pair_blend, "--frame", "1", "--frames", "scene", "--fail-on-shear", "5", "--json", out, "--csv", table
    )
    assert result.returncode == 1, result.stderr
    assert "exceeds --fail-on-shear" in result.stderr
    report = json.loads(out.read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    assert report["frame"] == 1 and report["frames"]["start"] == 1 and report["frames"]["end"] == 21
    child = next(e for e in report["nodes"] if e["name"] == "Child")
    assert max(abs(v) for v in child["shear_deg"]) < 1e-3  # the per-frame fields describe --frame
    assert 39.7 < child["over_frames"]["shear_deg"] < 39.8 and child["over_frames"]["worst_frame"] == 21
    rows = {r["name"]: r for r in csv.DictReader(table.open())}
    assert rows["Child"]["worst_frame"] == "21"
    assert "Frames 1..21" in result.stdout
    # Above the range's maximum the gate passes.
    assert run_cli("report", pair_blend, "--frames", "1:21:4", "--fail-on-shear", "45").returncode == 0


def test_range_dynamics_rows_per_frame(pair_blend, tmp_path):
    out = tmp_path / "d.json"
    result = run_cli("report", pair_blend, "--frames", "1:21:2", "--dynamics", "--json", out)
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    child = next(e for e in report["nodes"] if e["name"] == "Child")
    local = child["over_frames"]["dynamics"]["local"]
    assert len(local["angular_velocity"]) == 11
    # The child turns 90 degrees over 20 frames at the scene's frame rate: constant local rate.
    rate = (3.141592653589793 / 2) / (20 / report["fps"])
    assert all(abs(w[2] - rate) < 1e-3 for w in local["angular_velocity"])
    assert run_cli("report", pair_blend, "--frames", "1:2", "--dynamics").returncode == 2


def test_range_chart_is_a_png_and_needs_a_range(pair_blend, tmp_path):
    chart = tmp_path / "range.png"
    assert run_cli("report", pair_blend, "--frames", "1:21", "--chart", chart).returncode == 0
    data = chart.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    result = run_cli("report", pair_blend, "--chart", tmp_path / "no.png")
    assert result.returncode == 2 and "--frames" in result.stderr and not (tmp_path / "no.png").exists()
