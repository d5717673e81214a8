"""Frames and frame ranges as the user gives them, checked before Blender sees them.

Blender's frames are integers in ``[FRAME_MIN, FRAME_MAX]`` (``MINAFRAME`` / ``MAXFRAME``
in Blender's source): a value outside would be clamped or overflow silently, so it is
refused here with a message that says what and where.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .errors import UsageError

FRAME_MIN = -1_048_574
FRAME_MAX = 1_048_574


def check_frame(value: int, what: str = "frame") -> int:
    """``value`` when it is a frame Blender can go to, else :class:`UsageError`."""
    if not FRAME_MIN <= value <= FRAME_MAX:
        raise UsageError(f"{what} {value} is outside Blender's frames ({FRAME_MIN} to {FRAME_MAX})")
    return value


def parse_frame(text: str, what: str = "--frame") -> int:
    """An integer frame from the command line (``"12"``, ``"-3"``), checked."""
    if not re.fullmatch(r"[+-]?\d+", text.strip()):
        raise UsageError(f"{what} {text!r}: expected a whole number")
    return check_frame(int(text), what)


class FrameRange(NamedTuple):
    """Frames ``start, start + step, ...`` up to and including ``end`` (``step >= 1``)."""

    start: int
    end: int
    step: int = 1

    def frames(self) -> list[int]:
        return list(range(self.start, self.end + 1, self.step))

    def count(self) -> int:
        """How many frames (without listing them)."""
        return (self.end - self.start) // self.step + 1

    def as_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "step": self.step}


def parse_frame_range(text: str, scene_range: tuple[int, int] | None = None, what: str = "--frames") -> FrameRange:
    """``START:END[:STEP]`` (END inclusive, STEP default 1) or ``scene`` (the scene's own
    ``(frame_start, frame_end)``, given as ``scene_range``); :class:`UsageError` naming
    the problem for anything else (END < START, STEP <= 0, non-integers, frames Blender
    does not have)."""
    text = text.strip()
    if text == "scene":
        if scene_range is None:
            raise UsageError(f"{what} scene: no scene range is known here")
        start, end = scene_range
        return FrameRange(check_frame(start, what), check_frame(end, what), 1)
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise UsageError(f"{what} {text!r}: expected START:END[:STEP] or 'scene'")
    start, end = (parse_frame(p, what) for p in parts[:2])
    step = 1
    if len(parts) == 3:
        if not re.fullmatch(r"\+?\d+", parts[2].strip()) or int(parts[2]) < 1:
            raise UsageError(f"{what} {text!r}: STEP must be a whole number >= 1")
        step = int(parts[2])
    if end < start:
        raise UsageError(f"{what} {text!r}: END ({end}) is before START ({start})")
    return FrameRange(start, end, step)
