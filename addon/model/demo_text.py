"""The Blender-free part of the demo: the examples of *Accumulating Transforms* in both models, as text."""

from __future__ import annotations

from ... import core
from ...core import examples
from .text import fmt_num, fmt_vec, format_table

HEADERS = ("node", "model", "world position", "world scale", "lossy scale", "shear XY/YZ/ZX (deg)", "corner dev")


def example_table(example: examples.Example) -> str:
    """Both models of one example hierarchy, node by node.

    The matrix model's "world scale" is the signed column lengths of its world matrix
    (what an exporter would write); the accumulated model's is its world scale. The
    corner deviation is the largest distance a corner of the node's box moves between
    the matrix model (Blender) and the accumulated model (Unreal / Ogre).
    """
    h = example.hierarchy
    result = core.analyze(h, example.local.to_matrix(), box_min=example.box_min, box_max=example.box_max)
    matrix_parts = core.decompose(result.world_reference)
    rows = []
    for i, name in enumerate(example.names):
        rows.append(
            (
                name,
                "matrix",
                fmt_vec(result.world_reference[i, :3, 3]),
                fmt_vec(matrix_parts.scale[i]),
                fmt_vec(result.lossy_scale[i]),
                fmt_vec(result.shear_deg[i], 2),
                "",
            )
        )
        rows.append(
            (
                "",
                "accumulated",
                fmt_vec(result.accumulated.translation[i]),
                fmt_vec(result.accumulated.scale[i]),
                "",
                fmt_vec(core.shear_angles(result.accumulated_matrix[i]), 2),
                fmt_num(result.accumulated_deviation.max_corner[i]),
            )
        )
    return f"{example.title}\n{format_table(HEADERS, rows)}"


def demo_text() -> str:
    """The comparison tables of every built-in example."""
    parts = [
        example_table(examples.piston()),
        example_table(examples.piston(root_scale=(2.0, 1.0, 1.0))),
        example_table(examples.rotated_child()),
    ]
    return "\n\n".join(parts)
