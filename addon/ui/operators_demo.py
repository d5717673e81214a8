"""Adding the demo hierarchies (Add > Hierarchy Inspector demo), away from the panels that
change a production file."""

from __future__ import annotations

import bpy

from ..scene import demo_scenes


class HI_OT_build_demo(bpy.types.Operator):
    """Add the demo hierarchies (piston, rotated child, parent inverse, inherit-scale rig) to this scene"""

    bl_idname = "hierarchy_inspector.build_demo"
    bl_label = "Hierarchy Inspector demo"
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


def draw_add_menu(self, context) -> None:
    """An entry at the end of the 3D Viewport's Add menu."""
    self.layout.separator()
    self.layout.operator(HI_OT_build_demo.bl_idname, icon="OUTLINER")


CLASSES = (HI_OT_build_demo,)
#: (menu, draw function) pairs that register() appends and unregister() removes.
MENUS = ((bpy.types.VIEW3D_MT_add, draw_add_menu),)
