"""``audit FOLDER_OR_FILE... --out DIR``: every .blend under the folders (recursive),
audited by at most ``--jobs`` worker processes, each taking many files in turn
(:mod:`.audit_pool`, :mod:`.audit_worker`): Blender starts once per worker, and a
worker that crashes or hangs (``--timeout``) costs only its file, whose exit status and
message are recorded. A folder that cannot be listed, a dangling or looping symlink and
a file that cannot be read are recorded as unreadable, not left out. Results are
appended to ``DIR/audit.jsonl`` as each file finishes (one line, one write), so a
stopped run loses nothing; at the end the file holds one line per file (the last), and
``--resume`` (which first repairs a line cut short by a power cut) skips files already
done with the same modification time. Files are identified by their path relative to
the folder given (:func:`~..model.audit.records.key`), so that ``--merge`` counts a file
once whichever mount path each shard saw it through. ``--shard K/N`` keeps the files
whose relative path hashes to slice K (:func:`~..model.audit.records.shard_of`).
Pictures are drawn for the worst ``--pictures`` flagged files once all are audited (a
second, short pass: drawing one takes longer than auditing a small file). At the end
``DIR/summary.txt`` (also printed) and ``DIR/index.html`` are written whole.

Workers run the command line this process was started with: ``python -m
hierarchy_inspector`` under bpy from PyPI, ``blender -b -c hierarchy_inspector`` inside a
Blender binary, or ``$HIERARCHY_INSPECTOR_WORKER`` (a JSON list) when set.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

from ..model.audit import records as rec
from ..model.audit.page import audit_html
from ..model.errors import UsageError
from ..model.outputs import check_folder, check_outputs, make_folder, write_text, write_with
from . import console
from .audit_pool import Pool, Task
from .console import EXIT_INPUT, EXIT_OK, EXIT_THRESHOLD, say

JSONL, SUMMARY, PAGE = "audit.jsonl", "summary.txt", "index.html"


def worker_prefix() -> list[str]:
    """The command that runs ``audit-worker`` in a new process (see the module
    docstring); :class:`UsageError` when ``$HIERARCHY_INSPECTOR_WORKER`` is not a JSON
    list of strings or names a program that cannot be run."""
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
        if shutil.which(prefix[0]) is None:
            raise UsageError(f"HIERARCHY_INSPECTOR_WORKER={custom!r}: {prefix[0]!r} is not a program that can be run")
        return prefix
    bpy = sys.modules.get("bpy")
    binary = getattr(getattr(bpy, "app", None), "binary_path", "") if bpy else ""  # "" for bpy from PyPI
    if binary:
        return [binary, "-b", "--offline-mode", "-c", "hierarchy_inspector"]
    return [sys.executable, "-m", "hierarchy_inspector"]


def _worker_command(args) -> list[str]:
    out = [*worker_prefix(), "audit-worker"]
    out += ["--shear-threshold", repr(args.shear_threshold), "--corner-threshold", repr(args.corner_threshold)]
    return out + (["--allow-missing-libraries"] if args.allow_missing_libraries else [])


class Found:
    """What :func:`find_blends` found: ``files`` ``(absolute path, relative path)`` and
    ``unreadable`` ``(absolute path, relative path, why)`` (folders that cannot be
    listed: relative ending in ``/``; .blend names that cannot be stat'ed: dangling or
    looping symlinks), each sorted by relative path."""

    def __init__(self):
        self.files: list[tuple[str, str]] = []
        self.unreadable: list[tuple[str, str, str]] = []


def _relative(full: str, root: str) -> str:
    return os.path.relpath(full, root).replace(os.sep, "/")


def find_blends(paths: list[str]) -> Found:
    """Every .blend under ``paths`` (folders walked recursively, symlinked folders not
    followed; files taken as given, their relative path their name). A file
    reached twice (through two folders given, a hard link or a symlink) is audited once;
    two different files with the same relative path are :class:`UsageError`."""
    files: dict[str, tuple[str, tuple]] = {}  # relative -> (absolute, identity)
    seen: set[tuple] = set()
    found = Found()

    def take(full: str, relative: str) -> None:
        try:
            st = os.stat(full)
        except OSError as exc:  # a dangling symlink, a symlink loop
            found.unreadable.append((os.path.abspath(full), relative, f"cannot read it ({_why(exc)})"))
            return
        identity = (st.st_dev, st.st_ino)
        if identity in seen:
            return
        seen.add(identity)
        if relative in files:
            raise UsageError(
                f"{files[relative][0]!r} and {os.path.abspath(full)!r} are both {relative!r} in the folders given: "
                "audit them into separate --out folders, or give their common folder"
            )
        files[relative] = (os.path.abspath(full), identity)

    for given in paths:
        if os.path.isdir(given):

            def unlisted(exc: OSError, root: str = given) -> None:
                folder = exc.filename or root
                relative = _relative(folder, root).rstrip("/") + "/"
                found.unreadable.append((os.path.abspath(folder), relative, f"cannot list this folder ({_why(exc)})"))

            for folder, dirs, names in os.walk(given, onerror=unlisted):
                dirs.sort()
                for name in sorted(names):
                    if name.lower().endswith(".blend"):
                        full = os.path.join(folder, name)
                        take(full, _relative(full, given))
        elif os.path.lexists(given):
            take(given, os.path.basename(given))
        else:
            raise UsageError(f"{given!r}: no such file or folder")
    found.files = sorted(((a, r) for r, (a, _i) in files.items()), key=lambda item: item[1])
    found.unreadable.sort(key=lambda item: item[1])
    return found


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _unreadable_record(path: str, relative: str, why: str) -> dict:
    return {
        "path": path,
        "relative": relative,
        "mtime_ns": None,
        "seconds": 0.0,
        "exit_code": EXIT_INPUT,
        "status": "error",
        "message": why,
    }


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
        for record in _load(jsonl):
            if record.get("picture"):
                source = os.path.join(folder, record["picture"])
                target = os.path.join(args.out, record["picture"])
                if os.path.isfile(source) and os.path.abspath(source) != os.path.abspath(target):
                    make_folder(os.path.dirname(target))
                    write_with(target, lambda tmp, source=source: shutil.copyfile(source, tmp))
            records.append(record)
    merged = rec.latest(records)  # by relative path: one file seen through two mount paths is one file
    _rewrite(os.path.join(args.out, JSONL), merged)
    return _write_outputs(args, merged)


def _rewrite(jsonl: str, records: list[dict]) -> None:
    """``jsonl`` rewritten whole with ``records`` (one line per file; a line cut short
    by a power cut is gone, so the next line appended starts a line of its own)."""
    write_text(jsonl, "".join(rec.line(r) for r in records))


def _tasks(files: list[tuple[str, str]], skip: dict) -> list[Task]:
    tasks = []
    for index, (path, relative) in enumerate(files):
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:  # gone since it was found: the worker says so
            mtime = None
        if skip.get(relative, -1) != mtime:
            tasks.append(Task(index, path, relative, mtime_ns=mtime or 0))
    return tasks


def _picture_tasks(args, records: list[dict], files: list[tuple[str, str]]) -> list[Task]:
    """The worst ``--pictures`` flagged files without their picture (the page shows
    those): audited again, with the picture."""
    where = dict((r, p) for p, r in files)
    tasks = []
    for k, r in enumerate(rec.worst_first(records)[: args.pictures]):
        picture = r.get("picture")
        if not r.get("flagged") or (picture and os.path.isfile(os.path.join(args.out, picture))):
            continue
        if r["relative"] in where:
            path = os.path.join(args.out, rec.picture_name(r["relative"]))
            tasks.append(
                Task(len(files) + k, where[r["relative"]], r["relative"], picture=path, mtime_ns=r["mtime_ns"])
            )
    return tasks


def cmd_audit(args) -> int:
    check_folder(args.out)
    if args.merge:
        make_folder(args.out)
        return _merge(args)
    found = find_blends(args.paths)
    command = _worker_command(args)  # a bad $HIERARCHY_INSPECTOR_WORKER is exit 2 before anything is made
    make_folder(args.out)
    files, unreadable = found.files, found.unreadable
    if args.shard:
        k, n = args.shard
        files = [(p, r) for p, r in files if rec.shard_of(r, n) == k]
        unreadable = [u for u in unreadable if rec.shard_of(u[1], n) == k]
    jsonl = os.path.join(args.out, JSONL)
    previous = _load(jsonl)
    if not args.resume and (previous or os.path.exists(jsonl) and os.path.getsize(jsonl)):
        raise UsageError(f"{jsonl!r} exists: pass --resume to continue it, or choose another --out")
    if args.resume and os.path.exists(jsonl):
        _rewrite(jsonl, rec.latest(previous))  # repaired before anything is appended
    tasks = _tasks(files, rec.done(previous))
    if len(tasks) < len(files):
        say(f"resuming: {len(files) - len(tasks)} of {len(files)} files already done")
    progress = console.progress("audit")
    report = (
        (lambda done, total, relative: progress(done / total, f"{done}/{total} files ({relative})"))
        if progress
        else None
    )
    with open(jsonl, "a", encoding="utf-8") as out:

        def append(record: dict) -> None:
            out.write(rec.line(record))  # one line, one write: a stopped run leaves whole lines
            out.flush()

        for path, relative, why in unreadable:
            append(_unreadable_record(path, relative, why))
        wanted = {r for _p, r in files} | {u[1] for u in unreadable}
        with Pool(command, args.jobs, args.timeout, args.out) as pool:
            pool.run(tasks, append, report)
            current = [r for r in rec.latest(_load(jsonl)) if rec.key(r) in wanted]
            if args.pictures > 0:  # a file that fails this time keeps the record it had

                def with_picture(record: dict) -> None:
                    if record["status"] == "ok":
                        append(record)

                pool.run(_picture_tasks(args, current, files), with_picture)
    records = rec.latest(_load(jsonl))
    _rewrite(jsonl, records)
    return _write_outputs(args, [r for r in records if rec.key(r) in wanted])
