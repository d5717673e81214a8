"""glTF export that keeps shear: helper empties above sheared objects, Blender's own
glTF exporter, helper nodes above sheared joints in the file (bones cannot get empties
in Blender), then the file read back the way a viewer composes it and compared with
Blender's world matrices.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import bpy
import numpy as np
from bpy_extras.io_utils import axis_conversion

from ..model.errors import ExportError
from ..model.exports.gltf_check import add_joint_helpers, gltf_error
from ..model.exports.gltf_file import Gltf
from ..model.outputs import check_writable, write_with
from ..model.thresholds import DEFAULT, Thresholds
from .blender_output import run_exporter
from .edits.helpers import HelperResult, insert_helpers, remove_helpers
from .scan import scan_scene


def gltf_conversion(y_up: bool) -> np.ndarray:
    """The glTF exporter's axis conversion ``(4, 4)``: Blender's Z-up to glTF's Y-up
    (``x, y, z -> x, z, -y``), or the identity."""
    if not y_up:
        return np.eye(4)
    conversion: Any = axis_conversion(to_forward="-Z", to_up="Y")  # a Matrix (the stubs say None)
    return np.array(conversion.to_4x4(), dtype=np.float64)


def export_gltf(
    filepath: str,
    *,
    y_up: bool = True,
    selection_only: bool = False,
    all_influences: bool = False,
    options: dict | None = None,
) -> None:
    """Blender's own glTF exporter, pose as shown at the current frame (no rest pose, no
    animation). ``export_current_frame``: without it the exporter goes to frame 0 first
    and writes that frame's pose whatever frame the scene is on. ``all_influences``:
    every bone influence of a vertex (the exporter keeps 4 by default). ``options``:
    more of the exporter's options (which objects and bones). A failure of the exporter
    is one line (:func:`.blender_output.run_exporter`)."""
    fmt = "GLB" if filepath.lower().endswith(".glb") else "GLTF_SEPARATE"
    run_exporter(
        "glTF",
        bpy.ops.export_scene.gltf,
        filepath=filepath,
        export_format=fmt,
        export_yup=y_up,
        export_animations=False,
        export_current_frame=True,
        export_rest_position_armature=False,
        export_apply=False,
        export_all_influences=all_influences,
        **{"use_selection": selection_only, **(options or {})},
    )


class GltfResult(NamedTuple):
    relative_error: float  #: largest entry difference / largest world-matrix entry (>= 1)
    absolute_error: float  #: largest matrix-entry difference, scene units
    helpers: int  #: helper empties inserted in Blender + helper nodes added above joints
    per_node: dict  #: label -> absolute error
    skipped: list  #: (object, why) sheared objects that got no helper


def write_gltf(
    scene, out: str, *, y_up: bool = True, helpers: bool = True, thresholds: Thresholds = DEFAULT
) -> GltfResult:
    """Export ``scene`` to the .glb ``out`` with Blender's exporter and measure it.

    With ``helpers`` (the default) helper empties are inserted above sheared objects
    first (this changes the open scene: save it or reload it as you wish) and helper
    nodes above sheared joints after. The file is written whole or not at all, then
    read back and composed as a viewer does; the result says how far it is from
    Blender's world matrices.
    """
    check_writable(out)
    if scene != bpy.context.scene:
        raise ExportError(f"scene '{scene.name}' is not the current scene: Blender's exporter writes the current one")
    inspection = scan_scene(scene, thresholds)
    added = insert_helpers(inspection) if helpers else HelperResult([], [], [], [])
    if added.inserted:
        inspection = scan_scene(scene, thresholds)
    result: dict = {"joints": []}
    conversion = gltf_conversion(y_up)

    def write(tmp: str) -> None:
        export_gltf(tmp, y_up=y_up)
        if helpers:
            gltf = Gltf.load(tmp)
            result["joints"] = add_joint_helpers(gltf, inspection, conversion)
            gltf.save(tmp)
        result["error"] = gltf_error(tmp, inspection, conversion)

    try:
        write_with(out, write)
    except BaseException:
        remove_helpers(added.saved)  # the export failed: leave the scene as it was
        raise
    relative, per_node = result["error"]
    absolute = max(per_node.values()) if per_node else 0.0
    return GltfResult(relative, absolute, len(added.inserted) + len(result["joints"]), per_node, added.skipped)
