"""Say at the end of the run what the real-window test measured, and where the pictures are."""

from __future__ import annotations

import json
from pathlib import Path

METRICS = Path(__file__).resolve().parents[2] / "build" / "ui" / "metrics.json"


def pytest_terminal_summary(terminalreporter) -> None:
    if not METRICS.exists() or not terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", []):
        return
    m = json.loads(METRICS.read_text())
    blue, red = m["overlay"]["accumulated_blue"], m["overlay"]["child_skew"]
    panel = m["panel"]["hierarchy_tab"]
    terminalreporter.write_line(
        f"real window: overlay pixels on/off: blue {blue['on']}/{blue['off']}, skew {red['on']}/{red['off']}; "
        f"sidebar text {panel['bright_fraction']:.1%} of pixels, {panel['text_lines']} lines "
        f"(Item tab {m['panel']['item_tab']['text_lines']}), differs from the Item tab in "
        f"{m['sidebar_differs_from_item_tab']:.1%}; {m['seconds_in_blender']} s in Blender; "
        f"pictures and metrics.json in {METRICS.parent}"
    )
