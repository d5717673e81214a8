"""The report (schema ``hierarchy_inspector.report/1``) as a dict, CSV and a text table.

Blender-free: built from an :class:`~.inspection.Inspection` plus file metadata. Every
field is described by the JSON Schema ``docs/report.schema.json``; every vector is a list
of floats, matrices are 4 rows.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np

from .advice.actions import Advice, advice
from .engines.paths import LABEL, PATHS
from .explain import explain
from .inspection import Inspection, worst_first
from .nodes import node_label
from .text import fmt_num, format_table
from .thresholds import Thresholds
from .timeline.report import OVER_FRAMES_COLUMNS, over_frames_cells, range_table

SCHEMA = "hierarchy_inspector.report/1"


def _floats(values) -> list:
    """Nested lists of plain floats; NaN / inf (never expected) become None for JSON."""
    arr = np.asarray(values, dtype=np.float64)
    out = arr.tolist()
    if np.isfinite(arr).all():
        return out

    def clean(x):
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x if math.isfinite(x) else None

    return clean(out)


def _deviation(dev, i: int) -> dict:
    return {
        "position": float(dev.position[i]),
        "rotation_deg": float(dev.rotation_deg[i]),
        "max_corner": float(dev.max_corner[i]),
    }


def node_entry(inspection: Inspection, i: int) -> dict:
    nodes, a = inspection.nodes, inspection.analysis
    parent = int(nodes.parents[i])
    return {
        "name": nodes.name(i),
        "kind": nodes.kind(i),
        "armature": nodes.armature(i),
        "parent": nodes.name(parent) if parent >= 0 else None,
        "parent_armature": nodes.armature(parent) if parent >= 0 else None,
        "depth": int(inspection.hierarchy.depth[i]),
        "local": {
            "translation": _floats(a.local.translation[i]),
            "rotation": _floats(a.local.rotation[i]),
            "scale": _floats(a.local.scale[i]),
            "shear_deg": _floats(inspection.local_shear_deg[i]),
        },
        "world_blender": _floats(a.world_reference[i]),
        "world_matrix_model": _floats(a.world_matrix_model[i]),
        "accumulated": {
            "translation": _floats(a.accumulated.translation[i]),
            "rotation": _floats(a.accumulated.rotation[i]),
            "scale": _floats(a.accumulated.scale[i]),
            "matrix": _floats(a.accumulated_matrix[i]),
        },
        "global_rotation": _floats(a.global_rotation[i]),
        "lossy_scale": _floats(a.lossy_scale[i]),
        "shear_deg": _floats(a.shear_deg[i]),
        "deviation": {path: _deviation(dev, i) for path, dev in inspection.deviations.items()},
        "flagged": bool(inspection.flagged[i]),
        "evaluated_differently": nodes.notes[i] or None,
        "warnings": explain(inspection, i),
        "advice": [_advice_entry(nodes, item) for item in advice(inspection, i)],
    }


def _advice_entry(nodes, item: Advice) -> dict:
    return {
        "engines": list(item.paths),
        "action": item.action,
        "target": nodes.name(item.target),
        "target_armature": nodes.armature(item.target),
        "text": item.text,
    }


def build_report(
    inspection: Inspection,
    *,
    blender_version: str,
    file: str | None,
    frame: int,
    fps: float,
    indices=None,
    dynamics: dict | None = None,
    over_frames=None,
) -> dict:
    """The report dict. ``indices`` restricts the nodes (default: all, roots first);
    ``dynamics`` maps node index to that node's dynamics entry (``--dynamics``);
    ``over_frames`` (a :class:`~.timeline.report.RangeResults`, ``--frames``) adds the range
    and each node's maxima over it."""
    order = inspection.root_first()
    if indices is not None:
        keep = set(int(i) for i in indices)
        order = np.array([i for i in order if int(i) in keep], dtype=np.int64)
    entries = []
    for i in order:
        entry = node_entry(inspection, int(i))
        if dynamics is not None and int(i) in dynamics:
            entry["dynamics"] = dynamics[int(i)]
        if over_frames is not None:
            entry["over_frames"] = over_frames.entry(int(i))
        entries.append(entry)
    shear = inspection.shear_max[order] if len(order) else np.zeros(0)
    worst = inspection.worst_corner[order] if len(order) else np.zeros(0)
    report = {
        "schema": SCHEMA,
        "blender_version": blender_version,
        "file": file,
        "frame": int(frame),
        "fps": float(fps),
        "thresholds": inspection.thresholds.as_dict(),
        "nodes": entries,
        "summary": {
            "nodes": len(entries),
            "sheared": int((shear > inspection.thresholds.shear_deg).sum()),
            "flagged": int(sum(e["flagged"] for e in entries)),
            "max_shear_deg": float(shear.max()) if len(shear) else 0.0,
            "max_deviation": float(worst.max()) if len(worst) else 0.0,
            "flagged_by_engine": _flagged_by_engine(inspection, order),
        },
    }
    if over_frames is not None:
        report["frames"] = over_frames.frames_entry(order)
    return report


def _flagged_by_engine(inspection: Inspection, order: np.ndarray) -> dict[str, int]:
    """Per engine path, the reported nodes flagged when only that path counts."""
    return {p: int(inspection.flagged_for((p,))[order].sum()) for p in PATHS}


CSV_COLUMNS = (
    "name",
    "kind",
    "armature",
    "parent",
    "depth",
    "flagged",
    "shear_max_deg",
    "local_shear_max_deg",
    "matrix_model_max_corner",
    "unreal_fbx_max_corner",
    "unreal_interchange_max_corner",
    "accumulated_max_corner",
    "matrix_model_position",
    "accumulated_position",
    "accumulated_rotation_deg",
    "world_x",
    "world_y",
    "world_z",
    "accumulated_x",
    "accumulated_y",
    "accumulated_z",
    "lossy_scale_x",
    "lossy_scale_y",
    "lossy_scale_z",
)


def report_csv(report: dict) -> str:
    """One row per node: names, flags and the headline numbers."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    ranged = "frames" in report
    writer.writerow(CSV_COLUMNS + (OVER_FRAMES_COLUMNS if ranged else ()))
    for e in report["nodes"]:
        world_t = [row[3] for row in e["world_blender"][:3]]
        dev = e["deviation"]
        dev_m, dev_a = dev["matrix_model"], dev["accumulated"]
        writer.writerow(
            [
                e["name"],
                e["kind"],
                e["armature"] or "",
                e["parent"] or "",
                e["depth"],
                int(e["flagged"]),
                max(abs(v) for v in e["shear_deg"]),
                max(abs(v) for v in e["local"]["shear_deg"]),
                dev_m["max_corner"],
                dev["unreal_fbx"]["max_corner"],
                dev["unreal_interchange"]["max_corner"],
                dev_a["max_corner"],
                dev_m["position"],
                dev_a["position"],
                dev_a["rotation_deg"],
                *world_t,
                *e["accumulated"]["translation"],
                *e["lossy_scale"],
                *(over_frames_cells(e) if ranged else ()),
            ]
        )
    return buf.getvalue()


def report_table(report: dict, limit: int = 15) -> str:
    """The worst nodes as a readable table (a corner column per engine path that
    counted), and the summary line with the flagged nodes per path."""
    nodes = report["nodes"]
    limits = report.get("thresholds")
    paths = tuple(limits.get("engines", PATHS)) if limits else PATHS
    corner = [max(e["deviation"][p]["max_corner"] for p in paths) for e in nodes]
    shear = [max(abs(v) for v in e["shear_deg"]) for e in nodes]
    flagged_idx = [k for k, e in enumerate(nodes) if e["flagged"]]
    flagged = [nodes[k] for k in worst_first(np.array(corner), np.array(shear), flagged_idx)] if nodes else []
    rows = []
    for e in flagged[:limit]:
        label = node_label(e["armature"] or e["name"], e["name"] if e["armature"] else "")
        rows.append(
            (
                label,
                fmt_num(max(abs(v) for v in e["shear_deg"]), 2),
                fmt_num(max(abs(v) for v in e["local"]["shear_deg"]), 2),
                *(fmt_num(e["deviation"][p]["max_corner"]) for p in paths),
            )
        )
    s = report["summary"]
    by_engine = s.get("flagged_by_engine", {})
    per_path = "; ".join(f"{LABEL[p]} {by_engine[p]}" for p in PATHS if p in by_engine)
    head = (
        f"{s['nodes']} nodes, {s['flagged']} flagged, {s['sheared']} sheared; "
        f"max shear {s['max_shear_deg']:.2f} deg, max corner deviation {s['max_deviation']:.4g}"
        + (f"\nFlagged per engine (plain export): {per_path}" if per_path else "")
    )
    applied = Thresholds(**{**limits, "engines": paths}).describe() if limits else "the defaults"
    if "frames" in report:
        head = f"{head}\n{range_table(report, limit)}\nAt frame {report['frame']}:"
    if not rows:
        return f"{head}\nNothing over the thresholds ({applied})."
    table = format_table(("node", "shear (deg)", "local shear lost", *(f"{LABEL[p]}: corners" for p in paths)), rows)
    more = f"\n... and {len(flagged) - limit} more flagged nodes" if len(flagged) > limit else ""
    return f"{head}\n{table}{more}\nFlagged: over the thresholds ({applied})."
