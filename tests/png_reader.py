"""A PNG reader for the tests, written from the PNG specification with zlib alone, so
that pictures are checked independently of the project's writer (and of any imaging
library a Blender may lack)."""

from __future__ import annotations

import zlib

import numpy as np


def read_png(data: bytes) -> np.ndarray:
    """An 8-bit RGB PNG decoded with zlib alone (all five row filters), independently of
    the writer: ``(H, W, 3)`` uint8."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    pos, chunks = 8, {}
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        assert zlib.crc32(kind + body) == int.from_bytes(data[pos + 8 + length : pos + 12 + length], "big"), kind
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + length
    w, h = int.from_bytes(chunks[b"IHDR"][:4], "big"), int.from_bytes(chunks[b"IHDR"][4:8], "big")
    assert chunks[b"IHDR"][8:10] == bytes([8, 2]) and b"IEND" in chunks
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(h, 1 + 3 * w)
    out = np.zeros((h, 3 * w), dtype=np.int64)
    for y in range(h):
        f, row = raw[y, 0], raw[y, 1:].astype(np.int64)
        prev = out[y - 1] if y else np.zeros(3 * w, dtype=np.int64)
        if f == 0:
            out[y] = row
        elif f == 2:
            out[y] = (row + prev) % 256
        else:
            cur = np.zeros(3 * w, dtype=np.int64)
            for x in range(3 * w):
                left = cur[x - 3] if x >= 3 else 0
                up, ul = prev[x], (prev[x - 3] if x >= 3 else 0)
                if f == 1:
                    pred = left
                elif f == 3:
                    pred = (left + up) // 2
                else:
                    p = left + up - ul
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                    pred = left if pa <= pb and pa <= pc else up if pb <= pc else ul
                cur[x] = (row[x] + pred) % 256
            out[y] = cur
    return out.reshape(h, w, 3).astype(np.uint8)
