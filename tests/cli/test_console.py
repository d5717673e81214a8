"""The command line's own output only: Blender's log lines (file reading, the glTF
exporter's INFO lines, "Saved copy as") reach the user only with --verbose; one summary
line on stderr in pipes; --json - puts the report (and nothing else) on stdout."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runner import cli_prefix, run_cli

jsonschema = pytest.importorskip("jsonschema")
REPORT_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())

#: What Blender and its glTF exporter print when they are not silenced.
BLENDER_NOISE = ("Read blend", "INFO", "Saved copy as", "glTF 2.0 export", "Not freed memory")


def _noise(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(n in line for n in BLENDER_NOISE)]


def _ours(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_report_prints_only_the_table_and_one_summary_line(demo_dir, tmp_path):
    result = run_cli("report", demo_dir / "demo.blend", "--json", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert _noise(result.stdout) == [] and _noise(result.stderr) == []
    assert "29 nodes, 16 flagged" in result.stdout
    lines = _ours(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("hierarchy_inspector: report: 29 nodes, 16 flagged"), lines
    assert "\r" not in result.stderr  # no progress in a pipe


def test_verbose_lets_blender_speak(demo_dir, tmp_path):
    quiet = run_cli("export", demo_dir / "demo.blend", "--target", "gltf", "--out", tmp_path / "q.glb")
    loud = run_cli("export", demo_dir / "demo.blend", "--target", "gltf", "--out", tmp_path / "l.glb", "--verbose")
    assert quiet.returncode == 0 and loud.returncode == 0, loud.stderr
    assert _noise(quiet.stdout + quiet.stderr) == []
    assert any("glTF 2.0 export" in line for line in _noise(loud.stdout + loud.stderr))
    # Our own lines are the same either way.
    assert [ln for ln in quiet.stdout.splitlines() if ln.startswith("wrote")] == [
        ln.replace("l.glb", "q.glb") for ln in loud.stdout.splitlines() if ln.startswith("wrote")
    ]
    lines = _ours(quiet.stderr)  # the summary line carries the export's numbers
    assert len(lines) == 1 and re.match(
        r"hierarchy_inspector: export: 1 frame\(s\), \d+ helper\(s\), read back ", lines[0]
    )


def test_fix_does_not_echo_blenders_save_message(demo_dir, tmp_path):
    result = run_cli("fix", demo_dir / "demo.blend", "--method", "helpers", "--out", tmp_path / "f.blend")
    assert result.returncode == 0, result.stderr
    assert _noise(result.stdout + result.stderr) == []
    assert result.stdout.startswith("wrote ") or "wrote " in result.stdout


def test_demo_is_quiet(demo_dir):
    assert _noise((demo_dir / "stdout.txt").read_text()) == []


def test_json_to_stdout_is_the_report_alone(demo_dir, tmp_path):
    result = run_cli("report", demo_dir / "demo.blend", "--json", "-")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # nothing else on stdout
    jsonschema.validate(report, REPORT_SCHEMA)
    assert len(report["nodes"]) == 29
    both = run_cli("report", demo_dir / "demo.blend", "--json", "-", "--csv", "-")
    assert both.returncode == 2 and "only one of them" in both.stderr


def test_errors_stay_one_line_when_quiet(tmp_path):
    bad = tmp_path / "bad.blend"
    bad.write_bytes(b"BLENDER-v402" + b"\0" * 64)  # the magic, then nothing Blender can read
    result = run_cli("report", bad)
    assert result.returncode == 2, result.stderr
    lines = _ours(result.stderr)
    assert len(lines) == 1 and lines[0].startswith("hierarchy_inspector: ") and repr(str(bad)) in lines[0], lines


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def test_progress_on_a_terminal_only(demo_dir, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("a.blend", "b.blend"):
        shutil.copy(demo_dir / "demo.blend", lib / name)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*cli_prefix(), "audit", str(lib), "--out", str(tmp_path / "tty"), "--jobs", "1"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    err = _read_all(master).decode("utf-8", "replace")
    out = proc.communicate(timeout=600)[0].decode()
    os.close(master)
    assert proc.returncode == 0, err
    assert "\r" in err and "audit  50% 1/2 files" in err and "audit 100% 2/2 files" in err
    assert "\r" not in out and "2 files: 2 inspected" in out  # progress never on stdout
    piped = run_cli("audit", lib, "--out", tmp_path / "pipe", "--jobs", "1")
    assert "\r" not in piped.stderr and "%" not in piped.stderr
