"""Add-on preferences: thresholds and overlay colours."""

from __future__ import annotations

from dataclasses import dataclass

import bpy
from bpy.props import FloatProperty, FloatVectorProperty

from . import inspection

#: The add-on's module name (``hierarchy_inspector`` or ``bl_ext.<repo>.hierarchy_inspector``).
ADDON_MODULE = __package__.rpartition(".")[0]


class HI_AddonPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_MODULE

    shear_threshold_deg: FloatProperty(  # type: ignore[valid-type]
        name="Shear threshold",
        description="Flag nodes whose axes are more than this many degrees off 90",
        default=inspection.SHEAR_THRESHOLD_DEG,
        min=0.0,
        soft_max=10.0,
        precision=3,
    )
    corner_threshold: FloatProperty(  # type: ignore[valid-type]
        name="Corner threshold",
        description="Flag nodes whose box corners move more than this (scene units) in an engine model",
        default=inspection.CORNER_THRESHOLD,
        min=0.0,
        soft_max=1.0,
        precision=4,
        subtype="DISTANCE",
    )
    colour_blender: FloatVectorProperty(  # type: ignore[valid-type]
        name="Blender box", subtype="COLOR", size=4, min=0.0, max=1.0, default=(0.95, 0.95, 0.95, 0.9)
    )
    colour_accumulated: FloatVectorProperty(  # type: ignore[valid-type]
        name="Accumulated box", subtype="COLOR", size=4, min=0.0, max=1.0, default=(0.15, 0.6, 1.0, 1.0)
    )
    colour_skew_low: FloatVectorProperty(  # type: ignore[valid-type]
        name="Slight skew", subtype="COLOR", size=4, min=0.0, max=1.0, default=(1.0, 0.85, 0.1, 1.0)
    )
    colour_skew_high: FloatVectorProperty(  # type: ignore[valid-type]
        name="Strong skew", subtype="COLOR", size=4, min=0.0, max=1.0, default=(1.0, 0.1, 0.1, 1.0)
    )
    skew_full_scale_deg: FloatProperty(  # type: ignore[valid-type]
        name="Strong skew at",
        description="Shear (degrees) drawn in the strong skew colour; less is blended toward the slight colour",
        default=30.0,
        min=0.01,
        soft_max=90.0,
    )
    line_width: FloatProperty(name="Line width", default=2.0, min=1.0, max=10.0)  # type: ignore[valid-type]

    def draw(self, context):
        layout = self.layout
        col = layout.column(heading="Thresholds")
        col.prop(self, "shear_threshold_deg")
        col.prop(self, "corner_threshold")
        col = layout.column(heading="Overlay")
        col.prop(self, "colour_blender")
        col.prop(self, "colour_accumulated")
        col.prop(self, "colour_skew_low")
        col.prop(self, "colour_skew_high")
        col.prop(self, "skew_full_scale_deg")
        col.prop(self, "line_width")


@dataclass
class Settings:
    """Plain values of the preferences (defaults when the add-on was registered by hand)."""

    shear_threshold_deg: float = inspection.SHEAR_THRESHOLD_DEG
    corner_threshold: float = inspection.CORNER_THRESHOLD
    colour_blender: tuple = (0.95, 0.95, 0.95, 0.9)
    colour_accumulated: tuple = (0.15, 0.6, 1.0, 1.0)
    colour_skew_low: tuple = (1.0, 0.85, 0.1, 1.0)
    colour_skew_high: tuple = (1.0, 0.1, 0.1, 1.0)
    skew_full_scale_deg: float = 30.0
    line_width: float = 2.0


def settings(context=None) -> Settings:
    """The current preferences as plain values."""
    context = context or bpy.context
    addon = context.preferences.addons.get(ADDON_MODULE)
    prefs = getattr(addon, "preferences", None) if addon is not None else None
    if prefs is None:
        return Settings()
    return Settings(**{name: _plain(getattr(prefs, name)) for name in Settings.__dataclass_fields__})


def _plain(value):
    return tuple(value) if hasattr(value, "__len__") else value


CLASSES = (HI_AddonPreferences,)
