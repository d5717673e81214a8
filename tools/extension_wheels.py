"""The Python wheels the extension ships (``wheels = [...]`` in blender_manifest.toml),
downloaded from PyPI with pip into the source tree's ``wheels/`` (not in git).

    python tools/extension_wheels.py [--source-dir .]

Each wheel the manifest names is fetched by its own tags (``pip download NAME==VERSION
--only-binary=:all: --no-deps --platform P --python-version X.Y --implementation cp
--abi A``), must come out under exactly that file name, and must match its SHA-256 in
``tools/wheels.sha256``; a wheel already there with the right hash is kept (no network).
A failed or wrong download leaves nothing behind. Prints each wheel and its Blender
platform. ``tools/package_extension.py`` runs this before it builds.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
HASHES = REPO / "tools" / "wheels.sha256"


class WheelError(Exception):
    """A wheel could not be fetched, or what was fetched is not what the manifest names."""


class Wheel(NamedTuple):
    """A wheel file name's parts (``{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl``)."""

    path: str  #: as the manifest writes it, e.g. ``./wheels/ufbx-0.0.5-cp311-cp311-win_amd64.whl``
    name: str
    version: str
    python: str  #: e.g. ``cp311``
    abi: str  #: e.g. ``cp311``
    platform: str  #: e.g. ``win_amd64``; compressed tags joined by "."

    @property
    def filename(self) -> str:
        return os.path.basename(self.path)

    @property
    def python_version(self) -> str:
        """``cp311`` -> ``3.11``."""
        digits = self.python.removeprefix("cp")
        return f"{digits[0]}.{digits[1:]}"

    @property
    def blender_platform(self) -> str:
        """Blender's name of the wheel's platform (``linux-x64``, ``macos-arm64``...)."""
        tag = self.platform.split(".")[0]
        system = next((b for w, b in _SYSTEMS.items() if tag.startswith(w)), tag)
        machine = next((b for w, b in _MACHINES.items() if tag.endswith(w)), tag.rpartition("_")[2])
        return f"{system}-{machine}"


_SYSTEMS = {"win": "windows", "macosx": "macos", "manylinux": "linux", "musllinux": "linux"}
_MACHINES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


def parse(path: str) -> Wheel:
    filename = os.path.basename(path)
    parts = filename.removesuffix(".whl").split("-")
    if not filename.endswith(".whl") or len(parts) not in (5, 6):
        raise WheelError(f"{path!r} is not a wheel file name")
    return Wheel(path, parts[0], parts[1], parts[-3], parts[-2], parts[-1])


def manifest_wheels(source_dir: Path) -> list[Wheel]:
    manifest = tomllib.loads((source_dir / "blender_manifest.toml").read_text(encoding="utf-8"))
    return [parse(p) for p in manifest.get("wheels", [])]


def known_hashes(path: Path = HASHES) -> dict[str, str]:
    """file name -> SHA-256 (hex), from a ``sha256sum``-style file (``#`` comments)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            digest, name = line.split(maxsplit=1)
            out[name.strip().lstrip("*")] = digest.lower()
    return out


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_command(wheel: Wheel, dest: str) -> list[str]:
    """pip's command that fetches exactly ``wheel`` (its own tags, no dependencies)."""
    platforms = [f"--platform={tag}" for tag in wheel.platform.split(".")]
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        f"{wheel.name}=={wheel.version}",
        "--only-binary=:all:",
        "--no-deps",
        *platforms,
        f"--python-version={wheel.python_version}",
        "--implementation=cp",
        f"--abi={wheel.abi}",
        "--disable-pip-version-check",
        "--quiet",
        f"--dest={dest}",
    ]


def fetch(source_dir: Path = REPO, hashes: dict[str, str] | None = None) -> list[Path]:
    """Make sure every wheel the manifest names is in ``source_dir`` with its known
    hash; download the missing ones. Returns their paths."""
    hashes = known_hashes() if hashes is None else hashes
    out = []
    for wheel in manifest_wheels(source_dir):
        target = (source_dir / wheel.path).resolve()
        expected = hashes.get(wheel.filename)
        if expected is None:
            raise WheelError(f"{wheel.filename} has no SHA-256 in {HASHES.relative_to(REPO)}: add PyPI's")
        if target.is_file() and sha256(target) == expected:
            out.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as folder:
            result = subprocess.run(download_command(wheel, folder), capture_output=True, text=True)
            got = Path(folder) / wheel.filename
            if result.returncode != 0 or not got.is_file():
                names = sorted(p.name for p in Path(folder).iterdir())
                raise WheelError(
                    f"pip could not download {wheel.filename} (exit {result.returncode}; got {names}):\n"
                    + (result.stdout + result.stderr).strip()[-2000:]
                )
            if (digest := sha256(got)) != expected:
                raise WheelError(f"{wheel.filename}: SHA-256 {digest}, expected {expected}")
            os.replace(got, target)
        out.append(target)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source-dir", type=Path, default=REPO, help="extension root (default: the repository)")
    args = parser.parse_args(argv)
    try:
        paths = fetch(args.source_dir.resolve())
    except WheelError as exc:
        print(f"extension_wheels: error: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(f"{parse(path.name).blender_platform:14} {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
