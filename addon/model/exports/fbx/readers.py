"""Constraints that compute something else in the FBX export-ready copy, Blender-free
(from :class:`.facts.ConstraintFacts` rows).

A node given a helper is rebuilt in the copy from the helper and keys: the same world
matrix, another local one (and, for a bone, another chain). A constraint that reads
such a node in a local space, or an IK chain that runs through it, computes something
else there than Blender computes in the scene: its owner is named (the read-back shows
by how much). Constraints that read their targets in world or pose space (Armature,
Copy Transforms in world space, a custom space) see the same matrices: not named. A
node that gets a helper has its own constraints muted (its keys hold Blender's result),
so the IK chains it poses are part of its helper's fate (:func:`ik_chains`).
"""

from __future__ import annotations

#: Constraint target spaces that read a node's own transform (not its world matrix,
#: which the helper and the keys reproduce).
LOCAL_SPACES = ("LOCAL", "LOCAL_WITH_PARENT", "LOCAL_OWNER_ORIENT")


def bone_readers(constraints: list, armature: str, split: set[str]) -> list[tuple[str, str, str]]:
    """``(reader, bone, why)`` for the bones of ``armature`` that keep their constraints
    in the copy (they are not in ``split``) but whose constraints read the bone ``bone``
    of ``split`` in a local space, or run an IK chain through it. One entry per bone
    (its first such constraint)."""
    out = []
    done: set[str] = set()
    for c in constraints:
        if c.armature != armature or c.bone in split or c.bone in done or c.muted or not c.enabled:
            continue
        sub = c.subtarget if c.target == armature else ""
        if sub in split and c.target_space in LOCAL_SPACES:
            out.append((c.bone, sub, f"constraint '{c.name}' reads '{sub}' in local space, which gets a helper bone"))
            done.add(c.bone)
            continue
        hit = next((b for b in c.chain if b in split), None) if c.type == "IK" else None
        if hit:
            out.append((c.bone, hit, f"IK constraint '{c.name}' spans '{hit}', which gets a helper bone"))
            done.add(c.bone)
    return out


def object_readers(constraints: list, split: set[str]) -> list[tuple[str, str, str]]:
    """``(label, target, why)`` for the objects and bones whose constraints read an
    object ``target`` of ``split`` (by name, no subtarget) in a local space: in the copy
    that object hangs under a helper with another local matrix (the same world matrix,
    which world-space readers see). One entry per owner (its first such constraint)."""
    out = []
    done: set[str] = set()
    for c in constraints:
        if c.owner in done or c.muted or not c.target or c.target not in split or c.subtarget:
            continue
        if c.target_space in LOCAL_SPACES:
            why = f"constraint '{c.name}' reads '{c.target}' in local space, which gets a helper"
            out.append((c.owner, c.target, why))
            done.add(c.owner)
    return out


def ik_chains(constraints: list, armature: str, bones) -> dict[str, list[str]]:
    """Bone -> the bones its IK and Spline IK constraints pose (the chain above it), for
    the bones ``bones`` of ``armature``."""
    wanted = set(bones)
    out: dict[str, list[str]] = {}
    for c in constraints:
        if c.armature == armature and c.bone in wanted and c.type in ("IK", "SPLINE_IK"):
            if not c.muted and c.enabled:
                out.setdefault(c.bone, []).extend(c.chain)
    return out
