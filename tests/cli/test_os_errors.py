"""Class 5 of issue 12: when the system refuses a write (a full disk, a file size limit),
the command says what could not be written and why, exits 2, and of several outputs
writes all or none. The limit is real: RLIMIT_FSIZE makes the kernel refuse writes past
a size, as a full disk refuses them past its free space."""

from __future__ import annotations

import resource
import signal

import pytest
from cli_runner import run_cli


def _limit_file_size(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write, not a killed process

    return apply


def test_report_outputs_are_written_all_or_none(demo_dir, tmp_path):
    # The CSV (7 kB) fits under the limit, the JSON (75 kB) does not: neither appears.
    result = run_cli(
        "report",
        demo_dir / "demo.blend",
        "--csv",
        tmp_path / "r.csv",
        "--json",
        tmp_path / "r.json",
        preexec_fn=_limit_file_size(40_000),
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"hierarchy_inspector: cannot write {str(tmp_path / 'r.json')!r}: File too large"
    ]
    assert list(tmp_path.iterdir()) == []


def test_accumulated_export_outputs_are_written_all_or_none(demo_dir, tmp_path):
    result = run_cli(
        "export",
        demo_dir / "demo.blend",
        "--target",
        "accumulated",
        "--out",
        tmp_path / "a.json",
        "--csv",
        tmp_path / "a.csv",
        preexec_fn=_limit_file_size(8_000),
    )
    assert result.returncode == 2 and "File too large" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("method", ["helpers", "bake"])
def test_fix_says_why_blender_could_not_save(demo_dir, tmp_path, method):
    out = tmp_path / "fixed.blend"
    result = run_cli(
        "fix", demo_dir / "demo.blend", "--method", method, "--out", out, preexec_fn=_limit_file_size(150_000)
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"hierarchy_inspector: Blender could not save {str(out)!r}: the file would exceed this process's "
        "file size limit (150000 bytes, ulimit -f)"
    ]
    assert "No such file or directory" not in result.stderr
    assert list(tmp_path.iterdir()) == []
