"""The installed extension in a real Blender window (not background mode), checked from
the pixels of screenshots: the sidebar panel is drawn, and so is the viewport overlay.

Run with ``make test-ui`` (plain ``make test`` / ``pytest`` ignore tests/window: see
pyproject.toml's addopts). Once per session the fixture ``ui``:

1. finds a Blender >= 4.2 with ``tools/blender.sh --which`` ($BLENDER, PATH, or the
   chroot; ``make test-ui`` provisions the chroot first). None: the tests FAIL, saying so;
2. builds the extension zip (tools/package_extension.py) and installs it, as
   ``make test-blender`` does, into a fresh user directory build/blender-user-ui
   (``blender --command extension install-file -r user_default --enable``);
3. runs tools/ui_screenshot.py in Blender with a window, in a virtual X display
   (``tools/blender.sh --xvfb``: Xvfb, Mesa's software OpenGL), which writes
   build/ui/sidebar_overlay_on.png, sidebar_overlay_off.png, sidebar_item_tab.png and
   layout.json (the regions' rectangles, the overlay's colours), then quits;
4. measures the pictures (build/ui/metrics.json, summarised at the end of the run).

Blender's region rectangles have their origin at the bottom left, the PNGs at the top left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from extension_build import build_zip
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "ui"
USER = REPO / "build" / "blender-user-ui"
BLENDER_SH = REPO / "tools" / "blender.sh"
SCRIPT = REPO / "tools" / "ui_screenshot.py"
WIDTH, HEIGHT = 1600, 1000
INSTALL_TIMEOUT = 120  # seconds
RUN_TIMEOUT = 300  # seconds, the whole windowed run (it normally takes 10 to 20)
SHOTS = {"on": "sidebar_overlay_on.png", "off": "sidebar_overlay_off.png", "item": "sidebar_item_tab.png"}

COLOUR_TOLERANCE = 40  # 0-255, per channel: a pixel "is" an overlay colour within this
TEXT_LUMINANCE = 160  # 0-255: UI text is near white on a dark grey sidebar
PANEL_HEADER_PIXELS = 40  # the first panel's header row (its overlay toggle) is within this from the top


@dataclass
class WindowRun:
    layout: dict
    images: dict[str, np.ndarray]  # (H, W, 3) int
    metrics: dict = field(default_factory=dict)

    def crop(self, shot: str, region: str) -> np.ndarray:
        r = self.layout["screenshots"][_shot_key(shot)]["regions"][region]
        top = self.layout["window"]["height"] - (r["y"] + r["height"])
        return self.images[shot][top : top + r["height"], r["x"] : r["x"] + r["width"]]


def _shot_key(shot: str) -> str:
    return {"on": "overlay_on", "off": "overlay_off", "item": "item_tab"}[shot]


def _run(cmd: list[str], log: Path, timeout: float, env: dict | None = None) -> int:
    """Run ``cmd`` in the repository, output to ``log``; on timeout kill its whole process
    group (Blender, Xvfb and the chroot's helpers with it) and fail."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail(f"{' '.join(cmd)} did not finish in {timeout:g} s (killed); its output: {log}\n{_tail(log)}")


def _tail(path: Path, lines: int = 25) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no output)"


def _blender_or_fail() -> str:
    which = subprocess.run([str(BLENDER_SH), "--which"], cwd=REPO, capture_output=True, text=True)
    if which.returncode != 0:
        pytest.fail(
            "the real-window UI test needs a Blender >= 4.2 binary and there is none: "
            f"{which.stderr.strip()}\n"
            "make test-ui provisions Debian's Blender in a chroot (tools/blender.sh --ensure), "
            "or set BLENDER=/path/to/blender (with xvfb-run installed)",
            pytrace=False,
        )
    return which.stdout.strip()


@pytest.fixture(scope="session")
def ui() -> WindowRun:
    blender = _blender_or_fail()
    zip_path = build_zip()
    shutil.rmtree(USER, ignore_errors=True)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in (*SHOTS.values(), "layout.json", "error.txt", "metrics.json"):
        (OUT / name).unlink(missing_ok=True)
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(USER), "BLENDER_XVFB_SCREEN": f"{WIDTH}x{HEIGHT}x24"}
    env.pop("HIERARCHY_INSPECTOR_MODULE", None)  # the script's default: bl_ext.user_default.<id>

    log = OUT / "install.log"
    install = [str(BLENDER_SH), "--factory-startup", "--offline-mode", "--command", "extension", "install-file"]
    install += ["-r", "user_default", "--enable", str(zip_path)]
    if _run(install, log, INSTALL_TIMEOUT, env) != 0:
        pytest.fail(f"installing {zip_path} into {blender} failed:\n{_tail(log)}", pytrace=False)

    log = OUT / "blender.log"
    run = [str(BLENDER_SH), "--xvfb", "--factory-startup", "--offline-mode", "--enable-event-simulate"]
    run += ["--window-geometry", "0", "0", str(WIDTH), str(HEIGHT), "--python", str(SCRIPT), "--", str(OUT)]
    code = _run(run, log, RUN_TIMEOUT, env)
    error = OUT / "error.txt"
    if code != 0 or error.exists() or not (OUT / "layout.json").exists():
        why = error.read_text().strip() if error.exists() else "(no error.txt)"
        pytest.fail(
            f"the windowed Blender run failed (exit status {code}): {why}\nlast lines of {log}:\n{_tail(log)}",
            pytrace=False,
        )
    layout = json.loads((OUT / "layout.json").read_text())
    images = {}
    for shot, name in SHOTS.items():
        with Image.open(OUT / name) as im:
            images[shot] = np.asarray(im.convert("RGB")).astype(np.int16)
    result = WindowRun(layout, images)
    result.metrics = measure(result)
    (OUT / "metrics.json").write_text(json.dumps(result.metrics, indent=2) + "\n")
    return result


# -- measures --------------------------------------------------------------------------


def colour_mask(pixels: np.ndarray, rgba) -> np.ndarray:
    target = np.round(np.asarray(rgba[:3], dtype=float) * 255.0)
    return np.abs(pixels - target).max(axis=-1) <= COLOUR_TOLERANCE


def text_measures(pixels: np.ndarray) -> dict:
    """Bright (text-like) pixels of a UI region: how many, how many lines, how far down."""
    lum = pixels.mean(axis=-1)
    bright = lum >= TEXT_LUMINANCE
    rows = bright.any(axis=1)
    lines = int(rows[0]) + int(np.sum(rows[1:] & ~rows[:-1]))
    lowest = int(np.flatnonzero(rows).max()) + 1 if rows.any() else 0
    return {
        "bright_fraction": float(bright.mean()),
        "luminance_std": float(lum.std()),
        "text_lines": lines,
        "text_extent": lowest / len(rows),
    }


def differing(a: np.ndarray, b: np.ndarray, threshold: int = 40) -> np.ndarray:
    return np.abs(a - b).max(axis=-1) > threshold


def bbox(mask: np.ndarray) -> list[int] | None:
    ys, xs = np.nonzero(mask)
    return None if not len(xs) else [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]


def measure(run: WindowRun) -> dict:
    colours = run.layout["overlay_colours"]
    overlay = {}
    for name, rgba in (("accumulated_blue", colours["accumulated"]), ("child_skew", colours["child_box"])):
        on, off = (colour_mask(run.crop(s, "WINDOW"), rgba) for s in ("on", "off"))
        overlay[name] = {"rgb": [round(v * 255) for v in rgba[:3]], "on": int(on.sum()), "off": int(off.sum())}
        overlay[name]["bbox_on"] = bbox(on)
    ui_on, ui_off, ui_item = (run.crop(s, "UI") for s in ("on", "off", "item"))
    toggle = differing(ui_on, ui_off)
    return {
        "window_region": run.layout["screenshots"]["overlay_on"]["regions"]["WINDOW"],
        "ui_region": run.layout["screenshots"]["overlay_on"]["regions"]["UI"],
        "overlay": overlay,
        "viewport_changed_by_overlay": int(differing(run.crop("on", "WINDOW"), run.crop("off", "WINDOW")).sum()),
        "viewport_changed_by_tab": int(differing(run.crop("off", "WINDOW"), run.crop("item", "WINDOW")).sum()),
        "panel": {"hierarchy_tab": text_measures(ui_on), "item_tab": text_measures(ui_item)},
        "sidebar_differs_from_item_tab": float(differing(ui_on, ui_item).mean()),
        "sidebar_changed_by_overlay_toggle": {"pixels": int(toggle.sum()), "bbox": bbox(toggle)},
        "seconds_in_blender": run.layout["seconds"],
    }


# -- the tests -------------------------------------------------------------------------


def test_ran_in_a_real_window_with_the_installed_extension(ui):
    layout = ui.layout
    assert Path(layout["module_file"]).parts[-5:-2] == ("blender-user-ui", "extensions", "user_default"), (
        f"the add-on did not come from the installed zip: {layout['module_file']}"
    )
    assert layout["overlay_errors"] == [], f"the overlay's draw callback failed: {layout['overlay_errors']}"
    assert (layout["window"]["width"], layout["window"]["height"]) == (WIDTH, HEIGHT)
    for shot, image in ui.images.items():
        assert image.shape == (HEIGHT, WIDTH, 3), f"{SHOTS[shot]} is {image.shape}, the window {WIDTH}x{HEIGHT}"
        assert image.std() > 10, f"{SHOTS[shot]} is (nearly) one flat colour: nothing was captured"
    shots = layout["screenshots"]
    assert [(shots[k]["category"], shots[k]["overlay"]) for k in ("overlay_on", "overlay_off", "item_tab")] == [
        ("Hierarchy", True),
        ("Hierarchy", False),
        ("Item", False),
    ]
    assert {shots[k]["active_object"] for k in ("overlay_on", "overlay_off", "item_tab")} == {"Child"}
    assert layout["draws"]["WINDOW"] >= 9 and layout["draws"]["UI"] >= 9


def test_overlay_draws_the_accumulated_box_and_the_skewed_box(ui):
    """The child's accumulated box (blue) and its Blender box in the skew colour (36.9 deg:
    the strong red) are on screen with the overlay on, large, and absent with it off."""
    m = ui.metrics
    region = m["window_region"]
    assert ui.layout["overlay_colours"]["child_shear_deg"] > 30.0
    for name, minimum in (("accumulated_blue", 1000), ("child_skew", 500)):
        counts = m["overlay"][name]
        assert counts["on"] >= minimum, f"too few {name} {counts['rgb']} pixels with the overlay on: {counts}"
        assert counts["off"] <= counts["on"] / 20, f"{name} {counts['rgb']} pixels without the overlay: {counts}"
        x0, y0, x1, y1 = counts["bbox_on"]
        assert x1 - x0 >= 0.2 * region["width"] and y1 - y0 >= 0.2 * region["height"], (
            f"the {name} lines span only {x1 - x0}x{y1 - y0} of the {region['width']}x{region['height']} viewport"
        )


def test_overlay_is_the_only_change_in_the_viewport(ui):
    """Turning the overlay off changes the viewport; switching the sidebar's tab (same
    overlay state) does not: what the overlay test counts is the overlay, not noise."""
    m = ui.metrics
    assert m["viewport_changed_by_overlay"] >= 2000, m
    assert m["viewport_changed_by_tab"] <= 0.001 * m["window_region"]["width"] * m["window_region"]["height"], m


def test_sidebar_shows_the_inspector_panel(ui):
    """The Hierarchy tab holds text, many lines of it, down to the sidebar's bottom (the
    chain, two warnings and five sections of values), and it is not the Item tab."""
    m = ui.metrics
    panel = m["panel"]["hierarchy_tab"]
    assert panel["bright_fraction"] >= 0.01 and panel["luminance_std"] >= 15, panel
    assert panel["text_lines"] >= 20, panel
    assert panel["text_extent"] >= 0.75, panel
    assert m["sidebar_differs_from_item_tab"] >= 0.02, m


def test_panel_header_toggle_follows_the_overlay(ui):
    """Between overlay on and off the sidebar changes only in the panel's header row,
    where its overlay toggle is."""
    m = ui.metrics
    toggle = m["sidebar_changed_by_overlay_toggle"]
    assert toggle["pixels"] > 0, "the panel header's overlay toggle looks the same on and off"
    region = m["ui_region"]
    assert toggle["pixels"] <= 0.01 * region["width"] * region["height"], toggle
    assert toggle["bbox"][3] <= PANEL_HEADER_PIXELS, f"the sidebar changed below its first header row: {toggle}"


# -- at the default sidebar width: the demo's bone chain and a generated Rigify rig -----

DEFAULT_SHOTS = ("demo_bones", "rig_panel", "rig_overlay_flagged", "rig_scan")


def _fits(entries) -> list:
    """Entries (text, pixels needed, pixels given) that would be cut (1 px slack)."""
    return [e for e in entries if e[1] > e[2] + 1.0]


def test_default_width_shots_were_taken(ui):
    default = ui.layout["default_width"]
    # Blender's default sidebar width (the issue measured 291 px), not the widened 480.
    assert default["sidebar_width"] < 350, default["sidebar_width"]
    for key in DEFAULT_SHOTS:
        path = Path(ui.layout["screenshots"][key]["file"])
        with Image.open(OUT / path.name) as im:
            image = np.asarray(im.convert("RGB")).astype(np.int16)
        assert image.shape == (HEIGHT, WIDTH, 3) and image.std() > 10, key


def test_default_width_keeps_every_number_and_tells_names_apart(ui):
    """At the default width no number is cut, the chain's names are all different, and
    every warning line fits the region (wrapped to its real width)."""
    default = ui.layout["default_width"]
    for key in ("demo_bones", "rig_panel"):
        chain = default[key]["drawn"]["chain"]
        names, numbers = chain[0::2], chain[1::2]
        assert len(names) == len(numbers) >= 4, (key, chain)
        assert not _fits(chain), (key, _fits(chain))
        assert len({n[0] for n in names}) == len(names), (key, [n[0] for n in names])
        assert all("\N{DEGREE SIGN}" in n[0] and n[0].rstrip().endswith("m") for n in numbers), (key, numbers)
        assert not _fits(default[key]["drawn"].get("warnings", [])), key
        sections = default[key]["drawn"].get("sections", [])
        assert len(sections) >= 12 and not _fits(sections), (key, _fits(sections))
    # On the rig the chain is deep: names keep their DEF- prefix and end, the middle elided.
    rig_names = [n[0] for n in default["rig_panel"]["drawn"]["chain"][0::2]]
    head, _dots, tail = rig_names[-1].partition("\N{HORIZONTAL ELLIPSIS}")
    assert rig_names[-1] == "DEF-forearm.L.001" or (head == "DEF-" and "DEF-forearm.L.001".endswith(tail)), rig_names
    assert rig_names[-1].endswith(".L.001"), rig_names
    scan = default["rig_scan"]["drawn"]["scan"]
    assert len(scan) >= 8 and not _fits(scan), _fits(scan)
    scan_numbers = [e for e in scan if e[0].endswith("\N{DEGREE SIGN}")]  # node rows: corners, shear
    assert len(scan_numbers) >= 8, scan
    assert not any(n[0].startswith("rig >") for n in scan[0::2]), "bones inside their own armature need no prefix"


def test_rig_scan_groups_by_cause(ui):
    rig = ui.layout["default_width"]["rig"]
    assert rig["bones"] > 600 and rig["flagged"] > 300
    labels = [label for label, _count in rig["groups"]]
    assert "torso (1.3, 1, 0.7)" in labels and "upper_arm_fk.L (1, 1.4, 0.8)" in labels
    assert sum(count for _label, count in rig["groups"]) == rig["flagged"]


def test_rig_overlay_draws_no_cage_and_at_most_the_worst_n(ui):
    default = ui.layout["default_width"]
    chain = default["rig_panel"]["overlay"]
    assert chain and "rig" not in chain, chain  # the unflagged armature object: no box around the scene
    flagged = default["rig_overlay_flagged"]["overlay"]
    assert 0 < len(flagged) <= 25 and "rig" not in flagged, flagged
    colours = ui.layout["overlay_colours"]
    for key in ("rig_panel", "rig_overlay_flagged"):
        with Image.open(OUT / Path(ui.layout["screenshots"][key]["file"]).name) as im:
            image = np.asarray(im.convert("RGB")).astype(np.int16)
        r = ui.layout["screenshots"][key]["regions"]["WINDOW"]
        top = HEIGHT - (r["y"] + r["height"])
        view = image[top : top + r["height"], r["x"] : r["x"] + r["width"]]
        engine = colour_mask(view, colours["accumulated"])
        assert engine.sum() >= 50, (key, int(engine.sum()))
        x0, y0, x1, y1 = bbox(engine)
        # A cage around the whole scene would span the viewport; the flagged bones do not.
        assert (x1 - x0) < 0.9 * r["width"] or (y1 - y0) < 0.9 * r["height"], (key, bbox(engine))


# -- a rigger's day: the rig of the issue, at the default width --------------------------

RIGGER_SHOTS = (
    "range_list",
    "deform_chains",
    "deform_advice",
    "dynamics",
    "status_range_scan",
    "status_gltf",
    "status_fbx",
    "status_fbx_accumulated",
    "status_insert_helpers",
    "export_dialog",
)


def _shot_file(ui, key) -> Path:
    entry = ui.layout["screenshots"][key]
    return OUT / Path(entry["file"] if isinstance(entry, dict) else entry).name


def test_rigger_day_shots_were_taken(ui):
    for key in RIGGER_SHOTS:
        with Image.open(_shot_file(ui, key)) as im:
            image = np.asarray(im.convert("RGB")).astype(np.int16)
        assert image.std() > 3, key


def test_range_list_reads_at_the_default_width(ui):
    """Before: every row read 'ri... 20 0.389 0.0 deg' at 291 px, hidden ORG-/MCH- bones
    on top, 20 markers on one frame. Now: nothing cut, cause groups with their frame,
    visible bones first, names without the armature, units, one marker per cause."""
    default = ui.layout["default_width"]
    rows = default["range_list"]["drawn"]
    assert len(rows) >= 12 and not _fits(rows), _fits(rows)
    rigger = default["rigger"]
    labels = [label for label, _count in rigger["groups"]]
    assert "torso (1.3, 1, 0.7) f20" in labels, labels
    assert any(label.startswith("forearm_tweak.L (") for label in labels), labels
    assert not any(hidden for _name, hidden in rigger["top_rows"]), rigger["top_rows"]
    assert not any(name.startswith(("rig >", "ORG-", "MCH-")) for name, _h in rigger["top_rows"])
    assert "HI: torso squash f20" in rigger["markers"] and len(rigger["markers"]) <= 10, rigger["markers"]
    names = [r[0] for r in rows if r[0].endswith(("cm", "mm", " m")) is False and not r[0].startswith("f")]
    assert not any(n.startswith("rig >") for n in names)
    assert all(any(c.isalpha() for c in n.replace("\N{HORIZONTAL ELLIPSIS}", "")[:3]) for n in names), names


def test_a_deform_bone_shows_its_chains_its_cause_and_what_to_do(ui):
    drawn = ui.layout["default_width"]["deform_chains"]["drawn"]
    deform = [n[0] for n in drawn["chain"][0::2]]
    assert deform[0].startswith("rig") and all(n.startswith("DEF-") for n in deform[1:]), deform
    mechanism = [e[0] for e in drawn["mechanism"] if not e[0].endswith(("m", "\N{DEGREE SIGN}"))]
    assert "torso" in mechanism and mechanism[-1].endswith("tweak.L"), mechanism
    assert not _fits(drawn["chain"]) and not _fits(drawn["mechanism"])
    warnings = " ".join(w[0] for w in drawn["warnings"])
    assert "copies" in warnings and "forearm_tweak.L" in warnings
    assert not _fits(drawn["warnings"]) and not _fits(drawn["sections"])


def test_the_dynamics_section_fits_and_speaks_the_scenes_units(ui):
    sections = ui.layout["default_width"]["dynamics"]["drawn"]["sections"]
    values = [s[0] for s in sections]
    assert any(v.endswith(" m/s") for v in values) and any(v.endswith(" rad/s") for v in values), values
    assert not any("units" in v for v in values)
    assert not _fits(sections), _fits(sections)


def test_exports_run_from_pose_mode_and_the_dialog_opens(ui):
    rigger = ui.layout["default_width"]["rigger"]
    assert rigger["mode_after_exports"] == "POSE"
    assert rigger["export_dialog_opened"]
    assert set(rigger["export_seconds"]) >= {"panel_gltf", "panel_fbx", "blender_gltf", "blender_fbx"}
