"""Pictures for people who would rather look than read (PNG, via matplotlib's Agg
canvas: no display and no global pyplot state, safe inside Blender).

- :func:`worst_nodes_png`: for the worst nodes, the box as Blender places it, as a
  glTF viewer composes the exported TRS, and as an accumulating engine places it.
- :func:`deviation_chart_png`: corner deviation per flagged node for both engine
  families, with the shear Blender shows.
"""

from __future__ import annotations

import numpy as np

from .errors import InspectorError
from .inspection import Inspection
from .outputs import write_with
from .overlay_geometry import box_edges

MODEL_STYLES = (
    ("Blender", "#303030", "-", 2.2),
    ("exported TRS (glTF, Unity, Godot)", "#f08c00", "--", 1.6),
    ("accumulated (Unreal, Ogre)", "#1c7ed6", "-", 1.6),
)


class PicturesUnavailable(InspectorError):
    """matplotlib is not installed."""


def _figure(width: float, height: float):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PicturesUnavailable("matplotlib is not available to this Python: pictures skipped") from None
    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def worst_nodes_png(inspection: Inspection, path: str, count: int = 4) -> list[str]:
    """Draw the ``count`` worst nodes' boxes in all three placements; returns their labels."""
    order = inspection.worst_first()[:count]
    if not len(order):
        order = np.arange(min(count, len(inspection.nodes)))
    cols = max(1, min(2, len(order)))
    rows = int(np.ceil(len(order) / cols)) or 1
    fig = _figure(6.0 * cols, 5.2 * rows)
    nodes, a = inspection.nodes, inspection.analysis
    labels = []
    for k, i in enumerate(order):
        ax = fig.add_subplot(rows, cols, k + 1, projection="3d")
        lo, hi = nodes.box_min[i], nodes.box_max[i]
        placements = (nodes.world[i], a.world_matrix_model[i], a.accumulated_matrix[i])
        points = []
        for (name, colour, style, width), matrix in zip(MODEL_STYLES, placements, strict=True):
            edges = box_edges(matrix[None], lo[None], hi[None])[0]
            points.append(edges.reshape(-1, 3))
            for e, (p, q) in enumerate(edges):
                ax.plot(
                    *zip(p, q, strict=True),
                    color=colour,
                    linestyle=style,
                    linewidth=width,
                    label=name if e == 0 else None,
                )
        pts = np.concatenate(points)
        centre, radius = pts.mean(axis=0), max(np.ptp(pts, axis=0).max() / 2, 1e-6)
        ax.set_xlim(centre[0] - radius, centre[0] + radius)
        ax.set_ylim(centre[1] - radius, centre[1] + radius)
        ax.set_zlim(centre[2] - radius, centre[2] + radius)
        ax.set_box_aspect((1, 1, 1))
        ax.set_xlabel("X")
        ax.set_ylabel("Y")
        ax.set_zlabel("Z")
        label = nodes.label(int(i))
        labels.append(label)
        ax.set_title(
            f"{label}\nshear {inspection.shear_max[i]:.1f} deg; corners off: exported "
            f"{a.matrix_model_deviation.max_corner[i]:.2f}, accumulated {a.accumulated_deviation.max_corner[i]:.2f}",
            fontsize=9,
        )
        if k == 0:
            ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("Where each engine family puts the worst nodes", fontsize=12)
    fig.tight_layout()
    write_with(path, lambda tmp: fig.savefig(tmp, format="png"))
    return labels


def deviation_chart_png(inspection: Inspection, path: str, limit: int = 30) -> int:
    """Bar chart of corner deviation per flagged node (both engine families) and the
    shear Blender shows; returns the number of nodes drawn."""
    order = inspection.worst_first()[:limit]
    nodes, a = inspection.nodes, inspection.analysis
    n = len(order)
    fig = _figure(10.0, max(2.5, 0.38 * n + 1.5))
    ax = fig.add_subplot(1, 2, 1)
    ax2 = fig.add_subplot(1, 2, 2, sharey=ax)
    y = np.arange(n)
    if n:
        ax.barh(
            y - 0.2,
            a.matrix_model_deviation.max_corner[order],
            height=0.4,
            color=MODEL_STYLES[1][1],
            label="exported TRS",
        )
        ax.barh(
            y + 0.2,
            a.accumulated_deviation.max_corner[order],
            height=0.4,
            color=MODEL_STYLES[2][1],
            label="accumulated",
        )
        ax2.barh(y, inspection.shear_max[order], height=0.5, color="#e03131")
        ax.set_yticks(y, [nodes.label(int(i)) for i in order], fontsize=8)
        ax.invert_yaxis()
        ax.legend(fontsize=8, loc="lower right")
    else:
        ax.text(0.5, 0.5, "nothing flagged", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("largest corner distance from Blender (scene units)")
    ax2.set_xlabel("shear in Blender (degrees)")
    ax2.tick_params(labelleft=False)
    fig.suptitle(f"{n} flagged nodes of {len(nodes)}", fontsize=11)
    fig.tight_layout()
    write_with(path, lambda tmp: fig.savefig(tmp, format="png"))
    return n
