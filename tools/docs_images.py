"""The pictures in docs/, cut from what ``make test-ui`` took (``make docs-images``).

``make test-ui`` runs the installed extension in a real Blender 4.3.2 window at the
default 291 px sidebar (tools/ui_screenshot.py) and writes its screenshots and
``layout.json`` (each shot's region rectangles, Blender's window coordinates: origin at
the bottom left) to build/ui/; its stock-Blender run writes the demo's own pictures to
build/stock/demo/. This script cuts and joins them into the pictures the docs show, so
the docs never show a panel that no longer looks like that::

    python tools/docs_images.py [--ui build/ui] [--stock build/stock] [--out docs]

Every picture is written whole or not at all (a temporary file renamed into place). A
missing input stops the script with a message naming it, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
GAP = 10  # pixels between joined sidebars
BACKGROUND = (48, 48, 48)  # Blender's dark grey, behind sidebars of different heights
VIEWPORT_KEPT = 707  # pixels of the viewport kept left of the sidebar (the rig and its boxes)
STATUS_COLUMNS = (150, 1450)  # the status bar's middle, where Blender writes its report
DIALOG_OPTIONS = (1340, 60, 1600, 300)  # the file browser's option column (left, top, right, bottom)

#: docs picture -> what it is cut from (documented in docs/panel.md and the pages using it)
VIEWPORT_AND_SIDEBAR = {
    "demo_panel.png": "demo_bones",
    "rig_ui.png": "rig_panel",
    "scan_overlay.png": "rig_overlay_flagged",
}
SIDEBARS = {
    "range_list.png": ["range_list"],
    "dynamics.png": ["dynamics"],
    "rigger_sidebar.png": ["range_list", "deform_chains", "deform_advice", "dynamics"],
}
STATUS_STRIPS = ["range_scan", "gltf", "fbx", "fbx_accumulated", "insert_helpers"]


class MissingInput(Exception):
    """An input picture or layout entry is not there (run make test-ui first)."""


def _open(path: Path) -> Image.Image:
    if not path.is_file():
        raise MissingInput(f"{path} is missing: run make test-ui first")
    return Image.open(path).convert("RGB")


def _region_box(layout: dict, shot: str, region: str) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) in the PNG's pixels (origin top left) of a region."""
    try:
        r = layout["screenshots"][shot]["regions"][region]
    except KeyError:
        raise MissingInput(
            f"layout.json has no region {region} for the shot {shot!r}: run make test-ui again"
        ) from None
    top = layout["window"]["height"] - (r["y"] + r["height"])
    return r["x"], top, r["x"] + r["width"], top + r["height"]


class Shots:
    """The screenshots of one make test-ui run, by the names layout.json gives them."""

    def __init__(self, ui: Path):
        self.ui = ui
        layout = ui / "layout.json"
        if not layout.is_file():
            raise MissingInput(f"{layout} is missing: run make test-ui first")
        self.layout = json.loads(layout.read_text())

    def image(self, shot: str) -> Image.Image:
        entry = self.layout["screenshots"].get(shot)
        if entry is None:
            raise MissingInput(f"layout.json has no shot {shot!r}: run make test-ui again")
        name = Path(entry["file"] if isinstance(entry, dict) else entry).name  # recorded inside the chroot
        return _open(self.ui / name)

    def sidebar(self, shot: str) -> Image.Image:
        return self.image(shot).crop(_region_box(self.layout, shot, "UI"))

    def viewport_and_sidebar(self, shot: str) -> Image.Image:
        """The sidebar and the part of the viewport just left of it."""
        left, top, right, bottom = _region_box(self.layout, shot, "UI")
        viewport = _region_box(self.layout, shot, "WINDOW")
        return self.image(shot).crop((max(viewport[0], left - VIEWPORT_KEPT), top, right, bottom))


def side_by_side(images: list[Image.Image]) -> Image.Image:
    width = sum(i.width for i in images) + GAP * (len(images) - 1)
    out = Image.new("RGB", (width, max(i.height for i in images)), BACKGROUND)
    x = 0
    for image in images:
        out.paste(image, (x, 0))
        x += image.width + GAP
    return out


def stacked(images: list[Image.Image]) -> Image.Image:
    out = Image.new("RGB", (max(i.width for i in images), sum(i.height for i in images)), BACKGROUND)
    y = 0
    for image in images:
        out.paste(image, (0, y))
        y += image.height
    return out


def pictures(ui: Path, stock: Path) -> dict[str, Image.Image | Path]:
    """docs name -> the picture (or the file to copy as it is)."""
    shots = Shots(ui)
    out: dict[str, Image.Image | Path] = {}
    for name, shot in VIEWPORT_AND_SIDEBAR.items():
        out[name] = shots.viewport_and_sidebar(shot)
    for name, names in SIDEBARS.items():
        out[name] = side_by_side([shots.sidebar(s) for s in names])
    left, right = STATUS_COLUMNS
    strips = [shots.image(f"status_{s}") for s in STATUS_STRIPS]
    out["rigger_status.png"] = stacked([s.crop((left, 0, right, s.height)) for s in strips])
    out["export_dialog_fbx.png"] = shots.image("export_dialog").crop(DIALOG_OPTIONS)
    worst = stock / "demo" / "worst_nodes.png"
    if not worst.is_file():
        raise MissingInput(f"{worst} is missing: run make test-ui first (its stock-Blender demo draws it)")
    out["worst_nodes.png"] = worst
    return out


def write(pictures_by_name: dict[str, Image.Image | Path], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, picture in sorted(pictures_by_name.items()):
        target = out / name
        tmp = target.with_name(f".{name}.tmp")
        try:
            if isinstance(picture, Path):
                shutil.copyfile(picture, tmp)
            else:
                picture.save(tmp, format="PNG", optimize=True)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ui", type=Path, default=REPO / "build" / "ui", help="make test-ui's pictures")
    parser.add_argument("--stock", type=Path, default=REPO / "build" / "stock", help="its stock-Blender run")
    parser.add_argument("--out", type=Path, default=REPO / "docs", help="where the docs' pictures go")
    args = parser.parse_args(argv)
    try:
        found = pictures(args.ui, args.stock)
    except MissingInput as exc:
        print(f"docs_images: error: {exc}", file=sys.stderr)
        return 2
    for path in write(found, args.out):
        print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
