"""Every command, exit code and error path of the command line, with the outputs read
back independently (pygltflib for glTF, the article's own CombineTransforms for
accumulated TRS), every report validated against docs/report.schema.json."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
import reference_models as ref
from cli_runner import run_cli

pygltflib = pytest.importorskip("pygltflib")
jsonschema = pytest.importorskip("jsonschema")
REPORT_SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text())

Y_UP = np.array([[1.0, 0, 0, 0], [0, 0, 1.0, 0], [0, -1.0, 0, 0], [0, 0, 0, 1.0]])


def _report(path) -> dict:
    """A report written by the command line, validated against the shipped JSON Schema."""
    report = json.loads(path.read_text())
    jsonschema.validate(report, REPORT_SCHEMA)
    return report


def _by_name(report: dict) -> dict:
    return {(e["armature"] or "", e["name"]): e for e in report["nodes"]}


# -- demo -----------------------------------------------------------------------------------


def test_demo_writes_every_file_and_prints_the_comparisons(demo_dir):
    out = (demo_dir / "stdout.txt").read_text()
    assert "Piston (seed article), root scale (2.0, 1.0, 1.0)" in out
    assert "(-36.87, 0.00, 0.00)" in out
    assert "glTF, helpers inserted" in out
    for name in (
        "demo.blend",
        "report.json",
        "report.csv",
        "demo_plain.glb",
        "demo_fixed.glb",
        "accumulated.json",
        "accumulated.csv",
        "demo_baked.blend",
        "worst_nodes.png",
        "deviation_chart.png",
    ):
        assert (demo_dir / name).stat().st_size > 0, name
    assert not list(demo_dir.glob(".*partial*"))  # no half-written leftovers


@pytest.mark.parametrize("name", ["worst_nodes.png", "deviation_chart.png"])
def test_demo_pictures_are_real_images(demo_dir, name):
    from matplotlib.image import imread

    img = imread(demo_dir / name)
    assert img.ndim == 3 and img.shape[0] > 300 and img.shape[1] > 500
    rgb = img[..., :3]
    assert rgb.std() > 0.05  # not blank
    colours = {tuple(c) for c in np.round(rgb.reshape(-1, 3)[::7] * 20)}
    assert len(colours) > 20
    # The accumulated model's blue and the exported model's orange are both drawn.
    assert (np.abs(rgb - np.array([0x1C, 0x7E, 0xD6]) / 255).max(axis=-1) < 0.08).sum() > 50
    assert (np.abs(rgb - np.array([0xF0, 0x8C, 0x00]) / 255).max(axis=-1) < 0.08).sum() > 50


# -- report ---------------------------------------------------------------------------------


def test_report_json_follows_schema_and_numbers(demo_dir, tmp_path):
    result = run_cli("report", demo_dir / "demo.blend", "--json", tmp_path / "r.json", "--csv", tmp_path / "r.csv")
    assert result.returncode == 0, result.stderr
    report = _report(tmp_path / "r.json")
    assert report["schema"] == "hierarchy_inspector.report/1"
    assert report["blender_version"] and report["fps"] > 0 and isinstance(report["frame"], int)
    for key in ("nodes", "sheared", "max_shear_deg", "max_deviation"):
        assert key in report["summary"]
    assert math.isclose(report["summary"]["max_shear_deg"], 36.8698976, rel_tol=1e-5)
    assert math.isclose(report["summary"]["max_deviation"], 2.2360680, rel_tol=1e-5)
    nodes = _by_name(report)
    child = nodes[("", "Child")]
    assert child["kind"] == "object" and child["parent"] == "Parent" and child["depth"] == 1
    assert set(child) >= {
        "local",
        "world_blender",
        "world_matrix_model",
        "accumulated",
        "global_rotation",
        "lossy_scale",
        "shear_deg",
        "deviation",
    }
    assert np.allclose(child["shear_deg"], [-36.8698976, 0, 0], atol=1e-4)
    assert np.allclose(child["lossy_scale"], [1.5, 1.5, 1.0], atol=1e-6)
    assert math.isclose(child["deviation"]["accumulated"]["max_corner"], 1.0, rel_tol=1e-5)
    assert np.array(child["world_blender"]).shape == (4, 4)
    bone = nodes[("Inherit scale rig", "FULL.tip")]
    assert bone["kind"] == "bone" and bone["parent"] == "FULL.mid" and bone["depth"] == 3
    root_bone = nodes[("Inherit scale rig", "FULL.root")]
    assert root_bone["parent"] == "Inherit scale rig"
    depths = [e["depth"] for e in report["nodes"]]
    assert depths == sorted(depths)  # roots first
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert len(rows) == report["summary"]["nodes"] == 29
    assert {r["name"] for r in rows if r["flagged"] == "1"} >= {"Child", "Kept child", "B (slider)"}
    assert "B (slider)" in result.stdout and "29 nodes, 16 flagged" in result.stdout


def test_fail_on_shear_sets_exit_code(demo_dir):
    over = run_cli("report", demo_dir / "demo.blend", "--fail-on-shear", "10")
    assert over.returncode == 1 and "exceeds --fail-on-shear 10" in over.stderr
    under = run_cli("report", demo_dir / "demo.blend", "--fail-on-shear", "40")
    assert under.returncode == 0, under.stderr


def test_report_object_subset_and_frame(demo_dir, tmp_path):
    result = run_cli(
        "report", demo_dir / "demo.blend", "--object", "Parent", "--frame", "3", "--json", tmp_path / "o.json"
    )
    assert result.returncode == 0, result.stderr
    report = _report(tmp_path / "o.json")
    assert [e["name"] for e in report["nodes"]] == ["Parent", "Child"]
    assert report["frame"] == 3


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda d, t: ["report", t / "missing.blend"], "no such file"),
        (lambda d, t: ["report", d / "report.csv"], "not a .blend file"),
        (lambda d, t: ["report", d / "demo.blend", "--object", "Nope"], "unknown object 'Nope'"),
        (lambda d, t: ["report", d / "demo.blend", "--scene", "Nope"], "unknown scene 'Nope'"),
        (lambda d, t: ["report", d / "demo.blend", "--json", t / "no" / "such" / "dir" / "r.json"], "does not exist"),
        (lambda d, t: ["report", d / "demo.blend", "--csv", t], "is a folder, not a file"),
        (lambda d, t: ["export", d / "demo.blend", "--target", "gltf", "--out", t / "x.gltf"], "must be a .glb"),
        (lambda d, t: ["fix", d / "demo.blend", "--method", "bake", "--out", t / "x.txt"], "must be a .blend"),
        (
            lambda d, t: ["fix", d / "demo.blend", "--method", "bake", "--out", d / "demo.blend"],
            "is the input file",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_output(demo_dir, tmp_path, make_args, message):
    result = run_cli(*make_args(demo_dir, tmp_path))
    assert result.returncode == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("hierarchy_inspector:")]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    assert not list(tmp_path.rglob("*.json")) and not list(tmp_path.rglob("*.gltf"))


def test_unwritable_output_leaves_nothing(demo_dir, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = run_cli("report", demo_dir / "demo.blend", "--json", locked / "r.json")
        if result.returncode == 0:  # running as root: permissions do not bind
            pytest.skip("the test user can write anywhere (root)")
        assert result.returncode == 2 and "not writable" in result.stderr
        assert not list(locked.iterdir())
    finally:
        locked.chmod(0o700)


# -- export ---------------------------------------------------------------------------------


def _gltf_worlds(path) -> dict[str, np.ndarray]:
    """Compose node matrices from the scene roots down, as a viewer does (pygltflib)."""
    g = pygltflib.GLTF2().load(str(path))

    def local(n):
        if n.matrix:
            return np.array(n.matrix).reshape(4, 4).T
        t = n.translation or [0, 0, 0]
        x, y, z, w = n.rotation or [0, 0, 0, 1]
        s = n.scale or [1, 1, 1]
        m = np.eye(4)
        m[:3, :3] = ref.qmat(np.array([w, x, y, z])) @ np.diag(s)
        m[:3, 3] = t
        return m

    out = {}
    stack = [(i, np.eye(4)) for i in g.scenes[g.scene or 0].nodes]
    while stack:
        i, parent = stack.pop()
        world = parent @ local(g.nodes[i])
        out.setdefault(g.nodes[i].name, world)
        stack += [(c, world) for c in (g.nodes[i].children or [])]
    return out


def _gltf_error(glb, report) -> float:
    """Largest difference between the file's composed worlds and Blender's, relative to
    the largest world-matrix entry; objects are converted by C W C^-1, bones by C W."""
    worlds = _gltf_worlds(glb)
    worst, scale = 0.0, 1.0
    for e in report["nodes"]:
        w = np.array(e["world_blender"])
        scale = max(scale, np.abs(w).max())
        expected = Y_UP @ w if e["kind"] == "bone" else Y_UP @ w @ np.linalg.inv(Y_UP)
        assert e["name"] in worlds, e["name"]
        worst = max(worst, np.abs(worlds[e["name"]] - expected).max())
    return worst / scale


def test_gltf_export_with_helpers_is_exact_and_plain_is_not(demo_dir, tmp_path):
    report = json.loads((demo_dir / "report.json").read_text())
    plain = _gltf_error(demo_dir / "demo_plain.glb", report)
    assert plain > 1e-2  # Blender's exporter alone: the sheared locals are lost
    result = run_cli("export", demo_dir / "demo.blend", "--target", "gltf", "--out", tmp_path / "fixed.glb")
    assert result.returncode == 0, result.stderr
    fixed = _gltf_error(tmp_path / "fixed.glb", report)
    assert fixed < 1e-5
    assert "6 helper node(s)" in result.stdout
    names = {n.name for n in pygltflib.GLTF2().load(str(tmp_path / "fixed.glb")).nodes}
    assert "Kept child (shear helper)" in names and "ALIGNED.mid (shear helper)" in names


def test_accumulated_export_reproduces_positions_and_rotations(demo_dir, tmp_path):
    out = tmp_path / "acc.json"
    result = run_cli(
        "export", demo_dir / "demo.blend", "--target", "accumulated", "--out", out, "--csv", tmp_path / "acc.csv"
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "hierarchy_inspector.accumulated/1"
    report = _by_name(json.loads((demo_dir / "report.json").read_text()))
    entries = {(e["armature"] or "", e["name"]): e for e in doc["nodes"]}
    world = {}
    for key, e in entries.items():  # root first: parents are done before children
        local = (np.array(e["translation"]), np.array(e["rotation"]), np.array(e["scale"]))
        if e["parent"] is None:
            world[key] = local
        else:
            world[key] = ref.combine(world[(e["parent_armature"] or "", e["parent"])], local)
        blender = np.array(report[key]["world_blender"])
        assert np.allclose(world[key][0], blender[:3, 3], atol=1e-5), key
        # Where Blender's world is not sheared, rotation and scale are exact too.
        if max(abs(v) for v in report[key]["shear_deg"]) < 1e-3:
            rebuilt = ref.qmat(world[key][1]) @ np.diag(world[key][2])
            assert np.allclose(rebuilt, blender[:3, :3], atol=1e-5), key
    # Sheared Blender worlds are the only residuals.
    residual = {k: e["residual"]["max_corner"] for k, e in entries.items()}
    assert residual[("", "Child")] > 0.5 and residual[("", "Kept child")] < 1e-4
    assert len(list(csv.reader((tmp_path / "acc.csv").open()))) == len(entries) + 1


# -- fix ------------------------------------------------------------------------------------


def _blend_state(path):
    """World matrices of every object and world vertices of every mesh, in this process."""
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    worlds = {o.name: np.array(o.matrix_world) for o in bpy.context.scene.objects}
    verts = {}
    for o in bpy.context.scene.objects:
        if o.type == "MESH":
            co = np.array([v.co for v in o.data.vertices])
            verts[o.name] = co @ worlds[o.name][:3, :3].T + worlds[o.name][:3, 3]
    return worlds, verts


def test_fix_helpers_keeps_every_world_and_removes_local_shear(demo_dir, tmp_path):
    out = tmp_path / "helpers.blend"
    result = run_cli("fix", demo_dir / "demo.blend", "--method", "helpers", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "Kept child (shear helper)" in result.stdout
    # the rig's sheared bones are named, not passed over in silence (helper joints come with the exports)
    assert "not changed: 5 bone(s) whose local matrix holds shear" in result.stdout
    assert "Inherit scale rig > ALIGNED.mid" in result.stdout and "FIX_SHEAR.tip" in result.stdout
    before, _ = _blend_state(demo_dir / "demo.blend")
    after, _ = _blend_state(out)
    for name, w in before.items():
        assert np.allclose(after[name], w, atol=1e-5), name
    report = run_cli("report", out, "--json", tmp_path / "r.json")
    assert report.returncode == 0
    objects = [e for e in _report(tmp_path / "r.json")["nodes"] if e["kind"] == "object"]
    assert max(max(abs(v) for v in e["local"]["shear_deg"]) for e in objects) < 1e-3


def test_fix_bake_keeps_vertices_and_removes_object_shear(demo_dir, tmp_path):
    out = tmp_path / "baked.blend"
    result = run_cli("fix", demo_dir / "demo.blend", "--method", "bake", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "1 objects baked (world shear > 0.1 deg) (Child)" in result.stdout and "FULL.mid" in result.stdout
    _, before = _blend_state(demo_dir / "demo.blend")
    _, after = _blend_state(out)
    scale = max(np.abs(v).max() for v in before.values())
    for name, v in before.items():
        assert np.abs(after[name] - v).max() / scale < 1e-5, name
    assert run_cli("report", out, "--json", tmp_path / "r.json").returncode == 0
    objects = [e for e in _report(tmp_path / "r.json")["nodes"] if e["kind"] == "object"]
    assert max(max(abs(v) for v in e["shear_deg"]) for e in objects) < 1e-3


def test_fix_bake_refuses_shared_meshes_and_writes_nothing(tmp_path):
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("shared")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    parent = bpy.data.objects.new("P", None)
    a = bpy.data.objects.new("A", mesh)
    b = bpy.data.objects.new("B", mesh)
    for o in (parent, a, b):
        scene.collection.objects.link(o)
    parent.scale = (2, 1, 1)
    a.parent = parent
    a.rotation_euler = (0, 0, 0.7)
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shared.blend"))
    result = run_cli("fix", tmp_path / "shared.blend", "--method", "bake", "--out", tmp_path / "fixed.blend")
    assert result.returncode == 2
    assert "mesh 'shared' is used by 2 objects" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "fixed.blend").exists()


def test_report_dynamics_fields(demo_dir, tmp_path):
    result = run_cli("report", demo_dir / "demo.blend", "--dynamics", "--json", tmp_path / "d.json")
    assert result.returncode == 0, result.stderr
    nodes = _by_name(_report(tmp_path / "d.json"))
    child = nodes[("", "Child")]["dynamics"]
    assert set(child) == {"dt", "local", "global", "inertial"}
    assert set(child["inertial"]) == {"basis", "linear", "centrifugal", "coriolis", "euler"}
    for part in ("local", "global"):
        assert set(child[part]) == {"basis", "velocity", "acceleration", "angular_velocity", "angular_acceleration"}
        assert np.allclose(child[part]["velocity"], 0)  # the demo does not move
    assert nodes[("", "Parent")]["dynamics"]["inertial"] is None  # roots have no parent frame
