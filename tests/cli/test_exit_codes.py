"""Issue 24: inputs that cannot be handled are exit 2 with one line naming what and
where, never exit 3 (a bug) or a traceback."""

from __future__ import annotations

import os

import blend_factory
import pytest
from cli_runner import run_cli


def _one_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def nan_scale(tmp_path_factory) -> str:
    return blend_factory.nan_scale_at_frame(tmp_path_factory.mktemp("nan") / "nan.blend")


@pytest.fixture(scope="module")
def empty(tmp_path_factory) -> str:
    return blend_factory.empty_scene(tmp_path_factory.mktemp("empty") / "empty.blend")


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--frames", "1:6"],
        ["export", "--target", "accumulated", "--frames", "1:6", "--out", "{out}.json"],
        ["export", "--target", "gltf", "--frames", "1:6", "--out", "{out}.glb"],
        ["export", "--target", "fbx", "--frames", "1:6", "--out", "{out}.fbx"],
    ],
)
def test_nan_scale_over_a_range_names_the_object_and_the_frame(nan_scale, tmp_path, args):
    result = run_cli(args[0], nan_scale, *(a.format(out=tmp_path / "out") for a in args[1:]))
    assert result.returncode == 2, result.stderr
    line = _one_line(result)
    assert line.startswith("hierarchy_inspector: 'Child': its world matrix or bounds contain NaN or infinity at frame ")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "args, why",
    [
        (["report", "--frames", "1:5"], "no frame range to inspect"),
        (["export", "--target", "fbx", "--out", "{out}.fbx"], "nothing to export"),
        (["export", "--target", "fbx", "--frames", "1:3", "--out", "{out}.fbx"], "nothing to export"),
        (["export", "--target", "gltf", "--out", "{out}.glb"], "nothing to export"),
        (["export", "--target", "accumulated", "--frames", "1:3", "--out", "{out}.json"], "nothing to export"),
    ],
)
def test_an_empty_scene_is_exit_2(empty, tmp_path, args, why):
    result = run_cli(args[0], empty, *(a.format(out=tmp_path / "out") for a in args[1:]))
    assert result.returncode == 2, result.stderr
    assert _one_line(result) == f"hierarchy_inspector: scene 'Scene' of {empty!r} has no objects: {why}"
    assert os.listdir(tmp_path) == []


def test_an_empty_scene_still_reports_at_one_frame(empty):
    result = run_cli("report", empty)
    assert result.returncode == 0 and "0 nodes" in result.stdout, result.stderr
