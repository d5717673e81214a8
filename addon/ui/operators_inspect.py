"""Operators of the inspector: details, copy, scan, select flagged."""

from __future__ import annotations

import time

import bpy
from bpy.props import StringProperty

from ..model.advice.causes import cause_groups, group_label
from ..model.errors import InspectorError
from ..model.inspection import Inspection
from ..model.views import comparison_text, focus_index
from ..scene import live, settings
from ..scene.scan import scan_scene_valid
from ..scene.selection import set_bone_selected
from .lists import visible


def needs_active_node(cls, context) -> bool:
    """``poll`` of operators that work on the active object or pose bone (says why not)."""
    if context.active_object is None:
        cls.poll_message_set("Select an object or a pose bone first")
        return False
    return True


class HI_OT_show_details(bpy.types.Operator):
    """Show this node's details in the panel"""

    bl_idname = "hierarchy_inspector.show_details"
    bl_label = "Show details"
    bl_options = {"INTERNAL"}

    object_name: StringProperty()  # type: ignore[valid-type]
    bone_name: StringProperty()  # type: ignore[valid-type]

    def execute(self, context):
        settings = context.scene.hierarchy_inspector
        settings.detail_object, settings.detail_bone = self.object_name, self.bone_name
        return {"FINISHED"}


class HI_OT_copy_comparison(bpy.types.Operator):
    """Copy the comparison of the shown node to the clipboard as text"""

    bl_idname = "hierarchy_inspector.copy_comparison"
    bl_label = "Copy comparison"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        return needs_active_node(cls, context)

    def execute(self, context):
        view = live.chain_view(context)
        if view is None:
            self.report({"ERROR"}, "Nothing to compare: select an object or a pose bone")
            return {"CANCELLED"}
        chosen = context.scene.hierarchy_inspector
        i = focus_index(view.inspection, view.chain, (chosen.detail_object, chosen.detail_bone), view.mechanism)
        context.window_manager.clipboard = comparison_text(view.inspection, i, settings.units(context))
        self.report({"INFO"}, f"Copied the comparison of '{view.inspection.nodes.label(i)}'")
        return {"FINISHED"}


class HI_OT_select_flagged(bpy.types.Operator):
    """Select the flagged objects and bones the scan list shows (its kind and cause
    filters apply); in Pose mode, the flagged bones of the armatures in Pose mode"""

    bl_idname = "hierarchy_inspector.select_flagged"
    bl_label = "Select flagged"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.hierarchy_inspector if context.scene else None
        if settings is None or not settings.scan_done:
            cls.poll_message_set("Scan the scene first (Scene scan > Scan scene)")
            return False
        if context.mode not in {"OBJECT", "POSE"}:
            cls.poll_message_set("Switch to Object or Pose mode")
            return False
        return True

    def execute(self, context):
        scene_settings = context.scene.hierarchy_inspector
        items = [it for it in scene_settings.scan_items if visible(it, scene_settings)]
        if context.mode == "POSE":
            return self._select_bones(context, items)
        for obj in context.selected_objects:
            obj.select_set(False)
        selected = missing = 0
        first = None
        view_layer = context.view_layer
        for item in items:
            obj = bpy.data.objects.get(item.instancer or item.object_name)
            if obj is None or view_layer.objects.get(obj.name) is None:
                missing += 1
                continue
            obj.select_set(True)
            first = first or obj
            if item.bone_name and not item.instancer and obj.type == "ARMATURE" and item.bone_name in obj.pose.bones:
                set_bone_selected(obj, item.bone_name, True)
            selected += 1
        if first is not None and view_layer.objects.active is None:
            view_layer.objects.active = first
        note = f" ({missing} no longer exist: scan again)" if missing else ""
        self.report({"INFO"}, f"Selected {selected} flagged nodes{note}")
        return {"FINISHED"}

    def _select_bones(self, context, items):
        posed = {obj.name: obj for obj in context.objects_in_mode if obj.type == "ARMATURE"}
        wanted = {(it.object_name, it.bone_name) for it in items if it.bone_name}
        selected = 0
        for name, arm in posed.items():
            for pose_bone in arm.pose.bones:
                state = (name, pose_bone.name) in wanted
                set_bone_selected(arm, pose_bone.name, state)
                selected += state
        outside = sum(1 for obj, _bone in wanted if obj not in posed)
        note = f"; {outside} more in armatures not in Pose mode" if outside else ""
        self.report({"INFO"}, f"Selected {selected} flagged bones{note}")
        return {"FINISHED"}


def fill_scan_list(scene_settings, inspection: Inspection, seconds: float) -> None:
    """Store the flagged nodes in the scene's scan list, worst first, and their cause
    groups (worst group first)."""
    a = inspection.analysis
    nodes = inspection.nodes
    groups = cause_groups(inspection)
    group_of: dict[int, int] = {}
    scene_settings.scan_groups.clear()
    for g, group in enumerate(groups):
        entry = scene_settings.scan_groups.add()
        entry.label = group_label(inspection, group)
        if group.cause >= 0:
            entry.object_name, entry.bone_name = nodes.keys[group.cause]
        entry.count = len(group.members)
        entry.worst_corner = group.worst_corner
        group_of.update(dict.fromkeys(group.members.tolist(), g))
    items = scene_settings.scan_items
    items.clear()
    worst = inspection.worst_corner
    for i in inspection.worst_first():
        item = items.add()
        item.object_name, item.bone_name = nodes.keys[i]
        item.kind = nodes.kind(i)
        item.instancer = nodes.keys[nodes.parents[i]][0] if i in nodes.instance_of else ""
        item.max_corner = float(worst[i])
        item.matrix_corner = float(a.matrix_model_deviation.max_corner[i])
        item.accumulated_corner = float(a.accumulated_deviation.max_corner[i])
        item.shear_deg = float(inspection.shear_max[i])
        item.local_shear_deg = float(inspection.local_shear_max[i])
        item.deform = bool(nodes.deform[i])
        item.group = group_of.get(int(i), -1)
    scene_settings.scan_nodes = len(nodes)
    scene_settings.scan_seconds = seconds
    scene_settings.scan_done = True
    scene_settings["scan_index"] = -1  # set without selecting anything
    scene_settings["scan_group_index"] = 0


class HI_OT_scan(bpy.types.Operator):
    """Inspect every object, bone and instance of the scene and list the flagged ones"""

    bl_idname = "hierarchy_inspector.scan"
    bl_label = "Scan scene"
    bl_options = {"REGISTER"}

    @classmethod
    def poll(cls, context):
        if context.scene is None:
            cls.poll_message_set("No scene to scan")
            return False
        return True

    def execute(self, context):
        wm = context.window_manager
        wm.progress_begin(0, 100)
        start = time.perf_counter()
        try:
            result, skipped = scan_scene_valid(
                context.scene,
                settings.thresholds(context),
                progress=lambda f, _msg: wm.progress_update(int(100 * f)),
                instances=True,
            )
        except InspectorError as exc:
            self.report({"ERROR"}, f"Scan failed: {exc}")
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        seconds = time.perf_counter() - start
        fill_scan_list(context.scene.hierarchy_inspector, result, seconds)
        live.remember_scan(result, context.scene.objects)
        summary = result.summary()
        corner = settings.units(context).length(summary["max_deviation"])
        self.report(
            {"INFO"},
            f"{summary['flagged']} of {summary['nodes']} nodes flagged; largest shear "
            f"{summary['max_shear_deg']:.2f}\N{DEGREE SIGN}, largest corner distance {corner} ({seconds:.2f} s)",
        )
        if skipped:
            more = f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else ""
            self.report({"WARNING"}, "Not inspected: " + "; ".join(skipped[:3]) + more)
        return {"FINISHED"}


CLASSES = (HI_OT_show_details, HI_OT_copy_comparison, HI_OT_scan, HI_OT_select_flagged)
