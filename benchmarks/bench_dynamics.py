"""Dynamics speed: local_to_global / global_to_local of dynamic transforms on big forests
and deep chains.

    python benchmarks/bench_dynamics.py [--sizes 10000 100000 1000000] [--repeat 3] [--dim 3]

Prints a Markdown table (milliseconds, best of --repeat). Columns:

- setup: Hierarchy() validation + fold schedule (built once, shared by every fold);
- local_to_global: the fold of the dynamic composition (poses and all four rates);
- global_to_local: one vectorised step per node (gather the parent, apply P^-1 o C);
- static fold: ``Hierarchy.world_matrices`` of the same poses as (n+1)x(n+1) matrices,
  the static hierarchy's cost, for scale;
- compose x N: one batched dynamic composition of N pairs (the floor of any fold);
- round trip: max |local - global_to_local(local_to_global(local))| over all parts,
  relative to the largest value.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from bench_common import best_ms, markdown_table, random_forest
from hierarchy_inspector import core
from hierarchy_inspector.core.dynamics import _compose_packed


def random_rotations(rng, n: int, dim: int) -> np.ndarray:
    if dim == 3:
        return core.quat_to_matrix(core.quat_normalize(rng.normal(size=(n, 4))))
    if dim == 2:
        return core.rotation_2d(rng.uniform(-np.pi, np.pi, size=n))
    q, r = np.linalg.qr(rng.normal(size=(n, dim, dim)))
    q = q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    q[..., :, 0] *= np.linalg.det(q)[..., None]
    return q


def random_local(rng, n: int, dim: int, chain: bool) -> core.DynamicTransform:
    # Small steps on chains so that a million composed levels stay finite and meaningful.
    step = 1e-3 if chain else 1.0
    k = 3 if dim == 3 else 1 if dim == 2 else None

    def ang():
        if k is None:
            a = rng.normal(scale=step, size=(n, dim, dim))
            return a - np.swapaxes(a, -1, -2)
        return rng.normal(scale=step, size=(n, k))

    return core.DynamicTransform(
        rng.normal(scale=step, size=(n, dim)),
        random_rotations(rng, n, dim),
        np.exp(rng.normal(scale=step * 1e-2, size=n)),
        rng.normal(scale=step, size=(n, dim)),
        rng.normal(scale=step, size=(n, dim)),
        ang(),
        ang(),
    )


def max_rel_diff(x: core.DynamicTransform, y: core.DynamicTransform) -> float:
    worst = 0.0
    for a, b in zip(x._packed(), y._packed(), strict=True):
        worst = max(worst, float(np.abs(a - b).max() / max(1.0, np.abs(b).max())))
    return worst


def measure(kind: str, n: int, dim: int, rng, repeat: int) -> list[str]:
    parents = random_forest(rng, n) if kind == "forest" else np.arange(-1, n - 1)
    local = random_local(rng, n, dim, kind == "chain")
    start = time.perf_counter()
    h = core.Hierarchy(parents)
    _ = h.schedule
    setup = (time.perf_counter() - start) * 1e3
    glob = core.local_to_global(h, local)
    l2g = best_ms(lambda: core.local_to_global(h, local), repeat)
    g2l = best_ms(lambda: core.global_to_local(h, glob), repeat)
    mats = local.transform.to_matrix()
    static = best_ms(lambda: h.world_matrices(mats), repeat)
    packed = local._packed()
    compose = _compose_packed(dim)
    floor = best_ms(lambda: compose(packed, packed), repeat)
    err = max_rel_diff(core.global_to_local(h, glob), local)
    return [
        f"{kind} (depth {h.max_depth + 1:,})",
        f"{n:,}",
        f"{setup:.0f}",
        f"{l2g:.0f}",
        f"{g2l:.0f}",
        f"{static:.0f}",
        f"{floor:.0f}",
        f"{err:.1e}",
    ]


HEADERS = ["hierarchy", "N", "setup", "local_to_global", "global_to_local", "static fold", "compose x N", "round trip"]


def run(sizes, repeat: int, dim: int) -> str:
    rng = np.random.default_rng(7)
    rows = []
    for kind in ("forest", "chain"):
        for n in sizes:
            rows.append(measure(kind, n, dim, rng, repeat))
            print(f"  done {kind} {n:,}", file=sys.stderr)
    return markdown_table(HEADERS, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dim", type=int, default=3)
    args = parser.parse_args()
    print(f"{args.dim}D dynamic transforms; times in ms (best of {args.repeat}).")
    print(run(args.sizes, args.repeat, args.dim))


if __name__ == "__main__":
    main()
