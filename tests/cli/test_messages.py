"""Class 7 of issue 12: every refusal is one line on stderr, paths quoted (control
characters escaped), no argparse usage block, no traceback."""

from __future__ import annotations

import pytest
from cli_runner import run_cli


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "the following arguments are required: command"),
        (["report"], "the following arguments are required: SCENE.blend"),
        (["export", "x.blend", "--target", "obj", "--out", "x"], "invalid choice: 'obj'"),
        (["report", "x.blend", "--no-such-option"], "unrecognized arguments: --no-such-option"),
    ],
)
def test_usage_errors_are_one_line(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "usage:" not in result.stderr, result.stderr


def test_paths_with_control_characters_are_quoted(tmp_path):
    weird = tmp_path / "line\nbreak\x1b[31m.blend"
    result = run_cli("report", weird)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "\\n" in lines[0] and "\\x1b" in lines[0] and "\x1b" not in result.stderr


def test_help_still_works():
    result = run_cli("report", "--help")
    assert result.returncode == 0 and "--fail-on-shear" in result.stdout


@pytest.mark.parametrize(
    "target, extra, message",
    [
        ("gltf", ["--csv", "out.csv"], "--csv is for --target accumulated"),
        ("fbx", ["--csv", "out.csv"], "--csv is for --target accumulated"),
        ("fbx", ["--z-up"], "--z-up is for --target gltf"),
        ("accumulated", ["--z-up"], "--z-up is for --target gltf"),
        ("gltf", ["--no-pole-helpers"], "--no-pole-helpers is for --target fbx"),
    ],
)
def test_export_options_of_another_target_are_refused_not_ignored(tmp_path, target, extra, message):
    out = tmp_path / {"gltf": "out.glb", "fbx": "out.fbx", "accumulated": "out.json"}[target]
    result = run_cli("export", str(tmp_path / "scene.blend"), "--target", target, "--out", str(out), *extra)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
