"""Audit records: one JSON object per file, kept as JSON Lines (``audit.jsonl``).

A record has ``path`` (absolute), ``relative`` (to the folder it was found under; what
shards hash), ``mtime_ns``, ``status`` (``ok``, ``error``: the file cannot be read or
inspected, ``timeout``, ``crash``: the worker died), ``exit_code``, ``message``,
``seconds``, and for ``ok``: ``saved_by`` (the Blender version that saved the file),
``nodes``, ``objects``, ``bones``, ``instances``, ``flagged``, ``worst_node``,
``worst_shear_deg``, ``worst_corner`` (scene units), ``picture`` (relative to the
output folder, or null). A file is identified by its relative path (:func:`key`), not
by its absolute path: shards audited through different mount paths of one library, and
resumed runs, name each file once. Later lines for the same file replace earlier ones (a
run appends as files finish, and rewrites the file with one line per file at its end).
A folder the audit could not list is a record too (``relative`` ending in ``/``,
``status`` ``error``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from ..text import format_table

SCHEMA = "hierarchy_inspector.audit/1"
#: Statuses a resumed run does not redo (the same file gives the same answer); timeouts
#: and crashes are tried again.
FINAL = ("ok", "error")


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with ``1 <= K <= N``, or ValueError saying why."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"{text!r} is not K/N (e.g. 2/8)") from None
    if not 1 <= k <= n:
        raise ValueError(f"{text!r}: K must be 1 to N")
    return k, n


def shard_of(relative: str, count: int) -> int:
    """The 1-based shard of a file: a stable hash of its relative path (``/`` separators),
    the same on every machine and Python (no ``hash()`` randomisation)."""
    digest = hashlib.sha256(relative.replace("\\", "/").encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def picture_name(relative: str) -> str:
    """A file name for the picture of ``relative`` (unique per relative path)."""
    return "pictures/" + hashlib.sha256(relative.encode("utf-8")).hexdigest()[:16] + ".png"


def read_lines(text: str) -> list[dict]:
    """Records from JSON Lines text; a line cut short (a run stopped mid-write, a power
    cut: the last line without its end) is skipped, and so is anything glued to it."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "path" in record and "relative" in record:
            out.append(record)
    return out


def key(record: dict) -> str:
    """What identifies a file across runs, shards and mount paths: its path relative to
    the folder it was found under."""
    return record["relative"]


def latest(records: Iterable[dict]) -> list[dict]:
    """The last record per file (:func:`key`), in order of first appearance."""
    by_key: dict[str, dict] = {}
    for record in records:
        by_key[key(record)] = record
    return list(by_key.values())


def done(records: Iterable[dict]) -> dict[str, int]:
    """``relative path -> mtime_ns`` of files a resumed run can skip (status ok or error)."""
    return {key(r): r.get("mtime_ns") for r in latest(records) if r.get("status") in FINAL}


def line(record: dict) -> str:
    """One JSON Lines line (sorted keys, no newline inside)."""
    return json.dumps(record, sort_keys=True) + "\n"


def worst_first(records: Iterable[dict]) -> list[dict]:
    """Files with results, largest corner deviation first, then shear; then the others."""
    ok = [r for r in records if r.get("status") == "ok"]
    ok.sort(key=lambda r: (-(r.get("worst_corner") or 0.0), -(r.get("worst_shear_deg") or 0.0), r["relative"]))
    return ok


def counts(records: list[dict]) -> dict[str, int]:
    out = {"files": len(records)}
    for status in ("ok", "error", "timeout", "crash"):
        out[status] = sum(1 for r in records if r.get("status") == status)
    out["flagged_files"] = sum(1 for r in records if r.get("flagged"))
    return out


def summary_table(records: list[dict], limit: int = 15) -> str:
    """The summary as text: counts, the worst files, and every file that failed."""
    c = counts(records)
    head = (
        f"{c['files']} files: {c['ok']} inspected ({c['flagged_files']} with flagged nodes), "
        f"{c['error']} unreadable, {c['timeout']} timed out, {c['crash']} crashed"
    )
    rows = [
        (
            r["relative"],
            r.get("saved_by") or "",
            str(r.get("nodes", "")),
            str(r.get("flagged", "")),
            r.get("worst_node") or "",
            f"{r.get('worst_shear_deg', 0.0):.2f}",
            f"{r.get('worst_corner', 0.0):.3g}",
        )
        for r in worst_first(records)[:limit]
    ]
    parts = [head]
    if rows:
        titles = ("file", "saved by", "nodes", "flagged", "worst node", "shear deg", "corner")
        parts += ["", "Worst files:", format_table(titles, rows)]
    failed = [r for r in records if r.get("status") not in ("ok", None)]
    if failed:
        parts += ["", "Not inspected:"]
        parts += [f"  {r['relative']}: {r['status']}: {r.get('message', '')}" for r in failed]
    return "\n".join(parts)
