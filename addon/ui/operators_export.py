"""The panel's exact exports (Fix & export): glTF, FBX, FBX accumulated and USD, each
doing what File > Export does for a rig: the scene's frame range when the scene
animates (or the current frame), the objects the artist sees (visible ones by default;
selected or all), deform bones only, FBX axes and scale presets; usable from Pose mode.
Each reports one line saying what the file holds and how it read back (details first,
in the Info log: Blender's status bar shows the last report)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from ..model.errors import InspectorError
from ..model.exports.animated_gltf import CHECK_TOLERANCE
from ..model.exports.choices import FBX_PRESETS, OBJECT_FILTERS, ExportChoice, FbxAxes, counted, export_line, fbx_axes
from ..model.exports.usd.plan import JOINT_TOLERANCE
from ..model.frames import FrameRange
from ..model.outputs import check_outputs
from ..scene import live, settings
from ..scene.blend_files import files_read
from ..scene.exports.fbx_accumulated import write_fbx_accumulated
from ..scene.exports.fbx_export import write_fbx
from ..scene.exports.gltf_animated import write_gltf_frames
from ..scene.exports.gltf_hook import THROUGH_JOINTS
from ..scene.exports.scope import object_mode, scene_animates
from ..scene.exports.usd_export import usd_exporter_missing, write_usd

FRAME_CHOICES = (
    ("RANGE", "Scene range", "Every frame of the scene's frame range, as an animation"),
    ("CURRENT", "Current frame", "The pose at the current frame only"),
)
AXES = tuple((a, a, "") for a in ("X", "Y", "Z", "-X", "-Y", "-Z"))
APPLY_SCALINGS = (
    ("FBX_SCALE_NONE", "All Local", "Scale and units applied to each object's transform; FBX scale 1"),
    ("FBX_SCALE_UNITS", "FBX Units Scale", "Units in the FBX scale, the custom scale in each transform"),
    ("FBX_SCALE_CUSTOM", "FBX Custom Scale", "The custom scale in the FBX scale, units in each transform"),
    ("FBX_SCALE_ALL", "FBX All", "Scale and units in the FBX scale"),
)


def open_blend_file() -> dict[str, str]:
    """The open .blend (none when it was never saved) and every file it reads (its
    libraries, images, caches), which no export may replace."""
    return files_read(label="the open .blend file")


def _failed(operator, exc: BaseException) -> set[str]:
    """Report an export's failure as one line (an exporter's last line, or the error's
    name when it has no text) and cancel."""
    text = str(exc).strip()
    operator.report({"ERROR"}, text.splitlines()[-1] if text else type(exc).__name__)
    return {"CANCELLED"}


def object_or_pose_mode(cls, context) -> bool:
    """``poll`` of the exports: Object or Pose mode (Blender's exporters need one)."""
    if context.scene is None:
        cls.poll_message_set("No scene")
        return False
    if context.mode not in {"OBJECT", "POSE"}:
        cls.poll_message_set("Switch to Object or Pose mode first")
        return False
    return True


def _details(operator, lines: list[str]) -> None:
    """Lines for the Info log before the headline (the status bar shows the last)."""
    for line in lines:
        operator.report({"INFO"}, line)


#: How many names a detail line of the Info log lists (Blender cuts longer reports).
LISTED = 30


def _listed(what: str, names: list) -> list[str]:
    """``What (12): a, b, c`` for the Info log, at most :data:`LISTED` names."""
    if not names:
        return []
    shown = ", ".join(str(n) for n in names[:LISTED])
    more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
    return [f"{what} ({len(names)}): {shown}{more}"]


class _Export(ExportHelper):
    """What every panel export asks, as Blender's own export dialogs do."""

    frames: EnumProperty(  # type: ignore[valid-type]
        name="Frames",
        items=FRAME_CHOICES,
        default="RANGE",
        options={"SKIP_SAVE"},  # decided on each invoke: the range when the scene animates
    )
    objects: EnumProperty(name="Include", items=OBJECT_FILTERS, default="VISIBLE")  # type: ignore[valid-type]
    deform_only: BoolProperty(  # type: ignore[valid-type]
        name="Only Deform Bones",
        description="Bones with Deform on (and the bones above them), as the exporters' own option",
        default=False,
    )

    @property
    def path(self) -> str:
        """ExportHelper's ``filepath`` property (the type stubs do not know it)."""
        return self.filepath  # type: ignore[attr-defined]

    @classmethod
    def poll(cls, context):
        return object_or_pose_mode(cls, context)

    def _default_frames(self, context) -> None:
        """Frames not chosen: the scene's range when the scene animates, else the current frame."""
        if not self.properties.is_property_set("frames"):  # type: ignore[attr-defined]
            self.frames = "RANGE" if scene_animates(context.scene) else "CURRENT"

    def invoke(self, context, event):
        self._default_frames(context)
        if self.properties.is_property_set("filepath"):  # type: ignore[attr-defined]
            return self.execute(context)  # a keymap item or a script that names the file: no file browser
        return ExportHelper.invoke(self, context, event)  # type: ignore[arg-type]

    def frame_range(self, context) -> FrameRange | None:
        self._default_frames(context)
        scene = context.scene
        return FrameRange(scene.frame_start, scene.frame_end, scene.frame_step) if self.frames == "RANGE" else None

    def choice(self) -> ExportChoice:
        return ExportChoice(self.objects, self.deform_only)

    def draw_common(self, layout) -> None:
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(self, "frames")
        layout.prop(self, "objects")
        layout.prop(self, "deform_only")

    def execute(self, context):
        try:
            check_outputs({"the export": self.path}, open_blend_file())
            with object_mode(context):
                lines, exact, headline = self.write(context)
        except (InspectorError, OSError, RuntimeError) as exc:
            return _failed(self, exc)
        live.invalidate()
        _details(self, lines)
        self.report({"INFO"} if exact else {"WARNING"}, headline)  # type: ignore[attr-defined]  # (an Operator)
        return {"FINISHED"}

    def write(self, context) -> tuple[list[str], bool, str]:
        """Write the file: ``(details for the Info log, exact, the headline)``."""
        raise NotImplementedError


def _name(path: str) -> str:
    return bpy.path.basename(path)


def _skins(skins, parts: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The skinned meshes' check (vertices placed by the file's skin against Blender's
    evaluated mesh) in a line's parts when exact, else as its problem; its phrase for
    the Info log. ``(parts, problems, details)``."""
    if skins is None or not skins.meshes:
        return parts, [], []
    summary = skins.summary()
    if skins.exact:
        return [*parts, counted(len(skins.meshes), "skinned mesh") + " exact"], [], [summary]
    worst = skins.worst()
    bbone = " (B-Bones, which the file cannot carry)" if worst is not None and "B-Bone" in worst.cause else ""
    short = f"skinned '{worst.name}' off {worst.relative:.1e} of its size{bbone}" if worst is not None else summary
    return parts, [short], [summary]


class HI_OT_export_gltf(bpy.types.Operator, _Export):
    """Export glTF with helper nodes where a local matrix holds shear (animated over the
    scene's range), then read the file back and report how far it is from what Blender
    shows"""

    bl_idname = "hierarchy_inspector.export_gltf"
    bl_label = "Export glTF (exact)"
    bl_options = {"REGISTER"}  # the scene is as before afterwards: no undo step to add

    filename_ext = ".glb"
    filter_glob: StringProperty(default="*.glb", options={"HIDDEN"})  # type: ignore[valid-type]
    y_up: BoolProperty(name="+Y Up", description="glTF's convention (off: keep Blender's Z up)", default=True)  # type: ignore[valid-type]

    def draw(self, context):
        self.draw_common(self.layout)
        self.layout.prop(self, "y_up")

    def write(self, context):
        result = write_gltf_frames(
            context.scene,
            self.path,
            self.frame_range(context),
            y_up=self.y_up,
            thresholds=settings.thresholds(context),
            half_frames=False,  # a measure of engines' interpolation (the command line's): not worth the wait here
            choice=self.choice(),
        )
        err = result.error
        parts = [counted(err.checked, "node"), counted(len(result.helpers), "helper node")]
        parts, problems, details = _skins(result.skins, parts)
        exact, line = export_line(_name(self.path), result.frames, parts, err.relative, CHECK_TOLERANCE, problems)
        details += _listed("Helper nodes above", result.helpers)
        details += [f"Not compared as nodes: '{n}' ({why})" for n, why in result.not_checked]
        return details, exact, line


def _apply_preset(props, _context=None) -> None:
    """The preset's axes and scale into the dialog's fields (they stay editable)."""
    axes = fbx_axes(props.preset)
    props.axis_forward, props.axis_up, props.apply_scale_options = axes.forward, axes.up, axes.scale_options


class _Fbx(_Export):
    """The FBX exports' own options: Blender's FBX dialog's axes and scale, with presets."""

    filename_ext = ".fbx"
    preset: EnumProperty(  # type: ignore[valid-type]
        name="Preset",
        items=[(key, name, why) for key, name, why, _axes in FBX_PRESETS],
        default="BLENDER",
        update=_apply_preset,
    )
    axis_forward: EnumProperty(name="Forward", items=AXES, default="-Z")  # type: ignore[valid-type]
    axis_up: EnumProperty(name="Up", items=AXES, default="Y")  # type: ignore[valid-type]
    apply_scale_options: EnumProperty(name="Apply Scalings", items=APPLY_SCALINGS, default="FBX_SCALE_NONE")  # type: ignore[valid-type]

    def axes(self) -> FbxAxes:
        """The fields, the preset's values where they were not set (a script or the
        command line passing only ``preset``: no update callback runs then)."""
        props = self.properties  # type: ignore[attr-defined]
        if not any(props.is_property_set(f) for f in ("axis_forward", "axis_up", "apply_scale_options")):
            _apply_preset(self)
        return FbxAxes(self.axis_forward, self.axis_up, self.apply_scale_options)

    def draw_fbx(self, layout) -> None:
        self.draw_common(layout)
        layout.prop(self, "preset")
        col = layout.column(align=True)
        col.prop(self, "axis_forward")
        col.prop(self, "axis_up")
        layout.prop(self, "apply_scale_options")

    def execute(self, context):
        self.axes()
        if self.axis_forward[-1] == self.axis_up[-1]:
            self.report(  # type: ignore[attr-defined]  # (an Operator)
                {"ERROR"}, f"Forward ({self.axis_forward}) and Up ({self.axis_up}) must be different axes"
            )
            return {"CANCELLED"}
        return super().execute(context)


class HI_OT_export_fbx(bpy.types.Operator, _Fbx):
    """Export FBX with Blender's exporter through an export-ready copy (temporary helpers
    where a local matrix holds shear, all undone afterwards), baked over the scene's
    range, then read the file back and report how far it is from what Blender shows"""

    bl_idname = "hierarchy_inspector.export_fbx"
    bl_label = "Export FBX (exact)"
    bl_options = {"REGISTER"}  # the scene is as before afterwards: no undo step to add

    filter_glob: StringProperty(default="*.fbx", options={"HIDDEN"})  # type: ignore[valid-type]
    pole_helpers: BoolProperty(  # type: ignore[valid-type]
        name="Euler pole helpers",
        description="A still helper above objects whose rotation passes near the Euler pole, where Blender's "
        "FBX exporter writes its angles in single precision (off: those objects as Blender writes them)",
        default=True,
    )

    def draw(self, context):
        self.draw_fbx(self.layout)
        self.layout.prop(self, "pole_helpers")

    def write(self, context):
        result = write_fbx(
            context.scene,
            self.path,
            self.frame_range(context),
            settings.thresholds(context),
            pole_helpers=self.pole_helpers,
            choice=self.choice(),
            axes=self.axes(),
        )
        uncorrected = [label for label, _why in result.not_corrected]
        uncorrected += [name for name, why in result.not_checked if why != THROUGH_JOINTS]  # collection instances
        parts = [counted(len(result.helpers), "helper")]
        if result.error is not None:
            parts.insert(0, counted(result.error.checked, "node"))
        if result.pole_helpers:
            parts.append(f"{len(result.pole_helpers)} off the Euler pole")
        parts, problems, details = _skins(result.skins, parts)
        problems += [f"{len(uncorrected)} not corrected (see the Info log)"] if uncorrected else []
        relative = result.error.relative if result.error is not None else None
        exact, line = export_line(_name(self.path), result.frames, parts, relative, CHECK_TOLERANCE, problems)
        details += _listed("Helpers above", result.helpers) + _listed("Off the Euler pole", result.pole_helpers)
        details += [f"Not corrected: '{label}' ({why})" for label, why in result.not_corrected]
        return details, exact, line


class HI_OT_export_fbx_accumulated(bpy.types.Operator, _Fbx):
    """Export FBX whose locals are the accumulated TRS (for Unreal importing objects into a
    level, reference poses, Preserve Local Transform, and Ogre), through an export-ready
    copy over the scene's range, then read it back, accumulate it as those engines do
    and report how far it is; the skew of Blender's own worlds is what remains"""

    bl_idname = "hierarchy_inspector.export_fbx_accumulated"
    bl_label = "Export FBX (accumulated)"
    bl_options = {"REGISTER"}  # the scene is as before afterwards: no undo step to add

    filter_glob: StringProperty(default="*.fbx", options={"HIDDEN"})  # type: ignore[valid-type]

    def draw(self, context):
        self.draw_fbx(self.layout)

    def write(self, context):
        result = write_fbx_accumulated(
            context.scene, self.path, self.frame_range(context), choice=self.choice(), axes=self.axes()
        )
        units = settings.units(context)
        skewed = {label: v for label, v in result.skew.items() if v > settings.thresholds(context).corner}
        parts = [counted(result.corrected, "node") + " accumulated"]
        if skewed:
            parts.append(f"{len(skewed)} keep Blender's own skew (up to {units.length(max(skewed.values()))})")
        problems = [f"{len(result.not_corrected)} not corrected (see the Info log)"] if result.not_corrected else []
        relative = result.error.relative if result.error is not None else None
        exact, line = export_line(_name(self.path), result.frames, parts, relative, CHECK_TOLERANCE, problems)
        worst = sorted(skewed, key=lambda k: -skewed[k])
        details = _listed("Blender's own skew, which no TRS holds (worst first)", worst)
        details += [f"Not corrected: '{label}' ({why})" for label, why in result.not_corrected]
        return details, exact, line


class HI_OT_export_usd(bpy.types.Operator, _Export):
    """Export USD with Blender's exporter, then give sheared objects a matrix op and
    animated skeletons helper joints where a joint's local holds shear, read the file
    back with usd-core and report how far it is from what Blender shows"""

    bl_idname = "hierarchy_inspector.export_usd"
    bl_label = "Export USD (exact)"
    bl_options = {"REGISTER"}  # the scene is as before afterwards: no undo step to add

    filename_ext = ".usdc"
    filter_glob: StringProperty(default="*.usd;*.usda;*.usdc", options={"HIDDEN"})  # type: ignore[valid-type]
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
        return object_or_pose_mode(cls, context)

    def draw(self, context):
        self.draw_common(self.layout)
        self.layout.prop(self, "xform_op_mode")

    def write(self, context):
        result = write_usd(
            context.scene,
            self.path,
            self.frame_range(context),
            settings.thresholds(context),
            xform_op_mode=self.xform_op_mode,
            choice=self.choice(),
        )
        e = result.errors
        parts = [counted(len(result.matrix_ops), "matrix op"), counted(len(result.helpers), "helper joint")]
        problems = e.over() if e is not None else []
        relative = max(e.objects.relative, e.joints.relative) if e is not None else None
        # Joints are held to the half-precision limit of their scales, objects to float precision (in problems).
        limit = JOINT_TOLERANCE if e is not None and e.joints.checked else CHECK_TOLERANCE
        exact, line = export_line(_name(self.path), result.frames, parts, relative, limit, problems)
        details = _listed("Matrix ops on", result.matrix_ops) + _listed("Helper joints above", result.helpers)
        details += _listed("Placed under their nearest exported ancestor", result.reparented)
        details += [f"Not checked: '{n}' ({why})" for n, why in result.not_checked]
        return details, exact, line


def draw_export_menu(self, context) -> None:
    """An entry in File > Export: FBX through the export-ready copy."""
    self.layout.operator(HI_OT_export_fbx.bl_idname, text="FBX, shear kept exactly (.fbx)")


def draw_export_usd_menu(self, context) -> None:
    """An entry in File > Export: USD corrected by usd-core (Blender's USD dialog takes no
    add-on option: ``USDHook`` has no properties)."""
    self.layout.operator(HI_OT_export_usd.bl_idname, text="USD, shear kept exactly (.usd*)")


CLASSES = (HI_OT_export_gltf, HI_OT_export_fbx, HI_OT_export_fbx_accumulated, HI_OT_export_usd)
#: (menu, draw function) pairs that register() appends and unregister() removes.
MENUS = ((bpy.types.TOPBAR_MT_file_export, draw_export_menu), (bpy.types.TOPBAR_MT_file_export, draw_export_usd_menu))
