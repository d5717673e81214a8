"""Operators that fix or export corrected transforms (the panel's Fix & export box)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ..model.advice.after_fix import WORST_FEW, summary
from ..model.errors import InspectorError
from ..model.exports.accumulated import accumulated_csv, accumulated_document
from ..model.exports.animated_gltf import CHECK_TOLERANCE, within_tolerance
from ..model.frames import FrameRange
from ..model.outputs import check_outputs, json_text, write_all
from ..scene import live, settings
from ..scene.blend_files import files_read
from ..scene.edits.bake import bake_residual
from ..scene.edits.helpers import insert_helpers
from ..scene.exports.fbx_accumulated import write_fbx_accumulated
from ..scene.exports.fbx_export import write_fbx
from ..scene.exports.gltf_animated import write_gltf_frames
from ..scene.exports.gltf_hook import THROUGH_JOINTS
from ..scene.exports.usd_export import usd_exporter_missing, write_usd
from ..scene.scan import scan_scene


def _inspect(context):
    return scan_scene(context.scene, settings.thresholds(context))


def _open_file() -> dict[str, str]:
    """The open .blend (none when it was never saved) and every file it reads (its
    libraries, images, caches), which no export may replace."""
    return files_read(label="the open .blend file")


def _failed(operator, exc: BaseException) -> set[str]:
    """Report an export's failure as one line (an exporter's last line, or the error's
    name when it has no text) and cancel."""
    text = str(exc).strip()
    operator.report({"ERROR"}, text.splitlines()[-1] if text else type(exc).__name__)
    return {"CANCELLED"}


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
        skipped = "; ".join(
            [f"'{name}' left as it is ({why})" for name, why in result.skipped] + _bones_left(result.bones)
        )
        if not result.inserted:
            self.report({"WARNING"} if skipped else {"INFO"}, skipped or "No local matrix holds shear: nothing to do")
            return {"CANCELLED"}
        objects = [obj for _helper, obj in result.inserted]
        _report_fix(self, context, "Inserted helpers above", objects, before)
        if skipped:
            self.report({"WARNING"}, skipped)
        return {"FINISHED"}


def _bones_left(bones: list[str]) -> list[str]:
    """The sentence for bones whose local shear a helper empty cannot keep."""
    if not bones:
        return []
    return [
        f"{len(bones)} bone(s) keep their local shear (a helper empty cannot go inside a rig): "
        "Export glTF (exact) or Export FBX (exact) gives them helper joints in the file"
    ]


def _report_fix(operator, context, action: str, changed: list[str], before, bake: bool = False) -> None:
    """The full list to the Info log, then the summary per engine family (the status
    bar shows the last report)."""
    if len(changed) > WORST_FEW:
        operator.report({"INFO"}, f"{action}: {', '.join(changed)}")
    after = _inspect(context)
    operator.report({"INFO"}, summary(action, changed, before, after, settings.units(context), bake))


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


class HI_OT_export_gltf(bpy.types.Operator, _FileOperator):
    """Export glTF with helper nodes where a local matrix holds shear, then read the
    file back and report how far it is from what Blender shows"""

    bl_idname = "hierarchy_inspector.export_gltf"
    bl_label = "Export glTF (exact)"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".glb"
    filter_glob: StringProperty(default="*.glb", options={"HIDDEN"})  # type: ignore[valid-type]
    y_up: BoolProperty(name="+Y Up", description="glTF's convention (off: keep Blender's Z up)", default=True)  # type: ignore[valid-type]

    @classmethod
    def poll(cls, context):
        return _object_mode(cls, context)

    def execute(self, context):
        try:
            check_outputs({"the export": self.path}, _open_file())
            result = write_gltf_frames(
                context.scene, self.path, None, y_up=self.y_up, thresholds=settings.thresholds(context)
            )
        except (InspectorError, OSError, RuntimeError) as exc:
            return _failed(self, exc)
        live.invalidate()
        nodes = within_tolerance(result.error.relative)
        skins = result.skins.summary() if result.skins is not None else ""
        exact = nodes and (result.skins is None or result.skins.exact)
        self.report(
            {"INFO"} if exact else {"WARNING"},
            f"Wrote {self.path}: {len(result.helpers)} helper(s), relative error {result.error.relative:.1e}"
            + ("" if nodes else f" (over {CHECK_TOLERANCE:g})")
            + (f"; {skins}" if skins else ""),
        )
        return {"FINISHED"}


class HI_OT_export_fbx(bpy.types.Operator, _FileOperator):
    """Export FBX with Blender's exporter through an export-ready copy (temporary helpers
    where a local matrix holds shear, all undone afterwards), baked at every frame of the
    scene's range, then read the file back and report how far it is from what Blender
    shows"""

    bl_idname = "hierarchy_inspector.export_fbx"
    bl_label = "Export FBX (exact)"
    bl_options = {"REGISTER"}  # the scene is as before afterwards: no undo step to add

    filename_ext = ".fbx"
    filter_glob: StringProperty(default="*.fbx", options={"HIDDEN"})  # type: ignore[valid-type]
    animation: BoolProperty(  # type: ignore[valid-type]
        name="Animation",
        description="Bake every frame of the scene's frame range (off: the current frame's pose)",
        default=True,
    )
    pole_helpers: BoolProperty(  # type: ignore[valid-type]
        name="Keep Euler angles off the pole",
        description="A still helper above objects whose rotation passes near the Euler pole, where Blender's "
        "FBX exporter writes its angles in single precision (off: those objects as Blender writes them)",
        default=True,
    )

    @classmethod
    def poll(cls, context):
        return _object_mode(cls, context)

    def execute(self, context):
        scene = context.scene
        frame_range = FrameRange(scene.frame_start, scene.frame_end, scene.frame_step) if self.animation else None
        try:
            check_outputs({"the export": self.path}, _open_file())
            result = write_fbx(
                scene, self.path, frame_range, settings.thresholds(context), pole_helpers=self.pole_helpers
            )
        except (InspectorError, OSError, RuntimeError) as exc:
            return _failed(self, exc)
        frames = f"{len(result.frames)} frame(s)"
        helpers = f"{len(result.helpers)} helper(s)" + (
            f", {len(result.pole_helpers)} off the Euler pole" if result.pole_helpers else ""
        )
        if result.error is None:
            self.report({"WARNING"}, f"Wrote {self.path}: {frames}, {helpers}; not read back (ufbx is not installed)")
            return {"FINISHED"}
        uncorrected = [label for label, _why in result.not_corrected]
        uncorrected += [name for name, why in result.not_checked if why != THROUGH_JOINTS]  # collection instances
        skins = result.skins.summary() if result.skins is not None else ""
        exact = within_tolerance(result.error.relative) and not uncorrected
        exact = exact and (result.skins is None or result.skins.exact)
        left = f"; not corrected: {', '.join(uncorrected)}"
        self.report(
            {"INFO"} if exact else {"WARNING"},
            f"Wrote {self.path}: {frames}, {helpers}, relative error {result.error.relative:.1e}"
            + ("" if within_tolerance(result.error.relative) else f" (over {CHECK_TOLERANCE:g})")
            + (f"; {skins}" if skins else "")
            + (left if uncorrected else ""),
        )
        return {"FINISHED"}


class HI_OT_export_fbx_accumulated(bpy.types.Operator, _FileOperator):
    """Export FBX whose locals are the accumulated TRS (for Unreal importing objects into a
    level, reference poses, Preserve Local Transform, and Ogre), through an export-ready
    copy over the scene's frame range, then read it back, accumulate it as those engines do
    and report how far it is; the skew of Blender's own worlds is what remains"""

    bl_idname = "hierarchy_inspector.export_fbx_accumulated"
    bl_label = "Export FBX (accumulated)"
    bl_options = {"REGISTER"}  # the scene is as before afterwards: no undo step to add

    filename_ext = ".fbx"
    filter_glob: StringProperty(default="*.fbx", options={"HIDDEN"})  # type: ignore[valid-type]
    animation: BoolProperty(  # type: ignore[valid-type]
        name="Animation",
        description="Bake every frame of the scene's frame range (off: the current frame's pose)",
        default=True,
    )

    @classmethod
    def poll(cls, context):
        return _object_mode(cls, context)

    def execute(self, context):
        scene = context.scene
        frame_range = FrameRange(scene.frame_start, scene.frame_end, scene.frame_step) if self.animation else None
        try:
            check_outputs({"the export": self.path}, _open_file())
            result = write_fbx_accumulated(scene, self.path, frame_range)
        except (InspectorError, OSError, RuntimeError) as exc:
            return _failed(self, exc)
        head = f"Wrote {self.path}: {len(result.frames)} frame(s), {result.corrected} node(s) accumulated"
        if result.error is None:
            self.report({"WARNING"}, f"{head}; not read back (ufbx is not installed)")
            return {"FINISHED"}
        skewed = sum(1 for v in result.skew.values() if v > CHECK_TOLERANCE)
        exact = result.error.relative <= CHECK_TOLERANCE and not result.not_corrected
        self.report(
            {"INFO"} if exact else {"WARNING"},
            f"{head}, relative error {result.error.relative:.1e}"
            + ("" if result.error.relative <= CHECK_TOLERANCE else f" (over {CHECK_TOLERANCE:g})")
            + (f"; {skewed} keep Blender's own skew" if skewed else "")
            + (
                f"; not corrected: {', '.join(label for label, _w in result.not_corrected)}"
                if result.not_corrected
                else ""
            ),
        )
        return {"FINISHED"}


def draw_export_menu(self, context) -> None:
    """An entry in File > Export: FBX through the export-ready copy."""
    self.layout.operator(HI_OT_export_fbx.bl_idname, text="FBX, shear kept exactly (.fbx)")


class HI_OT_export_usd(bpy.types.Operator, _FileOperator):
    """Export USD with Blender's exporter, then give sheared objects a matrix op and
    animated skeletons helper joints where a joint's local holds shear, read the file
    back with usd-core and report how far it is from what Blender shows"""

    bl_idname = "hierarchy_inspector.export_usd"
    bl_label = "Export USD (exact)"
    bl_options = {"REGISTER"}  # the scene is as before afterwards: no undo step to add

    filename_ext = ".usdc"
    filter_glob: StringProperty(default="*.usd;*.usda;*.usdc", options={"HIDDEN"})  # type: ignore[valid-type]
    animation: BoolProperty(  # type: ignore[valid-type]
        name="Animation",
        description="Every frame of the scene's frame range as time samples (off: the current frame)",
        default=True,
    )
    only_deform_bones: BoolProperty(  # type: ignore[valid-type]
        name="Only Deform Bones",
        description="Joints for deform bones only; each joint whose parent bone is left out is written relative "
        "to its nearest exported ancestor, where USD places it",
        default=False,
    )
    xform_op_mode: EnumProperty(  # type: ignore[valid-type]
        name="Xform Ops",
        description="How Blender's exporter writes object transforms; prims whose local holds shear get a "
        "matrix op whatever the mode",
        items=(
            ("TRS", "Translate, Rotate, Scale", ""),
            ("TOS", "Translate, Orient, Scale", ""),
            ("MAT", "Matrix", ""),
        ),
        default="TRS",
    )

    @classmethod
    def poll(cls, context):
        missing = usd_exporter_missing()
        if missing:
            cls.poll_message_set(missing.capitalize())
            return False
        return _object_mode(cls, context)

    def execute(self, context):
        scene = context.scene
        frame_range = FrameRange(scene.frame_start, scene.frame_end, scene.frame_step) if self.animation else None
        try:
            check_outputs({"the export": self.path}, _open_file())
            result = write_usd(
                scene,
                self.path,
                frame_range,
                settings.thresholds(context),
                xform_op_mode=self.xform_op_mode,
                only_deform_bones=self.only_deform_bones,
            )
        except (InspectorError, OSError, RuntimeError) as exc:
            return _failed(self, exc)
        e = result.errors
        over = e.over() if e is not None else []
        what = (
            f"Wrote {self.path}: {len(result.frames)} frame(s), {len(result.matrix_ops)} matrix op(s), "
            f"{len(result.helpers)} helper joint(s)"
        )
        if e is not None:
            what += f"; objects {e.objects.relative:.1e}, joints {e.joints.relative:.1e}"
        if result.reparented:
            what += f"; {len(result.reparented)} joint(s) placed under their nearest exported ancestor"
        self.report({"WARNING"} if over else {"INFO"}, what + (f"; over the limit: {'; '.join(over)}" if over else ""))
        return {"FINISHED"}


def draw_export_usd_menu(self, context) -> None:
    """An entry in File > Export: USD corrected by usd-core (Blender's USD dialog takes no
    add-on option: ``USDHook`` has no properties)."""
    self.layout.operator(HI_OT_export_usd.bl_idname, text="USD, shear kept exactly (.usd*)")


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
            check_outputs({"the export": self.path, "its CSV": csv_path}, _open_file())
            document = accumulated_document(_inspect(context))
            files = {self.path: json_text(document)}
            if csv_path:
                files[csv_path] = accumulated_csv(document)
            write_all(files)
        except (InspectorError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        self.report(
            {"INFO"},
            f"Wrote {len(document['nodes'])} nodes; largest residual {document['max_residual_corner']:.3g}",
        )
        return {"FINISHED"}


CLASSES = (
    HI_OT_insert_helpers,
    HI_OT_bake_residual,
    HI_OT_export_gltf,
    HI_OT_export_fbx,
    HI_OT_export_fbx_accumulated,
    HI_OT_export_usd,
    HI_OT_export_accumulated,
)
#: (menu, draw function) pairs that register() appends and unregister() removes.
MENUS = ((bpy.types.TOPBAR_MT_file_export, draw_export_menu), (bpy.types.TOPBAR_MT_file_export, draw_export_usd_menu))
