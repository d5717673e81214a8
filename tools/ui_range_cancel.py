"""Run inside Blender with a window (tests/window/test_range_cancel.py starts it): the
installed extension's range scan started as a user starts it (modal, INVOKE_DEFAULT),
then Esc sent through Blender's event simulation while it reads; writes OUTDIR/cancel.json
(the frame before, during and after, whether the scan finished, the operator's reports)
and quits.

    blender --enable-event-simulate --python tools/ui_range_cancel.py -- OUTDIR
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

import bpy

MODULE = os.environ.get("HIERARCHY_INSPECTOR_MODULE") or "bl_ext.user_default.hierarchy_inspector"
OUT = Path(sys.argv[sys.argv.index("--") + 1]).resolve()
START_FRAME = 4


def finish(result: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cancel.json").write_text(json.dumps(result, indent=1) + "\n")
    sys.stdout.flush()
    os._exit(0)


def main() -> None:
    import addon_utils

    state: dict = {"step": 0, "result": {}}

    def tick():
        try:
            window = bpy.context.window_manager.windows[0]
            scene = window.scene
            if state["step"] == 0:
                if not addon_utils.check(MODULE)[1]:
                    addon_utils.enable(MODULE, default_set=True)
                animated = importlib.import_module(f"{MODULE}.addon.scene.timeline.animated")
                animated.animated_forest(scene, n=3000, frames=250)
                scene.frame_set(START_FRAME)
                area = next(a for a in window.screen.areas if a.type == "VIEW_3D") if window.screen else None
                with bpy.context.temp_override(window=window, area=area):
                    state["result"]["invoke"] = sorted(
                        bpy.ops.hierarchy_inspector.scan_range("INVOKE_DEFAULT", scope="SCENE")
                    )
                state["started"] = time.monotonic()
                state["step"] = 1
                return 0.05
            if state["step"] == 1:
                if time.monotonic() - state["started"] < 3.0:
                    return 0.05
                state["result"]["running"] = [op.bl_idname for op in window.modal_operators]
                state["result"]["frame_while_reading"] = scene.frame_current
                window.event_simulate(type="ESC", value="PRESS")
                window.event_simulate(type="ESC", value="RELEASE")
                state["step"] = 2
                return 0.5
            frames = scene.hierarchy_inspector_frames
            state["result"].update(
                frame_after=scene.frame_current,
                range_done=bool(frames.range_done),
                running_after=[op.bl_idname for op in window.modal_operators],
                start_frame=START_FRAME,
            )
            finish(state["result"])
        except Exception:
            finish({"error": traceback.format_exc()})
        return None

    bpy.app.timers.register(tick, first_interval=0.5)


main()
