"""Fitting text to the sidebar's real width: measured with the UI font (``blf``) at
the user's UI scale, so names are elided from the start (their distinguishing end
kept), numbers never, and warnings wrap where the region ends."""

from __future__ import annotations

from typing import Any

import blf

from ..model.text import elide_name, elide_start

#: Room a panel's margins, its scroll bar and a label's icon take, in pixels at UI scale 1.
MARGIN_PX = 44.0
ICON_PX = 22.0
#: A label's text inset on each side (Blender's UI_TEXT_MARGIN_X, 0.4 widget units), and
#: the slack kept on top of the measured width (rounding, kerning), pixels at UI scale 1.
PAD_PX = 8.0
SLACK = 1.06


def ui_scale(context) -> float:
    prefs = getattr(context, "preferences", None)
    return float(prefs.system.ui_scale) if prefs is not None else 1.0


def _font_px(context) -> float:
    styles: Any = getattr(getattr(context, "preferences", None), "ui_styles", None)
    points = styles[0].widget.points if styles else 11
    return float(points) * ui_scale(context)


def text_px(context, text: str) -> float:
    """Width of ``text`` in pixels in the UI's label font."""
    blf.size(0, _font_px(context))
    size: Any = blf.dimensions(0, text)  # (width, height); the stubs say None
    return float(size[0])


def label_px(context, text: str) -> float:
    """Width a label needs to show ``text`` whole: the text, its insets and some slack."""
    return SLACK * text_px(context, text) + 2.0 * PAD_PX * ui_scale(context)


def region_px(context) -> float:
    """Usable width of the current region's panels, pixels (300 without a region)."""
    region = getattr(context, "region", None)
    width = float(region.width) if region is not None else 300.0
    return max(60.0, width - MARGIN_PX * ui_scale(context))


def _fit(context, text: str, px: float, elide) -> str:
    """``elide(text, n)`` with the largest ``n`` whose label fits ``px`` pixels (a
    binary search: the width grows with ``n``); ``text`` itself when it fits."""
    if label_px(context, text) <= px:
        return text
    lo, hi = 1, len(text)  # the largest character count that fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if label_px(context, elide(text, mid)) <= px:
            lo = mid
        else:
            hi = mid - 1
    return elide(text, lo)


def fit_start(context, text: str, px: float) -> str:
    """``text`` elided from the start (``…ine.003``) so that a label ``px`` pixels wide
    shows it whole (see :func:`label_px`)."""
    return _fit(context, text, px, elide_start)


def fit_name(context, text: str, px: float) -> str:
    """A node's name elided to fit a label ``px`` pixels wide, keeping its kind prefix
    and its end (``DEF-…arm.L``, :func:`..model.text.elide_name`); without a prefix,
    from the start (:func:`fit_start`)."""
    return _fit(context, text, px, elide_name)


def wrap(context, text: str, px: float) -> list[str]:
    """``text`` broken at spaces into lines that labels ``px`` pixels wide show whole
    (a word longer than a line gets a line of its own)."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and label_px(context, candidate) > px:
            lines.append(current)
            current = word
        else:
            current = candidate
    return [*lines, current] if current else lines or [""]


def _fit_middle(context, text: str, px: float, head: int) -> str:
    """The first ``head`` characters, an ellipsis, and as much of the end as fits."""
    lo, hi = 0, len(text) - head
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if label_px(context, f"{text[:head]}\N{HORIZONTAL ELLIPSIS}{text[-mid:]}") <= px:
            lo = mid
        else:
            hi = mid - 1
    return f"{text[:head]}\N{HORIZONTAL ELLIPSIS}{text[-lo:] if lo else ''}"


def fit_names(context, names: list[str], rooms: list[float]) -> list[str]:
    """Each name elided to fit its room, its kind prefix and end kept (:func:`fit_name`);
    where two different names would then read the same (``…ine.003`` for
    ``tweak_spine.003`` and ``spine.003``), both keep their first characters too
    (``t…e.003``, ``s…e.003``), as few as tell them apart."""
    out = [fit_name(context, n, r) for n, r in zip(names, rooms, strict=True)]
    groups: dict[str, list[int]] = {}
    for k, shown in enumerate(out):
        groups.setdefault(shown, []).append(k)
    for members in groups.values():
        if len({names[k] for k in members}) < 2:
            continue
        longest = max(len(names[k]) for k in members)
        for head in range(1, longest):
            trial = {k: _fit_middle(context, names[k], rooms[k], head) for k in members}
            if len(set(trial.values())) == len({names[k] for k in members}):
                for k, shown in trial.items():
                    out[k] = shown
                break
    return out
