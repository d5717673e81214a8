"""``audit FOLDER_OR_FILE... --out DIR``: every .blend under the folders (recursive),
one worker process per file (``audit-file``), at most ``--jobs`` at once. A worker that
fails, crashes or hangs (``--timeout``) costs only its own file: its exit status and
message are recorded. Results are appended to ``DIR/audit.jsonl`` as each file finishes
(one line, one write), so a stopped run loses nothing and ``--resume`` skips files
already done with the same modification time. ``--shard K/N`` keeps the files whose
relative path hashes to slice K (:func:`~..model.audit.records.shard_of`), so that N
machines can share a library; ``audit --merge DIR... --out DIR`` combines their folders.
At the end ``DIR/summary.txt`` (also printed) and ``DIR/index.html`` are written whole.

Workers run the command line this process was started with: ``python -m
hierarchy_inspector`` under bpy from PyPI, ``blender -b -c hierarchy_inspector`` inside a
Blender binary, or ``$HIERARCHY_INSPECTOR_WORKER`` (a JSON list) when set.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import BinaryIO

from ..model.audit import records as rec
from ..model.audit.page import audit_html
from ..model.errors import UsageError
from ..model.outputs import check_folder, check_outputs, make_folder, write_text, write_with
from . import console
from .main import EXIT_INPUT, EXIT_OK, EXIT_THRESHOLD, say

JSONL, SUMMARY, PAGE = "audit.jsonl", "summary.txt", "index.html"


def worker_prefix() -> list[str]:
    """The command that runs ``audit-file`` in a new process (see the module docstring)."""
    custom = os.environ.get("HIERARCHY_INSPECTOR_WORKER")
    if custom:
        try:
            prefix = json.loads(custom)
        except ValueError as exc:
            prefix, why = None, f"not JSON ({exc})"
        else:
            why = "expected a JSON list of strings, the command and its arguments"
        if not (isinstance(prefix, list) and prefix and all(isinstance(p, str) for p in prefix)):
            raise UsageError(f"HIERARCHY_INSPECTOR_WORKER={custom!r}: {why}")
        return prefix
    bpy = sys.modules.get("bpy")
    binary = getattr(getattr(bpy, "app", None), "binary_path", "") if bpy else ""  # "" for bpy from PyPI
    if binary:
        return [binary, "-b", "--offline-mode", "-c", "hierarchy_inspector"]
    return [sys.executable, "-m", "hierarchy_inspector"]


def find_blends(paths: list[str]) -> list[tuple[str, str]]:
    """``(absolute path, relative path)`` of every .blend under ``paths`` (folders are
    walked recursively; files are taken as given, relative = their name), sorted."""
    found: dict[str, str] = {}
    for given in paths:
        if os.path.isdir(given):
            for folder, dirs, files in os.walk(given):
                dirs.sort()
                for name in files:
                    if name.lower().endswith(".blend"):
                        full = os.path.join(folder, name)
                        found.setdefault(os.path.abspath(full), os.path.relpath(full, given).replace(os.sep, "/"))
        elif os.path.isfile(given):
            found.setdefault(os.path.abspath(given), os.path.basename(given))
        else:
            raise UsageError(f"{given!r}: no such file or folder")
    return sorted(found.items(), key=lambda item: item[1])


@dataclass
class _Job:
    path: str
    relative: str
    mtime_ns: int
    process: subprocess.Popen
    result: str
    stderr: BinaryIO
    started: float = field(default_factory=time.perf_counter)


def _worker_args(args, path: str, result: str, picture: str | None) -> list[str]:
    out = [*worker_prefix(), "audit-file", path, "--result", result]
    out += ["--shear-threshold", repr(args.shear_threshold), "--corner-threshold", repr(args.corner_threshold)]
    return out + (["--picture", picture] if picture else [])


def _start(args, path: str, relative: str, scratch: str, index: int) -> _Job:
    result = os.path.join(scratch, f"{index}.json")
    picture = os.path.join(args.out, rec.picture_name(relative)) if args.pictures > 0 else None
    stderr = open(os.path.join(scratch, f"{index}.err"), "w+b")  # a file: a chatty worker cannot block on a pipe
    process = subprocess.Popen(
        _worker_args(args, path, result, picture),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,  # its own process group: a timeout stops Blender and anything it started
    )
    return _Job(path, relative, os.stat(path).st_mtime_ns, process, result, stderr)


def _message(job: _Job) -> str:
    job.stderr.seek(0)
    lines = job.stderr.read().decode("utf-8", "replace").splitlines()
    ours = [ln.removeprefix("hierarchy_inspector: ") for ln in lines if ln.startswith("hierarchy_inspector:")]
    ours = [ln for ln in ours if not ln.startswith("audit-file:")]  # the worker's own summary line
    text = (ours or [ln for ln in lines if ln.strip()] or [""])[-1]
    return text.strip()[:500]


def _finish(job: _Job, out_dir: str, timed_out: bool) -> dict:
    code = job.process.returncode
    record: dict = {
        "path": job.path,
        "relative": job.relative,
        "mtime_ns": job.mtime_ns,
        "seconds": round(time.perf_counter() - job.started, 3),
        "exit_code": code,
    }
    if timed_out:
        record.update(status="timeout", message=f"stopped after {record['seconds']:.0f} s (--timeout)")
    elif code is not None and code < 0:
        record.update(status="crash", message=f"the worker died of signal {-code} ({_signal_name(-code)})")
    elif code == 0 and os.path.exists(job.result):
        with open(job.result, encoding="utf-8") as f:
            record.update(json.load(f), status="ok", message="")
        if record.get("picture"):
            record["picture"] = os.path.relpath(record["picture"], out_dir).replace(os.sep, "/")
    elif code == EXIT_INPUT:
        record.update(status="error", message=_message(job))
    else:
        record.update(status="crash", message=_message(job) or f"the worker exited with {code}")
    job.stderr.close()
    return record


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _stop(job: _Job) -> None:
    try:
        os.killpg(job.process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        job.process.kill()
    job.process.wait()


def run_files(args, todo: list[tuple[str, str]], append) -> None:
    """Run the workers, at most ``args.jobs`` at once; ``append(record)`` per finished file."""
    scratch = tempfile.mkdtemp(prefix="hierarchy_audit_")
    running: list[_Job] = []
    queue = list(enumerate(todo))
    total, finished = len(todo), 0
    report = console.progress("audit")
    try:
        while queue or running:
            while queue and len(running) < args.jobs:
                index, (path, relative) = queue.pop(0)
                running.append(_start(args, path, relative, scratch, index))
            time.sleep(0.02)
            for job in list(running):
                timed_out = job.process.poll() is None and time.perf_counter() - job.started > args.timeout
                if timed_out:
                    _stop(job)
                if job.process.poll() is None:
                    continue
                running.remove(job)
                append(_finish(job, args.out, timed_out))
                finished += 1
                if report:
                    report(finished / total, f"{finished}/{total} files ({job.relative})")
    finally:
        for job in running:  # interrupted: leave no worker behind
            _stop(job)
        shutil.rmtree(scratch, ignore_errors=True)


def _load(path: str) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as f:
            return rec.read_lines(f.read())
    except FileNotFoundError:
        return []


def _write_outputs(args, records: list[dict]) -> int:
    table = rec.summary_table(records)
    write_text(os.path.join(args.out, SUMMARY), table + "\n")
    write_text(os.path.join(args.out, PAGE), audit_html(records, args.out, pictures=args.pictures))
    print(table)
    print(f"\nwrote {os.path.join(args.out, JSONL)}, {SUMMARY}, {PAGE}")
    c = rec.counts(records)
    args.summary = (
        f"{c['files']} files, {c['ok']} inspected, {c['flagged_files']} flagged, {c['files'] - c['ok']} not inspected"
    )
    if args.fail_on_shear is not None:
        worst = max((r.get("worst_shear_deg", 0.0) for r in records if r.get("status") == "ok"), default=0.0)
        if worst > args.fail_on_shear:
            say(f"shear {worst:.3f} deg exceeds --fail-on-shear {args.fail_on_shear:g}")
            return EXIT_THRESHOLD
    return EXIT_INPUT if c["files"] > c["ok"] else EXIT_OK


def _merge(args) -> int:
    records: list[dict] = []
    # The merged folders are inputs: --out may not be one of them (by identity).
    check_outputs({"--out": os.path.join(args.out, JSONL)}, {repr(f): os.path.join(f, JSONL) for f in args.paths})
    for folder in args.paths:
        jsonl = os.path.join(folder, JSONL)
        if not os.path.isfile(jsonl):
            raise UsageError(f"{folder!r}: no {JSONL} (not an audit folder)")
        for record in rec.read_lines(open(jsonl, encoding="utf-8").read()):
            if record.get("picture"):
                source = os.path.join(folder, record["picture"])
                target = os.path.join(args.out, record["picture"])
                if os.path.isfile(source) and os.path.abspath(source) != os.path.abspath(target):
                    make_folder(os.path.dirname(target))
                    write_with(target, lambda tmp, source=source: shutil.copyfile(source, tmp))
            records.append(record)
    merged = rec.latest(records)
    write_text(os.path.join(args.out, JSONL), "".join(rec.line(r) for r in merged))
    return _write_outputs(args, merged)


def cmd_audit(args) -> int:
    check_folder(args.out)
    if args.merge:
        make_folder(args.out)
        return _merge(args)
    files = find_blends(args.paths)
    worker_prefix()  # a bad $HIERARCHY_INSPECTOR_WORKER is exit 2 before anything is made
    make_folder(args.out)
    if args.shard:
        k, n = args.shard
        files = [(p, r) for p, r in files if rec.shard_of(r, n) == k]
    jsonl = os.path.join(args.out, JSONL)
    previous = _load(jsonl)
    if not args.resume and previous:
        raise UsageError(f"{jsonl!r} exists: pass --resume to continue it, or choose another --out")
    skip = rec.done(previous)
    todo = [(p, r) for p, r in files if skip.get(p, -1) != os.stat(p).st_mtime_ns]
    if len(todo) < len(files):
        say(f"resuming: {len(files) - len(todo)} of {len(files)} files already done")
    with open(jsonl, "a", encoding="utf-8") as out:

        def append(record: dict) -> None:
            out.write(rec.line(record))  # one line, one write: a stopped run leaves whole lines
            out.flush()

        run_files(args, todo, append)
    wanted = {p for p, _r in files}
    return _write_outputs(args, [r for r in rec.latest(_load(jsonl)) if r["path"] in wanted])
