"""Hierarchy speed: both models and the seed's getters on big forests and deep chains.

    python benchmarks/bench_hierarchy.py [--sizes 10000 100000 1000000] [--repeat 3]

Prints a Markdown table (milliseconds, best of --repeat). Columns:

- world_matrices, accumulate, lossy_scale, shear_angles: each on its own;
- sum of four: the four separate calls; four, shared: the same four results computed
  together (lossy scale reusing the world matrices and the accumulated rotation);
- analyze: the shared single pass the add-on uses (exported TRS,
  both models, lossy scale, shear, deviations);
- floor: one batched 4x4 matmul over N (``np.matmul``), the least any of this can cost;
- x floor: four, shared / floor;
- recursive: the seed's per-node recursive ``GetWorldTransform`` for every node, in
  plain Python, where it finishes (it hits Python's recursion limit on deep chains);
- speedup: recursive / accumulate.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from bench_common import best_ms, markdown_table, random_forest
from hierarchy_inspector import core


def random_local(rng, n: int) -> core.TRS:
    # Scales near 1 so products down a million-deep chain stay finite.
    return core.TRS(rng.normal(size=(n, 3)), rng.normal(size=(n, 4)), np.exp(rng.normal(scale=0.01, size=(n, 3))))


def seed_recursive_all(parents, local: core.TRS, budget_s: float) -> float | str:
    """The seed's recursive GetWorldTransform for every node (no memo); ms or a reason."""
    t = local.translation.tolist()
    q = local.rotation.tolist()
    s = local.scale.tolist()
    par = parents.tolist()

    def qmul(a, b):
        aw, ax, ay, az = a
        bw, bx, by, bz = b
        return (
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        )

    def qrot(r, v):
        w, x, y, z = r
        tx, ty, tz = 2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])
        return (
            v[0] + w * tx + y * tz - z * ty,
            v[1] + w * ty + z * tx - x * tz,
            v[2] + w * tz + x * ty - y * tx,
        )

    def world(i):
        if par[i] < 0:
            return t[i], q[i], s[i]
        pt, pq, ps = world(par[i])
        scaled = (ps[0] * t[i][0], ps[1] * t[i][1], ps[2] * t[i][2])
        r = qrot(pq, scaled)
        scale = (ps[0] * s[i][0], ps[1] * s[i][1], ps[2] * s[i][2])
        return (pt[0] + r[0], pt[1] + r[1], pt[2] + r[2]), qmul(pq, q[i]), scale

    start = time.perf_counter()
    try:
        for i in range(len(par)):
            world(i)
            if time.perf_counter() - start > budget_s:
                return f"> {budget_s:.0f} s"
    except RecursionError:
        return "RecursionError"
    return (time.perf_counter() - start) * 1e3


def measure(kind: str, n: int, rng, repeat: int, baseline_budget_s: float) -> list[str]:
    """One table row: every column for one hierarchy."""
    parents = random_forest(rng, n) if kind == "forest" else np.arange(-1, n - 1)
    local = random_local(rng, n)
    mats = local.to_matrix()
    build = time.perf_counter()
    h = core.Hierarchy(parents)
    _ = h.schedule
    build_ms = (time.perf_counter() - build) * 1e3
    world = h.world_matrices(mats)
    cols = {
        "world_matrices": best_ms(lambda: h.world_matrices(mats), repeat),
        "accumulate": best_ms(lambda: h.accumulate(local), repeat),
        "lossy_scale": best_ms(lambda: h.lossy_scale(local), repeat),
        "shear_angles": best_ms(lambda: core.shear_angles(world), repeat),
    }

    def together():
        w = h.world_matrices(mats)
        acc = h.accumulate(local)
        h.lossy_scale(local, world_matrices=w, global_rotation=acc.rotation)
        core.shear_angles(w)

    shared = best_ms(together, repeat)
    analyze = best_ms(lambda: core.analyze(h, mats, world), 1)
    floor = best_ms(lambda: np.matmul(mats, mats), max(repeat, 7))
    baseline = seed_recursive_all(parents, local, baseline_budget_s) if n <= 10_000 else "not run"
    speedup = f"{baseline / cols['accumulate']:.0f}x" if isinstance(baseline, float) else ""
    return (
        [f"{kind} (depth {h.max_depth + 1})", f"{n:,}", f"{build_ms:.0f}"]
        + [f"{v:.1f}" for v in cols.values()]
        + [f"{sum(cols.values()):.0f}", f"{shared:.0f}", f"{analyze:.0f}", f"{floor:.1f}", f"{shared / floor:.1f}"]
        + [f"{baseline:.0f}" if isinstance(baseline, float) else baseline, speedup]
    )


HEADERS = [
    "hierarchy",
    "N",
    "setup",
    "world_matrices",
    "accumulate",
    "lossy_scale",
    "shear_angles",
    "sum of four",
    "four, shared",
    "analyze",
    "floor",
    "x floor",
    "recursive",
    "speedup",
]


def run(sizes, repeat: int, baseline_budget_s: float) -> str:
    rng = np.random.default_rng(7)
    rows = []
    for kind in ("forest", "chain"):
        for n in sizes:
            rows.append(measure(kind, n, rng, repeat, baseline_budget_s))
            print(f"  done {kind} {n:,}", file=sys.stderr)
    return markdown_table(HEADERS, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline-budget", type=float, default=60.0, help="seconds for the recursive baseline")
    args = parser.parse_args()
    print(f"Times in ms (best of {args.repeat}); setup = Hierarchy() validation + fold schedule.")
    print(run(args.sizes, args.repeat, args.baseline_budget))


if __name__ == "__main__":
    main()
