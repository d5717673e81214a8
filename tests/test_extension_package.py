"""The extension zip, as Blender's own tooling builds and validates it.

Runs ``blender_ext.py`` (the code behind ``blender --command extension build|validate``,
shipped inside the bpy wheel) on the repository: no Blender binary needed.
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
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(".*", "build", "*.egg-info"))
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


def test_packaging_script_builds_a_checked_zip(tmp_path):
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "package_extension.py"), "--output-dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    zip_path = Path(result.stdout.strip().splitlines()[-1])
    assert zip_path.parent == tmp_path
    assert unwanted(zipfile.ZipFile(zip_path).namelist()) == []
