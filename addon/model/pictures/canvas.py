"""A small raster canvas in numpy: anti-aliased lines (dashed or solid, any width),
filled rectangles and text, drawn at ``supersample`` times the size and averaged down.

Coordinates are pixels of the final image, ``x`` to the right and ``y`` down, floats
allowed. Colours are ``"#rrggbb"`` strings or RGB triples in 0..1. Lines are drawn by
stamping a disc at half-pixel steps along every segment, all segments of one call at
once (vectorised: no Python loop per pixel or per segment).
"""

from __future__ import annotations

import numpy as np

from .font import BASELINE, CELL_H, CELL_W, glyph_cells
from .png import encode_png

_GLYPHS: list = []


def rgb(colour) -> np.ndarray:
    """``"#rrggbb"`` or a triple in 0..1 -> ``(3,)`` float."""
    if isinstance(colour, str):
        c = colour.lstrip("#")
        return np.array([int(c[i : i + 2], 16) for i in (0, 2, 4)], dtype=np.float64) / 255.0
    return np.asarray(colour, dtype=np.float64)


def _glyphs() -> np.ndarray:
    if not _GLYPHS:
        _GLYPHS.append(glyph_cells().astype(np.float32) / 255.0)
    return _GLYPHS[0]


class Canvas:
    """``width x height`` pixels, white. Draw, then :meth:`png` or :meth:`pixels`."""

    def __init__(self, width: int, height: int, supersample: int = 2, background="#ffffff") -> None:
        self.width, self.height, self.s = int(width), int(height), int(supersample)
        self.image = np.empty((self.height * self.s, self.width * self.s, 3), dtype=np.float32)
        self.image[:] = rgb(background)

    # -- primitives ------------------------------------------------------------------------

    def lines(self, starts, ends, colour, width: float = 1.0, dash: tuple[float, float] | None = None) -> None:
        """Segments ``starts[k] -> ends[k]`` (``(K, 2)`` pixels); ``dash=(on, off)`` in pixels."""
        p = np.asarray(starts, dtype=np.float64).reshape(-1, 2) * self.s
        q = np.asarray(ends, dtype=np.float64).reshape(-1, 2) * self.s
        if not len(p):
            return
        length = np.linalg.norm(q - p, axis=1)
        steps = np.maximum(1, np.ceil(length / 0.5).astype(np.int64))
        seg = np.repeat(np.arange(len(p)), steps + 1)
        first = np.concatenate([[0], np.cumsum(steps + 1)[:-1]])
        k = np.arange(len(seg)) - np.repeat(first, steps + 1)
        t = k / steps[seg]
        points = p[seg] + (q - p)[seg] * t[:, None]
        if dash is not None:
            on, off = dash[0] * self.s, dash[1] * self.s
            points = points[np.mod(t * length[seg], on + off) < on]
        radius = max(0.5, width * self.s / 2)
        r = int(np.ceil(radius))
        oy, ox = np.mgrid[-r : r + 1, -r : r + 1]
        disc = (ox**2 + oy**2) <= radius**2 + 0.25
        offsets = np.stack([ox[disc], oy[disc]], axis=1)
        pix = (np.round(points)[:, None, :] + offsets[None]).reshape(-1, 2).astype(np.int64)
        h, w = self.image.shape[:2]
        keep = (pix[:, 0] >= 0) & (pix[:, 0] < w) & (pix[:, 1] >= 0) & (pix[:, 1] < h)
        pix = pix[keep]
        self.image[pix[:, 1], pix[:, 0]] = rgb(colour)  # float64 colour stored as float32

    def polyline(self, points, colour, width: float = 1.0, dash=None) -> None:
        pts = np.asarray(points, dtype=np.float64)
        self.lines(pts[:-1], pts[1:], colour, width, dash)

    def rect(self, x0: float, y0: float, x1: float, y1: float, colour) -> None:
        """Fill the rectangle between the two corners (any order)."""
        s = self.s
        xa, xb = sorted((int(round(x0 * s)), int(round(x1 * s))))
        ya, yb = sorted((int(round(y0 * s)), int(round(y1 * s))))
        self.image[max(0, ya) : max(0, yb), max(0, xa) : max(0, xb)] = rgb(colour)

    def text(self, x: float, y: float, text: str, colour="#202020", scale: int = 1, anchor: str = "left") -> float:
        """Draw ``text`` with its baseline at ``y``; ``anchor`` left, centre or right of
        ``x``. Characters outside printable ASCII are drawn as ``?``. Returns the width."""
        codes = np.array([ord(c) if 32 <= ord(c) < 127 else ord("?") for c in text], dtype=np.int64) - 32
        if not len(codes):
            return 0.0
        cells = _glyphs()[codes]  # (n, CELL_H, CELL_W)
        strip = cells.transpose(1, 0, 2).reshape(CELL_H, -1)
        k = self.s * scale
        alpha = np.repeat(np.repeat(strip, k, axis=0), k, axis=1)
        width = strip.shape[1] * scale
        left = x - {"left": 0.0, "centre": width / 2, "right": width}[anchor]
        top = y - BASELINE * scale
        ya, xa = int(round(top * self.s)), int(round(left * self.s))
        h, w = self.image.shape[:2]
        y0, x0 = max(0, ya), max(0, xa)
        y1, x1 = min(h, ya + alpha.shape[0]), min(w, xa + alpha.shape[1])
        if y1 <= y0 or x1 <= x0:
            return float(width)
        a = alpha[y0 - ya : y1 - ya, x0 - xa : x1 - xa, None]
        region = self.image[y0:y1, x0:x1]
        region += (rgb(colour).astype(np.float32) - region) * a
        return float(width)

    @staticmethod
    def text_width(text: str, scale: int = 1) -> float:
        return float(len(text) * CELL_W * scale)

    # -- output ----------------------------------------------------------------------------

    def pixels(self) -> np.ndarray:
        """``(height, width, 3)`` uint8: the supersampled image averaged down."""
        s = self.s
        small = np.zeros((self.height, self.width, 3), dtype=np.float32)
        for dy in range(s):  # s * s strided adds: much faster than a mean over two inner axes
            for dx in range(s):
                small += self.image[dy::s, dx::s]
        small /= s * s
        return np.clip(np.round(small * 255), 0, 255).astype(np.uint8)

    def png(self) -> bytes:
        return encode_png(self.pixels())


LINE_HEIGHT = CELL_H + 3  #: pixels between text lines at scale 1
