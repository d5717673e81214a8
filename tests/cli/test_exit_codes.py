"""Issue 24: inputs that cannot be handled are exit 2 with one line naming what and
where, never exit 3 (a bug) or a traceback."""

from __future__ import annotations

import os

import blend_factory
import pytest
from cli_runner import run_cli


def _needs_usd() -> None:
    """Skip where the USD export cannot run: no USD exporter in this Blender (Debian's
    4.3.2), or no usd-core to read the file back."""
    from hierarchy_inspector.addon.model.exports.usd.check import usd_available
    from hierarchy_inspector.addon.scene.exports.usd_export import usd_exporter_missing

    missing = usd_exporter_missing() or ("" if usd_available() else "usd-core is not installed")
    if missing:
        pytest.skip(missing)


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
        ["export", "--target", "usd", "--frames", "1:6", "--out", "{out}.usdc"],
    ],
)
def test_nan_scale_over_a_range_names_the_object_and_the_frame(nan_scale, tmp_path, args):
    if "usd" in args:
        _needs_usd()
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
        (["export", "--target", "usd", "--frames", "1:3", "--out", "{out}.usdc"], "nothing to export"),
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


@pytest.mark.parametrize("target, reader, out", [("fbx", "ufbx", "o.fbx"), ("usd", "pxr", "o.usdc")])
def test_a_full_tmpdir_fails_the_read_back_with_exit_2(demo_dir, tmp_path, full_tmpdir, target, reader, out):
    """The FBX read-back said "BadZipFile" (exit 3): its result, cut short, was read."""
    pytest.importorskip(reader)
    if target == "usd":
        _needs_usd()
    env = {"TMPDIR": str(full_tmpdir)}
    result = run_cli("export", demo_dir / "demo.blend", "--target", target, "--out", tmp_path / out, env=env)
    assert result.returncode == 2, result.stderr
    line = _one_line(result)
    assert f"{target.upper()} read-back" in line and "No space left on device" in line, line
    assert str(full_tmpdir) in line and "$TMPDIR" in line, line
    assert sorted(os.listdir(full_tmpdir)) == ["filler"]  # its scratch folder removed (and Blender's)


def _address_space(limit: int):
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def test_a_range_beyond_the_address_space_limit_is_refused_at_once(demo_dir, tmp_path):
    """``--frames 1:1048574`` was a MemoryError (exit 3) after minutes; it is refused
    before anything is read, naming the estimate and the limit (ulimit -v here)."""
    import time

    started = time.perf_counter()
    result = run_cli(
        "report",
        demo_dir / "demo.blend",
        "--frames",
        "1:1048574",
        "--json",
        tmp_path / "r.json",
        preexec_fn=_address_space(6 << 30),
    )
    assert result.returncode == 2, result.stderr
    line = _one_line(result)
    assert line.startswith("hierarchy_inspector: --frames 1:1048574: about 6.") and "GiB of memory for 29 nodes" in line
    assert "the address-space limit (ulimit -v, 6 GiB)" in line and "--max-memory" in line
    assert time.perf_counter() - started < 30 and os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--frames", "1:1048574"],
        ["report", "--frames", "1:2000", "--dynamics"],
        ["export", "--target", "gltf", "--frames", "1:1048574", "--out", "{out}.glb"],
        ["export", "--target", "fbx", "--frames", "1:1048574", "--out", "{out}.fbx"],
        ["export", "--target", "usd", "--frames", "1:1048574", "--out", "{out}.usdc"],
        ["export", "--target", "accumulated", "--frames", "-1048574:1048574", "--out", "{out}.json"],
    ],
)
def test_a_range_over_max_memory_is_refused_before_the_exporter_runs(demo_dir, tmp_path, args):
    import time

    started = time.perf_counter()
    fill = {"out": tmp_path / "out"}
    result = run_cli(args[0], demo_dir / "demo.blend", *(a.format(**fill) for a in args[1:]), "--max-memory", "100M")
    assert result.returncode == 2, result.stderr
    line = _one_line(result)
    assert "of memory for 29 nodes x" in line and "the 100 MiB this process may use (--max-memory)" in line, line
    assert time.perf_counter() - started < 30 and os.listdir(tmp_path) == []


def test_max_memory_raises_the_limit(demo_dir):
    refused = run_cli("report", demo_dir / "demo.blend", "--frames", "1:50", "--max-memory", "100K")
    assert refused.returncode == 2 and "more than the 100 KiB" in refused.stderr, refused.stderr
    allowed = run_cli("report", demo_dir / "demo.blend", "--frames", "1:50", "--max-memory", "1G")
    assert allowed.returncode == 0, allowed.stderr
