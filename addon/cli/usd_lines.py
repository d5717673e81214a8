"""What ``export --target usd`` prints: what was written and corrected, and the
read-back per kind of node with its tolerance (the joints' and points' floor named)."""

from __future__ import annotations

from ..model.exports.usd.plan import HALF_FLOOR, JOINT_TOLERANCE, OBJECT_TOLERANCE, POINT_TOLERANCE
from ..scene.exports.usd_export import UsdResult
from . import console


def usd_lines(result: UsdResult, out: str, frame_range) -> tuple[list[str], list[str]]:
    """``(lines, over)``: the lines to print and what is over its tolerance (empty: exit 0)."""
    what = f"frame {result.frames[0]}" if frame_range is None else f"frames {frame_range.start}..{frame_range.end}"
    if frame_range is not None and frame_range.step != 1:
        what += f" step {frame_range.step}"
    ops = f" ({console.listed(result.matrix_ops, quote=True)})" if result.matrix_ops else ""
    helpers = f" ({console.listed(result.helpers)})" if result.helpers else ""
    lines = [
        f"wrote {out!r}: {what} ({len(result.frames)} time code(s) = frames); {len(result.matrix_ops)} object "
        f"prim(s) given a matrix op{ops}; {len(result.helpers)} helper joint(s){helpers}"
    ]
    if result.reparented:
        lines.append(
            f"only deform bones: {len(result.reparented)} joint(s) whose parent bone is not exported, written "
            f"relative to their nearest exported ancestor (where USD places them): {console.listed(result.reparented)}"
        )
    for name, why in result.not_checked:
        lines.append(f"not checked: '{name}' ({why})")
    e = result.errors
    if e is None:
        return lines, []
    worst_joint = max(e.joints.per_node, key=lambda k: e.joints.per_node[k]) if e.joints.per_node else "-"
    lines.append(
        f"read back with usd-core ({e.objects.checked} object(s), {e.joints.checked} joint(s), {len(e.points)} "
        f"skinned mesh(es), {len(result.frames)} frame(s)): objects {e.objects.relative:.2e} relative (limit "
        f"{OBJECT_TOLERANCE:g}); joints {e.joints.relative:.2e} relative (limit {JOINT_TOLERANCE:g}, worst "
        f"'{worst_joint}')"
    )
    for name, p in e.points.items():
        lines.append(
            f"skinned '{name}': points {p.relative:.2e} of its bounding-box diagonal (limit {POINT_TOLERANCE:g}; "
            f"worst vertex {p.vertex}, {p.absolute:.2e} units)"
        )
        if p.bbone_vertex >= 0:
            lines.append(
                f"skinned '{name}': its vertices on B-Bones, which a USD skeleton cannot carry: worst vertex "
                f"{p.bbone_vertex} at frame {result.frames[p.bbone_frame]}, {p.bbone_absolute:.2e} units "
                f"({p.bbone_relative:.2e} of its diagonal)"
            )
    if e.joints.checked or e.points:
        lines.append(f"the joints' and points' floor: {HALF_FLOOR}")
    return lines, e.over()
