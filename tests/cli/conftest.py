"""Fixtures for the command-line tests (see ``tests/cli_runner.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

pytest.importorskip("bpy")


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> Path:
    """The demo, run once for the session: its files are the other tests' inputs."""
    out = tmp_path_factory.mktemp("demo")
    result = run_cli("demo", "--out", out)
    assert result.returncode == 0, result.stderr[-3000:]
    (out / "stdout.txt").write_text(result.stdout)
    return out
