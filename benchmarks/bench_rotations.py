"""Rotation speed: ``core.quat_to_matrix`` side by side with scipy in one run.

    python benchmarks/bench_rotations.py [--sizes 1000 10000 200000 1000000] [--repeat 15]

Prints a Markdown table (milliseconds, best of --repeat), one row per batch size N of
random unit quaternions:

- quat_to_matrix: ``core.quat_to_matrix(q)``; with scale: ``core.quat_to_matrix(q, s)``;
  into out: ``core.quat_to_matrix(q, out=buffer)``, no output to allocate (fresh outputs
  of a few MB cost page faults, and how many depends on the allocator's history, so the
  first two columns vary more between runs than this one);
- per-entry formula: the textbook formula with one numpy temporary per product and per
  entry (what ``quat_to_matrix`` did before it was blocked), for before / after;
- scipy: ``Rotation.from_quat(q_xyzw).as_matrix()`` (compiled; it also normalises);
  the quaternions are reordered to scipy's (x, y, z, w) outside the timing;
- ours / scipy, formula / scipy: the ratios.

Without scipy the scipy columns read "n/a" and a note says so (``pip install scipy``, or
the project's ``test`` extra).
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_common import best_ms, markdown_table
from hierarchy_inspector import core

try:
    from scipy.spatial.transform import Rotation
except ImportError:  # the column is skipped, with a note
    Rotation = None


def per_entry_formula(q: np.ndarray) -> np.ndarray:
    """The previous ``quat_to_matrix``: the same entries, a temporary for every product."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    out = np.empty(q.shape[:-1] + (3, 3))
    cols = (
        (1.0 - 2.0 * (yy + zz), 2.0 * (xy + wz), 2.0 * (xz - wy)),
        (2.0 * (xy - wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz + wx)),
        (2.0 * (xz + wy), 2.0 * (yz - wx), 1.0 - 2.0 * (xx + yy)),
    )
    for j, col in enumerate(cols):
        for i, value in enumerate(col):
            out[..., i, j] = value
    return out


def measure(n: int, rng, repeat: int) -> list[str]:
    q = core.quat_normalize(rng.normal(size=(n, 4)))
    s = rng.uniform(0.5, 2.0, size=(n, 3))
    ours = best_ms(lambda: core.quat_to_matrix(q), repeat)
    scaled = best_ms(lambda: core.quat_to_matrix(q, s), repeat)
    buffer = np.empty((n, 3, 3))
    into = best_ms(lambda: core.quat_to_matrix(q, out=buffer), repeat)
    formula = best_ms(lambda: per_entry_formula(q), repeat)
    row = [f"{n:,}", f"{ours:.2f}", f"{scaled:.2f}", f"{into:.2f}", f"{formula:.2f}"]
    if Rotation is None:
        return row + ["n/a", "n/a", "n/a"]
    xyzw = np.ascontiguousarray(np.roll(q, -1, axis=-1))
    assert np.allclose(Rotation.from_quat(xyzw).as_matrix(), core.quat_to_matrix(q), atol=1e-12)
    scipy_ms = best_ms(lambda: Rotation.from_quat(xyzw).as_matrix(), repeat)
    return row + [f"{scipy_ms:.2f}", f"{ours / scipy_ms:.2f}", f"{formula / scipy_ms:.2f}"]


HEADERS = [
    "N",
    "quat_to_matrix",
    "with scale",
    "into out",
    "per-entry formula",
    "scipy",
    "ours / scipy",
    "formula / scipy",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 200_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(11)
    print(f"quat_to_matrix, times in ms (best of {args.repeat}).")
    if Rotation is None:
        print("Note: scipy is not installed, so its columns are skipped (pip install scipy).")
    print(markdown_table(HEADERS, [measure(n, rng, args.repeat) for n in args.sizes]))


if __name__ == "__main__":
    main()
