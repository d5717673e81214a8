"""What the panel shows, the report and its schema, the explanations: Blender-free."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hierarchy_inspector import core
from hierarchy_inspector.addon.model import views
from hierarchy_inspector.addon.model.advice.actions import advice
from hierarchy_inspector.addon.model.demo_text import demo_text
from hierarchy_inspector.addon.model.engines.paths import PATHS
from hierarchy_inspector.addon.model.errors import SceneDataError
from hierarchy_inspector.addon.model.explain import explain, shear_cause
from hierarchy_inspector.addon.model.inspection import inspect
from hierarchy_inspector.addon.model.overlay_geometry import OverlayStyle, box_edges, overlay_lines, skew_colours
from hierarchy_inspector.addon.model.report import CSV_COLUMNS, SCHEMA, build_report, report_csv, report_table
from hierarchy_inspector.addon.model.text import Units
from hierarchy_inspector.addon.model.thresholds import Thresholds
from hypothesis import given
from hypothesis import strategies as st

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "report.schema.json"


def validate_report(report: dict) -> None:
    """Validate against the JSON Schema shipped in docs/ (jsonschema, a test dependency)."""
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(json.loads(json.dumps(report)), json.loads(SCHEMA_FILE.read_text()))


@given(st.floats(-179, 179), st.floats(-89, 89), st.floats(-179, 179))
def test_euler_xyz_reproduces_the_rotation_with_the_smaller_angle_sum(x, y, z):
    q = core.euler_to_quat(np.radians([x, y, z]), "XYZ")
    angles = views.euler_xyz_deg(q)
    assert core.quat_angle_deg(q, core.euler_to_quat(np.radians(angles), "XYZ")) < 1e-6
    assert np.abs(angles).sum() <= abs(x) + abs(y) + abs(z) + 1e-6
    if abs(x) + abs(y) + abs(z) < 90:  # well inside the range: the one solution
        assert np.allclose(angles, [x, y, z], atol=1e-6)


def test_euler_xyz_at_gimbal_lock_still_reproduces_the_rotation():
    q = core.euler_to_quat(np.radians([30.0, 90.0, 0.0]), "XYZ")
    angles = views.euler_xyz_deg(q)
    again = core.euler_to_quat(np.radians(angles), "XYZ")
    assert core.quat_angle_deg(q, again) < 1e-4


def test_panel_sections_of_the_rotated_child(rotated_child):
    ins = inspect(rotated_child)
    rows = {(s.title, label): value for s in views.node_sections(ins, 1) for label, value in s.rows}
    assert rows[("Blender world", "Shear XY/YZ/ZX")] == "(-36.87, 0.00, 0.00)\N{DEGREE SIGN}"
    assert rows[("Local (what exporters write)", "Rotation")] == "(0.00, 0.00, 45.00)\N{DEGREE SIGN}"
    assert rows[("Accumulated world (Unreal locals, Ogre)", "Scale")] == "(2.000, 1.000, 1.000)"
    # Most important first: how far each engine family puts it, corners first.
    first = views.node_sections(ins, 1, Units("METRIC"))[0]
    assert first.title.startswith("Off in engines")
    off = dict(first.rows)
    assert off["Ogre"] == off["Unreal locals"] == "1.00 m" and off["Exact glTF/FBX"] == "0 m"
    # The classic importer keeps the global without its shear: the corners of the skewed
    # square land off by its skew, with the plain FBX and the exact one alike.
    assert off["Unreal FBX"] == off["Exact FBX, UE"] != "0 m"
    chain = views.chain_rows(ins, [0, 1], Units("METRIC"))
    assert [(r.name, r.depth, r.flagged) for r in chain] == [("Parent", 0, False), ("Child", 1, True)]
    assert chain[1].summary == "36.9\N{DEGREE SIGN}  1.00 m"
    assert views.focus_index(ins, [0, 1], ("Parent", "")) == 0
    assert views.focus_index(ins, [0, 1], ("Gone", "")) == 1


def test_explanations_name_the_cause_and_a_fix(rotated_child):
    ins = inspect(rotated_child)
    assert shear_cause(ins, 1) == (0, pytest.approx(45.0))
    text = " ".join(explain(ins, 1))
    assert "'Child' is skewed 36.9\N{DEGREE SIGN}" in text and "'Parent' is scaled non-uniformly (2, 1, 1)" in text
    todo = {a.action: a for a in advice(ins, 1)}
    assert "apply the scale of 'Parent' (Ctrl+A > Scale)" in todo["APPLY_SCALE"].text
    assert todo["APPLY_SCALE"].target == 0 and todo["EXACT"].engines == "glTF, Unity, Godot"
    assert advice(ins, 0) == []
    assert explain(ins, 0) == []
    text = views.comparison_text(ins, 1)
    assert "Copy" not in text and "Warnings:" in text and "What to do:" in text


def test_report_follows_its_schema_and_says_which_thresholds_applied(piston_moved):
    ins = inspect(piston_moved, Thresholds(shear_deg=0.5, corner=0.01))
    report = build_report(ins, blender_version="test", file=None, frame=1, fps=24.0)
    validate_report(report)
    assert report["schema"] == SCHEMA
    assert report["thresholds"] == {"shear_deg": 0.5, "corner": 0.01, "engines": list(PATHS)}
    by_engine = report["summary"]["flagged_by_engine"]
    assert set(by_engine) == set(PATHS) and 0 < max(by_engine.values()) <= report["summary"]["flagged"]
    assert [e["name"] for e in report["nodes"]] == ["Root", "A", "B"]
    assert report["summary"]["flagged"] == sum(e["flagged"] for e in report["nodes"]) > 0
    table = report_table(report)
    assert "(shear > 0.5 deg, corners > 0.01 units)" in table
    rows = list(csv.reader(io.StringIO(report_csv(report))))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 4


def test_report_carries_the_advice_by_action_and_target_name(rotated_child):
    ins = inspect(rotated_child)
    report = build_report(ins, blender_version="test", file=None, frame=1, fps=24.0)
    validate_report(report)
    by_name = {e["name"]: e for e in report["nodes"]}
    child = by_name["Child"]
    assert child["flagged"]
    expected = advice(ins, 1)
    assert [(a["engines"], a["action"], a["text"]) for a in child["advice"]] == [
        (list(a.paths), a.action, a.text) for a in expected
    ]
    # Its local matrix is a clean TRS (glTF exact); its world is skewed by the scaled parent,
    # which is where the Blender-side advice points.
    actions = {a["action"]: a for a in child["advice"]}
    assert actions["EXACT"]["engines"] == ["matrix_model"] and actions["EXACT"]["target"] == "Child"
    assert actions["APPLY_SCALE"]["target"] == "Parent"
    assert all(a["target_armature"] is None for a in child["advice"])
    assert by_name["Parent"]["advice"] == [] and not by_name["Parent"]["flagged"]


def test_non_finite_matrices_are_named_by_node_not_index(rotated_child):
    rotated_child.world[1, 0, 0] = np.nan
    with pytest.raises(SceneDataError, match="'Child'.*NaN or infinity"):
        inspect(rotated_child)


def test_overlay_places_the_blender_box_by_the_world_matrix(rotated_child):
    ins = inspect(rotated_child)
    coords, colours = overlay_lines(ins, [1], OverlayStyle(), axes=True)
    assert coords.shape == (24 + 24 + 6, 3) and colours.shape == (54, 4)
    expected = box_edges(rotated_child.world[1:2], rotated_child.box_min[1:2], rotated_child.box_max[1:2])
    assert np.allclose(coords[:24], expected.reshape(-1, 3), atol=1e-6)
    style = OverlayStyle()
    ramp = skew_colours(np.array([0.0, 15.0, 90.0]), style)
    assert np.allclose(ramp[0], style.colour_blender) and np.allclose(ramp[2], style.colour_skew_high)
    assert np.allclose(ramp[1], np.add(style.colour_skew_low, style.colour_skew_high) / 2)


def test_demo_text_has_both_models_of_every_example():
    text = demo_text()
    assert text.count("accumulated") >= 7 and "Piston (seed article)" in text
    assert "-36.87" in text  # the rotated child's shear


def test_views_never_print_minus_zero(rotated_child):
    rotated_child.world[0, :3, 3] = [-1e-12, 0.0, 0.0]
    rows = views.node_sections(inspect(rotated_child), 0)[2].rows
    assert rows[0][1] == "(0.000, 0.000, 0.000)" and not math.isnan(0.0)
