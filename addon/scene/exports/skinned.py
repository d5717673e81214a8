"""Blender's side of the skinned-vertex check: which meshes an armature deforms, their
evaluated vertices at every exported frame (read during the frames read of the export,
no frame change of their own: :func:`..frames.read_frames` ``each_frame``), and what
explains a vertex the file places elsewhere (more influences than the file keeps,
B-Bone segments, dual quaternions, envelopes, other modifiers, shape keys).

The numbers (skinning the file, matching vertices, the tolerance) are Blender-free:
:mod:`...model.exports.verdicts.skinned`.
"""

from __future__ import annotations

import bpy
import numpy as np

from ...model.exports.gltf_animation import world_matrices_at
from ...model.exports.gltf_file import Gltf
from ...model.exports.verdicts.skinned import (
    SkinCheck,
    combine,
    frame_batches,
    influence_sets,
    match_vertices,
    mesh_error,
    skinned_nodes,
    skinned_vertices,
)

#: Engines and the influences per vertex they read from a glTF file (the README says
#: where each is documented): what the extra JOINTS_n / WEIGHTS_n sets reach.
INFLUENCE_READERS = "Babylon.js reads 8 (two sets); three.js only the first 4"


def deformed_meshes(scene) -> list:
    """The mesh objects of ``scene`` an Armature modifier (with an armature) deforms."""
    return [
        obj
        for obj in scene.objects
        if obj.type == "MESH" and any(m.type == "ARMATURE" and m.object is not None for m in obj.modifiers)
    ]


class EvaluatedVertices:
    """Blender's evaluated vertices of ``objects`` at ``count`` frames, one
    :meth:`read` per frame (the scene on that frame): float32 object-space positions
    and world matrices, kept as Blender hands them."""

    def __init__(self, objects, count: int):
        self.objects = {obj.name: obj for obj in objects}
        self.co = {obj.name: np.empty((count, len(obj.data.vertices), 3), np.float32) for obj in objects}
        self.world = {obj.name: np.empty((count, 4, 4)) for obj in objects}
        self.changed: set[str] = set()  #: meshes whose evaluated vertex count is not the mesh's at some frame
        self.static = {obj.name: np.eye(4) for obj in objects}  #: world matrices at the file's static pose
        self.count = count

    def read_static(self, scene, frame: int) -> None:
        """The meshes' world matrices at ``frame``, where the glTF exporter took the
        vertices it writes (``matrix_world @ co`` for a skinned mesh); the scene is put
        back on its frame when it had to move."""
        start = (scene.frame_current, scene.frame_subframe)
        if self.objects and (frame, 0.0) != start:
            scene.frame_set(frame)
        try:
            for name, obj in self.objects.items():
                self.static[name] = np.array(obj.matrix_world)
        finally:
            if (frame, 0.0) != start and self.objects:
                scene.frame_set(start[0], subframe=start[1])

    def read(self, k: int) -> None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for name, obj in self.objects.items():
            evaluated = obj.evaluated_get(depsgraph)
            vertices = evaluated.data.vertices
            buffer = self.co[name]
            if len(vertices) != buffer.shape[1]:
                self.changed.add(name)
                continue
            vertices.foreach_get("co", buffer[k].reshape(-1))
            self.world[name][k] = np.array(evaluated.matrix_world)

    def placed(self, name: str, keep=slice(None)) -> np.ndarray:
        """``(T, V, 3)`` float64 world positions at the frames ``keep`` selects (the
        float32 reads of every frame stay: ``frames x vertices x 12`` bytes a mesh)."""
        world, co = self.world[name][keep], self.co[name][keep].astype(np.float64)
        return np.einsum("tij,tvj->tvi", world[:, :3, :3], co) + world[:, None, :3, 3]

    def rest(self, name: str) -> np.ndarray:
        """``(V, 3)`` float64: the mesh's own vertices placed by its world matrix at the
        static pose (what the glTF exporter writes for a skinned mesh, in Blender's axes)."""
        vertices = self.objects[name].data.vertices
        co = np.empty(len(vertices) * 3, np.float32)
        vertices.foreach_get("co", co)
        m = self.static[name]
        return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def check_gltf(
    gltf: Gltf,
    meshes: EvaluatedVertices,
    frames,
    times,
    conversion: np.ndarray,
    keep=slice(None),
    file_worlds: np.ndarray | None = None,
    nodes: dict[str, int] | None = None,
) -> SkinCheck:
    """Every deformed mesh of ``meshes`` the file skins, placed as an engine skins it
    at ``times (T,)`` and compared with Blender's at ``frames (T,)`` (``keep``: which of
    the read frames those are). A mesh with several influence sets is also measured
    with the first alone (three.js): its error then names both. ``file_worlds``: the
    file's node worlds at ``times`` when the caller has them; ``nodes``: mesh name ->
    its file node as the nodes' check matched it (an instanced copy of the character
    holds a mesh of the same name elsewhere; default: the first skinned node of that
    name)."""
    skinned = skinned_nodes(gltf)
    if nodes is not None:
        skinned = {name: k for name, k in nodes.items() if "skin" in gltf.nodes[k] and "mesh" in gltf.nodes[k]}
    nodes = skinned
    if not any(name in nodes for name in meshes.objects):
        return SkinCheck({}, [])
    worlds = world_matrices_at(gltf, times) if file_worlds is None else file_worlds
    frames, times = np.asarray(frames), np.asarray(times, dtype=np.float64)
    read = np.arange(meshes.count)[keep]  # the read frames that are the exported ones
    back = np.linalg.inv(np.asarray(conversion, dtype=np.float64))[:3, :3]
    out: dict = {}
    not_checked = []
    for name in meshes.objects:
        if name not in nodes:
            continue
        if name in meshes.changed:
            not_checked.append((name, "its modifiers change its vertex count: the file holds the mesh without them"))
            continue
        node = nodes[name]
        _placed, rest = skinned_vertices(gltf, node, worlds[:1], times[:1])
        candidates = match_vertices(rest @ back.T, meshes.rest(name))
        if not (candidates >= 0).any():
            not_checked.append((name, "the file's vertices are not the mesh's at rest (modifiers applied?)"))
            continue
        prims = gltf.doc["meshes"][gltf.nodes[node]["mesh"]].get("primitives", [])
        sets = max((influence_sets(p) for p in prims), default=0)
        errors, alone = [], []
        for batch in frame_batches(len(frames), len(rest), candidates.shape[1]):
            blender = meshes.placed(name, read[batch])
            placed, _rest = skinned_vertices(gltf, node, worlds[batch], times[batch])
            errors.append(mesh_error(name, placed @ back.T, blender, frames[batch], candidates))
            if sets > 1:  # what an engine reading the first set alone shows
                first, _rest = skinned_vertices(gltf, node, worlds[batch], times[batch], sets=1)
                alone.append(mesh_error(name, first @ back.T, blender, frames[batch], candidates))
        error = combine(errors)
        cause = vertex_causes(meshes.objects[name], error.vertex, kept=4 * sets)
        if alone:
            three = f"with the first influence set alone (three.js) {combine(alone).relative:.1e} of its size"
            cause = f"{cause}; {three}" if cause else three
        out[name] = error._replace(cause=cause)
    return SkinCheck(out, not_checked)


def check_fbx(read_skinned: dict, meshes: EvaluatedVertices, frames, keep=slice(None)) -> SkinCheck:
    """The file's skinned vertices (``read_skinned``: mesh name -> ``(T, V, 3)``, ufbx's
    clusters, in scene units) against Blender's, vertex by vertex (Blender's FBX
    exporter writes the mesh's vertices in order)."""
    out: dict = {}
    not_checked = []
    for name in meshes.objects:
        placed = read_skinned.get(name)
        if placed is None:
            continue
        count = meshes.co[name].shape[1]
        if name in meshes.changed or placed.shape[1] != count:
            not_checked.append(
                (name, f"the file's mesh has {placed.shape[1]} vertices, Blender's evaluated mesh another count")
            )
            continue
        read = np.arange(meshes.count)[keep]
        error = combine(
            [
                mesh_error(name, placed[batch], meshes.placed(name, read[batch]), np.asarray(frames)[batch])
                for batch in frame_batches(len(read), count)
            ]
        )
        out[name] = error._replace(cause=vertex_causes(meshes.objects[name], error.vertex, kept=None))
    return SkinCheck(out, not_checked)


def vertex_causes(obj, vertex: int, kept: int | None) -> str:
    """What may place ``obj``'s vertex ``vertex`` elsewhere in the file than in Blender,
    in a few words: more influences than the file keeps (``kept``; None: all), B-Bones
    with segments among its bones, the Armature modifier's dual quaternions or
    envelopes, other modifiers, shape keys in use. '' when none applies."""
    causes = []
    rigs = [m for m in obj.modifiers if m.type == "ARMATURE" and m.object is not None]
    bones = {}
    for m in rigs:
        bones.update({b.name: b for b in m.object.data.bones if b.use_deform})
    if 0 <= vertex < len(obj.data.vertices):
        names = [g.name for g in obj.vertex_groups]
        weighed = [names[g.group] for g in obj.data.vertices[vertex].groups if g.weight > 0 and g.group < len(names)]
        deforming = [n for n in weighed if n in bones]
        if kept is not None and len(deforming) > kept:
            causes.append(
                f"{len(deforming)} bones weigh it, the file keeps {kept} (--all-influences writes them all: "
                f"{INFLUENCE_READERS})"
            )
        segmented = [n for n in deforming if bones[n].bbone_segments > 1]
        if segmented:
            causes.append(
                f"B-Bone '{segmented[0]}' ({bones[segmented[0]].bbone_segments} segments) weighs it: the file "
                "has one joint per bone"
            )
    if any(m.use_deform_preserve_volume for m in rigs):
        causes.append("Preserve Volume (dual quaternions): engines blend matrices")
    if any(m.use_bone_envelopes for m in rigs):
        causes.append("bone envelopes deform it: the file holds vertex groups only")
    others = [m.name for m in obj.modifiers if m.type != "ARMATURE" and m.show_viewport]
    if others:
        causes.append(f"modifiers besides the Armature: {', '.join(others)}")
    keys = obj.data.shape_keys
    if keys is not None and any(k.value != 0 for k in keys.key_blocks[1:]):
        causes.append("shape keys in use")
    return "; ".join(causes)
