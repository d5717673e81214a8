"""Skinned meshes checked by their vertices, Blender-free: the file's vertices placed
as an engine skins them, against Blender's evaluated mesh at every exported frame.

An engine ignores a skinned mesh's node matrix: each vertex is ``sum_k w_k J_k IBM_k
v`` (glTF: the joints' world matrices ``J``, the skin's inverse bind matrices ``IBM``,
every ``JOINTS_n`` / ``WEIGHTS_n`` set, the weights normalised as three.js does; the
mesh's morph targets first, with the node's or mesh's weights or their animation
channel). A file that places every joint right can still place vertices wrong (four
influences kept of six, B-Bone segments it cannot carry, modifiers after the
Armature), so the joints' check says nothing about them.

The tolerance is :data:`VERTEX_TOLERANCE` of the mesh's size (its bounding-box
diagonal, the largest over the frames); the worst vertex is named by Blender's index.

Shapes: positions ``(T, V, 3)`` float64 in Blender's world (scene units), time first;
matrices column vectors, ``(..., 4, 4)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..animated_gltf import within_tolerance
from ..gltf_animation import read_accessor, sample_keys
from ..gltf_file import Gltf

#: A mesh passes when no vertex is further from Blender's than this share of its size.
VERTEX_TOLERANCE = 1e-5
#: Bytes of float64 a batch of gathered skinning matrices may take (frames are
#: processed a batch at a time).
_BATCH_BYTES = 32 * 2**20


class MeshError(NamedTuple):
    """One mesh's vertices read back against Blender's."""

    name: str
    relative: float  #: the worst distance over the mesh's size (NaN: non-finite values)
    distance: float  #: the worst distance, scene units
    vertex: int  #: Blender's index of the worst vertex
    frame: int  #: the exported frame of the worst distance
    size: float  #: the mesh's bounding-box diagonal, scene units
    vertices: int  #: vertices compared
    cause: str = ""  #: what may explain the worst vertex (filled by the scene layer)

    @property
    def exact(self) -> bool:
        return within_tolerance(self.relative, VERTEX_TOLERANCE)


class SkinCheck(NamedTuple):
    """Every skinned mesh of a read-back: its error, and the meshes left out and why."""

    meshes: dict  #: mesh name -> MeshError
    not_checked: list  #: (mesh name, why)

    def worst(self) -> MeshError | None:
        """The mesh furthest off relative to its size (a non-finite one first)."""
        return max(
            self.meshes.values(), key=lambda e: (not np.isfinite(e.relative), np.nan_to_num(e.relative)), default=None
        )

    @property
    def exact(self) -> bool:
        return all(e.exact for e in self.meshes.values())

    def summary(self) -> str:
        """One phrase for a report line: how many meshes, and the worst one when it is
        over the tolerance ('' without meshes)."""
        worst = self.worst()
        if worst is None:
            return ""
        if self.exact:
            return f"{len(self.meshes)} skinned mesh(es) exact (worst {worst.relative:.1e} of its size)"
        cause = f": {worst.cause.split(';')[0]}" if worst.cause else ""
        return (
            f"skinned '{worst.name}' vertex {worst.vertex} at frame {worst.frame} off by {worst.relative:.1e} of "
            f"its size (over {VERTEX_TOLERANCE:g}){cause}"
        )


def mesh_error(
    name: str, file_placed: np.ndarray, blender: np.ndarray, frames, candidates: np.ndarray | None = None
) -> MeshError:
    """The file's vertices ``file_placed (T, Vf, 3)`` against Blender's ``blender (T, V,
    3)`` at ``frames (T,)``. ``candidates (Vf, G)``: the Blender vertices each file
    vertex may be (:func:`match_vertices`: several where vertices coincide at rest, -1
    padding; None: file vertex ``i`` is Blender's ``i``); the nearest of them counts.
    Frames are compared a batch at a time."""
    blender = np.asarray(blender, dtype=np.float64)
    t_count = len(blender)
    if candidates is None:
        candidates = np.arange(file_placed.shape[1])[:, None]
    valid = candidates >= 0
    safe = np.where(valid, candidates, 0)
    lo = np.nanmin(blender, axis=1) if blender.size else np.zeros((t_count, 3))
    hi = np.nanmax(blender, axis=1) if blender.size else np.zeros((t_count, 3))
    size = float(np.max(np.linalg.norm(hi - lo, axis=-1))) if t_count else 0.0
    worst = (-1.0, 0, 0)  # distance, file vertex, frame
    chosen = 0
    step = max(1, _BATCH_BYTES // max(1, 24 * candidates.size))
    for t0 in range(0, t_count, step):
        with np.errstate(invalid="ignore"):
            diff = file_placed[t0 : t0 + step, :, None] - blender[t0 : t0 + step][:, safe]  # (t, Vf, G, 3)
            dist = np.sqrt((diff * diff).sum(axis=-1))
        dist = np.where(valid[None], dist, np.inf)
        nearest = dist.min(axis=-1)  # (t, Vf)
        bad = ~np.isfinite(nearest) & valid.any(axis=-1)[None]
        nearest = np.where(valid.any(axis=-1)[None], nearest, -1.0)  # file vertices Blender has not: not compared
        if bad.any():  # NaN or infinity: reported, never passed
            t, v = (int(x) for x in np.argwhere(bad)[0])
            g = int(np.flatnonzero(valid[v])[0])
            return MeshError(name, np.nan, np.nan, int(candidates[v, g]), int(frames[t0 + t]), size, len(candidates))
        if nearest.size and float(nearest.max()) > worst[0]:
            t, v = (int(x) for x in np.unravel_index(int(np.argmax(nearest)), nearest.shape))
            worst = (float(nearest[t, v]), v, t0 + t)
            chosen = int(candidates[v, int(np.argmin(dist[t, v]))])
    distance = max(worst[0], 0.0)
    relative = distance / size if size > 0 else (0.0 if distance == 0 else np.inf)
    compared = int(valid.any(axis=-1).sum())
    return MeshError(name, relative, distance, chosen, int(frames[worst[2]]) if t_count else 0, size, compared)


def combine(errors: list[MeshError]) -> MeshError:
    """One mesh's errors over batches of frames (:func:`mesh_error` on each) as one: the
    worst distance (a non-finite one first), over the largest size of the batches."""
    size = max(e.size for e in errors)
    worst = max(errors, key=lambda e: (not np.isfinite(e.distance), np.nan_to_num(e.distance)))
    if not np.isfinite(worst.distance):
        return worst._replace(size=size)
    relative = worst.distance / size if size > 0 else (0.0 if worst.distance == 0 else np.inf)
    return worst._replace(relative=relative, size=size)


def frame_batches(t_count: int, vertices: int, width: int = 1) -> list[slice]:
    """Slices of ``t_count`` frames such that a batch's ``(frames, vertices, width, 3)``
    float64 arrays stay near :data:`_BATCH_BYTES` (long ranges of large meshes are
    compared a batch at a time)."""
    step = max(1, _BATCH_BYTES // max(1, 24 * vertices * (width + 2)))
    return [slice(t0, min(t0 + step, t_count)) for t0 in range(0, t_count, step)]


def match_vertices(file_rest: np.ndarray, blender_rest: np.ndarray) -> np.ndarray:
    """The Blender vertices ``(Vf, G)`` (-1 padding) each file vertex is, by position
    at rest: ``file_rest (Vf, 3)`` and ``blender_rest (V, 3)`` in the same space (the
    file's float32 values of Blender's float32 vertices, transformed; they agree to
    float32 round-off). Positions fall into cells of :func:`match_quantum` (eight grids
    offset by half a cell on each axis, so that two points closer than a quarter cell
    share a cell in one of them); the Blender vertices in a file vertex's cell are its
    candidates (vertices that coincide at rest: all of them). A file vertex in no
    shared cell has none."""
    f = np.asarray(file_rest, dtype=np.float64)
    b = np.asarray(blender_rest, dtype=np.float64)
    out = np.full((len(f), 1), -1, dtype=np.int64)
    if not len(f) or not len(b):
        return out
    q = match_quantum(b)
    for offset in np.array(np.meshgrid([0.0, 0.5], [0.0, 0.5], [0.0, 0.5], indexing="ij")).reshape(3, -1).T:
        todo = np.flatnonzero(out[:, 0] < 0)
        if not len(todo):
            break
        cells = np.floor(np.concatenate([b, f[todo]]) / q + offset).astype(np.int64)
        _rows, inverse = np.unique(cells, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        key_b, key_f = inverse[: len(b)], inverse[len(b) :]
        order = np.argsort(key_b, kind="stable")
        sorted_keys = key_b[order]
        start = np.searchsorted(sorted_keys, key_f, side="left")
        count = np.searchsorted(sorted_keys, key_f, side="right") - start
        width = int(count.max())
        if width > out.shape[1]:
            out = np.concatenate([out, np.full((len(f), width - out.shape[1]), -1, dtype=np.int64)], axis=1)
        for g in range(width):
            has = count > g
            out[todo[has], g] = order[start[has] + g]
    return out


def match_quantum(points: np.ndarray) -> float:
    """The cell size :func:`match_vertices` matches ``points (V, 3)`` with: 1e-5 of
    their bounding-box diagonal, at least 64 float32 epsilons of their largest
    coordinate (round-off far from the origin), never zero."""
    points = np.asarray(points, dtype=np.float64)
    size = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0))) if len(points) else 0.0
    far = float(np.abs(points).max()) if len(points) else 0.0
    return max(1e-5 * size, 64 * float(np.finfo(np.float32).eps) * far, 1e-30)


def _joint_matrices(gltf: Gltf, skin: dict, worlds: np.ndarray) -> np.ndarray:
    """``J @ IBM`` of every joint of ``skin`` at every time: ``(T, J, 3, 4)``."""
    joints = np.asarray(skin.get("joints", []), dtype=np.int64)
    if "inverseBindMatrices" in skin:
        ibm = read_accessor(gltf, skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1)
    else:
        ibm = np.broadcast_to(np.eye(4), (len(joints), 4, 4))
    return (worlds[:, joints] @ ibm)[:, :, :3]


def influences(gltf: Gltf, primitive: dict, sets: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every ``JOINTS_n`` / ``WEIGHTS_n`` set of ``primitive`` (the first ``sets`` when
    given: what an engine reading only those sees): joints ``(V, 4n)`` int, weights
    ``(V, 4n)`` normalised to sum 1 per vertex (as three.js normalises them; vertices
    without weight keep zeros)."""
    attributes = primitive.get("attributes", {})
    joints, weights = [], []
    n = 0
    while f"JOINTS_{n}" in attributes and f"WEIGHTS_{n}" in attributes and (sets is None or n < sets):
        joints.append(read_accessor(gltf, attributes[f"JOINTS_{n}"]).astype(np.int64))
        weights.append(read_accessor(gltf, attributes[f"WEIGHTS_{n}"]))
        n += 1
    if not n:
        return np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0))
    j, w = np.concatenate(joints, axis=1), np.concatenate(weights, axis=1)
    total = w.sum(axis=1, keepdims=True)
    return j, np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)


def influence_sets(primitive: dict) -> int:
    """How many ``JOINTS_n`` / ``WEIGHTS_n`` sets ``primitive`` holds."""
    attributes = primitive.get("attributes", {})
    n = 0
    while f"JOINTS_{n}" in attributes and f"WEIGHTS_{n}" in attributes:
        n += 1
    return n


def morph_weights(gltf: Gltf, node: int, times) -> np.ndarray:
    """``(T, M)`` the morph target weights of ``node``'s mesh at ``times``: its
    ``weights`` animation channel (every animation's, the last wins), else the node's
    or the mesh's ``weights``, else zeros."""
    doc = gltf.doc
    mesh = doc["meshes"][doc["nodes"][node]["mesh"]]
    m = max((len(p.get("targets", [])) for p in mesh.get("primitives", [])), default=0)
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    static = doc["nodes"][node].get("weights", mesh.get("weights", [0.0] * m))
    out = np.broadcast_to(np.asarray(static, dtype=np.float64)[:m], (len(times), m)).copy()
    for anim in doc.get("animations", []):
        for ch in anim.get("channels", []):
            target = ch.get("target", {})
            if target.get("node") == node and target.get("path") == "weights" and m:
                sampler = anim["samplers"][ch["sampler"]]
                key_t = read_accessor(gltf, sampler["input"]).reshape(-1)
                values = read_accessor(gltf, sampler["output"]).reshape(-1)
                interpolation = sampler.get("interpolation", "LINEAR")
                shape = (len(key_t), 3, m) if interpolation == "CUBICSPLINE" else (len(key_t), m)
                out = sample_keys(key_t, values.reshape(shape), interpolation, "weights", times)
    return out


def skinned_vertices(
    gltf: Gltf, node: int, worlds: np.ndarray, times, sets: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The vertices of the skinned mesh of file node ``node`` as an engine places them
    with the file's node ``worlds (T, nodes, 4, 4)`` at ``times (T,)`` seconds:
    ``(placed (T, V, 3), rest (V, 3))`` in the file's axes, every primitive's vertices
    one after the other (``rest``: the POSITION the file holds, float32 values).
    ``sets``: only the first that many influence sets (an engine reading fewer)."""
    doc = gltf.doc
    nd = doc["nodes"][node]
    skin = doc["skins"][nd["skin"]]
    mats = _joint_matrices(gltf, skin, np.asarray(worlds, dtype=np.float64))  # (T, J, 3, 4)
    weights_t = morph_weights(gltf, node, times)
    placed, rests = [], []
    for prim in doc["meshes"][nd["mesh"]].get("primitives", []):
        rest = read_accessor(gltf, prim["attributes"]["POSITION"])
        rests.append(rest)
        pos = np.broadcast_to(rest, (len(mats), *rest.shape))
        targets = [t for t in prim.get("targets", []) if "POSITION" in t]
        if targets and weights_t.size and np.any(weights_t):
            deltas = np.stack([read_accessor(gltf, t["POSITION"]) for t in targets])  # (M, V, 3)
            pos = rest[None] + np.einsum("tm,mvi->tvi", weights_t[:, : len(targets)], deltas)
        joints, weights = influences(gltf, prim, sets)
        out = _blend(mats, joints, weights, pos, morphed=pos.ndim == 3 and pos.strides[0] != 0)
        unweighted = ~weights.any(axis=1) if weights.size else np.ones(len(rest), dtype=bool)
        if unweighted.any():  # no influence: the glTF specification leaves them undefined; engines keep the mesh's
            node_world = worlds[:, node]
            out[:, unweighted] = (
                np.einsum("tij,tvj->tvi", node_world[:, :3, :3], pos[:, unweighted]) + node_world[:, None, :3, 3]
            )
        placed.append(out)
    if not placed:
        return np.zeros((len(mats), 0, 3)), np.zeros((0, 3))
    return np.concatenate(placed, axis=1), np.concatenate(rests, axis=0)


def _blend(mats: np.ndarray, joints: np.ndarray, weights: np.ndarray, pos: np.ndarray, morphed: bool) -> np.ndarray:
    """``sum_k w_k M_jk v`` for every vertex: ``mats (T, J, 3, 4)``, ``joints, weights
    (V, K)``, positions ``pos (T, V, 3)`` (the same at every time unless ``morphed``).
    The influences with a weight are grouped by joint (one matrix product per joint and
    batch of frames), then summed per vertex in order: ``(T, V, 3)``."""
    t_count, count = len(mats), weights.shape[0]
    out = np.zeros((t_count, count, 3))
    vertex, slot = np.nonzero(weights > 0)  # vertex-major: each vertex's influences together
    if not len(vertex):
        return out
    joint, weight = joints[vertex, slot], weights[vertex, slot]
    starts = np.flatnonzero(np.r_[True, vertex[1:] != vertex[:-1]])
    by_joint = np.argsort(joint, kind="stable")
    bounds = np.flatnonzero(np.r_[True, joint[by_joint][1:] != joint[by_joint][:-1], True])
    step = max(1, _BATCH_BYTES // max(1, 24 * len(vertex)))
    for t0 in range(0, t_count, step):
        batch = slice(t0, t0 + step)
        part = np.empty((len(mats[batch]), len(vertex), 3))
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            rows = by_joint[a:b]
            m = mats[batch, joint[rows[0]]]  # (t, 3, 4)
            if morphed:
                p = pos[batch][:, vertex[rows]]  # (t, n, 3)
                part[:, rows] = np.einsum("tij,tnj->tni", m[..., :3], p) + m[:, None, :, 3]
            else:
                p = pos[0, vertex[rows]]  # (n, 3)
                part[:, rows] = (m[..., :3] @ p.T).transpose(0, 2, 1) + m[:, None, :, 3]
        part *= weight[None, :, None]
        out[batch, vertex[starts]] = np.add.reduceat(part, starts, axis=1)
    return out


def skinned_nodes(gltf: Gltf) -> dict[str, int]:
    """Mesh object name -> file node of every node with a mesh and a skin (the first
    node of a name)."""
    out: dict[str, int] = {}
    for k, node in enumerate(gltf.nodes):
        if "mesh" in node and "skin" in node:
            out.setdefault(node.get("name", ""), k)
    return out
