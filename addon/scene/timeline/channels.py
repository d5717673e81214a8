"""What the range list needs beyond the matrices a range scan reads: each node's own
scale channels at the scanned frames (the squash an animator keys, for the cause groups)
and the scan's annotations (deform bones, hidden ones, the node a bone's constraints copy).

The scale channels come from the objects' and armatures' actions: keyed scale curves are
evaluated at the frames (``FCurve.evaluate``, no scene evaluation), every other channel
keeps its current value. Scale driven by drivers or NLA strips is taken as it is now.
"""

from __future__ import annotations

import re

import bpy
import numpy as np

from ...model.nodes import Nodes
from ...model.timeline import FrameSeries
from ..edits.editing import action_fcurves
from ..scan import annotate

_BONE_SCALE = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.scale$')


def scale_channels(series: FrameSeries) -> np.ndarray:
    """``(T, N, 3)`` each node's own scale channels at ``series.frames`` (objects: scale
    times delta scale; bones: the pose bone's scale); NaN for nodes whose object or bone
    no longer exists."""
    frames = np.asarray(series.frames, dtype=np.float64)
    index = {k: i for i, k in enumerate(series.keys)}
    out = np.full((len(frames), len(series.keys), 3), np.nan)
    for name in {obj for obj, _bone in series.keys}:
        obj = bpy.data.objects.get(name)
        if obj is None:
            continue
        row = index.get((name, ""))
        if row is not None:
            out[:, row] = np.asarray(obj.scale, dtype=np.float64) * np.asarray(obj.delta_scale, dtype=np.float64)
        bones = obj.pose.bones if obj.type == "ARMATURE" and obj.pose is not None else []
        for pb in bones:
            i = index.get((name, pb.name))
            if i is not None:
                out[:, i] = tuple(pb.scale)
        action = obj.animation_data.action if obj.animation_data is not None else None
        for curve in action_fcurves(action):
            if curve.data_path == "scale":
                i, delta = row, float(obj.delta_scale[curve.array_index])
            else:
                found = _BONE_SCALE.match(curve.data_path)
                i = index.get((name, found.group(1).replace('\\"', '"'))) if found else None
                delta = 1.0
            if i is not None and not curve.mute:
                out[:, i, curve.array_index] = [curve.evaluate(f) * delta for f in frames]
    return out


def range_annotations(series: FrameSeries) -> Nodes:
    """The scan's annotations of the series' nodes (:func:`..scan.annotate`: deform,
    hidden, follows, Inherit Scale) at the current frame."""
    return annotate(series.nodes_at(0))
