"""Running the command line as a user does: a separate process, real exit codes.

By default ``python -m hierarchy_inspector`` with this interpreter (bpy from PyPI).
Set ``HIERARCHY_INSPECTOR_CLI`` to a JSON list to run another command prefix instead,
e.g. ``["blender", "-b", "--factory-startup", "-c", "hierarchy_inspector"]`` for an
installed extension.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys


def cli_prefix() -> list[str]:
    custom = os.environ.get("HIERARCHY_INSPECTOR_CLI")
    return json.loads(custom) if custom else [sys.executable, "-m", "hierarchy_inspector"]


def run_cli(*args, cwd=None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the command line with ``args``; ``env`` adds to the environment."""
    full_env = {**os.environ, **env} if env else None
    return subprocess.run(
        [*cli_prefix(), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600, env=full_env
    )
