"""The numpy picture toolkit, read back with an independent PNG reader: exact pixels
round-trip, lines cover what geometry says, dashes leave gaps, text lands where asked,
and the two charts draw each engine family's colour."""

from __future__ import annotations

import numpy as np
from hierarchy_inspector.addon.model.inspection import inspect
from hierarchy_inspector.addon.model.pictures import MODEL_STYLES, deviation_chart_png, worst_nodes_png
from hierarchy_inspector.addon.model.pictures.canvas import Canvas, rgb
from hierarchy_inspector.addon.model.pictures.charts import nice_ticks
from hierarchy_inspector.addon.model.pictures.png import encode_png
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from png_reader import read_png


@given(
    hnp.arrays(np.uint8, hnp.array_shapes(min_dims=3, max_dims=3, min_side=1, max_side=9).map(lambda s: (*s[:2], 3)))
)
def test_png_round_trips_exactly(image):
    np.testing.assert_array_equal(read_png(encode_png(image)), image)


def test_line_covers_its_pixels_and_nothing_far_away():
    c = Canvas(60, 40, supersample=1)
    c.lines([[10, 20]], [[50, 20]], "#000000", width=3)
    px = c.pixels()
    dark = px.max(axis=-1) < 128
    ys, xs = np.nonzero(dark)
    assert set(ys) == {19, 20, 21} and xs.min() in (8, 9, 10) and xs.max() in (50, 51, 52)
    diagonal = Canvas(40, 40, supersample=1)
    diagonal.lines([[0, 0]], [[39, 39]], "#000000", width=1)
    ys, xs = np.nonzero(diagonal.pixels().max(axis=-1) < 128)
    assert np.abs(ys - xs).max() <= 1 and len(set(xs)) == 40


def test_dashes_leave_gaps_with_the_period_asked():
    c = Canvas(100, 10, supersample=1)
    c.lines([[0, 5]], [[99, 5]], "#000000", width=1, dash=(6, 4))
    on = c.pixels()[5].max(axis=-1) < 128
    starts = np.flatnonzero(on[1:] & ~on[:-1]) + 1
    assert len(starts) >= 8 and set(np.diff(starts)) <= {9, 10, 11}
    assert 0.5 < on.mean() < 0.7


def test_text_is_drawn_where_anchored():
    c = Canvas(200, 40)
    width = c.text(100, 25, "Hello", anchor="centre")
    ys, xs = np.nonzero(c.pixels().max(axis=-1) < 160)
    assert width == Canvas.text_width("Hello")
    assert abs((xs.min() + xs.max()) / 2 - 100) <= 3 and ys.max() <= 26 and ys.min() >= 25 - 13


@given(st.floats(1e-6, 1e6))
def test_ticks_cover_the_range_in_round_steps(top):
    ticks = nice_ticks(top)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** np.floor(np.log10(step))
    assert ticks[0] == 0 and ticks[-1] >= top * (1 - 1e-9) and len(ticks) <= 12
    assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 1e-6


def _colour_pixels(img, colour) -> int:
    return int((np.abs(img.astype(int) - (rgb(colour) * 255).astype(int)).max(axis=-1) < 20).sum())


def test_charts_draw_both_engine_families(piston_moved, tmp_path):
    inspection = inspect(piston_moved)
    labels = worst_nodes_png(inspection, str(tmp_path / "w.png"))
    assert labels == [inspection.nodes.label(int(i)) for i in inspection.worst_first()[:4]]
    drawn = deviation_chart_png(inspection, str(tmp_path / "d.png"))
    assert drawn == int(inspection.flagged.sum()) > 0
    for name in ("w.png", "d.png"):
        img = read_png((tmp_path / name).read_bytes())
        assert img.shape[0] > 200 and img.shape[1] > 500
        assert _colour_pixels(img, MODEL_STYLES[2][1]) > 50  # accumulated, blue
    assert _colour_pixels(read_png((tmp_path / "w.png").read_bytes()), MODEL_STYLES[0][1]) > 50  # Blender
