"""glTF animation channels, Blender-free: read them, sample them as an engine does, write
new ones, and compose a file's node matrices at any time.

The sampler follows the glTF 2.0 specification (section 3.11, appendix C): times
clamp to the first and last key; ``STEP`` holds the previous key; ``LINEAR`` lerps
translation and scale and slerps rotation (shortest arc); ``CUBICSPLINE`` is the
Hermite spline of (in-tangent, value, out-tangent) triples with tangents scaled by the
key interval, rotations normalised after. Values are node TRS: translation ``(3,)``,
rotation ``(4,)`` stored ``x, y, z, w`` in the file (returned here as ``w, x, y, z``),
scale ``(3,)``. Times are seconds.
"""

from __future__ import annotations

import numpy as np

from .... import core
from ..errors import GltfError
from .gltf_file import Gltf, node_matrix

_COMPONENTS = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
_NORMALIZE = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
PATHS = ("translation", "rotation", "scale")


def read_accessor(gltf: Gltf, index: int) -> np.ndarray:
    """Accessor ``index`` of a GLB's binary chunk as float64 ``(count, width)``
    (normalised integers mapped to [-1, 1] / [0, 1] as the specification says)."""
    acc = gltf.doc["accessors"][index]
    view = gltf.doc["bufferViews"][acc["bufferView"]]
    if view.get("buffer", 0) != 0 or gltf.binary is None:
        raise GltfError("animation data outside the file's first buffer is not supported")
    dtype = np.dtype(_COMPONENTS[acc["componentType"]]).newbyteorder("<")
    width = _WIDTH[acc["type"]]
    count = acc["count"]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    stride = view.get("byteStride", 0) or dtype.itemsize * width
    if stride == dtype.itemsize * width and start % dtype.itemsize == 0:  # tightly packed: one read
        out = np.frombuffer(gltf.binary, dtype=dtype, count=count * width, offset=start).reshape(count, width)
        out = out.astype(np.float64)
    else:
        size = stride * (count - 1) + dtype.itemsize * width
        raw = np.frombuffer(gltf.binary, dtype=np.uint8, count=size, offset=start)
        rows = np.lib.stride_tricks.as_strided(raw, (count, dtype.itemsize * width), (stride, 1)).copy()
        out = rows.view(dtype).reshape(count, width).astype(np.float64)
    if acc.get("normalized") and acc["componentType"] in _NORMALIZE:
        out = np.maximum(out / _NORMALIZE[acc["componentType"]], -1.0)
    return out


def append_accessor(gltf: Gltf, values: np.ndarray, with_bounds: bool = False) -> int:
    """Append float32 ``values (count, width)`` to the GLB's binary chunk as a new
    bufferView and accessor (``min``/``max`` with ``with_bounds``, required for
    animation inputs). Returns the accessor's index."""
    values = np.ascontiguousarray(values, dtype="<f4")
    if values.ndim == 1:
        values = values[:, None]
    width = values.shape[1]
    kind = {v: k for k, v in _WIDTH.items()}[width]
    binary = gltf.binary if isinstance(gltf.binary, bytearray) else bytearray(gltf.binary or b"")
    try:  # grown in place: appending many accessors stays linear
        binary.extend(b"\0" * (-len(binary) % 4))
    except BufferError:  # a live view of the bytes: copy once
        binary = bytearray(binary) + b"\0" * (-len(binary) % 4)
    doc = gltf.doc
    views = doc.setdefault("bufferViews", [])
    views.append({"buffer": 0, "byteOffset": len(binary), "byteLength": values.nbytes})
    try:
        binary.extend(values.tobytes())
    except BufferError:
        binary = bytearray(binary) + values.tobytes()
    gltf.binary = binary
    buffers = doc.setdefault("buffers", [{}])
    buffers[0]["byteLength"] = len(binary)
    accessor = {"bufferView": len(views) - 1, "componentType": 5126, "count": len(values), "type": kind}
    if with_bounds:
        accessor["min"] = [float(v) for v in values.min(axis=0)]
        accessor["max"] = [float(v) for v in values.max(axis=0)]
    accessors = doc.setdefault("accessors", [])
    accessors.append(accessor)
    return len(accessors) - 1


class Track:
    """One sampler: key ``times (K,)``, ``values (K, C)`` (``(K, 3, C)`` for
    CUBICSPLINE: in-tangent, value, out-tangent), ``interpolation``, ``path``."""

    def __init__(self, times, values, interpolation: str, path: str):
        self.times = np.asarray(times, dtype=np.float64).reshape(-1)
        values = np.asarray(values, dtype=np.float64)
        k = len(self.times)
        if interpolation == "CUBICSPLINE":
            values = values.reshape(k, 3, -1)
        else:
            values = values.reshape(k, -1)
        if path == "rotation":  # file order x, y, z, w -> w, x, y, z
            values = values[..., [3, 0, 1, 2]]
        self.values = values
        self.interpolation = interpolation
        self.path = path

    def sample(self, t) -> np.ndarray:
        """Values at times ``t (M,)`` seconds: ``(M, C)`` (rotations ``w, x, y, z``, unit)."""
        return sample_keys(self.times, self.values, self.interpolation, self.path, t)


def sample_keys(times: np.ndarray, v: np.ndarray, interpolation: str, path: str, t) -> np.ndarray:
    """Channels sharing the key ``times (K,)``: ``v (K, ..., C)`` (``(K, 3, ..., C)`` for
    CUBICSPLINE: in-tangent, value, out-tangent; rotations ``w, x, y, z``) at times
    ``t (M,)`` seconds: ``(M, ..., C)`` (rotations unit)."""
    t = np.asarray(t, dtype=np.float64).reshape(-1)
    k = len(times)
    key = v[:, 1] if interpolation == "CUBICSPLINE" else v
    if k == 1:
        out = np.broadcast_to(key[0], (len(t), *key.shape[1:])).copy()
    elif interpolation == "STEP":
        out = key[np.clip(np.searchsorted(times, t, side="right") - 1, 0, k - 1)]
    else:
        i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, k - 2)
        dt = times[i + 1] - times[i]
        lift = (len(t),) + (1,) * (key.ndim - 1)  # (M, 1, ..., 1): broadcast over the channels
        s = np.clip((t - times[i]) / np.where(dt > 0, dt, 1.0), 0.0, 1.0).reshape(lift)
        if interpolation == "CUBICSPLINE":
            s2, s3, dt = s * s, s * s * s, dt.reshape(lift)
            out = (
                (2 * s3 - 3 * s2 + 1) * key[i]
                + (s3 - 2 * s2 + s) * dt * v[i, 2]
                + (-2 * s3 + 3 * s2) * key[i + 1]
                + (s3 - s2) * dt * v[i + 1, 0]
            )
        elif path == "rotation":
            out = slerp(key[i], key[i + 1], s)
        else:
            out = (1 - s) * key[i] + s * key[i + 1]
    if path == "rotation":
        out = out / np.linalg.norm(out, axis=-1, keepdims=True)
    return out


def slerp(a: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Shortest-arc spherical interpolation of unit quaternions ``(M, ..., 4)`` at ``s``
    broadcast to ``(M, ..., 1)``."""
    d = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    angle = np.arccos(np.clip(np.abs(d), -1.0, 1.0))
    sin = np.sin(angle)
    small = sin < 1e-9
    safe = np.where(small, 1.0, sin)
    wa = np.where(small, 1 - s, np.sin((1 - s) * angle) / safe)
    wb = np.where(small, s, np.sin(s * angle) / safe)
    return wa * a + wb * b


def _animations(gltf: Gltf, animation: int | None) -> list[dict]:
    anims = gltf.doc.get("animations", [])
    return anims if animation is None else anims[animation : animation + 1]


def tracks(gltf: Gltf, animation: int | None = None) -> dict[tuple[int, str], Track]:
    """``(node, path) -> Track`` of one animation, or of all of them (``None``: the
    exporter's Scene mode splits one timeline into an animation per object). Weights
    channels are left out."""
    out = {}
    for node, path, sampler in _channels(gltf, animation):
        times = read_accessor(gltf, sampler["input"])
        values = read_accessor(gltf, sampler["output"])
        out[(node, path)] = Track(times, values, sampler.get("interpolation", "LINEAR"), path)
    return out


def _channels(gltf: Gltf, animation: int | None):
    """``(node, path, sampler)`` of every translation, rotation and scale channel of one
    animation, or of all of them, in the file's order."""
    for anim in _animations(gltf, animation):
        for ch in anim.get("channels", []):
            target = ch.get("target", {})
            if target.get("path") in PATHS and "node" in target:
                yield target["node"], target["path"], anim["samplers"][ch["sampler"]]


def _channel_groups(gltf: Gltf, animation: int | None) -> dict[tuple, list[tuple[int, int]]]:
    """The channels :func:`tracks` reads (the last one of a node and path wins), grouped
    by ``(path, interpolation, input accessor)``: ``[(node, output accessor)]`` each,
    sampled together (an exporter shares one key-time accessor between channels)."""
    last: dict[tuple[int, str], tuple] = {}
    for node, path, sampler in _channels(gltf, animation):
        group = (path, sampler.get("interpolation", "LINEAR"), sampler["input"])
        last[(node, path)] = (group, sampler["output"])
    out: dict[tuple, list[tuple[int, int]]] = {}
    for (node, _path), (group, output) in last.items():
        out.setdefault(group, []).append((node, output))
    return out


def key_times(gltf: Gltf, animation: int | None = None) -> np.ndarray:
    """Every key time of every animation channel (or of animation ``animation``'s),
    sorted, once ``(K,)`` seconds."""
    inputs = {
        anim["samplers"][ch["sampler"]]["input"]
        for anim in _animations(gltf, animation)
        for ch in anim.get("channels", [])
        if ch.get("target", {}).get("path") in PATHS and "node" in ch.get("target", {})
    }  # read each key-time accessor once (the exporter shares them between channels)
    found = [read_accessor(gltf, index).reshape(-1) for index in sorted(inputs)]
    return np.unique(np.concatenate(found)) if found else np.zeros(0)


def local_matrices_at(gltf: Gltf, times, animation: int | None = None) -> np.ndarray:
    """Every node's local matrix at ``times (M,)`` seconds, ``(M, nodes, 4, 4)``: the
    animation's channels where there are some, the node's own TRS / matrix elsewhere."""
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    m, n = len(times), len(gltf.nodes)
    nodes = gltf.nodes
    fields = {
        "translation": np.array([nd.get("translation", [0.0, 0.0, 0.0]) for nd in nodes], dtype=np.float64),
        "rotation": np.array([nd.get("rotation", [0.0, 0.0, 0.0, 1.0]) for nd in nodes], dtype=np.float64),
        "scale": np.array([nd.get("scale", [1.0, 1.0, 1.0]) for nd in nodes], dtype=np.float64),
    }
    fields = {k: np.repeat(v.reshape(1, n, -1), m, axis=0) for k, v in fields.items()}
    fields["rotation"] = fields["rotation"][..., [3, 0, 1, 2]]  # file x, y, z, w -> w, x, y, z
    for (path, interpolation, first), group in _channel_groups(gltf, animation).items():
        nodes_in, outputs = zip(*group, strict=True)
        values = np.stack([read_accessor(gltf, out) for out in outputs], axis=1)  # (K or 3K, G, C)
        key_t = read_accessor(gltf, first).reshape(-1)
        if interpolation == "CUBICSPLINE":
            values = values.reshape(len(key_t), 3, *values.shape[1:])
        if path == "rotation":
            values = values[..., [3, 0, 1, 2]]
        fields[path][:, list(nodes_in)] = sample_keys(key_t, values, interpolation, path, times)
    out = core.TRS(fields["translation"], fields["rotation"], fields["scale"]).to_matrix()
    for j, node in enumerate(nodes):
        if "matrix" in node:  # glTF: a node with a matrix is never animated
            out[:, j] = node_matrix(node)
    return out


def world_matrices_at(gltf: Gltf, times, animation: int | None = None) -> np.ndarray:
    """Every node's world matrix at ``times (M,)`` seconds ``(M, nodes, 4, 4)``, composed
    as a viewer does (``parent @ local`` from the scene roots down)."""
    local = local_matrices_at(gltf, times, animation)
    m, n = local.shape[:2]
    tiled = core.Hierarchy(gltf.parents()).tile(m)
    return tiled.world_matrices(local.reshape(-1, 4, 4)).reshape(m, n, 4, 4)


def animated_nodes(gltf: Gltf, animation: int) -> set[int]:
    """File nodes whose translation, rotation or scale animation ``animation`` animates."""
    targets = (ch.get("target", {}) for anim in _animations(gltf, animation) for ch in anim.get("channels", []))
    return {t["node"] for t in targets if "node" in t and t.get("path") in PATHS}


def owners(gltf: Gltf) -> dict[int, int]:
    """Node -> index of the first animation that animates it, for every animated node,
    in one pass (an animation is created when the file has none)."""
    anims = gltf.doc.setdefault("animations", [])
    out: dict[int, int] = {}
    for a, anim in enumerate(anims):
        for ch in anim.get("channels", []):
            node = ch.get("target", {}).get("node")
            if node is not None:
                out.setdefault(node, a)
    if not anims:
        anims.append({"name": "shear exact", "channels": [], "samplers": []})
    return out


def drop_channels(gltf: Gltf, nodes: int | set[int], animation: int | None = None) -> None:
    """Remove the translation / rotation / scale channels of ``nodes`` (one or a set)
    in every animation (or in animation ``animation`` only), in one pass; their
    samplers stay, unused: the file remains valid."""
    gone = {nodes} if isinstance(nodes, int) else set(nodes)
    for anim in _animations(gltf, animation):
        anim["channels"] = [
            ch
            for ch in anim.get("channels", [])
            if not (ch.get("target", {}).get("node") in gone and ch["target"].get("path") in PATHS)
        ]


#: A channel whose values over the keys span at most this times max(1, its largest
#: value) is written as one key (the middle of the span): two single-precision
#: epsilons, below what the file's float32 keys hold anyway.
STILL = 2.0 * float(np.finfo(np.float32).eps)


def still_value(values: np.ndarray) -> np.ndarray | None:
    """The one value ``values (K, C)`` stay at over the keys (the middle of their span,
    ``(C,)``) when they span at most :data:`STILL` of max(1, the largest); else None."""
    values = np.asarray(values, dtype=np.float64)
    low, high = values.min(axis=0), values.max(axis=0)
    if not np.all(high - low <= STILL * max(1.0, float(np.abs(values).max()))):
        return None
    return (low + high) / 2.0


def add_channels(
    gltf: Gltf,
    node: int,
    times_accessor: int,
    trs: core.TRS,
    animation: int,
    one_key: list | None = None,
) -> None:
    """Animate ``node`` in animation ``animation`` with LINEAR channels of ``trs (K,)``
    at the key times of ``times_accessor`` (rotations written ``x, y, z, w``). The
    caller has dropped the node's own channels first (:func:`drop_channels`, for many
    nodes at once). With ``one_key`` (a list the caller keeps for the file: ``[time
    accessor of one key]`` once made, empty before), a channel that stays put over the
    keys (:func:`still_value`) gets that one key instead of K: a helper that does not
    move, a node whose shear is constant."""
    anim = gltf.doc["animations"][animation]
    anim.setdefault("samplers", [])
    anim.setdefault("channels", [])
    for path, values in (
        ("translation", trs.translation),
        ("rotation", trs.rotation[..., [1, 2, 3, 0]]),
        ("scale", trs.scale),
    ):
        times = times_accessor
        still = still_value(values) if one_key is not None and len(values) > 1 else None
        if still is not None and one_key is not None:
            if path == "rotation":
                still = still / np.linalg.norm(still)
            if not one_key:
                first = read_accessor(gltf, times_accessor)[:1]
                one_key.append(append_accessor(gltf, first, with_bounds=True))
            times, values = one_key[0], still[None]
        out = append_accessor(gltf, values)
        anim["samplers"].append({"input": times, "output": out, "interpolation": "LINEAR"})
        anim["channels"].append({"sampler": len(anim["samplers"]) - 1, "target": {"node": node, "path": path}})
