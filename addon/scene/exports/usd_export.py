"""USD export exact at every frame: Blender's own USD exporter (``bpy.ops.wm.usd_export``)
writes the file, then a usd-core process corrects it in place and reads it back
(:mod:`...model.exports.usd_check`, :mod:`...model.exports.usd_stage`): object prims
whose local holds shear get a matrix op, animated skeletons get helper joints where a
joint's local holds shear (:mod:`...model.exports.usd_plan`), and the file is composed
as a USD consumer composes it and compared with Blender at every exported frame
(objects, joints, and skinned meshes' points against Blender's evaluated meshes).

Why a separate process and not Blender's ``USDHook``: the hook hands over the stage
as a ``pxr`` object, and only builds that ship ``pxr`` have one (bpy from PyPI has
none; Debian's Blender 4.3.2 is built without USD at all). The hook also adds no
option to the export dialog, so File > Export has an entry of its own, as for FBX.

The user's scene is not edited: the frame range and the current frame are put back.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import bpy
import numpy as np

from ...model.errors import ExportError, UsageError
from ...model.exports.usd_check import UsdErrors, UsdWorker, compare, usd_available
from ...model.frames import FrameRange
from ...model.nodes import node_label
from ...model.outputs import check_writable, write_with
from ...model.thresholds import DEFAULT, Thresholds
from ..blender_output import run_exporter
from ..frames import FrameReader
from .gltf_hook import engine_ignored

#: The file extensions Blender's USD exporter writes as one file (crate, text, crate).
EXTENSIONS = (".usd", ".usda", ".usdc")
#: Blender's xform-op modes: translate / rotate / scale, translate / orient / scale, a matrix.
XFORM_OP_MODES = ("TRS", "TOS", "MAT")


def usd_exporter_missing() -> str:
    """Why this Blender cannot export USD ('' when it can): a build without USD (Debian's
    Blender 4.3.2) still lists the operator."""
    if not getattr(bpy.app.build_options, "usd", True):
        return f"this Blender ({bpy.app.version_string}) is built without USD"
    return ""


def _options(**wanted) -> dict:
    """The options of ``wanted`` that this Blender's USD exporter has (4.2 lacks some)."""
    known = bpy.ops.wm.usd_export.get_rna_type().properties.keys()
    return {k: v for k, v in wanted.items() if k in known}


def export_usd(
    filepath: str, frame_range: FrameRange | None, *, xform_op_mode: str = "TRS", only_deform_bones: bool = False
) -> None:
    """Blender's USD exporter: the scene's frames ``frame_range.start .. end`` (every
    frame: the exporter has no step), else the current frame. Objects as the viewport
    shows them; Blender's names kept on the prims (the read-back matches by them)."""
    scene = bpy.context.scene
    missing = usd_exporter_missing()
    if missing:
        raise ExportError(f"{missing}: no USD export")
    saved = (scene.frame_start, scene.frame_end, scene.frame_current, scene.frame_subframe)
    try:
        if frame_range is not None:
            scene.frame_start, scene.frame_end = frame_range.start, frame_range.end
        run_exporter(
            "USD",
            bpy.ops.wm.usd_export,
            filepath=filepath,
            export_animation=frame_range is not None,
            export_armatures=True,
            only_deform_bones=only_deform_bones,
            **_options(
                xform_op_mode=xform_op_mode,
                evaluation_mode="VIEWPORT",
                author_blender_name=True,
                allow_unicode=False,
                convert_orientation=False,
                export_custom_properties=True,
            ),
        )
    finally:
        scene.frame_start, scene.frame_end = saved[0], saved[1]
        scene.frame_set(saved[2], subframe=saved[3])


class _PointsReader:
    """The scene seen by :class:`..frames.FrameReader`, reading after every frame change
    the evaluated world points of ``meshes`` into ``points[frame]`` (Blender's bulk
    reads, no per-vertex Python)."""

    def __init__(self, scene, meshes: list):
        self._scene = scene
        self._meshes = meshes
        self.points: dict[int, list[np.ndarray]] = {}

    def frame_set(self, frame, subframe=0.0):
        self._scene.frame_set(frame, subframe=subframe)
        if subframe or not self._meshes:
            return
        depsgraph = bpy.context.evaluated_depsgraph_get()
        rows = []
        for obj in self._meshes:
            evaluated = obj.evaluated_get(depsgraph)
            mesh = evaluated.to_mesh()
            co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
            mesh.vertices.foreach_get("co", co)
            world = np.array(evaluated.matrix_world, dtype=np.float64)
            evaluated.to_mesh_clear()
            rows.append(co.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3])
        self.points[int(frame)] = rows

    def __getattr__(self, name):
        return getattr(self._scene, name)


def _bbone_vertices(obj) -> np.ndarray:
    """``(V,)`` bool: vertices of the mesh ``obj`` weighted to a bone with B-Bone
    segments in the armature that deforms it (USD has no B-Bones)."""
    rig = next((m.object for m in obj.modifiers if m.type == "ARMATURE" and m.object is not None), None)
    if rig is None and obj.parent is not None and obj.parent_type == "ARMATURE":
        rig = obj.parent
    out = np.zeros(len(obj.data.vertices), dtype=bool)
    if rig is None or rig.type != "ARMATURE":
        return out
    bbone_groups = {
        g.index for g in obj.vertex_groups if (b := rig.data.bones.get(g.name)) is not None and b.bbone_segments > 1
    }
    if not bbone_groups:
        return out
    for v in obj.data.vertices:
        out[v.index] = any(g.group in bbone_groups and g.weight > 0.0 for g in v.groups)
    return out


class UsdResult(NamedTuple):
    errors: UsdErrors | None  #: the file read back with usd-core (None: usd-core is not installed)
    frames: list  #: the exported frames (time code = frame)
    matrix_ops: list  #: names of the object prims given a matrix op
    helpers: list  #: labels of the bones given a helper joint
    reparented: list  #: labels of the joints whose Blender parent is not exported (only deform bones)
    bbone: list  #: names of the skinned meshes with vertices on B-Bones (USD has none)
    not_checked: list  #: (name, why)
    seconds: dict


def write_usd(
    scene,
    out: str,
    frame_range: FrameRange | None,
    thresholds: Thresholds = DEFAULT,
    *,
    xform_op_mode: str = "TRS",
    only_deform_bones: bool = False,
    fix: bool = True,
) -> UsdResult:
    """Export ``scene`` to ``out`` (.usd, .usda or .usdc) exact at every frame of
    ``frame_range`` (None: the current frame) and check it (see the module docstring).
    The one implementation behind the command line, the panel and File > Export.
    Written whole or not at all; the scene is unchanged. ``fix`` False: Blender's file
    as it is, only read back (for measuring)."""
    if not out.lower().endswith(EXTENSIONS):
        raise UsageError(f"{out!r}: USD output must be one of {', '.join(EXTENSIONS)}")
    if xform_op_mode not in XFORM_OP_MODES:
        raise UsageError(f"xform op mode {xform_op_mode!r} is not one of {', '.join(XFORM_OP_MODES)}")
    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    missing = usd_exporter_missing()
    if missing:
        raise ExportError(f"{missing}: no USD export")
    if not usd_available():
        raise ExportError("usd-core (pip package 'usd-core') is not installed: the USD file cannot be corrected")
    worker = UsdWorker()  # its start-up (Python, numpy, pxr) overlaps the frames read and the export
    try:
        return _write_usd(scene, out, frame_range, thresholds, xform_op_mode, only_deform_bones, fix, worker)
    finally:
        worker.close()


def _write_usd(scene, out, frame_range, thresholds, xform_op_mode, only_deform_bones, fix, worker) -> UsdResult:
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    frames = frame_range.frames() if frame_range else [scene.frame_current]
    skinned, not_checked = engine_ignored(scene)
    meshes = [o for o in scene.objects if o.name in skinned and o.type == "MESH"]
    reader_scene = _PointsReader(scene, meshes)
    reader = FrameReader(reader_scene, frames, objects=scene.objects, unattended=True)
    try:
        while not reader.step():
            pass
    finally:
        reader.restore()
    series = reader.series()
    points = {obj.name: np.stack([reader_scene.points[f][k] for f in frames]) for k, obj in enumerate(meshes) if frames}
    bbone = {obj.name: _bbone_vertices(obj) for obj in meshes}
    request = _request(series, skinned)
    seconds["frames_read"] = time.perf_counter() - t0
    result: dict = {}

    def write(tmp: str) -> None:
        t1 = time.perf_counter()
        export_usd(tmp, frame_range, xform_op_mode=xform_op_mode, only_deform_bones=only_deform_bones)
        t2 = time.perf_counter()
        seconds["blender_export"] = t2 - t1
        worker.request(tmp, request, fix=fix, shear_deg=thresholds.shear_deg)
        result["read"] = worker.result()
        seconds["correct_and_read"] = time.perf_counter() - t2

    write_with(out, write)
    read = result["read"]
    t3 = time.perf_counter()
    errors = compare(read, series.keys, series.world, points, bbone)
    seconds["compare"] = time.perf_counter() - t3
    done = read.done
    helpers = [node_label(s["armature"], b) for s in done.get("skeletons", []) for b in s.get("helpers", [])]
    moved = [node_label(s["armature"], b) for s in done.get("skeletons", []) for b in s.get("reparented", [])]
    for s in done.get("skeletons", []):
        for token in s.get("unmatched", []):
            not_checked.append((f"{s.get('armature', '?')} joint {token}", "no bone of that name: not corrected"))
    for name in sorted(set(points) - set(errors.points)):
        not_checked.append((name, "its points in the file do not match Blender's mesh: not compared"))
    with_bbones = sorted(name for name, mask in bbone.items() if mask.any())
    return UsdResult(errors, frames, done.get("matrix_ops", []), helpers, moved, with_bbones, not_checked, seconds)


def _request(series, skinned: set) -> dict:
    """Blender's side for the usd-core process (:class:`...model.exports.usd_stage.Scene`):
    objects' worlds, and per armature its bones (in the order of ``series.keys``), their
    parents and their pose matrices in armature space ``inv(armature world) @ world``."""
    keys = series.keys
    world = series.world
    objects = [i for i, (_o, b) in enumerate(keys) if not b]
    data: dict = {
        "frames": np.asarray(series.frames, dtype=np.int64),
        "object_names": np.array([keys[i][0] for i in objects], dtype=object),
        "object_world": np.ascontiguousarray(world[:, objects]),
        "skinned": np.array(sorted(skinned), dtype=object),
    }
    index = {k: i for i, k in enumerate(keys)}
    armatures = [name for name, _b in (keys[i] for i in objects) if any(k[0] == name and k[1] for k in keys)]
    data["arm_names"] = np.array(armatures, dtype=object)
    for a, name in enumerate(armatures):
        rows = [i for i, k in enumerate(keys) if k[0] == name and k[1]]
        position = {i: k for k, i in enumerate(rows)}
        parents = np.array([position.get(int(series.parents[i]), -1) for i in rows], dtype=np.int64)
        arm_inverse = np.linalg.inv(world[:, index[(name, "")]])
        data[f"bones_{a}"] = np.array([keys[i][1] for i in rows], dtype=object)
        data[f"bone_parents_{a}"] = parents
        data[f"pose_{a}"] = arm_inverse[:, None] @ world[:, rows]
    return data
