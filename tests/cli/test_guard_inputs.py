"""Issue 24: inputs guarded by what they are. An input file named ``-`` is a file like
any other where ``-`` is not standard output; every file the scene reads (its linked
libraries, its images) is an input no output may replace; a missing library is exit 2
naming it (or an explicit ``--allow-missing-libraries``), never a clean result; an
unreadable input is exit 2, not a bug."""

from __future__ import annotations

import hashlib
import os
import shutil

import blend_factory
import pytest
from cli_runner import run_cli, unprivileged


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """``(scene, library, image)``: linked.blend links the sheared pair of lib.blend."""
    return blend_factory.linked_scene(tmp_path_factory.mktemp("linked"))


@pytest.fixture
def work(linked, tmp_path):
    """A fresh copy of the three files (a test may move the library away)."""
    for path in linked:
        shutil.copy(path, tmp_path)
    return tuple(str(tmp_path / os.path.basename(p)) for p in linked)


def test_an_input_named_dash_is_not_replaced_by_an_output_named_dash(demo_dir, tmp_path):
    dash = tmp_path / "-"
    shutil.copy(demo_dir / "demo.blend", dash)
    before = _digest(dash)
    for args in (
        ["export", "-", "--target", "accumulated", "--out", "-"],
        ["fix", "-", "--method", "bake", "--out", "-"],
    ):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "--out '-' is the input file SCENE.blend" in result.stderr
        assert _digest(dash) == before and sorted(os.listdir(tmp_path)) == ["-"]
    # --json - is standard output: the input named - is read and stays as it was.
    shown = run_cli("report", "-", "--json", "-", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert '"schema": "hierarchy_inspector.report/1"' in shown.stdout and _digest(dash) == before


@pytest.mark.parametrize(
    "args, victim",
    [
        (["report", "--json", "{lib}"], "lib"),
        (["report", "--csv", "{lib}"], "lib"),
        (["report", "--json", "{image}"], "image"),
        (["export", "--target", "accumulated", "--out", "{lib}"], "lib"),
        (["fix", "--method", "bake", "--out", "{lib}"], "lib"),
        (["fix", "--method", "helpers", "--out", "{lib}"], "lib"),
    ],
)
def test_no_output_replaces_a_library_or_an_image_the_scene_reads(work, args, victim):
    scene, lib, image = work
    path = {"lib": lib, "image": image}[victim]
    before, listing = _digest(path), sorted(os.listdir(os.path.dirname(scene)))
    result = run_cli(args[0], scene, *(a.format(lib=lib, image=image) for a in args[1:]))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    what = "library '//lib.blend' (linked by the scene)" if victim == "lib" else "(read by the scene)"
    assert len(lines) == 1 and "is the input file" in lines[0] and what in lines[0], lines
    assert _digest(path) == before and sorted(os.listdir(os.path.dirname(scene))) == listing


def test_a_library_through_another_spelling_is_refused(work, tmp_path):
    scene, lib, _image = work
    spelled = os.path.join(os.path.dirname(lib), "nosuchdir", "..", os.path.basename(lib))
    result = run_cli("report", scene, "--json", spelled)
    assert result.returncode == 2 and "library '//lib.blend'" in result.stderr, result.stderr


def test_with_the_library_present_the_linked_shear_is_seen(work):
    scene, _lib, _image = work
    result = run_cli("report", scene, "--fail-on-shear", "1")
    assert result.returncode == 1, result.stderr
    assert "Child" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--fail-on-shear", "1"],
        ["report", "--frames", "1:3"],
        ["export", "--target", "fbx", "--out", "{out}.fbx"],
        ["export", "--target", "gltf", "--out", "{out}.glb"],
        ["export", "--target", "accumulated", "--out", "{out}.json"],
        ["fix", "--method", "helpers", "--out", "{out}.blend"],
    ],
)
def test_a_missing_library_is_exit_2_naming_it_and_nothing_is_written(work, tmp_path, args):
    scene, lib, _image = work
    os.rename(lib, lib + ".away")
    out = tmp_path / "out"
    result = run_cli(args[0], scene, *(a.format(out=out) for a in args[1:]))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'//lib.blend'" in lines[0] and "--allow-missing-libraries" in lines[0], lines
    assert not [p for p in os.listdir(tmp_path) if p.startswith("out")]


def test_missing_libraries_can_be_allowed_and_are_said(work):
    scene, lib, _image = work
    os.rename(lib, lib + ".away")
    result = run_cli("report", scene, "--allow-missing-libraries", "--fail-on-shear", "1")
    assert result.returncode == 0, result.stderr
    assert "inspected without 1 missing library file(s): '//lib.blend'" in result.stderr


def test_an_unreadable_input_is_exit_2(demo_dir, tmp_path):
    blend = tmp_path / "locked.blend"
    shutil.copy(demo_dir / "demo.blend", blend)
    blend.chmod(0)
    result = run_cli("report", blend, **unprivileged())
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[0] == (
        f"hierarchy_inspector: {str(blend)!r}: cannot read it (Permission denied)"
    )
