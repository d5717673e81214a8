"""How the FBX exports' data moves between the layers: every package function that runs
during one ``write_fbx`` (and ``write_fbx_accumulated``) on the benchmark scenes,
recorded with a profile hook (not timed: the hook slows everything down).

    python benchmarks/fbx_flow.py [--frames 24] [--only a,b,c]

Per export and scene:

- modules: the package modules whose functions ran, per layer (scene / model / core);
- scene -> model and model -> scene: calls crossing between the Blender layer and the
  Blender-free one, as distinct call edges (caller function -> callee function) and as
  calls made (a call in a per-node loop counts once per node); model -> scene are
  callbacks (the model calling back into Blender code it was handed);
- scene -> core: calls from the Blender layer straight into the numpy core;
- scene functions calling the model: how many places of the Blender layer hand data to
  the Blender-free one or take it back (a reader following the export goes back and forth
  that often).

A call's caller is the nearest package frame below it (Blender's exporter calling a
frame handler of ours counts as the function that started the exporter).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter

import bpy
from bench_common import markdown_table
from bench_export import SCENES
from hierarchy_inspector.addon.model.frames import FrameRange
from hierarchy_inspector.addon.scene.exports.fbx_accumulated import write_fbx_accumulated
from hierarchy_inspector.addon.scene.exports.fbx_export import write_fbx

PACKAGE = "hierarchy_inspector"


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[1:2] == ["core"]:
        return "core"
    return parts[2] if parts[1:2] == ["addon"] and len(parts) > 2 else "root"


class Flow:
    """The calls between package functions seen while it is installed as the profile hook."""

    def __init__(self):
        self.modules: set[str] = set()
        self.edges: Counter = Counter()  # ((caller module, caller function), (callee module, callee function)) -> calls

    def __call__(self, frame, event, _arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(PACKAGE):
            return
        self.modules.add(module)
        back = frame.f_back
        while back is not None and not back.f_globals.get("__name__", "").startswith(PACKAGE):
            back = back.f_back
        if back is None:
            return
        caller = (back.f_globals["__name__"], back.f_code.co_qualname)
        self.edges[(caller, (module, frame.f_code.co_qualname))] += 1

    def run(self, fn):
        sys.setprofile(self)
        try:
            return fn()
        finally:
            sys.setprofile(None)

    def crossing(self, a: str, b: str) -> tuple[int, int]:
        """Distinct edges and calls from layer ``a`` to layer ``b``."""
        hits = [n for ((m1, _f1), (m2, _f2)), n in self.edges.items() if layer(m1) == a and layer(m2) == b]
        return len(hits), sum(hits)

    def callers(self, a: str, b: str) -> int:
        """Distinct functions of layer ``a`` that call into layer ``b``."""
        return len({c for c, (m2, _f2) in self.edges if layer(c[0]) == a and layer(m2) == b})


def row(name: str, short: str, flow: Flow) -> list[str]:
    per_layer = Counter(layer(m) for m in flow.modules)
    fmt = "{} ({:,})".format
    return [
        name,
        short,
        f"{len(flow.modules)}: {per_layer['scene']} / {per_layer['model']} / {per_layer['core']}",
        fmt(*flow.crossing("scene", "model")),
        fmt(*flow.crossing("model", "scene")),
        fmt(*flow.crossing("scene", "core")),
        str(flow.callers("scene", "model")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=24)
    parser.add_argument("--only", default="a,b,c", help="scenes by letter, comma-separated")
    args = parser.parse_args()
    wanted = {f"({s.strip()})" for s in args.only.split(",")}
    frame_range = FrameRange(1, args.frames, 1)
    rows = []
    modules: dict[str, set] = {}
    with tempfile.TemporaryDirectory() as folder:
        for _label, short, build in SCENES:
            if short not in wanted:
                continue
            for name, export in (("exact", write_fbx), ("accumulated", write_fbx_accumulated)):
                bpy.ops.wm.read_factory_settings(use_empty=True)
                scene = bpy.context.scene
                build(scene, args.frames)
                out = os.path.join(folder, f"{name}.fbx")
                flow = Flow()
                flow.run(lambda export=export, scene=scene, out=out: export(scene, out, frame_range, again=False))
                rows.append(row(name, short, flow))
                modules.setdefault(name, set()).update(flow.modules)
    headers = (
        "export",
        "scene",
        "modules run: scene / model / core",
        "scene -> model: edges (calls)",
        "model -> scene: edges (calls)",
        "scene -> core: edges (calls)",
        "scene functions calling the model",
    )
    print(f"\nFBX exports' data flow, frames 1..{args.frames}\n")
    print(markdown_table(headers, rows))
    for name, mods in modules.items():
        listed = sorted(m.removeprefix(PACKAGE + ".") for m in mods if layer(m) in ("scene", "model"))
        print(f"\n{name}: the scene and model modules run ({len(listed)}): {', '.join(listed)}")


if __name__ == "__main__":
    main()
