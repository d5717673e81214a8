"""A glTF file with several animations (Blender's exporter in its Actions, Active
Actions or NLA Tracks mode) made exact per animation, and its check, Blender-free.

Each animation ("take") is played alone by an engine: the nodes it animates follow its
channels, every other node stays at its static TRS (the pose the exporter wrote, at
the frame it exported). A :class:`Take` holds Blender's world matrices with that
animation's action (or track) alone, at the animation's own key times; ``static`` is
Blender at the exporter's frame. A node whose local matrix needs two TRS in the static
pose or in any take gets one helper above it: its static TRS hold the static split,
and in every take that animates the node, the helper and the node are animated with
that take's continuous exact split (:func:`.animated_split.continuous_split`); takes
that do not animate the node leave both static. Everything else keeps what Blender's
exporter wrote.

Shapes: world matrices ``(T, N, 4, 4)`` (time first, the scene's node keys), times in
seconds; matrices are compared as ``C @ world @ F`` (:func:`.animated_gltf.expected_worlds`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..nodes import node_label
from ..thresholds import DEFAULT, Thresholds
from .animated_gltf import (
    FrameError,
    animated_error,
    check_scale,
    expected_worlds,
    locals_in_file,
    needs_split,
    subtree_extent,
)
from .animated_split import continuous_split
from .gltf_animation import add_channels, animated_nodes, append_accessor, drop_channels, world_matrices_at
from .gltf_check import node_index
from .gltf_file import Gltf


class Take(NamedTuple):
    """One glTF animation and Blender evaluated with its action (or track) alone."""

    animation: int  #: index in the file's ``animations``
    name: str  #: the animation's name (an action's or an NLA track's)
    times: np.ndarray  #: (T,) seconds: the animation's key times
    world: np.ndarray  #: (T, N, 4, 4) Blender's world matrices at those times
    objects: frozenset = frozenset()  #: names of the objects the animation animates (bones: their armature)
    held: frozenset = frozenset()  #: scene node indices the take does not compare (joints left in rest position)


def _locals(
    gltf: Gltf, keys, world: np.ndarray, times, animation: int | None, conversion, scene_nodes, file_nodes, unconverted
):
    """Local matrices ``(T, M, 4, 4)`` the file's nodes ``file_nodes`` must have for
    their scene nodes to land on ``world`` (parents that are no scene node: as the file
    places them in ``animation``, or statically for None), their parents' worlds, and
    their :func:`.animated_gltf.subtree_extent` ``(T, M)``."""
    parents = gltf.parents()
    fp = parents[file_nodes]
    t_count = len(world)
    if np.isin(fp[fp >= 0], file_nodes).all():  # every parent is a scene node: no need to sample the file
        target = np.zeros((t_count, len(parents), 4, 4))
    elif animation is None:
        target = np.repeat(gltf.world_matrices()[None], t_count, axis=0)
    else:
        target = world_matrices_at(gltf, times, animation)
    target[:, file_nodes] = expected_worlds(
        [keys[i] for i in scene_nodes], world[:, scene_nodes], conversion, unconverted
    )
    local, parent_world = locals_in_file(target, fp, file_nodes, [keys[int(i)] for i in scene_nodes])
    return local, parent_world, subtree_extent(target, parents)[:, file_nodes]


def add_take_helpers(
    gltf: Gltf,
    keys: list[tuple[str, str]],
    static: np.ndarray,
    takes: list[Take],
    conversion: np.ndarray,
    *,
    skip: set[int] | frozenset = frozenset(),
    thresholds: Thresholds = DEFAULT,
    unconverted: frozenset | set = frozenset(),
    parents: np.ndarray | None = None,
) -> list[str]:
    """Insert a helper above every file node whose local matrix needs two TRS in the
    static pose ``static (N, 4, 4)`` or in any take, and make the file exact for each
    take (see the module docstring). ``skip``: scene node indices whose node matrix
    engines ignore; ``unconverted``, ``parents``: as
    :func:`.animated_gltf.add_animated_helpers`. Returns the labels of the nodes that
    got a helper (loops only over those and over the takes)."""
    index = {i: j for i, j in node_index(gltf, keys, parents).items() if i not in skip}
    if not index:
        return []
    scene_nodes = np.fromiter(index.keys(), dtype=np.int64)
    file_nodes = np.fromiter(index.values(), dtype=np.int64)
    static_local, static_parent, extent = _locals(
        gltf, keys, static[None], [0.0], None, conversion, scene_nodes, file_nodes, unconverted
    )
    scale = check_scale(static[scene_nodes])
    split = needs_split(static_local, static_parent, thresholds, extent, scale)
    per_take = []
    for take in takes:
        local, parent_world, extent = _locals(
            gltf, keys, take.world, take.times, take.animation, conversion, scene_nodes, file_nodes, unconverted
        )
        split |= needs_split(local, parent_world, thresholds, extent, check_scale(take.world[:, scene_nodes]))
        moving = np.isin(file_nodes, list(animated_nodes(gltf, take.animation)))
        per_take.append((take, local, moving))
    chosen = np.flatnonzero(split)
    if not len(chosen):
        return []
    outer, inner = continuous_split(static_local[:, chosen])
    helpers = {}
    labels = []
    parents = gltf.parents()
    for k, m in enumerate(chosen):
        i, j = int(scene_nodes[m]), int(file_nodes[m])
        name = f"{keys[i][1] or keys[i][0]} (shear helper)"
        helpers[m] = gltf.insert_parent(j, outer[0, k], inner[0, k], name, parent=int(parents[j]))
        labels.append(node_label(*keys[i]))
    for take, local, moving in per_take:
        animate = chosen[moving[chosen]]
        if not len(animate):
            continue
        t_outer, t_inner = continuous_split(local[:, animate])
        times_acc = append_accessor(gltf, np.asarray(take.times, dtype=np.float64)[:, None], with_bounds=True)
        one_key: list = []
        drop_channels(gltf, {int(file_nodes[m]) for m in animate}, take.animation)
        for k, m in enumerate(animate):
            add_channels(gltf, helpers[m], times_acc, t_outer[:, k], take.animation, one_key)
            add_channels(gltf, int(file_nodes[m]), times_acc, t_inner[:, k], take.animation, one_key)
    return labels


def take_errors(
    gltf: Gltf,
    keys: list[tuple[str, str]],
    takes: list[Take],
    conversion: np.ndarray,
    skip: set[int] | frozenset = frozenset(),
    unconverted: frozenset | set = frozenset(),
    parents: np.ndarray | None = None,
) -> dict[str, FrameError]:
    """Each take's animation played alone, composed as an engine does at the take's
    times, against Blender with that take's action alone: animation name -> error
    (nodes in ``skip`` and in the take's ``held`` left out; ``unconverted``,
    ``parents``: as :func:`.animated_gltf.animated_error`)."""
    return {
        take.name: animated_error(
            gltf,
            keys,
            take.world,
            take.times,
            conversion,
            frozenset(skip) | take.held,
            animation=take.animation,
            unconverted=unconverted,
            parents=parents,
        )
        for take in takes
    }


def worst(errors: dict[str, FrameError]) -> FrameError | None:
    """The take with the largest relative error, a non-finite one first (None without takes)."""
    return max(errors.values(), key=lambda e: (not np.isfinite(e.relative), np.nan_to_num(e.relative)), default=None)
