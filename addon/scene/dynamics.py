"""``report --dynamics``: sample Blender's animation at the neighbouring frames F-1, F,
F+1 (one depsgraph evaluation and one bulk read each) and hand the matrices to
:func:`..model.dynamics.dynamics_entries`. ``dt = fps_base / fps`` seconds.
"""

from __future__ import annotations

import numpy as np

from ..model.dynamics import FrameSamples, dynamics_entries
from ..model.errors import SceneDataError
from ..model.inspection import Inspection, local_matrices
from .reading import read_nodes


def _sample(scene, frame: int):
    scene.frame_set(frame)
    nodes = read_nodes(scene.objects, verify=False)
    local, singular = local_matrices(nodes)
    return nodes.keys, nodes.world, local, singular


def scene_dynamics(scene, inspection: Inspection) -> dict[int, dict]:
    """Per node index of ``inspection`` (read at the current frame), its ``dynamics``
    report entry. The scene is left at the frame it was on."""
    frame, subframe = scene.frame_current, scene.frame_subframe
    dt = scene.render.fps_base / scene.render.fps
    try:
        keys_prev, world_prev, local_prev, sing_prev = _sample(scene, frame - 1)
        keys_next, world_next, local_next, sing_next = _sample(scene, frame + 1)
    finally:
        scene.frame_set(frame, subframe=subframe)
    nodes = inspection.nodes
    if keys_prev != nodes.keys or keys_next != nodes.keys:
        raise SceneDataError("the scene's objects or bones change between frames: dynamics need the same nodes")
    samples = FrameSamples(
        world=np.stack((world_prev, nodes.world, world_next)),
        local=np.stack((local_prev, inspection.local_matrices, local_next)),
        singular_parent=np.stack((sing_prev, inspection.singular_parent, sing_next)),
        parents=nodes.parents,
        dt=dt,
    )
    return dynamics_entries(samples)
