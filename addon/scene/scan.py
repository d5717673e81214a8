"""The scene scan: every object and bone of a scene read and inspected in one pass."""

from __future__ import annotations

from ..model.inspection import Inspection, inspect, inspect_valid
from ..model.thresholds import DEFAULT, Thresholds
from .reading import read_nodes


def scan_scene(scene, thresholds: Thresholds = DEFAULT, progress=None) -> Inspection:
    """Inspect every object of ``scene`` and every pose bone of its armatures.

    ``progress(fraction, message)`` is called between phases (reading, analysing).
    Raises :class:`~..model.errors.SceneDataError` naming the object or bone and the
    property where a value is NaN or infinite.
    """
    return scan_scene_valid(scene, thresholds, progress, strict=True)[0]


def scan_scene_valid(
    scene, thresholds: Thresholds = DEFAULT, progress=None, strict: bool = False
) -> tuple[Inspection, list[str]]:
    """:func:`scan_scene` that goes on where one object is bad: the inspection of every
    node with finite values, and one message per place where NaN or infinity starts
    (with ``strict``, those raise instead)."""
    if progress:
        progress(0.0, "reading the scene")
    nodes = read_nodes(scene.objects)
    if progress:
        progress(0.5, f"analysing {len(nodes)} nodes")
    result = (inspect(nodes, thresholds), []) if strict else inspect_valid(nodes, thresholds)
    if progress:
        progress(1.0, "done")
    return result
