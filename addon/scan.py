"""The scene scan: every object and bone of a scene, flagged and sorted."""

from __future__ import annotations

import time

import bpy
import numpy as np

from . import live, preferences
from .inspection import Inspection, inspect
from .reading import read_nodes


def scan_scene(scene, shear_threshold_deg: float, corner_threshold: float, progress=None) -> Inspection:
    """Inspect every object of ``scene`` and every pose bone of its armatures.

    ``progress(fraction, message)`` is called between phases (reading, analysing).
    """
    if progress:
        progress(0.0, "reading the scene")
    nodes = read_nodes(scene.objects)
    if progress:
        progress(0.5, f"analysing {len(nodes)} nodes")
    result = inspect(nodes, shear_threshold_deg, corner_threshold)
    if progress:
        progress(1.0, "done")
    return result


def flagged_order(inspection: Inspection) -> np.ndarray:
    """Flagged node indices, what an artist would see first: largest corner distance,
    then largest shear."""
    idx = np.flatnonzero(inspection.flagged)
    keys = np.lexsort((-inspection.shear_max[idx], -inspection.worst_corner[idx]))
    return idx[keys]


def fill_scan_list(settings, inspection: Inspection, seconds: float) -> None:
    """Store the flagged nodes in the scene's scan list (sorted, see :func:`flagged_order`)."""
    a = inspection.analysis
    nodes = inspection.nodes
    items = settings.scan_items
    items.clear()
    for i in flagged_order(inspection):
        item = items.add()
        item.object_name, item.bone_name = nodes.keys[i]
        item.kind = nodes.kind(i)
        item.max_corner = float(inspection.worst_corner[i])
        item.matrix_corner = float(a.matrix_model.max_corner[i])
        item.accumulated_corner = float(a.accumulated_deviation.max_corner[i])
        item.shear_deg = float(inspection.shear_max[i])
        item.local_shear_deg = float(inspection.local_shear_max[i])
    settings.scan_nodes = len(nodes)
    settings.scan_seconds = seconds
    settings.scan_done = True
    settings["scan_index"] = -1  # set without selecting anything


class HI_OT_scan(bpy.types.Operator):
    """Inspect every object and bone of the scene and list the flagged ones"""

    bl_idname = "hierarchy_inspector.scan"
    bl_label = "Scan scene"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        if context.scene is None:
            cls.poll_message_set("No scene to scan")
            return False
        return True

    def execute(self, context):
        prefs = preferences.settings(context)
        wm = context.window_manager
        wm.progress_begin(0, 100)
        start = time.perf_counter()
        try:
            result = scan_scene(
                context.scene,
                prefs.shear_threshold_deg,
                prefs.corner_threshold,
                progress=lambda f, _msg: wm.progress_update(int(100 * f)),
            )
        except ValueError as exc:
            self.report({"ERROR"}, f"Scan failed: {exc}")
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        seconds = time.perf_counter() - start
        fill_scan_list(context.scene.hierarchy_inspector, result, seconds)
        live.remember_scan(result)
        summary = result.summary()
        self.report(
            {"INFO"},
            f"{summary['flagged']} of {summary['nodes']} nodes flagged; max shear {summary['max_shear_deg']:.2f} deg, "
            f"max corner deviation {summary['max_deviation']:.4g} ({seconds:.2f} s)",
        )
        return {"FINISHED"}


CLASSES = (HI_OT_scan,)
