"""Minimal glTF 2.0 reading and node editing (JSON + GLB container), no dependencies.

Buffer 0 is the file's binary data wherever it lives: the GLB's BIN chunk, a base64
``data:`` URI (.gltf embedded) or a .bin file beside the .gltf (.gltf separate);
:meth:`Gltf.save` writes it back the same way.

Used to measure an export the way a viewer reads it (node TRS / matrix composed from
the scene roots down) and to insert helper nodes above joints whose local matrix
Blender's exporter could not write (bones cannot get helper empties in Blender).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import urllib.parse

import numpy as np

from .... import core
from ..errors import GltfError

_GLB_MAGIC = 0x46546C67  # "glTF"
_JSON_CHUNK = 0x4E4F534A
_BIN_CHUNK = 0x004E4942


_DATA_PREFIX = "data:application/octet-stream;base64,"


class Gltf:
    """A glTF document: ``doc`` is the JSON dict, ``binary`` buffer 0's bytes (the GLB
    BIN chunk, an embedded data URI or the separate .bin; None without buffers)."""

    def __init__(self, doc: dict, binary: bytes | bytearray | None, is_glb: bool):
        self.doc = doc
        self.binary: bytes | bytearray | None = binary
        self.is_glb = is_glb

    def buffer_file(self) -> str | None:
        """Buffer 0's separate file (its URI, relative to the .gltf), or None (GLB,
        embedded or no buffer)."""
        buffers = self.doc.get("buffers", [])
        uri = buffers[0].get("uri") if buffers and not self.is_glb else None
        if uri is None or uri.startswith("data:"):
            return None
        return urllib.parse.unquote(uri)

    @classmethod
    def load(cls, path: str, buffer_path: str | None = None) -> Gltf:
        """Read a .glb or .gltf; a separate buffer from ``buffer_path`` when given (else
        from its URI beside ``path``)."""
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] == b"glTF":
            magic, version, length = struct.unpack_from("<III", data, 0)
            if magic != _GLB_MAGIC or version != 2:
                raise GltfError(f"{path}: not a glTF 2.0 binary")
            offset, doc, binary = 12, None, None
            while offset < length:
                chunk_len, chunk_type = struct.unpack_from("<II", data, offset)
                chunk = data[offset + 8 : offset + 8 + chunk_len]
                if chunk_type == _JSON_CHUNK:
                    doc = json.loads(chunk.decode("utf-8"))
                elif chunk_type == _BIN_CHUNK:
                    binary = bytes(chunk)
                offset += 8 + chunk_len
            if doc is None:
                raise GltfError(f"{path}: GLB without a JSON chunk")
            return cls(doc, binary, True)
        try:
            gltf = cls(json.loads(data.decode("utf-8")), None, False)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise GltfError(f"{path}: neither GLB nor glTF JSON ({exc})") from None
        buffers = gltf.doc.get("buffers", [])
        uri = buffers[0].get("uri") if buffers else None
        if uri is not None and uri.startswith("data:"):
            try:
                gltf.binary = base64.b64decode(uri.split(",", 1)[1], validate=True)
            except (IndexError, ValueError) as exc:
                raise GltfError(f"{path!r}: buffer 0 is not a base64 data URI ({exc})") from None
        elif uri is not None:
            source = buffer_path or os.path.join(os.path.dirname(path), gltf.buffer_file() or "")
            try:
                with open(source, "rb") as f:
                    gltf.binary = f.read()
            except OSError as exc:
                raise GltfError(f"{path!r}: its buffer {source!r} cannot be read ({exc.strerror})") from None
        return gltf

    def save(self, path: str, buffer_path: str | None = None) -> None:
        """Write the document to ``path``; a separate buffer goes to ``buffer_path``
        (default: its URI beside ``path``; the URI itself is kept), an embedded one back
        into its data URI."""
        if not self.is_glb:
            buffers = self.doc.get("buffers", [])
            if buffers and self.binary is not None:
                separate = self.buffer_file()
                if separate is None:
                    buffers[0]["uri"] = _DATA_PREFIX + base64.b64encode(self.binary).decode("ascii")
                else:
                    with open(buffer_path or os.path.join(os.path.dirname(path), separate), "wb") as f:
                        f.write(self.binary)
            text = json.dumps(self.doc, separators=(",", ":")).encode("utf-8")
            with open(path, "wb") as f:
                f.write(text)
            return
        text = json.dumps(self.doc, separators=(",", ":")).encode("utf-8")
        text += b" " * (-len(text) % 4)
        chunks = struct.pack("<II", len(text), _JSON_CHUNK) + text
        if self.binary is not None:
            binary = self.binary + b"\0" * (-len(self.binary) % 4)
            chunks += struct.pack("<II", len(binary), _BIN_CHUNK) + binary
        with open(path, "wb") as f:
            f.write(struct.pack("<III", _GLB_MAGIC, 2, 12 + len(chunks)) + chunks)

    @property
    def nodes(self) -> list[dict]:
        return self.doc.setdefault("nodes", [])

    def parents(self) -> np.ndarray:
        out = np.full(len(self.nodes), -1, dtype=np.int64)
        for i, node in enumerate(self.nodes):
            for c in node.get("children", []):
                out[c] = i
        return out

    def local_matrices(self) -> np.ndarray:
        return np.stack([node_matrix(n) for n in self.nodes]) if self.nodes else np.zeros((0, 4, 4))

    def world_matrices(self) -> np.ndarray:
        """Every node's world matrix, composed as a viewer does: ``parent @ local``."""
        return core.Hierarchy(self.parents()).world_matrices(self.local_matrices())

    def joints(self) -> dict[tuple[str, str], int]:
        """``(skin name, joint node name) -> node index`` for every skin's joints."""
        out = {}
        for skin in self.doc.get("skins", []):
            for j in skin.get("joints", []):
                out[(skin.get("name", ""), self.nodes[j].get("name", ""))] = j
        return out

    def insert_parent(self, node: int, outer: core.TRS, inner: core.TRS, name: str, parent: int | None = None) -> int:
        """Put a new node with TRS ``outer`` between ``node`` and its parent, and give
        ``node`` the TRS ``inner``. Returns the new node's index. ``parent``: ``node``'s
        parent index (-1: a root) when the caller knows it (else it is looked up)."""
        parent = int(self.parents()[node]) if parent is None else int(parent)
        new = len(self.nodes)
        self.nodes.append({"name": name, "children": [node], **trs_fields(outer)})
        old = self.nodes[node]
        for key in ("matrix", "translation", "rotation", "scale"):
            old.pop(key, None)
        old.update(trs_fields(inner))
        if parent >= 0:
            kids = self.nodes[parent]["children"]
            kids[kids.index(node)] = new
        else:
            for scene in self.doc.get("scenes", []):
                roots = scene.get("nodes", [])
                if node in roots:
                    roots[roots.index(node)] = new
        return new


def node_matrix(node: dict) -> np.ndarray:
    """A node's local matrix: ``matrix`` (column-major) or ``T @ R @ S``."""
    if "matrix" in node:
        return np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T
    t = node.get("translation", [0.0, 0.0, 0.0])
    x, y, z, w = node.get("rotation", [0.0, 0.0, 0.0, 1.0])
    s = node.get("scale", [1.0, 1.0, 1.0])
    return core.TRS(t, [w, x, y, z], s).to_matrix()


def trs_fields(trs: core.TRS) -> dict:
    """glTF node fields of a single TRS (rotation stored x, y, z, w)."""
    w, x, y, z = (float(v) for v in trs.rotation)
    return {
        "translation": [float(v) for v in trs.translation],
        "rotation": [x, y, z, w],
        "scale": [float(v) for v in trs.scale],
    }
