"""An animated glTF made exact at every frame, and its check, Blender-free.

Input: a file written by Blender's glTF exporter (one animation over the frames),
the scene's node keys and Blender's world matrices ``world (T, N, 4, 4)`` at the
frames' times ``(T,)`` seconds. Each file node's local matrix that Blender's world
matrices imply is ``inv(G_parent) @ G_node`` with ``G = C @ world @ F`` (the exporter's
axis conversion ``C`` and node frame ``F``, see :func:`.gltf_check.gltf_frames`).
A node whose local matrix needs more than one TRS at any frame (dropping its shear
would move it by more than :data:`SPLIT_TOLERANCE` relative, or its shear exceeds the
threshold) gets a helper node above it; both are animated with the continuous exact
split (:func:`.animated_split.continuous_split`) at every frame. Every other node keeps
exactly what Blender's exporter wrote.

The check composes the file as an engine does (channels sampled at the frames' times,
``parent @ local``) and compares with ``C @ world @ F``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .... import core
from ..errors import ExportError
from ..nodes import node_label
from ..thresholds import DEFAULT, LOCAL_NOISE_FACTOR, LOCAL_SHEAR_FLOOR_DEG, Thresholds
from .animated_split import continuous_split, trs_error
from .gltf_animation import add_channels, append_accessor, drop_channels, owners, world_matrices_at
from .gltf_check import node_index
from .gltf_file import Gltf

#: Relative error of a one-TRS local matrix above which a node gets a helper (a tenth
#: of :data:`CHECK_TOLERANCE`: what remains is float32 storage).
SPLIT_TOLERANCE = 1e-6
#: The self-check's limit: relative error of the file against Blender at every frame.
CHECK_TOLERANCE = 1e-5


def check_scale(world: np.ndarray) -> float:
    """The scale the read-back divides by: max(1, the largest entry of ``world``)."""
    return max(1.0, float(np.abs(world).max())) if np.size(world) else 1.0


def within_tolerance(relative: float, tolerance: float = CHECK_TOLERANCE) -> bool:
    """Whether a read-back's relative error passes: at most ``tolerance``; NaN and
    infinity never pass (a file or scene holding non-finite values is not exact)."""
    return bool(np.isfinite(relative) and relative <= tolerance)


def worst_label(per_node: dict) -> str:
    """The label of ``per_node``'s (label -> error) worst node: a non-finite error
    first, else the largest; '-' when empty."""
    if not per_node:
        return "-"
    return max(per_node, key=lambda k: (not np.isfinite(per_node[k]), np.nan_to_num(per_node[k], nan=0.0)))


def node_frames(
    keys: list[tuple[str, str]], conversion: np.ndarray, unconverted: frozenset | set = frozenset()
) -> np.ndarray:
    """``F (N, 4, 4)``: ``inv(C)`` for objects (their data is converted), the identity
    for bones (joints keep Blender's axes) and for the objects named in ``unconverted``
    (cameras and lights: the exporter turns their node so that they keep looking down
    their -Z axis, and compensates their children)."""
    inverse, _singular = core.affine_inverse(np.asarray(conversion, dtype=np.float64))  # no LAPACK call: cheap
    frames = np.broadcast_to(inverse, (len(keys), 4, 4)).copy()
    frames[[bool(bone) or obj in unconverted for obj, bone in keys]] = np.eye(4)
    return frames


def expected_worlds(
    keys, world: np.ndarray, conversion: np.ndarray, unconverted: frozenset | set = frozenset()
) -> np.ndarray:
    """``C @ world @ F`` ``(T, N, 4, 4)``: where an engine must put each scene node
    (``unconverted``: :func:`node_frames`)."""
    return np.asarray(conversion) @ np.asarray(world, dtype=np.float64) @ node_frames(keys, conversion, unconverted)


def parent_inverses(world: np.ndarray, parents) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(parent_world, inverse, singular)`` for nodes whose parents are ``parents
    (M,)`` (columns of ``world (T, P, 4, 4)``, -1: none): each node's parent's world
    ``(T, M, 4, 4)`` (the identity without a parent), its inverse (zeros in the 3x3 part
    where it has none) and where it has none ``(T, M)``. Each parent is inverted once,
    however many children it has (a Rigify rig's 1,088 nodes have 482 parents)."""
    parents = np.asarray(parents, dtype=np.int64)
    has = parents >= 0
    distinct, column = np.unique(parents[has], return_inverse=True)
    table = np.empty((len(world), len(distinct) + 1, 4, 4))
    table[:, 0] = np.eye(4)
    table[:, 1:] = world[:, distinct]
    inverse, singular = core.affine_inverse(table)
    at = np.zeros(len(parents), dtype=np.int64)
    at[has] = column + 1
    return table[:, at], inverse[:, at], singular[:, at]


def locals_in_file(target: np.ndarray, fp: np.ndarray, file_nodes: np.ndarray, keys) -> tuple:
    """Local matrices ``(T, M, 4, 4)`` of the file nodes ``file_nodes (M,)`` whose
    parents are ``fp (M,)`` (-1: none), from the worlds ``target (T, P, 4, 4)`` of every
    file node, and their parents' worlds ``(T, M, 4, 4)``. ``keys``: the scene node of
    each (its name in the error). Raises :class:`ExportError` naming the node whose
    parent has zero scale at some key."""
    parent_world, inverse, singular = parent_inverses(target, fp)
    if singular.any():
        t, m = (int(v) for v in np.argwhere(singular)[0])
        raise ExportError(
            f"the parent of '{node_label(*keys[m])}' has zero scale at key {t}: no local transform can be written for it"
        )
    return inverse @ target[:, file_nodes], parent_world


def needs_split(
    local: np.ndarray,
    parent_world: np.ndarray,
    thresholds: Thresholds = DEFAULT,
    extent: np.ndarray | None = None,
    scale: float = 1.0,
) -> np.ndarray:
    """``(M,)`` which of the local matrices ``(T, M, 4, 4)`` (children of
    ``parent_world (T, M, 4, 4)``) need two TRS: shear that is really there at some
    frame (above :data:`..thresholds.LOCAL_SHEAR_FLOOR_DEG` and the float32 noise that
    inverting the parent's world amplifies, the inspection's own rule) and either over
    the threshold or costing more than :data:`SPLIT_TOLERANCE` relative if dropped.
    Float32 noise in deep, strongly scaled chains is left alone: splitting it adds
    nodes and, in exporters that recompose locals in float32 (FBX), error.

    With ``extent (T, M)`` (:func:`subtree_extent` of each node) only the nodes whose
    shear, dropped, moves the node or something below it by more than
    :data:`DROP_BUDGET` of ``scale`` (the check's: max(1, the largest world entry)) at
    some frame: a helper that keeps shear nothing shows is no gain, and in an FBX
    export-ready copy it can cost (an IK chain through it is solved again there).

    The rule runs only on the nodes whose columns lean by more than half the floor at
    some frame (the angles between the columns are the decomposition's shear angles,
    measured without the decomposition and the parents' singular values: a Rigify rig's
    1,088 nodes x 60 frames cost 0.3 s in full, most of them with no shear at all)."""
    out = np.zeros(local.shape[1], dtype=bool)
    if not local.size:
        return out
    leaning = np.flatnonzero(np.abs(core.shear_angles(local)).max(axis=(0, -1)) > LOCAL_SHEAR_FLOOR_DEG / 2)
    if len(leaning):
        out[leaning] = split_rule(local[:, leaning], parent_world[:, leaning], thresholds)
    if extent is not None and out.any():
        chosen = np.flatnonzero(out)
        moved = shear_moves(local[:, chosen], parent_world[:, chosen], extent[:, chosen])
        out[chosen] = ~(moved <= DROP_BUDGET * scale)  # NaN (non-finite input): kept, the check reports it
    return out


def split_rule(local: np.ndarray, parent_world: np.ndarray, thresholds: Thresholds = DEFAULT) -> np.ndarray:
    """:func:`needs_split`'s rule on every one of the local matrices ``(T, M, 4, 4)``
    (no prefilter): ``(M,)``."""
    d = core.decompose(local)
    shear = np.abs(d.shear_deg).max(axis=-1)  # (T, M)
    out = np.zeros(shear.shape[1], dtype=bool)
    some = np.flatnonzero((shear > LOCAL_SHEAR_FLOOR_DEG).any(axis=0))  # the others cannot need it
    if not len(some):
        return out
    sv = np.linalg.svd(parent_world[:, some, :3, :3], compute_uv=False)
    cond = sv[..., 0] / np.maximum(sv[..., 2], 1e-300)
    noise = np.degrees(LOCAL_NOISE_FACTOR * np.finfo(np.float32).eps * np.minimum(cond, 1e12))
    real = some[(shear[:, some] > np.maximum(LOCAL_SHEAR_FLOOR_DEG, noise)).any(axis=0)]
    lossy = trs_error(local[:, real], core.TRS(d.translation[:, real], d.rotation[:, real], d.scale[:, real]))
    out[real] = (lossy > SPLIT_TOLERANCE) | (shear[:, real].max(axis=0) > thresholds.shear_deg)
    return out


#: The share of the check's scale (max(1, the largest world entry)) the shear a node
#: keeps may move it or anything below it before it gets a helper: half the tolerance,
#: the rest left to float32 storage (as the Euler pole budget).
DROP_BUDGET = CHECK_TOLERANCE / 2


def subtree_extent(world: np.ndarray, parents) -> np.ndarray:
    """``(T, N, 2)``: the largest absolute entry of the 3x3 parts and of the
    translations of the world matrices ``world (T, N, 4, 4)`` of each node and of
    everything below it (``parents (N,)``, -1: root), one numpy step per depth level."""
    world = np.asarray(world)
    out = np.zeros((*world.shape[:2], 2))
    if world.size:
        out[..., 0] = np.abs(world[..., :3, :3]).max(axis=(-2, -1))
        out[..., 1] = np.abs(world[..., :3, 3]).max(axis=-1)
    parents = np.asarray(parents, dtype=np.int64)
    if not len(parents):
        return out
    depth = core.Hierarchy(parents).depth
    for d in range(int(depth.max()), 0, -1):
        level = np.flatnonzero(depth == d)
        by_node = out.transpose(1, 0, 2)  # (N, T, 2), a view
        np.maximum.at(by_node, parents[level], by_node[level])
    return out


def shear_moves(local: np.ndarray, parent_world: np.ndarray, extent: np.ndarray) -> np.ndarray:
    """``(M,)`` a bound, over the frames, on how far (largest matrix-entry change, scene
    units) replacing each of ``local (T, M, 4, 4)`` by its TRS (its shear dropped)
    moves the node or anything below it: the change of a world matrix ``W`` below is
    ``E @ W`` with ``E = P (TRS - L) (P L)^-1`` (``[[A, b], [0, 0]]``): its 3x3 part
    ``A R`` moves by at most the largest absolute row sum of ``A`` times the largest
    3x3 entry below, its translation ``A t + b`` by that row sum times the largest
    translation below plus ``|b|`` (``extent (T, M, 2)``: :func:`subtree_extent`). A
    node whose world has no inverse gets infinity (it cannot be told to move nothing)."""
    d = core.decompose(local)
    dropped = core.TRS(d.translation, d.rotation, d.scale).to_matrix()
    world = parent_world @ local
    inverse, singular = core.affine_inverse(world)
    with np.errstate(invalid="ignore", over="ignore"):
        e = parent_world @ (dropped - local) @ inverse
        rows = np.abs(e[..., :3, :3]).sum(axis=-1).max(axis=-1)  # (T, M)
        bound = np.maximum(rows * extent[..., 0], rows * extent[..., 1] + np.abs(e[..., :3, 3]).max(axis=-1))
    bound = np.where(singular, np.inf, bound)
    return bound.max(axis=0)


def add_animated_helpers(
    gltf: Gltf,
    keys: list[tuple[str, str]],
    world: np.ndarray,
    times: np.ndarray,
    conversion: np.ndarray,
    *,
    skip: set[int] | frozenset = frozenset(),
    thresholds: Thresholds = DEFAULT,
    unconverted: frozenset | set = frozenset(),
    parents: np.ndarray | None = None,
) -> list[str]:
    """Insert an animated helper above every file node whose local matrix needs two TRS
    at some frame, and animate both exactly at ``times (T,)``. ``skip``: scene node
    indices whose node matrix engines ignore (armature-deformed meshes);
    ``unconverted``: cameras and lights (:func:`node_frames`); ``parents``: the scene
    nodes' parents (:func:`.gltf_check.node_index`). Returns the labels of the nodes
    that got a helper (loops only over those)."""
    index = node_index(gltf, keys, parents)
    index = {i: j for i, j in index.items() if i not in skip}
    if not index:
        return []
    times = np.asarray(times, dtype=np.float64)
    scene_nodes = np.fromiter(index.keys(), dtype=np.int64)
    file_nodes = np.fromiter(index.values(), dtype=np.int64)
    parents = gltf.parents()
    fp = parents[file_nodes]
    if np.isin(fp[fp >= 0], file_nodes).all():  # every parent is a scene node: no need to sample the file
        target = np.zeros((len(times), len(parents), 4, 4))
    else:
        target = world_matrices_at(gltf, times)  # unmapped nodes: as the file animates them
    target[:, file_nodes] = expected_worlds(
        [keys[i] for i in scene_nodes], world[:, scene_nodes], conversion, unconverted
    )
    local, parent_world = locals_in_file(target, fp, file_nodes, [keys[int(i)] for i in scene_nodes])
    extent = subtree_extent(target, parents)[:, file_nodes]
    split = needs_split(local, parent_world, thresholds, extent, check_scale(world[:, scene_nodes]))
    if not split.any():
        return []
    chosen = np.flatnonzero(split)
    outer, inner = continuous_split(local[:, chosen])
    animated = len(times) > 1 or bool(gltf.doc.get("animations"))
    times_acc = append_accessor(gltf, times[:, None], with_bounds=True) if animated else -1
    one_key: list = []  # the time accessor of still channels (one key), made when first needed
    first = owners(gltf) if animated else {}
    if animated:  # every chosen node's old channels, in one pass
        drop_channels(gltf, {int(file_nodes[m]) for m in chosen})
    labels = []
    for k, m in enumerate(chosen):
        i, j = int(scene_nodes[m]), int(file_nodes[m])
        name = f"{keys[i][1] or keys[i][0]} (shear helper)"
        helper = gltf.insert_parent(j, outer[0, k], inner[0, k], name, parent=int(parents[j]))
        if animated:  # a static file stays static: the helper and the node hold the split
            anim = first.get(j, 0)
            add_channels(gltf, helper, times_acc, outer[:, k], anim, one_key)
            add_channels(gltf, j, times_acc, inner[:, k], anim, one_key)
        labels.append(node_label(*keys[i]))
    return labels


class FrameError(NamedTuple):
    relative: float  #: largest entry difference over max(1, largest entry of Blender's worlds)
    absolute: float  #: largest entry difference, scene units
    per_node: dict  #: label -> largest entry difference over the frames
    per_frame: np.ndarray  #: (T,) largest entry difference at each frame
    checked: int  #: scene nodes compared


def animated_error(
    gltf: Gltf,
    keys: list[tuple[str, str]],
    world: np.ndarray,
    times: np.ndarray,
    conversion: np.ndarray,
    skip: set[int] | frozenset = frozenset(),
    animation: int | None = None,
    unconverted: frozenset | set = frozenset(),
    parents: np.ndarray | None = None,
    file_worlds: np.ndarray | None = None,
) -> FrameError:
    """The file composed as an engine does at ``times (T,)`` seconds (every animation's
    channels, or animation ``animation``'s alone) against Blender's ``world (T, N, 4,
    4)``; scene nodes in ``skip`` and nodes the file lacks are left out
    (``unconverted``: :func:`node_frames`; ``parents``: :func:`.gltf_check.node_index`;
    ``file_worlds``: the file's node worlds at ``times`` when the caller has them,
    :func:`.gltf_animation.world_matrices_at`). A non-finite difference is NaN in every
    field it enters."""
    index = {i: j for i, j in node_index(gltf, keys, parents).items() if i not in skip}
    if not index:
        return FrameError(0.0, 0.0, {}, np.zeros(len(times)), 0)
    got = world_matrices_at(gltf, times, animation) if file_worlds is None else file_worlds
    scene_nodes = np.fromiter(index.keys(), dtype=np.int64)
    file_nodes = np.fromiter(index.values(), dtype=np.int64)
    expected = expected_worlds([keys[i] for i in scene_nodes], world[:, scene_nodes], conversion, unconverted)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, reported as such
        diff = np.abs(got[:, file_nodes] - expected).max(axis=(-2, -1))  # (T, M)
    scale = max(1.0, float(np.abs(world[:, scene_nodes]).max()))
    per_node = {node_label(*keys[i]): float(d) for i, d in zip(scene_nodes, diff.max(axis=0), strict=True)}
    absolute = float(diff.max())
    return FrameError(absolute / scale, absolute, per_node, diff.max(axis=1), len(scene_nodes))
