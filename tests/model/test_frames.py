"""Frames and frame ranges from the command line: every bad value named, exit-2 errors."""

from __future__ import annotations

import pytest
from hierarchy_inspector.addon.model.errors import UsageError
from hierarchy_inspector.addon.model.frames import FRAME_MAX, FRAME_MIN, FrameRange, parse_frame, parse_frame_range
from hypothesis import given
from hypothesis import strategies as st


@given(st.integers(FRAME_MIN, FRAME_MAX), st.integers(0, 500), st.integers(1, 50))
def test_ranges_parse_and_include_their_end(start, length, step):
    end = min(start + length, FRAME_MAX)
    got = parse_frame_range(f"{start}:{end}:{step}")
    assert got == FrameRange(start, end, step)
    assert got.frames() == list(range(start, end + 1, step))
    assert parse_frame_range(f"{start}:{end}").step == 1


def test_scene_range():
    assert parse_frame_range("scene", (1, 250)) == FrameRange(1, 250, 1)


@pytest.mark.parametrize(
    "text, message",
    [
        ("10:5", "END \\(5\\) is before START \\(10\\)"),
        ("1:10:0", "STEP must be a whole number >= 1"),
        ("1:10:-2", "STEP must be a whole number >= 1"),
        ("1.5:10", "expected a whole number"),
        ("a:b", "expected a whole number"),
        ("1", "expected START:END"),
        ("1:2:3:4", "expected START:END"),
        ("0:2147483648", "outside Blender's frames"),
        ("scene", "no scene range"),
    ],
)
def test_bad_ranges_are_named(text, message):
    with pytest.raises(UsageError, match=message):
        parse_frame_range(text)


@given(st.integers().filter(lambda v: not FRAME_MIN <= v <= FRAME_MAX))
def test_frames_beyond_blender_are_refused(value):
    with pytest.raises(UsageError, match="outside Blender's frames"):
        parse_frame(str(value))
