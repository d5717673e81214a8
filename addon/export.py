"""Exporting transforms that survive.

Matrix-composing engines (glTF viewers, Unity, Godot) only receive a TRS per node, so
a local matrix with shear cannot be written; but two TRS nodes can hold it exactly
(:func:`core.split_to_trs`). :func:`insert_helpers` puts a helper empty above every
object whose local matrix holds shear (undoable; the object keeps its own loc / rot /
scale channels). Bones cannot get empties between them in Blender, so after Blender's
own glTF exporter has written the file, :func:`add_joint_helpers` inserts helper nodes
above the affected joints in the file itself.

Accumulating engines (Unreal, Ogre) combine TRS separately: :func:`accumulated_locals`
gives, per node, the local TRS whose accumulation lands every node at Blender's world
position and rotation, with the world scale Blender shows (exact unless the world
matrix itself is sheared; the residual is reported).
"""

from __future__ import annotations

from typing import NamedTuple

import bpy
import numpy as np

from .. import core
from .editing import DEFORMABLE, DEFORMING_PARENTS, Parenting, as_np, check_editable, parent_matrix, to_blender
from .gltf_io import Gltf
from .inspection import Inspection

#: Blender Z-up to glTF Y-up: (x, y, z) -> (x, z, -y).
Y_UP = np.array([[1.0, 0, 0, 0], [0, 0, 1.0, 0], [0, -1.0, 0, 0], [0, 0, 0, 1.0]])


class ExportError(Exception):
    """The scene cannot be exported as asked; nothing was changed or written."""


# -- helper empties (objects) ------------------------------------------------------------


def helper_plan(inspection: Inspection) -> list[int]:
    """Object nodes whose local matrix holds shear an exporter would drop (above the
    float32 noise of ``inverse(parent world) @ world``, see ``Inspection``)."""
    nodes = inspection.nodes
    return [
        int(i)
        for i in np.flatnonzero(inspection.local_shear_real)
        if nodes.kind(int(i)) == "object" and nodes.parents[i] >= 0
    ]


class HelperResult(NamedTuple):
    inserted: list[tuple[str, str]]  #: (helper, object) names
    skipped: list[tuple[str, str]]  #: (object, why) for sheared objects left as they are
    saved: list  #: parenting to restore and helpers to delete (see :func:`remove_helpers`)


def insert_helpers(inspection: Inspection) -> HelperResult:
    """Insert a helper empty above every object whose local matrix holds shear.

    The helper gets the outer TRS of the exact split (in its parent inverse, its own
    channels stay clean); the object is re-parented to it and keeps its loc / rot /
    scale, its world matrix and its children. Exact at the current frame.

    Objects deformed through their parent (parent type Armature or Lattice) are skipped
    and listed: re-parenting them would drop the deformation. Everything is validated
    first, and a failure while inserting restores what was done: on an error nothing
    has changed.
    """
    nodes = inspection.nodes
    plan: list[tuple[int, bpy.types.Object]] = []
    skipped: list[tuple[str, str]] = []
    for i in helper_plan(inspection):
        name = nodes.keys[i][0]
        obj = bpy.data.objects.get(name)
        if obj is None:
            raise ExportError(f"object '{name}' no longer exists: inspect again")
        if obj.parent_type in DEFORMING_PARENTS and obj.type in DEFORMABLE:
            skipped.append((name, f"deformed by its {obj.parent_type.lower()} parent"))
            continue
        check_editable(obj, ExportError, "inserting a helper")
        plan.append((i, obj))
    saved: list = []
    try:
        for i, obj in plan:
            _insert_helper(inspection, i, obj, saved)
        bpy.context.view_layer.update()
        for i, obj in plan:
            after = as_np(obj.matrix_world)
            before = nodes.world[i]
            if np.abs(after - before).max() > 1e-4 * max(1.0, np.abs(before).max()):
                raise ExportError(f"inserting a helper above '{obj.name}' would move it; nothing was changed")
    except BaseException:
        remove_helpers(saved)
        raise
    inserted = [(helper.name, state.obj.name) for state, helper in saved]
    return HelperResult(inserted, skipped, saved)


def _insert_helper(inspection: Inspection, i: int, obj, saved: list) -> None:
    nodes = inspection.nodes
    outer, inner = core.split_to_trs(inspection.local_matrices[i])
    helper_world = nodes.world[nodes.parents[i]] @ outer.to_matrix()
    p = parent_matrix(obj)
    basis = as_np(obj.matrix_basis)
    state = Parenting.save(obj)
    helper = bpy.data.objects.new(f"{obj.name} (shear helper)", None)
    saved.append((state, helper))
    helper.empty_display_type = "PLAIN_AXES"
    helper.empty_display_size = 0.25
    for coll in list(obj.users_collection) or [bpy.context.scene.collection]:
        coll.objects.link(helper)
    helper.parent = obj.parent
    helper.parent_type = obj.parent_type
    if obj.parent_type == "BONE":
        helper.parent_bone = obj.parent_bone
    elif obj.parent_type in {"VERTEX", "VERTEX_3"}:
        helper.parent_vertices = obj.parent_vertices
    helper.matrix_parent_inverse = to_blender(np.linalg.inv(p) @ helper_world)
    obj.parent = helper
    obj.parent_type = "OBJECT"
    obj.matrix_parent_inverse = to_blender(inner.to_matrix() @ np.linalg.inv(basis))


def remove_helpers(saved: list) -> None:
    """Undo :func:`insert_helpers`: restore each object's parenting, delete the helpers."""
    for state, helper in reversed(saved):
        state.restore()
        bpy.data.objects.remove(helper)
    if saved:
        bpy.context.view_layer.update()


# -- glTF ---------------------------------------------------------------------------------


def gltf_frames(inspection: Inspection, y_up: bool) -> tuple[np.ndarray, np.ndarray]:
    """How Blender's exporter maps each node's world matrix into the file.

    ``world_gltf = C @ world @ F``: ``C`` the Y-up conversion (identity without
    ``y_up``), ``F = C^-1`` for objects (their mesh data is converted) and identity for
    joints (bones keep Blender's axes; the bind matrices absorb the difference).
    Returns ``(C (4, 4), F (N, 4, 4))``.
    """
    c = Y_UP if y_up else np.eye(4)
    n = len(inspection.nodes)
    frames = np.broadcast_to(np.linalg.inv(c), (n, 4, 4)).copy()
    bones = np.array([inspection.nodes.kind(i) == "bone" for i in range(n)], dtype=bool)
    frames[bones] = np.eye(4)
    return c, frames


def gltf_node_index(gltf: Gltf, inspection: Inspection) -> dict[int, int]:
    """Inspection node index -> glTF node index (objects by name, bones by skin)."""
    joints = gltf.joints()
    joint_nodes = set(joints.values())
    by_name: dict[str, int] = {}
    for k, node in enumerate(gltf.nodes):
        if k not in joint_nodes:  # an object may share a bone's name
            by_name.setdefault(node.get("name", ""), k)
    out = {}
    for i, (obj, bone) in enumerate(inspection.nodes.keys):
        j = joints.get((obj, bone)) if bone else by_name.get(obj)
        if j is not None:
            out[i] = j
    return out


def add_joint_helpers(gltf: Gltf, inspection: Inspection, y_up: bool) -> list[str]:
    """Insert helper nodes above joints whose local matrix holds shear. Returns names."""
    c, frames = gltf_frames(inspection, y_up)
    index = gltf_node_index(gltf, inspection)
    nodes = inspection.nodes
    added = []
    for i in np.flatnonzero(inspection.local_shear_real):
        i = int(i)
        p = int(nodes.parents[i])
        if nodes.kind(i) != "bone" or i not in index or p < 0:
            continue
        local = np.linalg.inv(frames[p]) @ inspection.local_matrices[i] @ frames[i]
        outer, inner = core.split_to_trs(local)
        name = f"{nodes.name(i)} (shear helper)"
        gltf.insert_parent(index[i], outer, inner, name)
        added.append(name)
    return added


def export_gltf(filepath: str, *, y_up: bool = True, selection_only: bool = False) -> None:
    """Blender's own glTF exporter, pose as shown (no rest pose, no animation)."""
    fmt = "GLB" if filepath.lower().endswith(".glb") else "GLTF_SEPARATE"
    bpy.ops.export_scene.gltf(
        filepath=filepath,
        export_format=fmt,
        export_yup=y_up,
        use_selection=selection_only,
        export_animations=False,
        export_rest_position_armature=False,
        export_apply=False,
    )


class GltfResult(NamedTuple):
    relative_error: float  #: largest entry difference / largest world-matrix entry (>= 1)
    absolute_error: float  #: largest matrix-entry difference, scene units
    helpers: int  #: helper empties inserted in Blender + helper nodes added above joints
    per_node: dict  #: label -> absolute error
    skipped: list  #: (object, why) sheared objects that got no helper


def write_gltf(
    scene, out: str, *, y_up: bool = True, helpers: bool = True, thresholds: tuple[float, float] = (0.1, 1e-3)
) -> GltfResult:
    """Export ``scene`` to the .glb ``out`` with Blender's exporter and measure it.

    With ``helpers`` (the default) helper empties are inserted above sheared objects
    first (this changes the open scene: save it or reload it as you wish) and helper
    nodes above sheared joints after. The file is written whole or not at all, then
    read back and composed as a viewer does; the result says how far it is from
    Blender's world matrices.
    """
    from .files import check_writable, write_with
    from .scan import scan_scene

    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    inspection = scan_scene(scene, *thresholds)
    added = insert_helpers(inspection) if helpers else HelperResult([], [], [])
    if added.inserted:
        inspection = scan_scene(scene, *thresholds)
    result: dict = {"joints": []}

    def write(tmp: str) -> None:
        export_gltf(tmp, y_up=y_up)
        if helpers:
            gltf = Gltf.load(tmp)
            result["joints"] = add_joint_helpers(gltf, inspection, y_up)
            gltf.save(tmp)
        result["error"] = gltf_error(tmp, inspection, y_up)

    try:
        write_with(out, write)
    except BaseException:
        remove_helpers(added.saved)  # the export failed: leave the scene as it was
        raise
    relative, per_node = result["error"]
    absolute = max(per_node.values()) if per_node else 0.0
    return GltfResult(relative, absolute, len(added.inserted) + len(result["joints"]), per_node, added.skipped)


def gltf_error(path: str, inspection: Inspection, y_up: bool) -> tuple[float, dict[str, float]]:
    """Compose the file's nodes as a viewer does and compare with Blender's worlds.

    Returns the relative error (largest matrix-entry difference over the largest
    entry of Blender's world matrices, at least 1) and the absolute error per node
    label. Nodes the file lacks are skipped.
    """
    gltf = Gltf.load(path)
    worlds = gltf.world_matrices()
    c, frames = gltf_frames(inspection, y_up)
    index = gltf_node_index(gltf, inspection)
    per_node = {}
    for i, j in index.items():
        expected = c @ inspection.nodes.world[i] @ frames[i]
        per_node[inspection.nodes.label(i)] = float(np.abs(worlds[j] - expected).max())
    scale = max(1.0, float(np.abs(inspection.nodes.world).max())) if len(inspection.nodes) else 1.0
    return (max(per_node.values()) / scale if per_node else 0.0), per_node


# -- accumulated engines --------------------------------------------------------------------


def accumulated_locals(inspection: Inspection) -> tuple[core.TRS, core.Deviation]:
    """Local TRS per node for accumulating engines, and what remains off.

    Each node's world is estimated as Blender's world decomposed (translation,
    rotation, signed column lengths); the local TRS is the one ``CombineTransforms``
    turns the parent's estimate into this node's: exact position and rotation, and
    exact scale wherever Blender's world is not sheared. The returned deviation
    compares the accumulation of these locals with Blender's world matrices.
    """
    nodes = inspection.nodes
    world = inspection.world
    parents = nodes.parents
    has = parents >= 0
    p = np.where(has, parents, 0)
    ps = world.scale[p]
    zero = has & np.any(ps == 0.0, axis=-1)
    if zero.any():
        i = int(np.flatnonzero(zero)[0])
        raise ExportError(
            f"'{nodes.label(int(parents[i]))}' has zero scale on an axis: no local scale of "
            f"'{nodes.label(i)}' can reproduce Blender in an accumulating engine"
        )
    pq_inv = core.quat_conjugate(world.rotation[p])
    offset = core.quat_rotate(pq_inv, world.translation - world.translation[p])
    safe = np.where(has[:, None], ps, 1.0)
    translation = np.where(has[:, None], offset / safe, world.translation)
    rotation = np.where(has[:, None], core.quat_multiply(pq_inv, world.rotation), world.rotation)
    scale = np.where(has[:, None], world.scale / safe, world.scale)
    local = core.TRS(translation, rotation, scale)
    rebuilt = inspection.hierarchy.accumulate(local).to_matrix()
    return local, core.deviation(nodes.world, rebuilt, nodes.box_min, nodes.box_max)


ACCUMULATED_SCHEMA = "hierarchy_inspector.accumulated/1"


def accumulated_document(inspection: Inspection) -> dict:
    """The corrected local TRS per node (root first) for pipelines that set transforms."""
    from .report import root_first_order

    local, residual = accumulated_locals(inspection)
    nodes = inspection.nodes
    entries = []
    for i in root_first_order(inspection):
        i = int(i)
        parent = int(nodes.parents[i])
        entries.append(
            {
                "name": nodes.name(i),
                "kind": nodes.kind(i),
                "armature": nodes.armature(i),
                "parent": nodes.name(parent) if parent >= 0 else None,
                "parent_armature": nodes.armature(parent) if parent >= 0 else None,
                "translation": local.translation[i].tolist(),
                "rotation": local.rotation[i].tolist(),
                "scale": local.scale[i].tolist(),
                "residual": {
                    "position": float(residual.position[i]),
                    "rotation_deg": float(residual.rotation_deg[i]),
                    "max_corner": float(residual.max_corner[i]),
                },
            }
        )
    return {
        "schema": ACCUMULATED_SCHEMA,
        "convention": "world = CombineTransforms(parent world, local); rotation wxyz; "
        "translation in the parent's scaled, rotated frame",
        "nodes": entries,
        "max_residual_corner": float(residual.max_corner.max()) if len(entries) else 0.0,
    }


def accumulated_csv(document: dict) -> str:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        [
            "name",
            "kind",
            "armature",
            "parent",
            "tx",
            "ty",
            "tz",
            "qw",
            "qx",
            "qy",
            "qz",
            "sx",
            "sy",
            "sz",
            "residual_max_corner",
        ]
    )
    for e in document["nodes"]:
        writer.writerow(
            [
                e["name"],
                e["kind"],
                e["armature"] or "",
                e["parent"] or "",
                *e["translation"],
                *e["rotation"],
                *e["scale"],
                e["residual"]["max_corner"],
            ]
        )
    return buf.getvalue()
