"""Screenshots of the installed extension in a real Blender window (not background mode).

Run by tests/window/test_real_window.py (``make test-ui``) in a virtual X display::

    BLENDER_USER_RESOURCES=build/blender-user-ui tools/blender.sh --xvfb --factory-startup \\
        --offline-mode --enable-event-simulate --window-geometry 0 0 1600 1000 \\
        --python tools/ui_screenshot.py -- OUTDIR

The extension must already be installed in that user directory (``blender --command
extension install-file -r user_default --enable ZIP``). --factory-startup does not read the
user preferences, so this script enables it through ``addon_utils`` (as Blender does when
a user ticks it) and checks that it was loaded from the extension repository, not from
the source tree.

In the window: region overlap off (the sidebar gets a rectangle of its own), FXAA
anti-aliasing (one pass: the same picture however many redraws came first), the demo
hierarchies added by the operator ``hierarchy_inspector.build_demo``, "Child" active and
nothing selected (no selection outline over the overlay), the navigation gizmo and the
floor's X / Y axis lines hidden (their red and blue would look like the overlay's), the
view framed on the child's two boxes, the sidebar open on the tab "Hierarchy" and, with
--enable-event-simulate, dragged wider by simulated mouse events so the values fit.
Then, each once the viewport and the sidebar have redrawn a few times:

    OUTDIR/sidebar_overlay_on.png    the whole window, overlay on
    OUTDIR/sidebar_overlay_off.png   the same, overlay off
    OUTDIR/sidebar_item_tab.png      overlay off, the sidebar on its "Item" tab
    OUTDIR/layout.json               window size, the 3D viewport's regions (Blender
                                     window coordinates: origin bottom-left), the colours
                                     the overlay uses, redraw counts, overlay errors

The pictures are read from the X server (XGetImage on the root window, through ctypes and
Blender's own libX11), not with ``bpy.ops.screen.screenshot``: that operator reads the
window's OpenGL front buffer, which under Xvfb with Mesa's llvmpipe reads back all black
(it is still called once; what it gave is in layout.json as ``operator_screenshot``).
So the window must sit at the X screen's top-left corner (true under xvfb-run: no window
manager) and the screen must be 24-bit.

On any failure OUTDIR/error.txt says what, and Blender exits with status 3; a watchdog
does the same after HIERARCHY_INSPECTOR_UI_TIMEOUT seconds (default 120).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import json
import os
import struct
import sys
import time
import traceback
import zlib
from pathlib import Path

import bpy

MODULE = os.environ.get("HIERARCHY_INSPECTOR_MODULE") or "bl_ext.user_default.hierarchy_inspector"
CATEGORY = "Hierarchy"
ACTIVE_OBJECT = "Child"
TIMEOUT = float(os.environ.get("HIERARCHY_INSPECTOR_UI_TIMEOUT") or 120.0)
SETTLE_SECONDS = 1.0  # after the redraws a change needs, before a screenshot
SETTLE_DRAWS = 3  # redraws of both the viewport and the sidebar after a change
SIDEBAR_WIDTH = 480  # pixels, with --enable-event-simulate (else Blender's default width)


def output_dir() -> Path:
    argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    if len(argv) != 1:
        print("ui_screenshot: usage: blender ... --python tools/ui_screenshot.py -- OUTDIR", file=sys.stderr)
        sys.stderr.flush()
        os._exit(2)
    return Path(argv[0]).resolve()


OUT = output_dir()
STARTED = time.monotonic()
DRAWS = {"WINDOW": 0, "UI": 0}


def fail(message: str) -> None:
    """Say why in OUTDIR/error.txt and on stderr, then end Blender with status 3 at once."""
    try:
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "error.txt").write_text(message + "\n")
    finally:
        print(f"ui_screenshot: error: {message}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(3)


def count_draw(region_type: str) -> None:
    DRAWS[region_type] += 1


# -- finding things --------------------------------------------------------------------


def view3d():
    """(window, area, space, WINDOW region, UI region) of the 3D viewport."""
    wm = bpy.context.window_manager
    if not wm.windows:
        fail("Blender has no window (was it started with --background?)")
    window = wm.windows[0]
    for area in window.screen.areas:
        if area.type == "VIEW_3D":
            regions = {r.type: r for r in area.regions}
            return window, area, area.spaces.active, regions["WINDOW"], regions["UI"]
    fail(f"no 3D viewport in the window's screen {window.screen.name!r}")
    raise AssertionError  # not reached


def enable_extension():
    import addon_utils

    if not addon_utils.check(MODULE)[1]:
        errors: list[BaseException] = []
        addon_utils.enable(MODULE, default_set=True, handle_error=errors.append)
        if errors or not addon_utils.check(MODULE)[1]:
            details = "".join(traceback.format_exception(errors[0])) if errors else "(no exception)"
            fail(f"Blender could not enable the extension {MODULE}:\n{details}")
    module = sys.modules[MODULE]
    repo = MODULE.split(".")[1]
    repos = {r.module: r for r in bpy.context.preferences.extensions.repos}
    if repo not in repos:
        fail(f"no extension repository {repo!r} (have: {sorted(repos)})")
    repo_dir = Path(repos[repo].directory).resolve()
    if not Path(module.__file__).resolve().is_relative_to(repo_dir):
        fail(f"{MODULE} was loaded from {module.__file__}, outside its extension repository {repo_dir}")
    return module


def rect(region) -> dict:
    return {"x": region.x, "y": region.y, "width": region.width, "height": region.height}


# -- capturing the window from the X server -------------------------------------------


class XImage(ctypes.Structure):
    """Xlib's ``XImage`` (Xlib.h), up to and including its function table."""

    _fields_ = [
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("xoffset", ctypes.c_int),
        ("format", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("byte_order", ctypes.c_int),
        ("bitmap_unit", ctypes.c_int),
        ("bitmap_bit_order", ctypes.c_int),
        ("bitmap_pad", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("bytes_per_line", ctypes.c_int),
        ("bits_per_pixel", ctypes.c_int),
        ("red_mask", ctypes.c_ulong),
        ("green_mask", ctypes.c_ulong),
        ("blue_mask", ctypes.c_ulong),
        ("obdata", ctypes.c_void_p),
        ("funcs", ctypes.c_void_p * 6),
    ]


def x_capture(width: int, height: int):
    """``(height, width, 3)`` uint8 RGB of the X screen's top-left ``width x height``
    pixels, read from the X server (XGetImage on the root window)."""
    import numpy as np

    name = ctypes.util.find_library("X11") or "libX11.so.6"
    try:
        x11 = ctypes.CDLL(name)
    except OSError as exc:
        fail(f"cannot load Xlib ({name}) to read the screen: {exc}")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XGetImage.restype = ctypes.POINTER(XImage)
    x11.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int]
    x11.XGetImage.argtypes += [ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
    x11.XDestroyImage.argtypes = [ctypes.POINTER(XImage)]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    display = x11.XOpenDisplay(None)
    if not display:
        fail(f"cannot open the X display {os.environ.get('DISPLAY')!r} to read the screen")
    try:
        x11.XSync(display, 0)
        all_planes, z_pixmap = ctypes.c_ulong(-1).value, 2
        ptr = x11.XGetImage(display, x11.XDefaultRootWindow(display), 0, 0, width, height, all_planes, z_pixmap)
        if not ptr:
            fail(f"XGetImage of {width}x{height} pixels failed (is the X screen smaller than the window?)")
        try:
            im = ptr.contents
            if im.bits_per_pixel != 32 or im.depth < 24:
                fail(f"the X screen has {im.depth} bits per pixel in {im.bits_per_pixel}; need 24 in 32 (x24)")
            raw = ctypes.string_at(im.data, im.bytes_per_line * im.height)
            words = np.frombuffer(raw, dtype="<u4" if im.byte_order == 0 else ">u4")
            words = words.reshape(im.height, im.bytes_per_line // 4)[:, : im.width]
            channels = []
            for mask in (im.red_mask, im.green_mask, im.blue_mask):
                shift = (mask & -mask).bit_length() - 1
                channels.append(((words & mask) >> shift).astype(np.uint8))
            return np.stack(channels, axis=-1)
        finally:
            x11.XDestroyImage(ptr)
    finally:
        x11.XCloseDisplay(display)


def write_png(path: Path, rgb) -> None:
    """An 8-bit RGB PNG (no dependency beyond zlib)."""
    height, width, _ = rgb.shape
    rows = b"".join(b"\x00" + rgb[y].tobytes() for y in range(height))  # filter type 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b"")
    )


# -- the steps -------------------------------------------------------------------------


class Settle:
    """Wait until the viewport and the sidebar have both redrawn a few times and a moment
    has passed (a change is on screen only after its redraw and the buffer swap)."""

    def __init__(self, area, draws: int = SETTLE_DRAWS, seconds: float = SETTLE_SECONDS) -> None:
        self.area = area
        self.start = dict(DRAWS)
        self.until = time.monotonic() + seconds
        self.draws = draws

    def done(self) -> bool:
        self.area.tag_redraw()
        drawn = all(DRAWS[k] - self.start[k] >= self.draws for k in DRAWS)
        return drawn and time.monotonic() >= self.until


def screenshot(window, name: str) -> str:
    """The whole window as the X server shows it, in OUTDIR/name."""
    if (window.x, window.y) != (0, 0):
        fail(f"the window is at ({window.x}, {window.y}), not at the screen's corner (0, 0)")
    path = OUT / name
    write_png(path, x_capture(window.width, window.height))
    print(f"ui_screenshot: wrote {path}", flush=True)
    return str(path)


def operator_screenshot(window, area, region, name: str) -> dict:
    """What Blender's own screen.screenshot gives (for the record: under Xvfb with Mesa's
    llvmpipe it reads the window's front buffer back as black)."""
    import numpy as np

    path = OUT / name
    path.unlink(missing_ok=True)
    with bpy.context.temp_override(window=window, screen=window.screen, area=area, region=region):
        result = bpy.ops.screen.screenshot(filepath=str(path), check_existing=False)
    info: dict = {"result": sorted(result), "wrote_file": path.is_file()}
    if path.is_file():
        image = bpy.data.images.load(str(path))
        try:
            pixels = np.empty(len(image.pixels), dtype=np.float32)
            image.pixels.foreach_get(pixels)
            info["size"] = list(image.size)
            info["max_value"] = float(pixels.reshape(-1, image.channels)[:, :3].max())
        finally:
            bpy.data.images.remove(image)
        path.unlink()
    return info


def frame_child(module, window, area, space) -> tuple[dict, dict]:
    """Centre the view on the child's Blender box and accumulated box, close enough that
    they fill most of the viewport. Returns the framing and the colours the overlay
    draws the child's boxes in (from the add-on's preferences)."""
    import numpy as np

    overlay, geometry = module.addon.ui.overlay, module.addon.model.overlay_geometry
    with bpy.context.temp_override(window=window, area=area):
        shown = overlay.overlay_nodes(bpy.context)
        if shown is None:
            fail("the overlay has nothing to show for the active object")
        inspection, chain = shown
        style = module.addon.scene.settings.overlay_style(bpy.context)
        coords, _colours = geometry.overlay_lines(inspection, chain[-1:], style, axes=False)
    colours = {
        "accumulated": [float(v) for v in style.colour_accumulated],
        "child_box": [
            float(v) for v in geometry.skew_colours(inspection.shear_max[chain[-1:]], style, inspection.thresholds)[0]
        ],
        "child_shear_deg": float(inspection.shear_max[chain[-1]]),
    }
    lo, hi = coords.min(axis=0), coords.max(axis=0)
    centre = 0.5 * (lo + hi)
    radius = float(0.5 * np.linalg.norm(hi - lo))
    r3d = space.region_3d
    r3d.view_perspective = "PERSP"
    r3d.view_location = [float(v) for v in centre]
    r3d.view_distance = 2.4 * radius
    framing = {"centre": [float(v) for v in centre], "radius": radius, "view_distance": r3d.view_distance}
    return framing, colours


def widen_sidebar(window, area, ui_region, win_region, width: int):
    """Drag the sidebar's left edge with simulated mouse events (Blender started with
    --enable-event-simulate) so that it is about ``width`` pixels wide, then park the
    pointer in a corner of the viewport. A generator of conditions, like :func:`steps`."""
    y = ui_region.y + ui_region.height // 2
    x0 = ui_region.x + 1
    x1 = ui_region.x + ui_region.width - width
    events = [("MOUSEMOVE", "NOTHING", x0), ("LEFTMOUSE", "PRESS", x0)]
    events += [("MOUSEMOVE", "NOTHING", x0 + (x1 - x0) * k // 5) for k in range(1, 6)]
    events += [("LEFTMOUSE", "RELEASE", x1)]
    for kind, value, x in events:
        window.event_simulate(type=kind, value=value, x=x, y=y)
        yield Settle(area, draws=1, seconds=0.05).done
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=win_region.x + 5, y=win_region.y + 5)
    yield Settle(area, draws=1, seconds=0.05).done


def steps():
    """The script, as a generator: each ``yield`` is a condition to wait for."""
    window, area, space, win_region, ui_region = view3d()
    prefs = bpy.context.preferences
    prefs.view.show_splash = False
    prefs.view.smooth_view = 0
    prefs.view.use_save_prompt = False
    prefs.system.use_region_overlap = False
    # Single-pass anti-aliasing: the default accumulates jittered samples over redraws, so
    # pictures would depend on how many redraws happened before the capture.
    prefs.system.viewport_aa = "FXAA"
    # Blender saves quit.blend in its temporary directory on exit: keep it out of the user's /tmp.
    (OUT / "tmp").mkdir(exist_ok=True)
    prefs.filepaths.temporary_directory = str(OUT / "tmp")

    module = enable_extension()
    if not module.addon.ui.overlay.draw_handler_active():
        fail("the extension is enabled but its overlay draw handler is not registered")

    for region_type in DRAWS:
        bpy.types.SpaceView3D.draw_handler_add(count_draw, (region_type,), region_type, "POST_PIXEL")

    with bpy.context.temp_override(window=window, area=area, region=win_region):
        result = bpy.ops.hierarchy_inspector.build_demo()
    if result != {"FINISHED"}:
        fail(f"hierarchy_inspector.build_demo returned {result}")
    scene = bpy.context.scene
    view_layer = window.view_layer
    child = scene.objects.get(ACTIVE_OBJECT)
    if child is None:
        fail(f"the demo has no object {ACTIVE_OBJECT!r}")
    for obj in scene.objects:
        obj.select_set(False)
    view_layer.objects.active = child
    view_layer.update()

    space.show_gizmo_navigate = False
    space.overlay.show_axis_x = False
    space.overlay.show_axis_y = False
    space.show_region_ui = True
    settings = scene.hierarchy_inspector
    settings.overlay = True
    framing, colours = frame_child(module, window, area, space)

    # The sidebar's tabs exist once it has drawn with its panels; then pick ours.
    yield Settle(area, draws=1, seconds=0.2).done
    deadline = time.monotonic() + 20.0
    while ui_region.active_panel_category != CATEGORY:
        why = f"it shows {ui_region.active_panel_category!r}"
        try:
            ui_region.active_panel_category = CATEGORY
        except TypeError as exc:  # not (yet) one of the region's tabs
            why = str(exc)
        if time.monotonic() > deadline:
            fail(f"cannot show the sidebar tab {CATEGORY!r}: {why}")
        yield Settle(area, draws=1, seconds=0.1).done

    sidebar: dict = {"width_before": ui_region.width}
    if "--enable-event-simulate" in sys.argv:
        yield from widen_sidebar(window, area, ui_region, win_region, SIDEBAR_WIDTH)
    sidebar["width"] = ui_region.width
    if sidebar["width"] < 0.9 * SIDEBAR_WIDTH:
        print(f"ui_screenshot: note: the sidebar is {ui_region.width} pixels wide (wanted {SIDEBAR_WIDTH})", flush=True)

    def shot(name: str) -> dict:
        return {
            "file": screenshot(window, name),
            "category": ui_region.active_panel_category,
            "overlay": settings.overlay,
            "active_object": getattr(view_layer.objects.active, "name", None),
            "regions": {r.type: rect(r) for r in area.regions if r.type in ("WINDOW", "UI")},
        }

    yield Settle(area).done
    shots = {"overlay_on": shot("sidebar_overlay_on.png")}
    operator_shot = operator_screenshot(window, area, win_region, "operator_screenshot.png")

    settings.overlay = False
    yield Settle(area).done
    shots["overlay_off"] = shot("sidebar_overlay_off.png")

    ui_region.active_panel_category = "Item"
    yield Settle(area).done
    shots["item_tab"] = shot("sidebar_item_tab.png")

    # At the default sidebar width: the demo's bone chain, then a generated Rigify rig.
    ui_region.active_panel_category = CATEGORY
    if "--enable-event-simulate" in sys.argv:
        yield from widen_sidebar(window, area, ui_region, win_region, sidebar["width_before"])
    sidebar["default_width"] = ui_region.width
    default_width: dict = {"sidebar_width": ui_region.width}
    yield from demo_bone_chain(module, window, area, space, win_region, settings, default_width, shot, shots)
    yield from rigify_rig(module, window, area, space, win_region, ui_region, default_width, shot, shots)
    yield from rigger_day(module, window, area, space, win_region, ui_region, default_width, shot, shots)

    layout = {
        "blender": bpy.app.version_string,
        "gpu": {"backend": _gpu("backend_type_get"), "renderer": _gpu("renderer_get"), "version": _gpu("version_get")},
        "module": MODULE,
        "module_file": module.__file__,
        "window": {"width": window.width, "height": window.height, "pixel_size": prefs.system.pixel_size},
        "regions": {r.type: rect(r) for r in area.regions},
        "area": {"x": area.x, "y": area.y, "width": area.width, "height": area.height},
        "sidebar": sidebar,
        "framing": framing,
        "overlay_colours": colours,
        "draws": dict(DRAWS),
        "overlay_errors": sorted(module.addon.ui.overlay._reported),
        "screenshots": shots,
        "default_width": default_width,
        "operator_screenshot": operator_shot,
        "seconds": round(time.monotonic() - STARTED, 2),
    }
    (OUT / "layout.json").write_text(json.dumps(layout, indent=2) + "\n")
    print(f"ui_screenshot: done in {layout['seconds']} s; {json.dumps(layout['gpu'])}", flush=True)
    bpy.ops.wm.quit_blender()


def drawn(module) -> dict:
    """What the panels drew last: (text, pixels it needs, pixels it was given) per list."""
    ui = module.addon.ui
    out = {kind: [list(entry) for entry in rows] for kind, rows in ui.panels.DRAWN.items()}
    out["scan"] = [list(entry) for entry in ui.lists.DRAWN]
    return out


def overlay_labels(module, window, area) -> list[str]:
    """The nodes the overlay draws now, by label."""
    with bpy.context.temp_override(window=window, area=area):
        shown = module.addon.ui.overlay.overlay_nodes(bpy.context)
    if shown is None:
        return []
    inspection, indices = shown
    return [inspection.nodes.label(int(i)) for i in indices]


def frame_selection(window, area, win_region) -> None:
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.view3d.view_selected(use_all_regions=False)


def demo_bone_chain(module, window, area, space, win_region, settings, record: dict, shot, shots):
    """The demo rig's FULL.tip active in Pose mode, overlay on its chain."""
    view_layer = window.view_layer
    rig = bpy.context.scene.objects["Inherit scale rig"]
    view_layer.objects.active = rig
    rig.select_set(True)
    with bpy.context.temp_override(window=window, area=area, region=win_region, active_object=rig):
        bpy.ops.object.mode_set(mode="POSE")
    for bone in rig.data.bones:
        bone.select = bone.name == "FULL.tip"
    rig.data.bones.active = rig.data.bones["FULL.tip"]
    settings.overlay = True
    settings.overlay_scope = "CHAIN"
    frame_selection(window, area, win_region)
    yield Settle(area).done
    shots["demo_bones"] = shot("default_demo_bones.png")
    record["demo_bones"] = {"drawn": drawn(module), "overlay": overlay_labels(module, window, area)}
    with bpy.context.temp_override(window=window, area=area, region=win_region, active_object=rig):
        bpy.ops.object.mode_set(mode="OBJECT")


def scroll_sidebar(window, area, ui_region, clicks: int, up: bool = False):
    """Scroll the sidebar down (``up``: up) by ``clicks`` wheel steps (simulated events),
    the pointer in the region's left margin (over a list, the wheel scrolls the list)."""
    x = ui_region.x + 4
    y = ui_region.y + ui_region.height // 2
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    yield Settle(area, draws=1, seconds=0.05).done
    for _ in range(clicks):
        window.event_simulate(type="WHEELUPMOUSE" if up else "WHEELDOWNMOUSE", value="PRESS", x=x, y=y)
        yield Settle(area, draws=1, seconds=0.05).done


def rigify_rig(module, window, area, space, win_region, ui_region, record: dict, shot, shots):
    """A Rigify human rig in a scene of its own, two squash-and-stretch edits, scanned;
    the panel on a deform bone in Pose mode, the overlay on the flagged nodes, the scan list."""
    import addon_utils

    if not addon_utils.enable("rigify", default_set=True):
        fail("Blender's Rigify add-on could not be enabled")
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.scene.new(type="EMPTY")
    yield Settle(area, draws=1, seconds=0.1).done
    scene = window.scene
    with bpy.context.temp_override(window=window, area=area, region=win_region, scene=scene):
        bpy.ops.object.armature_human_metarig_add()
        started = time.monotonic()
        result = bpy.ops.pose.rigify_generate()
    if result != {"FINISHED"}:
        fail(f"pose.rigify_generate returned {result}")
    record["rigify_seconds"] = round(time.monotonic() - started, 2)
    view_layer = window.view_layer
    rig = view_layer.objects.active
    scene.objects["metarig"].hide_set(True)
    rig.pose.bones["torso"].scale = (1.3, 1.0, 0.7)
    rig.pose.bones["upper_arm_fk.L"].scale = (1.0, 1.4, 0.8)
    view_layer.update()
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.hierarchy_inspector.scan()
    settings = scene.hierarchy_inspector
    record["rig"] = {"bones": len(rig.pose.bones), "flagged": len(settings.scan_items), "nodes": settings.scan_nodes}
    record["rig"]["groups"] = [(g.label, g.count) for g in settings.scan_groups]
    for obj in scene.objects:
        obj.select_set(False)
    rig.select_set(True)
    view_layer.objects.active = rig
    with bpy.context.temp_override(window=window, area=area, region=win_region, active_object=rig):
        bpy.ops.object.mode_set(mode="POSE")
    bone = "DEF-forearm.L.001"
    deform = rig.data.collections_all.get("DEF")
    if deform is not None:  # Rigify hides its deform bones; a hidden bone cannot be active
        deform.is_visible = True
    for b in rig.data.bones:
        b.select = b.name == bone
    rig.data.bones.active = rig.data.bones[bone]
    space.overlay.show_bones = True
    settings.overlay = True
    settings.overlay_scope = "CHAIN"
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.view3d.view_all(center=False)
    yield Settle(area).done
    shots["rig_panel"] = shot("default_rig_panel.png")
    record["rig_panel"] = {"drawn": drawn(module), "overlay": overlay_labels(module, window, area)}
    settings.overlay_scope = "FLAGGED"
    yield Settle(area).done
    shots["rig_overlay_flagged"] = shot("default_rig_overlay_flagged.png")
    record["rig_overlay_flagged"] = {"overlay": overlay_labels(module, window, area)}
    yield from scroll_sidebar(window, area, ui_region, 40)
    yield Settle(area).done
    shots["rig_scan"] = shot("default_rig_scan.png")
    record["rig_scan"] = {"drawn": drawn(module)}


def status_strip(window, name: str) -> str:
    """The window's bottom strip (the status bar, where Blender shows the last report),
    as OUTDIR/name."""
    height = max(20, int(round(26 * bpy.context.preferences.system.ui_scale)))
    rgb = x_capture(window.width, window.height)[window.height - height :]
    path = OUT / name
    write_png(path, rgb)
    return str(path)


def _reopen(module, cls_name: str, closed: bool) -> None:
    """Register one of the add-on's sub-panels again, closed (or open) by default: a
    script cannot click a panel's header (a panel the region has drawn keeps its state;
    this one has not been drawn yet)."""
    cls = getattr(module.addon.ui.panels_frames, cls_name, None) or getattr(module.addon.ui.panels, cls_name)
    bpy.utils.unregister_class(cls)
    cls.bl_options = {"DEFAULT_CLOSED"} if closed else set()
    bpy.utils.register_class(cls)


def dynamics_tab(module):
    """The Dynamics section as a panel of its own in a tab of its own (the add-on's is a
    closed sub-panel of the inspector, which a script cannot open): the same draw."""
    section = module.addon.ui.panels_frames.HI_PT_dynamics

    class HI_PT_dynamics_shot(bpy.types.Panel):
        bl_space_type, bl_region_type, bl_category = "VIEW_3D", "UI", "Dynamics"
        bl_idname = "HI_PT_dynamics_shot"
        bl_label = "Dynamics (the inspector's section, opened)"

        def draw(self, context):
            module.addon.ui.panels.DRAWN["sections"] = []
            section.draw(self, context)

    bpy.utils.register_class(HI_PT_dynamics_shot)
    return HI_PT_dynamics_shot


#: Keys the script binds, one per operator run as a user runs it (reports reach the
#: status bar only for operators the window manager runs, not for Python's calls).
KEYS = iter(("F13", "F14", "F15", "F16", "F17", "F18", "F19", "F20"))


def from_the_keyboard(window, win_region, idname: str, **props):
    """Run operator ``idname`` through a key bound for the purpose (simulated press over
    the viewport), as Blender runs a user's shortcut; the binding is removed after."""
    keymap = bpy.context.window_manager.keyconfigs.addon.keymaps.new(name="Window", space_type="EMPTY")
    key = next(KEYS)
    item = keymap.keymap_items.new(idname, key, "PRESS")
    for name, value in props.items():
        setattr(item.properties, name, value)
    x, y = win_region.x + 40, win_region.y + 40
    window.event_simulate(type="MOUSEMOVE", value="NOTHING", x=x, y=y)
    window.event_simulate(type=key, value="PRESS", x=x, y=y)
    window.event_simulate(type=key, value="RELEASE", x=x, y=y)
    return keymap, item


def rigger_day(module, window, area, space, win_region, ui_region, record: dict, shot, shots):
    """The rigger's rig (Rigify, torso squash, forearm stretch, rotations keyed over 40
    frames, a skinned mesh) at the default sidebar width: the range list after a range
    scan, a deform bone's chains and advice, the dynamics section, an export dialog, and
    the status bar after the range scan, each export and a fix (run as a user runs them,
    from a key: Python's calls leave the status bar empty). Times the range scan and each
    panel export against Blender's own exports of the same frames and objects."""
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.scene.new(type="EMPTY")
    yield Settle(area, draws=1, seconds=0.1).done
    scene = window.scene
    with bpy.context.temp_override(window=window, area=area, region=win_region, scene=scene):
        rig = importlib.import_module(f"{MODULE}.addon.scene.exports.scenes").rigger_rig(scene)
    view_layer = window.view_layer
    out = OUT / "exports"
    out.mkdir(exist_ok=True)
    ui = module.addon.ui
    settings = scene.hierarchy_inspector
    settings.overlay = False
    settings.scan_done = False  # (a new scene copies the last one's settings, its scan among them)
    scene.hierarchy_inspector_frames.range_chain = ""
    for obj in scene.objects:
        obj.select_set(False)
    view_layer.objects.active = None
    view_layer.update()
    yield from scroll_sidebar(window, area, ui_region, 60, up=True)
    fs = scene.hierarchy_inspector_frames
    record["rigger"] = {}
    # The range scan as a user starts it (modal, progress in the panel), timed to its end.
    started = time.monotonic()
    bound = [from_the_keyboard(window, win_region, "hierarchy_inspector.scan_range", scope="SCENE")]
    yield lambda: fs.range_done and not ui.operators_frames.HI_OT_scan_range.running
    record["rigger"]["range_scan_seconds"] = round(time.monotonic() - started, 3)
    fs.show_markers = True
    record["rigger"]["groups"] = [(g.label, g.count) for g in fs.range_groups]
    record["rigger"]["markers"] = sorted(m.name for m in scene.timeline_markers)
    record["rigger"]["top_rows"] = [(i.bone_name or i.object_name, i.hidden) for i in list(fs.range_items)[:8]]
    yield from scroll_sidebar(window, area, ui_region, 3)  # below the inspector's line and the scene scan's
    yield Settle(area).done
    shots["range_list"] = shot("default_range_list.png")
    shots["status_range_scan"] = status_strip(window, "status_range_scan.png")
    record["range_list"] = {"drawn": [list(e) for e in ui.lists.RANGE_DRAWN]}
    # A deform bone in Pose mode at the stretch's peak: the deform chain, the mechanism, the advice.
    scene.frame_set(25)
    rig.select_set(True)
    view_layer.objects.active = rig
    with bpy.context.temp_override(window=window, area=area, region=win_region, active_object=rig):
        bpy.ops.object.mode_set(mode="POSE")
    deform = rig.data.collections_all.get("DEF")
    if deform is not None:
        deform.is_visible = True
    bone = "DEF-forearm.L"
    for b in rig.data.bones:
        b.select = b.name == bone
    rig.data.bones.active = rig.data.bones[bone]
    yield from scroll_sidebar(window, area, ui_region, 60, up=True)
    yield Settle(area).done
    shots["deform_chains"] = shot("default_deform_chains.png")
    record["deform_chains"] = {"drawn": drawn(module)}
    yield from scroll_sidebar(window, area, ui_region, 22)
    yield Settle(area).done
    shots["deform_advice"] = shot("default_deform_advice.png")
    # The dynamics section after a chain scan of the bone.
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.hierarchy_inspector.scan_range(scope="CHAIN")
    record["rigger"]["chain_line"] = fs.range_chain
    extra = dynamics_tab(module)
    yield Settle(area, draws=1, seconds=0.2).done
    ui_region.active_panel_category = extra.bl_category
    yield Settle(area).done
    shots["dynamics"] = shot("default_dynamics.png")
    record["dynamics"] = {"drawn": drawn(module)}
    ui_region.active_panel_category = CATEGORY
    bpy.utils.unregister_class(extra)
    # The exports from Pose mode as a user runs them, each timed to its file, then
    # Blender's own exporters on the same frames and visible objects.
    seconds: dict = {}
    for name, idname, ext in (
        ("gltf", "hierarchy_inspector.export_gltf", "glb"),
        ("fbx", "hierarchy_inspector.export_fbx", "fbx"),
        ("fbx_accumulated", "hierarchy_inspector.export_fbx_accumulated", "fbx"),
    ):
        path = out / f"panel_{name}.{ext}"
        path.unlink(missing_ok=True)
        started = time.monotonic()
        bound.append(from_the_keyboard(window, win_region, idname, filepath=str(path)))
        yield path.exists
        seconds[f"panel_{name}"] = round(time.monotonic() - started, 3)
        yield Settle(area, seconds=1.5).done
        shots[f"status_{name}"] = status_strip(window, f"status_{name}.png")
    record["rigger"]["mode_after_exports"] = bpy.context.mode
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.object.mode_set(mode="OBJECT")
        started = time.monotonic()
        bpy.ops.export_scene.gltf(
            filepath=str(out / "blender.glb"),
            export_animations=True,
            export_force_sampling=True,
            export_current_frame=True,
            use_visible=True,
        )
        seconds["blender_gltf"] = round(time.monotonic() - started, 3)
        started = time.monotonic()  # the same with the options the panel's export passes (the timeline sampled)
        bpy.ops.export_scene.gltf(
            filepath=str(out / "blender_scene_mode.glb"),
            export_animations=True,
            export_animation_mode="SCENE",
            export_anim_scene_split_object=False,
            export_force_sampling=True,
            export_current_frame=True,
            export_rest_position_armature=False,
            use_visible=True,
        )
        seconds["blender_gltf_scene_mode"] = round(time.monotonic() - started, 3)
        started = time.monotonic()
        bpy.ops.export_scene.fbx(
            filepath=str(out / "blender.fbx"), bake_anim=True, add_leaf_bones=False, use_visible=True
        )
        seconds["blender_fbx"] = round(time.monotonic() - started, 3)
    record["rigger"]["export_seconds"] = seconds
    # Insert helpers on a rig whose bones hold the shear: what it says stays on the status bar.
    bound.append(from_the_keyboard(window, win_region, "hierarchy_inspector.insert_helpers"))
    yield Settle(area, seconds=2.0).done
    shots["status_insert_helpers"] = status_strip(window, "status_insert_helpers.png")
    for keymap, item in bound:
        keymap.keymap_items.remove(item)
    # The FBX export dialog (the file browser in the main window).
    prefs = bpy.context.preferences
    prefs.view.filebrowser_display_type = "SCREEN"
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        bpy.ops.hierarchy_inspector.export_fbx("INVOKE_DEFAULT", preset="UNREAL")
    yield _after(2.0)  # the file browser replaces the viewport: its redraws are not counted
    shots["export_dialog"] = {"file": screenshot(window, "export_dialog_fbx.png")}
    browser = next((a for a in window.screen.areas if a.type == "FILE_BROWSER"), None)
    record["rigger"]["export_dialog_opened"] = browser is not None
    if browser is not None:
        with bpy.context.temp_override(window=window, area=browser, screen=window.screen):
            bpy.ops.file.cancel()
    yield _after(1.0)


def _after(seconds: float):
    """A condition true once ``seconds`` have passed."""
    until = time.monotonic() + seconds
    return lambda: time.monotonic() >= until


def _gpu(name: str) -> str:
    import gpu

    try:
        return str(getattr(gpu.platform, name)())
    except Exception as exc:  # only for the record
        return f"? ({exc})"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("error.txt", "layout.json", *(f"sidebar_{n}.png" for n in ("overlay_on", "overlay_off", "item_tab"))):
        (OUT / name).unlink(missing_ok=True)
    if bpy.app.background:
        fail("this needs a window: run Blender without --background (e.g. tools/blender.sh --xvfb ...)")
    bpy.context.preferences.view.show_splash = False  # read before the first timer runs
    runner = steps()
    state: dict = {"wait": None}

    def tick():
        if time.monotonic() - STARTED > TIMEOUT:
            fail(f"timed out after {TIMEOUT:g} s (redraws so far: {DRAWS})")
        try:
            if state["wait"] is None or state["wait"]():
                state["wait"] = next(runner)
        except StopIteration:
            return None
        except Exception:
            fail("".join(traceback.format_exc()))
        return 0.05

    bpy.app.timers.register(tick, first_interval=0.5)


main()
