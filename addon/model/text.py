"""Plain-text tables for the terminal and the clipboard (no Blender needed)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


DEG = "\N{DEGREE SIGN}"
#: Lengths below this (scene units) are written 0: float32 round-off, not a distance.
ZERO_LENGTH = 1e-5


@dataclass(frozen=True)
class Units:
    """How lengths are written: the scene's unit system (``"METRIC"``, ``"IMPERIAL"`` or
    ``"NONE"``) and its unit scale (Blender units to metres). ``NONE`` writes plain
    numbers with ``suffix`` (``"units"`` in reports and on the command line)."""

    system: str = "NONE"
    scale_length: float = 1.0
    suffix: str = "units"

    def vector(self, values, digits: int = 3) -> str:
        """A location in the base unit (see :attr:`base`): ``(4.500, -5.000, 4.500)``."""
        factor = self.scale_length if self.system == "METRIC" else 1.0
        if self.system == "IMPERIAL":
            factor = self.scale_length / 0.3048
        return fmt_vec(np.asarray(values, dtype=float) * factor, digits)

    @property
    def base(self) -> str:
        """The unit vectors are written in: ``m``, ``ft`` or ``""`` (plain numbers)."""
        return {"METRIC": "m", "IMPERIAL": "ft"}.get(self.system, "")

    def length(self, value: float, digits: int = 3) -> str:
        """``value`` (Blender units) with the scene's unit: ``1.27 m``, ``4.17 ft``, ``0.389 units``.

        ``digits`` significant digits; never elided, never in scientific notation
        above 1e-4."""
        v = float(value) * (self.scale_length if self.system != "NONE" else 1.0)
        if abs(v) < ZERO_LENGTH:  # float32 noise of Blender's matrices, not a distance
            v = 0.0
        if self.system == "METRIC" and v == 0.0:
            return "0 m"
        if self.system == "METRIC":
            for factor, unit in ((1.0, "m"), (100.0, "cm"), (1000.0, "mm")):
                text = _sig(v * factor, digits)
                if abs(float(text)) >= 1.0 or unit == "mm":  # 0.99999 m is written 1.00 m
                    return f"{text} {unit}"
        if self.system == "IMPERIAL":
            feet = _sig(v / 0.3048, digits)
            return f"{feet} ft" if abs(float(feet)) >= 1.0 else f"{_sig(v / 0.3048 * 12.0, digits)} in"
        return f"{_sig(v, digits)} {self.suffix}".rstrip()


PLAIN = Units()


def _sig(v: float, digits: int) -> str:
    """``v`` with at least ``digits`` significant digits in fixed notation (0 for
    |v| < 1e-9; scientific only below 1e-4)."""
    if abs(v) < 1e-9:
        return "0"
    if abs(v) >= 10**digits:
        return f"{v:.0f}"
    return f"{v:#.{digits}g}".rstrip(".")


#: A name's prefix that says what kind of bone it is (Rigify's ``DEF-``, ``ORG-``,
#: ``MCH-``, ``WGT-``; ``CTRL_``...: capitals, as riggers write them; ``foot_tweak`` has
#: none): kept when a name is elided.
KIND_PREFIX = re.compile(r"^[A-Z]{2,4}[-_]")


def name_prefix(text: str) -> str:
    """``DEF-`` of ``DEF-forearm.L``; '' when the name has no kind prefix."""
    found = KIND_PREFIX.match(text)
    return found.group(0) if found and len(found.group(0)) < len(text) else ""


def elide_name(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters keeping its kind prefix and its end
    (``DEF-…arm.L``): both tell Rigify's bones apart; without a prefix, from the start
    (:func:`elide_start`)."""
    prefix = name_prefix(text)
    if len(text) <= width or not prefix or width < len(prefix) + 3:
        return elide_start(text, width)
    return f"{prefix}\N{HORIZONTAL ELLIPSIS}{text[-(width - len(prefix) - 1) :]}"


def elide_start(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters from the start (``…line.003``): the end of a
    bone name is what tells ``DEF-spine.003`` from ``DEF-spine.004``."""
    if width < 2 or len(text) <= width:
        return text if len(text) <= max(width, 1) else text[-max(width, 1) :]
    return "\N{HORIZONTAL ELLIPSIS}" + text[-(width - 1) :]
