"""What an audit worker does with .blend files, in a process of its own so that a crash
or hang stays with the file that caused it: open a file, scan it (objects, bones and
instances), draw its worst nodes when asked and something is flagged, and write its
record whole.

- ``audit-worker`` (what ``audit`` starts, ``--jobs`` of them): many files in turn, one
  task per line on stdin (``{"index", "path", "result", "picture"}``), one reply per
  line on stdout (``{"index", "code", "message"}``: 0 the record was written, 2 the
  file cannot be inspected, 3 a bug); it ends at the end of its input. Blender's
  start-up (about 0.5 s) is paid once per worker, not once per file. Each file is
  opened into a fresh scene: opening a .blend replaces Blender's whole data (the last
  file's objects, scenes and libraries are freed; file scripts do not run, and the
  worker registers no handlers); after a file that failed, whatever it left half-loaded
  is dropped first with ``read_homefile(use_empty=True)`` (not after every file: it costs
  7 ms of CPU, 40% of a small file's whole audit).
- ``audit-file``: one file, the record written to ``--result``; exit code 0, 2 or 3.
"""

from __future__ import annotations

import json
import os
import sys
import time

import bpy
import numpy as np

from ..model.errors import InspectorError
from ..model.outputs import write_text
from ..model.pictures import worst_nodes_png
from ..model.thresholds import Thresholds
from ..scene.blend_files import check_libraries, open_blend
from ..scene.scan import scan_scene
from . import console
from .commands import thresholds_of


def file_record(inspection, saved_by: str) -> dict:
    """The counts and the worst node of one file's inspection (see ``model.audit.records``)."""
    nodes = inspection.nodes
    n = len(nodes)
    shear = inspection.worst_shear  # as the report counts it (commands.worst_shear)
    order = inspection.worst_first()
    worst = int(order[0]) if len(order) else (int(np.argmax(shear)) if n else -1)
    bones = int(nodes.is_bone().sum()) if n else 0
    instances = len(nodes.instance_of)
    return {
        "saved_by": saved_by,
        "nodes": n,
        "bones": bones,
        "instances": instances,
        "objects": n - bones - instances,
        "flagged": int(inspection.flagged.sum()) if n else 0,
        "worst_node": nodes.label(worst) if worst >= 0 else None,
        "worst_shear_deg": float(shear.max()) if n else 0.0,
        "worst_corner": float(inspection.worst_corner.max()) if n else 0.0,
    }


def audit_file(path: str, thresholds: Thresholds, picture: str | None, allow_missing: bool) -> dict:
    """One file's record (:func:`file_record` and where it came from); with ``picture``,
    its worst nodes drawn there when any is flagged. :class:`InspectorError` when the
    file cannot be inspected (unreadable, not a .blend, missing libraries, NaN)."""
    started = time.perf_counter()
    with console.quiet():
        open_blend(path)
    missing = check_libraries(allow_missing)
    scene = bpy.context.scene
    if scene is None:
        raise InspectorError(f"{path!r}: the file has no scene")
    inspection = scan_scene(scene, thresholds, instances=True)
    version = tuple(bpy.data.version)  # the file's: (major, minor, file subversion)
    record = file_record(inspection, f"{version[0]}.{version[1]}")
    record["file_version"] = ".".join(map(str, version))
    record["scene"] = scene.name
    record["picture"] = None
    if missing:
        record["missing_libraries"] = missing
    if picture and record["flagged"]:
        os.makedirs(os.path.dirname(os.path.abspath(picture)), exist_ok=True)
        worst_nodes_png(inspection, picture)
        record["picture"] = picture
    record["seconds_inside"] = round(time.perf_counter() - started, 3)
    return record


def cmd_audit_file(args) -> int:
    record = audit_file(args.blend, thresholds_of(args), args.picture, args.allow_missing_libraries)
    write_text(args.result, json.dumps(record) + "\n")
    return 0


def cmd_audit_worker(args) -> int:
    """Audit the files named on stdin in turn (see the module docstring)."""
    thresholds = thresholds_of(args)
    replies = console.user_stdout()
    failed = False
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        task = json.loads(line)
        reply: dict = {"index": task["index"], "code": 0}
        try:
            if failed:
                with console.quiet():  # an empty scene, whatever the failed file left
                    bpy.ops.wm.read_homefile(use_empty=True)
            failed = True
            record = audit_file(task["path"], thresholds, task.get("picture"), args.allow_missing_libraries)
            write_text(task["result"], json.dumps(record) + "\n")
            failed = False
        except InspectorError as exc:
            reply.update(code=2, message=str(exc))
        except Exception as exc:  # a bug: this file's, recorded as such; the worker goes on
            reply.update(code=3, message=f"internal error: {type(exc).__name__}: {exc}")
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
