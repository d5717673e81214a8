"""The installed extension in a stock Blender binary (4.3.2 in CI), with nothing added to
its Python: no test runner, no PYTHONPATH, no extra packages. ``demo`` and ``report
--pictures`` must write valid PNG pictures there, and the command line must keep
Blender's own log lines out of stdout; ``export --target fbx`` must read its file back
with the ufbx the extension's own wheel brought (Blender installs the wheel for its
Python: cp313 for Debian's 4.3). Runs with ``make test-ui`` (tests/window)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from extension_build import build_zip
from png_reader import read_png

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "stock"
USER = REPO / "build" / "blender-user-stock"
BLENDER_SH = REPO / "tools" / "blender.sh"
ORANGE, BLUE = np.array([0xF0, 0x8C, 0x00]), np.array([0x1C, 0x7E, 0xD6])


def _run(args: list[str], timeout: float = 300, user: Path = USER) -> subprocess.CompletedProcess:
    env = {"BLENDER_USER_RESOURCES": str(user), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    env.update({k: v for k, v in os.environ.items() if k in ("BLENDER", "BLENDER_CHROOT", "HOME")})
    return subprocess.run([str(BLENDER_SH), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def stock() -> Path:
    which = subprocess.run([str(BLENDER_SH), "--which"], cwd=REPO, capture_output=True, text=True)
    if which.returncode != 0:
        pytest.fail(f"needs a Blender >= 4.2 binary: {which.stderr.strip()}", pytrace=False)
    zip_path = build_zip()  # this machine's platform: its ufbx wheels
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


PROBE_UFBX = "import importlib.util, sys; s = importlib.util.find_spec('ufbx'); print('UFBX=' + str(s and s.origin))"


def _ufbx_origin(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr[-2000:]
    return next(line[5:] for line in result.stdout.splitlines() if line.startswith("UFBX="))


def test_ufbx_comes_from_the_extensions_wheel(stock):
    """Without the extension this Blender has no ufbx; with it, ufbx is the wheel Blender
    installed for the extension (its user directory's extensions site-packages)."""
    bare = REPO / "build" / "blender-user-bare"
    shutil.rmtree(bare, ignore_errors=True)
    bare.mkdir(parents=True)
    assert _ufbx_origin(_run(["-b", "--factory-startup", "--python-expr", PROBE_UFBX], user=bare)) == "None"
    origin = _ufbx_origin(_run(["-b", "--python-expr", PROBE_UFBX]))
    assert "/blender-user-stock/extensions/.local/lib/python3." in origin, origin


def _read_back(stdout: str) -> float:
    """The relative error the export printed for its ufbx read-back."""
    line = next((ln for ln in stdout.splitlines() if ln.startswith("read back with ufbx")), None)
    assert line is not None, stdout[-2000:]
    return float(line.split("relative error ")[1].split()[0])


def test_fbx_export_reads_its_file_back_in_stock_blender(stock, tmp_path):
    """The demo (one frame) and an animated rig with a skinned mesh (25 frames), built and
    exported by the stock binary: both read back with ufbx in its own process (Blender's
    Python and the extension's wheel), exact, exit 0."""
    built = _run(
        ["-b", "--python-expr", BUILD_RIG.format(path=str((stock / "rig.blend").relative_to(REPO)))], timeout=120
    )
    assert built.returncode == 0 and (stock / "rig.blend").is_file(), built.stderr[-2000:]
    demo = _run(["-b", "--offline-mode", "-c", "hierarchy_inspector", "demo", "--out", str(stock / "fbx_demo")])
    assert demo.returncode == 0, demo.stderr[-3000:]
    for blend, frames in ((stock / "fbx_demo" / "demo.blend", []), (stock / "rig.blend", ["--frames", "1:25"])):
        out = stock / f"{blend.stem}.fbx"
        export = _run(
            ["-b", "--offline-mode", "-c", "hierarchy_inspector", "export", str(blend), "--target", "fbx"]
            + ["--out", str(out), *frames]
        )
        assert export.returncode == 0, export.stdout[-2000:] + export.stderr[-2000:]
        assert "not read back" not in export.stdout
        assert _read_back(export.stdout) < 1e-5 and out.is_file()


#: Blender Python, run in the stock binary (in the repository: a relative path reaches a
#: chroot's Blender too): the export tests' Inherit Scale rig (a root bone scaling
#: non-uniformly, a child bone per Inherit Scale mode, a skinned box each), saved.
BUILD_RIG = (
    "import bpy, importlib; "
    "scenes = importlib.import_module('bl_ext.user_default.hierarchy_inspector.addon.scene.exports.scenes'); "
    "bpy.ops.wm.read_factory_settings(use_empty=True); "
    "scenes.inherit_scale_rig(bpy.context.scene); "
    "bpy.ops.wm.save_as_mainfile(filepath={path!r})"
)
