"""An engine's view of a .glb, independent of the package's own glTF code: pygltflib
parses the file and its buffers, nodes are composed one by one from the scene roots
down (``parent @ local``, explicit loops), and skins place vertices with their joints
and inverse bind matrices. Animation channels are sampled with the package's
:class:`Track` (itself checked against SciPy in tests/model)."""

from __future__ import annotations

import numpy as np
import pygltflib
from hierarchy_inspector.addon.model.exports.gltf_animation import Track

_TYPES = {5126: "<f4", 5123: "<u2", 5121: "u1", 5125: "<u4"}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


class EngineView:
    """``animation``: the index of the one animation an engine plays (None: every
    animation's channels at once, as for the exporter's Scene mode)."""

    def __init__(self, path, animation: int | None = None):
        self.animation = animation
        self.gltf = pygltflib.GLTF2().load(str(path))
        if not str(path).lower().endswith(".glb"):  # .gltf: the buffer as a data URI or a .bin beside it
            self.gltf.convert_buffers(pygltflib.BufferFormat.BINARYBLOB)
        self.blob = self.gltf.binary_blob()
        self.parent = {c: i for i, n in enumerate(self.gltf.nodes) for c in (n.children or [])}

    def accessor(self, index: int) -> np.ndarray:
        acc = self.gltf.accessors[index]
        view = self.gltf.bufferViews[acc.bufferView]
        width = _WIDTH[acc.type]
        dtype = np.dtype(_TYPES[acc.componentType])
        stride = view.byteStride or dtype.itemsize * width
        start = (view.byteOffset or 0) + (acc.byteOffset or 0)
        rows = [np.frombuffer(self.blob, dtype=dtype, count=width, offset=start + k * stride) for k in range(acc.count)]
        return np.array(rows, dtype=np.float64)

    def animation_names(self) -> list[str]:
        return [a.name for a in self.gltf.animations or []]

    def names(self) -> list[str]:
        return [n.name for n in self.gltf.nodes]

    def _tracks(self) -> dict:
        out = {}
        anims = self.gltf.animations or []
        for anim in anims if self.animation is None else anims[self.animation : self.animation + 1]:
            for ch in anim.channels:
                s = anim.samplers[ch.sampler]
                track = Track(self.accessor(s.input), self.accessor(s.output), s.interpolation, ch.target.path)
                out[(ch.target.node, ch.target.path)] = track
        return out

    def local(self, t: float) -> list[np.ndarray]:
        tracks = self._tracks()
        out = []
        for j, node in enumerate(self.gltf.nodes):
            if node.matrix:
                out.append(np.array(node.matrix).reshape(4, 4).T)
                continue
            tr = np.array(node.translation or [0, 0, 0], dtype=float)
            x, y, z, w = node.rotation or [0, 0, 0, 1]
            q = np.array([w, x, y, z], dtype=float)
            sc = np.array(node.scale or [1, 1, 1], dtype=float)
            if (j, "translation") in tracks:
                tr = tracks[(j, "translation")].sample([t])[0]
            if (j, "rotation") in tracks:
                q = tracks[(j, "rotation")].sample([t])[0]
            if (j, "scale") in tracks:
                sc = tracks[(j, "scale")].sample([t])[0]
            w, x, y, z = q / np.linalg.norm(q)
            r = np.array(
                [
                    [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
                ]
            )
            m = np.eye(4)
            m[:3, :3] = r * sc
            m[:3, 3] = tr
            out.append(m)
        return out

    def worlds(self, t: float) -> list[np.ndarray]:
        local = self.local(t)
        out: list = [None] * len(local)
        for j in range(len(local)):
            chain = [j]
            while chain[-1] in self.parent:
                chain.append(self.parent[chain[-1]])
            m = np.eye(4)
            for k in reversed(chain):
                m = m @ local[k]
            out[j] = m
        return out

    def skinned_positions(self, mesh_node: int, t: float) -> np.ndarray:
        """Every vertex of ``mesh_node``'s mesh placed by its skin at time ``t``."""
        node = self.gltf.nodes[mesh_node]
        skin = self.gltf.skins[node.skin]
        worlds = self.worlds(t)
        ibm = self.accessor(skin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
        joint_m = [worlds[j] @ ibm[k] for k, j in enumerate(skin.joints)]
        out = []
        for prim in self.gltf.meshes[node.mesh].primitives:
            pos = self.accessor(prim.attributes.POSITION)
            joints = self.accessor(prim.attributes.JOINTS_0).astype(int)
            weights = self.accessor(prim.attributes.WEIGHTS_0)
            for v, js, ws in zip(pos, joints, weights, strict=True):
                p = np.zeros(3)
                for jk, wk in zip(js, ws, strict=True):
                    if wk:
                        p += wk * (joint_m[jk] @ np.append(v, 1.0))[:3]
                out.append(p / ws.sum())
        return np.array(out)
