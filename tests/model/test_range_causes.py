"""The cause walk (the scaled node nearest up each chain, following copies) over batches
of frames, against a plain loop; and the range's cause groups on a hierarchy whose two
edits peak at different frames."""

from __future__ import annotations

import numpy as np
from hierarchy_inspector import core
from hierarchy_inspector.addon.model.advice.causes import walk_sources
from hierarchy_inspector.addon.model.timeline import FrameSeries, analyse_frames
from hierarchy_inspector.addon.model.timeline.causes import list_order, range_groups
from hypothesis import given
from hypothesis import strategies as st


def _loop(sources, parents, follows):
    """Per node, up its chain (a follower's next step is the node it copies)."""
    n = len(parents)
    cause, count = np.full(n, -1), np.zeros(n, dtype=int)
    for i in range(n):
        k, seen = i, 0
        while k >= 0 and seen <= n:
            if sources[k]:
                count[i] += 1
                if cause[i] < 0:
                    cause[i] = k
            k = follows[k] if follows is not None and follows[k] >= 0 else parents[k]
            seen += 1
    return cause, count


@given(st.integers(1, 30), st.integers(0, 2**31 - 1), st.booleans())
def test_walk_sources_matches_a_loop_for_every_frame(n, seed, with_follows):
    rng = np.random.default_rng(seed)
    parents = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])
    follows = None
    if with_follows:  # copies of earlier nodes only: no cycle
        follows = np.array([int(rng.integers(0, i)) if i and rng.random() < 0.3 else -1 for i in range(n)])
    sources = rng.random((3, n)) < 0.3
    depth = core.Hierarchy(parents).depth
    cause, count = walk_sources(sources, parents, depth, follows)
    for t in range(3):
        expected = _loop(sources[t], parents, follows)
        np.testing.assert_array_equal(cause[t], expected[0])
        np.testing.assert_array_equal(count[t], expected[1])


def _two_edits_series() -> FrameSeries:
    """root > torso > chest (rotated) and root > arm > hand (rotated): 'torso' squashed
    most at frame 3, 'arm' stretched most at frame 5, both unscaled at frame 1."""
    keys = [("rig", n) for n in ("root", "torso", "chest", "arm", "hand")]
    parents = np.array([-1, 0, 1, 0, 3])
    frames = np.arange(1, 7)
    torso = {1: (1, 1, 1), 2: (1.1, 1, 0.9), 3: (1.3, 1, 0.7), 4: (1.1, 1, 0.9), 5: (1, 1, 1), 6: (1, 1, 1)}
    arm = {1: (1, 1, 1), 2: (1, 1, 1), 3: (1, 1.1, 1), 4: (1, 1.2, 1), 5: (0.8, 1.5, 0.8), 6: (1, 1.1, 1)}
    turn = core.axis_angle_to_quat(np.array([1.0, 0.0, 1.0]) / np.sqrt(2), np.radians(40))
    world = np.empty((len(frames), 5, 4, 4))
    channel = np.ones((len(frames), 5, 3))
    for t, f in enumerate(frames):
        local = core.TRS(
            np.array([[0, 0, 0], [0, 0, 1], [0, 0, 1], [1, 0, 1], [0, 1, 0]], dtype=float),
            np.array([[1, 0, 0, 0], [1, 0, 0, 0], turn, [1, 0, 0, 0], turn]),
            np.array([(1, 1, 1), torso[f], (1, 1, 1), arm[f], (1, 1, 1)], dtype=float),
        )
        world[t] = core.Hierarchy(parents).world_matrices(local.to_matrix())
        channel[t, 1], channel[t, 3] = torso[f], arm[f]
    lo, hi = np.full((len(frames), 5, 3), -0.2), np.full((len(frames), 5, 3), 0.2)
    return FrameSeries(frames, keys, parents, world, lo, hi), channel


def test_range_groups_name_each_edit_at_its_worst_frame():
    series, channel = _two_edits_series()
    over = analyse_frames(series)
    groups = range_groups(over, channel)
    by_cause = {series.keys[g.cause][1]: g for g in groups if g.cause >= 0}
    assert set(by_cause) == {"torso", "arm"}
    torso, arm = by_cause["torso"], by_cause["arm"]
    assert torso.frame == 3 and torso.label(series.keys) == "torso (1.3, 1, 0.7) f3"
    assert torso.marker(series.keys) == "torso squash f3"
    assert arm.frame == 5 and arm.marker(series.keys) == "arm stretch f5"
    assert {series.keys[i][1] for i in torso.members} >= {"chest"}
    assert {series.keys[i][1] for i in arm.members} >= {"hand"}
    assert sum(len(g.members) for g in groups) == int(over.flagged.sum())
    # Unknown channels (NaN) fall back to the local matrices' scale: the same groups.
    unknown = range_groups(over, np.full_like(channel, np.nan))
    assert {series.keys[g.cause][1] for g in unknown if g.cause >= 0} == {"torso", "arm"}


def test_list_order_puts_what_the_viewport_hides_last():
    series, _channel = _two_edits_series()
    over = analyse_frames(series)
    flagged = over.worst_first()
    hidden = np.zeros(5, dtype=bool)
    hidden[flagged[0]] = True
    order = list_order(over, hidden)
    assert order[-1] == flagged[0] and sorted(order.tolist()) == sorted(flagged.tolist())
