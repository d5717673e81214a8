"""``audit``: every .blend under a folder in its own worker; crashes, hangs and unreadable
files are recorded and stop nothing; JSON Lines, summary and one self-contained HTML page;
--resume, --shard K/N and --merge. Numbers are checked against ``report --json`` of the
same file (an independent run of the same scan)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from cli_runner import cli_prefix, run_cli

TESTS = Path(__file__).resolve().parents[1]


def _records(out: Path) -> dict[str, dict]:
    lines = (out / "audit.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return {r["relative"]: r for r in records}


@pytest.fixture(scope="module")
def library(demo_dir, tmp_path_factory) -> Path:
    """demo.blend and the baked copy at several depths, an unreadable .blend, and a
    file that is not a .blend at all (ignored)."""
    lib = tmp_path_factory.mktemp("library")
    (lib / "props" / "deep").mkdir(parents=True)
    shutil.copy(demo_dir / "demo.blend", lib / "demo.blend")
    shutil.copy(demo_dir / "demo.blend", lib / "props" / "deep" / "again.blend")
    shutil.copy(demo_dir / "demo_baked.blend", lib / "props" / "baked.blend")
    (lib / "props" / "broken.blend").write_bytes(b"not a blend file at all")
    (lib / "notes.txt").write_text("ignored")
    return lib


@pytest.fixture(scope="module")
def audited(library, tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("audit")
    result = run_cli("audit", library, "--out", out, "--jobs", "2")
    return out, result


def test_every_file_is_recorded_with_the_reports_numbers(audited, library, demo_dir, tmp_path):
    out, result = audited
    assert result.returncode == 2, result.stderr  # one file could not be inspected
    records = _records(out)
    assert sorted(records) == ["demo.blend", "props/baked.blend", "props/broken.blend", "props/deep/again.blend"]
    broken = records["props/broken.blend"]
    assert broken["status"] == "error" and broken["exit_code"] == 2 and "not a .blend file" in broken["message"]
    report = run_cli("report", library / "demo.blend", "--json", tmp_path / "r.json")
    assert report.returncode == 0, report.stderr
    nodes = json.loads((tmp_path / "r.json").read_text())["nodes"]
    for name in ("demo.blend", "props/deep/again.blend"):
        r = records[name]
        assert r["status"] == "ok" and r["exit_code"] == 0
        assert r["path"] == str((library / name).resolve())
        assert r["nodes"] == len(nodes) and r["flagged"] == sum(e["flagged"] for e in nodes)
        assert r["bones"] == sum(1 for e in nodes if e["kind"] == "bone")
        assert r["objects"] + r["bones"] + r["instances"] == r["nodes"]
        worst = max(max(abs(v) for v in e["shear_deg"]) for e in nodes)
        assert r["worst_shear_deg"] >= worst - 1e-9
        assert r["saved_by"] == ".".join(r["file_version"].split(".")[:2])
        assert r["mtime_ns"] == os.stat(library / name).st_mtime_ns
    # The summary table is printed and saved; stderr has the one summary line.
    assert "4 files: 3 inspected" in result.stdout and "props/broken.blend: error" in result.stdout
    assert (out / "summary.txt").read_text().strip() in result.stdout
    ours = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(ours) == 1 and ours[0].startswith("hierarchy_inspector: audit: 4 files, 3 inspected"), ours


def test_html_page_is_self_contained_with_valid_pictures(audited):
    out, _result = audited
    page = (out / "index.html").read_text()
    assert "src='http" not in page and 'src="http' not in page and "<link" not in page
    uris = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(uris) == 3  # every flagged file, worst first
    for uri in uris:
        png = base64.b64decode(uri)
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR"
    assert "props/broken.blend" in page and "not a .blend file" in page


def test_resume_skips_files_done_with_the_same_mtime(library, tmp_path):
    lib = tmp_path / "lib"
    shutil.copytree(library, lib)
    out = tmp_path / "out"
    log = tmp_path / "calls.log"
    env = {
        "HIERARCHY_INSPECTOR_WORKER": json.dumps([sys.executable, str(TESTS / "audit_fake_worker.py")]),
        "AUDIT_FAKE_LOG": str(log),
        "PYTHONPATH": str(TESTS),
        "HIERARCHY_INSPECTOR_CLI": json.dumps(cli_prefix()),
    }
    first = run_cli("audit", lib, "--out", out, env=env)
    # Each file once, and the flagged ones once more for their picture (drawn for the
    # worst files only, once all are known).
    calls = log.read_text().split()
    assert first.returncode == 2 and sorted(set(calls)) == ["again.blend", "baked.blend", "broken.blend", "demo.blend"]
    assert len(calls) == 4 + 3
    again = run_cli("audit", lib, "--out", out, env=env)
    assert again.returncode == 2 and "--resume" in again.stderr  # never appends to a finished run unasked
    log.write_text("")
    resumed = run_cli("audit", lib, "--out", out, "--resume", env=env)
    assert resumed.returncode == 2 and log.read_text() == ""
    assert "resuming: 4 of 4 files already done" in resumed.stderr
    os.utime(lib / "demo.blend", ns=(time.time_ns(), time.time_ns()))
    resumed = run_cli("audit", lib, "--out", out, "--resume", env=env)
    assert log.read_text().split() == ["demo.blend", "demo.blend"]  # audited, then its picture drawn
    assert len(_records(out)) == 4 and "4 files: 3 inspected" in resumed.stdout


@pytest.mark.parametrize("worker", ["not json", '"a string"', "[]", "[1, 2]"])
def test_a_bad_worker_command_is_one_line_and_exit_2(library, tmp_path, worker):
    result = run_cli("audit", library, "--out", tmp_path / "out", env={"HIERARCHY_INSPECTOR_WORKER": worker})
    assert result.returncode == 2, result.stderr
    assert "HIERARCHY_INSPECTOR_WORKER" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_crash_or_a_hang_costs_only_its_own_file(library, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(library / "demo.blend", lib / "good.blend")
    shutil.copy(library / "demo.blend", lib / "crash.blend")
    shutil.copy(library / "demo.blend", lib / "hang.blend")
    env = {
        "HIERARCHY_INSPECTOR_WORKER": json.dumps([sys.executable, str(TESTS / "audit_fake_worker.py")]),
        "AUDIT_FAKE_LOG": str(tmp_path / "calls.log"),
        "PYTHONPATH": str(TESTS),
        "HIERARCHY_INSPECTOR_CLI": json.dumps(cli_prefix()),
    }
    started = time.perf_counter()
    result = run_cli("audit", lib, "--out", tmp_path / "out", "--jobs", "3", "--timeout", "10", env=env)
    took = time.perf_counter() - started
    assert result.returncode == 2, result.stderr
    records = _records(tmp_path / "out")
    assert records["good.blend"]["status"] == "ok"
    assert records["crash.blend"]["status"] == "crash" and "SIGSEGV" in records["crash.blend"]["message"]
    assert records["hang.blend"]["status"] == "timeout" and 10 <= records["hang.blend"]["seconds"] < 30
    assert took < 50  # the hang was stopped, not waited for (it sleeps 600 s)
    assert "1 timed out, 1 crashed" in result.stdout


def test_shards_partition_the_library_and_merge_gives_the_whole(audited, library, tmp_path):
    whole, _result = audited
    parts = []
    for k in (1, 2, 3):
        out = tmp_path / f"shard{k}"
        result = run_cli("audit", library, "--out", out, "--shard", f"{k}/3", "--jobs", "2")
        assert result.returncode in (0, 2), result.stderr
        parts.append(out)
    names = [set(_records(p)) for p in parts]
    assert set().union(*names) == set(_records(whole))
    assert sum(len(n) for n in names) == len(_records(whole))  # disjoint
    merged = tmp_path / "merged"
    result = run_cli("audit", "--merge", *parts, "--out", merged)
    assert result.returncode == 2, result.stderr  # the broken file is in one shard
    got, want = _records(merged), _records(whole)
    keys = ("status", "nodes", "flagged", "worst_node", "worst_shear_deg", "worst_corner", "mtime_ns")
    assert {n: [r.get(k) for k in keys] for n, r in got.items()} == {
        n: [r.get(k) for k in keys] for n, r in want.items()
    }
    assert len(re.findall(r"data:image/png;base64,", (merged / "index.html").read_text())) == 3
    bad = run_cli("audit", "--merge", library, "--out", tmp_path / "m2")
    assert bad.returncode == 2 and "not an audit folder" in bad.stderr


def test_bad_shard_is_a_usage_error(library, tmp_path):
    for shard in ("0/3", "4/3", "x"):
        result = run_cli("audit", library, "--out", tmp_path / "o", "--shard", shard)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
