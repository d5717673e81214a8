"""Plain-text tables for the terminal and the clipboard (no Blender needed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def fmt_vec(values, digits: int = 3) -> str:
    """``(1.000, 2.000, 3.000)``; -0 printed as 0."""
    arr = np.asarray(values, dtype=float) + 0.0
    return "(" + ", ".join(f"{v:.{digits}f}" for v in np.where(np.abs(arr) < 0.5 * 10**-digits, 0.0, arr)) + ")"


def fmt_num(value: float, digits: int = 3) -> str:
    v = float(value)
    return f"{0.0 if abs(v) < 0.5 * 10**-digits else v:.{digits}f}"


def format_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces, with a rule under the header."""
    rows = [list(map(str, r)) for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=False)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in rows]
    return "\n".join(lines)
