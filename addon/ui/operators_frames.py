"""Operators of the frame range: scan it (modal, with progress; Esc cancels and the scene
goes back to its frame), jump to a node's worst frame, sample the dynamics here."""

from __future__ import annotations

import time

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

from ..model.errors import InspectorError
from ..scene import settings
from ..scene.reading import active_key
from ..scene.scan import node_hidden
from ..scene.selection import select_node
from ..scene.timeline import live as live_frames
from .operators_inspect import needs_active_node

#: Seconds of reading per timer tick: the UI stays responsive between ticks.
TICK_BUDGET = 0.05


def _frames(r) -> str:
    return f"frames {r.start}..{r.end}" + (f" step {r.step}" if r.step > 1 else "")


def fill_range_list(frame_settings, view: live_frames.RangeView) -> None:
    """Store the scene scan's cause groups (worst first) and the nodes flagged at some
    frame of the range, the ones the viewport shows first, each part worst first."""
    over, keys = view.over, view.series.keys
    group_of: dict[int, int] = {}
    frame_settings.range_groups.clear()
    for g, group in enumerate(view.groups):
        entry = frame_settings.range_groups.add()
        entry.label = group.label(keys)
        if group.cause >= 0:
            entry.object_name, entry.bone_name = keys[group.cause]
        entry.count = len(group.members)
        entry.worst_corner = group.worst_corner
        group_of.update(dict.fromkeys(group.members.tolist(), g))
    facts = view.facts
    items = frame_settings.range_items
    items.clear()
    for i in view.order.tolist():
        item = items.add()
        item.object_name, item.bone_name = keys[i]
        item.worst_frame = int(over.worst_frame[i])
        item.flagged_frames = int(over.flagged_frame_count[i])
        item.max_corner = float(over.corner_max[i])
        item.shear_deg = float(over.shear_max[i])
        item.local_shear_deg = float(over.local_shear_max[i])
        item.group = group_of.get(i, -1)
        if facts is not None:
            item.deform, item.hidden = bool(facts.deform[i]), bool(facts.hidden[i])
    frame_settings.range_done = True
    frame_settings.range_nodes = len(keys)
    frame_settings.range_seconds = view.seconds
    frame_settings.range_label = _frames(view.frame_range)
    frame_settings["range_index"] = -1  # set without selecting anything
    frame_settings["range_group_index"] = 0


def chain_line(view: live_frames.RangeView, units) -> str:
    """``Chain of 'DEF-forearm.L' (14 nodes): worst f25, 7.05 cm``: a chain scan, in a line."""
    over = view.over
    top = int(over.worst_first(range(len(view.series.keys)))[0])
    name = view.series.keys[-1][1] or view.series.keys[-1][0]
    return (
        f"Chain of '{name}' ({len(view.series.keys)} nodes): worst f{int(over.worst_frame[top])}, "
        f"{units.length(float(over.corner_max[top]))}"
    )


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
        self.key = active_key(context)
        self.started = time.perf_counter()
        live_frames.set_progress(0.0, self.frame_range.start, len(self.reader.frames))

    def _finish(self, context):
        live_frames.set_progress(None)
        seconds = time.perf_counter() - self.started
        view = live_frames.finish(
            self.reader, self.scope, self.frame_range, settings.thresholds(context), seconds, self.key
        )
        frame_settings = context.scene.hierarchy_inspector_frames
        units = settings.units(context)
        summary = view.over.summary()
        if self.scope == live_frames.CHAIN:  # kept apart: the scene's list stays as it is
            frame_settings.range_chain = chain_line(view, units)
            self.report({"INFO"}, f"{frame_settings.range_chain} ({_frames(self.frame_range)}, {seconds:.2f} s)")
            return {"FINISHED"}
        fill_range_list(frame_settings, view)
        frame_settings.range_scope = self.scope
        live_frames.set_markers(context.scene, view, frame_settings.show_markers)
        worst = view.groups[0].label(view.series.keys) if view.groups else "-"
        self.report(
            {"INFO"},
            f"{summary['flagged']} of {len(view.series.keys)} nodes flagged over {summary['count']} frames; "
            f"worst cause {worst}, {units.length(summary['max_deviation'])} ({seconds:.2f} s)",
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
        live_frames.set_progress(None)
        wm = context.window_manager
        wm.event_timer_remove(self.timer)
        wm.progress_end()
        _redraw_sidebars(context)

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
            reader = self.reader
            live_frames.set_progress(reader.fraction, reader.frames[max(reader.done - 1, 0)], len(reader.frames))
            _redraw_sidebars(context)
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
    """Go to this frame (the node's worst frame in the range) and select the node (a
    node the viewport hides is not selected)"""

    bl_idname = "hierarchy_inspector.jump_to_frame"
    bl_label = "Jump to worst frame"
    bl_options = {"UNDO"}  # it selects the node; nothing to adjust afterwards (no Adjust Last Operation panel)

    frame: IntProperty(name="Frame")  # type: ignore[valid-type]
    object_name: StringProperty()  # type: ignore[valid-type]
    bone_name: StringProperty()  # type: ignore[valid-type]

    def execute(self, context):
        context.scene.frame_set(self.frame)
        if not self.object_name:
            return {"FINISHED"}
        if node_hidden(self.object_name, self.bone_name, context.view_layer):
            self.report({"INFO"}, f"Frame {self.frame}; '{self.bone_name or self.object_name}' is hidden: not selected")
            return {"FINISHED"}
        select_node(context, self.object_name, self.bone_name)
        return {"FINISHED"}


def _redraw_sidebars(context) -> None:
    """Redraw the 3D viewports' sidebars (the range panel's progress)."""
    screen = getattr(context, "screen", None)
    for area in screen.areas if screen is not None else ():
        if area.type == "VIEW_3D":
            for region in area.regions:
                if region.type == "UI":
                    region.tag_redraw()


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
