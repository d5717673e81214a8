"""The frame range as a picture (PNG via matplotlib's Agg canvas, like :mod:`..pictures`):
for the worst nodes of a range, world shear and local shear (top) and the largest corner
distance of both engine families from Blender (bottom) over the frames, each node's
worst frame marked."""

from __future__ import annotations

import numpy as np

from ..outputs import write_with
from ..pictures import MODEL_STYLES, _figure
from .series import OverFrames

_NODE_COLOURS = ("#e03131", "#1c7ed6", "#2f9e44", "#f08c00", "#7048e8", "#0c8599", "#c2255c", "#5c940d")


def range_chart_png(over: OverFrames, path: str, count: int = 5, indices=None) -> list[str]:
    """Write the chart of the ``count`` worst nodes among ``indices`` (default: all)
    flagged at some frame; returns their labels (empty: the chart says nothing flagged)."""
    pool = np.flatnonzero(over.flagged)
    if indices is not None:
        pool = np.intersect1d(pool, np.asarray(indices, dtype=np.int64))
    order = over.worst_first(pool)[:count]
    frames = over.frames
    fig = _figure(9.0, 6.0)
    top = fig.add_subplot(2, 1, 1)
    bottom = fig.add_subplot(2, 1, 2, sharex=top)
    labels = []
    for k, i in enumerate(int(i) for i in order):
        colour = _NODE_COLOURS[k % len(_NODE_COLOURS)]
        label = over.series.label(i)
        labels.append(label)
        top.plot(frames, over.shear[:, i], color=colour, lw=1.6, label=label)
        top.plot(frames, over.local_shear[:, i], color=colour, lw=1.0, ls=":")
        bottom.plot(frames, over.corner_accumulated[:, i], color=colour, lw=1.6, ls=MODEL_STYLES[2][2])
        bottom.plot(frames, over.corner_matrix[:, i], color=colour, lw=1.2, ls=MODEL_STYLES[1][2])
        t = int(over.worst_index[i])
        bottom.plot([frames[t]], [over.corner[t, i]], "o", color=colour, ms=5)
    if labels:
        top.legend(fontsize=8, loc="upper right")
    else:
        top.text(0.5, 0.5, "nothing flagged in the range", ha="center", va="center", transform=top.transAxes)
    top.axhline(over.thresholds.shear_deg, color="#868e96", lw=0.8, ls="--")
    top.set_ylabel("shear (deg)\nworld solid, local dotted", fontsize=8)
    bottom.axhline(over.thresholds.corner, color="#868e96", lw=0.8, ls="--")
    bottom.set_ylabel("corner distance (units)\naccumulated solid,\nexported TRS dashed", fontsize=8)
    bottom.set_xlabel("frame")
    bottom.xaxis.get_major_locator().set_params(integer=True)
    fig.suptitle(f"Frames {frames[0]}..{frames[-1]}: the {len(labels)} worst of {int(over.flagged.sum())} flagged")
    fig.tight_layout()
    write_with(path, lambda tmp: fig.savefig(tmp, format="png"))
    return labels
