"""Frame ranges in real Blender (bpy from PyPI): inspecting every frame of a range against
Blender's own cost of evaluating those frames.

    python benchmarks/bench_frames.py [--objects 2000] [--frames 250] [--repeat 3]

Four scenes (``addon/scene/timeline/animated.py``): (a) a forest of N objects whose parents
animate non-uniform scale and rotation, (b) a generated Rigify human rig whose torso
stretches non-uniformly for 10 of every 30 frames, (b') the same with the rig's root
moving at every frame (no frame repeats the one before), (c) the same with every control
bone rotating too (random keys every 5 frames: every bone's pose changes at every frame,
as in a walk cycle). Per scene, in one run (seconds, best of --repeat interleaved rounds):

- bare: ``scene.frame_set`` over the range, nothing else (Blender's evaluation);
- read: the range read into ``(T, N, 4, 4)`` (``scene.frames.read_frames``: the same
  ``frame_set`` plus bulk ``foreach_get`` per frame);
- analyse: all T x N node-frames analysed together (``model.timeline.analyse_frames``);
- inspected / bare = (read + analyse) / bare (target <= 1.3), analyse / bare (target < 0.1).
"""

from __future__ import annotations

import argparse
import math
import time

import bpy
from bench_common import best_ms, markdown_table
from hierarchy_inspector.addon.model.timeline import analyse_frames
from hierarchy_inspector.addon.scene.frames import read_frames
from hierarchy_inspector.addon.scene.timeline import animated as animated_scenes


def measure(scene, frames: list[int], repeat: int) -> list[str]:
    def bare():
        for f in frames:
            scene.frame_set(f)
        scene.frame_set(frames[0])

    # Interleaved (bare, read, analyse) rounds, best of each: on a shared machine the
    # three see the same load, so their ratios hold.
    bare_ms = read_ms = analyse_ms = math.inf
    for _ in range(repeat):
        bare_ms = min(bare_ms, best_ms(bare, 1))
        start = time.perf_counter()
        series = read_frames(scene, frames)
        middle = time.perf_counter()
        over = analyse_frames(series)
        end = time.perf_counter()
        read_ms, analyse_ms = min(read_ms, 1e3 * (middle - start)), min(analyse_ms, 1e3 * (end - middle))
    t, n = series.world.shape[:2]
    total = read_ms + analyse_ms
    return [
        f"{t} x {n:,}",
        f"{int(over.flagged.sum()):,}",
        f"{bare_ms / 1e3:.2f}",
        f"{read_ms / 1e3:.2f}",
        f"{analyse_ms / 1e3:.2f}",
        f"{total / 1e3:.2f}",
        f"**{total / bare_ms:.2f}**",
        f"{read_ms / bare_ms:.2f}",
        f"**{analyse_ms / bare_ms:.2f}**",
        f"{1e6 * analyse_ms / 1e3 / (t * n):.2f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frames = list(range(1, args.frames + 1))
    rows = []

    bpy.ops.wm.read_factory_settings(use_empty=True)
    animated_scenes.animated_forest(bpy.context.scene, n=args.objects, frames=args.frames)
    rows.append([f"(a) {args.objects:,} objects, animated parents", *measure(bpy.context.scene, frames, args.repeat)])

    bpy.ops.wm.read_factory_settings(use_empty=True)
    animated_scenes.stretchy_rigify(bpy.context.scene, frames=args.frames, period=30)
    rows.append(
        ["(b) Rigify human, torso stretching 10 of every 30 frames", *measure(bpy.context.scene, frames, args.repeat)]
    )

    bpy.ops.wm.read_factory_settings(use_empty=True)
    animated_scenes.stretchy_rigify(bpy.context.scene, frames=args.frames, period=30, walk=True)
    rows.append(
        ["(b') the same, and the rig's root moving every frame", *measure(bpy.context.scene, frames, args.repeat)]
    )

    bpy.ops.wm.read_factory_settings(use_empty=True)
    animated_scenes.stretchy_rigify(bpy.context.scene, frames=args.frames, period=30, walk=True, wiggle=True)
    rows.append(
        [
            "(c) the same, and every control bone rotating (every bone's pose changes every frame)",
            *measure(bpy.context.scene, frames, args.repeat),
        ]
    )

    print(f"\nFrame ranges: {args.frames} frames; seconds, best of {args.repeat}\n")
    headers = (
        "scene",
        "frames x nodes",
        "flagged",
        "bare frame_set",
        "read",
        "analyse",
        "inspected",
        "inspected / bare",
        "read / bare",
        "analyse / bare",
        "analyse us per node-frame",
    )
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
