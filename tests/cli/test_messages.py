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


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--jobs", "x", "argument --jobs: expected a whole number >= 1, not 'x'"),
        ("--jobs", "0", "argument --jobs: must be 1 or more, not 0"),
        ("--timeout", "soon", "argument --timeout: expected a number of seconds above 0, not 'soon'"),
        ("--timeout", "-1", "argument --timeout: must be above 0 (and finite), not -1"),
        ("--pictures", "many", "argument --pictures: expected a whole number >= 0, not 'many'"),
    ],
)
def test_no_argparse_internals_in_messages(tmp_path, option, value, message):
    """Issue 24 item 18: "invalid _positive_int value" and the like named our functions."""
    result = run_cli("audit", tmp_path, "--out", tmp_path / "out", f"{option}={value}")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert "invalid" not in lines[0] and "_positive" not in lines[0] and "int value" not in lines[0]


@pytest.mark.parametrize("command", ["report", "export"])
def test_a_negative_frame_range_is_taken_with_a_space(demo_dir, tmp_path, command):
    """Issue 24 item 18: ``--frames -30:-20`` said "expected one argument"; only
    ``--frames=-30:-20`` worked. Both spellings give the same file."""
    extra = ["--target", "accumulated"] if command == "export" else []
    outputs = []
    for spelling in (["--frames", "-30:-20"], ["--frames=-30:-20"]):
        out = tmp_path / f"out{len(outputs)}.json"
        flag = "--out" if command == "export" else "--json"
        result = run_cli(command, demo_dir / "demo.blend", *extra, *spelling, flag, out)
        assert result.returncode in (0, 1), result.stderr
        outputs.append(out.read_text())
    assert "-30" in outputs[0] and "-20" in outputs[0]
    assert outputs[0] == outputs[1]
    single = run_cli("report", demo_dir / "demo.blend", "--frame", "-3", "--json", "-")
    assert single.returncode == 0 and '"frame": -3' in single.stdout, single.stderr
