"""The range scan as a user runs it in a real Blender window (``make test-ui``): started
modal, cancelled with Esc (Blender's event simulation) while it reads; the scene is back
on the frame it was on and nothing is listed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from extension_build import build_zip

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "ui-range"
USER = REPO / "build" / "blender-user-range"
BLENDER_SH = REPO / "tools" / "blender.sh"


def _run(cmd, env, log: Path, timeout: float) -> int:
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            pytest.fail(f"{cmd[:3]} did not finish in {timeout} s; see {log}", pytrace=False)


def test_escape_cancels_the_range_scan_and_restores_the_frame():
    if subprocess.run([str(BLENDER_SH), "--which"], cwd=REPO, capture_output=True).returncode != 0:
        pytest.fail("needs a Blender >= 4.2 binary: make test-ui provisions one", pytrace=False)
    zip_path = build_zip()
    shutil.rmtree(USER, ignore_errors=True)
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(USER), "BLENDER_XVFB_SCREEN": "1280x800x24"}
    env.pop("HIERARCHY_INSPECTOR_MODULE", None)
    install = [str(BLENDER_SH), "--factory-startup", "--offline-mode", "--command", "extension", "install-file"]
    assert _run([*install, "-r", "user_default", "--enable", str(zip_path)], env, OUT / "install.log", 120) == 0
    run = [str(BLENDER_SH), "--xvfb", "--factory-startup", "--offline-mode", "--enable-event-simulate"]
    run += ["--python", "tools/ui_range_cancel.py", "--", str(OUT)]
    _run(run, env, OUT / "blender.log", 300)
    result = json.loads((OUT / "cancel.json").read_text())
    assert "error" not in result, result.get("error")
    assert result["invoke"] == ["RUNNING_MODAL"]
    assert "HIERARCHY_INSPECTOR_OT_scan_range" in result["running"]  # still reading when Esc came
    assert result["frame_after"] == result["start_frame"]
    assert not result["range_done"] and not result["running_after"]
