"""Running the command line as a user does: a separate process, real exit codes.

By default ``python -m hierarchy_inspector`` with this interpreter (bpy from PyPI).
Set ``HIERARCHY_INSPECTOR_CLI`` to a JSON list to run another command prefix instead,
e.g. ``["blender", "-b", "--factory-startup", "-c", "hierarchy_inspector"]`` for an
installed extension.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys


def cli_prefix() -> list[str]:
    custom = os.environ.get("HIERARCHY_INSPECTOR_CLI")
    return json.loads(custom) if custom else [sys.executable, "-m", "hierarchy_inspector"]


def run_cli(*args, cwd=None, env: dict | None = None, wrap=(), **kwargs) -> subprocess.CompletedProcess:
    """Run the command line to the end; ``env`` adds to the environment, ``wrap`` goes
    before the command (see :func:`unprivileged`), ``kwargs`` go to :func:`subprocess.run`."""
    full_env = {**os.environ, **env} if env else None
    return subprocess.run(
        [*wrap, *cli_prefix(), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        env=full_env,
        **kwargs,
    )


def unprivileged() -> dict:
    """``run_cli`` arguments under which file permissions hold: as root (CI, containers)
    the command runs without the capabilities that override them (``setpriv``), so that
    a mode 000 file is unreadable as for any user; the test is skipped where that
    cannot be done."""
    if os.geteuid() != 0:
        return {}
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        import pytest

        pytest.skip("running as root without setpriv: file permissions cannot be made to hold")
    return {"wrap": [setpriv, "--bounding-set=-dac_override,-dac_read_search"]}


def start_cli(*args, **kwargs) -> subprocess.Popen:
    """Start the command line and return at once (to signal or kill it)."""
    return subprocess.Popen(
        [*cli_prefix(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
    )
