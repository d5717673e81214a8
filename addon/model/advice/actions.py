"""Advice per flagged node and engine path: something the user can do to *that* node
(object or bone) that removes what was measured, or, where Blender has no such setting,
the export that keeps it. Blender-free; the tests apply every kind of advice to a copy
of a scene and measure that its claim holds (``tests/scene/test_advice.py``).

Engine paths (:mod:`..engines.paths`), each with the export right for it: glTF viewers,
Unity and Godot (``matrix_model``: one TRS per node, matrices composed; the exact glTF
or FBX export, helper nodes where a local holds shear), Unreal's classic FBX importer
(``unreal_fbx``: each node's file global without its shear; the exact FBX export), Unreal
Interchange and Ogre (``unreal_interchange``, ``accumulated``: the file's locals
accumulated; the accumulated FBX export, whose locals are the accumulated TRS), and
``BLENDER`` (change the scene so that Blender shows what engines can show; the look
changes). Paths given the same advice share one item (``engines`` names them all).

What each action claims (and the tests check):

- ``EXACT``: nothing to do; Blender's plain export already reproduces Blender there in
  that engine path.
- ``INSERT_HELPERS`` (objects): after *Insert helpers* the object's local matrix holds
  no shear and a plain glTF export is exact for it.
- ``CLEAR_PARENT_INVERSE`` (objects): afterwards its local matrix holds no shear (the
  object moves: its parent inverse held the offset).
- ``EXPORT_GLTF_EXACT``: *Export glTF (exact)* reads back within float precision for it
  (bones: a helper joint above it; Blender cannot give bones a helper).
- ``EXPORT_FBX_EXACT`` (Unreal FBX): the exact FBX read back, its globals made
  FTransforms, places the node within the corner threshold (its world holds no shear).
- ``EXPORT_FBX_ACCUMULATED`` (Unreal Interchange, Ogre): the accumulated FBX read back,
  its locals accumulated, places the node within the corner threshold (its world holds
  no shear).
- ``BAKE`` (meshes, empties): after *Bake shear into meshes* it is no longer sheared
  and the path's export (above) is exact for it.
- ``INHERIT_ALIGNED`` (bones): with Inherit Scale Aligned it is no longer sheared and
  the path's export is exact for it.
- ``APPLY_SCALE`` (the scaled ancestor object, an armature for bones): after
  Ctrl+A > Scale on it the node is no longer sheared.
- ``UNIFORM_SCALE`` (bones; the one scaled bone above): with that scale made uniform the
  bone is no longer flagged.
- ``NO_FIX``: no setting exists; the text says so and names the export that comes
  closest, with what it leaves (Blender's own skew).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engines.paths import ACCUMULATED, MATRIX, UNREAL_FBX, UNREAL_INTERCHANGE
from ..explain import shear_cause
from ..inspection import Inspection
from ..nodes import BONE
from .causes import nearest_sources

GLTF = "glTF, Unity, Godot"
BLENDER = "In Blender"
BAKEABLE = {"MESH", "EMPTY"}
#: Inherit Scale modes under which a bone's world matrix composes its parent's fully.
COMPOSING = {"FULL", "FIX_SHEAR", ""}

#: How advice names each engine path.
ENGINE_NAME = {
    MATRIX: GLTF,
    UNREAL_FBX: "Unreal FBX",
    UNREAL_INTERCHANGE: "Unreal locals",
    ACCUMULATED: "Ogre",
}
#: The export that is right for each path that cannot show a skew (Fix & export's button).
PATH_EXPORT = {
    UNREAL_FBX: "Fix > Export FBX (exact)",
    UNREAL_INTERCHANGE: "Fix > Export FBX (accumulated)",
    ACCUMULATED: "Fix > Export FBX (accumulated)",
}
#: The action that names each path's export.
EXPORT_ACTION = {
    UNREAL_FBX: "EXPORT_FBX_EXACT",
    UNREAL_INTERCHANGE: "EXPORT_FBX_ACCUMULATED",
    ACCUMULATED: "EXPORT_FBX_ACCUMULATED",
}


@dataclass(frozen=True)
class Advice:
    """One thing to do. ``target`` is the node it applies to (the node itself or the
    scaled ancestor); ``text`` names nodes by label or name, never by index; ``engines``
    the engine paths it is for (their names joined) or :data:`BLENDER`."""

    engines: str
    action: str
    target: int
    text: str
    paths: tuple[str, ...] = ("blender",)  #: the engine path ids, or ``("blender",)``


def advice(inspection: Inspection, i: int) -> list[Advice]:
    """What to do about node ``i`` per engine path that counts (``thresholds.engines``),
    then in Blender; empty when it is not flagged or Blender evaluates it differently
    (constraints, IK: the matrix is not its own)."""
    if not inspection.flagged[i] or inspection.nodes.notes[i]:
        return []
    items: list[tuple[str, str, int, object]] = []  # (path, action, target, text for the engines' names)
    for path in inspection.thresholds.engines:
        items += _gltf(inspection, i) if path == MATRIX else _trs_path(inspection, i, path)
    merged: dict[tuple[str, int, object], list[str]] = {}
    for path, action, target, text in items:
        merged.setdefault((action, target, text), []).append(path)
    out = []
    for (action, target, text), paths in merged.items():
        names = [ENGINE_NAME[p] for p in paths]
        out.append(Advice(", ".join(names), action, target, text(" and ".join(names)), tuple(paths)))  # type: ignore[operator]
    return [*out, *_blender(inspection, i)]


def _said(template: str):
    """A text for the engines' names: ``template`` with ``{engines}`` filled in (equal
    templates merge: advice for two paths that say the same thing is one item)."""
    return _Text(template)


class _Text(str):
    def __call__(self, engines: str) -> str:
        return self.format(engines=engines)


def _gltf(ins: Inspection, i: int) -> list[tuple]:
    nodes, limit = ins.nodes, ins.thresholds.corner
    name = nodes.name(i)
    lossy = bool(ins.lossy_local[i]) or ins.corner(MATRIX)[i] > limit
    if not lossy:
        return [(MATRIX, "EXACT", i, _said(f"{{engines}}: a plain export shows '{name}' exactly."))]
    if nodes.kind(i) == BONE:
        return [
            (
                MATRIX,
                "EXPORT_GLTF_EXACT",
                i,
                _said(
                    f"{{engines}}: no bone setting keeps the shear of '{name}'; Fix > Export glTF (exact) adds a "
                    f"helper joint above it (Export FBX (exact) too)."
                ),
            )
        ]
    return [
        (MATRIX, "INSERT_HELPERS", i, _said(f"{{engines}}: Fix > Insert helpers keeps '{name}' exact.")),
        (
            MATRIX,
            "CLEAR_PARENT_INVERSE",
            i,
            _said(f"{{engines}}: or clear its parent inverse (Alt+P; '{name}' moves)."),
        ),
    ]


def _trs_path(ins: Inspection, i: int, path: str) -> list[tuple]:
    """Advice for a path that shows no shear (Unreal's importers, Ogre)."""
    nodes, limit = ins.nodes, ins.thresholds.corner
    name = nodes.name(i)
    if ins.corner(path)[i] <= limit:
        return [(path, "EXACT", i, _said(f"{{engines}}: a plain FBX import shows '{name}' exactly."))]
    export = PATH_EXPORT[path]
    if not ins.sheared[i]:
        return [(path, EXPORT_ACTION[path], i, _said(f"{{engines}}: {export} places '{name}' exactly."))]
    if nodes.kind(i) != BONE and nodes.types[i] in BAKEABLE:
        return [
            (
                path,
                "BAKE",
                i,
                _said(
                    f"{{engines}}: no TRS holds its skew; Fix > Bake shear into meshes keeps the look, "
                    f"then {export} is exact."
                ),
            )
        ]
    cause = shear_cause(ins, i)
    if nodes.kind(i) == BONE and cause is not None and nodes.kind(cause[0]) == BONE:
        if nodes.inherit_scale[i] in COMPOSING:
            return [
                (
                    path,
                    "INHERIT_ALIGNED",
                    i,
                    _said(
                        f"{{engines}}: no TRS holds its skew; set Inherit Scale of '{name}' to Aligned "
                        f"(Bone > Relations; the skew goes), then {export} is exact."
                    ),
                )
            ]
    return [
        (
            path,
            "NO_FIX",
            i,
            _said(
                f"{{engines}}: no TRS and no setting of '{name}' holds its skew; {export} keeps its "
                f"position and rotation exact."
            ),
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
