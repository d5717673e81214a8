"""Dynamics of whole hierarchies: :func:`local_to_global` (root to leaf, ``C = P o L``)
and :func:`global_to_local` (``L = P^-1 o C`` per node), batched over every node.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..hierarchy import Hierarchy
from .packed import _compose_packed, _identity_packed, _relative_packed
from .transform import DynamicTransform

__all__ = ["local_to_global", "global_to_local"]


def _check_hierarchy_input(hierarchy, x, what: str) -> DynamicTransform:
    if not isinstance(hierarchy, Hierarchy):
        raise InputError(f"hierarchy: expected a Hierarchy, got {type(hierarchy).__name__}", "hierarchy")
    if not isinstance(x, DynamicTransform):
        raise InputError(f"{what}: expected a DynamicTransform, got {type(x).__name__}", what)
    if x.shape != (len(hierarchy),):
        raise InputError(f"{what}: expected shape ({len(hierarchy)},) (one per node), got {x.shape}", what)
    return x


def local_to_global(hierarchy: Hierarchy, local: DynamicTransform) -> DynamicTransform:
    """Global (world) dynamics of every node from local ones: ``C = P o L`` root to leaf.

    Parameters
    ----------
    hierarchy : Hierarchy
        N nodes, any order, any depth.
    local : DynamicTransform, shape (N,)
        Each node relative to its parent (roots: relative to the world), rates in the
        parent's basis and units.

    Returns
    -------
    DynamicTransform, shape (N,)
        Each node relative to the world, rates in the world basis.

    Uses :meth:`Hierarchy.fold` with the associative composition: batched, no
    recursion, a chain a million deep costs about two million compositions.
    """
    x = _check_hierarchy_input(hierarchy, local, "local")
    return DynamicTransform._trusted(hierarchy.fold(x._packed(), _compose_packed(x.dim)))


def _parent_globals(hierarchy: Hierarchy, x: DynamicTransform, what: str):
    n = x.dim
    ident = _identity_packed(n)
    parent = tuple(hierarchy.parent_values(part, root) for part, root in zip(x._packed(), ident, strict=True))
    zero = (parent[2] == 0.0) & (hierarchy.parents >= 0)
    if zero.any():
        i = int(np.flatnonzero(zero)[0])
        p = int(hierarchy.parents[i])
        raise InputError(
            f"{what}.scale[{p}]: zero scale has no inverse, needed for the local dynamics of its child node {i}"
            + (f" ({hierarchy.names[i]!r})" if hierarchy.names is not None else ""),
            f"{what}.scale",
            (p,),
        )
    return parent


def global_to_local(hierarchy: Hierarchy, global_: DynamicTransform) -> DynamicTransform:
    """Local dynamics of every node from global ones: ``L = P^-1 o C`` per node.

    Parameters
    ----------
    hierarchy : Hierarchy
    global_ : DynamicTransform, shape (N,)
        Each node relative to the world.

    Returns
    -------
    DynamicTransform, shape (N,)
        Each node relative to its parent (roots: ``L = C``), rates in the parent's
        basis and units. Inverse of :func:`local_to_global`.

    One vectorised step (the parent's global is gathered per node); a zero parent
    scale raises :class:`InputError` naming the parent and the child.
    """
    x = _check_hierarchy_input(hierarchy, global_, "global_")
    parent = _parent_globals(hierarchy, x, "global_")
    return DynamicTransform._trusted(_relative_packed(x.dim, parent, x._packed(), 1.0 / parent[2]))
