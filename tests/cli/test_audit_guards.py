"""Issue 24: audits that survive anything. Unreadable folders and files, dangling and
looping symlinks and a missing worker program are recorded or refused (never left out,
never exit 3); a file is one file whichever mount path a shard saw it through; a torn
last line and a re-audited file leave one line per file; workers take many files in
turn and die with their parent; a killed audit's scratch folder is removed by the next."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import blend_factory
import pytest
from cli_runner import cli_prefix, run_cli, start_cli, unprivileged

TESTS = Path(__file__).resolve().parents[1]


def _lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "audit.jsonl").read_text().splitlines()]


def _records(out: Path) -> dict[str, dict]:
    return {r["relative"]: r for r in _lines(out)}


def _fake(tmp_path: Path, **extra) -> dict:
    """The environment that runs tests/audit_fake_worker.py as the workers."""
    return {
        "HIERARCHY_INSPECTOR_WORKER": json.dumps([sys.executable, str(TESTS / "audit_fake_worker.py")]),
        "AUDIT_FAKE_LOG": str(tmp_path / "calls.log"),
        "AUDIT_FAKE_PIDS": str(tmp_path / "pids.log"),
        "PYTHONPATH": str(TESTS),
        "HIERARCHY_INSPECTOR_CLI": json.dumps(cli_prefix()),
        **extra,
    }


@pytest.fixture
def lib(demo_dir, tmp_path) -> Path:
    """Three copies of the demo in a folder of its own (one in a subfolder)."""
    folder = tmp_path / "lib"
    (folder / "sub").mkdir(parents=True)
    for name in ("a.blend", "b.blend", "sub/c.blend"):
        shutil.copy(demo_dir / "demo.blend", folder / name)
    return folder


def test_an_unlistable_folder_and_an_unreadable_file_are_recorded(lib, tmp_path):
    (lib / "locked").mkdir()
    shutil.copy(lib / "a.blend", lib / "locked" / "hidden.blend")
    (lib / "locked").chmod(0)
    (lib / "sub" / "c.blend").chmod(0)
    try:
        result = run_cli("audit", lib, "--out", tmp_path / "out", "--jobs", "1", **unprivileged())
    finally:
        (lib / "locked").chmod(0o755)
    assert result.returncode == 2, result.stderr
    records = _records(tmp_path / "out")
    assert sorted(records) == ["a.blend", "b.blend", "locked/", "sub/c.blend"]
    locked, unreadable = records["locked/"], records["sub/c.blend"]
    assert locked["status"] == "error" and locked["message"] == "cannot list this folder (Permission denied)"
    assert unreadable["status"] == "error" and unreadable["exit_code"] == 2  # it was a crash (exit 3)
    assert unreadable["message"].endswith("cannot read it (Permission denied)")
    assert "4 files: 2 inspected" in result.stdout and "locked/: error" in result.stdout


def test_dangling_and_looping_symlinks_are_recorded_not_exit_3(lib, tmp_path):
    (lib / "gone.blend").symlink_to(tmp_path / "nowhere.blend")
    (lib / "loop.blend").symlink_to(lib / "loop.blend")
    result = run_cli("audit", lib, "--out", tmp_path / "out", "--jobs", "1")
    assert result.returncode == 2, result.stderr
    records = _records(tmp_path / "out")
    assert records["gone.blend"]["message"] == "cannot read it (No such file or directory)"
    assert records["loop.blend"]["message"] == "cannot read it (Too many levels of symbolic links)"
    assert all(records[n]["status"] == "ok" for n in ("a.blend", "b.blend", "sub/c.blend"))


def test_a_worker_program_that_does_not_exist_is_exit_2(lib, tmp_path):
    worker = json.dumps(["/no/such/blender", "-b"])
    result = run_cli("audit", lib, "--out", tmp_path / "out", env={"HIERARCHY_INSPECTOR_WORKER": worker})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'/no/such/blender' is not a program that can be run" in lines[0], lines
    assert not (tmp_path / "out").exists()


def test_merge_counts_a_file_once_through_two_mount_paths(lib, tmp_path):
    """Overlapping shards audited through two paths of one folder (a symlink here, a
    second mount in a farm): "5 files" for 3."""
    other = tmp_path / "mount_b"
    other.symlink_to(lib, target_is_directory=True)
    one = run_cli("audit", lib, "--out", tmp_path / "one", "--jobs", "1")
    two = run_cli("audit", other, "--out", tmp_path / "two", "--jobs", "1", "--shard", "1/2")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    assert {r["path"] for r in _lines(tmp_path / "two")}.isdisjoint({r["path"] for r in _lines(tmp_path / "one")})
    merged = run_cli("audit", "--merge", tmp_path / "one", tmp_path / "two", "--out", tmp_path / "merged")
    assert merged.returncode == 0, merged.stderr
    assert len(_lines(tmp_path / "merged")) == 3 and "3 files: 3 inspected" in merged.stdout


def test_a_torn_last_line_is_repaired_by_resume(lib, tmp_path):
    out = tmp_path / "out"
    first = run_cli("audit", lib, "--out", out, "--jobs", "1")
    assert first.returncode == 0, first.stderr
    text = (out / "audit.jsonl").read_text()
    (out / "audit.jsonl").write_text(text[: len(text) - 40])  # a power cut in the last write
    resumed = run_cli("audit", lib, "--out", out, "--resume", "--jobs", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 2 of 3 files already done" in resumed.stderr
    lines = _lines(out)  # every line whole JSON: nothing glued to the torn one
    assert sorted(r["relative"] for r in lines) == ["a.blend", "b.blend", "sub/c.blend"]


def test_one_line_per_file_after_resume_re_audits_a_changed_file(lib, tmp_path):
    out = tmp_path / "out"
    assert run_cli("audit", lib, "--out", out, "--jobs", "1").returncode == 0
    os.utime(lib / "b.blend", ns=(time.time_ns(), time.time_ns()))
    resumed = run_cli("audit", lib, "--out", out, "--resume", "--jobs", "1")
    assert resumed.returncode == 0, resumed.stderr
    lines = _lines(out)
    assert len(lines) == 3 and _records(out)["b.blend"]["mtime_ns"] == os.stat(lib / "b.blend").st_mtime_ns


def test_a_missing_library_is_recorded_unless_allowed(tmp_path):
    (tmp_path / "lib").mkdir()
    _scene, library, _image = blend_factory.linked_scene(tmp_path / "lib")
    os.rename(library, library + ".away")
    result = run_cli("audit", tmp_path / "lib", "--out", tmp_path / "out", "--jobs", "1")
    assert result.returncode == 2, result.stderr
    record = _records(tmp_path / "out")["linked.blend"]
    assert record["status"] == "error" and "'//lib.blend'" in record["message"]
    allowed = run_cli("audit", tmp_path / "lib", "--out", tmp_path / "out2", "--allow-missing-libraries")
    assert allowed.returncode == 0, allowed.stderr
    record = _records(tmp_path / "out2")["linked.blend"]
    assert record["status"] == "ok" and record["missing_libraries"] == ["//lib.blend"]


def test_one_worker_audits_many_files(lib, tmp_path):
    """Blender's start-up is paid once per worker, not once per file."""
    result = run_cli("audit", lib, "--out", tmp_path / "out", "--jobs", "1", "--pictures", "0", env=_fake(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "calls.log").read_text().split() == ["a.blend", "b.blend", "c.blend"]
    assert len((tmp_path / "pids.log").read_text().split()) == 1


def test_a_crash_after_other_files_is_tried_again_in_a_fresh_worker(lib, tmp_path):
    shutil.copy(lib / "a.blend", lib / "b_crash.blend")
    result = run_cli("audit", lib, "--out", tmp_path / "out", "--jobs", "1", "--pictures", "0", env=_fake(tmp_path))
    assert result.returncode == 2, result.stderr
    records = _records(tmp_path / "out")
    assert records["b_crash.blend"]["status"] == "crash" and "SIGSEGV" in records["b_crash.blend"]["message"]
    assert all(records[n]["status"] == "ok" for n in ("a.blend", "b.blend", "sub/c.blend"))
    calls = (tmp_path / "calls.log").read_text().split()
    assert calls == ["a.blend", "b.blend", "b_crash.blend", "b_crash.blend", "c.blend"]
    assert len((tmp_path / "pids.log").read_text().split()) == 3  # the first, the retry's, the next


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for its parent has ended
        return f.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers die with their parent on Linux")
def test_after_kill_9_workers_die_and_the_next_run_removes_the_scratch_folder(lib, tmp_path):
    shutil.copy(lib / "a.blend", lib / "hang.blend")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {**os.environ, **_fake(tmp_path, TMPDIR=str(tmpdir))}
    proc = start_cli("audit", lib, "--out", tmp_path / "out", "--jobs", "2", "--timeout", "300", env=env)
    log, deadline = tmp_path / "calls.log", time.monotonic() + 120
    while not (log.exists() and "hang.blend" in log.read_text()):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    pids = [int(p) for p in (tmp_path / "pids.log").read_text().split()]
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)  # the worker on hang.blend sleeps 600 s: it was killed
    # A Blender binary running the audit keeps a session folder of its own, which a
    # process killed outright cannot remove (and nothing tells whose it is): not ours.
    left = [p.name for p in tmpdir.iterdir() if not p.name.startswith("blender_")]
    assert len(left) == 1 and left[0].startswith(f"hierarchy_audit_{proc.pid}_"), left
    os.remove(lib / "hang.blend")
    again = run_cli("audit", lib, "--out", tmp_path / "again", "--jobs", "1", env={"TMPDIR": str(tmpdir)})
    assert again.returncode == 0, again.stderr
    assert [p.name for p in tmpdir.iterdir() if not p.name.startswith("blender_")] == []
    if not os.environ.get("HIERARCHY_INSPECTOR_CLI"):  # python -m: the audit's own process has no Blender
        assert list(tmpdir.iterdir()) == []


def test_a_file_reached_twice_is_audited_once_and_two_files_of_one_name_are_refused(lib, tmp_path):
    both = run_cli("audit", lib, lib / "sub", lib / "a.blend", "--out", tmp_path / "out", "--jobs", "1")
    assert both.returncode == 0, both.stderr
    assert sorted(_records(tmp_path / "out")) == ["a.blend", "b.blend", "sub/c.blend"]
    clash = run_cli("audit", lib / "a.blend", lib / "sub" / "c.blend", lib / "sub", "--out", tmp_path / "o2")
    assert clash.returncode == 0, clash.stderr  # sub/c.blend is c.blend from lib/sub: the same file
    (tmp_path / "other").mkdir()
    shutil.copy(lib / "a.blend", tmp_path / "other" / "a.blend")
    refused = run_cli("audit", lib / "a.blend", tmp_path / "other" / "a.blend", "--out", tmp_path / "o3")
    assert refused.returncode == 2 and "are both 'a.blend'" in refused.stderr, refused.stderr
    assert not (tmp_path / "o3").exists()


def test_each_file_is_audited_from_a_fresh_scene(lib, tmp_path):
    """One worker, in turn: the demo (29 nodes), a file that is not a .blend, an empty
    scene, the demo again: nothing of one file is counted in the next."""
    (lib / "b_broken.blend").write_bytes(b"BLENDER-v500 then nothing")
    blend_factory.empty_scene(lib / "b_empty.blend")
    result = run_cli("audit", lib, "--out", tmp_path / "out", "--jobs", "1", "--pictures", "0")
    assert result.returncode == 2, result.stderr
    records = _records(tmp_path / "out")
    assert records["b_broken.blend"]["status"] == "error"
    assert records["b_empty.blend"]["status"] == "ok" and records["b_empty.blend"]["nodes"] == 0
    assert records["a.blend"]["nodes"] == records["b.blend"]["nodes"] == records["sub/c.blend"]["nodes"] == 29
