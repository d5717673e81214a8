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


def run_cli(*args, cwd=None, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Run the command line to the end; ``env`` adds to the environment, ``kwargs`` go
    to :func:`subprocess.run`."""
    full_env = {**os.environ, **env} if env else None
    return subprocess.run(
        [*cli_prefix(), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600, env=full_env, **kwargs
    )


def start_cli(*args, **kwargs) -> subprocess.Popen:
    """Start the command line and return at once (to signal or kill it)."""
    return subprocess.Popen(
        [*cli_prefix(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
    )
