// A .glb (or a .gltf with its buffers embedded) read by three.js as a web page would: GLTFLoader builds the scene,
// AnimationMixer plays the file's animations, and each SkinnedMesh places its vertices
// with three.js's own skinning (SkinnedMesh.getVertexPosition -> applyBoneTransform,
// the CPU twin of its skinning shader: the first JOINTS_0 / WEIGHTS_0 set, 4 influences).
//
//   node three_read.mjs < request.json
//   request: {path, times: [seconds...], out, animation: null | index}
//
// At every time: every action reset and the mixer set to that time (clips played once and
// clamped, so the last key holds), then scene.updateMatrixWorld(true). Writes to `out`
// little-endian float64s: for each time, every glTF node's matrixWorld (16 values,
// column-major as three.js stores them; NaN for a node three.js left out of the scene),
// then for each skinned primitive its rest positions (V x 3, the POSITION attribute) and,
// for each time, its skinned vertices in world space (V x 3). Prints a JSON header:
// {nodes, times, skins: [{node, mesh, primitive, count}], clips: [names]}.
import { readFileSync, writeFileSync } from "node:fs";
import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";

const request = JSON.parse(readFileSync(0, "utf8"));
const bytes = readFileSync(request.path);
const json = request.path.toLowerCase().endsWith(".gltf");
const data = json ? bytes.toString("utf8") : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const base = request.path.slice(0, request.path.lastIndexOf("/") + 1);
const gltf = await new GLTFLoader().parseAsync(data, base);
const scene = gltf.scene;

const nodeCount = (gltf.parser.json.nodes || []).length;
const nodeObject = new Array(nodeCount).fill(null);
const skinned = [];
scene.traverse((object) => {
  const mapping = gltf.parser.associations.get(object);
  if (mapping && mapping.nodes !== undefined) nodeObject[mapping.nodes] = object;
});
scene.traverse((object) => {
  if (!object.isSkinnedMesh) return;
  let owner = object; // the node this primitive belongs to (itself, or a Group above it)
  while (owner && gltf.parser.associations.get(owner)?.nodes === undefined) owner = owner.parent;
  const mapping = gltf.parser.associations.get(object) || {};
  skinned.push({
    object,
    node: owner ? gltf.parser.associations.get(owner).nodes : -1,
    mesh: mapping.meshes ?? -1,
    primitive: mapping.primitives ?? 0,
  });
});

const mixer = new THREE.AnimationMixer(scene);
const clips = request.animation == null ? gltf.animations : [gltf.animations[request.animation]];
const actions = clips.map((clip) => {
  const action = mixer.clipAction(clip);
  action.setLoop(THREE.LoopOnce, 1);
  action.clampWhenFinished = true;
  return action;
});

const times = request.times;
const counts = skinned.map((s) => s.object.geometry.attributes.position.count);
const size = times.length * nodeCount * 16 + counts.reduce((sum, v) => sum + v * 3 * (1 + times.length), 0);
const out = new Float64Array(size);
let at = 0;
const skinAt = []; // where each skin's rest positions start
let skinStart = times.length * nodeCount * 16;
for (let s = 0; s < skinned.length; s++) {
  const position = skinned[s].object.geometry.attributes.position;
  for (let v = 0; v < position.count; v++) {
    out[skinStart + 3 * v] = position.getX(v);
    out[skinStart + 3 * v + 1] = position.getY(v);
    out[skinStart + 3 * v + 2] = position.getZ(v);
  }
  skinAt.push(skinStart);
  skinStart += position.count * 3 * (1 + times.length);
}

const vertex = new THREE.Vector3();
for (let t = 0; t < times.length; t++) {
  for (const action of actions) {
    action.reset();
    action.play();
  }
  mixer.setTime(times[t]);
  scene.updateMatrixWorld(true);
  for (let n = 0; n < nodeCount; n++) {
    const object = nodeObject[n];
    for (let k = 0; k < 16; k++) out[at + k] = object ? object.matrixWorld.elements[k] : NaN;
    at += 16;
  }
  for (let s = 0; s < skinned.length; s++) {
    const mesh = skinned[s].object;
    const start = skinAt[s] + counts[s] * 3 * (1 + t);
    for (let v = 0; v < counts[s]; v++) {
      mesh.getVertexPosition(v, vertex).applyMatrix4(mesh.matrixWorld);
      out[start + 3 * v] = vertex.x;
      out[start + 3 * v + 1] = vertex.y;
      out[start + 3 * v + 2] = vertex.z;
    }
  }
}
writeFileSync(request.out, Buffer.from(out.buffer));
const skins = skinned.map((s, i) => ({ node: s.node, mesh: s.mesh, primitive: s.primitive, count: counts[i] }));
process.stdout.write(JSON.stringify({ nodes: nodeCount, times: times.length, skins, clips: clips.map((c) => c.name) }) + "\n");
