"""Operators of the inspector: details, copy, selection, demo scenes."""

from __future__ import annotations

import bpy
from bpy.props import StringProperty

from . import demo_scenes, live
from .panel import comparison_text, focus_index
from .selection import set_bone_selected


def _needs_chain(cls, context) -> bool:
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
        return _needs_chain(cls, context)

    def execute(self, context):
        view = live.chain_view(context)
        if view is None:
            self.report({"ERROR"}, "Nothing to compare: select an object or a pose bone")
            return {"CANCELLED"}
        i = focus_index(view, context.scene.hierarchy_inspector)
        context.window_manager.clipboard = comparison_text(view.inspection, i)
        self.report({"INFO"}, f"Copied the comparison of '{view.inspection.nodes.label(i)}'")
        return {"FINISHED"}


class HI_OT_select_flagged(bpy.types.Operator):
    """Select every object and bone the last scene scan flagged"""

    bl_idname = "hierarchy_inspector.select_flagged"
    bl_label = "Select flagged"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        settings = context.scene.hierarchy_inspector if context.scene else None
        if settings is None or not settings.scan_done:
            cls.poll_message_set("Scan the scene first (Scene scan > Scan scene)")
            return False
        if context.mode != "OBJECT":
            cls.poll_message_set("Switch to Object Mode to select objects")
            return False
        return True

    def execute(self, context):
        items = context.scene.hierarchy_inspector.scan_items
        for obj in context.selected_objects:
            obj.select_set(False)
        selected = missing = 0
        first = None
        view_layer = context.view_layer
        for item in items:
            obj = bpy.data.objects.get(item.object_name)
            if obj is None or view_layer.objects.get(obj.name) is None:
                missing += 1
                continue
            obj.select_set(True)
            first = first or obj
            if item.bone_name and obj.type == "ARMATURE" and item.bone_name in obj.pose.bones:
                set_bone_selected(obj, item.bone_name, True)
            selected += 1
        if first is not None and view_layer.objects.active is None:
            view_layer.objects.active = first
        note = f" ({missing} no longer exist: scan again)" if missing else ""
        self.report({"INFO"}, f"Selected {selected} flagged nodes{note}")
        return {"FINISHED"}


class HI_OT_build_demo(bpy.types.Operator):
    """Add the demo hierarchies (piston, rotated child, parent inverse, inherit-scale rig) to this scene"""

    bl_idname = "hierarchy_inspector.build_demo"
    bl_label = "Add demo hierarchies"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if context.mode != "OBJECT":
            cls.poll_message_set("Switch to Object Mode first")
            return False
        return context.scene is not None

    def execute(self, context):
        taken = [name for name in demo_scenes.COLLECTIONS if name in bpy.data.collections]
        if taken:
            self.report({"ERROR"}, f"Demo collections already exist: {', '.join(taken)}")
            return {"CANCELLED"}
        demo_scenes.build_demo_scene(context.scene)
        self.report({"INFO"}, "Added the demo hierarchies")
        return {"FINISHED"}


CLASSES = (HI_OT_show_details, HI_OT_copy_comparison, HI_OT_select_flagged, HI_OT_build_demo)
