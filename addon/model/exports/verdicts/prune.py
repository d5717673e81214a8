"""Unused parts of a glTF file removed, as validators expect (the Khronos validator
reports every unused sampler, accessor and buffer view), Blender-free.

The exact export replaces the channels of the nodes it splits (:func:`.gltf_animation.
drop_channels`): their samplers, and the accessors and buffer views only those held,
are left behind (on a generated Rigify rig 483 samplers, 7% of the file).
:func:`remove_unused` removes every sampler no channel uses, then every accessor
nothing refers to and every buffer view of buffer 0 nothing refers to, and packs buffer
0 again (the views kept, in their order, each at a 4-byte boundary: every component
type's size divides 4, so accessors stay aligned).

Accessors are referred to by index from known places (primitives' attributes, indices
and morph targets, skins' inverse bind matrices, samplers, ``EXT_mesh_gpu_instancing``
attributes); a file using an extension not known here to leave accessors alone keeps
every accessor (its samplers are still pruned). Buffer views are found by every
``bufferView`` key anywhere in the document (accessors, sparse accessors, images,
extensions such as Draco).
"""

from __future__ import annotations

from ..gltf_file import Gltf

#: Extensions that refer to no accessor outside the places :func:`_accessor_slots` visits.
KNOWN_EXTENSIONS = frozenset(
    {
        "KHR_lights_punctual",
        "KHR_texture_transform",
        "KHR_mesh_quantization",
        "KHR_texture_basisu",
        "EXT_texture_webp",
        "KHR_materials_variants",
        "EXT_mesh_gpu_instancing",
        "KHR_draco_mesh_compression",
        "KHR_animation_pointer",
        "KHR_xmp_json_ld",
    }
)
_ALIGN = 4


def remove_unused(gltf: Gltf) -> dict[str, int]:
    """Remove unused samplers, accessors and buffer views (see the module docstring),
    in place. Returns how many of each were removed."""
    doc = gltf.doc
    removed = {"samplers": _prune_samplers(doc), "accessors": 0, "bufferViews": 0}
    used = set(doc.get("extensionsUsed", []))
    if all(name in KNOWN_EXTENSIONS or name.startswith("KHR_materials_") for name in used):
        removed["accessors"] = _prune_accessors(doc)
    removed["bufferViews"] = _prune_views(gltf)
    return removed


def _prune_samplers(doc: dict) -> int:
    count = 0
    for anim in doc.get("animations", []):
        samplers = anim.get("samplers", [])
        kept = sorted({ch["sampler"] for ch in anim.get("channels", [])})
        if len(kept) == len(samplers):
            continue
        new = {old: k for k, old in enumerate(kept)}
        anim["samplers"] = [samplers[k] for k in kept]
        for ch in anim.get("channels", []):
            ch["sampler"] = new[ch["sampler"]]
        count += len(samplers) - len(kept)
    return count


def _accessor_slots(doc: dict):
    """Every place that holds an accessor index: ``(container, key)`` pairs."""
    for mesh in doc.get("meshes", []):
        for prim in mesh.get("primitives", []):
            attributes = prim.get("attributes", {})
            yield from ((attributes, key) for key in attributes)
            if "indices" in prim:
                yield prim, "indices"
            for target in prim.get("targets", []):
                yield from ((target, key) for key in target)
    for skin in doc.get("skins", []):
        if "inverseBindMatrices" in skin:
            yield skin, "inverseBindMatrices"
    for anim in doc.get("animations", []):
        for sampler in anim.get("samplers", []):
            yield sampler, "input"
            yield sampler, "output"
    for node in doc.get("nodes", []):
        instancing = node.get("extensions", {}).get("EXT_mesh_gpu_instancing", {})
        attributes = instancing.get("attributes", {})
        yield from ((attributes, key) for key in attributes)


def _prune_accessors(doc: dict) -> int:
    accessors = doc.get("accessors", [])
    slots = list(_accessor_slots(doc))
    kept = sorted({container[key] for container, key in slots})
    if len(kept) == len(accessors):
        return 0
    new = {old: k for k, old in enumerate(kept)}
    doc["accessors"] = [accessors[k] for k in kept]
    for container, key in slots:
        container[key] = new[container[key]]
    return len(accessors) - len(kept)


def _view_slots(node, out: list) -> None:
    """Every dict of the document (below ``node``) with a ``bufferView`` key, into ``out``."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("bufferView"), int):
                out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _prune_views(gltf: Gltf) -> int:
    doc = gltf.doc
    views = doc.get("bufferViews", [])
    slots: list = []
    _view_slots({k: v for k, v in doc.items() if k != "bufferViews"}, slots)
    used = {slot["bufferView"] for slot in slots}
    # views of other buffers are kept as they are; those of buffer 0 only when used
    kept = [k for k, view in enumerate(views) if k in used or view.get("buffer", 0) != 0]
    if len(kept) == len(views) or gltf.binary is None:
        return 0
    new = {old: k for k, old in enumerate(kept)}
    packed = bytearray()
    for k in kept:
        view = views[k]
        if view.get("buffer", 0) != 0:
            continue
        start, length = view.get("byteOffset", 0), view["byteLength"]
        packed.extend(b"\0" * (-len(packed) % _ALIGN))
        chunk = bytes(gltf.binary[start : start + length])
        view["byteOffset"] = len(packed)
        packed.extend(chunk)
    doc["bufferViews"] = [views[k] for k in kept]
    for slot in slots:
        slot["bufferView"] = new[slot["bufferView"]]
    gltf.binary = packed
    doc["buffers"][0]["byteLength"] = len(packed)
    return len(views) - len(kept)
