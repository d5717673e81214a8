"""The extension zips, as Blender's own tooling builds and validates them: one per
platform (``build --split-platforms``), each with its platform's ufbx wheels.

Runs ``blender_ext.py`` (the code behind ``blender --command extension build|validate``,
shipped inside the bpy wheel) on the repository: no Blender binary needed. The wheels
come from PyPI (tools/extension_wheels.py, pip, hashes checked) on first use.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _load_tool():
    spec = importlib.util.spec_from_file_location("package_extension", REPO / "tools" / "package_extension.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tool = _load_tool()


@pytest.fixture(scope="module")
def blender_ext() -> Path:
    # No skip: bpy is a test dependency, and without it nothing here is checked.
    tool.extension_wheels.fetch(REPO)  # the manifest names them: validating the source needs them
    path = tool.find_blender_ext()
    assert path.is_file(), f"Blender's extension CLI is missing from the bpy wheel: {path}"
    return path


def blender_ext_run(blender_ext: Path, *args: str) -> subprocess.CompletedProcess:
    tags = tool.find_valid_tags(blender_ext)
    cmd = [sys.executable, str(blender_ext), args[0], *([f"--valid-tags={tags}"] if tags else []), *args[1:]]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)


def build(blender_ext: Path, source: Path, out: Path) -> Path:
    manifest = tomllib.loads((source / "blender_manifest.toml").read_text(encoding="utf-8"))
    zip_path = out / f"{manifest['id']}-{manifest['version']}.zip"
    result = blender_ext_run(blender_ext, "build", f"--source-dir={source}", f"--output-filepath={zip_path}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert zip_path.is_file(), result.stdout + result.stderr
    return zip_path


def unwanted(names: list[str]) -> list[str]:
    """Entries that are development files, caches, VCS or build output."""
    bad = []
    for name in names:
        parts = name.rstrip("/").split("/")
        if (
            parts[0] in {"tests", "benchmarks", "build", "dist", "tools"}
            or any(p == "__pycache__" or p.startswith(".") for p in parts)  # .git, .venv*, .hypothesis, ...
            or name.endswith((".pyc", ".zip"))
        ):
            bad.append(name)
    return bad


@pytest.fixture(scope="module")
def built_zip(blender_ext, tmp_path_factory) -> Path:
    return build(blender_ext, REPO, tmp_path_factory.mktemp("dist"))


def test_manifest_and_source_pass_blenders_validator(blender_ext):
    result = blender_ext_run(blender_ext, "validate", str(REPO))
    assert result.returncode == 0, result.stdout + result.stderr


def test_built_zip_passes_blenders_validator(blender_ext, built_zip):
    result = blender_ext_run(blender_ext, "validate", str(built_zip))
    assert result.returncode == 0, result.stdout + result.stderr


def test_zip_holds_the_addon(built_zip):
    names = set(zipfile.ZipFile(built_zip).namelist())
    assert {"__init__.py", "blender_manifest.toml"} <= names
    for package in ("core", "addon"):
        sources = sorted(p.name for p in (REPO / package).glob("*.py"))
        assert "__init__.py" in sources
        missing = [s for s in sources if f"{package}/{s}" not in names]
        assert not missing, f"{package}/ files missing from the zip: {missing}"
    with zipfile.ZipFile(built_zip) as archive:
        manifest = tomllib.loads(archive.read("blender_manifest.toml").decode("utf-8"))
    assert manifest["id"] == "hierarchy_inspector"
    assert manifest["type"] == "add-on"


def test_zip_holds_no_development_files(built_zip):
    names = zipfile.ZipFile(built_zip).namelist()
    assert not any(n.startswith("/") or ".." in n.split("/") for n in names)
    assert unwanted(names) == []


def test_exclusion_check_catches_what_the_manifest_would_let_through(blender_ext, tmp_path):
    """Without the manifest's exclude patterns, the same build ships development files,
    and the checks above see them: they are not vacuous."""
    source = tmp_path / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".*", "build", "*.egg-info", "node_modules"))
    (source / "tests" / "__pycache__").mkdir(exist_ok=True)
    (source / "tests" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")
    manifest = (source / "blender_manifest.toml").read_text(encoding="utf-8")
    (source / "blender_manifest.toml").write_text(manifest.split("[build]")[0], encoding="utf-8")
    names = zipfile.ZipFile(build(blender_ext, source, tmp_path)).namelist()
    found = unwanted(names)
    assert any(n.startswith("tests/") for n in found)
    assert any(n.startswith("benchmarks/") for n in found)
    assert tool.zip_problems(names, source)  # the packaging script refuses such a zip too


def test_validator_rejects_a_broken_manifest(blender_ext, tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(REPO / "__init__.py", source)
    manifest = (REPO / "blender_manifest.toml").read_text(encoding="utf-8")
    (source / "blender_manifest.toml").write_text(
        manifest.replace('blender_version_min = "4.2.0"', 'blender_version_min = "four"'), encoding="utf-8"
    )
    result = blender_ext_run(blender_ext, "validate", str(source))
    assert result.returncode != 0
    assert "blender_version_min" in result.stdout + result.stderr


def test_packaging_script_builds_a_checked_zip_per_platform(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "package_extension.py"), "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
    zips = sorted(tmp_path.glob("*.zip"))
    assert [z.name for z in zips] == sorted(
        f"hierarchy_inspector-{manifest['version']}-{p.replace('-', '_')}.zip" for p in manifest["platforms"]
    )
    here = Path(result.stdout.strip().splitlines()[-1])  # this machine's
    assert here.parent == tmp_path and here.name.endswith(tool.this_platform().replace("-", "_") + ".zip")
    for zip_path in zips:
        names = zipfile.ZipFile(zip_path).namelist()
        assert unwanted(names) == []
        platform = zip_path.stem.rsplit("-", 1)[1].replace("_", "-")
        wheels = sorted(n for n in names if n.endswith(".whl"))
        expected = sorted(w.removeprefix("./") for w in manifest["wheels"] if wheel_platform(w) == platform)
        assert wheels == expected and wheels, zip_path.name  # its own wheels, and only those
        with zipfile.ZipFile(zip_path) as archive:
            generated = tomllib.loads(archive.read("blender_manifest.toml").decode("utf-8"))["build"]["generated"]
        assert generated["platforms"] == [platform] and sorted(generated["wheels"]) == sorted(
            "./" + w for w in expected
        )


def wheel_platform(path: str) -> str:
    return tool.extension_wheels.parse(path).blender_platform


def test_wheels_cover_every_platform_and_python_of_the_supported_blenders():
    """Official Blender 4.2 to 5.0 builds (windows, macOS, Linux; x64 and arm64) all run
    Python 3.11 (the bpy wheels from PyPI, 4.2 to 5.0, are cp311 only: this test runs in
    one); Debian trixie's Blender 4.3 runs Debian's Python 3.13 (amd64 and arm64)."""
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
    wheels = [tool.extension_wheels.parse(w) for w in manifest["wheels"]]
    matrix = {(w.blender_platform, w.python_version) for w in wheels}
    platforms = set(manifest["platforms"])
    assert platforms == {"windows-x64", "windows-arm64", "macos-x64", "macos-arm64", "linux-x64", "linux-arm64"}
    assert {(p, "3.11") for p in platforms} <= matrix
    assert {("linux-x64", "3.13"), ("linux-arm64", "3.13")} <= matrix
    assert len(matrix) == len(wheels)  # one wheel per platform and Python
    assert {w.name for w in wheels} == {"ufbx"} and {w.abi for w in wheels} == {w.python for w in wheels}
    import bpy

    assert f"{sys.version_info[0]}.{sys.version_info[1]}" == "3.11" and bpy.app.version >= (4, 2, 0)
    # Blender's own mapping of each wheel's platform tag agrees with ours (what --split-platforms uses).
    spec = importlib.util.spec_from_file_location("blender_ext", tool.find_blender_ext())
    blender_ext_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(blender_ext_module)
    for w in wheels:
        assert blender_ext_module.blender_platforms_from_wheel_platform(w.platform) == [w.blender_platform]


def test_every_wheel_has_a_known_hash_and_a_bad_download_is_refused(tmp_path):
    """Every shipped wheel has its PyPI SHA-256 in tools/wheels.sha256; a wheel whose
    bytes differ is downloaded again, and refused (nothing left behind) if pip's differ."""
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text(encoding="utf-8"))
    hashes = tool.extension_wheels.known_hashes()
    assert sorted(hashes) == sorted(Path(w).name for w in manifest["wheels"])
    for path in tool.extension_wheels.fetch(REPO):
        assert tool.extension_wheels.sha256(path) == hashes[path.name]
    one = min(manifest["wheels"], key=lambda w: (REPO / w).stat().st_size)
    (tmp_path / "blender_manifest.toml").write_text(f'wheels = ["{one}"]\n')
    (tmp_path / "wheels").mkdir()
    (tmp_path / one).write_bytes(b"not the wheel")
    with pytest.raises(tool.extension_wheels.WheelError, match="SHA-256"):
        tool.extension_wheels.fetch(tmp_path, {Path(one).name: "0" * 64})
    assert sorted(p.name for p in (tmp_path / "wheels").iterdir()) == [Path(one).name]  # no temporary left
    assert (tmp_path / one).read_bytes() == b"not the wheel"  # and nothing replaced
    tool.extension_wheels.fetch(tmp_path, hashes)  # the real one, downloaded again
    assert tool.extension_wheels.sha256(tmp_path / one) == hashes[Path(one).name]
