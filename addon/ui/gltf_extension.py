""" "Keep shear exactly" in File > Export > glTF 2.0, through the exporter's user-extension
interface: while the add-on is enabled its package exposes ``glTF2ExportUserExtension``
and ``draw_export`` (what Blender's glTF exporter looks for on every enabled add-on).
The option is drawn in the export dialog and kept per scene (``Scene.hierarchy_inspector_gltf``).

When the option is on, the extension's ``gather_gltf_hook`` wraps the exporter's log:
the exporter announces "Finished glTF 2.0 export" once the file is written, and the
file is then corrected and checked (:func:`..scene.exports.gltf_hook.keep_shear_in_file`) with
the settings the user chose in the dialog; the outcome is reported in the exporter's
own messages (a warning when the file is not exact). Errors never abort the user's
export: the file Blender wrote stays, and the message says why it was not corrected.
"""

from __future__ import annotations

import sys
import traceback

import bpy
from bpy.props import BoolProperty, PointerProperty

from ..model.errors import InspectorError
from ..model.exports.animated_gltf import within_tolerance
from ..scene.exports.gltf_hook import HookSettings, keep_shear_in_file
from ..scene.exports.gltf_modes import AnimationState
from ..scene.settings import thresholds

FINISHED = "Finished glTF 2.0 export"
ROOT = __package__.rsplit(".", 2)[0]  # the add-on's own module (the package root)


class HI_GltfExportSettings(bpy.types.PropertyGroup):
    keep_shear: BoolProperty(  # type: ignore[valid-type]
        name="Keep shear exactly",
        description=(
            "Hierarchy Inspector: add helper nodes above objects and joints whose local transform holds shear, "
            "animated so the file matches Blender at every exported frame, then read the file back and check it"
        ),
        default=False,
    )


def draw_export(context, layout) -> None:
    """Drawn by Blender's glTF exporter in its dialog (one row, the option)."""
    props = context.scene.hierarchy_inspector_gltf
    box = layout.box()
    box.label(text="Hierarchy Inspector")
    box.prop(props, "keep_shear")


class _LogProxy:
    """The exporter's log, with the correction run when the export is finished."""

    def __init__(self, log, export_settings: dict, scene, start_frame: int, before: AnimationState | None):
        self._log = log
        self._settings = export_settings
        self._scene = scene
        self._start_frame = start_frame
        self._before = before
        self.ran = False

    def info(self, message, popup=False):
        self._log.info(message, popup)
        if not self.ran and str(message).startswith(FINISHED):
            self.ran = True
            self._correct()

    def _correct(self) -> None:
        try:
            result = keep_shear_in_file(
                self._scene,
                HookSettings.from_exporter(self._settings, self._start_frame, self._before),
                thresholds(bpy.context),
            )
        except (InspectorError, OSError) as exc:  # never abort the user's own export
            self._log.warning(f"Keep shear exactly: not corrected ({exc})", popup=True)
            return
        except Exception as exc:  # a bug of ours: Blender's file stays as written, the user's export goes on
            traceback.print_exc()
            self._log.warning(
                f"Keep shear exactly: not corrected, the file is as Blender's exporter wrote it "
                f"(internal error {type(exc).__name__}: {exc}; the traceback is in the system console)",
                popup=True,
            )
            return
        exact = result.corrected and result.error is not None and within_tolerance(result.error.relative)
        exact = exact and (result.skins is None or result.skins.exact)
        (self._log.info if exact else self._log.warning)(result.message(), popup=True)

    def __getattr__(self, name):
        return getattr(self._log, name)


class glTF2ExportUserExtension:  # noqa: N801 (the name Blender's exporter looks for)
    """Blender's glTF exporter makes one per export while the add-on is enabled."""

    def __init__(self):
        scene = bpy.context.scene
        props = getattr(scene, "hierarchy_inspector_gltf", None)
        self.enabled = bool(props and props.keep_shear)
        self.scene = scene
        self.start_frame = scene.frame_current  # made before the exporter moves the frame
        # the animated properties before the exporter's actions change them (see HookSettings.before)
        self.before = AnimationState(scene) if self.enabled else None

    def gather_gltf_hook(self, active_scene_idx, scenes, animations, export_settings):
        if self.enabled and not isinstance(export_settings.get("log"), _LogProxy):
            export_settings["log"] = _LogProxy(
                export_settings["log"], export_settings, self.scene, self.start_frame, self.before
            )


def register() -> None:
    bpy.utils.register_class(HI_GltfExportSettings)
    bpy.types.Scene.hierarchy_inspector_gltf = PointerProperty(type=HI_GltfExportSettings)  # type: ignore[attr-defined]
    root = sys.modules.get(ROOT)
    if root is not None:
        root.glTF2ExportUserExtension = glTF2ExportUserExtension  # type: ignore[attr-defined]
        root.draw_export = draw_export  # type: ignore[attr-defined]


def unregister() -> None:
    root = sys.modules.get(ROOT)
    for name in ("glTF2ExportUserExtension", "draw_export"):
        if root is not None and hasattr(root, name):
            delattr(root, name)
    del bpy.types.Scene.hierarchy_inspector_gltf  # type: ignore[attr-defined]
    bpy.utils.unregister_class(HI_GltfExportSettings)
