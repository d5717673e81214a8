"""Frame ranges without Blender: the analysis of all node-frames in one pass against
closed forms, independent loops and the single-frame path; rates over a range against
a turntable in closed form; the report's range parts against the schema."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import random_forest, random_trs_arrays
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.engines.paths import PATHS
from hierarchy_inspector.addon.model.errors import SceneDataError, UsageError
from hierarchy_inspector.addon.model.frames import FrameRange
from hierarchy_inspector.addon.model.inspection import inspect, local_matrices_of
from hierarchy_inspector.addon.model.report import build_report, report_csv, report_table
from hierarchy_inspector.addon.model.thresholds import Thresholds
from hierarchy_inspector.addon.model.timeline.dynamics import range_dynamics, range_rates
from hierarchy_inspector.addon.model.timeline.report import OVER_FRAMES_COLUMNS, RangeResults
from hierarchy_inspector.addon.model.timeline.series import (
    CORNER_FIELD,
    FrameSeries,
    analyse_frames,
    changes,
    check_finite,
    with_ancestors,
)

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "report.schema.json"


def validate_report(report: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(json.loads(json.dumps(report)), json.loads(SCHEMA_FILE.read_text()))


def _rz(angle: float) -> np.ndarray:
    m = np.eye(4)
    c, s = math.cos(angle), math.sin(angle)
    m[:2, :2] = [[c, -s], [s, c]]
    return m


def stretch_pair_series(frames=range(1, 22)) -> FrameSeries:
    """Parent scaled (sx, 1, 1), sx linear 1 -> 3 over frames 1..21; child (unit cube
    [-1, 1]^3) rotated about Z linearly 0 -> 90 degrees: Blender's worlds per frame."""
    worlds = []
    for f in frames:
        u = (f - 1) / 20
        parent = np.diag([1 + 2 * u, 1.0, 1.0, 1.0])
        worlds.append([parent, parent @ _rz(math.radians(90 * u))])
    t = len(worlds)
    return FrameSeries(
        frames=np.array(list(frames)),
        keys=[("Parent", ""), ("Child", "")],
        parents=np.array([-1, 0]),
        world=np.array(worlds),
        box_min=-np.ones((t, 2, 3)),
        box_max=np.ones((t, 2, 3)),
    )


def closed_form_shear_deg(sx: float, theta: float) -> float:
    """|angle between X and Y| - 90 of diag(sx, 1) @ R(theta)."""
    c, s = math.cos(theta), math.sin(theta)
    cosine = s * c * (1 - sx * sx) / math.sqrt((sx * sx * c * c + s * s) * (sx * sx * s * s + c * c))
    return abs(math.degrees(math.asin(cosine)))


def test_stretch_pair_shear_matches_the_closed_form_at_every_frame():
    series = stretch_pair_series()
    over = analyse_frames(series)
    for k, f in enumerate(series.frames):
        u = (f - 1) / 20
        assert over.shear[k, 1] == pytest.approx(closed_form_shear_deg(1 + 2 * u, math.radians(90 * u)), abs=1e-9)
    assert np.all(over.shear[:, 0] == 0) and np.all(over.local_shear < 1e-9)
    # Largest shear where d/du of the closed form vanishes: between frames 13 and 14 here.
    assert over.shear_max[1] == pytest.approx(over.shear[:, 1].max()) and 39.7 < over.shear_max[1] < 39.8
    assert over.flagged_frames[:, 1].sum() == 20  # every frame but the first (no rotation, no shear)


def test_corner_distances_match_an_independent_loop_and_worst_frame_is_their_argmax():
    series = stretch_pair_series()
    over = analyse_frames(series)
    corners = [np.array([x, y, z, 1.0]) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    for k, f in enumerate(series.frames):
        u = (f - 1) / 20
        sx, theta = 1 + 2 * u, math.radians(90 * u)
        blender = series.world[k, 1]
        accumulated = _rz(theta) @ np.diag([sx, 1.0, 1.0, 1.0])  # scale along the child's own axes
        expected = max(np.linalg.norm((accumulated - blender) @ c) for c in corners)
        assert over.corner_accumulated[k, 1] == pytest.approx(expected, abs=1e-9)
        assert over.corner_matrix[k, 1] < 1e-9  # no local shear: glTF composes Blender's worlds exactly
    assert over.worst_frame[1] == series.frames[np.argmax(over.corner_accumulated[:, 1])] == 21
    assert over.corner_max[1] == pytest.approx(2 * math.sqrt(2))  # R(90) diag(3,1,1) vs diag(3,1,1) R(90)


def random_series(rng, n=30, t=5, negative=True) -> FrameSeries:
    parents = random_forest(rng, n)
    h = core.Hierarchy(parents)
    worlds = []
    for _ in range(t):
        tr, q, s = random_trs_arrays(rng, n, negative=negative)
        local = core.TRS(tr, q, s).to_matrix()
        local[rng.random(n) < 0.2, 0, 1] += 0.4  # some locals carry shear an exporter drops
        worlds.append(h.world_matrices(local))
    lo = -rng.uniform(0.1, 1, size=(t, n, 3))
    return FrameSeries(
        np.arange(10, 10 + 3 * t, 3), [(f"N{i}", "") for i in range(n)], parents, np.array(worlds), lo, -lo
    )


@pytest.mark.parametrize("seed,negative", [(1, True), (2, True), (3, False), (4, False)])
def test_every_frame_equals_the_single_frame_inspection(seed, negative):
    rng = np.random.default_rng(seed)
    series = random_series(rng, negative=negative)
    thresholds = Thresholds(shear_deg=0.5, corner=0.01)
    over = analyse_frames(series, thresholds)
    for k in range(len(series)):
        one = inspect(series.nodes_at(k), thresholds)
        for path in PATHS:  # mirrored frames take Unreal's matrix paths, run frame by frame
            np.testing.assert_allclose(getattr(over, CORNER_FIELD[path])[k], one.corner(path), atol=1e-9, err_msg=path)
        np.testing.assert_allclose(over.shear[k], one.shear_max, atol=1e-9)
        np.testing.assert_allclose(over.local_shear[k], one.local_shear_max, atol=1e-9)
        np.testing.assert_allclose(over.corner_matrix[k], one.analysis.matrix_model_deviation.max_corner, atol=1e-9)
        np.testing.assert_allclose(over.corner_accumulated[k], one.analysis.accumulated_deviation.max_corner, atol=1e-9)
        np.testing.assert_array_equal(over.lossy[k], one.lossy_local)
        np.testing.assert_array_equal(over.flagged_frames[k], one.flagged)
    assert over.flagged.any() and not over.flagged_frames.all()
    # The worst shear over the range is the single-frame rule's at its worst frame.
    per_frame = np.array([inspect(series.nodes_at(k), thresholds).worst_shear for k in range(len(series))])
    np.testing.assert_allclose(over.worst_shear, per_frame.max(axis=0), atol=1e-9)


def test_non_finite_matrix_is_named_with_its_frame():
    series = stretch_pair_series()
    series.world[4, 1, 0, 0] = np.nan
    with pytest.raises(SceneDataError, match=r"'Child'.*frame 5"):
        analyse_frames(series)


def _held_series(rng) -> FrameSeries:
    """A random series whose frames 3..5 repeat frame 2 and whose node 0 never moves."""
    series = random_series(rng, t=9)
    series.world[3:6] = series.world[2]
    series.box_min[3:6], series.box_max[3:6] = series.box_min[2], series.box_max[2]
    series.world[:, 0] = series.world[0, 0]
    return series


@pytest.mark.parametrize(
    "where",
    ["first frame", "held frames", "moving frame", "static node", "box", "bottom row", "inf held to the end"],
)
def test_a_non_finite_value_anywhere_is_named_as_the_full_check_names_it(where):
    """The analysis checks only what it reads (the first frame, the node-frames it
    analyses, the bottom rows); a value that is not finite anywhere still raises, naming
    the node and frame the full check of every value names."""
    series = _held_series(np.random.default_rng(5))
    w = series.world
    if where == "first frame":
        w[0, 3, 1, 2] = np.nan
    elif where == "held frames":
        w[3:6, 4, 2, 3] = np.inf  # equal at frames 3..5: only frame 3 differs from the frame before
    elif where == "moving frame":
        w[6, 2, 0, 0] = -np.inf
    elif where == "static node":
        w[4:, 0, 1, 1] = np.nan
    elif where == "box":
        series.box_max[4, 5, 2] = np.nan
    elif where == "bottom row":
        w[5, 6, 3, 0] = np.nan
    else:
        w[2:, 7, 0, 3] = np.inf
    with pytest.raises(SceneDataError) as full:
        check_finite(series)
    with pytest.raises(SceneDataError) as analysed:
        analyse_frames(series)
    assert str(analysed.value) == str(full.value)


def rig_like_series(t_count: int = 40) -> FrameSeries:
    """A Rigify-like range: an armature object with a 24-bone chain (root, spine, neck,
    arm, fingers) and short side branches; its torso bone stretches non-uniformly
    ``(1/sqrt(s), s, 1/sqrt(s))`` for 10 of every 20 frames and is held otherwise, an arm
    bone turns at those frames too; a second armature (a metarig: 12 bones, nothing moves
    it) and 20 widget objects stay put; at the stretching frames one bone's local holds
    shear (as a constraint can give it). Blender's worlds composed as matrices."""
    rng = np.random.default_rng(9)
    chain = np.arange(-1, 24)  # node 0 the armature object, 1..24 a chain under it
    side = np.array([3, 6, 9, 12, 15, 18, 21, 24, 24, 5])  # branch bones under chain bones
    meta = np.concatenate(([-1], np.arange(35, 46)))  # a second armature: nodes 35..46
    widgets = np.full(20, -1)
    parents = np.concatenate((chain, side, meta, widgets))
    n = len(parents)
    h = core.Hierarchy(parents)
    tr, q, s = random_trs_arrays(rng, n)
    rest = core.TRS(tr, q, np.ones_like(s)).to_matrix()
    worlds = []
    for k in range(t_count):
        local = rest.copy()
        phase = k % 20
        if 5 <= phase < 15:  # stretching; held at the ends of the cycle
            stretch = 1.0 + 0.3 * math.sin(math.pi * (phase - 5) / 10)
            local[4] = local[4] @ np.diag([stretch**-0.5, stretch, stretch**-0.5, 1.0])
            local[9] = local[9] @ _rz(0.2 * (phase - 5))
            local[12, 0, 1] += 0.1 * (stretch - 1.0)  # a local that holds shear (a constraint's)
        worlds.append(h.world_matrices(local))
    lo = -rng.uniform(0.05, 0.5, size=(1, n, 3)).repeat(t_count, axis=0)
    keys = [("Rig", "")] + [("Rig", f"B{i}") for i in range(1, 35)] + [("Metarig", "")]
    keys += [("Metarig", f"M{i}") for i in range(36, 47)] + [(f"WGT{i}", "") for i in range(20)]
    return FrameSeries(np.arange(1, t_count + 1), keys, parents, np.array(worlds), lo, -lo * 1.5)


def test_a_rig_like_range_equals_every_frame_computed_in_full():
    """Held frames, the second cycle (equal to the first) and static armatures repeat rows
    (the skips fire: a fraction of the frames and nodes is analysed), and every frame's
    numbers equal core.frame_fields over all frames and nodes bit for bit, lossy as the
    single-frame inspection decides, each node's worst frame its first worst frame."""
    series = rig_like_series()
    frames, nodes = changes(series)
    assert 0 < frames.sum() < len(series) - 1 and nodes[:25].all() and not nodes[35:].any()
    over = analyse_frames(series, Thresholds(shear_deg=0.1, corner=0.001))
    # The second cycle repeats the first, and the first stretching frame (a stretch of 1)
    # the rest pose: the rest pose and 9 moving frames are the rows.
    assert len(over.source) == 40 and len(over.rows["shear"]) == 1 + 9 < 1 + frames.sum()
    np.testing.assert_array_equal(over.source[20:], over.source[:20])
    full = core.frame_fields(core.Hierarchy(series.parents), series.world, series.box_min, series.box_max)
    np.testing.assert_array_equal(over.shear, full.shear_deg)
    np.testing.assert_array_equal(over.local_shear, full.local_shear_deg)
    np.testing.assert_array_equal(over.corner_matrix, full.corner_matrix)
    np.testing.assert_array_equal(over.corner_accumulated, full.corner_accumulated)
    np.testing.assert_array_equal(over.singular_parent, full.singular_parent)
    assert over.shear.max() > 1.0 and over.lossy.any()
    for k in (0, 7, 12, 15, 27):
        np.testing.assert_array_equal(over.lossy[k], inspect(series.nodes_at(k)).lossy_local)
    corner = np.maximum(full.corner_matrix, full.corner_accumulated)
    np.testing.assert_array_equal(over.worst_frame, series.frames[np.argmax(corner, axis=0)])


@pytest.mark.parametrize("pad", [0, 140])  # 140 plain ancestors: deeper than the flat fold
def test_a_parent_of_large_uniform_scale_does_not_hide_real_local_shear(pad):
    """The noise rule's condition estimate is |A| |inverse(A)| (the Frobenius bound, a
    parent's scale cancels out): a parent scaled 1e4 (condition 1) with a child whose local
    holds 0.05 degrees of shear is lossy at a 0.01-degree threshold, as the single-frame
    inspection decides, in the flat fold and the general path alike. (The estimate from
    the 4x4 inverse, its corner 1 included, gave about 1.7e4 here and called that shear
    noise.)"""
    t_count, n = 5, pad + 2
    shear = np.eye(4)
    shear[0, 1] = math.tan(math.radians(0.05))
    world = np.tile(np.eye(4), (t_count, n, 1, 1))
    for k in range(t_count):
        world[k, pad] = np.diag([1e4, 1e4, 1e4, 1.0]) @ _rz(0.1 * k)
        world[k, pad + 1] = world[k, pad] @ shear
    keys = [(f"Up{i}", "") for i in range(pad)] + [("Parent", ""), ("Child", "")]
    box = np.ones((t_count, n, 3))
    series = FrameSeries(np.arange(1, t_count + 1), keys, np.arange(-1, n - 1), world, -box, box)
    thresholds = Thresholds(shear_deg=0.01, corner=1e9)
    over = analyse_frames(series, thresholds)
    for k in range(t_count):
        np.testing.assert_array_equal(over.lossy[k], inspect(series.nodes_at(k), thresholds).lossy_local)
    assert over.lossy[:, -1].all() and not over.lossy[:, :-1].any()


# -- rates over a range: a turntable ------------------------------------------------------

OMEGA0, ALPHA, DT = 2.0, 1.0, 1 / 24


def turntable(t_count: int = 11):
    """Table spinning about Z (angle w0 t + a t^2 / 2) at height 0.8; a puck sliding
    outward on it, local x = 0.1 + 0.2 t + 0.15 t^2. Worlds (T, 2, 4, 4), locals, times."""
    times = np.arange(t_count) * DT
    world, local = [], []
    for t in times:
        table = _rz(OMEGA0 * t + 0.5 * ALPHA * t * t)
        table[2, 3] = 0.8
        puck_local = np.eye(4)
        puck_local[0, 3] = 0.1 + 0.2 * t + 0.15 * t * t
        world.append([table, table @ puck_local])
        local.append([table, puck_local])
    return np.array(world), np.array(local), times


def test_range_rates_are_exact_for_a_turntable_at_every_frame_including_the_ends():
    world, local, times = turntable()
    dyn = range_dynamics(world, local, np.zeros((len(times), 2), dtype=bool), np.array([-1, 0]), DT)
    omega = OMEGA0 + ALPHA * times
    np.testing.assert_allclose(dyn.world.omega[:, 0, 2], omega, atol=1e-9)
    np.testing.assert_allclose(dyn.world.alpha[:, 0, 2], ALPHA, atol=1e-7)
    x, v = 0.1 + 0.2 * times + 0.15 * times**2, 0.2 + 0.3 * times
    np.testing.assert_allclose(dyn.local.velocity[:, 1, 0], v, atol=1e-9)
    np.testing.assert_allclose(dyn.local.acceleration[:, 1, 0], 0.3, atol=1e-7)
    # Inertial terms in the table's basis: centrifugal w^2 x, Coriolis -2 w v, Euler -a x.
    assert dyn.inertial_ok[:, 1].all() and not dyn.inertial_ok[:, 0].any()
    np.testing.assert_allclose(dyn.centrifugal[:, 1], np.stack([omega**2 * x, 0 * x, 0 * x], -1), atol=1e-8)
    np.testing.assert_allclose(dyn.coriolis[:, 1], np.stack([0 * x, -2 * omega * v, 0 * x], -1), atol=1e-8)
    np.testing.assert_allclose(dyn.euler[:, 1], np.stack([0 * x, -ALPHA * x, 0 * x], -1), atol=1e-7)
    np.testing.assert_allclose(dyn.linear[:, 1], 0.0, atol=1e-9)
    entry = dyn.entry(1)
    assert len(entry["global"]["velocity"]) == len(times) and entry["inertial"]["basis"] == "parent"


def test_one_sided_ends_are_second_order_for_velocity():
    # x(t) = sin(t): the end velocity's error shrinks 4x when dt halves (O(dt^2)).
    errors = []
    for dt in (0.1, 0.05):
        times = np.arange(6) * dt
        m = np.tile(np.eye(4), (6, 1, 1, 1))
        m[:, 0, 0, 3] = np.sin(times)
        rates = range_rates(m, np.ones((6, 1), dtype=bool), dt)
        errors.append(abs(rates.velocity[0, 0, 0] - 1.0))
    assert 3.0 < errors[0] / errors[1] < 5.0


def test_range_rates_need_three_frames():
    with pytest.raises(UsageError, match="at least 3 frames"):
        range_rates(np.tile(np.eye(4), (2, 1, 1, 1)), np.ones((2, 1), dtype=bool), DT)


# -- the report's range parts ----------------------------------------------------------------


def test_report_with_range_follows_the_schema_and_csv_and_table_show_it():
    series = stretch_pair_series()
    over = analyse_frames(series)
    one = inspect(series.nodes_at(4))
    tiled = core.Hierarchy(series.parents).tile(len(series)).parents
    local, singular = local_matrices_of(series.world.reshape(-1, 4, 4), tiled)
    dyn = range_dynamics(
        series.world, local.reshape(series.world.shape), singular.reshape(len(series), 2), series.parents, 1 / 24
    )
    results = RangeResults.for_keys(one.nodes.keys, FrameRange(1, 21, 1), over, dyn)
    report = build_report(one, blender_version="x", file=None, frame=5, fps=24.0, over_frames=results)
    validate_report(report)
    assert report["frames"]["start"] == 1 and report["frames"]["count"] == 21
    assert report["frames"]["worst_frame"] == 21 and report["frames"]["flagged"] == 1
    child = next(e for e in report["nodes"] if e["name"] == "Child")
    assert child["over_frames"]["worst_frame"] == 21
    assert child["over_frames"]["shear_deg"] == pytest.approx(over.shear_max[1])
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    assert set(OVER_FRAMES_COLUMNS) <= set(rows[0])
    assert float(next(r for r in rows if r["name"] == "Child")["range_shear_max_deg"]) == pytest.approx(
        over.shear_max[1]
    )
    table = report_table(report)
    assert "Frames 1..21" in table and "worst frame" in table and "At frame 5" in table


def test_range_results_name_a_node_the_range_lacks():
    series = stretch_pair_series()
    with pytest.raises(SceneDataError, match="'Other'"):
        RangeResults.for_keys([("Other", "")], FrameRange(1, 21), analyse_frames(series))


def test_held_frames_and_static_subtrees_repeat_results_equal_to_the_single_frame_path(rng):
    series = random_series(rng, n=40, t=8)
    series.world[3] = series.world[2]  # a held pose
    series.world[4] = series.world[2]
    series.box_min[3:5], series.box_max[3:5] = series.box_min[2], series.box_max[2]
    root = int(np.flatnonzero(series.parents < 0)[0])
    subtree = [i for i in range(40) if root in core_chain(series.parents, i)]
    series.world[:, subtree] = series.world[0, subtree]  # a static prop and everything under it
    series.box_min[:, subtree], series.box_max[:, subtree] = series.box_min[0, subtree], series.box_max[0, subtree]
    frames, nodes = changes(series)
    assert list(np.flatnonzero(~frames)) == [0, 3, 4] and not nodes[subtree].any()
    over = analyse_frames(series)
    for k in range(len(series)):
        one = inspect(series.nodes_at(k))
        np.testing.assert_allclose(over.shear[k], one.shear_max, atol=1e-9)
        np.testing.assert_allclose(over.corner[k], one.worst_corner, atol=1e-9)
        np.testing.assert_array_equal(over.flagged_frames[k], one.flagged)

    # The maxima, worst frames and counts come from the distinct rows: the same as from
    # the per-frame arrays (ties included: the worst frame is the first one).
    series.world[6] = series.world[5]
    over = analyse_frames(series)
    assert len(next(iter(over.rows.values()))) < len(series)  # held frames share a row
    np.testing.assert_array_equal(over.shear_max, over.shear.max(axis=0))
    np.testing.assert_array_equal(over.local_shear_max, over.local_shear.max(axis=0))
    np.testing.assert_array_equal(over.corner_max, over.corner.max(axis=0))
    np.testing.assert_array_equal(over.worst_index, np.argmax(over.corner, axis=0))
    np.testing.assert_array_equal(over.flagged_frame_count, over.flagged_frames.sum(axis=0))
    np.testing.assert_array_equal(over.flagged, over.flagged_frames.any(axis=0))


def core_chain(parents, i) -> list[int]:
    out = [i]
    while parents[out[-1]] >= 0:
        out.append(int(parents[out[-1]]))
    return out


@pytest.mark.parametrize("n", [1, 7, 60])
def test_with_ancestors_marks_every_ancestor_like_a_loop(rng, n):
    parents = random_forest(rng, n)
    marked = rng.random(n) < 0.2
    expected = np.zeros(n, dtype=bool)
    for i in np.flatnonzero(marked):
        expected[core_chain(parents, int(i))] = True
    np.testing.assert_array_equal(with_ancestors(parents, marked), expected)


def test_a_box_that_changes_marks_its_own_node_only_and_its_results_follow(rng):
    series = random_series(rng, n=30, t=6)
    series.world[:] = series.world[0]  # nothing moves
    series.box_min[:], series.box_max[:] = series.box_min[0], series.box_max[0]
    parent = int(np.flatnonzero(np.bincount(series.parents[series.parents >= 0], minlength=30))[0])
    series.box_max[3:, parent] *= 2.0  # its box grows from the fourth frame
    frames, nodes = changes(series)
    children = np.flatnonzero(series.parents == parent)
    assert list(np.flatnonzero(frames)) == [3] and nodes[parent] and not nodes[children].any()
    over = analyse_frames(series)
    for k in range(len(series)):
        one = inspect(series.nodes_at(k))
        np.testing.assert_allclose(over.corner[k], one.worst_corner, atol=1e-9)


def test_a_hierarchy_deeper_than_the_flat_fold_takes_the_general_path(rng):
    n = 150  # deeper than core.fields.MAX_LEVELS
    parents = np.arange(-1, n - 1)
    worlds = []
    for _ in range(3):
        tr, q, s = random_trs_arrays(rng, n)
        local = core.TRS(0.05 * tr, q, s ** (1 / 50)).to_matrix()
        local[::7, 0, 1] += 0.2
        worlds.append(core.Hierarchy(parents).world_matrices(local))
    lo = -np.ones((3, n, 3))
    series = FrameSeries(np.arange(3), [(f"N{i}", "") for i in range(n)], parents, np.array(worlds), lo, -lo)
    over = analyse_frames(series)
    for k in range(3):
        one = inspect(series.nodes_at(k))
        np.testing.assert_allclose(over.shear[k], one.shear_max, atol=1e-9)
        np.testing.assert_allclose(over.corner[k], one.worst_corner, rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(over.lossy[k], one.lossy_local)


def collapsing_series(t_count: int = 21, depth_pad: int = 0) -> FrameSeries:
    """A parent at (5, 3, 2), rotated, whose X scale goes linearly 1 -> -1 over the range
    (exactly 0 at the middle frame), under ``depth_pad`` plain ancestors, with a rotated
    child; worlds rounded to float32 as Blender hands them."""
    rot = _rz(0.7) @ np.array([[1, 0, 0, 0], [0, 0.8, -0.6, 0], [0, 0.6, 0.8, 0], [0, 0, 0, 1.0]])
    child_local = _rz(0.5)
    child_local[:3, 3] = (1.0, 2.0, 3.0)
    n = depth_pad + 2
    parents = np.arange(-1, n - 1)
    worlds = []
    for sx in np.linspace(1.0, -1.0, t_count):
        parent = rot @ np.diag([sx, 1.0, 1.0, 1.0])
        parent[:3, 3] = (5.0, 3.0, 2.0)
        worlds.append([np.eye(4)] * depth_pad + [parent, parent @ child_local])
    keys = [(f"Up{i}", "") for i in range(depth_pad)] + [("Parent", ""), ("Child", "")]
    lo = -np.ones((t_count, n, 3))
    world = np.array(worlds).astype(np.float32).astype(np.float64)
    return FrameSeries(np.arange(1, t_count + 1), keys, parents, world, lo, -lo)


def test_a_parent_whose_scale_goes_through_zero_is_reported_at_that_frame_not_raised():
    series = collapsing_series()
    middle = 10  # time index of sx == 0 (frame 11)
    with pytest.raises(core.InputError, match="bottom row"):  # the single-frame recipe's pseudo-inverse
        core.decompose(np.linalg.pinv(series.world[middle, 0]) @ series.world[middle, 1])
    over = analyse_frames(series)
    flags = np.zeros((21, 2), dtype=bool)
    flags[middle, 1] = True
    np.testing.assert_array_equal(over.singular_parent, flags)
    assert np.isfinite(over.corner).all() and np.isfinite(over.local_shear).all()
    for k in (0, 5, 9, 11, 20):  # the other frames equal the single-frame path
        one = inspect(series.nodes_at(k))
        np.testing.assert_allclose(over.corner[k], one.worst_corner, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(over.local_shear[k], one.local_shear_max, atol=1e-9)
    entry = over.entry(1)
    assert entry["singular_parent_frames"] == [11] and "singular_parent_frames" not in over.entry(0)
    one = inspect(series.nodes_at(0))
    report = build_report(
        one, blender_version="x", file=None, frame=1, fps=24.0,
        over_frames=RangeResults.for_keys(one.nodes.keys, FrameRange(1, 21, 1), over),
    )  # fmt: skip
    validate_report(report)
    table = report_table(report)
    assert "'Child': its parent has zero scale on an axis at frame 11; its local transform is undefined there" in table


def test_a_collapsing_parent_in_a_hierarchy_deeper_than_the_flat_fold_gives_the_same_results():
    flat = analyse_frames(collapsing_series())
    deep = analyse_frames(collapsing_series(depth_pad=140))  # the general path (core.fields.MAX_LEVELS)
    np.testing.assert_array_equal(deep.singular_parent[:, -2:], flat.singular_parent)
    np.testing.assert_allclose(deep.corner[:, -2:], flat.corner, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(deep.local_shear[:, -2:], flat.local_shear, atol=1e-9)
    assert not deep.singular_parent[:, :-1].any()


def test_changes_compares_only_the_boxes_the_series_says_can_vary(rng):
    """With ``boxes_vary`` the boxes of the other nodes are not compared (the reader keeps
    them the first frame's): the same frames and nodes as comparing all of them when the
    hint holds, and a box outside it is indeed not looked at."""
    series = random_series(rng, n=20, t=6)
    series.world[:] = series.world[0]  # nothing moves...
    series.box_min[:], series.box_max[:] = series.box_min[0], series.box_max[0]
    series.box_max[3:, 7] *= 1.5  # ...but node 7's box grows at frame 3
    frames, nodes = changes(series)
    assert list(np.flatnonzero(frames)) == [3] and nodes[7]
    hinted = dataclasses.replace(series, boxes_vary=np.array([2, 7]))
    for got, want in zip(changes(hinted), (frames, nodes), strict=True):
        np.testing.assert_array_equal(got, want)
    assert not changes(dataclasses.replace(series, boxes_vary=np.array([2])))[0].any()
    assert not changes(dataclasses.replace(series, boxes_vary=np.zeros(0, dtype=np.int64)))[1][7]


def test_repeated_frames_are_found_by_value_not_by_fingerprint_alone(rng):
    """A frame equal to the first or to an earlier moving frame is found (the earliest
    one that repeats nothing); a frame whose fingerprint collides (two entries swapped),
    one with another box, and one holding NaN (equal to nothing) are not."""
    from hierarchy_inspector.addon.model.timeline.repeats import repeated_frames

    series = random_series(rng, n=6, t=9)
    w, lo, hi = series.world, series.box_min, series.box_max
    w[3], lo[3], hi[3] = w[0], lo[0], hi[0]  # back to the first frame
    w[5], lo[5], hi[5] = w[2], lo[2], hi[2]  # a moving frame again
    w[6], lo[6], hi[6] = w[5], lo[5], hi[5]  # (and again: still frame 2)
    w[7], lo[7], hi[7] = w[1], lo[1], hi[1]
    w[7, 0, 0, 1], w[7, 1, 0, 1] = w[1, 1, 0, 1], w[1, 0, 0, 1]  # two entries swapped: the same sum
    w[8], lo[8] = w[4], lo[4] * 2.0  # another box
    earlier = repeated_frames(w, lo, hi, np.arange(1, 9))
    np.testing.assert_array_equal(earlier, [-1, -1, 0, -1, 2, 2, -1, -1])
    w[2, 3, 1, 1] = np.nan
    w[5] = w[2]
    assert repeated_frames(w, lo, hi, np.arange(1, 9))[4] == -1
