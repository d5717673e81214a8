"""``audit-file``: what one audit worker does with one .blend (in its own process, so a
crash or hang stays with that file): open it, scan it (objects, bones and instances),
draw its worst nodes when any are flagged, and write its record whole."""

from __future__ import annotations

import json
import os
import time

import bpy
import numpy as np

from ..model.errors import InspectorError
from ..model.outputs import write_text
from ..model.pictures import worst_nodes_png
from ..scene.blend_files import open_blend
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


def cmd_audit_file(args) -> int:
    started = time.perf_counter()
    thresholds = thresholds_of(args)
    with console.quiet():
        open_blend(args.blend)
    scene = bpy.context.scene
    if scene is None:
        raise InspectorError(f"{args.blend!r}: the file has no scene")
    inspection = scan_scene(scene, thresholds, instances=True)
    version = tuple(bpy.data.version)  # the file's: (major, minor, file subversion)
    record = file_record(inspection, f"{version[0]}.{version[1]}")
    record["file_version"] = ".".join(map(str, version))
    record["scene"] = scene.name
    record["picture"] = None
    if args.picture and record["flagged"]:
        os.makedirs(os.path.dirname(os.path.abspath(args.picture)), exist_ok=True)
        worst_nodes_png(inspection, args.picture)
        record["picture"] = args.picture
    record["seconds_inside"] = round(time.perf_counter() - started, 3)
    write_text(args.result, json.dumps(record) + "\n")
    return 0
