"""Write addon/model/pictures/font.py: printable ASCII as anti-aliased 8-bit glyphs,
rendered once from DejaVu Sans Mono (matplotlib's copy; Bitstream Vera licence, which
allows this use) so that the pictures need nothing but numpy and zlib at run time.

    .venv/bin/python tools/make_font.py
"""

from __future__ import annotations

import base64
import zlib
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

CELL_W, CELL_H, SIZE_PT, DPI = 7, 13, 8.0, 100
BASELINE = 10  #: rows above the baseline in a cell
OUT = Path(__file__).resolve().parents[1] / "addon" / "model" / "pictures" / "font.py"


def glyphs() -> np.ndarray:
    """Each character drawn by matplotlib's Agg renderer into its own cell, baseline at
    ``BASELINE`` rows down, black on white; coverage = 255 - grey."""
    cells = np.zeros((95, CELL_H, CELL_W), dtype=np.uint8)
    for k, code in enumerate(range(32, 127)):
        fig = Figure(figsize=(CELL_W / DPI, CELL_H / DPI), dpi=DPI, facecolor="white")
        canvas = FigureCanvasAgg(fig)
        fig.text(
            0.0,
            (CELL_H - BASELINE) / CELL_H,
            chr(code),
            fontsize=SIZE_PT,
            family="DejaVu Sans Mono",
            va="baseline",
            ha="left",
            color="black",
        )
        canvas.draw()
        grey = np.asarray(canvas.buffer_rgba())[..., :3].mean(axis=-1)
        cells[k] = np.round(255 - grey).astype(np.uint8)[:CELL_H, :CELL_W]
    return cells


def main() -> None:
    data = base64.b64encode(zlib.compress(glyphs().tobytes(), 9)).decode("ascii")
    lines = [data[i : i + 100] for i in range(0, len(data), 100)]
    body = "\n".join(f'    "{line}"' for line in lines)
    OUT.write_text(
        '"""A bitmap font for the pictures: printable ASCII (32-126), anti-aliased 8-bit\n'
        f"coverage, {CELL_W} x {CELL_H} pixel cells, baseline {BASELINE} rows down. Rendered\n"
        "from DejaVu Sans Mono by tools/make_font.py (generated: do not edit).\n"
        '"""\n\n'
        "import base64\nimport zlib\n\nimport numpy as np\n\n"
        f"CELL_W, CELL_H, BASELINE = {CELL_W}, {CELL_H}, {BASELINE}\n\n"
        f"_DATA = (\n{body}\n)\n\n\n"
        "def glyph_cells() -> np.ndarray:\n"
        '    """``(95, CELL_H, CELL_W)`` uint8 coverage for characters 32..126."""\n'
        "    raw = zlib.decompress(base64.b64decode(_DATA))\n"
        "    return np.frombuffer(raw, dtype=np.uint8).reshape(95, CELL_H, CELL_W)\n"
    )
    print(f"wrote {OUT} ({len(data)} base64 characters)")


if __name__ == "__main__":
    main()
