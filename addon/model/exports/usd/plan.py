"""What makes a USD file Blender's exporter wrote exact, and how it is checked:
Blender-free and pxr-free (numpy and the core). :mod:`.stage` applies it to the
stage in a usd-core process; :mod:`.check` compares what that process
reads back with Blender.

Objects: a prim whose local matrix (its file parent's world inverted, times Blender's
world) needs two TRS at some frame (:func:`.animated_gltf.needs_split`) gets one
matrix op (``xformOp:transform``, double precision) holding that local at every
frame; every other prim keeps the ops Blender wrote.

Skeletons (UsdSkel): an animated joint's local comes from a ``SkelAnimation`` as
translation (float3), rotation (quatf) and scale (**half3**), which cannot hold shear.
A joint whose local needs two TRS gets a helper joint above it: the helper holds the
outer TRS of the continuous exact split (:func:`.animated_split.continuous_split`), the
joint the inner rotation. UsdSkel names joints by path, so the helper's name enters the
path of the joint and of every joint below it; joint order (parents first),
``bindTransforms``, ``restTransforms``, the skin's joint indices and the animation
change together (:class:`SkeletonPlan`).

Every joint's animated local is computed from the joint's target (Blender's pose
matrix, armature space) and its parent's world *as the file composes it* (translation
and rotation rounded to float32, scale to float16: :func:`stored_trs`), one depth
level at a time: the rounding of a parent's half-precision scale is not passed on to
its children (their locals absorb it), so what is left at a joint is its own scale's
rounding, at most 2^-11 (4.9e-4) of it (:data:`HALF_FLOOR`). The locals are taken
relative to the joint's parent in the *file* (UsdSkel's topology: the nearest ancestor
path that is a joint), which also undoes the exporter's ``only_deform_bones``
misplacement (a joint whose Blender parent is not exported is written relative to that
parent, but UsdSkel composes it under the nearest exported ancestor).

Conventions: column vectors, ``(T, J, 4, 4)`` time first, quaternions ``(w, x, y, z)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..... import core
from ...thresholds import DEFAULT, Thresholds
from ..animated_gltf import CHECK_TOLERANCE, FrameError, needs_split, parent_inverses
from ..animated_split import continuous_quaternions, continuous_split

#: Objects: the read-back's limit, relative (matrix ops are double precision).
OBJECT_TOLERANCE = CHECK_TOLERANCE
#: Joints: the read-back's limit, relative to max(1, largest world entry).
JOINT_TOLERANCE = 1e-3
#: Skinned points: the read-back's limit, relative to the mesh's bounding-box diagonal.
POINT_TOLERANCE = 1e-3
#: Helpers' splits keep the previous frame's bases where the local's singular values
#: spread less than this (float32 noise around a uniform scale): the inner joint's
#: rotation absorbs what that changes, up to about this much, far under the half floor.
NEAR_UNIFORM = 1e-4
#: What sets the joints' and points' floor, said in the output.
HALF_FLOOR = "UsdSkel stores animated joint scales as half3 (float16: a scale is rounded by up to 4.9e-4 of itself)"


def stored_trs(translation: np.ndarray, rotation: np.ndarray, scale: np.ndarray):
    """``(translation, rotation, scale)`` as a ``SkelAnimation`` stores them: float32,
    float32 quaternions ``(w, x, y, z)``, float16 scales (returned as float32, float32,
    float16 arrays of the same shapes)."""
    return (
        np.asarray(translation, dtype=np.float32),
        np.asarray(rotation, dtype=np.float32),
        np.asarray(scale, dtype=np.float16),
    )


def trs_matrix(translation: np.ndarray, rotation: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``T @ R @ S`` ``(..., 4, 4)`` float64 from ``(..., 3)``, ``(..., 4)`` (w, x, y, z;
    normalised here, as UsdSkel's composition in double does) and ``(..., 3)``."""
    q = np.asarray(rotation, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    out = np.zeros(q.shape[:-1] + (4, 4))
    core.quat_to_matrix(q, np.asarray(scale, dtype=np.float64), out=out[..., :3, :3])
    out[..., :3, 3] = translation
    out[..., 3, 3] = 1.0
    return out


#: The suffix of a helper joint's name (made unique among its siblings with a number).
HELPER_SUFFIX = "_shear_helper"


def helper_tokens(tokens: list[str], old: np.ndarray, helper: np.ndarray) -> list[str]:
    """New joint paths ``(J2,)``: a helper's element put before each split joint's last
    element (the joint keeps its name; every joint below it gets the helper in its
    path). A helper is named after its joint (:data:`HELPER_SUFFIX`, numbered when a
    sibling has that name)."""
    taken = set(tokens)
    helper_name: dict[str, str] = {}  # old path of a split joint -> its helper's element
    for j in sorted({int(o) for o, h in zip(old, helper, strict=True) if h}):
        head, _, leaf = tokens[j].rpartition("/")
        name, k = f"{leaf}{HELPER_SUFFIX}", 1
        while (f"{head}/{name}" if head else name) in taken:
            k += 1
            name = f"{leaf}{HELPER_SUFFIX}{k}"
        taken.add(f"{head}/{name}" if head else name)
        helper_name[tokens[j]] = name

    def renamed(path: str) -> str:
        parts = path.split("/")
        out: list[str] = []
        for i, element in enumerate(parts):
            prefix = "/".join(parts[: i + 1])
            if prefix in helper_name:
                out.append(helper_name[prefix])
            out.append(element)
        return "/".join(out)

    new = [renamed(t) for t in tokens]
    return [new[int(o)].rpartition("/")[0] if h else new[int(o)] for o, h in zip(old, helper, strict=True)]


def depths(parents: np.ndarray) -> np.ndarray:
    """``(J,)`` depth of each node (roots 0) of the tree ``parents (J,)`` (-1: a root), in
    any order: one numpy step per level."""
    depth = np.zeros(len(parents), dtype=np.int64)
    has = parents >= 0
    for _ in range(len(parents)):
        new = np.where(has, depth[np.maximum(parents, 0)] + 1, 0)
        if np.array_equal(new, depth):
            break
        depth = new
    return depth


class SkeletonPlan(NamedTuple):
    """A skeleton with helper joints, in the file's new joint order ``(J2,)``."""

    old: np.ndarray  #: (J2,) the file joint each new joint is (or is the helper of)
    helper: np.ndarray  #: (J2,) bool: a helper joint
    parents: np.ndarray  #: (J2,) new parent index, -1 for roots
    remap: np.ndarray  #: (J,) old joint index -> its new index
    translations: np.ndarray  #: (T, J2, 3) float32
    rotations: np.ndarray  #: (T, J2, 4) float32 (w, x, y, z)
    scales: np.ndarray  #: (T, J2, 3) float16
    rest: np.ndarray  #: (J2, 4, 4) restTransforms (locals)
    bind: np.ndarray  #: (J2, 4, 4) bindTransforms (skeleton space)
    split: np.ndarray  #: (J,) bool: the old joints given a helper
    file_world: np.ndarray  #: (T, J2, 4, 4) what the file composes (the plan's own emulation)


def joints_to_split(parents: np.ndarray, target: np.ndarray, thresholds: Thresholds = DEFAULT) -> np.ndarray:
    """``(J,)`` the joints whose local (against their file parent ``parents (J,)``, at
    the targets ``(T, J, 4, 4)``) needs two TRS at some frame."""
    parent_world, inverse, _singular = parent_inverses(np.asarray(target, dtype=np.float64), parents)
    return needs_split(inverse @ target, parent_world, thresholds)


def plan_skeleton(
    parents: np.ndarray,
    reparented: np.ndarray,
    target: np.ndarray,
    bind: np.ndarray,
    rest: np.ndarray,
    thresholds: Thresholds = DEFAULT,
    split: np.ndarray | None = None,
) -> SkeletonPlan:
    """The animated skeleton that holds ``target (T, J, 4, 4)`` (Blender's pose matrices
    in skeleton space) at every frame.

    ``parents (J,)``: each joint's parent in the file's topology (UsdSkel's, -1 for
    roots; parents before children); ``reparented (J,)`` bool: the joints whose file
    parent is not their Blender parent (their ``restTransforms`` entry, written
    relative to the Blender parent, is recomputed from ``bind``); ``bind``, ``rest``
    ``(J, 4, 4)``: the file's bindTransforms and restTransforms (column vectors);
    ``split``: :func:`joints_to_split`'s answer when the caller has it."""
    parents = np.asarray(parents, dtype=np.int64)
    target = np.asarray(target, dtype=np.float64)
    j_count = target.shape[1]
    split = joints_to_split(parents, target, thresholds) if split is None else np.asarray(split, dtype=bool)
    # New order: each split joint preceded by its helper (parents stay before children).
    width = np.where(split, 2, 1)
    remap = np.cumsum(width) - 1  # the joint itself comes last
    old = np.repeat(np.arange(j_count), width)
    helper = np.zeros(len(old), dtype=bool)
    helper[remap[split] - 1] = True
    new_parents = np.where(parents[old] >= 0, remap[np.maximum(parents[old], 0)], -1)
    below = np.flatnonzero(~helper & split[old])  # joints under their own helper
    new_parents[below] = below - 1
    # Rest and bind: the helper takes the joint's rest local (relative to its file
    # parent); the joint under it rests at the identity, bound where it was.
    rest_old = np.asarray(rest, dtype=np.float64).copy()
    bind = np.asarray(bind, dtype=np.float64)
    moved = np.flatnonzero(np.asarray(reparented, dtype=bool))
    if len(moved):
        pb = np.where(parents[moved, None, None] >= 0, bind[np.maximum(parents[moved], 0)], np.eye(4))
        rest_old[moved] = core.affine_inverse(pb)[0] @ bind[moved]
    new_rest = rest_old[old]
    new_rest[below] = np.eye(4)
    new_bind = bind[old]
    translations, rotations, scales, file_world = _animate(target, old, helper, new_parents, split)
    return SkeletonPlan(
        old, helper, new_parents, remap, translations, rotations, scales, new_rest, new_bind, split, file_world
    )


def _animate(target, old, helper, parents, split):
    """Per new joint and frame the stored translation, rotation and scale, computed a
    depth level at a time from the parents' worlds as the file composes them."""
    t_count = len(target)
    n = len(old)
    translations = np.zeros((t_count, n, 3), dtype=np.float32)
    rotations = np.zeros((t_count, n, 4), dtype=np.float32)
    scales = np.ones((t_count, n, 3), dtype=np.float16)
    world = np.empty((t_count, n, 4, 4))
    depth = depths(parents)
    inner = ~helper & split[old]  # a joint under its own helper: rotation only
    for d in range(int(depth.max()) + 1 if n else 0):
        level = np.flatnonzero(depth == d)
        p = parents[level]
        parent_world = np.where((p >= 0)[None, :, None, None], world[:, np.maximum(p, 0)], np.eye(4))
        local = core.affine_inverse(parent_world)[0] @ target[:, old[level]]
        t = np.zeros((t_count, len(level), 3))
        q = np.zeros((t_count, len(level), 4))
        s = np.ones((t_count, len(level), 3))
        outer = helper[level]
        if outer.any():
            split_outer, _split_inner = continuous_split(local[:, outer], small_inner=True, hold=NEAR_UNIFORM)
            t[:, outer], q[:, outer], s[:, outer] = split_outer.translation, split_outer.rotation, split_outer.scale
        rest = ~outer
        if rest.any():
            d_rest = core.decompose(local[:, rest])
            q[:, rest] = continuous_quaternions(d_rest.rotation)
            rot_only = inner[level][rest]
            t_rest, s_rest = d_rest.translation, d_rest.scale
            t_rest[:, rot_only], s_rest[:, rot_only] = 0.0, 1.0
            t[:, rest], s[:, rest] = t_rest, s_rest
        ts, qs, ss = stored_trs(t, q, s)
        translations[:, level], rotations[:, level], scales[:, level] = ts, qs, ss
        world[:, level] = parent_world @ trs_matrix(ts, qs, ss)
    return translations, rotations, scales, world


def static_rest(parents: np.ndarray, reparented: np.ndarray, target: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """A still skeleton's ``restTransforms`` (Blender writes the pose there, as full
    matrices: shear kept) with the ``reparented (J,)`` joints' entries taken relative to
    their file parent: ``target (J, 4, 4)`` the pose in skeleton space."""
    out = np.asarray(rest, dtype=np.float64).copy()
    moved = np.flatnonzero(np.asarray(reparented, dtype=bool))
    if len(moved):
        p = np.asarray(parents)[moved]
        pw = np.where(p[:, None, None] >= 0, target[np.maximum(p, 0)], np.eye(4))
        out[moved] = core.affine_pseudo_inverse(pw)[0] @ target[moved]
    return out


def plan_objects(
    parents: np.ndarray,
    world: np.ndarray,
    outside: np.ndarray,
    written: np.ndarray,
    thresholds: Thresholds = DEFAULT,
) -> tuple[np.ndarray, np.ndarray]:
    """Which object prims get a matrix op, and its value: ``(chosen (M,), local (T, M,
    4, 4))``.

    ``parents (M,)``: each prim's parent among the M prims (-1: a prim that is no
    object of the scene, whose world is ``outside (T, M, 4, 4)``, e.g. the root prim);
    ``world``: Blender's worlds; ``written``: each prim's local as Blender's ops
    compose it. A depth level at a time, against the parent's world *as the file
    composes it*: a prim is chosen where its local needs two TRS at some frame, or
    where Blender's ops put it further from ``world`` than a tenth of
    :data:`OBJECT_TOLERANCE` (float Euler angles near their pole, errors passed down a
    chain); a chosen prim's local is ``inv(parent's file world) @ world`` (double
    precision: the prim lands on Blender's world whatever its parent's rounding)."""
    parents = np.asarray(parents, dtype=np.int64)
    t_count, m = world.shape[:2]
    chosen = np.zeros(m, dtype=bool)
    local = np.zeros_like(world)
    file_world = np.empty_like(world)
    scale = max(1.0, float(np.abs(world).max())) if world.size else 1.0
    depth = depths(parents)
    for d in range(int(depth.max()) + 1 if m else 0):
        level = np.flatnonzero(depth == d)
        p = parents[level]
        inner = (p >= 0)[None, :, None, None]
        exact_parent = np.where(inner, world[:, np.maximum(p, 0)], outside[:, level])
        file_parent = np.where(inner, file_world[:, np.maximum(p, 0)], outside[:, level])
        exact_local = core.affine_pseudo_inverse(exact_parent)[0] @ world[:, level]
        off = np.abs(file_parent @ written[:, level] - world[:, level]).max(axis=(0, -2, -1))
        pick = needs_split(exact_local, exact_parent, thresholds) | (off > OBJECT_TOLERANCE / 10 * scale)
        chosen[level] = pick
        local[:, level] = core.affine_pseudo_inverse(file_parent)[0] @ world[:, level]
        file_world[:, level] = np.where(
            pick[None, :, None, None], file_parent @ local[:, level], file_parent @ written[:, level]
        )
    return chosen, local


def matrix_error(read: np.ndarray, expected: np.ndarray, labels: list[str]) -> FrameError:
    """The file's worlds ``read (T, M, 4, 4)`` against Blender's ``expected``: largest
    entry difference over ``max(1, largest entry of Blender's)``, per node and frame."""
    if not len(labels):
        return FrameError(0.0, 0.0, {}, np.zeros(len(read)), 0)
    diff = np.abs(np.asarray(read) - np.asarray(expected)).max(axis=(-2, -1))  # (T, M)
    scale = max(1.0, float(np.abs(expected).max()))
    per_node = {label: float(v) for label, v in zip(labels, diff.max(axis=0), strict=True)}
    absolute = float(diff.max())
    return FrameError(absolute / scale, absolute, per_node, diff.max(axis=1), len(labels))


class PointError(NamedTuple):
    """A skinned mesh's points as the file skins them against Blender's evaluated mesh:
    the vertices a skeleton can carry, and apart the vertices weighted to B-Bones
    (segments > 1), which USD cannot carry (-1 and 0.0 where there are none)."""

    relative: float  #: largest distance over the mesh's bounding-box diagonal (B-Bone vertices left out)
    absolute: float  #: that distance, scene units
    vertex: int  #: the worst vertex
    frame: int  #: where it is worst (index into the exported frames)
    bbone_relative: float  #: the same over the B-Bone vertices
    bbone_absolute: float
    bbone_vertex: int
    bbone_frame: int


def _worst(dist: np.ndarray, diag: float) -> tuple[float, float, int, int]:
    if not dist.size:
        return 0.0, 0.0, -1, -1
    t, v = (int(i) for i in np.unravel_index(int(np.argmax(dist)), dist.shape))
    return float(dist[t, v]) / diag, float(dist[t, v]), v, t


def point_error(read: np.ndarray, expected: np.ndarray, bbone: np.ndarray) -> PointError:
    """``read``, ``expected`` ``(T, V, 3)`` world points; ``bbone (V,)`` bool: vertices
    weighted to a bone with B-Bone segments. The diagonal is the largest over the frames
    of the bounding box of Blender's points (at least 1e-12)."""
    expected = np.asarray(expected, dtype=np.float64)
    dist = np.linalg.norm(np.asarray(read, dtype=np.float64) - expected, axis=-1)  # (T, V)
    if not dist.size:
        return PointError(0.0, 0.0, -1, -1, 0.0, 0.0, -1, -1)
    diag = max(float(np.linalg.norm(expected.max(axis=1) - expected.min(axis=1), axis=-1).max()), 1e-12)
    mask = np.asarray(bbone, dtype=bool)
    plain = np.flatnonzero(~mask)
    on_bbones = np.flatnonzero(mask)
    rel, absolute, v, t = _worst(dist[:, plain], diag)
    b_rel, b_abs, bv, bt = _worst(dist[:, on_bbones], diag)
    return PointError(
        rel, absolute, int(plain[v]) if v >= 0 else -1, t, b_rel, b_abs, int(on_bbones[bv]) if bv >= 0 else -1, bt
    )
