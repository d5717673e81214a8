"""USD export exact at every frame: Blender's own USD exporter (``bpy.ops.wm.usd_export``)
writes the file, then a usd-core process corrects it in place and reads it back
(:mod:`...model.exports.usd.check`, :mod:`...model.exports.usd.stage`): object prims
whose local holds shear get a matrix op, animated skeletons get helper joints where a
joint's local holds shear (:mod:`...model.exports.usd.plan`), and the file is composed
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
from ...model.exports.choices import ExportChoice
from ...model.exports.usd.check import UsdErrors, compare, prepare_next, scene_request, start_worker, usd_available
from ...model.frames import FrameRange
from ...model.nodes import node_label
from ...model.outputs import check_writable, write_with
from ...model.thresholds import DEFAULT, Thresholds
from ...model.timeline import FrameSeries
from ...model.timeline.series import check_finite
from ..blender_output import run_exporter
from ..frames import read_frames
from ..reading import read_nodes
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
    known = bpy.ops.wm.usd_export.get_rna_type().properties.keys()  # type: ignore[call-arg]
    return {k: v for k, v in wanted.items() if k in known}


def export_usd(
    filepath: str,
    frame_range: FrameRange | None,
    *,
    xform_op_mode: str = "TRS",
    only_deform_bones: bool = False,
    on_frame=None,
    choice: ExportChoice | None = None,
) -> None:
    """Blender's USD exporter: the scene's frames ``frame_range.start .. end`` (every
    frame: the exporter has no step), else the current frame. Objects as the viewport
    shows them; Blender's names kept on the prims (the read-back matches by them).
    ``on_frame(scene, depsgraph)``: a ``frame_change_post`` handler for the length of
    the export (it sees each frame the exporter evaluates, with its depsgraph).
    ``choice``: which objects and bones (the exporter's own options; None: its
    defaults, visible objects, and ``only_deform_bones``)."""
    scene = bpy.context.scene
    missing = usd_exporter_missing()
    if missing:
        raise ExportError(f"{missing}: no USD export")
    saved = (scene.frame_start, scene.frame_end, scene.frame_current, scene.frame_subframe)
    which = _options(**(choice.usd() if choice is not None else {"only_deform_bones": only_deform_bones}))
    selection = None
    if choice is not None and choice.objects == "VISIBLE":
        # 'Visible Only' is gone from 5.0's exporter and, in 4.2 to 4.5, still writes an
        # object hidden in the viewport (the eye: Rigify's metarig): the visible objects
        # are exported as the selection, and the selection is put back.
        which.pop("visible_objects_only", None)
        layer = bpy.context.view_layer
        selection = [(obj, obj.select_get()) for obj in layer.objects]
        for obj in layer.objects:
            obj.select_set(obj.visible_get())
        which["selected_objects_only"] = True
    if on_frame is not None:
        bpy.app.handlers.frame_change_post.append(on_frame)
    try:
        if frame_range is not None:
            scene.frame_start, scene.frame_end = frame_range.start, frame_range.end
        run_exporter(
            "USD",
            bpy.ops.wm.usd_export,
            filepath=filepath,
            export_animation=frame_range is not None,
            export_armatures=True,
            **which,
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
        if on_frame is not None:
            bpy.app.handlers.frame_change_post.remove(on_frame)
        for obj, was in selection or ():
            obj.select_set(was)
        scene.frame_start, scene.frame_end = saved[0], saved[1]
        scene.frame_set(saved[2], subframe=saved[3])


class _ExportFrames:
    """Blender's worlds and skinned meshes' points at every frame the exporter evaluates,
    read in a ``frame_change_post`` handler from the exporter's own depsgraph while it
    writes the file (no evaluation pass of our own: Blender's USD exporter evaluates
    each frame anyway, and an evaluation is most of a frame's cost). The nodes are
    :func:`..reading.read_nodes`' (objects, then each armature's pose bones); bones are
    their armature's world times their pose matrices, as the frame reader has them."""

    def __init__(self, scene, frames: list[int], meshes: list):
        self.objects = list(scene.objects)
        nodes = read_nodes(self.objects, verify=False)
        self.keys, self.parents = nodes.keys, nodes.parents
        self.armatures = [(i, obj, len(obj.pose.bones)) for i, obj in enumerate(self.objects) if _has_bones(obj)]
        self.meshes = meshes
        self.wanted = {int(f) for f in frames}
        self.worlds: dict[int, np.ndarray] = {}
        self.points: dict[int, list[np.ndarray]] = {}

    def __call__(self, scene, depsgraph=None) -> None:
        frame = int(scene.frame_current)
        if depsgraph is None or scene.frame_subframe or frame not in self.wanted:
            return
        n_obj = len(self.objects)
        world = np.empty((len(self.keys), 4, 4))
        evaluated = [obj.evaluated_get(depsgraph) for obj in self.objects]
        for i, ev in enumerate(evaluated):
            world[i] = np.array(ev.matrix_world, dtype=np.float64)
        at = n_obj
        for i, _obj, count in self.armatures:
            buf = np.empty(count * 16, dtype=np.float32)
            evaluated[i].pose.bones.foreach_get("matrix", buf)
            pose = buf.reshape(count, 4, 4).transpose(0, 2, 1).astype(np.float64)
            world[at : at + count] = world[i] @ pose
            at += count
        world[:, 3] = (0.0, 0.0, 0.0, 1.0)
        self.worlds[frame] = world
        self.points[frame] = [_world_points(obj.evaluated_get(depsgraph)) for obj in self.meshes]

    def series(self, frames: list[int], fps: float) -> FrameSeries | None:
        """The frames read as a :class:`FrameSeries` (boxes left at zero: the export
        compares matrices and points), or None when the exporter did not evaluate one
        of ``frames`` (a still export changes no frame)."""
        if not all(int(f) in self.worlds for f in frames):
            return None
        world = np.stack([self.worlds[int(f)] for f in frames])
        boxes = np.zeros(world.shape[:2] + (3,))
        return FrameSeries(
            np.asarray(frames, dtype=np.int64), list(self.keys), self.parents.copy(), world, boxes, boxes, fps
        )


def _has_bones(obj) -> bool:
    return obj.type == "ARMATURE" and obj.pose is not None and len(obj.pose.bones) > 0


def _world_points(evaluated) -> np.ndarray:
    """``(V, 3)`` the evaluated mesh's vertices in world space."""
    mesh = evaluated.to_mesh()
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    world = np.array(evaluated.matrix_world, dtype=np.float64)
    evaluated.to_mesh_clear()
    return co.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]


class _PointsReader:
    """The scene seen by :func:`..frames.read_frames`, reading after every frame change
    the evaluated world points of ``meshes`` into ``points[frame]`` (the frames the
    exporter's handler did not see: a still export)."""

    def __init__(self, scene, meshes: list):
        self._scene = scene
        self._meshes = meshes
        self.points: dict[int, list[np.ndarray]] = {}

    def frame_set(self, frame, subframe=0.0):
        self._scene.frame_set(frame, subframe=subframe)
        if subframe:
            return
        depsgraph = bpy.context.evaluated_depsgraph_get()
        self.points[int(frame)] = [_world_points(obj.evaluated_get(depsgraph)) for obj in self._meshes]

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
    again: bool = True,
    choice: ExportChoice | None = None,
) -> UsdResult:
    """Export ``scene`` to ``out`` (.usd, .usda or .usdc) exact at every frame of
    ``frame_range`` (None: the current frame) and check it (see the module docstring).
    The one implementation behind the command line, the panel and File > Export.
    Written whole or not at all; the scene is unchanged. ``fix`` False: Blender's file
    as it is, only read back (for measuring). ``again``: start the usd-core process of
    the next export now (a session that exports again; the command line, which exports
    once, says False). ``choice``: which objects and bones (None: the exporter's default,
    visible objects, and ``only_deform_bones``)."""
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
    worker = start_worker()  # its start-up (Python, numpy, pxr) overlaps Blender's export
    try:
        return _write_usd(scene, out, frame_range, thresholds, xform_op_mode, only_deform_bones, fix, worker, choice)
    finally:
        worker.close()
        if again:
            prepare_next()


def _write_usd(
    scene, out, frame_range, thresholds, xform_op_mode, only_deform_bones, fix, worker, choice=None
) -> UsdResult:
    seconds: dict[str, float] = {}
    frames = frame_range.frames() if frame_range else [scene.frame_current]
    fps = scene.render.fps / scene.render.fps_base
    skinned, not_checked = engine_ignored(scene)
    meshes = [o for o in scene.objects if o.name in skinned and o.type == "MESH"]
    bbone = {obj.name: _bbone_vertices(obj) for obj in meshes}
    during = _ExportFrames(scene, frames, meshes) if frame_range is not None else None
    result: dict = {}

    def write(tmp: str) -> None:
        t0 = time.perf_counter()
        export_usd(
            tmp,
            frame_range,
            xform_op_mode=xform_op_mode,
            only_deform_bones=only_deform_bones,
            on_frame=during,
            choice=choice,
        )
        t1 = time.perf_counter()
        seconds["blender_export"] = t1 - t0
        series = during.series(frames, fps) if during is not None else None
        if series is None:  # a still export: the frame read here
            reader = _PointsReader(scene, meshes)
            series = read_frames(reader, frames, objects=scene.objects)
            points = reader.points
        else:
            points = during.points
            check_finite(series)  # named by node and frame, before usd-core meets it unnamed
        result["series"] = series
        result["points"] = {obj.name: np.stack([points[f][k] for f in frames]) for k, obj in enumerate(meshes)}
        t2 = time.perf_counter()
        seconds["frames_read"] = t2 - t1
        worker.request(tmp, scene_request(series, skinned), fix=fix, shear_deg=thresholds.shear_deg)
        result["read"] = worker.result()
        seconds["correct_and_read"] = time.perf_counter() - t2

    write_with(out, write)
    read, series, points = result["read"], result["series"], result["points"]
    t3 = time.perf_counter()
    errors = compare(read, series.keys, series.world, points, bbone)
    seconds["compare"] = time.perf_counter() - t3
    done = read.done
    seconds.update({f"usd_{k}": v for k, v in done.get("seconds", {}).items()})
    helpers = [node_label(s["armature"], b) for s in done.get("skeletons", []) for b in s.get("helpers", [])]
    moved = [node_label(s["armature"], b) for s in done.get("skeletons", []) for b in s.get("reparented", [])]
    for s in done.get("skeletons", []):
        for token in s.get("unmatched", []):
            not_checked.append((f"{s.get('armature', '?')} joint {token}", "no bone of that name: not corrected"))
    for name in sorted(set(points) - set(errors.points)):
        not_checked.append((name, "its points in the file do not match Blender's mesh: not compared"))
    with_bbones = sorted(name for name, mask in bbone.items() if mask.any())
    return UsdResult(errors, frames, done.get("matrix_ops", []), helpers, moved, with_bbones, not_checked, seconds)
