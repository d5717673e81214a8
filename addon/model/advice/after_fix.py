"""What a fix changed, per engine path (Blender-free): one headline for Blender's status
bar (it shows the last report only, and cuts long ones) and details for the Info log.

Compares the scan before and after (nodes matched by key: helpers are new nodes, they
are not counted) and says, per engine path that counts, how many nodes Blender's plain
export puts off there before -> after, and how many the export right for that path
leaves off (Export glTF / FBX (exact): none in glTF, Unity and Godot; Export FBX (exact):
each world's own skew in Unreal's FBX import; Export FBX (accumulated): the same skew in
Unreal from locals and Ogre). Paths with the same numbers share one entry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engines.paths import ACCUMULATED, MATRIX, PATHS, UNREAL_FBX, UNREAL_INTERCHANGE
from ..inspection import Inspection
from ..text import Units
from ..views import SHORT, accumulated_export_residual, unreal_export_residual

#: How many names a one-line message lists before "and N more".
WORST_FEW = 3
#: The export right for each path, as the headline names it (None: exact, nothing left).
EXPORT_NAME = {
    MATRIX: None,
    UNREAL_FBX: "exact FBX",
    UNREAL_INTERCHANGE: "accumulated FBX",
    ACCUMULATED: "accumulated FBX",
}


def few(names: list[str], count: int = WORST_FEW) -> str:
    """``'A', 'B', 'C' and 297 more`` (names in the given order: pass them worst first)."""
    shown = ", ".join(f"'{n}'" for n in names[:count])
    return shown + (f" and {len(names) - count} more" if len(names) > count else "")


@dataclass(frozen=True)
class PathOff:
    """The nodes (by key) one engine path puts over the corner threshold."""

    plain: frozenset  #: with Blender's plain export (glTF: also a local shear it drops)
    exported: frozenset  #: with the export right for the path


def paths_off(ins: Inspection) -> dict[str, PathOff]:
    """:class:`PathOff` per engine path (:data:`..engines.paths.PATHS`)."""
    nodes, limit = ins.nodes, ins.thresholds.corner
    keys = np.array(nodes.keys, dtype=object).reshape(-1, 2) if len(nodes) else np.zeros((0, 2), dtype=object)

    def of(mask) -> frozenset:
        return frozenset(tuple(k) for k in keys[np.asarray(mask, dtype=bool)])

    accumulated = accumulated_export_residual(ins)
    right = {
        MATRIX: np.zeros(len(nodes), dtype=bool),
        UNREAL_FBX: unreal_export_residual(ins) > limit,
        UNREAL_INTERCHANGE: np.ones(len(nodes), dtype=bool) if accumulated is None else accumulated > limit,
    }
    right[ACCUMULATED] = right[UNREAL_INTERCHANGE]
    out = {}
    for path in PATHS:
        plain = ins.corner(path) > limit
        if path == MATRIX:
            plain = plain | ins.lossy_local
        out[path] = PathOff(of(plain), of(right[path]))
    return out


def summary(
    action: str, changed: list[str], before: Inspection, after: Inspection, units: Units, bake: bool = False
) -> tuple[str, list[str]]:
    """``(headline, details)``: what ``action`` changed (``changed`` object names,
    worst first) and, per engine path that counts, the nodes off before -> after, in one
    line; the full list of names and the explanations for the Info log."""
    b, f = paths_off(before), paths_off(after)
    common = set(before.nodes.keys) & set(after.nodes.keys)

    def n(keys) -> int:
        return len(keys & common)

    entries: dict[str, list[str]] = {}
    for path in after.thresholds.engines:
        text = f"plain {n(b[path].plain)} -> {n(f[path].plain)}"
        if EXPORT_NAME[path] is not None:
            text += f", {EXPORT_NAME[path]} {n(b[path].exported)} -> {n(f[path].exported)}"
        entries.setdefault(text, []).append(SHORT[path])
    things = f"{len(changed)} object{'s' if len(changed) != 1 else ''}"
    headline = f"{action} {things}; nodes off: " + "; ".join(
        f"{', '.join(labels)}: {text}" for text, labels in entries.items()
    )
    details = [f"{action}: {', '.join(changed)}"] if changed else []
    if MATRIX in after.thresholds.engines:
        details.append("Export glTF (exact) and Export FBX (exact) keep every node in glTF, Unity and Godot.")
    if n(f[MATRIX].plain) > n(b[MATRIX].plain):
        details.append(
            "Baked objects keep their place with a clean world, so their local matrices now hold the shear: "
            "plain exports drop it, Export glTF (exact) keeps it."
        )
    wb, wa = _worst(before, ACCUMULATED), _worst(after, ACCUMULATED)
    if wa > wb * 1.001 and ACCUMULATED in after.thresholds.engines:
        details.append(
            f"Ogre's largest deviation with a plain export rose from {units.length(wb)} to {units.length(wa)}: "
            f"the children of fixed nodes now hold the skew in their local matrices; Export FBX (accumulated) "
            f"places them."
        )
    sheared_bones = frozenset(k for k, s in zip(after.nodes.keys, after.sheared, strict=True) if s and k[1])
    if bake and sheared_bones & common:
        details.append(
            f"{n(sheared_bones)} sheared bones are unchanged (bones cannot be baked: see the panel's advice)."
        )
    return headline, details


def _worst(ins: Inspection, path: str) -> float:
    return float(ins.corner(path).max()) if len(ins.nodes) else 0.0
