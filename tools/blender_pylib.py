"""Provide the test dependencies (the ``test`` extra of pyproject.toml: pytest, hypothesis, ...
pyproject.toml) for Blender's own Python, without touching Blender or the system.

    python tools/blender_pylib.py [--dest build/blender-pylib]

Asks the Blender that ``tools/blender.sh`` runs for its Python version and the
distributions its Python already has (numpy above all), lets pip resolve the requirements
for that Python (``--dry-run --report``, wheels only), and installs what is resolved
MINUS what Blender already has, with ``--no-deps --target DEST/pyX.Y``: nothing shadows
Blender's own numpy (compiled wheels such as matplotlib's are built against numpy 2's
ABI, which Blender's numpy 2.x satisfies). ``tests/blender_runner.py`` puts that directory
first on Blender's ``sys.path``. Reused while the requirements and Blender's Python are
unchanged. Prints the directory.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STAMP = ".requirements"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def ask_blender() -> tuple[str, dict[str, str]]:
    """``X.Y`` of the Python inside the Blender that tools/blender.sh runs, and the
    distributions (canonical name -> version) that Python can already import."""
    code = (
        "import sys, json, importlib.metadata as m; "
        "print('BLENDER_PYTHON=' + json.dumps({'version': '%d.%d' % sys.version_info[:2], "
        "'dists': {d.metadata['Name']: d.version for d in m.distributions() if d.metadata['Name']}}))"
    )
    cmd = [str(REPO / "tools" / "blender.sh"), "--background", "--factory-startup", "--python-expr", code]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    match = re.search(r"^BLENDER_PYTHON=(.*)$", result.stdout, re.MULTILINE)
    if result.returncode != 0 or not match:
        sys.exit(
            f"blender_pylib: error: could not ask Blender for its Python version "
            f"(exit {result.returncode}):\n{result.stdout}{result.stderr}"
        )
    info = json.loads(match.group(1))
    return info["version"], {canonical(k): v for k, v in info["dists"].items()}


def test_requirements() -> list[str]:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    try:
        return list(pyproject["project"]["optional-dependencies"]["test"])
    except KeyError:
        sys.exit("blender_pylib: error: pyproject.toml has no [project.optional-dependencies] test list")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=REPO / "build" / "blender-pylib")
    args = parser.parse_args(argv)

    version, present = ask_blender()
    requirements = test_requirements()
    target = args.dest.resolve() / f"py{version}"
    wanted = (
        "\n".join([f"python={version}", *requirements, *sorted(f"has {k}=={v}" for k, v in present.items())]) + "\n"
    )
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted:
        print(target)
        return 0

    major, minor = version.split(".")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    for_blender = [
        "--python-version", version, "--implementation", "cp",
        "--abi", f"cp{major}{minor}", "--abi", "abi3", "--abi", "none", "--only-binary=:all:",
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [*pip, "--dry-run", "--ignore-installed", "--report", str(report), *for_blender, *requirements]
        if subprocess.run(cmd).returncode != 0:
            sys.exit(f"blender_pylib: error: pip could not resolve the test requirements for Python {version}: {cmd}")
        resolved = {
            canonical(item["metadata"]["name"]): item["metadata"]["version"]
            for item in json.loads(report.read_text(encoding="utf-8"))["install"]
        }
    skipped = sorted(f"{name} (Blender has {present[name]})" for name in resolved if name in present)
    pins = sorted(f"{name}=={v}" for name, v in resolved.items() if name not in present)
    print(f"blender_pylib: installing for Blender's Python {version} into {target}: {' '.join(pins)}", file=sys.stderr)
    if skipped:
        print(f"blender_pylib: using Blender's own {', '.join(skipped)}", file=sys.stderr)

    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    cmd = [*pip, "--no-deps", "--no-compile", "--target", str(staging), *for_blender, *pins]
    if subprocess.run(cmd).returncode != 0:
        sys.exit(f"blender_pylib: error: pip could not install the test requirements for Python {version}: {cmd}")
    (staging / STAMP).write_text(wanted, encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
