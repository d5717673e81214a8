"""Operators of the frame range: scan it (modal, with progress; Esc cancels and the scene
goes back to its frame), jump to a node's worst frame, sample the dynamics here."""

from __future__ import annotations

import time

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

from ..model.errors import InspectorError
from ..scene import settings
from ..scene.selection import select_node
from ..scene.timeline import live as live_frames
from .operators_inspect import needs_active_node

#: Seconds of reading per timer tick: the UI stays responsive between ticks.
TICK_BUDGET = 0.05


def fill_range_list(frame_settings, view: live_frames.RangeView) -> None:
    """Store the nodes flagged at some frame of the range, worst first."""
    over = view.over
    items = frame_settings.range_items
    items.clear()
    for i in over.worst_first():
        item = items.add()
        item.object_name, item.bone_name = over.series.keys[i]
        item.worst_frame = int(over.worst_frame[i])
        item.flagged_frames = int(over.flagged_frame_count[i])
        item.max_corner = float(over.corner_max[i])
        item.shear_deg = float(over.shear_max[i])
        item.local_shear_deg = float(over.local_shear_max[i])
    r = view.frame_range
    frame_settings.range_done = True
    frame_settings.range_nodes = len(over.series.keys)
    frame_settings.range_seconds = view.seconds
    what = "chain" if view.scope == live_frames.CHAIN else "scene"
    frame_settings.range_label = f"{what}, frames {r.start}..{r.end}" + (f" step {r.step}" if r.step > 1 else "")
    frame_settings["range_index"] = -1  # set without selecting anything


class HI_OT_scan_range(bpy.types.Operator):
    """Inspect every frame of the range: per node its worst frame and the largest shear and deviation (Esc cancels)"""

    bl_idname = "hierarchy_inspector.scan_range"
    bl_label = "Scan frame range"
    bl_options = {"REGISTER"}

    scope: EnumProperty(  # type: ignore[valid-type]
        name="Scope",
        items=(
            ("CHAIN", "Active chain", "The chain from the root to the active object or bone"),
            ("SCENE", "Scene", "Every object and bone of the scene"),
        ),
        default="SCENE",
    )

    #: One range scan at a time (two would move the same timeline).
    running = False

    @classmethod
    def poll(cls, context):
        if context.scene is None:
            cls.poll_message_set("No scene to scan")
            return False
        if HI_OT_scan_range.running:
            cls.poll_message_set("A range scan is running (Esc cancels it)")
            return False
        return True

    def _start(self, context) -> None:
        frame_settings = context.scene.hierarchy_inspector_frames
        self.frame_range = live_frames.frame_range_of(context.scene, frame_settings)
        self.reader = live_frames.start_reader(context, self.scope, self.frame_range)
        self.started = time.perf_counter()

    def _finish(self, context):
        seconds = time.perf_counter() - self.started
        view = live_frames.finish(self.reader, self.scope, self.frame_range, settings.thresholds(context), seconds)
        frame_settings = context.scene.hierarchy_inspector_frames
        fill_range_list(frame_settings, view)
        frame_settings.range_scope = self.scope
        live_frames.set_markers(context.scene, view, frame_settings.show_markers)
        summary = view.over.summary()
        self.report(
            {"INFO"},
            f"{summary['flagged']} of {len(view.series.keys)} nodes flagged over {summary['count']} frames; "
            f"worst frame {summary['worst_frame']} ({seconds:.2f} s)",
        )
        return {"FINISHED"}

    def execute(self, context):
        wm = context.window_manager
        try:
            self._start(context)
            wm.progress_begin(0, 100)
            try:
                while not self.reader.step():
                    wm.progress_update(int(100 * self.reader.fraction))
            finally:
                wm.progress_end()
            return self._finish(context)
        except InspectorError as exc:
            self.report({"ERROR"}, f"Range scan failed: {exc}")
            return {"CANCELLED"}

    def invoke(self, context, event):
        if context.window is None:
            return self.execute(context)
        try:
            self._start(context)
        except InspectorError as exc:
            self.report({"ERROR"}, f"Range scan failed: {exc}")
            return {"CANCELLED"}
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self.timer = wm.event_timer_add(0.001, window=context.window)
        wm.modal_handler_add(self)
        HI_OT_scan_range.running = True
        return {"RUNNING_MODAL"}

    def _stop(self, context) -> None:
        HI_OT_scan_range.running = False
        wm = context.window_manager
        wm.event_timer_remove(self.timer)
        wm.progress_end()

    def modal(self, context, event):
        if event.type in {"ESC", "RIGHTMOUSE"} and event.value == "PRESS":
            return self.cancel_scan(context)
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        try:
            until = time.perf_counter() + TICK_BUDGET
            done = False
            while not done and time.perf_counter() < until:
                done = self.reader.step()
            context.window_manager.progress_update(int(100 * self.reader.fraction))
            if not done:
                return {"RUNNING_MODAL"}
            self._stop(context)
            return self._finish(context)
        except InspectorError as exc:
            self._stop(context)
            self.report({"ERROR"}, f"Range scan failed: {exc}")
            return {"CANCELLED"}
        except Exception:  # a bug: still stop the timer, end the progress, restore the frame
            self._stop(context)
            self.reader.restore()
            raise

    def cancel_scan(self, context):
        """Stop reading and put the scene back on the frame it was on."""
        self.reader.restore()
        self._stop(context)
        self.report({"INFO"}, f"Range scan cancelled; back on frame {context.scene.frame_current}")
        return {"CANCELLED"}

    def cancel(self, context):  # Blender cancels modal operators e.g. when the file is closed
        self.reader.restore()
        self._stop(context)


class HI_OT_jump_to_frame(bpy.types.Operator):
    """Go to this frame (the node's worst frame in the range) and select the node"""

    bl_idname = "hierarchy_inspector.jump_to_frame"
    bl_label = "Jump to worst frame"
    bl_options = {"REGISTER", "UNDO"}  # it selects the node

    frame: IntProperty(name="Frame")  # type: ignore[valid-type]
    object_name: StringProperty()  # type: ignore[valid-type]
    bone_name: StringProperty()  # type: ignore[valid-type]

    def execute(self, context):
        context.scene.frame_set(self.frame)
        if self.object_name:
            select_node(context, self.object_name, self.bone_name)
        return {"FINISHED"}


class HI_OT_sample_dynamics(bpy.types.Operator):
    """Read the active chain at the frames around this one and show its velocities, accelerations and inertial terms"""

    bl_idname = "hierarchy_inspector.sample_dynamics"
    bl_label = "Sample dynamics here"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return needs_active_node(cls, context)

    def execute(self, context):
        try:
            live_frames.sample_dynamics(context)
        except InspectorError as exc:
            self.report({"ERROR"}, f"Cannot sample dynamics: {exc}")
            return {"CANCELLED"}
        return {"FINISHED"}


CLASSES = (HI_OT_scan_range, HI_OT_jump_to_frame, HI_OT_sample_dynamics)
