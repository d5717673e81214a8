"""The extension zip for this machine's platform, built as ``make package`` builds it
(tools/package_extension.py: the manifest's wheels fetched, one zip per platform, each
validated), for the tests that install it into a real Blender binary (tests/window)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def build_zip() -> Path:
    """Build the zips into build/dist; this machine's platform's zip (the tool's last line)."""
    built = subprocess.run(
        [sys.executable, "tools/package_extension.py", "--output-dir", "build/dist"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        pytest.fail(f"building the extension zip failed:\n{built.stdout}{built.stderr}", pytrace=False)
    return Path(built.stdout.strip().splitlines()[-1])
