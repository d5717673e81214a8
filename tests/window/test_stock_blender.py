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
import zlib
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "stock"
USER = REPO / "build" / "blender-user-stock"
BLENDER_SH = REPO / "tools" / "blender.sh"
ORANGE, BLUE = np.array([0xF0, 0x8C, 0x00]), np.array([0x1C, 0x7E, 0xD6])


def read_png(data: bytes) -> np.ndarray:
    """An 8-bit RGB PNG decoded with zlib alone (all five row filters), independently of
    the writer: ``(H, W, 3)`` uint8."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    pos, chunks = 8, {}
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        assert zlib.crc32(kind + body) == int.from_bytes(data[pos + 8 + length : pos + 12 + length], "big"), kind
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + length
    w, h = int.from_bytes(chunks[b"IHDR"][:4], "big"), int.from_bytes(chunks[b"IHDR"][4:8], "big")
    assert chunks[b"IHDR"][8:10] == bytes([8, 2]) and b"IEND" in chunks
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(h, 1 + 3 * w)
    out = np.zeros((h, 3 * w), dtype=np.int64)
    for y in range(h):
        f, row = raw[y, 0], raw[y, 1:].astype(np.int64)
        prev = out[y - 1] if y else np.zeros(3 * w, dtype=np.int64)
        if f == 0:
            out[y] = row
        elif f == 2:
            out[y] = (row + prev) % 256
        else:
            cur = np.zeros(3 * w, dtype=np.int64)
            for x in range(3 * w):
                left = cur[x - 3] if x >= 3 else 0
                up, ul = prev[x], (prev[x - 3] if x >= 3 else 0)
                if f == 1:
                    pred = left
                elif f == 3:
                    pred = (left + up) // 2
                else:
                    p = left + up - ul
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else ul
                cur[x] = (row[x] + pred) % 256
            out[y] = cur
    return out.reshape(h, w, 3).astype(np.uint8)


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
