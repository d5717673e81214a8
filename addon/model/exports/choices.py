"""What the panel's exports write, chosen as in Blender's own export dialogs, and the one
line each export reports (Blender-free).

- :class:`ExportChoice`: which objects go into the file (the visible ones by default, as
  the artist sees the scene: a generated Rigify rig leaves its metarig hidden and its
  220 widget objects in an excluded collection, and Blender's exporters write both unless
  told not to), and deform bones only; turned into each exporter's own options.
- :class:`FbxAxes`: the FBX file's axes and how its scale is written, with presets for
  Unity and Unreal (:data:`FBX_PRESETS`).
- :func:`frames_text` and :func:`export_line`: what the file holds, in one line (frames,
  helpers, what was left out, the read-back error).
"""

from __future__ import annotations

from dataclasses import dataclass

from .animated_gltf import within_tolerance

#: Which objects an export writes: (identifier, name, description), as an enum's items.
OBJECT_FILTERS = (
    (
        "VISIBLE",
        "Visible objects",
        "Objects visible in the viewport (hidden objects and excluded or hidden collections left out: "
        "Rigify's metarig and widgets)",
    ),
    ("SELECTED", "Selected objects", "Only the selected objects (as Blender's 'Selected Objects')"),
    ("ALL", "All objects", "Every object Blender's exporter writes by default, hidden ones included"),
)


@dataclass(frozen=True)
class ExportChoice:
    """Which objects (``objects``: one of :data:`OBJECT_FILTERS`) and bones
    (``deform_only``) a file holds."""

    objects: str = "VISIBLE"
    deform_only: bool = False

    def __post_init__(self):
        if self.objects not in {key for key, _name, _why in OBJECT_FILTERS}:
            raise ValueError(f"objects must be one of {[k for k, _n, _w in OBJECT_FILTERS]}, not {self.objects!r}")

    def gltf(self) -> dict:
        """Blender's glTF exporter's options for this choice."""
        return {
            "use_visible": self.objects == "VISIBLE",
            "use_selection": self.objects == "SELECTED",
            "export_def_bones": self.deform_only,
        }

    def fbx(self) -> dict:
        """Blender's FBX exporter's options for this choice."""
        return {
            "use_visible": self.objects == "VISIBLE",
            "use_selection": self.objects == "SELECTED",
            "use_armature_deform_only": self.deform_only,
        }

    def usd(self) -> dict:
        """Blender's USD exporter's options for this choice."""
        return {
            "visible_objects_only": self.objects == "VISIBLE",
            "selected_objects_only": self.objects == "SELECTED",
            "only_deform_bones": self.deform_only,
        }

    def describe(self) -> str:
        """``visible objects, deform bones only``: for messages."""
        return dict((k, n.lower()) for k, n, _w in OBJECT_FILTERS)[self.objects] + (
            ", deform bones only" if self.deform_only else ""
        )


#: Everything Blender's exporters write by default (what the command line exports).
EVERYTHING = ExportChoice("ALL")


@dataclass(frozen=True)
class FbxAxes:
    """The FBX file's axes (``forward``, ``up``: Blender's FBX dialog's Forward and Up)
    and Apply Scalings (``scale_options``)."""

    forward: str = "-Z"
    up: str = "Y"
    scale_options: str = "FBX_SCALE_NONE"

    def fbx(self) -> dict:
        return {"axis_forward": self.forward, "axis_up": self.up, "apply_scale_options": self.scale_options}


#: Blender's FBX dialog's defaults (what the command line exports).
BLENDER_AXES = FbxAxes()

#: FBX presets: (identifier, name, description, axes). Blender's dialog's defaults; Unity
#: (-Z forward, Y up, "FBX All": the file's unit scale carries metres, so Unity imports
#: at scale 1 with its axes converted at the root); Unreal as Epic's Send to Unreal
#: add-on exports (its default template: Y forward, Z up, "All Local", unit scale applied).
FBX_PRESETS = (
    ("BLENDER", "Blender", "Blender's FBX defaults: -Z forward, Y up, All Local", BLENDER_AXES),
    (
        "UNITY",
        "Unity",
        "-Z forward, Y up, Apply Scalings FBX All (imports at scale 1)",
        FbxAxes("-Z", "Y", "FBX_SCALE_ALL"),
    ),
    (
        "UNREAL",
        "Unreal",
        "Y forward, Z up, All Local (Epic's Send to Unreal defaults)",
        FbxAxes("Y", "Z", "FBX_SCALE_NONE"),
    ),
)


def fbx_axes(preset: str) -> FbxAxes:
    """The axes of the preset ``preset`` (one of :data:`FBX_PRESETS`)."""
    for key, _name, _why, axes in FBX_PRESETS:
        if key == preset:
            return axes
    raise ValueError(f"FBX preset must be one of {[p[0] for p in FBX_PRESETS]}, not {preset!r}")


def frames_text(frames) -> str:
    """``frames 1..40 (40)``, ``frames 1..40 step 2 (20)`` or ``frame 12 only``."""
    frames = [int(f) for f in frames]
    if len(frames) == 1:
        return f"frame {frames[0]} only"
    step = frames[1] - frames[0]
    return f"frames {frames[0]}..{frames[-1]}" + (f" step {step}" if step != 1 else "") + f" ({len(frames)})"


def export_line(
    name: str,
    frames,
    parts: list[str],
    relative: float | None,
    tolerance: float,
    problems: list[str] = (),  # type: ignore[assignment]
) -> tuple[bool, str]:
    """``(exact, line)``: ``Wrote 'rig.glb': frames 1..40 (40), 17 helper joints;
    read back exact (2.1e-07)``; ``relative`` None: not read back (the reader is not
    installed). ``parts``: what else the file holds; ``problems``: what is over its
    limit or not corrected (the line says so and ``exact`` is False)."""
    head = f"Wrote '{name}': {', '.join([frames_text(frames), *parts])}"
    if relative is None:
        return False, f"{head}; not read back (its reader is not installed)"
    over = not within_tolerance(relative, tolerance)  # NaN never passes
    verdict = f"read back {'NOT exact' if over else 'exact'} ({relative:.1e}" + (
        f", over {tolerance:g})" if over else ")"
    )
    tail = f"; {'; '.join(problems)}" if problems else ""
    return not over and not problems, f"{head}; {verdict}{tail}"


def counted(count: int, what: str) -> str:
    """``1 helper joint``, ``17 helper joints``."""
    return f"{count} {what}{'' if count == 1 else 's'}"
