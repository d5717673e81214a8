"""Add-on preferences: thresholds and overlay colours. Their defaults are the model's
(:class:`~..model.thresholds.Thresholds`, :class:`~..model.overlay_geometry.OverlayStyle`);
:mod:`..scene.settings` reads them back as those values."""

from __future__ import annotations

import bpy
from bpy.props import FloatProperty, FloatVectorProperty

from ..model.overlay_geometry import OverlayStyle
from ..model.thresholds import DEFAULT
from ..model.timeline.arrows import ARROWS, ArrowStyle
from ..scene.settings import ADDON_MODULE

_STYLE = OverlayStyle()
_ARROWS = ArrowStyle()


def _arrow_colour(kind: str, label: str):
    return FloatVectorProperty(name=label, subtype="COLOR", size=4, min=0.0, max=1.0, default=_ARROWS.colour(kind))


class HI_AddonPreferences(bpy.types.AddonPreferences):
    bl_idname = ADDON_MODULE

    shear_threshold_deg: FloatProperty(  # type: ignore[valid-type]
        name="Shear threshold",
        description="Flag nodes whose axes are more than this many degrees off 90",
        default=DEFAULT.shear_deg,
        min=0.0,
        soft_max=10.0,
        precision=3,
    )
    corner_threshold: FloatProperty(  # type: ignore[valid-type]
        name="Corner threshold",
        description="Flag nodes whose box corners move more than this (scene units) in an engine model",
        default=DEFAULT.corner,
        min=0.0,
        soft_max=1.0,
        precision=4,
        subtype="DISTANCE",
    )
    colour_blender: FloatVectorProperty(  # type: ignore[valid-type]
        name="Blender box", subtype="COLOR", size=4, min=0.0, max=1.0, default=_STYLE.colour_blender
    )
    colour_accumulated: FloatVectorProperty(  # type: ignore[valid-type]
        name="Accumulated box", subtype="COLOR", size=4, min=0.0, max=1.0, default=_STYLE.colour_accumulated
    )
    colour_skew_low: FloatVectorProperty(  # type: ignore[valid-type]
        name="Slight skew", subtype="COLOR", size=4, min=0.0, max=1.0, default=_STYLE.colour_skew_low
    )
    colour_skew_high: FloatVectorProperty(  # type: ignore[valid-type]
        name="Strong skew", subtype="COLOR", size=4, min=0.0, max=1.0, default=_STYLE.colour_skew_high
    )
    skew_full_scale_deg: FloatProperty(  # type: ignore[valid-type]
        name="Strong skew at",
        description="Shear (degrees) drawn in the strong skew colour; less is blended toward the slight colour",
        default=_STYLE.skew_full_scale_deg,
        min=0.01,
        soft_max=90.0,
    )
    line_width: FloatProperty(name="Line width", default=_STYLE.line_width, min=1.0, max=10.0)  # type: ignore[valid-type]
    arrow_scale: FloatProperty(  # type: ignore[valid-type]
        name="Arrow scale",
        description="Drawn length of the motion arrows per unit of rate (seconds for velocities)",
        default=_ARROWS.scale,
        min=0.0,
        soft_max=10.0,
    )
    __annotations__.update({f"arrow_colour_{kind}": _arrow_colour(kind, label) for kind, label in ARROWS})

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
        col = layout.column(heading="Motion arrows")
        col.prop(self, "arrow_scale")
        for kind, _label in ARROWS:
            col.prop(self, f"arrow_colour_{kind}")


CLASSES = (HI_AddonPreferences,)
