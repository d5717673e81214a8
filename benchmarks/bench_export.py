"""Animated glTF and FBX export in real Blender (bpy from PyPI): Blender's exporters as
they are against ours (the same exporters, then animated helper nodes, or the FBX
export-ready copy, and the read-back check), on the same scenes and frames.

    python benchmarks/bench_export.py [--frames 60] [--repeat 3] [--only {gltf,fbx,usd}]

Scenes: (a) a generated Rigify human rig, torso squashing and stretching 10 of every 30
frames, a skinned mesh on its deform bones; (b) objects under a parent with animated
non-uniform scale and bones in every Inherit Scale mode under an animated, scaled
parent bone (``addon/scene/exports/scenes.py``), saved at frame 10; (c) 300 objects
whose parents animate non-uniform scale and rotation. Per scene, in one run:

- seconds (best of --repeat, the two run in turn each round): Blender's plain animated
  export; ours (Blender's export plus the frames read, helpers and the check at every
  frame); ours / plain (target <= 1.5) of the bests and the median of the rounds'
  ratios; the half-frame measure (Blender at subframes, not part of the export);
- relative error of the file read back at every frame (largest matrix-entry
  difference over the largest entry), Blender's plain export vs ours; and at the half
  frames, what an engine interpolating the keys shows between frames;
- FBX: the same seconds and ratios (the two run in turn, a second apart, see
  ``_PAUSE``), with Blender's exporter on the export-ready copy against the plain file
  and our own parts (frames read and split, edits, waiting for the read-back); the same
  errors (ufbx), the largest per-node error of objects and of joints, and skinned
  vertices (the file's clusters vs Blender's evaluated mesh, every frame; also without
  the vertices of B-Bones, which FBX cannot carry).

- USD: Blender's plain USD export (``bpy.ops.wm.usd_export``) against ours (the same
  export, Blender's worlds read from its own depsgraph as it exports, then the usd-core
  process: matrix ops, helper joints, the read-back at every frame); the usd-core
  process of each export started at the end of the one before (``write_usd(again=True)``,
  a session exporting again, ``_PAUSE`` apart), as for FBX; the errors of Blender's file
  and of ours as usd-core reads them: objects and joints (relative), skinned points
  (of the mesh's bounding-box diagonal; B-Bone vertices apart).

``--only fbx`` (or ``gltf``, ``usd``) runs one format's rows.

The skinned-vertex check (every exported frame, the file's vertices skinned as an engine
skins them against Blender's evaluated mesh) on (d) an auto-weighted mesh on a generated
Rigify rig (bone heat, up to six bones a vertex, B-Bones) over --frames: Blender's
vertices read in the frames pass (with and without them), the check itself (glTF: the
file's skinning in numpy; FBX: the clusters in the ufbx process and the comparison),
against the whole export. ``--only skin`` runs these rows alone.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import bpy
import numpy as np
from bench_common import markdown_table
from hierarchy_inspector.addon.model.exports.animated_gltf import animated_error
from hierarchy_inspector.addon.model.exports.fbx_check import compare, read_fbx
from hierarchy_inspector.addon.model.exports.gltf_animation import world_matrices_at
from hierarchy_inspector.addon.model.exports.gltf_file import Gltf
from hierarchy_inspector.addon.model.frames import FrameRange
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes
from hierarchy_inspector.addon.scene.exports.fbx_export import export_fbx, write_fbx
from hierarchy_inspector.addon.scene.exports.gltf_animated import export_gltf_frames, read_subframes, write_gltf_frames
from hierarchy_inspector.addon.scene.exports.gltf_hook import engine_ignored
from hierarchy_inspector.addon.scene.exports.skinned import EvaluatedVertices, check_fbx, check_gltf, deformed_meshes
from hierarchy_inspector.addon.scene.exports.usd_export import export_usd, write_usd
from hierarchy_inspector.addon.scene.frames import read_frames
from hierarchy_inspector.addon.scene.gltf_export import gltf_conversion
from hierarchy_inspector.addon.scene.timeline import animated as animated_scenes


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(scene, frame_range: FrameRange, repeat: int, folder: str) -> list[str]:
    plain, ours = os.path.join(folder, "plain.glb"), os.path.join(folder, "ours.glb")
    plain_t, ours_t = [], []
    for _ in range(repeat):  # interleaved: a load spike on the shared machine hits both
        plain_t.append(_best(lambda: export_gltf_frames(plain, frame_range), 1))
        ours_t.append(_best(lambda: write_gltf_frames(scene, ours, frame_range, half_frames=False), 1))
    plain_s, ours_s = min(plain_t), min(ours_t)
    paired = float(np.median(np.array(ours_t) / np.array(plain_t)))
    t0 = time.perf_counter()
    result = write_gltf_frames(scene, ours, frame_range)
    half_s = result.seconds["half_frames"]
    _ = time.perf_counter() - t0
    frames = frame_range.frames()
    series = read_frames(scene, frames)
    conversion = gltf_conversion(True)
    skinned, _listed = engine_ignored(scene)
    skip = {i for i, (obj, bone) in enumerate(series.keys) if not bone and obj in skinned}
    times = series.frames / series.fps
    plain_err = animated_error(Gltf.load(plain), series.keys, series.world, times, conversion, skip)
    mids = (np.asarray(frames[:-1], dtype=np.float64) + np.asarray(frames[1:])) / 2.0
    half_world = read_subframes(scene, mids)
    plain_half = animated_error(Gltf.load(plain), series.keys, half_world, mids / series.fps, conversion, skip)
    return [
        f"{len(frames)} x {len(series.keys):,}",
        f"{len(result.helpers)}",
        f"{plain_s:.2f}",
        f"{ours_s:.2f}",
        f"**{ours_s / plain_s:.2f}**",
        f"{paired:.2f}",
        f"{half_s:.2f}",
        f"{plain_err.relative:.2e}",
        f"**{result.error.relative:.2e}**",
        f"{plain_half.relative:.2e}",
        f"{result.half_frame.relative:.2e}",
    ]


def _skinned_error(scene, read, frames) -> tuple[float, float]:
    """Largest distance (units) between the file's skinned vertices and Blender's
    evaluated meshes over the frames (as sets: the exporter may reorder vertices); the
    same without the vertices of B-Bones with segments (FBX has no B-Bones)."""
    worst = plain_bones = 0.0
    for name, placed in read.skinned.items():
        obj = scene.objects[name]
        rig = next((m.object for m in obj.modifiers if m.type == "ARMATURE" and m.object), None)
        groups = [g.name for g in obj.vertex_groups]
        for t, frame in enumerate(frames):
            scene.frame_set(frame)
            evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
            mesh = evaluated.to_mesh()
            verts = np.array([(evaluated.matrix_world @ v.co)[:] for v in mesh.vertices])
            bbone = np.array(
                [
                    bool(v.groups) and rig is not None and rig.data.bones[groups[v.groups[0].group]].bbone_segments > 1
                    for v in mesh.vertices
                ]
            )
            evaluated.to_mesh_clear()
            dist = np.linalg.norm(placed[t][:, None] - verts[None], axis=-1).min(axis=0)  # per Blender vertex
            worst = max(worst, float(dist.max()))
            if (~bbone).any():
                plain_bones = max(plain_bones, float(dist[~bbone].max()))
    return worst, plain_bones


#: Seconds between two timed FBX exports: the reader of the next export, started when
#: one ends (``write_fbx(again=True)``, a session exporting again), is up by then, as
#: it is when a user exports again; without the pause its start-up (Python, numpy,
#: ufbx) would run during the next timed export, whichever it is.
_PAUSE = 1.0


def measure_fbx(scene, frame_range: FrameRange, repeat: int, folder: str) -> list[str]:
    plain, ours = os.path.join(folder, "plain.fbx"), os.path.join(folder, "ours.fbx")
    plain_t, ours_t, parts = [], [], []
    for _ in range(repeat):  # interleaved: a load spike on the shared machine hits both
        time.sleep(_PAUSE)
        plain_t.append(_best(lambda: export_fbx(plain, frame_range), 1))
        time.sleep(_PAUSE)
        t0 = time.perf_counter()
        result = write_fbx(scene, ours, frame_range)
        ours_t.append(time.perf_counter() - t0)
        parts.append(result.seconds)
    plain_s, ours_s = min(plain_t), min(ours_t)
    paired = float(np.median(np.array(ours_t) / np.array(plain_t)))
    copy_export = float(np.median([p["blender_export"] for p in parts])) / float(np.median(plain_t))
    own = {k: float(np.median([p[k] for p in parts])) for k in ("prepare", "edits", "check")}
    frames = frame_range.frames()
    series = read_frames(scene, frames)
    skinned, _listed = engine_ignored(scene)
    skip = {i for i, (obj, bone) in enumerate(series.keys) if not bone and obj in skinned}
    times = series.frames / series.fps
    plain_read, ours_read = read_fbx(plain, times, skinned=True), read_fbx(ours, times, skinned=True)
    if plain_read is None or ours_read is None or result.error is None:
        return ["ufbx not installed", *[""] * 11]
    plain_err = compare(plain_read, series.keys, series.world, skip)
    ours_err = compare(ours_read, series.keys, series.world, skip)
    objects = [v for k, v in ours_err.per_node.items() if " > " not in k]
    joints = [v for k, v in ours_err.per_node.items() if " > " in k]
    plain_skin = _skinned_error(scene, plain_read, frames)
    ours_skin = _skinned_error(scene, ours_read, frames)
    skin = (
        f"{plain_skin[0]:.1e} / {ours_skin[0]:.1e} (no B-Bones: {plain_skin[1]:.1e} / {ours_skin[1]:.1e})"
        if ours_read.skinned
        else "-"
    )
    return [
        f"{len(result.helpers)}"
        + (f" (+{len(result.pole_helpers)} off the Euler pole)" if result.pole_helpers else ""),
        f"{len(result.not_corrected)}",
        f"{plain_s:.2f}",
        f"{ours_s:.2f}",
        f"{ours_s / plain_s:.2f}",
        f"**{paired:.2f}**",
        f"{copy_export:.2f}",
        f"{own['prepare']:.2f} / {own['edits']:.2f} / {own['check']:.2f}",
        f"{plain_err.relative:.2e}",
        f"**{ours_err.relative:.2e}**",
        f"{max(objects, default=0.0):.1e} / {max(joints, default=0.0):.1e}",
        skin,
    ]


def _usd_errors(e) -> str:
    points = "; ".join(
        f"{p.relative:.1e}" + (f" (B-Bones {p.bbone_relative:.1e})" if p.bbone_vertex >= 0 else "")
        for p in e.points.values()
    )
    return f"{e.objects.relative:.1e} / {e.joints.relative:.1e} / {points or '-'}"


def measure_usd(scene, frame_range: FrameRange, repeat: int, folder: str) -> list[str]:
    plain, ours = os.path.join(folder, "plain.usdc"), os.path.join(folder, "ours.usdc")
    write_usd(scene, ours, frame_range)  # warm up (and start the next export's usd-core process)
    plain_t, ours_t, parts = [], [], []
    for _ in range(repeat):  # interleaved: a load spike on the shared machine hits both
        time.sleep(_PAUSE)
        plain_t.append(_best(lambda: export_usd(plain, frame_range), 1))
        time.sleep(_PAUSE)
        t0 = time.perf_counter()
        result = write_usd(scene, ours, frame_range)
        ours_t.append(time.perf_counter() - t0)
        parts.append(result.seconds)
    plain_s, ours_s = min(plain_t), min(ours_t)
    paired = float(np.median(np.array(ours_t) / np.array(plain_t)))
    own = {k: float(np.median([p[k] for p in parts])) for k in ("blender_export", "correct_and_read")}
    blender = write_usd(scene, plain, frame_range, fix=False)
    return [
        f"{len(result.matrix_ops)} / {len(result.helpers)}",
        f"{plain_s:.2f}",
        f"{ours_s:.2f}",
        f"{ours_s / plain_s:.2f}",
        f"**{paired:.2f}**",
        f"{own['blender_export']:.2f} / {own['correct_and_read']:.2f}",
        _usd_errors(blender.errors),
        f"**{_usd_errors(result.errors)}**",
    ]


def measure_skin(scene, frame_range: FrameRange, folder: str) -> list[list[str]]:
    """The skinned-vertex check's parts against the whole export, glTF and FBX (seconds,
    best of 3 for the parts)."""
    frames = frame_range.frames()
    meshes = deformed_meshes(scene)
    vertices = EvaluatedVertices(meshes, len(frames))
    plain_read = _best(lambda: read_frames(scene, frames), 3)
    with_vertices = _best(lambda: read_frames(scene, frames, each_frame=vertices.read), 3)
    count = sum(len(m.data.vertices) for m in meshes)
    rows = []
    times = np.asarray(frames, dtype=np.float64) / (scene.render.fps / scene.render.fps_base)
    ours = os.path.join(folder, "skin.glb")
    t0 = time.perf_counter()
    result = write_gltf_frames(scene, ours, frame_range, half_frames=False)
    export_s = time.perf_counter() - t0
    vertices.read_static(scene, scene.frame_current)
    gltf = Gltf.load(ours)
    worlds = world_matrices_at(gltf, times)  # the export composes them once for the nodes' check and this one
    check_s = _best(lambda: check_gltf(gltf, vertices, frames, times, gltf_conversion(True), file_worlds=worlds), 3)
    worst = result.skins.worst()
    rows.append(
        [
            "glTF",
            f"{len(frames)} x {count:,}",
            f"{export_s:.2f}",
            f"{with_vertices - plain_read:.3f}",
            f"{check_s:.3f}",
            f"**{(with_vertices - plain_read + check_s) / export_s:.1%}**",
            f"{worst.relative:.1e} ('{worst.name}' vertex {worst.vertex}: {worst.cause.split(';')[0]})",
        ]
    )
    fbx_out = os.path.join(folder, "skin.fbx")
    t0 = time.perf_counter()
    result = write_fbx(scene, fbx_out, frame_range)
    export_s = time.perf_counter() - t0
    names = [m.name for m in meshes]
    bare = _best(lambda: read_fbx(fbx_out, times), 3)
    skinned_read = _best(lambda: read_fbx(fbx_out, times, skinned=names), 3)
    read = read_fbx(fbx_out, times, skinned=names)
    if read is None or result.skins is None:
        return rows + [["FBX", "ufbx not installed", *[""] * 5]]
    check_s = _best(lambda: check_fbx(read.skinned, vertices, frames), 3)
    worst = result.skins.worst()
    rows.append(
        [
            "FBX",
            f"{len(frames)} x {count:,}",
            f"{export_s:.2f}",
            f"{with_vertices - plain_read:.3f}",
            f"{skinned_read - bare:.3f} (ufbx) + {check_s:.3f}",
            f"**{(with_vertices - plain_read + skinned_read - bare + check_s) / export_s:.1%}**",
            f"{worst.relative:.1e} ('{worst.name}' vertex {worst.vertex}: {worst.cause.split(';')[0]})",
        ]
    )
    return rows


def _rigify_boxes(scene, frames: int) -> None:
    export_scenes.skin_boxes(scene, animated_scenes.stretchy_rigify(scene, frames=frames, period=30))


def _objects_and_rig(scene, frames: int) -> None:
    export_scenes.sheared_objects(scene, 1, frames)
    export_scenes.inherit_scale_rig(scene, 1, frames)
    scene.frame_set(10)


#: (label, short name, build(scene, frames)) of the glTF, FBX and USD rows' scenes.
SCENES = (
    ("Rigify human, squash & stretch, skinned", "(a)", _rigify_boxes),
    ("sheared objects + every Inherit Scale", "(b)", _objects_and_rig),
    ("300 objects, animated parents", "(c)", lambda scene, frames: animated_scenes.animated_forest(scene, 300, frames)),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only", choices=("gltf", "fbx", "usd", "skin"), help="one format's rows, or the skinned check's"
    )
    args = parser.parse_args()
    gltf, fbx, usd = args.only in (None, "gltf"), args.only in (None, "fbx"), args.only in (None, "usd")
    skin = args.only in (None, "skin")
    frame_range = FrameRange(1, args.frames, 1)
    rows: list = []
    fbx_rows: list = []
    usd_rows: list = []
    skin_rows: list = []
    with tempfile.TemporaryDirectory() as folder:
        if skin:
            bpy.ops.wm.read_factory_settings(use_empty=True)
            scene = bpy.context.scene
            rig = animated_scenes.stretchy_rigify(scene, frames=args.frames, period=30, wiggle=True)
            export_scenes.auto_weighted_body(scene, rig)
            scene.frame_set(1)
            skin_rows = measure_skin(scene, frame_range, folder)
        for label, short, build in SCENES if gltf or fbx or usd else ():
            bpy.ops.wm.read_factory_settings(use_empty=True)
            scene = bpy.context.scene
            build(scene, args.frames)
            if gltf:
                rows.append([f"{short} {label}", *measure(scene, frame_range, args.repeat, folder)])
            if fbx:
                fbx_rows.append([short, *measure_fbx(scene, frame_range, args.repeat, folder)])
            if usd:
                usd_rows.append([short, *measure_usd(scene, frame_range, args.repeat, folder)])

    if skin:
        print(
            f"\nSkinned-vertex check: (d) auto-weighted mesh on a generated Rigify rig, frames 1..{args.frames}; "
            "seconds (parts: best of 3)\n"
        )
        skin_headers = (
            "format",
            "frames x vertices",
            "whole export (ours)",
            "Blender's vertices read in the frames pass",
            "the check",
            "check / export",
            "worst vertex (of the mesh's size)",
        )
        print(markdown_table(skin_headers, skin_rows))
    if gltf:
        print(f"\nAnimated glTF export: frames 1..{args.frames}; seconds, best of {args.repeat}\n")
        headers = (
            "scene",
            "frames x nodes",
            "helpers",
            "Blender plain",
            "ours",
            "ours / plain",
            "ours / plain, median of rounds",
            "half-frame measure",
            "error plain",
            "error ours",
            "half-frame error plain",
            "half-frame error ours",
        )
        print(markdown_table(headers, rows))
    if fbx:
        print(
            f"\nFBX (export-ready copy; read back with ufbx): frames 1..{args.frames}; seconds, best of {args.repeat}"
            f" (the two run in turn, {_PAUSE:.0f} s apart)\n"
        )
        fbx_headers = (
            "scene",
            "helpers (objects and bones)",
            "not corrected",
            "Blender plain",
            "ours",
            "ours / plain",
            "ours / plain, median of rounds",
            "Blender's export of the copy / plain (medians)",
            "ours: frames read and split / edits / waiting for the check (medians)",
            "error plain",
            "error ours",
            "max error ours, objects / joints (units)",
            "skinned vertices plain / ours (units)",
        )
        print(markdown_table(fbx_headers, fbx_rows))
    if usd:
        print(
            f"\nUSD (Blender's exporter, then usd-core; read back with usd-core): frames 1..{args.frames}; seconds, "
            f"best of {args.repeat} (the two run in turn, {_PAUSE:.0f} s apart)\n"
        )
        usd_headers = (
            "scene",
            "matrix ops / helper joints",
            "Blender plain",
            "ours",
            "ours / plain",
            "ours / plain, median of rounds",
            "ours: Blender's export (worlds read in it) / usd-core correct and read (medians)",
            "error plain: objects / joints / points",
            "error ours: objects / joints / points",
        )
        print(markdown_table(usd_headers, usd_rows))


if __name__ == "__main__":
    main()
