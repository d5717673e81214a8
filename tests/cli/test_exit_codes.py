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


@pytest.fixture
def full_tmpdir(tmp_path):
    """A 256 KB tmpfs with 4 KB left (room for Python's probe of $TMPDIR, not for the
    FBX read-back's result): mounted for the test, as root only."""
    import shutil
    import subprocess

    folder = tmp_path / "full"
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True)
    if made.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        with open(folder / "filler", "wb") as f:
            f.write(b"\0" * (252 * 1024))
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_full_tmpdir_fails_the_fbx_read_back_with_exit_2(demo_dir, tmp_path, full_tmpdir):
    pytest.importorskip("ufbx")
    result = run_cli(
        "export",
        demo_dir / "demo.blend",
        "--target",
        "fbx",
        "--out",
        tmp_path / "o.fbx",
        env={"TMPDIR": str(full_tmpdir)},
    )
    assert result.returncode == 2, result.stderr
    line = _one_line(result)
    assert "FBX read-back" in line and "No space left on device" in line and str(full_tmpdir) in line, line
    assert sorted(os.listdir(full_tmpdir)) == ["filler"]  # its scratch folder removed (and Blender's)
