"""Advice per flagged node and engine family: something the user can do to *that* node
(object or bone) that removes what was measured, or, where Blender has no such setting,
the export that keeps it. Blender-free; the tests apply every kind of advice to a copy
of a scene and measure that its claim holds (``tests/scene/test_advice.py``).

Engine families: ``GLTF`` (Unity, Godot, glTF viewers: one TRS per node, matrices
composed), ``ACCUMULATED`` (Unreal, Ogre: TRS accumulated), ``BLENDER`` (change the
scene so that Blender shows what engines can show; the look changes).

What each action claims (and the tests check):

- ``EXACT``: nothing to do; a plain export already reproduces Blender there.
- ``INSERT_HELPERS`` (objects): after *Insert helpers* the object's local matrix holds
  no shear and a plain glTF export is exact for it.
- ``CLEAR_PARENT_INVERSE`` (objects): afterwards its local matrix holds no shear (the
  object moves: its parent inverse held the offset).
- ``EXPORT_GLTF_EXACT``: *Export glTF (exact)* reads back within float precision for it
  (bones: a helper joint above it; Blender cannot give bones a helper).
- ``EXPORT_ACCUMULATED``: the accumulated export's residual for it is below the corner
  threshold (its world matrix holds no shear).
- ``BAKE`` (meshes, empties): after *Bake shear into meshes* it is no longer sheared
  and the accumulated export is exact for it.
- ``INHERIT_ALIGNED`` (bones): with Inherit Scale Aligned it is no longer sheared and
  the accumulated export is exact for it (glTF then needs the exact export).
- ``APPLY_SCALE`` (the scaled ancestor object, an armature for bones): after
  Ctrl+A > Scale on it the node is no longer sheared.
- ``UNIFORM_SCALE`` (bones; the one scaled bone above): with that scale made uniform the
  bone is no longer flagged.
- ``NO_FIX``: no setting exists; the text says so and names the export that comes closest.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..explain import shear_cause
from ..inspection import Inspection
from ..nodes import BONE
from .causes import nearest_sources

GLTF = "glTF, Unity, Godot"
ACCUMULATED = "Unreal, Ogre"
BLENDER = "In Blender"
BAKEABLE = {"MESH", "EMPTY"}
#: Inherit Scale modes under which a bone's world matrix composes its parent's fully.
COMPOSING = {"FULL", "FIX_SHEAR", ""}


@dataclass(frozen=True)
class Advice:
    """One thing to do. ``target`` is the node it applies to (the node itself or the
    scaled ancestor); ``text`` names nodes by label or name, never by index."""

    engines: str
    action: str
    target: int
    text: str


def advice(inspection: Inspection, i: int) -> list[Advice]:
    """What to do about node ``i`` per engine family; empty when it is not flagged or
    Blender evaluates it differently (constraints, IK: the matrix is not its own)."""
    if not inspection.flagged[i] or inspection.nodes.notes[i]:
        return []
    return [*_gltf(inspection, i), *_accumulated(inspection, i), *_blender(inspection, i)]


def _gltf(ins: Inspection, i: int) -> list[Advice]:
    nodes, limit = ins.nodes, ins.thresholds.corner
    name = nodes.name(i)
    lossy = bool(ins.lossy_local[i]) or ins.analysis.matrix_model_deviation.max_corner[i] > limit
    if not lossy:
        return [Advice(GLTF, "EXACT", i, f"{GLTF}: a plain export shows '{name}' exactly.")]
    if nodes.kind(i) == BONE:
        return [
            Advice(
                GLTF,
                "EXPORT_GLTF_EXACT",
                i,
                f"{GLTF}: no bone setting keeps the shear of '{name}'; Fix > Export glTF (exact) adds a "
                f"helper joint above it.",
            )
        ]
    return [
        Advice(GLTF, "INSERT_HELPERS", i, f"{GLTF}: Fix > Insert helpers keeps '{name}' exact."),
        Advice(
            GLTF,
            "CLEAR_PARENT_INVERSE",
            i,
            f"{GLTF}: or clear its parent inverse (Alt+P; '{name}' moves).",
        ),
    ]


def _accumulated(ins: Inspection, i: int) -> list[Advice]:
    nodes, limit = ins.nodes, ins.thresholds.corner
    name = nodes.name(i)
    if ins.analysis.accumulated_deviation.max_corner[i] <= limit:
        return [Advice(ACCUMULATED, "EXACT", i, f"{ACCUMULATED}: an import shows '{name}' exactly.")]
    export = "Fix > Export accumulated TRS"
    if not ins.sheared[i]:
        return [Advice(ACCUMULATED, "EXPORT_ACCUMULATED", i, f"{ACCUMULATED}: {export} places '{name}' exactly.")]
    if nodes.kind(i) != BONE and nodes.types[i] in BAKEABLE:
        return [
            Advice(
                ACCUMULATED,
                "BAKE",
                i,
                f"{ACCUMULATED}: no TRS holds its skew; Fix > Bake shear into meshes keeps the look, "
                f"then {export} is exact.",
            )
        ]
    cause = shear_cause(ins, i)
    if nodes.kind(i) == BONE and cause is not None and nodes.kind(cause[0]) == BONE:
        if nodes.inherit_scale[i] in COMPOSING:
            return [
                Advice(
                    ACCUMULATED,
                    "INHERIT_ALIGNED",
                    i,
                    f"{ACCUMULATED}: no TRS holds its skew; set Inherit Scale of '{name}' to Aligned "
                    f"(Bone > Relations; the skew goes), then {export} is exact.",
                )
            ]
    return [
        Advice(
            ACCUMULATED,
            "NO_FIX",
            i,
            f"{ACCUMULATED}: no TRS and no setting of '{name}' holds its skew; {export} keeps its "
            f"position and rotation exact.",
        )
    ]


def _blender(ins: Inspection, i: int) -> list[Advice]:
    nodes = ins.nodes
    name = nodes.name(i)
    out = []
    cause = shear_cause(ins, i) if ins.sheared[i] else None
    if cause is not None and nodes.kind(cause[0]) != BONE:
        a = nodes.label(cause[0])
        out.append(
            Advice(
                BLENDER,
                "APPLY_SCALE",
                cause[0],
                f"{BLENDER}: apply the scale of '{a}' (Ctrl+A > Scale): '{name}' loses its skew, as engines show it.",
            )
        )
    source, count = nearest_sources(ins)
    s = int(source[i])
    if nodes.kind(i) == BONE and s >= 0 and s != i and nodes.kind(s) == BONE and count[i] == 1 and not out:
        out.append(
            Advice(
                BLENDER,
                "UNIFORM_SCALE",
                s,
                f"{BLENDER}: while '{nodes.name(s)}' is scaled non-uniformly no setting of '{name}' makes it "
                f"exact everywhere; a uniform scale on '{nodes.name(s)}' does (the squash goes).",
            )
        )
    return out
