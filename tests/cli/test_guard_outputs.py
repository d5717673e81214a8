"""Class 1 of issue 12: no output flag of any command may replace the input .blend (the
same file by identity: spellings, symlinked folders, hard links), and no two outputs may
be one file. Each refusal is exit 2, one line, nothing written, the input unchanged."""

from __future__ import annotations

import hashlib
import os

import pytest
from cli_runner import run_cli


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def scene(demo_dir, tmp_path):
    """A copy of the demo .blend in a folder of its own, reachable through a symlinked
    folder and a hard link as well."""
    work = tmp_path / "work"
    work.mkdir()
    blend = work / "scene.blend"
    blend.write_bytes((demo_dir / "demo.blend").read_bytes())
    (tmp_path / "linked").symlink_to(work, target_is_directory=True)
    os.link(blend, work / "hardlink.blend")
    return blend


def _spellings(blend):
    return {
        "same path": blend,
        "relative with a detour": os.path.relpath(blend.parent / ".." / blend.parent.name / blend.name),
        "through a symlinked folder": blend.parent.parent / "linked" / blend.name,
        "a hard link": blend.parent / "hardlink.blend",
        # Issue 24: the OS writes to the normalised path, which is the input, although
        # the path as typed does not exist.
        "through a missing folder and ..": os.path.join(str(blend.parent), "nosuchdir", "..", blend.name),
        "a dot, a missing folder and ..": os.path.join(str(blend.parent), ".", "sub", "..", blend.name),
    }


SPELLINGS = [
    "same path",
    "relative with a detour",
    "through a symlinked folder",
    "a hard link",
    "through a missing folder and ..",
    "a dot, a missing folder and ..",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(
    "command, flag",
    [
        (["report"], "--json"),
        (["report"], "--csv"),
        (["report", "--frames", "1:2"], "--chart"),
        (["export", "--target", "accumulated"], "--out"),
        (["export", "--target", "accumulated", "--out", "{tmp}/a.json"], "--csv"),
        (["fix", "--method", "helpers"], "--out"),
    ],
)
def test_no_output_replaces_the_input(scene, tmp_path, command, flag, spelling):
    before = _digest(scene)
    listing = sorted(os.listdir(scene.parent))
    out = _spellings(scene)[spelling]
    args = [a.replace("{tmp}", str(tmp_path)) for a in command[1:]]
    result = run_cli(command[0], scene, *args, flag, out)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "is the input file" in lines[0], result.stderr
    assert _digest(scene) == before and sorted(os.listdir(scene.parent)) == listing
    assert not (tmp_path / "a.json").exists()


def test_two_outputs_may_not_be_the_same_file(scene, tmp_path):
    out = tmp_path / "r.json"
    result = run_cli("report", scene, "--json", out, "--csv", tmp_path.parent / tmp_path.name / "r.json")
    assert result.returncode == 2
    assert "is the same file as --json" in result.stderr and not out.exists()


def test_report_pictures_folder_is_checked_first_and_filled_whole(scene, tmp_path):
    """``--pictures DIR`` writes both pictures; a file in DIR's place is exit 2, one
    line, nothing made (it was an internal error, exit 3)."""
    taken = tmp_path / "taken"
    taken.write_text("a file, not a folder")
    refused = run_cli("report", scene, "--pictures", taken, "--json", tmp_path / "r.json")
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        f"hierarchy_inspector: {str(taken)!r} is a file, not a folder"
    ]
    assert not (tmp_path / "r.json").exists()
    made = run_cli("report", scene, "--pictures", tmp_path / "pics")
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in (tmp_path / "pics").iterdir()) == ["deviation_chart.png", "worst_nodes.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in (tmp_path / "pics").iterdir())
