"""Operators that fix the scene (the panel's Fix & export box: Insert helpers, Bake shear
into meshes) and write the accumulated TRS as data; the file exports are in
:mod:`.operators_export`. Each reports one headline per engine path last (Blender's
status bar shows the last report), the details before it in the Info log."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ..model.advice.after_fix import summary
from ..model.errors import InspectorError
from ..model.exports.accumulated import accumulated_csv, accumulated_document
from ..model.outputs import check_outputs, json_text, write_all
from ..scene import live, settings
from ..scene.edits.bake import bake_residual
from ..scene.edits.helpers import insert_helpers
from ..scene.scan import scan_scene
from .operators_export import open_blend_file


def _inspect(context):
    return scan_scene(context.scene, settings.thresholds(context))


def _object_mode(cls, context) -> bool:
    if context.scene is None:
        cls.poll_message_set("No scene")
        return False
    if context.mode != "OBJECT":
        cls.poll_message_set("Switch to Object Mode first")
        return False
    return True


class HI_OT_insert_helpers(bpy.types.Operator):
    """Insert a helper empty above every object whose local matrix holds shear, so that
    glTF / FBX exports keep it exactly (the object keeps its own transform channels)"""

    bl_idname = "hierarchy_inspector.insert_helpers"
    bl_label = "Insert helpers"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _object_mode(cls, context)

    def execute(self, context):
        before = _inspect(context)
        try:
            result = insert_helpers(before)
        except InspectorError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        live.invalidate()
        left = [f"'{name}' left as it is ({why})" for name, why in result.skipped] + _bones_left(result.bones)
        if not result.inserted:
            for line in left[:-1]:
                self.report({"INFO"}, line)
            self.report(
                {"WARNING"} if left else {"INFO"}, left[-1] if left else "No local matrix holds shear: nothing to do"
            )
            return {"CANCELLED"}
        objects = [obj for _helper, obj in result.inserted]
        note = f" ({len(result.skipped)} object(s) left as they are: see the Info log)" if result.skipped else ""
        _report_fix(self, context, "Inserted helpers above", objects, before, details=left, note=note)
        return {"FINISHED"}


def _bones_left(bones: list[str]) -> list[str]:
    """The sentence for bones whose local shear a helper empty cannot keep."""
    if not bones:
        return []
    return [
        f"{len(bones)} bone(s) keep their local shear (a helper empty cannot go inside a rig): "
        "Export glTF (exact) or Export FBX (exact) gives them helper joints in the file"
    ]


def _report_fix(
    operator, context, action: str, changed: list[str], before, bake: bool = False, details=(), note: str = ""
) -> None:
    """The details to the Info log (what changed, what was left, why numbers moved),
    then one headline per engine path last: Blender's status bar shows the last report."""
    after = _inspect(context)
    headline, more = summary(action, changed, before, after, settings.units(context), bake)
    for line in [*more, *details]:
        operator.report({"INFO"}, line)
    operator.report({"WARNING"} if note else {"INFO"}, headline + note)


class HI_OT_bake_residual(bpy.types.Operator):
    """Move the shear no TRS can hold into the mesh data (like Reset XForm) so the
    hierarchy becomes shear-free; every vertex stays where it is"""

    bl_idname = "hierarchy_inspector.bake_residual"
    bl_label = "Bake shear into meshes"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _object_mode(cls, context)

    def execute(self, context):
        inspection = _inspect(context)
        try:
            baked = bake_residual(inspection, context)
        except InspectorError as exc:
            self.report({"ERROR"}, f"Nothing changed: {exc}")
            return {"CANCELLED"}
        live.invalidate()
        if not baked:
            self.report({"INFO"}, "No object is sheared: nothing to bake")
            return {"CANCELLED"}
        order = {inspection.nodes.keys[i][0]: k for k, i in enumerate(inspection.worst_first())}
        _report_fix(
            self, context, "Baked", sorted(baked, key=lambda name: order.get(name, len(order))), inspection, True
        )
        return {"FINISHED"}


class _FileOperator(ExportHelper):
    @property
    def path(self) -> str:
        """ExportHelper's ``filepath`` property (the type stubs do not know it)."""
        return self.filepath  # type: ignore[attr-defined]


class HI_OT_export_accumulated(bpy.types.Operator, _FileOperator):
    """Write, per node, the local translation / rotation / scale whose accumulation
    (Unreal, Ogre) reproduces Blender's world positions and rotations (JSON, and CSV
    beside it)"""

    bl_idname = "hierarchy_inspector.export_accumulated"
    bl_label = "Export accumulated TRS"
    bl_options = {"REGISTER"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})  # type: ignore[valid-type]
    write_csv: BoolProperty(name="CSV too", default=True)  # type: ignore[valid-type]

    @classmethod
    def poll(cls, context):
        return context.scene is not None

    def execute(self, context):
        try:
            csv_path = self.path.rsplit(".", 1)[0] + ".csv" if self.write_csv else None
            check_outputs({"the export": self.path, "its CSV": csv_path}, open_blend_file())
            document = accumulated_document(_inspect(context))
            files = {self.path: json_text(document)}
            if csv_path:
                files[csv_path] = accumulated_csv(document)
            write_all(files)
        except (InspectorError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        residual = settings.units(context).length(document["max_residual_corner"])
        self.report(
            {"INFO"},
            f"Wrote {len(document['nodes'])} nodes' accumulated TRS; largest corner residual {residual} "
            "(Blender's own skew, which no TRS holds)",
        )
        return {"FINISHED"}


CLASSES = (HI_OT_insert_helpers, HI_OT_bake_residual, HI_OT_export_accumulated)
