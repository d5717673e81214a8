"""PNG files from numpy arrays with the standard library's zlib (no imaging library)."""

from __future__ import annotations

import struct
import zlib

import numpy as np


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(rgb: np.ndarray) -> bytes:
    """``rgb (H, W, 3)`` uint8 -> the bytes of an 8-bit RGB PNG (filter "Up" per row,
    which compresses flat chart backgrounds well)."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or not rgb.shape[0] or not rgb.shape[1]:
        raise ValueError(f"expected an (H, W, 3) image, got shape {rgb.shape}")
    h, w, _ = rgb.shape
    rows = rgb.reshape(h, w * 3)
    up = rows.copy()
    up[1:] = rows[1:] - rows[:-1]  # uint8 wraps, as the PNG filter defines
    raw = np.concatenate([np.full((h, 1), 2, dtype=np.uint8), up], axis=1).tobytes()
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b"")
    )
