"""Build and validate the Blender extension, one .zip per platform, with Blender's own
extension tooling.

Uses the ``blender_ext.py`` command line shipped inside the ``bpy`` wheel (the same code
as ``blender --command extension build|validate``), so no Blender binary is needed::

    python tools/package_extension.py [--source-dir .] [--output-dir build/dist]

Steps: fetch the wheels the manifest names (``tools/extension_wheels.py``: pip, from
PyPI, hashes checked), validate the manifest and source directory, build
``<id>-<version>-<platform>.zip`` for every platform of the manifest
(``build --split-platforms``: each with only its platform's wheels; the manifest's
``[build] paths_exclude_pattern`` decides what else is left out), validate each built
zip, then check that each holds the add-on, its platform's wheels and none of the
development files. Tags are checked against Blender's own list, as ``blender --command
extension`` does. Prints the zips, the one for this machine's platform on the last line.
Exit code 0 = built and valid, 1 = not.
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import extension_wheels  # noqa: E402  (tools/ is not a package)

# What the zip must hold, and what it must not (top-level directories / any path part).
REQUIRED_FILES = ("__init__.py", "blender_manifest.toml")
REQUIRED_PACKAGES = ("core", "addon")
FORBIDDEN_TOP_DIRS = ("tests", "benchmarks", "build", "dist", "tools")
FORBIDDEN_PARTS = ("__pycache__",)


class PackageError(Exception):
    """The extension could not be built, or what was built is wrong."""


def find_bpy_scripts() -> Path:
    """The ``scripts`` directory of the installed ``bpy`` wheel (``bpy/<version>/scripts``)."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        raise PackageError(
            f"the 'bpy' package (Blender as a Python module, bpy==5.0.1 from PyPI) is not installed for "
            f"{sys.executable}; run 'make test' once to create the venv, or pass --blender-ext"
        )
    bpy_dir = Path(next(iter(spec.submodule_search_locations)))
    candidates = sorted(bpy_dir.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not candidates:
        raise PackageError(f"no */scripts/addons_core/bl_pkg/cli/blender_ext.py inside {bpy_dir}")
    return candidates[-1].parents[3]


def find_blender_ext() -> Path:
    """Blender's extension command line, ``blender_ext.py``, from the ``bpy`` wheel."""
    return find_bpy_scripts() / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"


def find_valid_tags(blender_ext: Path) -> Path | None:
    """Blender's list of valid tags next to ``blender_ext.py`` (what ``blender --command
    extension`` validates against); None when that Blender has none."""
    scripts = blender_ext.resolve().parents[3]  # scripts/addons_core/bl_pkg/cli/blender_ext.py
    tags = scripts / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    return tags if tags.is_file() else None


def blender_ext_command(blender_ext: Path, subcommand: str, *args: str, valid_tags: Path | None) -> list[str]:
    tags = [f"--valid-tags={valid_tags}"] if valid_tags is not None else []
    return [sys.executable, str(blender_ext), subcommand, *tags, *args]


def run(cmd: list[str], what: str) -> str:
    result = subprocess.run(cmd, capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0:
        raise PackageError(f"{what} failed (exit {result.returncode}):\n{output}")
    return output


def zip_problems(names: list[str], source_dir: Path) -> list[str]:
    """What is wrong with the list of entries of a built extension zip (empty when nothing)."""
    problems = []
    entries = set(names)
    for required in REQUIRED_FILES:
        if required not in entries:
            problems.append(f"missing {required}")
    for package in REQUIRED_PACKAGES:
        for source in sorted((source_dir / package).glob("*.py")):
            if f"{package}/{source.name}" not in entries:
                problems.append(f"missing {package}/{source.name}")
    for name in names:
        parts = name.rstrip("/").split("/")
        if name.startswith("/") or ".." in parts:
            problems.append(f"unsafe path {name!r}")
        elif parts[0] in FORBIDDEN_TOP_DIRS or any(p in FORBIDDEN_PARTS for p in parts):
            problems.append(f"development file {name!r}")
        elif any(p.startswith(".") for p in parts):
            problems.append(f"dot-file {name!r}")
        elif name.endswith((".pyc", ".zip")):
            problems.append(f"build artefact {name!r}")
    return problems


def wheel_problems(names: list[str], platform_name: str, manifest: dict) -> list[str]:
    """What is wrong with the wheels in a platform's zip: every wheel of the manifest for
    that platform, and no other (empty when nothing)."""
    wanted = {w.removeprefix("./") for w in manifest.get("wheels", [])}
    wanted = {w for w in wanted if extension_wheels.parse(w).blender_platform == platform_name}
    held = {n for n in names if n.endswith(".whl")}
    problems = [f"missing wheel {w}" for w in sorted(wanted - held)]
    problems += [f"wheel for another platform {w}" for w in sorted(held - wanted)]
    if not wanted:
        problems.append(f"no wheel for {platform_name}")
    return problems


def this_platform() -> str:
    """This machine's platform as Blender names it (``linux-x64``, ``macos-arm64``...)."""
    system = {"darwin": "macos"}.get(platform.system().lower(), platform.system().lower())
    machine = platform.machine().lower()
    return f"{system}-{ {'x86_64': 'x64', 'amd64': 'x64', 'aarch64': 'arm64'}.get(machine, machine) }"


def package(
    source_dir: Path, output_dir: Path, blender_ext: Path | None = None, verbose: bool = False
) -> dict[str, Path]:
    """Fetch the wheels, validate, build and check the extension; return each platform's zip."""
    source_dir = source_dir.resolve()
    manifest_path = source_dir / "blender_manifest.toml"
    if not manifest_path.is_file():
        raise PackageError(f"no blender_manifest.toml in {source_dir}")
    try:
        manifest = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"{manifest_path}: not valid TOML: {exc}") from None
    platforms = manifest.get("platforms") or []
    if not platforms:
        raise PackageError(f"{manifest_path} names no platforms: nothing to split the build by")
    try:
        extension_wheels.fetch(source_dir)
    except extension_wheels.WheelError as exc:
        raise PackageError(f"fetching the manifest's wheels: {exc}") from None
    blender_ext = blender_ext or find_blender_ext()
    if not blender_ext.is_file():
        raise PackageError(f"Blender's extension tool {blender_ext} does not exist")
    valid_tags = find_valid_tags(blender_ext)

    run(blender_ext_command(blender_ext, "validate", str(source_dir), valid_tags=valid_tags), "validating the manifest")

    output_dir.mkdir(parents=True, exist_ok=True)
    stem = output_dir.resolve() / f"{manifest.get('id')}-{manifest.get('version')}.zip"
    zips = {p: stem.with_name(f"{stem.stem}-{p.replace('-', '_')}.zip") for p in platforms}
    for zip_path in (stem, *zips.values()):
        zip_path.unlink(missing_ok=True)
    log = run(
        blender_ext_command(
            blender_ext,
            "build",
            f"--source-dir={source_dir}",
            f"--output-filepath={stem}",
            "--split-platforms",
            *(["--verbose"] if verbose else []),
            valid_tags=valid_tags,
        ),
        "building the extension",
    )
    if verbose:
        print(log)
    for platform_name, zip_path in zips.items():
        if not zip_path.is_file():
            raise PackageError(f"the build reported success but {zip_path} was not written:\n{log}")
        run(
            blender_ext_command(blender_ext, "validate", str(zip_path), valid_tags=valid_tags),
            "validating the built zip",
        )
        with zipfile.ZipFile(zip_path) as archive:
            names = archive.namelist()
        if problems := zip_problems(names, source_dir) + wheel_problems(names, platform_name, manifest):
            for path in zips.values():
                path.unlink(missing_ok=True)
            raise PackageError(
                f"the built zip was wrong, so the zips were deleted ({zip_path}):\n  " + "\n  ".join(problems)
            )
    return zips


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source-dir", type=Path, default=REPO, help="extension root (default: the repository)")
    parser.add_argument("--output-dir", type=Path, default=REPO / "build" / "dist", help="default: build/dist")
    parser.add_argument("--blender-ext", type=Path, help="blender_ext.py to use (default: the one in the bpy wheel)")
    parser.add_argument("--verbose", action="store_true", help="list the files added to the zip")
    args = parser.parse_args(argv)
    try:
        zips = package(args.source_dir, args.output_dir, args.blender_ext, args.verbose)
    except PackageError as exc:
        print(f"package_extension: error: {exc}", file=sys.stderr)
        return 1
    here = this_platform()
    print(f"package_extension: wheels fetched, manifest validated, {len(zips)} platform zips built and validated:")
    for name, zip_path in sorted(zips.items(), key=lambda item: item[0] == here):
        with zipfile.ZipFile(zip_path) as archive:
            count = len(archive.namelist())
        size = zip_path.stat().st_size / 1e6
        print(f"  {name:14} {count} files, {size:.2f} MB" + ("  (this machine's, below)" if name == here else ""))
    if here not in zips:
        print(f"package_extension: error: no zip for this machine's platform {here}", file=sys.stderr)
        return 1
    print(zips[here])
    return 0


if __name__ == "__main__":
    sys.exit(main())
