"""Audit throughput in real Blender (bpy from PyPI): files per minute with --jobs 1 and
--jobs N side by side, against one Blender process per file (how the audit ran before
issue 24: ``audit-file`` in a fresh process for every file) and against opening the
file in a fresh process and doing nothing.

    python benchmarks/bench_audit.py [--files 200] [--jobs 2] [--baseline 40]

Generates --files small .blend files (30 objects each, random non-uniform scales and
rotations: almost every file has flagged nodes), then times ``audit --jobs 1`` and
``audit --jobs N`` over them (workers audit many files in turn; the worst 12 flagged
files' pictures are drawn at the end), and ``--baseline`` of them one by one in fresh
processes: ``audit-file`` with its picture (the earlier worker's whole job) and an
open that does nothing else. Prints one Markdown table; the speed-ups are against the
process-per-file row, measured in the same run (the machine's load is shared).
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
        with console.quiet():  # Blender's "Saved copy as" per file
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
        worker = [sys.executable, "-m", "hierarchy_inspector", "audit-file"]
        result, picture = os.path.join(tmp, "one.json"), os.path.join(tmp, "one.png")
        alone = sum(timed([*worker, p, "--result", result, "--picture", picture]) for p in sample) / len(sample)
        bare = sum(timed([sys.executable, "-c", OPEN_ONLY, p]) for p in sample) / len(sample)
    n = args.files
    per_one, per_many = one / n, many / n

    def row(what, seconds, per_file, files=""):
        return (what, f"{seconds:.1f}" if seconds else "", f"{60 / per_file:.0f}", f"{1000 * per_file:.0f}", files)

    rows = [
        row(f"one process per file (before issue 24), {len(sample)} files", 0, alone, "1.00"),
        row("audit --jobs 1", one, per_one, f"{alone / per_one:.2f}"),
        row(f"audit --jobs {args.jobs}", many, per_many, f"{alone / per_many:.2f}"),
        row("fresh process, open the file, nothing else", 0, bare),
    ]
    print(f"Audit of {n} generated files (30 objects each), {os.cpu_count()} CPUs, Blender {bpy.app.version_string}")
    print(markdown_table(("run", "seconds", "files / minute", "ms / file", "speed-up vs a process per file"), rows))
    print(
        f"\n--jobs {args.jobs} against --jobs 1: {one / many:.2f}x; --jobs 1 per file against a bare open in a "
        f"fresh process: {per_one / bare:.2f}x"
    )


if __name__ == "__main__":
    main()
