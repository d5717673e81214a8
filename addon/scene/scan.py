"""The scene scan: every object and bone of a scene read and inspected in one pass."""

from __future__ import annotations

import bpy

from ..model.inspection import Inspection, inspect
from ..model.thresholds import DEFAULT, Thresholds
from .instances import with_instances
from .reading import read_nodes


def scan_scene(scene, thresholds: Thresholds = DEFAULT, progress=None, instances: bool = False) -> Inspection:
    """Inspect every object of ``scene`` and every pose bone of its armatures; with
    ``instances``, also every collection / geometry-nodes / particle instance, as a node
    under its instancer (:mod:`.instances`; evaluated for the current view layer).

    ``progress(fraction, message)`` is called between phases (reading, analysing).
    """
    if progress:
        progress(0.0, "reading the scene")
    nodes = read_nodes(scene.objects)
    if instances:
        layer = bpy.context.view_layer if scene == bpy.context.scene else scene.view_layers[0]
        nodes = with_instances(
            nodes, layer.depsgraph if layer != bpy.context.view_layer else bpy.context.evaluated_depsgraph_get()
        )
    if progress:
        progress(0.5, f"analysing {len(nodes)} nodes")
    result = inspect(nodes, thresholds)
    if progress:
        progress(1.0, "done")
    return result
