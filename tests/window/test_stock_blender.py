"""The installed extension in a stock Blender binary (4.3.2 in CI), with nothing added to
its Python: no test runner, no PYTHONPATH, no extra packages. ``demo`` and ``report
--pictures`` must write valid PNG pictures there, and the command line must keep
Blender's own log lines out of stdout. Runs with ``make test-ui`` (tests/window)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from png_reader import read_png

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "stock"
USER = REPO / "build" / "blender-user-stock"
BLENDER_SH = REPO / "tools" / "blender.sh"
ORANGE, BLUE = np.array([0xF0, 0x8C, 0x00]), np.array([0x1C, 0x7E, 0xD6])


def _run(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    env = {"BLENDER_USER_RESOURCES": str(USER), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env.update({k: v for k, v in os.environ.items() if k in ("BLENDER", "BLENDER_CHROOT", "HOME")})
    return subprocess.run([str(BLENDER_SH), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def stock() -> Path:
    which = subprocess.run([str(BLENDER_SH), "--which"], cwd=REPO, capture_output=True, text=True)
    if which.returncode != 0:
        pytest.fail(f"needs a Blender >= 4.2 binary: {which.stderr.strip()}", pytrace=False)
    built = subprocess.run(
        [sys.executable, "tools/package_extension.py", "--output-dir", "build/dist"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    manifest = tomllib.loads((REPO / "blender_manifest.toml").read_text())
    zip_path = REPO / "build" / "dist" / f"{manifest['id']}-{manifest['version']}.zip"
    shutil.rmtree(USER, ignore_errors=True)
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    install = _run(
        ["--factory-startup", "--offline-mode", "--command", "extension", "install-file"]
        + ["-r", "user_default", "--enable", str(zip_path)]
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    return OUT


def test_blenders_python_is_stock(stock):
    probe = _run(
        [
            "-b",
            "--factory-startup",
            "--python-expr",
            "import importlib.util, sys; sys.exit(7 if importlib.util.find_spec('matplotlib') else 0)",
        ]
    )
    assert probe.returncode == 0, "matplotlib is importable in this Blender: the test would prove nothing"


def test_demo_and_report_draw_pictures_in_stock_blender(stock):
    demo = _run(["-b", "--offline-mode", "-c", "hierarchy_inspector", "demo", "--out", str(stock / "demo")])
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "Read blend" not in demo.stdout and "INFO" not in demo.stdout and "Saved copy" not in demo.stdout
    report = _run(
        [
            "-b",
            "--offline-mode",
            "-c",
            "hierarchy_inspector",
            "report",
            str(stock / "demo" / "demo.blend"),
            "--pictures",
            str(stock / "pictures"),
        ]
    )
    assert report.returncode == 0, report.stderr[-3000:]
    for path in (
        stock / "demo" / "worst_nodes.png",
        stock / "demo" / "deviation_chart.png",
        stock / "pictures" / "worst_nodes.png",
        stock / "pictures" / "deviation_chart.png",
    ):
        img = read_png(path.read_bytes()).astype(np.int64)
        assert img.shape[0] > 300 and img.shape[1] > 500, path
        assert img.std() > 10, path  # not blank
        for colour in (ORANGE, BLUE):
            assert (np.abs(img - colour).max(axis=-1) < 20).sum() > 50, (path, colour)
