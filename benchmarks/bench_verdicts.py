"""The export command's verdicts on scenes built the way users build them
(tests/user_scenes.py), run as a user runs them (``python -m hierarchy_inspector
export``, one process each): exit code, the nodes' read-back error, the skinned
vertices' worst, the file's size, and what the file really is (``truth``: exact, or off
and why), so that a false alarm (exit 1 on an exact file) or a missed error (exit 0 on a
file that is off) shows in one table.

    python benchmarks/bench_verdicts.py [--rigify]

``--rigify`` adds a generated Rigify rig with an auto-weighted mesh (B-Bones), 60 frames
(about a minute). Run it from another checkout (``PYTHONPATH`` first) to compare."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

import bpy
from bench_common import markdown_table

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import user_scenes  # noqa: E402


def _infinite(scene) -> None:
    obj = bpy.data.objects.new("Broken", None)
    scene.collection.objects.link(obj)
    obj.scale = (float("inf"), 1.0, 1.0)


def _no_child(scene) -> None:
    user_scenes.cameras_and_lights(scene, animated=True)
    bpy.data.objects.remove(scene.objects["CamChild"])


def _rigify(scene) -> None:
    from hierarchy_inspector.addon.scene.exports import scenes as export_scenes
    from hierarchy_inspector.addon.scene.timeline import animated

    rig = animated.stretchy_rigify(scene, frames=60, period=30, wiggle=True)
    export_scenes.auto_weighted_body(scene, rig)
    scene.frame_set(1)


#: (name, builder, [(target, extra args, truth)])
CASES = [
    (
        "cameras and lights",
        _no_child,
        [("fbx", [], "exact"), ("fbx", ["--frames", "1:10"], "exact"), ("gltf", ["--frames", "1:10"], "exact")],
    ),
    (
        "an empty parented to a camera",
        lambda s: user_scenes.cameras_and_lights(s),
        [("fbx", [], "off: Blender's FBX exporter leaves the camera turn on its child")],
    ),
    *[
        (f"unit scale {scale:g}", lambda s, v=scale: user_scenes.unit_scaled(s, v), [("fbx", [], "exact")])
        for scale in (0.01, 0.1, 1.0)
    ],
    ("instanced character", lambda s: user_scenes.instanced_character(s), [("gltf", [], "exact")]),
    ("infinite scale", _infinite, [("fbx", [], "off: infinite")]),
    ("moving cube, --frames 3:3", user_scenes.moving_cube, [("gltf", ["--frames", "3:3"], "exact")]),
    (
        "IK legs (iTaSC), thighs 5e-4 deg",
        lambda s: user_scenes.ik_legs(s, 1.0),
        [("fbx", [], "exact (plain 1.3e-6)"), ("gltf", [], "exact")],
    ),
    (
        "IK legs (iTaSC), hips 1.0002: 8e-3 deg",
        lambda s: user_scenes.ik_legs(s, 1.0002),
        [("fbx", [], "plain 2.0e-5 (the thighs' shear)")],
    ),
    (
        "six weights per vertex",
        user_scenes.six_weights,
        [
            ("gltf", ["--frames", "1:24"], "off: 4 influences kept of 6"),
            ("gltf", ["--frames", "1:24", "--all-influences"], "exact"),
            ("fbx", ["--frames", "1:24"], "exact"),
        ],
    ),
]
RIGIFY = (
    "Rigify, auto-weighted mesh (B-Bones)",
    _rigify,
    [("gltf", ["--frames", "1:60"], "off: B-Bone segments"), ("fbx", ["--frames", "1:60"], "off: B-Bone segments")],
)


def _number(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    return found.group(1) if found else "-"


def run_case(folder: str, name: str, build, runs) -> list[list[str]]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    build(bpy.context.scene)
    blend = os.path.join(folder, "scene.blend")
    user_scenes.save(blend)
    rows = []
    for target, extra, truth in runs:
        out = os.path.join(folder, f"out.{'glb' if target == 'gltf' else 'fbx'}")
        if os.path.exists(out):
            os.remove(out)
        command = [sys.executable, "-m", "hierarchy_inspector", "export", blend, "--target", target, "--out", out]
        done = subprocess.run([*command, *extra], capture_output=True, text=True, timeout=900)
        text = done.stdout + done.stderr
        nodes = _number(r"relative error ([0-9.e+-]+|nan|inf)", done.stdout)
        skin = _number(r"skinned vertices read back .*?\(([0-9.e+-]+|nan) of its size", done.stdout)
        size = f"{os.path.getsize(out) / 1e6:.3f}" if os.path.exists(out) else "-"
        why = "" if done.returncode in (0, 1) else text.strip().splitlines()[-1][:60]
        rows.append([name, f"{target} {' '.join(extra)}".strip(), truth, str(done.returncode), nodes, skin, size, why])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rigify", action="store_true", help="add the generated Rigify rig (about a minute)")
    args = parser.parse_args()
    rows: list = []
    with tempfile.TemporaryDirectory() as folder:
        for name, build, runs in [*CASES, *([RIGIFY] if args.rigify else [])]:
            rows += run_case(folder, name, build, runs)
    headers = ("scene", "export", "the file is", "exit", "nodes (relative)", "skinned (of size)", "MB", "note")
    print(markdown_table(headers, rows))


if __name__ == "__main__":
    main()
