"""The scene scan: every object and bone of a scene read and inspected in one pass."""

from __future__ import annotations

from ..model.inspection import Inspection, inspect
from ..model.thresholds import DEFAULT, Thresholds
from .reading import read_nodes


def scan_scene(scene, thresholds: Thresholds = DEFAULT, progress=None) -> Inspection:
    """Inspect every object of ``scene`` and every pose bone of its armatures.

    ``progress(fraction, message)`` is called between phases (reading, analysing).
    """
    if progress:
        progress(0.0, "reading the scene")
    nodes = read_nodes(scene.objects)
    if progress:
        progress(0.5, f"analysing {len(nodes)} nodes")
    result = inspect(nodes, thresholds)
    if progress:
        progress(1.0, "done")
    return result
