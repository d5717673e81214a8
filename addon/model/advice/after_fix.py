"""What a fix changed, per engine family, in a few words (Blender-free).

Compares the scan before and after (nodes matched by key: helpers are new nodes, they
are not counted) and says, per family, how many nodes a plain export or import puts
off before and after, and how many the corrected exports leave off; long name lists
are cut to the worst few (the full list goes to the Info log).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InspectorError
from ..exports.accumulated import accumulated_locals
from ..inspection import Inspection
from ..text import Units

#: How many names a one-line message lists before "and N more".
WORST_FEW = 3


def few(names: list[str], count: int = WORST_FEW) -> str:
    """``'A', 'B', 'C' and 297 more`` (names in the given order: pass them worst first)."""
    shown = ", ".join(f"'{n}'" for n in names[:count])
    return shown + (f" and {len(names) - count} more" if len(names) > count else "")


@dataclass(frozen=True)
class Families:
    """Nodes off per engine family (by key), plain and with the corrected exports."""

    gltf_plain: frozenset  #: a plain glTF / FBX export drops shear or puts them off
    accumulated_plain: frozenset  #: a plain Unreal / Ogre import puts them off
    accumulated_export: frozenset  #: Export accumulated TRS leaves them off (Blender's world is sheared)
    sheared_bones: frozenset
    max_accumulated_plain: float


def families(ins: Inspection) -> Families:
    nodes, a, limit = ins.nodes, ins.analysis, ins.thresholds.corner
    keys = np.array(nodes.keys, dtype=object).reshape(-1, 2) if len(nodes) else np.zeros((0, 2), dtype=object)

    def of(mask) -> frozenset:
        return frozenset(tuple(k) for k in keys[np.asarray(mask, dtype=bool)])

    try:
        residual = accumulated_locals(ins)[1].max_corner > limit
    except InspectorError:
        residual = np.ones(len(nodes), dtype=bool)
    return Families(
        gltf_plain=of(ins.lossy_local | (a.matrix_model_deviation.max_corner > limit)),
        accumulated_plain=of(a.accumulated_deviation.max_corner > limit),
        accumulated_export=of(residual),
        sheared_bones=of(ins.sheared & nodes.is_bone()),
        max_accumulated_plain=float(a.accumulated_deviation.max_corner.max()) if len(nodes) else 0.0,
    )


def summary(
    action: str, changed: list[str], before: Inspection, after: Inspection, units: Units, bake: bool = False
) -> str:
    """One message: what ``action`` changed (``changed`` object names, worst first)
    and, per engine family, the nodes off before -> after; with ``bake``, the sheared
    bones it could not change."""
    b, f = families(before), families(after)
    common = set(before.nodes.keys) & set(after.nodes.keys)

    def n(keys) -> int:
        return len(keys & common)

    parts = [f"{action} {len(changed)} object{'s' if len(changed) != 1 else ''}: {few(changed)}."]
    parts.append(
        f"glTF, Unity: plain export off for {n(b.gltf_plain)} -> {n(f.gltf_plain)} nodes; "
        f"Export glTF (exact) keeps every node."
    )
    parts.append(
        f"Unreal, Ogre: Export accumulated TRS off for {n(b.accumulated_export)} -> {n(f.accumulated_export)} "
        f"nodes (plain import: {n(b.accumulated_plain)} -> {n(f.accumulated_plain)})."
    )
    if n(f.gltf_plain) > n(b.gltf_plain):
        parts.append(
            "Baked objects keep their place with a clean world, so their local matrices now hold the shear: "
            "plain exports drop it, Export glTF (exact) keeps it."
        )
    if f.max_accumulated_plain > b.max_accumulated_plain * 1.001:
        parts.append(
            f"A plain import's largest deviation rose from {units.length(b.max_accumulated_plain)} to "
            f"{units.length(f.max_accumulated_plain)}: the children of fixed nodes now hold the skew in their "
            f"local matrices, which a plain import drops; the exports above place them."
        )
    if bake and f.sheared_bones & common:
        parts.append(
            f"{n(f.sheared_bones)} sheared bones are unchanged (bones cannot be baked: see the panel's advice)."
        )
    return " ".join(parts)
