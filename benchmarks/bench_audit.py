"""Audit throughput in real Blender (bpy from PyPI): files per minute with --jobs 1 and
--jobs N side by side, and the cost per file against opening the same file in a fresh
Blender process and doing nothing.

    python benchmarks/bench_audit.py [--files 200] [--jobs 2] [--baseline 40]

Generates --files small .blend files (30 objects each, random non-uniform scales and
rotations: most files have flagged nodes, so each worker also draws its picture), then
times ``audit --jobs 1`` and ``audit --jobs N`` over them, and ``--baseline`` of them
opened one by one in fresh processes that do nothing else. Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import bpy
import numpy as np
from bench_common import markdown_table
from hierarchy_inspector.addon.cli import console

OPEN_ONLY = "import sys, bpy; bpy.ops.wm.open_mainfile(filepath=sys.argv[1], load_ui=False)"


def generate(folder: str, count: int, rng) -> list[str]:
    paths = []
    for k in range(count):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        scene = bpy.context.scene
        mesh = bpy.data.meshes.new("box")
        mesh.from_pydata([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], [], [])
        objs = []
        for i in range(30):
            obj = bpy.data.objects.new(f"O{i}", mesh)
            scene.collection.objects.link(obj)
            if i and rng.random() < 0.8:
                obj.parent = objs[int(rng.integers(0, i))]
            obj.location = rng.normal(size=3)
            obj.rotation_euler = rng.uniform(-3, 3, size=3)
            obj.scale = rng.uniform(0.5, 2, size=3)
            objs.append(obj)
        path = os.path.join(folder, f"set_{k // 50:02d}", f"asset_{k:04d}.blend")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, compress=False)
        paths.append(path)
    return paths


def timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd[:4])}... failed ({result.returncode}): {result.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--baseline", type=int, default=40, help="files opened alone, for the per-file baseline")
    args = parser.parse_args()
    rng = np.random.default_rng(13)
    with tempfile.TemporaryDirectory(prefix="bench_audit_") as tmp:
        library = os.path.join(tmp, "library")
        console.start(verbose=False)  # Blender's "Saved copy as" per file
        try:
            paths = generate(library, args.files, rng)
        finally:
            console.stop()
        audit = [sys.executable, "-m", "hierarchy_inspector", "audit", library]
        one = timed([*audit, "--out", os.path.join(tmp, "jobs1"), "--jobs", "1"])
        many = timed([*audit, "--out", os.path.join(tmp, "jobsN"), "--jobs", str(args.jobs)])
        sample = paths[: args.baseline]
        bare = sum(timed([sys.executable, "-c", OPEN_ONLY, p]) for p in sample) / len(sample)
    n = args.files
    per_one, per_many = one / n, many / n
    rows = [
        ("audit --jobs 1", f"{one:.1f}", f"{60 * n / one:.0f}", f"{1000 * per_one:.0f}", "1.00"),
        (
            f"audit --jobs {args.jobs}",
            f"{many:.1f}",
            f"{60 * n / many:.0f}",
            f"{1000 * per_many:.0f}",
            f"{one / many:.2f}",
        ),
        (
            "fresh process, open the file, nothing else",
            "",
            f"{60 / bare:.0f}",
            f"{1000 * bare:.0f}",
            "",
        ),
    ]
    print(f"Audit of {n} generated files (30 objects each), {os.cpu_count()} CPUs, Blender {bpy.app.version_string}")
    print(markdown_table(("run", "seconds", "files / minute", "ms / file", "speed-up vs --jobs 1"), rows))
    print(
        f"\nper-file overhead of the audit over opening the file and doing nothing: "
        f"{1000 * (per_one - bare):.0f} ms ({per_one / bare:.2f}x), --jobs 1"
    )


if __name__ == "__main__":
    main()
